"""The `jbodcheck` command line (../shared/CONTRACT.md; docs/cli.md).

click parses the options; every bad input ends in one line on stderr and exit code 2, never a traceback.
"""
from __future__ import annotations

import json
import os
import sys

import click

import invariants as invariants_pkg
from model import BOUNDS, VARIANTS, ConfigError, Model, ModelConfig
from model.config import SATURATION_RECOVERIES
from model.presets import PRESETS, preset_config

from .report import report_dict, summary_text
from .scenario import ScenarioError, load_scenario, replay
from .search import ENGINES, SearchOptions, explore as run_search
from .visited import parse_size

EXIT_OK, EXIT_VIOLATION, EXIT_BAD_INPUT = 0, 1, 2


class BadInput(click.ClickException):
    exit_code = EXIT_BAD_INPUT


def _per_partition(ctx, param, value):
    if value is None:
        return None
    try:
        values = [int(v) for v in value.split(",")]
    except ValueError:
        flag = "--" + param.name.replace("_", "-")
        raise BadInput(f"{flag} takes whole numbers separated by commas, not {value!r}") from None
    return values[0] if len(values) == 1 else values


def _model_options(f):
    """MODEL options: a preset fills them, explicit flags override the preset."""
    for name in reversed(tuple(BOUNDS)):
        f = click.option(f"--{name.replace('_', '-')}", name, type=int, default=None, metavar="N",
                         help=f"Bound: {BOUNDS[name]}.")(f)
    f = click.option("--deletion-waits-for-response/--deletion-fails-offline-replicas", "deletion_waits_for_response",
                     default=None,
                     help="With --saturation: a replica whose deletion started waits for its StopReplica answer "
                          "(default) or, as in Kafka, fails when found offline.")(f)
    f = click.option("--reassignment/--no-reassignment", "reassignment", default=None,
                     help="Partition reassignment (KIP-112 scenario 7): partition 0 may move to the next brokers.")(f)
    f = click.option("--probe-new-replicas/--no-probe-new-replicas", "probe_new_replicas", default=None,
                     help="The log-dir probe also queries replicas in NewReplica (KIP-112, default) or, as in "
                          "Kafka's code, skips them.")(f)
    f = click.option("--deletion/--no-deletion", "deletion", default=None,
                     help="Topic deletion (KIP-112 scenario 8): DeleteTopic and the replica deletion states.")(f)
    f = click.option("--saturation-recovery", "saturation_recovery", default=None,
                     type=click.Choice(SATURATION_RECOVERIES),
                     help="How a saturated dir becomes good again: free-space (DirRecover; the controller re-elects and "
                          "refreshes the metadata), restart only, or free-space-unchanged-controller (DirRecover "
                          "with KIP-112's controller as it is).")(f)
    f = click.option("--reserved-file/--no-reserved-file", "reserved_file", default=None,
                     help="KIP-928's reserved space-of-last-resort file, one unit of every dir (default on).")(f)
    f = click.option("--dir-capacity", "dir_capacity", type=int, default=None, metavar="N",
                     help="Units of space per log dir, with --saturation.")(f)
    f = click.option("--saturation/--no-saturation", "saturation", default=None,
                     help="KIP-928: a full dir is saturated, not offline; disk space, retention, reserved file.")(f)
    f = click.option("--unclean-election/--no-unclean-election", "unclean_election", default=None,
                     help="unclean.leader.election.enable: elect a live replica outside the ISR when none is in it.")(f)
    f = click.option("--consumer/--no-consumer", "consumer", default=None,
                     help="An explicit consumer (the Consume rule); without it reads_below_hw_are_committed "
                          "covers every consumer.")(f)
    f = click.option("--min-isr", "min_isr", default=None, metavar="N[,N...]", callback=_per_partition,
                     help="min.insync.replicas: one value, or one per partition (e.g. 1,2).")(f)
    f = click.option("--max-records", "max_records", default=None, metavar="N[,N...]", callback=_per_partition,
                     help="Entries a log may hold (Produce's bound): one value, or one per partition; 0: no data.")(f)
    f = click.option("--eager-metadata/--no-eager-metadata", "eager_metadata", default=None,
                     help="Apply UpdateMetadata as soon as it heads a broker's queue (default) or interleave it.")(f)
    f = click.option("--rf", type=int, default=None, metavar="N", help="Replication factor.")(f)
    f = click.option("--partitions", type=int, default=None, metavar="N", help="Partitions (one topic each).")(f)
    f = click.option("--dirs", type=int, default=None, metavar="N", help="Log dirs per broker.")(f)
    f = click.option("--brokers", type=int, default=None, metavar="N", help="Brokers.")(f)
    f = click.option("--variant", default=None, metavar="NAME", help=f"Protocol variant: {', '.join(VARIANTS)}.")(f)
    f = click.option("--preset", default=None, metavar="NAME", help=f"Named configuration: {', '.join(PRESETS)}.")(f)
    return f


_MODEL_PARAMS = ("variant", "brokers", "dirs", "partitions", "rf", "eager_metadata", "min_isr", "max_records",
                 "unclean_election", "consumer", "saturation", "dir_capacity", "reserved_file",
                 "saturation_recovery", "deletion", "deletion_waits_for_response", "reassignment",
                 "probe_new_replicas", *BOUNDS)


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


def _check_writable(json_path: str | None) -> None:
    """Fail on an unwritable --json path before a long search rather than after it."""
    if json_path in (None, "-"):
        return
    try:
        with open(json_path, "a", encoding="utf-8"):
            pass
    except OSError as e:
        raise BadInput(f"cannot write the JSON report to {json_path}: {e.strerror}") from None


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


def _load_plugins(ctx, param, names) -> None:
    """--plugin MODULE (repeatable) and JBODCHECK_PLUGINS: import users' invariant modules (docs/extending.md)."""
    try:
        invariants_pkg.load_plugins(names or (), env=True)
    except invariants_pkg.PluginError as e:
        raise BadInput(str(e)) from None


def _plugin_option(f):
    return click.option("--plugin", "plugins", multiple=True, metavar="MODULE", expose_value=False,
                        callback=_load_plugins,
                        help="Import MODULE (a module name or a .py file) for its @invariants.invariant "
                             "registrations (repeatable; also JBODCHECK_PLUGINS=mod1,mod2).")(f)


def default_workers() -> int:
    """All the cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _workers(engine: str, workers: int | None) -> int:
    if workers is None:
        return default_workers() if engine == "bfs" else 1
    if engine != "bfs" and workers != 1:
        raise BadInput(f"--workers applies to --engine bfs only (not {engine})")
    return workers


def _max_memory(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        return parse_size(text)
    except ValueError:
        raise BadInput(f"bad --max-memory {text!r}: expected a positive size such as 512M, 2G or 1.5G "
                       f"(K, M, G, T: powers of 1024; a plain number is bytes)") from None


def _spark_options(f):
    """The Spark engine's options (docs/spark.md); pyspark is imported only when --engine spark runs."""
    f = click.option("--spark-conf", "spark_conf", multiple=True, metavar="KEY=VALUE",
                     help="Spark engine: a Spark setting, e.g. spark.driver.memory=4g (repeatable).")(f)
    f = click.option("--checkpoint-dir", default=None, metavar="PATH",
                     help="Spark engine: directory (shared on a cluster) for reliable checkpoints every few levels.")(f)
    f = click.option("--spark-partitions", type=click.IntRange(min=1), default=None, metavar="N",
                     help="Spark engine: partitions of the frontier and visited set [default: executor cores].")(f)
    f = click.option("--master", default=None, metavar="URL",
                     help="Spark engine: the Spark master [default: local[*], or spark-submit's].")(f)
    return f


def _spark_setup(engine, master, partitions, checkpoint_dir, conf_pairs):
    """The Spark engine's options, checked before Spark starts; None for the local engines."""
    given = master is not None or partitions is not None or checkpoint_dir is not None or conf_pairs
    if engine != "spark":
        if given:
            raise BadInput("--master, --spark-partitions, --checkpoint-dir and --spark-conf need --engine spark")
        return None
    from spark_explore import SparkSetupError
    from spark_explore.cli import options_from_cli

    try:
        return options_from_cli(master, partitions, checkpoint_dir, conf_pairs)
    except SparkSetupError as e:
        raise BadInput(str(e)) from None


def _spark_run(model, selected, options, spark):
    from spark_explore import SparkSetupError
    from spark_explore.cli import run

    try:
        return run(model, selected, options, spark)
    except SparkSetupError as e:
        raise BadInput(str(e)) from None


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@click.version_option(package_name="jbodcheck", prog_name="jbodcheck")
def cli():
    """jbodcheck: a model checker for Apache Kafka's JBOD disk-failure protocols (KIP-112 and friends)."""


@cli.command()
@_model_options
@_plugin_option
@click.option("--engine", type=click.Choice((*ENGINES, "spark")), default="bfs", show_default=True,
              help="bfs: exhaustive, shortest traces; dfs: exhaustive depth-first; random: seeded random walks; "
                   "spark: BFS on Apache Spark (docs/spark.md).")
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
@click.option("--workers", type=click.IntRange(min=1, max=1024), default=None, metavar="N",
              help="BFS: worker processes, the frontier partitioned by fingerprint; 1: in this process "
                   "[default: all cores].")
@click.option("--max-memory", "max_memory", default=None, metavar="SIZE",
              help="Stop with result bounded before the search (and its workers) use more memory than SIZE, "
                   "e.g. 512M or 2G.")
@click.option("--symmetry/--no-symmetry", default=True, show_default=True,
              help="Dedup states that differ only by a permutation of a broker's log dirs, where that is sound "
                   "(docs/model.md, section 10); for every engine.")
@_spark_options
def explore(preset, engine, max_depth, max_states, seed, walks, invariant_ids, all_violations, json_path, quiet,
            workers, max_memory, symmetry, master, spark_partitions, checkpoint_dir, spark_conf, **kwargs):
    """Search the model's state space for invariant violations."""
    _check_writable(json_path)
    workers = _workers(engine, workers)
    max_memory = _max_memory(max_memory)
    if max_memory is not None and engine == "spark":
        raise BadInput("--max-memory applies to the local engines (bfs, dfs, random); for Spark set "
                       "--spark-conf spark.driver.memory=... and spark.executor.memory=...")
    spark = _spark_setup(engine, master, spark_partitions, checkpoint_dir, spark_conf)
    cfg = _build_config(preset, _model_params(kwargs))
    model = Model(cfg, symmetry=symmetry)
    selected = _select_invariants(invariant_ids)
    progress = None if quiet else (lambda line: click.echo(f"[{engine}] {line}", err=True))
    options = SearchOptions(max_depth=max_depth, max_states=max_states, seed=seed, walks=walks,
                            all_violations=all_violations, progress=progress, workers=workers,
                            max_memory=max_memory)
    result = run_search(engine, model, selected, options) if spark is None else _spark_run(model, selected, options, spark)
    if result.note:
        click.echo(f"jbodcheck: {result.note}", err=True)
    report, summary = report_dict(model, preset, result), summary_text(model, preset, result)
    if spark is not None:
        from spark_explore.cli import annotate

        report, summary = annotate(report, summary, result)
    _emit(report, summary, json_path)
    if result.result == "interrupted":              # stopped by a signal: the shell's code for it
        return 128 + (result.signal or 2)
    return EXIT_VIOLATION if result.violations else EXIT_OK


@cli.command(name="replay")
@click.argument("scenario_path", metavar="SCENARIO.json")
@_model_options
@_plugin_option
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
        data = (f"records={m['max_records']}, min_isr={m['min_isr']}, consumer={str(m['consumer']).lower()}, "
                f"unclean_election={str(m['unclean_election']).lower()}")
        features = [name for name in ("saturation", "deletion", "reassignment") if m[name]]
        if m["saturation"]:
            features[0] = (f"saturation (dir_capacity={m['dir_capacity']}, reserved_file="
                           f"{str(m['reserved_file']).lower()}, recovery={m['saturation_recovery']})")
        click.echo(f"{e['name']:<8} {e['description']}\n         {m['brokers']} brokers x {m['dirs']} dirs, "
                   f"{m['partitions']} partition(s), RF {m['rf']}, variant {m['variant']}; bounds: {bounds}\n"
                   f"         data: {data}" + (f"\n         features: {', '.join(features)}" if features else ""))
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
@_plugin_option
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


@cli.command()
@_model_options
@_plugin_option
@click.option("--loose-bounds/--model-bounds", "loose", default=None,
              help="Loose event bounds for long histories (the default without --preset; see docs/extending.md) "
                   "or the model's own defaults / the preset's bounds (the default with --preset). "
                   "Explicit bound flags override either.")
@click.option("--examples", type=click.IntRange(min=1), default=None, metavar="N",
              help="Hypothesis examples (runs from the initial state) to try.  [default: 200]")
@click.option("--steps", type=click.IntRange(min=1), default=None, metavar="N",
              help="Maximum steps per example.  [default: 60]")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of Hypothesis's random choices.")
@click.option("--invariant", "invariant_ids", multiple=True, metavar="ID",
              help="Check only this invariant (repeatable; default: all).")
@click.option("--json", "json_path", default=None, metavar="PATH|-", help="Write the JSON report to PATH or stdout.")
@click.option("--save-scenario", "scenario_path", default=None, metavar="PATH",
              help="Write the shrunk counterexample as a scenario file for `jbodcheck replay`.")
@click.option("--quiet", "-q", is_flag=True, help="No progress lines on stderr.")
def fuzz(preset, loose, examples, steps, seed, invariant_ids, json_path, scenario_path, quiet, **kwargs):
    """Hypothesis stateful testing of the model: random runs, shrunk to a short counterexample."""
    from .fuzz import DEFAULT_EXAMPLES, DEFAULT_STEPS, LOOSE_BOUNDS, FuzzOptions, fuzz as run_fuzz, scenario_dict

    params = _model_params(kwargs)
    use_loose = (preset is None) if loose is None else loose
    if use_loose:
        params = {**LOOSE_BOUNDS, **params}
    cfg = _build_config(preset, params)
    model = Model(cfg)
    selected = _select_invariants(invariant_ids)
    examples = DEFAULT_EXAMPLES if examples is None else examples
    steps = DEFAULT_STEPS if steps is None else steps
    progress = None if quiet else (lambda line: click.echo(f"[hypothesis] {line}", err=True))
    outcome = run_fuzz(model, selected, FuzzOptions(examples=examples, steps=steps, seed=seed, progress=progress))
    result, failure = outcome.result, outcome.failure

    bounds = ", ".join(f"{k.removeprefix('max_')}={getattr(cfg, k)}" for k in BOUNDS)
    lines = [summary_text(model, preset, result),
             f"Hypothesis: {examples} examples of up to {steps} steps, seed {seed}; bounds: {bounds}."]
    report = report_dict(model, preset, result)
    report["hypothesis"] = {"examples": examples, "steps": steps, "seed": seed, "examples_run": outcome.examples_run,
                            "shrunk_steps": outcome.shrunk_steps}
    if failure is not None:
        report["violations"][0]["steps"] = failure.steps
        lines.append(f"Counterexample ({len(failure.steps)} steps; Hypothesis shrank the run to "
                     f"{outcome.shrunk_steps}, then every step it does not need was removed): "
                     + "; ".join(failure.steps))
        if scenario_path is not None:
            inv = failure.invariant
            description = f"jbodcheck fuzz --seed {seed}: violation of {inv.id}: {failure.message}"
            module = getattr(inv.check, "__module__", "") or ""
            if not module.startswith("invariants."):
                description += f" (the invariant comes from plugin {module}: replay with --plugin {module})"
            try:
                with open(scenario_path, "w", encoding="utf-8") as f:
                    json.dump(scenario_dict(model, failure.actions, preset, description), f, indent=2)
                    f.write("\n")
            except OSError as e:
                raise BadInput(f"cannot write the scenario to {scenario_path}: {e.strerror}") from None
            lines.append(f"Scenario written to {scenario_path}: jbodcheck replay {scenario_path}")
    elif scenario_path is not None:
        lines.append(f"No counterexample: {scenario_path} not written.")
    _emit(report, "\n".join(lines), json_path)
    return EXIT_VIOLATION if result.violations else EXIT_OK


def main(argv=None) -> None:
    try:
        code = cli.main(args=argv, prog_name="jbodcheck", standalone_mode=False)
    except click.exceptions.Exit as e:
        code = e.exit_code
    except (click.exceptions.Abort, KeyboardInterrupt):
        # click turns Ctrl-C into Abort; 130 is the shell's code for an interrupted command.
        click.echo("jbodcheck: interrupted", err=True)
        code = 130
    except click.ClickException as e:
        click.echo(f"jbodcheck: error: {e.format_message()}", err=True)
        code = EXIT_BAD_INPUT
    sys.exit(code if isinstance(code, int) else EXIT_OK)
