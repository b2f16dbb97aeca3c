"""What `jbodcheck reproduce` prints per step and at the end, and its JSON report (docs/reproduce.md documents the
shape): the model's expected view and the real one, each as what changed since the previous step, in Kafka's
words; the verdict.
"""
from __future__ import annotations

from dataclasses import asdict

from .checks import CHECKS
from .compare import changes, describe
from .plan import describe_holds
from .view import View

SCHEMA = 1


def plan_lines(model, plan) -> list[str]:
    """The model side of a run, before any cluster: the planned steps, the holds and the expected violation."""
    lines = []
    if plan.windows:
        lines.append("heartbeats held: " + "; ".join(
            f"broker {b}'s from step {start} to step {end}" for b, start, end in plan.windows))
    if plan.fetch_holds:
        lines.append("fetches held: " + "; ".join(
            f"{h.text()} until {'the end' if r is None else f'step {r}'}" for h, r in plan.fetch_holds.items()))
    lines.append("the scenario's violation (its own trace): " + (", ".join(plan.target) or "none"))
    if not plan.forced:
        lines.append("the trace's timing cannot be forced with these holds: the model run the cluster follows shows "
                     + (", ".join(plan.shown) or "none") + " instead")
    previous = None
    for step in plan.steps:
        lines.append(_title(step.number, len(plan.steps) - 2, step.text, step.taken))
        lines += ["    " + line for line in _changed(previous, step.view)]
        if step.own:
            lines.append("    the cluster's own steps after it: " + ", ".join(step.own))
        lines.append("    holds after it: " + describe_holds(step.holds_after))
        lines += [f"    violation {cid}: {why}" for cid, why in sorted(step.checks.items())]
        previous = step.view
    return lines


def _title(number: int, total: int, text: str, taken: bool) -> str:
    if number == 0:
        return "start"
    if number > total:
        return "end: every hold released"
    return f"step {number}/{total}: {text}" + ("" if taken else " (the cluster took it among its own steps)")


def _changed(before: View | None, after: View) -> list[str]:
    lines = changes(before, after)
    return lines or ["(nothing observable changes)"]


def step_lines(step, previous, total: int) -> list[str]:
    """One step of a run (``total`` scenario steps): the model's expected changes beside the real cluster's."""
    lines = [_title(step.number, total, step.text, step.taken) + ("" if step.how in ("start", "end") else
                                                                   f"   [{step.how}]")]
    expected = _changed(previous.expected if previous else None, step.expected)
    real = _changed(step.observed_before, step.observed) if step.observed is not None else []
    lines.append("    model expects: " + expected[0])
    lines += ["                   " + line for line in expected[1:]]
    if step.unobserved is not None:
        lines.append(f"    real cluster:  ({step.unobserved})")
    elif step.matched:
        lines.append(f"    real cluster:  the same (matched after {step.waited_s:.1f} s)")
    else:
        lines.append("    real cluster:  " + (real[0] if real else "(not observed)"))
        lines += ["                   " + line for line in real[1:]]
        if step.conforms:
            lines.append(f"    ANOTHER PATH the model allows ({step.candidates} model state(s) show it), after "
                         f"{step.waited_s:.1f} s; from the planned run:")
        else:
            lines.append(f"    LEFT THE MODEL after {step.waited_s:.1f} s (no model state shows it); from the planned "
                         "run:")
        lines += ["      - " + d for d in step.differences]
    for record in step.records:
        if record["type"] in ("PartitionChangeRecord", "PartitionRecord", "RegisterBrokerRecord",
                              "BrokerRegistrationChangeRecord"):
            fields = _fields(record["type"], record["data"])
            lines.append(f"    metadata log {record['offset']}: {record['type']}({fields})")
    for cid in sorted(set(step.model_checks) | set(step.real_checks)):
        m, r = step.model_checks.get(cid), step.real_checks.get(cid)
        lines.append(f"    violation {cid}: model {'yes' if m else 'no'}, real {'yes' if r else 'no'}: {r or m}")
    return lines


_SHOWN_FIELDS = ("brokerId", "brokerEpoch", "fenced", "logDirs", "partitionId", "leader", "isr", "replicas",
                 "directories", "eligibleLeaderReplicas", "lastKnownElr", "addingReplicas", "removingReplicas",
                 "leaderRecoveryState", "inControlledShutdown")


# Kafka's int8 fields of BrokerRegistrationChangeRecord (BrokerRegistrationFencingChange: FENCE 1, NONE 0,
# UNFENCE -1; BrokerRegistrationInControlledShutdownChange: NONE 0, IN_CONTROLLED_SHUTDOWN 1) and its other "no
# change" values (PartitionChangeRecord: leader -2, leaderRecoveryState -1; BrokerRegistrationChangeRecord: an empty
# logDirs), read as the model's records write them: a flag as true/false, no change left out.
_FLAGS = {("BrokerRegistrationChangeRecord", "fenced"): {1: True, -1: False},
          ("BrokerRegistrationChangeRecord", "inControlledShutdown"): {1: True}}
_NO_CHANGE = {("PartitionChangeRecord", "leader"): -2, ("PartitionChangeRecord", "leaderRecoveryState"): -1,
              ("BrokerRegistrationChangeRecord", "logDirs"): []}
_DIR_FIELDS = ("logDirs", "directories")


def _fields(kind: str, data: dict) -> str:
    """A record's decisive fields as Kafka's JSON names them and the model's trace writes them
    (``fenced=false, isr=[0, 1], leader=none, directories=[dir 1, UNASSIGNED]``; dir ids as the harness named
    them: a dir index, a reserved name, another broker's dir)."""
    shown = []
    for key in _SHOWN_FIELDS:
        value = data.get(key)
        if (kind, key) in _FLAGS:
            value = _FLAGS[kind, key].get(value)
        if value is None or _NO_CHANGE.get((kind, key), object()) == value:
            continue
        shown.append(f"{key}={_value(key, value)}")
    return ", ".join(shown)


def _value(key: str, value) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list):
        return "[" + ", ".join(_value(key, v) for v in value) + "]"
    if key in _DIR_FIELDS and isinstance(value, int):
        return f"dir {value}"
    if key == "leader" and value == -1:
        return "none"
    return str(value)


def verdict(plan, run, release: str, settings: dict | None = None) -> tuple[str, bool, dict]:
    """The closing lines' substance: (text, whether the run reproduced the scenario as the model says, the JSON's
    violation part). Reproduced means: the real run stayed a behaviour of the model (validate.py) at every
    observation and the scenario's violation happened on it; a run that left the model reproduces nothing."""
    target = set(plan.target)
    real = run.real_shown()
    model = run.model_shown()
    conforms = run.conforms and run.interrupted is None
    happened = set(real) == target if target else not real
    reproduced = conforms and bool(target) and happened
    parts = []
    if run.interrupted is not None:
        parts.append(f"interrupted by signal {run.interrupted} at step {len(run.steps)}")
    elif run.disagreement is not None:
        d = run.disagreement
        step = next((s for s in run.steps if s.number == d.step), None)
        where = "the start" if d.step == 0 else f"step {d.step}" + (f" ({step.text})" if step else "")
        parts.append(f"Kafka {release} left the model at {where}: {d.says}"
                     + (f"; the closest model state differs in: {'; '.join(d.closest[:3])}" if d.closest else "")
                     + (f"; the model's own steps there: {', '.join(d.enabled[:6])}" if d.enabled else
                        "; the model takes no own step there"))
    elif run.matched:
        parts.append(f"Kafka {release} matched the model at every observable point ({len(run.steps)} views)")
    else:
        other = [s for s in run.steps if not s.matched]
        parts.append(f"Kafka {release} stayed a behaviour of the model at every observation ({len(run.steps)} views), "
                     f"on another path than the planned run from step {other[0].number}: "
                     + "; ".join(other[0].differences[:2]))
    if run.disagreement is not None and run.interrupted is None:
        parts.append("a run that left the model reproduces nothing" + (
            f" (its real views showed {', '.join(sorted(real))} before it left)" if real else ""))
    elif target:
        said = [f"{cid} (real step {real[cid][0]}: {real[cid][1]})" for cid in sorted(target) if cid in real]
        missing = sorted(target - set(real))
        if happened:
            parts.append("the scenario's violation happened on the real cluster: " + "; ".join(said))
        else:
            parts.append("the scenario's violation did not happen on the real cluster"
                         + (f" (missing: {', '.join(missing)})" if missing else "")
                         + (f"; it shows {', '.join(sorted(set(real) - target))} instead" if set(real) - target else ""))
    else:
        parts.append("the scenario expects no violation, and " + (
            "none happened on the real cluster" if not real else
            "the real cluster shows " + "; ".join(f"{cid} (step {real[cid][0]}: {real[cid][1]})" for cid in real)))
    if not run.retrying_observed:
        parts.append("assignments retried for ever are not observable with this harness (no request counts)")
    if settings:
        parts.append("Kafka settings the harness set (the release's defaults otherwise): "
                     + ", ".join(f"{k}={v}" for k, v in sorted(settings.items())))
    violation = {"expected": sorted(target), "model": {c: {"step": s, "says": w} for c, (s, w) in model.items()},
                 "real": {c: {"step": s, "says": w} for c, (s, w) in real.items()}, "reproduced": reproduced,
                 "conforms": conforms,
                 "checks": {c: CHECKS[c].says for c in sorted(set(target) | set(real) | set(model))}}
    text = ". ".join(part[0].upper() + part[1:] for part in parts) + "."
    return text, conforms and happened and run.retrying_observed, violation


def _result(run) -> str:
    if run.interrupted is not None:
        return "interrupted"
    if run.disagreement is not None or not run.conforms:
        return "differs"
    return "matched" if run.matched else "conforms"


def _disagreement(run) -> dict | None:
    d = run.disagreement
    if d is None:
        return None
    return {"step": d.step, "says": d.says, "closest": list(d.closest), "enabled": list(d.enabled),
            "candidates": d.candidates}


def _view_dict(view: View | None):
    if view is None:
        return None
    d = asdict(view)

    def plain(value):
        if isinstance(value, (set, frozenset)):
            return sorted(plain(v) for v in value)
        if isinstance(value, dict):
            return {str(k): plain(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [plain(v) for v in value]
        return value
    return plain(d)


def report_dict(*, scenario: str, release: str, elr: str, model_params: dict, bugs, plan, run, text: str,
                violation: dict, exit_code: int, version: str, logs: str | None, settings: dict | None = None,
                fixes: list | None = None) -> dict:
    return {
        "schema": SCHEMA, "tool": "jbodcheck", "command": "reproduce", "version": version,
        "scenario": scenario, "kafka": release, "elr": elr, "model": model_params, "bugs": list(bugs),
        "settings": dict(sorted((settings or {}).items())),
        "fixes": list(fixes or []),
        "plan": {"forced": plan.forced, "target": plan.target, "shown": plan.shown,
                 "heartbeat_windows": [list(w) for w in plan.windows],
                 "fetch_holds": [{"hold": h.text(), "released_at": r} for h, r in plan.fetch_holds.items()]},
        "steps": [{"step": s.number, "action": s.text, "how": s.how, "taken": s.taken, "own_steps": list(s.own),
                   "holds": list(s.holds), "expected": _view_dict(s.expected), "observed": _view_dict(s.observed),
                   "matched": s.matched, "conforms": s.conforms, "candidates": s.candidates,
                   "unobserved": s.unobserved, "differences": s.differences,
                   "waited_s": round(s.waited_s, 1),
                   "checks": {"model": s.model_checks, "real": s.real_checks}, "records": s.records}
                  for s in run.steps],
        "result": _result(run), "disagreement": _disagreement(run),
        "violation": violation, "retry_evidence": {str(b): line for b, line in run.retry_evidence.items()},
        "verdict": text, "exit_code": exit_code, "logs": logs,
    }


__all__ = ["plan_lines", "step_lines", "verdict", "report_dict", "describe"]
