"""`jbodcheck reproduce`'s JSON report where no verdict is reached, in the shape of a run's
(realkafka/driver/report.py ``report_dict``; docs/reproduce.md): ``--plan-only``'s (result "planned": the planned
steps, each with its expected view, holds and violation checks) and a run's that failed (result "error": the
steps done so far and the failure, exit 2 or 3), so that no file at ``--json PATH`` is a previous run's."""
from __future__ import annotations


def plan_report(common: dict, planned) -> dict:
    """The plan of ``--plan-only`` (no cluster started): ``common`` are report_dict's keyword arguments that name
    the run (scenario, release, elr, model_params, bugs, version)."""
    from realkafka.driver.report import _view_dict, report_dict
    from realkafka.driver.run import RunResult

    report = report_dict(**common, plan=planned, run=RunResult([]),
                         text="planned only (--plan-only): no cluster was started",
                         violation={"expected": sorted(planned.target), "planned": sorted(planned.shown)},
                         exit_code=0, logs=None)
    report["result"] = "planned"
    report["plan"]["steps"] = [
        {"step": s.number, "action": s.text, "taken": s.taken, "own_steps": list(s.own),
         "holds_after": sorted(h.text() for h in s.holds_after), "expected": _view_dict(s.view),
         "checks": dict(s.checks)}
        for s in planned.steps]
    return report


def error_report(common: dict, planned, run, message: str, exit_code: int, logs: str | None) -> dict:
    """A run that stopped on a failure (the harness, bad input found on the cluster, a bug): the steps it did, no
    verdict (``violation.reproduced`` false), ``error`` the one line the command prints."""
    from realkafka.driver.report import report_dict

    real = run.real_shown()
    report = report_dict(**common, plan=planned, run=run, text=f"no verdict: {message}",
                         violation={"expected": sorted(planned.target), "model": {}, "reproduced": False,
                                    "real": {c: {"step": s, "says": w} for c, (s, w) in real.items()}},
                         exit_code=exit_code, logs=logs)
    report["result"] = "error"
    report["error"] = message
    return report
