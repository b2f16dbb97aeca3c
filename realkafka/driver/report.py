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
        lines.append(f"    DIFFERS after {step.waited_s:.1f} s:")
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


def verdict(plan, run, release: str) -> tuple[str, bool, dict]:
    """The closing lines' substance: (text, whether it reproduced as the model says, the JSON's violation part)."""
    target = set(plan.target)
    real = run.real_shown()
    model = run.model_shown()
    first_diff = next((s for s in run.steps if not s.matched), None)
    matched = first_diff is None and run.interrupted is None
    reproduced = set(real) == target
    parts = []
    if run.interrupted is not None:
        parts.append(f"interrupted by signal {run.interrupted} at step {len(run.steps)}")
    elif matched:
        parts.append(f"Kafka {release} matched the model at every observable point ({len(run.steps)} views)")
    else:
        parts.append(f"Kafka {release} differs from the model, first at "
                     f"{'the start' if first_diff.number == 0 else f'step {first_diff.number} ({first_diff.text})'}: "
                     + "; ".join(first_diff.differences[:3]))
    if target:
        said = [f"{cid} (real step {real[cid][0]}: {real[cid][1]})" for cid in sorted(target) if cid in real]
        missing = sorted(target - set(real))
        if not missing and reproduced:
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
    violation = {"expected": sorted(target), "model": {c: {"step": s, "says": w} for c, (s, w) in model.items()},
                 "real": {c: {"step": s, "says": w} for c, (s, w) in real.items()}, "reproduced": reproduced,
                 "checks": {c: CHECKS[c].says for c in sorted(set(target) | set(real) | set(model))}}
    text = ". ".join(part[0].upper() + part[1:] for part in parts) + "."
    return text, matched and reproduced and run.retrying_observed, violation


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
                violation: dict, exit_code: int, version: str, logs: str | None) -> dict:
    return {
        "schema": SCHEMA, "tool": "jbodcheck", "command": "reproduce", "version": version,
        "scenario": scenario, "kafka": release, "elr": elr, "model": model_params, "bugs": list(bugs),
        "plan": {"forced": plan.forced, "target": plan.target, "shown": plan.shown,
                 "heartbeat_windows": [list(w) for w in plan.windows],
                 "fetch_holds": [{"hold": h.text(), "released_at": r} for h, r in plan.fetch_holds.items()]},
        "steps": [{"step": s.number, "action": s.text, "how": s.how, "taken": s.taken, "own_steps": list(s.own),
                   "holds": list(s.holds), "expected": _view_dict(s.expected), "observed": _view_dict(s.observed),
                   "matched": s.matched, "unobserved": s.unobserved, "differences": s.differences,
                   "waited_s": round(s.waited_s, 1),
                   "checks": {"model": s.model_checks, "real": s.real_checks}, "records": s.records}
                  for s in run.steps],
        "result": "interrupted" if run.interrupted is not None else ("matched" if run.matched else "differs"),
        "violation": violation, "retry_evidence": {str(b): line for b, line in run.retry_evidence.items()},
        "verdict": text, "exit_code": exit_code, "logs": logs,
    }


__all__ = ["plan_lines", "step_lines", "verdict", "report_dict", "describe"]
