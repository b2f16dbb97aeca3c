"""Resuming an interrupted campaign (`jbodcheck conform --resume REPORT.json`, docs/conform.md "Resume").

A campaign chooses every trace before it runs one (the seed fixes them all, campaign.run_campaign), so an interrupted
campaign's report (``"result": "interrupted"``) says which traces were done; resuming runs the others with the
report's own parameters and appends them. A report that is not an interrupted campaign's, lacks what a resume needs,
or whose generated traces are not the ones the seed chooses now (another model or generator) is refused."""
from __future__ import annotations

# What a resume reads from the report besides its traces: the campaign's parameters (conform's options).
PARAMETERS = ("kafka", "preset", "seed", "length", "mode", "faults", "traces_planned", "shrink", "step_timeout",
              "kafka_timers", "out", "format_each", "no_class_sharing")


class ResumeMismatch(ValueError):
    """The report cannot be resumed: one line saying why."""


def resumable(data, path: str) -> dict:
    """The campaign parameters of an interrupted campaign's report ``data`` (read from ``path``), or
    ResumeMismatch."""
    if not isinstance(data, dict) or data.get("command") != "conform" or data.get("schema") != 1:
        raise ResumeMismatch(f"{path} is not a jbodcheck conform report (schema 1)")
    if data.get("result") != "interrupted":
        raise ResumeMismatch(f"{path} is a campaign that ended ({data.get('result')!r}), not an interrupted one")
    missing = [k for k in (*PARAMETERS, "traces", "rules") if k not in data]
    if missing:
        raise ResumeMismatch(f"{path} lacks {', '.join(missing)} (written by an older jbodcheck): it cannot be resumed")
    traces = data["traces"]
    if not isinstance(traces, list) or not all(isinstance(t, dict) and isinstance(t.get("trace"), int)
                                               for t in traces):
        raise ResumeMismatch(f"{path}: its traces are not a list of traces")
    numbers = [t["trace"] for t in traces]
    if len(set(numbers)) != len(numbers) or not all(1 <= n <= data["traces_planned"] for n in numbers):
        raise ResumeMismatch(f"{path}: its trace numbers are not distinct traces of 1..{data['traces_planned']}")
    return {k: data[k] for k in PARAMETERS}


def unfinished(jobs: list, resumed, label_of) -> list:
    """The jobs the resumed campaign did not finish. Each one it finished must be the trace the seed chooses now:
    the same release and kind, and a generated trace the same steps (``label_of(job)``: the job's step labels)."""
    done = {t.number: t for t in resumed.traces}
    for job in jobs:
        t = done.get(job.number)
        if t is None:
            continue
        if (t.release, t.kind) != (job.release, job.kind) or (job.kind == "model" and t.steps != label_of(job)):
            raise ResumeMismatch(f"trace {job.number} of the report is not the one its seed chooses now (the "
                                 "model, the preset or the trace generator changed): it cannot be resumed")
    return [job for job in jobs if job.number not in done]
