"""The `jbodcheck` command line (docs/cli.md; the README's "Interface" section).

click parses the options. Exit codes (``main``): 0 no violation (exhaustive or bounded), 1 a property
violated, 2 bad input, 3 the checker itself failed (an exception in a plugin invariant, a dead worker, an
output that could not be written, Spark failing, any unexpected exception), 128 + N when signal N
interrupted the search. Every error is one line on stderr, never a traceback.
"""
from __future__ import annotations

import contextlib
import functools
import json
import os
import stat
import sys

import click

import invariants as invariants_pkg
from invariants.plugins import Plugins
from model import BOUNDS, VARIANTS, ConfigError, Model, ModelConfig
from .catalog import PRESETS, claimed_invariants, deprecation_note, features as catalog, load_plugins, preset_config

from .checkpoint import DEFAULT_EVERY_S, CheckpointError, Checkpointer, check_fits, check_bounds, check_identity
from .checkpoint import identity as checkpoint_identity, read as read_checkpoint
from .bounds import search_limits
from .artifacts import TraceOutputs, dot_option, html_option, itf_option, save_scenario_option
from .errors import CheckerFailure, JbodcheckFailure, OutputError, failure_detail, guard_invariants
from .errors import is_failure, is_plugin, one_line
from .outputs import check_writable, write_json, write_text
from . import __version__
from .optional import LazyCommand, needs
from .progress import progress_for
from .report import report_dict, summary_text
from .scenario import ScenarioError, load_scenario, replay
from .search import ENGINES, SearchOptions, explore as run_search
from .visited import parse_size
from explorer.catalog import build_model

EXIT_OK, EXIT_VIOLATION, EXIT_BAD_INPUT, EXIT_FAILURE = 0, 1, 2, 3


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
    """The click option of a feature's Flag (model/spec/feature.py)."""
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
    (model/spec/feature.py Flag); the bounds are the model's."""
    f = click.option("--option", "options", multiple=True, metavar="NAME=VALUE", callback=_feature_options,
                     help="An option of a feature added by a plugin (repeatable; VALUE in JSON, e.g. 2 or true).")(f)
    for name in reversed(tuple(BOUNDS)):
        f = click.option(f"--{name.replace('_', '-')}", name, type=int, default=None, metavar="N",
                         help=f"Bound: {BOUNDS[name]}.")(f)
    for flag in reversed([flag for feature in catalog() for flag in feature.flags]):
        f = _flag_option(flag)(f)
    f = click.option("--variant", default=None, metavar="NAME", help=f"Protocol variant: {', '.join(VARIANTS)} "
                                                                  f"(legacy: the old name of kip112-no-isnew-check).")(f)
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
            cfg = preset_config(preset, extra_presets, **merged)
        else:
            cfg = ModelConfig.from_dict(merged)
    except ConfigError as e:
        raise BadInput(str(e)) from None
    except TypeError as e:
        raise BadInput(f"bad model parameter: {e}") from None
    if (note := deprecation_note(cfg.variant)) is not None:      # an old variant name: it works, say what to use
        click.echo(f"jbodcheck: warning: {note}", err=True)
    return cfg


def _build_model(cfg: ModelConfig, invariant_ids=(), symmetry: bool = False, quiet: bool = False) -> Model:
    """The model of this configuration with the plugins' features and invariants, checked with the named
    invariants (all by default), the plugins' ones guarded: an exception in their check is the checker's failure
    (exit 3, explorer/errors.py), not a traceback. Says on stderr when an invariant turns the asked-for symmetry
    reduction off (unless quiet: the summary and the report say it too)."""
    try:
        model = build_model(cfg, symmetry=symmetry, plugins=_plugins(), invariants=_with_portable(cfg, invariant_ids))
    except ConfigError as e:
        raise BadInput(str(e)) from None
    except KeyError as e:
        raise BadInput(_unknown_invariants(cfg, e.args[0])) from None
    if symmetry and not quiet and not model.symmetry and any(not i.symmetric for i in model.invariants):
        click.echo(f"jbodcheck: symmetry reduction off: {model.symmetry_note}", err=True)
    model.invariants = tuple(guard_invariants(model.invariants))
    return model


def _with_portable(cfg: ModelConfig, invariant_ids) -> list:
    """The named invariants, where one the design's features leave out but that reads only the core state
    (invariants/zk/designs.py PORTABLE: what `compare` judges every design by) is passed as a value, so that
    `--invariant dir_failure_spares_other_dirs` checks pre-kip112 as compare does."""
    from invariants.zk.designs import PORTABLE

    ids = list(invariant_ids)
    if not ids:
        return ids
    try:
        own = {i.id for i in build_model(cfg, plugins=_plugins()).all_invariants}
    except ConfigError:
        return ids                          # reported by the caller's own build_model(...)
    portable = {i.id: i for i in PORTABLE}
    return [portable[i] if i not in own and i in portable else i for i in ids]


def _unknown_invariants(cfg: ModelConfig, unknown: str) -> str:
    known = build_model(cfg, plugins=_plugins())
    elsewhere = {i.id: feature for feature, i in claimed_invariants()}
    left_out = [f"{i} belongs to feature {elsewhere[i]}, which this configuration leaves out"
                for i in unknown.split(", ") if i in elsewhere]
    if left_out:
        return "invariant " + "; ".join(left_out)
    return f"unknown invariant {unknown} (known: {', '.join(i.id for i in known.all_invariants)})"


def _check_writable(path: str | None, what: str = "the JSON report", dash_is_stdout: bool = True) -> None:
    """Fail on an unwritable output path before a long search rather than after it; creates nothing."""
    try:
        check_writable(path, what, dash_is_stdout)
    except OutputError as e:
        raise BadInput(str(e)) from None


def _emit(report: dict, summary: str, json_path: str | None) -> None:
    """The text summary to stdout (stderr when the JSON takes stdout), then the JSON report to a file
    (atomically) or stdout. The summary is out before the file is written: a failed write (OutputError,
    exit 3) does not lose it."""
    if json_path == "-":
        click.echo(summary, err=True)
        click.echo(json.dumps(report, indent=2))
        return
    click.echo(summary)
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


def _guard_report(command):
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


def _plugin_name(module: str) -> str:
    """How the user named the plugin that defines ``module`` (--plugin or JBODCHECK_PLUGINS), for a hint."""
    from invariants.plugins import LOADED

    return next((name for name, m in LOADED.items() if m.__name__ == module), module)


def _raise_checker_failures(model, preset, result, json_path, scenario: str | None = None) -> None:
    """An invariant whose check raised (explorer/errors.py) shows up in the result as a violation carrying
    FAILURE_MARK. Report the first as a CheckerFailure (exit 3): the invariant, the depth of the state and a
    scenario file with the path that reaches it. The run's summary and report are not written: the search
    did not finish. ``scenario``: the replayed file (replay): no new file, the step is named instead."""
    failures = [v for v in result.violations if is_failure(v.message)]
    if not failures:
        return
    from .scenario import scenario_dict

    v = failures[0]
    inv, depth = v.invariant, len(v.trace) - 1
    actions = [a for a, _ in v.trace[1:]]
    module = getattr(inv.check, "__module__", "") or ""
    plugin = f" --plugin {_plugin_name(module)}" if is_plugin(inv) and module else ""
    kind = f"{inv.kind}, plugin {_plugin_name(module)}" if plugin else inv.kind
    if scenario is not None:
        raise CheckerFailure(f"invariant {inv.id} ({kind}) raised {failure_detail(v.message)} after step {depth} "
                             f"of {scenario}: the checker failed, no result", inv.id, depth)
    path = _failure_scenario_path(inv.id, json_path)
    description = (f"jbodcheck: the {inv.kind} invariant {inv.id} raised {failure_detail(v.message)} on the state "
                   f"this scenario reaches (depth {depth})" + (f"; replay with{plugin}" if plugin else ""))
    try:
        write_json(path, scenario_dict(model, actions, preset, description), "the failure's scenario")
        where = f"scenario written to {path} (jbodcheck replay {path}{plugin})"
    except OutputError as e:
        where = f"{e}; the steps: " + "; ".join(model.rules[a.rule].label(a.args) for a in actions)
    raise CheckerFailure(f"invariant {inv.id} ({kind}) raised {failure_detail(v.message)} on a state at depth "
                         f"{depth}: the checker failed, no result; {where}", inv.id, depth, path)


def _trace_outputs(kwargs: dict) -> TraceOutputs:
    """--html, --itf, --save-scenario, --dot, --save-lasso (explorer/artifacts.py), checked before the search."""
    outputs = TraceOutputs(kwargs.pop("html_path", None), kwargs.pop("itf_path", None),
                           kwargs.pop("save_scenario", None), kwargs.pop("dot_path", None),
                           kwargs.pop("lasso_path", None))
    try:
        outputs.check()
    except OutputError as e:
        raise BadInput(str(e)) from None
    return outputs


def _exit_code(result) -> int:
    """1 for a violation, else 0; 128 + N when signal N interrupted the search (after the summary and report
    are out)."""
    sig = getattr(result, "signal", None)
    if sig:
        click.echo(f"jbodcheck: interrupted by signal {sig}: the result is partial", err=True)
        return 128 + int(sig)
    return EXIT_VIOLATION if result.violations else EXIT_OK


def _load_plugins(ctx, param, names) -> None:
    """--plugin MODULE (repeatable) and JBODCHECK_PLUGINS: import users' invariant and feature modules
    (docs/extending.md); the command's model gets what they declare."""
    try:
        ctx.meta["jbodcheck.plugins"] = load_plugins(names or (), env=True)
    except invariants_pkg.PluginError as e:
        raise BadInput(str(e)) from None
    except invariants_pkg.plugins.PluginAbort as e:    # sys.exit() or KeyboardInterrupt in a plugin's import
        raise JbodcheckFailure(str(e)) from None


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
    cores = default_workers()
    if workers > cores:
        click.echo(f"jbodcheck: warning: --workers {workers} is more than the {cores} core"
                   f"{'s' if cores != 1 else ''} available; the workers will share them (slower, more memory)",
                   err=True)
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


def _spark_setup(engine, master, partitions, checkpoint_dir, conf_pairs, resume_path=None):
    """The Spark engine's options, checked before Spark starts; None for the local engines."""
    given = master is not None or partitions is not None or checkpoint_dir is not None or conf_pairs
    if engine != "spark":
        if given:
            raise BadInput("--master, --spark-partitions, --checkpoint-dir and --spark-conf need --engine spark")
        return None
    from spark_explore import SparkSetupError
    from spark_explore.cli import options_from_cli

    with needs("--engine spark"):
        import pyspark  # noqa: F401 - before any work, not when Spark starts

    try:
        return options_from_cli(master, partitions, checkpoint_dir, conf_pairs, resume_path)
    except SparkSetupError as e:
        raise BadInput(str(e)) from None


def _spark_run(model, selected, options, spark):
    from spark_explore import SparkRunError, SparkSetupError
    from spark_explore.cli import run

    try:
        return run(model, selected, options, spark)
    except SparkRunError as e:          # Spark failed during the search: the checker failed (exit 3)
        raise JbodcheckFailure(str(e)) from None
    except SparkSetupError as e:        # Spark could not start with these options: bad input (exit 2)
        raise BadInput(str(e)) from None


def _checkpoint_options(f):
    """BFS checkpoints (explorer/checkpoint.py; docs/cli.md, "Checkpoint and resume")."""
    f = click.option("--resume", "resume_path", default=None, metavar="PATH",
                     help="BFS: continue the search saved in the checkpoint PATH; give the options that wrote it "
                          "(a checkpoint of another model configuration or version is refused). Spark: go on "
                          "with the search whose --checkpoint-dir is PATH.")(f)
    f = click.option("--checkpoint-every", "checkpoint_every", type=click.FloatRange(min=0), default=None,
                     metavar="SECONDS", help=f"BFS: seconds between two checkpoints (written at the next level "
                                             f"boundary) [default: {DEFAULT_EVERY_S:.0f}].")(f)
    f = click.option("--checkpoint", "checkpoint_path", default=None, metavar="PATH",
                     help="BFS: save the search to PATH (atomically) every --checkpoint-every seconds and when it "
                          "stops early (interrupt, --max-states, --max-depth, --max-memory), for --resume.")(f)
    return f


def _checkpoint_setup(engine: str, kwargs: dict) -> dict | None:
    """--checkpoint, --checkpoint-every and --resume, checked before the model is built: the checkpoint to
    resume is read (a damaged file or another format: bad input); None when none is given."""
    path, every, resume = (kwargs.pop(k, None) for k in ("checkpoint_path", "checkpoint_every", "resume_path"))
    if path is None and every is None and resume is None:
        return None
    if engine != "bfs":
        raise BadInput(f"--checkpoint and --resume apply to --engine bfs only (not {engine})"
                       + ("; the Spark engine has --checkpoint-dir (and --resume DIR)" if engine == "spark" else ""))
    if every is not None and path is None:
        raise BadInput("--checkpoint-every needs --checkpoint PATH")
    _check_writable(path, "the checkpoint", dash_is_stdout=False)
    try:
        saved = None if resume is None else read_checkpoint(resume)
    except CheckpointError as e:
        raise BadInput(str(e)) from None
    return {"path": path, "every": DEFAULT_EVERY_S if every is None else every, "resume": resume, "saved": saved}


def _checkpointing(setup: dict, model, options, quiet: bool):
    """The Checkpointer and the snapshot to resume for this model; a checkpoint of another configuration or
    version, or already past --max-depth or --max-states, is bad input."""
    ident = checkpoint_identity(model, options.all_violations, options.por)
    saved = setup.pop("saved")
    try:
        if saved is not None:
            check_identity(setup["resume"], saved.identity, ident)
            check_fits(setup["resume"], saved.snapshot, model)
            check_bounds(setup["resume"], saved.snapshot, options.max_depth, options.max_states)
    except CheckpointError as e:
        raise BadInput(str(e)) from None
    if saved is not None and not quiet:
        snap = saved.snapshot
        click.echo(f"jbodcheck: resuming {setup['resume']}: depth {snap.depth}, {snap.distinct:,} distinct states, "
                   f"{snap.generated:,} generated", err=True)
    checkpointer = None if setup["path"] is None else Checkpointer(
        setup["path"], setup["every"], ident, lambda line: click.echo(f"jbodcheck: warning: {line}", err=True))
    return checkpointer, None if saved is None else saved.snapshot


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@click.version_option(version=__version__, prog_name="jbodcheck")  # this source tree's, not an installed one's
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
@html_option
@itf_option
@save_scenario_option
@dot_option
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
@click.option("--por/--no-por", default=False, show_default=True,
              help="Partial-order reduction for safety (docs/performance.md): BFS on one worker and DFS, without "
                   "--max-depth; counterexamples stay real traces but may not be the shortest.")
@click.option("--liveness", is_flag=True,
              help="Check the liveness properties (all of the model's, or those named with --invariant) under weak "
                   "fairness, without symmetry reduction, in this process; a violation is a lasso (docs/model.md 9.1).")
@click.option("--save-lasso", "lasso_path", default=None, metavar="PATH",
              help="Liveness: write the lasso as a scenario file for `jbodcheck replay` (several: the n-th to "
                   "PATH-n).")
@_spark_options
@_checkpoint_options
@_guard_report
def explore(preset, engine, max_depth, max_states, seed, walks, invariant_ids, all_violations, json_path, quiet,
            workers, max_memory, symmetry, por, liveness, lasso_path, master, spark_partitions, checkpoint_dir, spark_conf,
            **kwargs):
    """Search the model's state space for invariant violations."""
    _check_writable(json_path)
    kwargs["lasso_path"] = lasso_path
    outputs = _trace_outputs(kwargs)
    if outputs.dot is not None:
        from .dot import DOT_LIMIT

        if max_states is None or max_states > DOT_LIMIT:
            raise BadInput(f"--dot draws small state graphs only: give --max-states N with N <= {DOT_LIMIT:,} "
                           f"({'no bound given' if max_states is None else f'not {max_states:,}'})")
    workers = _workers(engine, workers)
    max_memory = _max_memory(max_memory)
    if max_memory is not None and engine == "spark":
        raise BadInput("--max-memory applies to the local engines (bfs, dfs, random); for Spark set "
                       "--spark-conf spark.driver.memory=... and spark.executor.memory=...")
    spark_resume = kwargs.pop("resume_path") if engine == "spark" else None   # Spark's: its --checkpoint-dir
    checkpointing = _checkpoint_setup(engine, kwargs)
    spark = _spark_setup(engine, master, spark_partitions, checkpoint_dir, spark_conf, spark_resume)
    cfg = _build_config(preset, _model_params(kwargs))
    model = _build_model(cfg, invariant_ids, symmetry and not liveness, quiet)
    if liveness or any(invariants_pkg.is_liveness(i) for i in model.invariants):
        if spark is not None or engine != "bfs" or max_depth is not None or max_states is not None or checkpointing:
            raise BadInput("liveness checking explores the whole graph with its own engine: no --engine, "
                           "--max-depth, --max-states, --checkpoint or --resume")
        return _explore_liveness(cfg, preset, invariant_ids, json_path, quiet, outputs, por)
    if lasso_path is not None:
        raise BadInput("--save-lasso needs --liveness (or a liveness property named with --invariant); "
                       "--save-scenario writes a safety counterexample")
    selected = list(model.invariants)
    display = progress_for(engine, quiet)      # explorer/progress.py: lines, or a live display on a terminal
    options = SearchOptions(max_depth=max_depth, max_states=max_states, seed=seed, walks=walks,
                            all_violations=all_violations, progress=display and display.line, workers=workers,
                            max_memory=max_memory, progress_figures=display and display.figures,
                            progress_interval=display.interval if display else 3.0, por=por)
    if checkpointing:
        options.checkpoint, options.resume = _checkpointing(checkpointing, model, options, quiet)
    with display or contextlib.nullcontext():
        result = run_search(engine, model, selected, options) if spark is None else _spark_run(model, selected, options, spark)
    result.limits = search_limits(options, engine)
    if options.checkpoint is not None and options.checkpoint.written and result.result in ("bounded", "interrupted"):
        depth, distinct = options.checkpoint.written
        click.echo(f"jbodcheck: checkpoint {checkpointing['path']}: depth {depth}, {distinct:,} distinct states; "
                   f"continue with --resume {checkpointing['path']}", err=True)
    _raise_checker_failures(model, preset, result, json_path)
    if result.note:
        click.echo(f"jbodcheck: {result.note}", err=True)
    if por and not quiet and result.por is not None and result.por.get("note"):
        click.echo(f"jbodcheck: partial-order reduction off: {result.por['note']}", err=True)
    report, summary = report_dict(model, preset, result), summary_text(model, preset, result)
    if spark is not None:
        from spark_explore.cli import annotate

        report, summary = annotate(report, summary, result)
    _emit(report, summary, json_path)
    outputs.write(model, preset, result, report, dot_bounds=(max_states, max_depth))
    return _exit_code(result)


def _explore_liveness(cfg, preset, invariant_ids, json_path, quiet, outputs, por=False):
    """explore --liveness (explorer/liveness.py): always without symmetry reduction or partial-order reduction.
    The trace outputs write every lasso (--save-lasso and --save-scenario alike: a scenario file with loop_start);
    --save-lasso writes the inconclusive lassos where there is no real one."""
    from .liveness import POR_NOTE, check_liveness, liveness_properties

    model = _build_model(cfg, invariant_ids, False, True)
    properties = liveness_properties(model, invariant_ids)
    if len(properties) != len(model.invariants) and invariant_ids:
        raise BadInput("check safety invariants and liveness properties in separate runs")
    if not properties:
        raise BadInput("this model's features declare no liveness property")
    if not quiet:
        click.echo("jbodcheck: liveness: symmetry reduction off (lassos are concrete cycles)", err=True)
    progress = None if quiet else (lambda line: click.echo(f"[liveness] {line}", err=True))
    if por and not quiet:
        click.echo(f"jbodcheck: partial-order reduction is off for liveness: {POR_NOTE}", err=True)
    result = check_liveness(model, properties, progress)
    result.por = {"used": False, "note": POR_NOTE} if por else None
    report = report_dict(model, preset, result)
    _emit(report, summary_text(model, preset, result), json_path)
    outputs.write(model, preset, result, report)
    return _exit_code(result)


@cli.command(name="replay")
@click.argument("scenario_path", metavar="SCENARIO.json")
@_model_options
@_plugin_option
@click.option("--invariant", "invariant_ids", multiple=True, metavar="ID", help="Check only this invariant.")
@click.option("--json", "json_path", default=None, metavar="PATH|-", help="Write the JSON report to PATH or stdout.")
@html_option
@itf_option
@_guard_report
def replay_command(scenario_path, preset, invariant_ids, json_path, **kwargs):
    """Replay a scenario file step by step, checking every invariant after each step."""
    _check_writable(json_path)
    outputs = _trace_outputs(kwargs)
    try:
        scenario = load_scenario(scenario_path)
        file_model = dict(scenario.model)
        preset = preset or file_model.pop("preset", None)
        cfg = _build_config(preset, _model_params(kwargs), base=file_model)
        model = _build_model(cfg, invariant_ids)
        result, trace, failed = replay(model, scenario, list(model.invariants))
    except ScenarioError as e:
        raise BadInput(str(e)) from None
    _raise_checker_failures(model, preset, result, json_path, scenario=scenario_path)
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
    outputs.write(model, preset, result, report, walkthrough=(summary[0], trace))
    return EXIT_VIOLATION if result.result == "violation" else EXIT_OK


@cli.command()
@click.argument("report_path", metavar="REPORT.json")
@click.option("--html", "html_path", required=True, metavar="PATH",
              help="Write the report as a self-contained HTML page (as --html of explore, replay and fuzz).")
@_plugin_option
def view(report_path, html_path):
    """Render a saved JSON report (--json) as a self-contained HTML page."""
    from .html import load_report, page, references

    _check_writable(html_path, "the HTML page", dash_is_stdout=False)
    try:
        report = load_report(report_path)
    except ValueError as e:
        raise BadInput(str(e)) from None
    # The report has no references: rebuild its model for the rules' and invariants' (any parameter it cannot
    # take, e.g. a plugin's option without --plugin, leaves the references out).
    params = dict(report.get("model") or {})
    preset = params.pop("preset", None)
    try:
        refs = references(build_model(_build_config(preset, {}, base=params), plugins=_plugins()))
    except (click.ClickException, ConfigError, KeyError, TypeError, ValueError) as e:
        click.echo(f"jbodcheck: warning: the report's model cannot be rebuilt ({one_line(e)}): "
                   f"the page has no rule references", err=True)
        refs = {}
    write_text(html_path, page(report, refs), "the HTML page")
    return EXIT_OK


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
        for feature in build_model(preset_config(e["name"])).features:
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
    entries = [{"name": r.name, "params": list(r.params), "kind": r.kind, "fair": r.fair, "feature": feature.name,
                "in_configuration": id(r) in included, "reference": r.reference, "doc": r.doc}
               for r, feature in (by_name[name] for name in model.reported_rules)]
    if as_json:
        click.echo(json.dumps(entries, indent=2))
        return EXIT_OK
    for e in entries:
        fair = ", weakly fair" if e["fair"] else ""
        click.echo(f"{e['name']}({', '.join(e['params'])})  [{e['kind']}{fair}]\n    {e['reference']}\n    {e['doc']}\n")
    return EXIT_OK


@cli.command(name="invariants")
@_plugin_option
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list.")
def invariants_command(as_json):
    """List every invariant: id, kind, statement, reference, the feature that claims it (plugin invariants: none)
    and whether it is symmetric under the dir symmetry reduction."""
    plugins = _plugins()
    claimed = [(i, feature) for feature, i in claimed_invariants()] + [
        (i, f.name) for f in plugins.features for i in f.invariants]
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
@html_option
@itf_option
@click.option("--quiet", "-q", is_flag=True, help="No progress lines on stderr.")
@_guard_report
def fuzz(preset, loose, examples, steps, seed, invariant_ids, json_path, scenario_path, quiet, **kwargs):
    """Hypothesis stateful testing of the model: random runs, shrunk to a short counterexample."""
    with needs("jbodcheck fuzz"):
        from .fuzz import DEFAULT_EXAMPLES, DEFAULT_STEPS, LOOSE_BOUNDS, FuzzOptions, fuzz as run_fuzz
    from .scenario import scenario_dict

    _check_writable(json_path)
    _check_writable(scenario_path, "the scenario", dash_is_stdout=False)
    outputs = _trace_outputs(kwargs)
    params = _model_params(kwargs)
    use_loose = (preset is None) if loose is None else loose
    if use_loose:
        params = {**LOOSE_BOUNDS, **params}
    cfg = _build_config(preset, params)
    model = _build_model(cfg, invariant_ids)
    selected = list(model.invariants)
    examples = DEFAULT_EXAMPLES if examples is None else examples
    steps = DEFAULT_STEPS if steps is None else steps
    display = progress_for("hypothesis", quiet)
    with display or contextlib.nullcontext():
        outcome = run_fuzz(model, selected, FuzzOptions(examples=examples, steps=steps, seed=seed,
                                                        progress=display and display.line))
    result, failure = outcome.result, outcome.failure
    result.limits = search_limits(FuzzOptions(examples=examples, steps=steps, seed=seed), "hypothesis")
    _raise_checker_failures(model, preset, result, json_path)

    bounds = ", ".join(f"{k.removeprefix('max_')}={getattr(cfg, k)}" for k in BOUNDS)
    lines = [summary_text(model, preset, result),
             f"Hypothesis: {examples} examples of up to {steps} steps, seed {seed}; bounds: {bounds}."]
    report = report_dict(model, preset, result)
    scenario_error = None
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
                name = _plugin_name(module)
                description += f" (the invariant comes from plugin {name}: replay with --plugin {name})"
            try:
                write_json(scenario_path, scenario_dict(model, failure.actions, preset, description), "the scenario")
                lines.append(f"Scenario written to {scenario_path}: jbodcheck replay {scenario_path}")
            except OutputError as e:
                # Keep the counterexample: its steps are in the summary; the failed write is exit 3.
                scenario_error = e
                lines.append(f"Scenario NOT written ({e}): the counterexample's steps are listed above.")
    elif scenario_path is not None:
        lines.append(f"No counterexample: {scenario_path} not written.")
    _emit(report, "\n".join(lines), json_path)
    outputs.write(model, preset, result, report)
    if scenario_error is not None:
        raise scenario_error
    return EXIT_VIOLATION if result.violations else EXIT_OK


# jbodcheck prove (docs/proofs.md): z3 is imported only when it runs (explorer/optional.py).
cli.add_command(LazyCommand("prove", "proofs.cli:prove_command",
                            "Prove KIP-112's properties for every number of brokers, dirs and partitions (z3)."))

# jbodcheck serve (explorer/serve/): walk the model by hand in a browser; imported only when it runs.
cli.add_command(LazyCommand("serve", "explorer.serve.command:serve_command",
                            "Walk the model by hand in a browser: click actions, go back, fork, save the path."))


def _worker_error_line(error: BaseException) -> str:
    """A BFS worker's failure in one line: what happened, and the worker's exception (its traceback's last
    line) if it sent one."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    if not lines:
        return type(error).__name__
    head = lines[0].rstrip(":")
    return head if len(lines) == 1 else f"{head}: {lines[-1]}"


def main(argv=None) -> None:
    """Run the CLI and map every outcome to its exit code (module docstring), with one line on stderr for
    every error."""
    from .parallel import WorkerError
    from . import signals

    installed = signals.install()   # explorer/entry.py did, before the imports; a caller of main() may not
    try:
        signals.test_point("startup")
        code = cli.main(args=argv, prog_name="jbodcheck", standalone_mode=False)
    except click.exceptions.Exit as e:
        code = e.exit_code
    except (click.exceptions.Abort, *signals.INTERRUPTS):
        # click turns Ctrl-C into Abort; 128 + the signal is the shell's code for an interrupted command.
        sig = signals.received() or 2
        click.echo(f"jbodcheck: interrupted by signal {sig} before a result could be reported", err=True)
        code = 128 + sig
    except click.ClickException as e:
        click.echo(f"jbodcheck: error: {' '.join(e.format_message().split())}", err=True)
        code = EXIT_BAD_INPUT
    except JbodcheckFailure as e:
        click.echo(f"jbodcheck: failure: {' '.join(str(e).split())}", err=True)
        code = EXIT_FAILURE
    except WorkerError as e:
        click.echo(f"jbodcheck: failure: {_worker_error_line(e)}", err=True)
        code = EXIT_FAILURE
    except Exception as e:  # noqa: BLE001 - a bug in jbodcheck: one line, never a traceback
        click.echo(f"jbodcheck: internal error: {one_line(e)}", err=True)
        code = EXIT_FAILURE
    code = signals.exit_code(code if isinstance(code, int) else EXIT_OK)
    if installed:
        signals.uninstall()
    sys.exit(code)


from .compare import compare_command  # noqa: E402 - `jbodcheck compare` (explorer/compare.py)

cli.add_command(compare_command)
