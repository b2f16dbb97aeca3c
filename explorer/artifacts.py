"""The trace outputs of explore, replay and fuzz (issue #17): ``--html PATH`` (explorer/html.py), ``--itf PATH``
(explorer/itf.py), ``--save-scenario PATH`` (explore; fuzz has its own) and ``--dot PATH`` (explore;
explorer/dot.py).

As ``--json``: every path is checked before the search without creating or truncating anything (bad input,
exit 2), and written at the end, after the summary, atomically (explorer/outputs.py); a write that fails is
the checker's failure (OutputError, exit 3), raised after the other outputs were written.
"""
from __future__ import annotations

import attrs
import click

from .errors import OutputError
from .outputs import check_writable, write_json, write_text


def html_option(f):
    return click.option("--html", "html_path", default=None, metavar="PATH",
                        help="Write the run as a self-contained HTML page: summary, coverage, each counterexample "
                             "step by step with the cluster drawn.")(f)


def itf_option(f):
    return click.option("--itf", "itf_path", default=None, metavar="PATH",
                        help="Write the (first) counterexample in the Informal Trace Format of Apalache and Quint.")(f)


def save_scenario_option(f):
    return click.option("--save-scenario", "save_scenario", default=None, metavar="PATH",
                        help="Write the (first) counterexample as a scenario file for `jbodcheck replay`.")(f)


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

    def check(self) -> None:
        """OutputError (the caller maps it to bad input) for a path that cannot be written; creates nothing."""
        for path, what in ((self.html, "the HTML page"), (self.itf, "the ITF trace"),
                           (self.scenario, "the scenario"), (self.dot, "the DOT graph")):
            check_writable(path, what, dash_is_stdout=False)

    def write(self, model, preset, result, report: dict, *, scenario_note: str = "", dot_bounds=None,
              walkthrough: tuple | None = None) -> None:
        """``walkthrough``: (title, trace of (action, state)) shown by the HTML page when there is no violation
        (replay)."""
        """Write every output asked for; the first OutputError is raised after trying the others."""
        errors: list[OutputError] = []
        notes: list[str] = []

        def attempt(fn):
            try:
                fn()
            except OutputError as e:
                errors.append(e)

        first = result.violations[0] if result.violations else None
        if self.html is not None:
            from .html import page, references

            shown = None
            if walkthrough is not None and not result.violations:
                from .render import state_dict

                title, trace = walkthrough
                title, _, description = title.partition(": ")
                shown = {"title": title, "description": description, "trace": [
                    {"step": i, "action": None if a is None else model.label(a), "state": state_dict(model, s)}
                    for i, (a, s) in enumerate(trace)]}
            attempt(lambda: write_text(self.html, page(report, references(model), walkthrough=shown), "the HTML page"))
        if self.itf is not None:
            if first is None:
                notes.append(f"no counterexample: {self.itf} (--itf) not written")
            else:
                from .itf import itf_trace

                attempt(lambda: write_json(self.itf, itf_trace(model, preset, first), "the ITF trace"))
        if self.scenario is not None:
            if first is None:
                notes.append(f"no counterexample: {self.scenario} (--save-scenario) not written")
            else:
                from .scenario import scenario_dict

                inv = first.invariant
                module = getattr(inv.check, "__module__", "") or ""
                if module and not module.startswith("invariants."):     # as fuzz --save-scenario says it
                    from .cli import _plugin_name

                    name = _plugin_name(module)
                    scenario_note += f" (the invariant comes from plugin {name}: replay with --plugin {name})"
                description = (f"jbodcheck {result.engine}: violation of {inv.id} ({inv.kind} invariant): "
                               f"{first.message}{scenario_note}")
                actions = [a for a, _ in first.trace[1:]]
                attempt(lambda: write_json(self.scenario, scenario_dict(model, actions, preset, description),
                                           "the scenario"))
        if self.dot is not None:
            from .dot import dot_text

            max_states, max_depth = dot_bounds
            attempt(lambda: write_text(self.dot, dot_text(model, preset, result, max_states, max_depth),
                                       "the DOT graph"))
        for note in notes:
            click.echo(f"jbodcheck: {note}", err=True)
        if errors:
            raise errors[0]
