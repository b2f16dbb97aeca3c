"""Scenario files: a model and a list of steps, replayed through the same rules and invariants.

Format (docs/cli.md; the README's "Interface"): ``{"model": {...}, "steps": ["RuleName(arg=value, ...)", ...]}``; optionally
``"description"`` and ``"expect"``, a set of facts that must hold at the end (see docs/cli.md), and ``"loop_start"``
(a liveness lasso, explorer/liveness.py): the step whose state the last step must return to.
"""
from __future__ import annotations

import json
import re
import time

import attrs

from invariants import Invariant
from model import ActionDisabled, Model, State
from model.storage.state import D_DONE, DIR_NAMES, NO_LEADER, RA_DONE, bits

from model.spec.engine import Checker, SearchResult, TransitionCounts, Violation
from model.spec.jsonfile import read_json

_STEP = re.compile(r"^\s*([A-Za-z_]\w*)\s*\((.*)\)\s*$")
_ARG = re.compile(r"^\s*([a-z_]\w*)\s*=\s*(-?[0-9]+)\s*$")
MAX_ARG_DIGITS = 9  # every argument is an id far below 10**9; more digits is a wrong (or hostile) step
EXPECT_KEYS = ("quiescent", "brokers_up", "leaders", "offline_replicas", "isr", "acked_records", "all_acked_consumed",
               "deleted_topics", "reassigned", "assignment", "dirs")


class ScenarioError(ValueError):
    """A malformed scenario file or a step that cannot be taken (bad input: exit code 2)."""


@attrs.frozen
class Scenario:
    model: dict
    steps: tuple[str, ...]
    expect: dict
    description: str = ""
    loop_start: int | None = None   # a lasso: the final state must equal the state after this many steps


# A scenario is a few kilobytes; this bound keeps a wrong or hostile file from taking the machine's memory.
MAX_SCENARIO_BYTES = 8 << 20


def load_scenario(path: str) -> Scenario:
    try:
        data = read_json(path, "scenario", MAX_SCENARIO_BYTES)
    except ValueError as e:
        raise ScenarioError(str(e)) from None
    if not isinstance(data, dict):
        raise ScenarioError(f"scenario {path} must be a JSON object with 'model' and 'steps'")
    unknown = sorted(set(data) - {"model", "steps", "expect", "description", "loop_start"})
    if unknown:
        raise ScenarioError(f"scenario {path} has unknown key(s): {', '.join(unknown)}")
    model, steps, expect = data.get("model", {}), data.get("steps"), data.get("expect", {})
    if not isinstance(model, dict):
        raise ScenarioError(f"scenario {path}: 'model' must be an object of model options")
    if not isinstance(model.get("preset", ""), str):
        raise ScenarioError(f"scenario {path}: 'model.preset' must be a preset name (a string), "
                            f"not {json.dumps(model['preset'])[:60]}")
    check_model_fields(model, f"scenario {path}: model")
    if not isinstance(steps, list) or not all(isinstance(s, str) for s in steps):
        raise ScenarioError(f"scenario {path}: 'steps' must be a list of strings like \"DirFail(broker=0, dir=1)\"")
    if not isinstance(expect, dict) or set(expect) - set(EXPECT_KEYS):
        raise ScenarioError(f"scenario {path}: 'expect' may only have the keys {', '.join(EXPECT_KEYS)}")
    loop_start = data.get("loop_start")
    if loop_start is not None and not (_is_id(loop_start, len(steps) + 1)):
        raise ScenarioError(f"scenario {path}: 'loop_start' must be a step number from 0 to {len(steps)}")
    return Scenario(model, tuple(steps), expect, str(data.get("description", "")), loop_start)


# What each model parameter's JSON value is (its ModelConfig field's type); its range is ModelConfig's to check.
_EXPECTED = {"bool": "true or false", "int": "a whole number", "str": "a string",
             "int | tuple": "a whole number or a list of them, one per partition",
             "tuple": "an object of option names and values"}


def _fits(kind: str, value) -> bool:
    whole = isinstance(value, int) and not isinstance(value, bool)
    return {"bool": isinstance(value, bool), "int": whole, "str": isinstance(value, str),
            "int | tuple": whole or (isinstance(value, list) and all(
                isinstance(v, int) and not isinstance(v, bool) for v in value)),
            "tuple": isinstance(value, dict)}[kind]


def check_model_fields(model: dict, where: str) -> None:
    """ScenarioError, in the file's terms (``where``.KEY, what it must be), for a key that is not a model
    parameter or a value of the wrong JSON type (null included); ranges and combinations are the
    configuration's to check (model/storage/config.py)."""
    from model import ModelConfig

    kinds = {f.name: str(f.type) for f in attrs.fields(ModelConfig)}
    for key, value in model.items():
        if key == "preset":
            continue
        if key not in kinds:
            raise ScenarioError(f"{where} has {json.dumps(key)[:60]}, which is not a model parameter (known: "
                                f"preset, {', '.join(kinds)})")
        if not _fits(kinds[key], value):
            raise ScenarioError(f"{where}.{key} must be {_EXPECTED[kinds[key]]}, not {json.dumps(value)[:60]}")


def _shown(text: str, limit: int = 80) -> str:
    """A step as an error line quotes it: at most ``limit`` characters."""
    return repr(text) if len(text) <= limit else repr(text[:limit]) + "..."


def parse_step(model: Model, text: str, number: int) -> tuple[str, tuple]:
    match = _STEP.match(text)
    if not match:
        raise ScenarioError(f"step {number} {_shown(text)} is not of the form RuleName(arg=value, ...)")
    name, body = match.groups()
    if name not in model.rule_index:
        raise ScenarioError(f"step {number} {_shown(text)}: no rule named {name}")
    rule = model.rules[model.rule_index[name]]
    given = {}
    for part in filter(None, (p.strip() for p in body.split(","))):
        arg = _ARG.match(part)
        if not arg:
            raise ScenarioError(f"step {number} {_shown(text)}: argument {_shown(part)} is not name=integer")
        name_, digits = arg.groups()
        if name_ in given:
            raise ScenarioError(f"step {number} {_shown(text)}: argument {name_} is given twice")
        if len(digits.lstrip("-")) > MAX_ARG_DIGITS:
            raise ScenarioError(f"step {number} {_shown(text)}: argument {name_} is out of range for this model")
        given[name_] = int(digits)
    if set(given) != set(rule.params):
        want = ", ".join(f"{p}=..." for p in rule.params)
        raise ScenarioError(f"step {number} {_shown(text)}: {name} takes ({want})")
    args = tuple(given[p] for p in rule.params)
    if args not in rule.domain(model):
        raise ScenarioError(f"step {number} {_shown(text)}: arguments out of range for this model")
    return name, args


def replay(model: Model, scenario: Scenario, invariants: list[Invariant]) -> tuple[SearchResult, list, list[str]]:
    """Apply every step, checking invariants after each; returns the result, the trace and the failed
    expectations."""
    validate_expectations(model, scenario.expect)
    start = time.monotonic()
    checker = Checker(model, invariants)
    state = model.init_states()[0]
    trace: list = [(None, state)]
    counts = TransitionCounts(model)
    violations = [Violation(inv, msg, list(trace)) for inv, msg in checker.check_state(state)]
    failed_steps: list[str] = []
    for number, text in enumerate(scenario.steps, start=1):
        name, args = parse_step(model, text, number)
        try:
            action, after = model.step(state, name, args)
        except ActionDisabled as e:
            if violations:
                # The run already broke an invariant: report that (exit 1) and say where the replay stopped.
                failed_steps.append(f"replay stopped at step {number}: {e}")
                break
            raise ScenarioError(f"step {number} {e}") from None
        counts.count(action)
        found = checker.check_transition(state, action, after) + checker.check_state(after)
        trace.append((action, after))
        for inv, msg in found:
            checker.failed.add(inv.id)
            violations.append(Violation(inv, msg, list(trace)))
        state = after
    failed = failed_steps or check_expectations(model, state, scenario.expect)
    if not failed_steps and scenario.loop_start is not None and trace[scenario.loop_start][1] != state:
        failed.append(f"expected the lasso's last step to return to the state of step {scenario.loop_start}, "
                      f"it does not")
    elif not failed_steps and scenario.loop_start is not None:
        violations += _lasso_violations(model, invariants, trace, scenario.loop_start)
    result = SearchResult(
        "replay", "violation" if violations or failed else "ok", len(trace), len(trace) - 1, len(trace) - 1,
        round(time.monotonic() - start, 3), counts.coverage_dict(), violations,
    )
    return result, trace, failed


def _lasso_violations(model: Model, invariants: list, trace: list, loop_start: int) -> list:
    """The liveness properties among ``invariants`` (named with --invariant) that the lasso breaks under weak
    fairness (explorer/liveness.py lasso_breaks); as in `explore --liveness`, a lasso that needs a step a bound of
    0 leaves out (left_out_progress) is no violation."""
    from explorer.liveness import LivenessViolation, lasso_breaks, left_out_progress
    from model.spec.invariant import is_liveness

    found = []
    for inv in invariants:
        message = lasso_breaks(model, inv, trace, loop_start) if is_liveness(inv) else None
        if message is None:
            continue
        violation = LivenessViolation(inv, message, list(trace), loop_start=loop_start,
                                      stutters=loop_start == len(trace) - 1)
        if not left_out_progress(model, violation):
            found.append(violation)
    return found


def _is_id(value, limit: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < limit


def _is_key(key: str, limit: int) -> bool:
    """An object key that is an id below ``limit``, in ASCII digits ("²".isdigit(), but int("²") fails)."""
    return re.fullmatch(r"[0-9]{1,9}", key) is not None and int(key) < limit


def validate_expectations(model: Model, expect: dict) -> None:
    """Reject an 'expect' whose values do not fit the model (bad input, not a failed expectation)."""
    brokers, partitions = model.cfg.brokers, model.cfg.partitions
    if "quiescent" in expect and not isinstance(expect["quiescent"], bool):
        raise ScenarioError("expect.quiescent must be true or false")
    if "brokers_up" in expect and not (
            isinstance(expect["brokers_up"], list) and all(_is_id(b, brokers) for b in expect["brokers_up"])):
        raise ScenarioError(f"expect.brokers_up must be a list of broker ids below {brokers}")
    if "all_acked_consumed" in expect and not isinstance(expect["all_acked_consumed"], bool):
        raise ScenarioError("expect.all_acked_consumed must be true or false")
    for key in ("deleted_topics", "reassigned"):
        if key in expect and not (
                isinstance(expect[key], list) and all(_is_id(p, partitions) for p in expect[key])):
            raise ScenarioError(f"expect.{key} must be a list of partitions below {partitions}")
    dirs = expect.get("dirs", {})
    if not isinstance(dirs, dict) or not all(
            _is_key(b, brokers) and isinstance(v, list) and len(v) == model.cfg.dirs
            and all(x in DIR_NAMES for x in v) for b, v in dirs.items()):
        raise ScenarioError(f"expect.dirs must map brokers (0..{brokers - 1}) to a list of {model.cfg.dirs} dir "
                            f"states ({', '.join(DIR_NAMES)})")
    for p, count in expect.get("acked_records", {}).items() if isinstance(expect.get("acked_records"), dict) else ():
        if not _is_key(p, partitions) or not _is_id(count, 1 << 16):
            raise ScenarioError(f"expect.acked_records must map partitions (0..{partitions - 1}) to counts")
    for key in ("leaders", "isr", "offline_replicas", "acked_records", "assignment"):
        table = expect.get(key, {})
        if not isinstance(table, dict):
            raise ScenarioError(f"expect.{key} must be an object keyed by partition")
        for p, value in table.items():
            if not _is_key(p, partitions):
                raise ScenarioError(f"expect.{key}: {p!r} is not a partition of this model (0..{partitions - 1})")
            if key == "acked_records":
                continue
            if key == "leaders":
                ok = value is None or _is_id(value, brokers)
            else:
                ok = isinstance(value, list) and all(_is_id(b, brokers) for b in value)
            if not ok:
                what = "a broker id or null" if key == "leaders" else "a list of broker ids"
                raise ScenarioError(f"expect.{key}[{p}] must be {what} below {brokers}")


def check_expectations(model: Model, state: State, expect: dict) -> list[str]:
    """KIP-112's "validate cluster state" as facts about the final state; returns what does not hold."""
    failed = []
    if "quiescent" in expect and model.is_quiescent(state) != expect["quiescent"]:
        failed.append(f"expected the cluster {'quiescent' if expect['quiescent'] else 'busy'}, it is not")
    if "brokers_up" in expect:
        up = [b for b, br in enumerate(state.brokers) if br.up]
        if sorted(expect["brokers_up"]) != up:
            failed.append(f"expected brokers {sorted(expect['brokers_up'])} running, found {up}")
    parts = state.controller.partitions
    for p, leader in expect.get("leaders", {}).items():
        actual = parts[int(p)].leader
        actual = None if actual == NO_LEADER else actual
        if actual != leader:
            failed.append(f"expected partition {p}'s leader to be {leader}, found {actual}")
    for p, isr in expect.get("isr", {}).items():
        if sorted(isr) != bits(parts[int(p)].isr):
            failed.append(f"expected partition {p}'s ISR to be {sorted(isr)}, found {bits(parts[int(p)].isr)}")
    for p, offline in expect.get("offline_replicas", {}).items():
        for b, br in enumerate(state.brokers):
            meta = br.meta[int(p)] if br.up else None
            if br.up and (meta is None or bits(meta.offline) != sorted(offline)):
                shown = None if meta is None else bits(meta.offline)
                failed.append(f"expected broker {b}'s metadata to show offline replicas {sorted(offline)} "
                              f"for partition {p}, found {shown}")
    for p, count in expect.get("acked_records", {}).items():
        actual = bin(state.acked[int(p)]).count("1")
        if actual != count:
            failed.append(f"expected {count} acknowledged record(s) in partition {p}, found {actual}")
    c = state.controller
    for key, done, what in (("deleted_topics", D_DONE, "topic deletion"), ("reassigned", RA_DONE, "reassignment")):
        if key in expect:
            actual = [p for p, v in enumerate(c.deletion if key == "deleted_topics" else c.reassigning) if v == done]
            if sorted(expect[key]) != actual:
                failed.append(f"expected the {what} of partition(s) {sorted(expect[key])} complete, found {actual}")
    for p, brokers in expect.get("assignment", {}).items():
        if list(brokers) != list(c.assigned[int(p)]):
            failed.append(f"expected partition {p}'s assignment to be {list(brokers)}, found {list(c.assigned[int(p)])}")
    for b, dirs in expect.get("dirs", {}).items():
        actual = [DIR_NAMES[d] for d in state.brokers[int(b)].dirs]
        if list(dirs) != actual:
            failed.append(f"expected broker {b}'s dirs to be {list(dirs)}, found {actual}")
    if expect.get("all_acked_consumed"):
        for p, acked in enumerate(state.acked):
            if acked and len(state.consumed[p]) < acked.bit_length():
                failed.append(f"expected the consumer to have read every acknowledged record of partition {p}: "
                              f"it read {len(state.consumed[p])} of {acked.bit_length()}")
    return failed


def scenario_steps(model: Model, actions) -> list[str]:
    """Scenario-file steps for actions: the rule's label without the "+ UpdateMetadata" suffix (replay
    applies eager UpdateMetadata itself)."""
    return [model.rules[a.rule].label(a.args) for a in actions]


def scenario_dict(model: Model, actions, preset: str | None = None, description: str = "") -> dict:
    """A scenario file (docs/cli.md, "Scenario files") that `jbodcheck replay` reproduces: every model parameter.
    ``preset``: by default the one the model value was built from (explorer/catalog.py build_model)."""
    if preset is None:
        preset = getattr(model, "preset", None)
    data: dict = {}
    if description:
        data["description"] = description
    data["model"] = ({"preset": preset} if preset else {}) | model.cfg.as_dict()
    data["steps"] = scenario_steps(model, actions)
    return data


def lasso_scenario(model: Model, violation, preset: str | None = None) -> dict:
    """The lasso as a scenario file (explorer/scenario.py): its steps and ``loop_start``; `jbodcheck replay`
    checks every step is enabled and that the last one returns to the state of step ``loop_start``."""
    description = f"{violation.message} ({violation.invariant.statement})"
    data = scenario_dict(model, [a for a, _s in violation.trace[1:]], preset, description)
    data["loop_start"] = violation.loop_start
    return data
