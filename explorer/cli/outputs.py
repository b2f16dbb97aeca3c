"""What a command writes around its run: --json PATH|- and the text summary, the trace outputs
(explorer/reports/artifacts.py), and the checker's failures (an exception in a plugin's invariant: exit 3 with
a scenario file that reaches the state). Paths are checked before the search (bad input, exit 2)."""
from __future__ import annotations

import contextlib
import functools
import json
import os
import stat

import click

from explorer.errors import CheckerFailure, OutputError, failure_detail, is_failure, is_plugin
from explorer.outputs import check_distinct, check_writable, write_json
from explorer.reports.artifacts import TraceOutputs

from .exits import BadInput
from .options import plugin_name


def checked_writable(path: str | None, what: str = "the JSON report", dash_is_stdout: bool = True) -> None:
    """Fail on an unwritable output path before a long search rather than after it; creates nothing."""
    try:
        check_writable(path, what, dash_is_stdout)
    except OutputError as e:
        raise BadInput(str(e)) from None


def checked_distinct(outputs: dict, inputs: dict | None = None) -> None:
    """Refuse, before any work, two outputs that name one file or an output that names an input (bad input,
    exit 2): ``outputs`` {option: path or None}, ``inputs`` {what the file is: path or None}. Every command
    that writes more than one file, or writes beside an input file, calls it (explorer/outputs.py)."""
    try:
        check_distinct(outputs, inputs)
    except OutputError as e:
        raise BadInput(str(e)) from None


def emit(report: dict, summary: str, json_path: str | None) -> None:
    """The text summary to stdout (stderr when the JSON takes stdout), then the JSON report to a file
    (atomically) or stdout. The summary is out before the file is written: a failed write (OutputError,
    exit 3) does not lose it."""
    if json_path == "-":
        click.echo(summary, err=True)
        click.echo(json.dumps(report, indent=2))
        return
    try:
        click.echo(summary)
    except BrokenPipeError:
        # stdout's reader went away (explorer/cli/stdout.py): the report file is still this run's result
        if json_path is not None:
            write_json(json_path, report, "the JSON report")
        raise
    if json_path is not None:
        write_json(json_path, report, "the JSON report")


@contextlib.contextmanager
def _no_stale_report(json_path: str | None):
    """When the run fails (exit 3 or an interrupt that escapes), remove a report a previous run left at
    --json PATH (a regular file only), so that no file there reads as this run's result. Bad input (exit 2)
    leaves it alone."""
    def identity():
        with contextlib.suppress(OSError):
            st = os.stat(target)
            if stat.S_ISREG(st.st_mode):
                return st.st_dev, st.st_ino, st.st_mtime_ns
        return None

    target = os.path.realpath(json_path) if json_path not in (None, "-") else None
    before = identity() if target is not None else None
    try:
        yield
    except click.ClickException:
        raise
    except BaseException:
        # Only the file that was there before the run: a report this run wrote (a new inode) stays.
        if before is not None and identity() == before:
            with contextlib.suppress(OSError):
                os.unlink(target)
        raise


def guard_report(command):
    """Run the command under _no_stale_report for its --json PATH."""

    @functools.wraps(command)
    def run(*args, **kwargs):
        with _no_stale_report(kwargs.get("json_path")):
            return command(*args, **kwargs)

    return run


def _failure_scenario_path(inv_id: str, json_path: str | None) -> str:
    """Where a checker failure's scenario goes: next to --json PATH, else in the current directory."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in inv_id)
    directory = os.path.dirname(json_path) if json_path not in (None, "-") else ""
    return os.path.join(directory, f"jbodcheck-failure-{safe}.json")


def raise_checker_failures(model, result, json_path, scenario: str | None = None) -> None:
    """An invariant whose check raised (explorer/errors.py) shows up in the result as a violation carrying
    FAILURE_MARK. Report the first as a CheckerFailure (exit 3): the invariant, the depth of the state and a
    scenario file with the path that reaches it. The run's summary and report are not written: the search
    did not finish. ``scenario``: the replayed file (replay): no new file, the step is named instead."""
    failures = [v for v in result.violations if is_failure(v.message)]
    if not failures:
        return
    from explorer.scenario import scenario_dict

    v = failures[0]
    inv, depth = v.invariant, len(v.trace) - 1
    actions = [a for a, _ in v.trace[1:]]
    module = getattr(inv.check, "__module__", "") or ""
    plugin = f" --plugin {plugin_name(module)}" if is_plugin(inv) and module else ""
    kind = f"{inv.kind}, plugin {plugin_name(module)}" if plugin else inv.kind
    if scenario is not None:
        raise CheckerFailure(f"invariant {inv.id} ({kind}) raised {failure_detail(v.message)} after step {depth} "
                             f"of {scenario}: the checker failed, no result", inv.id, depth)
    path = _failure_scenario_path(inv.id, json_path)
    description = (f"jbodcheck: the {inv.kind} invariant {inv.id} raised {failure_detail(v.message)} on the state "
                   f"this scenario reaches (depth {depth})" + (f"; replay with{plugin}" if plugin else ""))
    try:
        write_json(path, scenario_dict(model, actions, description=description), "the failure's scenario")
        where = f"scenario written to {path} (jbodcheck replay {path}{plugin})"
    except OutputError as e:
        where = f"{e}; the steps: " + "; ".join(model.rules[a.rule].label(a.args) for a in actions)
    raise CheckerFailure(f"invariant {inv.id} ({kind}) raised {failure_detail(v.message)} on a state at depth "
                         f"{depth}: the checker failed, no result; {where}", inv.id, depth, path)


def trace_outputs(kwargs: dict, others: dict | None = None, inputs: dict | None = None) -> TraceOutputs:
    """--html, --itf, --save-scenario, --dot, --save-lasso (explorer/reports/artifacts.py), checked before the
    search: each writable, and none the same file as another or as one of the command's ``others`` outputs
    (--json) or ``inputs`` (checked_distinct)."""
    outputs = TraceOutputs(kwargs.pop("html_path", None), kwargs.pop("itf_path", None),
                           kwargs.pop("save_scenario", None), kwargs.pop("dot_path", None),
                           kwargs.pop("lasso_path", None), plugin_name=plugin_name)
    try:
        outputs.check()
    except OutputError as e:
        raise BadInput(str(e)) from None
    checked_distinct({**(others or {}), **outputs.named()}, inputs)
    return outputs
