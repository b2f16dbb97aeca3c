"""The shape of a saved JSON report as ``jbodcheck view`` reads it (explorer/reports/report.py writes it; docs/cli.md).

Every field the page uses is checked for its type before anything is rendered, so a damaged or hand-made
report is bad input (exit 2, one line naming the field's path), never a crash of the renderer. A field the
page reads is absent or of its type: a list or an object is never null, nor is a scalar of a state (a
broker's ``up``, a replica's ``hosted``); null is accepted only where a report may hold it (a step's
``action``, the summary's facts such as ``symmetry_note`` or ``depth``). A missing field is shown as absent:
the states of ZooKeeper and KRaft mode have different fields (KRaft's brokers have no ``inbox``), and reports of
other versions may lack some. Fields the page does not read, and fields a later version adds, are left alone.
"""
from __future__ import annotations

NUMBER = (int, float)


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _kind(value) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "true or false", type(None): "null"}.get(
        type(value), "a number")


class ShapeError(ValueError):
    """A field of the report has the wrong type: one line, naming the field."""


def _want(ok: bool, where: str, expected: str, value) -> None:
    if not ok:
        raise ShapeError(f"{where} must be {expected}, not {_kind(value)}")


def _optional(data: dict, key: str, types: tuple, expected: str, where: str = "", nullable: bool = True) -> None:
    """``data[key]`` is absent, of ``types``, or (if ``nullable``) null."""
    if key not in data or (nullable and data[key] is None):
        return
    value = data[key]
    _want(isinstance(value, types) and not (isinstance(value, bool) and bool not in types),
          f"{where}{key}", expected, value)


def _list_of(value, where: str, types: tuple, expected: str) -> None:
    _want(isinstance(value, list), where, f"a list of {expected}", value)
    for i, item in enumerate(value):
        _want(isinstance(item, types), f"{where}[{i}]", expected, item)


def check_report(data) -> None:
    """Raise ShapeError unless ``data`` has the shape of a jbodcheck JSON report as far as the page reads it."""
    _want(isinstance(data, dict), "the report", "an object", data)
    for key in ("version", "engine", "result", "symmetry_note"):
        _optional(data, key, (str,), "a string")
    for key in ("schema", "distinct_states", "states_generated", "depth", "workers"):
        _optional(data, key, (int,), "an integer")
    for key in ("elapsed_s", "collision_probability"):
        _optional(data, key, NUMBER, "a number")
    _optional(data, "model", (dict,), "an object of model parameters", nullable=False)
    if "coverage" in data:
        coverage = data["coverage"]
        _want(isinstance(coverage, dict), "coverage", "an object of rule: firings", coverage)
        for rule, n in coverage.items():
            _want(_is_int(n) and n >= 0, f"coverage.{rule}", "a count of firings", n)
    if "rules_not_in_configuration" in data:
        _list_of(data["rules_not_in_configuration"], "rules_not_in_configuration", (str,), "rule names")
    if "violations" in data:
        _list_of(data["violations"], "violations", (dict,), "objects")
        for i, v in enumerate(data["violations"]):
            _check_violation(v, f"violations[{i}].")


def _check_violation(v: dict, where: str) -> None:
    for key in ("invariant", "kind", "message", "title", "description"):
        _optional(v, key, (str,), "a string", where)
    _optional(v, "loop_start", (int,), "a step number", where)
    if "trace" not in v:
        return
    _list_of(v["trace"], f"{where}trace", (dict,), "{step, action, state} objects")
    for i, entry in enumerate(v["trace"]):
        here = f"{where}trace[{i}]."
        _optional(entry, "action", (str,), "a step (a string) or null", here)
        _optional(entry, "state", (dict,), "an object", here, nullable=False)
        _check_state(entry.get("state", {}), f"{here}state.")


def _check_state(state: dict, where: str) -> None:
    if "brokers" in state:
        _list_of(state["brokers"], f"{where}brokers", (dict,), "objects")
        for b, broker in enumerate(state["brokers"]):
            _check_broker(broker, f"{where}brokers[{b}].")
    if "controller" in state:
        controller = state["controller"]
        _want(isinstance(controller, dict), f"{where}controller", "an object", controller)
        if "partitions" in controller:
            _list_of(controller["partitions"], f"{where}controller.partitions", (dict,), "objects")


def _check_broker(broker: dict, where: str) -> None:
    _optional(broker, "up", (bool,), "true or false", where, nullable=False)
    for key in ("inbox", "responses"):
        _optional(broker, key, (list,), "a list", where, nullable=False)
    _optional(broker, "dirs", (list,), "a list", where, nullable=False)
    for d, state in enumerate(broker.get("dirs", [])):
        _want(isinstance(state, str), f"{where}dirs[{d}]", "a dir state (a string)", state)
    if "partitions" not in broker:
        return
    _list_of(broker["partitions"], f"{where}partitions", (dict,), "objects")
    for p, part in enumerate(broker["partitions"]):
        here = f"{where}partitions[{p}]."
        _optional(part, "hosted", (str,), "a string", here, nullable=False)
        _optional(part, "partition", (int, str), "a partition id", here, nullable=False)
        if "log_on_dirs" in part:
            _list_of(part["log_on_dirs"], f"{here}log_on_dirs", (int,), "dir numbers")
