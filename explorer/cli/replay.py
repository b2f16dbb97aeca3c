"""`jbodcheck replay SCENARIO.json` (docs/cli.md, "Scenario files")."""
from __future__ import annotations

import click

from explorer.reports.report import report_dict, summary_text
from explorer.scenario import ScenarioError, load_scenario, replay

from .exits import EXIT_OK, EXIT_VIOLATION, BadInput
from .model_value import command_model
from .sections import SectionedCommand, section
from .options import html_option, itf_option, json_report_option, model_options, model_params, plugin_option
from .outputs import checked_writable, emit, guard_report, raise_checker_failures, trace_outputs


@click.command(name="replay", cls=SectionedCommand)
@click.argument("scenario_path", metavar="SCENARIO.json")
@model_options
@plugin_option
@section("Replay", click.option("--invariant", "invariant_ids", multiple=True, metavar="ID",
                                help="Check only this invariant (repeatable; default: all)."))
@section("Outputs",
         json_report_option, html_option, itf_option)
@guard_report
def replay_command(scenario_path, preset, invariant_ids, json_path, **kwargs):
    """Replay a scenario file step by step, checking every invariant after each step."""
    checked_writable(json_path)
    outputs = trace_outputs(kwargs, {"--json": json_path}, {"the scenario": scenario_path})
    try:
        scenario = load_scenario(scenario_path)
        file_model = dict(scenario.model)
        file_preset = file_model.pop("preset", None)
        # --preset NAME takes the file's preset's place; the file's other fields, then the flags, go over it.
        model = command_model(preset or file_preset, model_params(kwargs), invariant_ids, base=file_model,
                              base_name=f"scenario {scenario_path}: model")
        result, trace, failed = replay(model, scenario, list(model.invariants))
    except ScenarioError as e:
        raise BadInput(str(e)) from None
    raise_checker_failures(model, result, json_path, scenario=scenario_path)
    from explorer.reports.render import trace_text

    # the header, the replayed trace once, then the violations (each at its step of that trace) and the result
    header, _, rest = summary_text(model, result, shown=trace).partition("\n")
    summary = [f"Replay of {scenario_path}" + (f": {scenario.description}" if scenario.description else ""),
               header, trace_text(model, trace), rest.lstrip("\n")]
    if failed:
        summary.append("Expectations that do not hold at the end:")
        summary.extend(f"  - {line}" for line in failed)
    elif scenario.expect:
        summary.append("Every expectation holds at the end.")
    report = report_dict(model, result)
    report["expectations_failed"] = failed
    emit(report, "\n".join(summary), json_path)
    outputs.write(model, result, report, walkthrough=(summary[0], trace))
    return EXIT_VIOLATION if result.result == "violation" else EXIT_OK
