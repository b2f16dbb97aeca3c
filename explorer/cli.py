"""The `jbodcheck` command line (../shared/CONTRACT.md; docs/cli.md).

click parses the options; every bad input ends in one line on stderr and exit code 2, never a traceback.
"""
from __future__ import annotations

import json
import sys

import click

import invariants as invariants_pkg
from model import BOUNDS, VARIANTS, ConfigError, Model, ModelConfig
from model.presets import PRESETS, preset_config

from .report import report_dict, summary_text
from .scenario import ScenarioError, load_scenario, replay
from .search import ENGINES, SearchOptions, explore as run_search

EXIT_OK, EXIT_VIOLATION, EXIT_BAD_INPUT = 0, 1, 2


class BadInput(click.ClickException):
    exit_code = EXIT_BAD_INPUT


def _model_options(f):
    """MODEL options: a preset fills them, explicit flags override the preset."""
    for name in reversed(tuple(BOUNDS)):
        f = click.option(f"--{name.replace('_', '-')}", name, type=int, default=None, metavar="N",
                         help=f"Bound: {BOUNDS[name]}.")(f)
    f = click.option("--eager-metadata/--no-eager-metadata", "eager_metadata", default=None,
                     help="Apply UpdateMetadata as soon as it heads a broker's queue (default) or interleave it.")(f)
    f = click.option("--rf", type=int, default=None, metavar="N", help="Replication factor.")(f)
    f = click.option("--partitions", type=int, default=None, metavar="N", help="Partitions (one topic each).")(f)
    f = click.option("--dirs", type=int, default=None, metavar="N", help="Log dirs per broker.")(f)
    f = click.option("--brokers", type=int, default=None, metavar="N", help="Brokers.")(f)
    f = click.option("--variant", default=None, metavar="NAME", help=f"Protocol variant: {', '.join(VARIANTS)}.")(f)
    f = click.option("--preset", default=None, metavar="NAME", help=f"Named configuration: {', '.join(PRESETS)}.")(f)
    return f


_MODEL_PARAMS = ("variant", "brokers", "dirs", "partitions", "rf", "eager_metadata", *BOUNDS)


def _model_params(kwargs: dict) -> dict:
    """Take the MODEL options out of a command's keyword arguments, keeping those given explicitly."""
    return {n: v for n in _MODEL_PARAMS if (v := kwargs.pop(n, None)) is not None}


def _build_config(preset: str | None, params: dict, base: dict | None = None) -> ModelConfig:
    """The preset (if any), then the scenario file's model (base), then explicit flags."""
    merged = {**(base or {}), **params}
    try:
        return preset_config(preset, **merged) if preset is not None else ModelConfig.from_dict(merged)
    except ConfigError as e:
        raise BadInput(str(e)) from None
    except TypeError as e:
        raise BadInput(f"bad model parameter: {e}") from None


def _select_invariants(ids) -> list:
    try:
        return invariants_pkg.select(list(ids))
    except KeyError as e:
        known = ", ".join(i.id for i in invariants_pkg.INVARIANTS)
        raise BadInput(f"unknown invariant {e.args[0]} (known: {known})") from None


def _emit(report: dict, summary: str, json_path: str | None) -> None:
    """The JSON report to a file or stdout; the text summary to stdout (stderr when the JSON takes stdout)."""
    if json_path == "-":
        click.echo(summary, err=True)
        click.echo(json.dumps(report, indent=2))
        return
    if json_path is not None:
        try:
            with open(json_path, "w", encoding="utf-8") as f:
                json.dump(report, f, indent=2)
                f.write("\n")
        except OSError as e:
            raise BadInput(f"cannot write the JSON report to {json_path}: {e.strerror}") from None
    click.echo(summary)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@click.version_option(package_name="jbodcheck", prog_name="jbodcheck")
def cli():
    """jbodcheck: a model checker for Apache Kafka's JBOD disk-failure protocols (KIP-112 and friends)."""


@cli.command()
@_model_options
@click.option("--engine", type=click.Choice(ENGINES), default="bfs", show_default=True,
              help="bfs: exhaustive, shortest traces; dfs: exhaustive depth-first; random: seeded random walks.")
@click.option("--max-depth", type=click.IntRange(min=0), default=None, metavar="N",
              help="Explore at most N steps from the initial state (random: steps per walk).")
@click.option("--max-states", type=click.IntRange(min=1), default=None, metavar="N",
              help="Stop after N distinct states.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the random engine.")
@click.option("--walks", type=click.IntRange(min=1), default=1000, show_default=True,
              help="Random engine: number of walks.")
@click.option("--invariant", "invariant_ids", multiple=True, metavar="ID",
              help="Check only this invariant (repeatable; default: all).")
@click.option("--all-violations", is_flag=True, help="Keep searching after the first violation (one per invariant).")
@click.option("--json", "json_path", default=None, metavar="PATH|-", help="Write the JSON report to PATH or stdout.")
@click.option("--quiet", "-q", is_flag=True, help="No progress lines on stderr.")
def explore(preset, engine, max_depth, max_states, seed, walks, invariant_ids, all_violations, json_path, quiet,
            **kwargs):
    """Search the model's state space for invariant violations."""
    cfg = _build_config(preset, _model_params(kwargs))
    model = Model(cfg)
    selected = _select_invariants(invariant_ids)
    progress = None if quiet else (lambda line: click.echo(f"[{engine}] {line}", err=True))
    options = SearchOptions(max_depth=max_depth, max_states=max_states, seed=seed, walks=walks,
                            all_violations=all_violations, progress=progress)
    result = run_search(engine, model, selected, options)
    _emit(report_dict(model, preset, result), summary_text(model, preset, result), json_path)
    return EXIT_VIOLATION if result.violations else EXIT_OK


@cli.command(name="replay")
@click.argument("scenario_path", metavar="SCENARIO.json")
@_model_options
@click.option("--invariant", "invariant_ids", multiple=True, metavar="ID", help="Check only this invariant.")
@click.option("--json", "json_path", default=None, metavar="PATH|-", help="Write the JSON report to PATH or stdout.")
def replay_command(scenario_path, preset, invariant_ids, json_path, **kwargs):
    """Replay a scenario file step by step, checking every invariant after each step."""
    try:
        scenario = load_scenario(scenario_path)
        file_model = dict(scenario.model)
        preset = preset or file_model.pop("preset", None)
        cfg = _build_config(preset, _model_params(kwargs), base=file_model)
        model = Model(cfg)
        result, trace, failed = replay(model, scenario, _select_invariants(invariant_ids))
    except ScenarioError as e:
        raise BadInput(str(e)) from None
    from .render import trace_text

    summary = [f"Replay of {scenario_path}" + (f": {scenario.description}" if scenario.description else ""),
               trace_text(model, trace), summary_text(model, preset, result)]
    if failed:
        summary.append("Expectations that do not hold at the end:")
        summary.extend(f"  - {line}" for line in failed)
    elif scenario.expect:
        summary.append("Every expectation holds at the end.")
    report = report_dict(model, preset, result)
    report["expectations_failed"] = failed
    _emit(report, "\n".join(summary), json_path)
    return EXIT_VIOLATION if result.result == "violation" else EXIT_OK


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list.")
def presets(as_json):
    """List the named configurations."""
    entries = [{"name": name, "model": preset_config(name).as_dict(), "description": desc}
               for name, (desc, _) in PRESETS.items()]
    if as_json:
        click.echo(json.dumps(entries, indent=2))
        return EXIT_OK
    for e in entries:
        m = e["model"]
        bounds = ", ".join(f"{k.removeprefix('max_')}={m[k]}" for k in BOUNDS)
        click.echo(f"{e['name']:<8} {e['description']}\n         {m['brokers']} brokers x {m['dirs']} dirs, "
                   f"{m['partitions']} partition(s), RF {m['rf']}, variant {m['variant']}; bounds: {bounds}")
    return EXIT_OK


@cli.command()
@_model_options
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list.")
def rules(preset, as_json, **kwargs):
    """List every rule with its KIP or Kafka-code reference."""
    model = Model(_build_config(preset, _model_params(kwargs)))
    entries = [{"name": r.name, "params": list(r.params), "kind": r.kind, "reference": r.reference, "doc": r.doc}
               for r in model.rules]
    if as_json:
        click.echo(json.dumps(entries, indent=2))
        return EXIT_OK
    for e in entries:
        click.echo(f"{e['name']}({', '.join(e['params'])})  [{e['kind']}]\n    {e['reference']}\n    {e['doc']}\n")
    return EXIT_OK


@cli.command(name="invariants")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list.")
def invariants_command(as_json):
    """List every invariant: id, kind, statement, reference."""
    entries = [{"id": i.id, "kind": i.kind, "statement": i.statement, "reference": i.reference}
               for i in invariants_pkg.INVARIANTS]
    if as_json:
        click.echo(json.dumps(entries, indent=2))
        return EXIT_OK
    for e in entries:
        click.echo(f"{e['id']}  [{e['kind']}]\n    {e['statement']}\n    {e['reference']}\n")
    return EXIT_OK


def main(argv=None) -> None:
    try:
        code = cli.main(args=argv, prog_name="jbodcheck", standalone_mode=False)
    except click.exceptions.Exit as e:
        code = e.exit_code
    except click.exceptions.Abort:
        click.echo("jbodcheck: aborted", err=True)
        code = EXIT_VIOLATION
    except click.ClickException as e:
        click.echo(f"jbodcheck: error: {e.format_message()}", err=True)
        code = EXIT_BAD_INPUT
    except KeyboardInterrupt:
        click.echo("jbodcheck: interrupted", err=True)
        code = 130
    sys.exit(code if isinstance(code, int) else EXIT_OK)
