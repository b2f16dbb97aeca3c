"""The `jbodcheck` command line (../shared/CONTRACT.md; docs/cli.md).

click parses the options; every bad input ends in one line on stderr and exit code 2, never a traceback.
"""
from __future__ import annotations

import json
import os
import sys

import click

import invariants as invariants_pkg
from invariants.plugins import Plugins
from model import BOUNDS, VARIANTS, ConfigError, Model, ModelConfig
from model.designs import catalog
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


def _feature_options(ctx, param, pairs):
    """--option NAME=VALUE (repeatable): an option of a feature added by a plugin; VALUE is JSON, else text."""
    if not pairs:
        return None
    out = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        if not sep or not name.strip():
            raise BadInput(f"--option takes NAME=VALUE, not {pair!r}")
        try:
            out[name.strip()] = json.loads(text)
        except ValueError:
            out[name.strip()] = text
    return out


def _flag_option(flag):
    """The click option of a feature's Flag (model/feature.py)."""
    kinds = {
        "switch": {},
        "int": {"type": int, "metavar": flag.metavar or "N"},
        "per-partition": {"metavar": flag.metavar or "N[,N...]", "callback": _per_partition},
        "choice": {"type": click.Choice(flag.choices)},
        "text": {"metavar": flag.metavar or "TEXT"},
    }
    return click.option(flag.decl, flag.field, default=None, help=flag.help, **kinds[flag.type])


def _model_options(f):
    """MODEL options: a preset fills them, explicit flags override the preset. The features bring their flags
    (model/feature.py Flag); the bounds are the model's."""
    f = click.option("--option", "options", multiple=True, metavar="NAME=VALUE", callback=_feature_options,
                     help="An option of a feature added by a plugin (repeatable; VALUE in JSON, e.g. 2 or true).")(f)
    for name in reversed(tuple(BOUNDS)):
        f = click.option(f"--{name.replace('_', '-')}", name, type=int, default=None, metavar="N",
                         help=f"Bound: {BOUNDS[name]}.")(f)
    for flag in reversed([flag for feature in catalog() for flag in feature.flags]):
        f = _flag_option(flag)(f)
    f = click.option("--variant", default=None, metavar="NAME", help=f"Protocol variant: {', '.join(VARIANTS)}.")(f)
    f = click.option("--preset", default=None, metavar="NAME", help=f"Named configuration: {', '.join(PRESETS)}.")(f)
    return f


_MODEL_PARAMS = ("variant", *(flag.field for feature in catalog() for flag in feature.flags), *BOUNDS, "options")


def _model_params(kwargs: dict) -> dict:
    """Take the MODEL options out of a command's keyword arguments, keeping those given explicitly."""
    return {n: v for n in _MODEL_PARAMS if (v := kwargs.pop(n, None)) is not None}


def _plugins() -> Plugins:
    """What --plugin and JBODCHECK_PLUGINS loaded for this command (invariants/plugins.py)."""
    ctx = click.get_current_context(silent=True)
    return (ctx.meta.get("jbodcheck.plugins") if ctx is not None else None) or Plugins()


def _build_config(preset: str | None, params: dict, base: dict | None = None) -> ModelConfig:
    """The preset (if any), then the scenario file's model (base), then explicit flags."""
    merged = {**(base or {}), **params}
    extra_presets = {name: p for f in _plugins().features for name, p in f.presets.items()}
    try:
        if preset is not None:
            return preset_config(preset, extra_presets, **merged)
        return ModelConfig.from_dict(merged)
    except ConfigError as e:
        raise BadInput(str(e)) from None
    except TypeError as e:
        raise BadInput(f"bad model parameter: {e}") from None


def _build_model(cfg: ModelConfig, invariant_ids=(), symmetry: bool = False) -> Model:
    """The model of this configuration with the plugins' features and invariants, checked with the named
    invariants (all by default). Says on stderr when an invariant turns the asked-for symmetry reduction off."""
    try:
        model = Model(cfg, symmetry=symmetry, plugins=_plugins(), invariants=list(invariant_ids))
    except ConfigError as e:
        raise BadInput(str(e)) from None
    except KeyError as e:
        raise BadInput(_unknown_invariants(cfg, e.args[0])) from None
    if symmetry and not model.symmetry and any(not i.symmetric for i in model.invariants):
        click.echo(f"jbodcheck: symmetry reduction off: {model.symmetry_note}", err=True)
    return model


def _unknown_invariants(cfg: ModelConfig, unknown: str) -> str:
    known = Model(cfg, plugins=_plugins())
    elsewhere = {i.id: f.name for f in catalog() for i in f.invariants}
    left_out = [f"{i} belongs to feature {elsewhere[i]}, which this configuration leaves out"
                for i in unknown.split(", ") if i in elsewhere]
    if left_out:
        return "invariant " + "; ".join(left_out)
    return f"unknown invariant {unknown} (known: {', '.join(i.id for i in known.all_invariants)})"


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
    """--plugin MODULE (repeatable) and JBODCHECK_PLUGINS: import users' invariant and feature modules
    (docs/extending.md); the command's model gets what they declare."""
    try:
        ctx.meta["jbodcheck.plugins"] = invariants_pkg.load_plugins(names or (), env=True)
    except invariants_pkg.PluginError as e:
        raise BadInput(str(e)) from None


def _plugin_option(f):
    return click.option("--plugin", "plugins", multiple=True, metavar="MODULE", expose_value=False,
                        callback=_load_plugins,
                        help="Import MODULE (a module name or a .py file) for its @invariants.invariant "
                             "declarations and FEATURES (repeatable; also JBODCHECK_PLUGINS=mod1,mod2).")(f)


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
    model = _build_model(cfg, invariant_ids, symmetry)
    selected = list(model.invariants)
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
        model = _build_model(cfg, invariant_ids)
        result, trace, failed = replay(model, scenario, list(model.invariants))
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
        features = []
        for feature in Model(preset_config(e["name"])).features:
            if feature.enabled(ModelConfig()) or not feature.config_fields:
                continue  # always included (the core, the data path), or required by a switched feature
            switch, *details = feature.config_fields
            shown = ", ".join(f"{k.replace('saturation_', '')}={_text(m[k])}" for k in details
                              if k != "deletion_waits_for_response")
            features.append(f"{feature.name} ({shown})" if shown else feature.name)
        click.echo(f"{e['name']:<8} {e['description']}\n         {m['brokers']} brokers x {m['dirs']} dirs, "
                   f"{m['partitions']} partition(s), RF {m['rf']}, variant {m['variant']}; bounds: {bounds}\n"
                   f"         data: {data}" + (f"\n         features: {', '.join(features)}" if features else ""))
    return EXIT_OK


def _text(value) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


@cli.command()
@_model_options
@_plugin_option
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list.")
def rules(preset, as_json, **kwargs):
    """List every rule of the design with its feature and its KIP or Kafka-code reference (rules of features the
    configuration leaves out too: "in_configuration" says which the model includes)."""
    model = _build_model(_build_config(preset, _model_params(kwargs)))
    included = {id(r) for r in model.rules}
    features = model.design.features + tuple(_plugins().features)
    by_name = {}
    for feature in features:
        for r in feature.rules:
            by_name.setdefault(r.name, (r, feature))
    for feature in model.features:
        for r in feature.replaces.values():
            by_name[r.name] = (r, feature)
    entries = [{"name": r.name, "params": list(r.params), "kind": r.kind, "feature": feature.name,
                "in_configuration": id(r) in included, "reference": r.reference, "doc": r.doc}
               for r, feature in (by_name[name] for name in model.reported_rules)]
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
    """List every invariant: id, kind, statement, reference, the feature that claims it (plugin invariants: none)
    and whether it is symmetric under the dir symmetry reduction."""
    plugins = _plugins()
    claimed = [(i, f.name) for f in catalog() + tuple(plugins.features) for i in f.invariants]
    entries = [{"id": i.id, "kind": i.kind, "statement": i.statement, "reference": i.reference, "feature": feature,
                "symmetric": i.symmetric}
               for i, feature in claimed + [(i, None) for i in plugins.invariants]]
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
    model = _build_model(cfg, invariant_ids)
    selected = list(model.invariants)
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
