"""`jbodcheck fuzz`: Hypothesis stateful testing of the model (explorer/fuzz.py; Hypothesis is optional:
explorer/cli/optional.py)."""
from __future__ import annotations

import contextlib

import click

from explorer.engines import engine_named
from explorer.errors import OutputError
from explorer.outputs import write_json
from explorer.reports.bounds import event_bounds_text, search_limits
from explorer.reports.progress import progress_for
from explorer.reports.report import report_dict, summary_text

from .exits import exit_code
from .model_value import command_model
from .optional import needs
from .options import (html_option, itf_option, json_report_option, model_options, model_params, plugin_name,
                      plugin_option, quiet_option)
from .sections import SectionedCommand, section
from .outputs import checked_writable, emit, guard_report, raise_checker_failures, trace_outputs


@click.command(cls=SectionedCommand)
@model_options
@plugin_option
@section(
    "Fuzzing",
    click.option("--loose-bounds/--model-bounds", "loose", default=None,
              help="Loose event bounds for long histories (the default without --preset; see docs/extending.md) "
                   "or the model's own defaults / the preset's bounds (the default with --preset). "
                   "Explicit bound flags override either."),
    click.option("--examples", type=click.IntRange(min=1), default=None, metavar="N",
              help="Hypothesis examples (runs from the initial state) to try.  [default: 200]"),
    click.option("--steps", type=click.IntRange(min=1), default=None, metavar="N",
              help="Maximum steps per example.  [default: 60]"),
    click.option("--seed", type=int, default=0, show_default=True, metavar="N",
                 help="Seed of Hypothesis's random choices."),
    click.option("--invariant", "invariant_ids", multiple=True, metavar="ID",
                 help="Check only this invariant (repeatable; default: all)."),
)
@section(
    "Outputs",
    json_report_option,
    click.option("--save-scenario", "scenario_path", default=None, metavar="PATH",
                 help="Write the shrunk counterexample as a scenario file for `jbodcheck replay`."),
    html_option, itf_option, quiet_option,
)
@guard_report
def fuzz(preset, loose, examples, steps, seed, invariant_ids, json_path, scenario_path, quiet, **kwargs):
    """Hypothesis stateful testing of the model: random runs, shrunk to a short counterexample."""
    with needs("jbodcheck fuzz"):
        from explorer.fuzz import DEFAULT_EXAMPLES, DEFAULT_STEPS, LOOSE_BOUNDS, FuzzOptions, fuzz as run_fuzz
    from explorer.scenario import scenario_dict

    checked_writable(json_path)
    checked_writable(scenario_path, "the scenario", dash_is_stdout=False)
    outputs = trace_outputs(kwargs, {"--json": json_path, "--save-scenario": scenario_path})
    params = model_params(kwargs)
    use_loose = (preset is None) if loose is None else loose
    # The loose bounds go under the flags as a base, not as flags: a bound the design's model does not read
    # (KRaft's failovers without kraft-sessions) is then not refused as if the user had given it.
    model = command_model(preset, params, invariant_ids, base=dict(LOOSE_BOUNDS) if use_loose else None)
    selected = list(model.invariants)
    examples = DEFAULT_EXAMPLES if examples is None else examples
    steps = DEFAULT_STEPS if steps is None else steps
    display = progress_for("hypothesis", quiet)
    with display or contextlib.nullcontext():
        outcome = run_fuzz(model, selected, FuzzOptions(examples=examples, steps=steps, seed=seed,
                                                        progress=display and display.line))
    result, failure = outcome.result, outcome.failure
    result.limits = search_limits(FuzzOptions(examples=examples, steps=steps, seed=seed), engine_named(result.engine))
    raise_checker_failures(model, result, json_path)

    lines = [summary_text(model, result),
             f"Hypothesis: {examples} examples of up to {steps} steps, seed {seed}; bounds: "
             f"{event_bounds_text(model)}."]
    report = report_dict(model, result)
    scenario_error = None
    report["hypothesis"] = {"examples": examples, "steps": steps, "seed": seed, "examples_run": outcome.examples_run,
                            "shrunk_steps": outcome.shrunk_steps}
    if failure is not None:
        report["violations"][0]["steps"] = failure.steps
        how = ("as Hypothesis found it: the signal stopped the run before it was shrunk" if result.signal else
               f"Hypothesis shrank the run to {outcome.shrunk_steps}, then every step it does not need was removed")
        lines.append(f"Counterexample ({len(failure.steps)} steps; {how}): " + "; ".join(failure.steps))
        if scenario_path is not None:
            inv = failure.invariant
            description = f"jbodcheck fuzz --seed {seed}: violation of {inv.id}: {failure.message}"
            module = getattr(inv.check, "__module__", "") or ""
            if not module.startswith("invariants."):
                name = plugin_name(module)
                description += f" (the invariant comes from plugin {name}: replay with --plugin {name})"
            try:
                write_json(scenario_path, scenario_dict(model, failure.actions, description=description),
                           "the scenario")
                lines.append(f"Scenario written to {scenario_path}: jbodcheck replay {scenario_path}")
            except OutputError as e:
                # Keep the counterexample: its steps are in the summary; the failed write is exit 3.
                scenario_error = e
                lines.append(f"Scenario NOT written ({e}): the counterexample's steps are listed above.")
    elif scenario_path is not None:
        lines.append(f"No counterexample: {scenario_path} not written.")
    emit(report, "\n".join(lines), json_path)
    outputs.write(model, result, report)
    if scenario_error is not None:
        raise scenario_error
    return exit_code(result)
