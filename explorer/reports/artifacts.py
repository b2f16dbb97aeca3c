"""The trace outputs of explore, replay and fuzz (issue #17): ``--html PATH`` (explorer/reports/html.py), ``--itf PATH``
(explorer/reports/itf.py), ``--save-scenario PATH`` (explore; fuzz has its own), ``--save-lasso PATH`` (explore
--liveness) and ``--dot PATH`` (explore; explorer/reports/dot.py). The options are the CLI's (explorer/cli/options.py).

As ``--json``: every path is checked before the search without creating or truncating anything (bad input,
exit 2), and written at the end, after the summary, atomically (explorer/outputs.py); a write that fails is
the checker's failure (OutputError, exit 3), raised after the other outputs were written.

Every counterexample is written (issue #29): the HTML page shows them all; ``--itf``, ``--save-scenario`` and
``--save-lasso`` write one file per counterexample, the first at PATH and the n-th at ``numbered_path(PATH, n)``
(``trace.itf.json``, ``trace-2.itf.json``, ...). A lasso (explore --liveness) is written with its cycle: ITF's
``loop``, the scenario's ``loop_start``, the page's marked cycle.
"""
from __future__ import annotations

from typing import Callable

import attrs
import click

from explorer.errors import OutputError
from explorer.outputs import check_writable, numbered_path, write_json, write_text


@attrs.define
class TraceOutputs:
    html: str | None = None
    itf: str | None = None
    scenario: str | None = None
    dot: str | None = None
    lasso: str | None = None
    # How the user named the plugin that defines a module (--plugin or JBODCHECK_PLUGINS), for a replay hint.
    plugin_name: Callable[[str], str] = str

    def named(self) -> dict:
        """{option: path} of the outputs asked for (explorer/outputs.py ``check_distinct``)."""
        named = {"--html": self.html, "--itf": self.itf, "--save-scenario": self.scenario, "--dot": self.dot,
                 "--save-lasso": self.lasso}
        return {option: path for option, path in named.items() if path is not None}

    def check(self) -> None:
        """OutputError (the caller maps it to bad input) for a path that cannot be written; creates nothing."""
        for path, what in ((self.html, "the HTML page"), (self.itf, "the ITF trace"),
                           (self.scenario, "the scenario"), (self.dot, "the DOT graph"),
                           (self.lasso, "the lasso scenario")):
            check_writable(path, what, dash_is_stdout=False)

    def write(self, model, result, report: dict, *, scenario_note: str = "", dot_bounds=None,
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
                (self.itf, "--itf", "the ITF trace", lambda v: _itf(model, v)),
                (self.scenario, "--save-scenario", "the scenario",
                 lambda v: self._scenario(model, result, v, scenario_note)),
                (self.lasso, "--save-lasso", "the lasso scenario",
                 lambda v: self._scenario(model, result, v, scenario_note))):
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
            attempt(lambda: write_text(self.dot, dot_text(model, result, max_states, max_depth),
                                       "the DOT graph"))
        for note in notes:
            click.echo(f"jbodcheck: {note}", err=True)
        if errors:
            raise errors[0]

    def _scenario(self, model, result, violation, note: str) -> dict:
        """The counterexample as a scenario file; a lasso (explore --liveness) with its ``loop_start``."""
        if hasattr(violation, "loop_start"):
            from explorer.scenario import lasso_scenario

            return lasso_scenario(model, violation)
        from explorer.scenario import scenario_dict

        inv = violation.invariant
        module = getattr(inv.check, "__module__", "") or ""
        if module and not module.startswith("invariants."):     # as fuzz --save-scenario says it
            name = self.plugin_name(module)
            note += f" (the invariant comes from plugin {name}: replay with --plugin {name})"
        description = (f"jbodcheck {result.engine}: violation of {inv.id} ({inv.kind} invariant): "
                       f"{violation.message}{note}")
        return scenario_dict(model, [a for a, _ in violation.trace[1:]], description=description)


def _itf(model, violation) -> dict:
    from .itf import itf_trace

    return itf_trace(model, violation)
