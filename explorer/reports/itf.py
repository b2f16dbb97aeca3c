"""Counterexamples in the Informal Trace Format (ITF) of Apalache and Quint (``--itf PATH``).

The format (https://apalache-mc.org/docs/adr/015adr-trace.html): ``{"#meta": {...}, "vars": [...], "states":
[{"#meta": {"index": i}, var: value, ...}, ...]}``. A state's variables are the top-level keys of the readable
state (explorer/reports/render.py ``state_dict``: ``brokers``, ``controller``, ``log_dir_event_notifications``,
``events_used``, ``records``, and ``extensions`` when a plugin adds state), plus ``action``: the step taken into
the state, as a scenario step (``"DirFail(broker=0, dir=0)"``; ``"init"`` for the initial state), which
``jbodcheck replay`` and ``Model.step`` take back. Each state's ``#meta`` also has ``label``, the action as the
text trace shows it (with its ``+ UpdateMetadata at ...`` suffix).

A lasso (``explore --liveness``, a violation with ``loop_start``) gets ITF's optional top-level ``loop``: the
index of the state that starts the loop, which ends in the last state. The trace keeps every step, the cycle's
closing one included, so its last state equals state ``loop`` (``#meta`` ``loop_start`` says the same): read as
ITF, the loop repeats with one stuttering step from the last state back to that equal state, the same
behaviour up to stuttering; a lasso whose ``loop`` is the last state stays in that state forever.

Values: integers as ``{"#bigint": "N"}`` (as Apalache and Quint write them), booleans and strings as they are,
lists as JSON lists (ITF sequences), objects as ITF records; ``null`` (no leader, no metadata yet) as the
variant ``{"tag": "None", "value": {}}`` (Quint's ``None``). ITF itself is untyped; the fields that may be
``None`` are not wrapped in ``Some`` when they are not, so a typed Quint reader needs a type of its own for them.

The encoder is written here rather than taken from the ``itf-py`` package: itf-py encodes Python dicts as ITF
maps (``#map``), not records, so every state would first have to become named tuples; its reader builds a named
tuple per record and fails on record keys that are not Python identifiers (the per-broker maps here are keyed
``"0"``, ``"1"``, ...); and it would add a dependency (``frozendict``) for twenty lines of code.
"""
from __future__ import annotations

import time

from model import Model

from explorer import __version__
from explorer.catalog import preset_of
from explorer.scenario import scenario_steps
from .render import state_dict

FORMAT_DESCRIPTION = "https://apalache-mc.org/docs/adr/015adr-trace.html"
ACTION_VAR = "action"
INIT_ACTION = "init"
NONE = {"tag": "None", "value": {}}


def encode(value):
    """A JSON-ready value (a state_dict's) in ITF form."""
    if value is None:
        return dict(NONE)
    if isinstance(value, bool) or isinstance(value, str):
        return value
    if isinstance(value, int):
        return {"#bigint": str(value)}
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {str(k): encode(v) for k, v in value.items()}
    raise TypeError(f"no ITF form for {type(value).__name__}")


def decode(value):
    """The inverse of ``encode`` (and enough of ITF for other tools' traces: tuples and sets as lists, maps as
    dicts)."""
    if isinstance(value, list):
        return [decode(v) for v in value]
    if isinstance(value, dict):
        if "#bigint" in value:
            return int(value["#bigint"])
        if "#tup" in value:
            return [decode(v) for v in value["#tup"]]
        if "#set" in value:
            return [decode(v) for v in value["#set"]]
        if "#map" in value:
            return {decode(k): decode(v) for k, v in value["#map"]}
        if set(value) == {"tag", "value"} and value["tag"] == "None":
            return None
        return {k: decode(v) for k, v in value.items()}
    return value


def itf_trace(model: Model, violation) -> dict:
    """A counterexample (explorer/core.py Violation) as an ITF trace."""
    actions = [a for a, _ in violation.trace[1:]]
    steps = [INIT_ACTION] + scenario_steps(model, actions)
    states = []
    names: list[str] = []
    for i, ((action, state), step) in enumerate(zip(violation.trace, steps)):
        shown = state_dict(model, state)
        if not names:
            names = list(shown)
        meta = {"index": i, "label": INIT_ACTION if action is None else model.label(action)}
        states.append({"#meta": meta, **{k: encode(v) for k, v in shown.items()}, ACTION_VAR: step})
    inv = violation.invariant
    loop_start = getattr(violation, "loop_start", None)
    what = "liveness property" if loop_start is not None else "invariant"
    trace = {
        "#meta": {
            "format": "ITF",
            "format-description": FORMAT_DESCRIPTION,
            "source": f"jbodcheck {__version__}",
            "description": f"jbodcheck counterexample: violation of {inv.id} ({inv.kind} {what}): "
                           f"{violation.message}",
            "timestamp": int(time.time() * 1000),
            "invariant": inv.id,
            "kind": inv.kind,
            "message": violation.message,
            "model": {"preset": preset_of(model), **model.cfg.as_dict()},
        },
        "vars": names + [ACTION_VAR],
        "states": states,
    }
    if loop_start is not None:
        trace["#meta"]["loop_start"] = loop_start
        trace["loop"] = loop_start
    return trace


def itf_steps(trace: dict) -> list[str]:
    """The scenario steps of an ITF trace written by ``itf_trace`` (its ``action`` variable, after ``init``)."""
    return [state[ACTION_VAR] for state in trace["states"][1:]]
