"""The trace outputs of explore, replay and fuzz (issue #17): ``--html PATH`` (explorer/html.py), ``--itf PATH``
(explorer/itf.py), ``--save-scenario PATH`` (explore; fuzz has its own), ``--save-lasso PATH`` (explore
--liveness) and ``--dot PATH`` (explore; explorer/dot.py).

As ``--json``: every path is checked before the search without creating or truncating anything (bad input,
exit 2), and written at the end, after the summary, atomically (explorer/outputs.py); a write that fails is
the checker's failure (OutputError, exit 3), raised after the other outputs were written.

Every counterexample is written (issue #29): the HTML page shows them all; ``--itf``, ``--save-scenario`` and
``--save-lasso`` write one file per counterexample, the first at PATH and the n-th at ``numbered_path(PATH, n)``
(``trace.itf.json``, ``trace-2.itf.json``, ...). A lasso (explore --liveness) is written with its cycle: ITF's
``loop``, the scenario's ``loop_start``, the page's marked cycle.
"""
from __future__ import annotations

import attrs
import click

from .errors import OutputError
from .outputs import check_writable, numbered_path, write_json, write_text


def html_option(f):
    return click.option("--html", "html_path", default=None, metavar="PATH",
                        help="Write the run as a self-contained HTML page: summary, coverage, each counterexample "
                             "step by step with the cluster drawn.")(f)


def itf_option(f):
    return click.option("--itf", "itf_path", default=None, metavar="PATH",
                        help="Write the counterexample in the Informal Trace Format of Apalache and Quint (several: "
                             "the n-th to PATH-n, e.g. t-2.itf.json).")(f)


def save_scenario_option(f):
    return click.option("--save-scenario", "save_scenario", default=None, metavar="PATH",
                        help="Write the counterexample as a scenario file for `jbodcheck replay` (several: the n-th to "
                             "PATH-n, e.g. s-2.json).")(f)


def dot_option(f):
    return click.option("--dot", "dot_path", default=None, metavar="PATH",
                        help="Write the explored state graph in Graphviz DOT, the counterexample highlighted "
                             "(needs --max-states N, N <= 2000).")(f)


@attrs.define
class TraceOutputs:
    html: str | None = None
    itf: str | None = None
    scenario: str | None = None
    dot: str | None = None
    lasso: str | None = None

    def check(self) -> None:
        """OutputError (the caller maps it to bad input) for a path that cannot be written; creates nothing."""
        for path, what in ((self.html, "the HTML page"), (self.itf, "the ITF trace"),
                           (self.scenario, "the scenario"), (self.dot, "the DOT graph"),
                           (self.lasso, "the lasso scenario")):
            check_writable(path, what, dash_is_stdout=False)

    def write(self, model, preset, result, report: dict, *, scenario_note: str = "", dot_bounds=None,
              walkthrough: tuple | None = None) -> None:
        """Write every output asked for; the first OutputError is raised after trying the others.
        ``walkthrough``: (title, trace of (action, state)) shown by the HTML page when there is no violation
        (replay)."""
        errors: list[OutputError] = []
        notes: list[str] = []

        def attempt(fn):
            try:
                fn()
            except OutputError as e:
                errors.append(e)

        violations = list(result.violations)
        if self.html is not None:
            from .html import page, references

            shown = None
            if walkthrough is not None and not violations:
                from .render import state_dict

                title, trace = walkthrough
                title, _, description = title.partition(": ")
                shown = {"title": title, "description": description, "trace": [
                    {"step": i, "action": None if a is None else model.label(a), "state": state_dict(model, s)}
                    for i, (a, s) in enumerate(trace)]}
            attempt(lambda: write_text(self.html, page(report, references(model), walkthrough=shown), "the HTML page"))
        for path, option, what, encode in (
                (self.itf, "--itf", "the ITF trace", lambda v: _itf(model, preset, v)),
                (self.scenario, "--save-scenario", "the scenario",
                 lambda v: _scenario(model, preset, result, v, scenario_note)),
                (self.lasso, "--save-lasso", "the lasso scenario",
                 lambda v: _scenario(model, preset, result, v, scenario_note))):
            if path is None:
                continue
            written = violations
            if option == "--save-lasso" and not written:    # an inconclusive lasso is still one to replay
                written = list(getattr(result, "inconclusive", None) or [])
            if not written:
                notes.append(f"no counterexample: {path} ({option}) not written")
                continue
            paths = [numbered_path(path, n) for n in range(1, len(written) + 1)]
            for target, v in zip(paths, written):
                attempt(lambda target=target, v=v: write_json(target, encode(v), what))
            if len(written) > 1 and len(set(paths)) > 1:
                notes.append(f"{len(written)} counterexamples ({option}): {', '.join(paths)}")
        if self.dot is not None:
            from .dot import dot_text

            max_states, max_depth = dot_bounds
            attempt(lambda: write_text(self.dot, dot_text(model, preset, result, max_states, max_depth),
                                       "the DOT graph"))
        for note in notes:
            click.echo(f"jbodcheck: {note}", err=True)
        if errors:
            raise errors[0]


def _itf(model, preset, violation) -> dict:
    from .itf import itf_trace

    return itf_trace(model, preset, violation)


def _scenario(model, preset, result, violation, note: str) -> dict:
    """The counterexample as a scenario file; a lasso (explore --liveness) with its ``loop_start``."""
    if hasattr(violation, "loop_start"):
        from .liveness import lasso_scenario

        return lasso_scenario(model, violation, preset)
    from .scenario import scenario_dict

    inv = violation.invariant
    module = getattr(inv.check, "__module__", "") or ""
    if module and not module.startswith("invariants."):     # as fuzz --save-scenario says it
        from .cli import _plugin_name

        name = _plugin_name(module)
        note += f" (the invariant comes from plugin {name}: replay with --plugin {name})"
    description = (f"jbodcheck {result.engine}: violation of {inv.id} ({inv.kind} invariant): "
                   f"{violation.message}{note}")
    return scenario_dict(model, [a for a, _ in violation.trace[1:]], preset, description)
