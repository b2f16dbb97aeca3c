"""`jbodcheck explore`: search the model's state space (docs/cli.md). The engine is chosen here, once, from the
registry (explorer/engines.py: bfs, dfs, random, spark, or the liveness checker), which says which options it
takes; it runs in ``run_engine`` and gets the model value, never a name."""
from __future__ import annotations

import contextlib
import os

import click

from model.spec.invariant import is_liveness

from explorer.catalog import claimed_invariants
from explorer.checkpoint import DEFAULT_EVERY_S, CheckpointError, Checkpointer, check_bounds, check_fits, check_identity
from explorer.checkpoint import identity as checkpoint_identity, read as read_checkpoint
from explorer.reports.bounds import search_limits
from explorer.reports.progress import progress_for
from explorer.reports.report import report_dict, summary_text
from explorer.engines import Engine, default_engine, engine_named, liveness_engine, selectable
from explorer.search import SearchOptions
from explorer.visited import parse_size

from .exits import BadInput, exit_code
from .model_value import checked_model, model_config
from .numbers import Seconds
from .options import dot_option, html_option, itf_option, model_options, model_params, plugin_option, plugins
from .options import json_report_option, quiet_option, save_scenario_option
from .sections import SectionedCommand, section
from .outputs import checked_writable, emit, guard_report, raise_checker_failures, trace_outputs
from .spark import annotate, spark_errors, spark_options, spark_setup


def default_workers() -> int:
    """All the cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _workers(engine: Engine, workers: int | None) -> int:
    if workers is None:
        return default_workers() if engine.accepts("--workers") else 1
    if not engine.accepts("--workers") and workers != 1:
        raise BadInput(engine.refusal("--workers"))
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


def _checkpoint_options(f):
    """BFS checkpoints (explorer/checkpoint.py; docs/cli.md, "Checkpoint and resume")."""
    f = click.option("--resume", "resume_path", default=None, metavar="PATH",
                     help="BFS: continue the search saved in the checkpoint PATH; give the options that wrote it "
                          "(a checkpoint of another model configuration or version is refused). Spark: go on "
                          "with the search whose --checkpoint-dir is PATH.")(f)
    f = click.option("--checkpoint-every", "checkpoint_every", type=Seconds(min=0), default=None,
                     metavar="SECONDS", help=f"Seconds between two checkpoints (written at the next level "
                                             f"boundary) [default: {DEFAULT_EVERY_S:.0f}].")(f)
    f = click.option("--checkpoint", "checkpoint_path", default=None, metavar="PATH",
                     help="Save the search to PATH (atomically) every --checkpoint-every seconds and when it "
                          "stops early (interrupt, --max-states, --max-depth, --max-memory), for --resume.")(f)
    return f


def _resumed(resume: str | None, checkpoint: str | None) -> dict:
    """--resume as an input no output may overwrite, but --checkpoint: the same file goes on being saved."""
    same = resume and checkpoint and os.path.exists(resume) and os.path.exists(checkpoint) and \
        os.path.samefile(resume, checkpoint)
    return {} if same else {"the checkpoint --resume names": resume}


def _checkpoint_setup(engine: Engine, kwargs: dict) -> dict | None:
    """--checkpoint, --checkpoint-every and --resume, checked before the model is built: the checkpoint to
    resume is read (a damaged file or another format: bad input); None when none is given."""
    path, every, resume = (kwargs.pop(k, None) for k in ("checkpoint_path", "checkpoint_every", "resume_path"))
    if path is None and every is None and resume is None:
        return None
    if not engine.accepts("--checkpoint"):
        raise BadInput(engine.refusal("--checkpoint", "--checkpoint and --resume"))
    if every is not None and path is None:
        raise BadInput("--checkpoint-every needs --checkpoint PATH")
    checked_writable(path, "the checkpoint", dash_is_stdout=False)
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


def _names_liveness(invariant_ids) -> bool:
    """Whether --invariant names a liveness property (the built-in ones' or a plugin's)."""
    known = {i.id: i for _, i in claimed_invariants()}
    known.update({i.id: i for f in plugins().features for i in f.invariants})
    known.update({i.id: i for i in plugins().invariants})
    return any(is_liveness(known[i]) for i in invariant_ids if i in known)


def run_engine(engine: Engine, model, selected, options, settings: dict):
    """The one place an engine runs, with its own ``settings`` (Spark's options); Spark's failures are one line
    (explorer/cli/spark.py)."""
    with spark_errors() if settings else contextlib.nullcontext():
        return engine.run(model, selected, options, **settings)


def _engine_help() -> str:
    return "; ".join(f"{e.name}: {e.help}" for e in selectable()) + "."


@click.command(cls=SectionedCommand)
@model_options
@plugin_option
@section(
    "Search",
    click.option("--engine", "engine_name", type=click.Choice([e.name for e in selectable()]),
                 default=default_engine().name,
                 show_default=True, help=_engine_help()),
    click.option("--max-depth", type=click.IntRange(min=0), default=None, metavar="N",
                 help="Explore at most N steps from the initial state (random: steps per walk)."),
    click.option("--max-states", type=click.IntRange(min=1), default=None, metavar="N",
                 help="Stop after N distinct states."),
    click.option("--max-memory", "max_memory", default=None, metavar="SIZE",
                 help="Stop with result bounded before the search (and its workers) use more memory than SIZE, "
                      "e.g. 512M or 2G."),
    click.option("--invariant", "invariant_ids", multiple=True, metavar="ID",
                 help="Check only this invariant (repeatable; default: all)."),
    click.option("--all-violations", is_flag=True,
                 help="Keep searching after the first violation (one per invariant)."),
    click.option("--workers", type=click.IntRange(min=1, max=1024), default=None, metavar="N",
                 help="BFS: worker processes, the frontier partitioned by fingerprint; 1: in this process "
                      "[default: all cores]."),
    click.option("--symmetry/--no-symmetry", default=True, show_default=True,
                 help="Dedup states that differ only by a permutation of a broker's log dirs, where that is sound "
                      "(docs/model.md, section 10); for every engine."),
    click.option("--por/--no-por", default=False, show_default=True,
                 help="Partial-order reduction for safety (docs/performance.md): BFS on one worker and DFS, "
                      "without --max-depth; counterexamples stay real traces but may not be the shortest."),
    click.option("--seed", type=int, default=0, show_default=True, metavar="N", help="Random engine: the seed."),
    click.option("--walks", type=click.IntRange(min=1), default=1000, show_default=True, metavar="N",
                 help="Random engine: number of walks."),
)
@section(
    "Liveness",
    click.option("--liveness", is_flag=True,
                 help="Check the liveness properties (all of the model's, or those named with --invariant) under "
                      "weak fairness, without symmetry reduction, in this process; a violation is a lasso "
                      "(docs/model.md 9.1)."),
    click.option("--save-lasso", "lasso_path", default=None, metavar="PATH",
                 help="Write the lasso as a scenario file for `jbodcheck replay` (several: the n-th to PATH-n)."),
)
@section(
    "Outputs",
    json_report_option, html_option, itf_option, save_scenario_option, dot_option, quiet_option,
)
@section("Checkpoints (BFS)", _checkpoint_options)
@section("Spark engine (--engine spark)", spark_options)
@guard_report
def explore(preset, engine_name, max_depth, max_states, seed, walks, invariant_ids, all_violations, json_path, quiet,
            workers, max_memory, symmetry, por, liveness, lasso_path, master, spark_partitions, checkpoint_dir, spark_conf,
            **kwargs):
    """Search the model's state space for invariant violations."""
    checked_writable(json_path)
    kwargs["lasso_path"] = lasso_path
    outputs = trace_outputs(kwargs, {"--json": json_path, "--checkpoint": kwargs.get("checkpoint_path")},
                            _resumed(kwargs.get("resume_path"), kwargs.get("checkpoint_path")))
    if outputs.dot is not None:
        from explorer.reports.dot import DOT_LIMIT

        if max_states is None or max_states > DOT_LIMIT:
            raise BadInput(f"--dot draws small state graphs only: give --max-states N with N <= {DOT_LIMIT:,} "
                           f"({'no bound given' if max_states is None else f'not {max_states:,}'})")
    engine = engine_named(engine_name)
    workers = _workers(engine, workers)
    max_memory = _max_memory(max_memory)
    if max_memory is not None and not engine.accepts("--max-memory"):
        raise BadInput(engine.refusal("--max-memory"))
    # An engine that takes the Spark options has its own --resume: its --checkpoint-dir.
    own_resume = kwargs.pop("resume_path") if engine.accepts("--checkpoint-dir") else None
    checkpointing = _checkpoint_setup(engine, kwargs)
    settings = spark_setup(engine, master, spark_partitions, checkpoint_dir, spark_conf, own_resume)
    cfg = model_config(preset, model_params(kwargs))
    # Liveness: without symmetry reduction (lassos are concrete cycles), the model built once either way.
    liveness = liveness or _names_liveness(invariant_ids)
    model = checked_model(preset, cfg, invariant_ids, symmetry and not liveness, quiet or liveness)
    if liveness:
        given = [flag for flag, value in (("--max-depth", max_depth), ("--max-states", max_states),
                                          ("--checkpoint", checkpointing)) if value is not None]
        if engine is not default_engine() or settings or any(not liveness_engine().accepts(flag) for flag in given):
            raise BadInput("liveness checking explores the whole graph with its own engine: no --engine, "
                           "--max-depth, --max-states, --checkpoint or --resume")
        return _explore_liveness(model, invariant_ids, json_path, quiet, outputs, por)
    if lasso_path is not None:
        raise BadInput("--save-lasso needs --liveness (or a liveness property named with --invariant); "
                       "--save-scenario writes a safety counterexample")
    selected = list(model.invariants)
    display = progress_for(engine.name, quiet)   # explorer/reports/progress.py: lines, or a live display on a terminal
    options = SearchOptions(max_depth=max_depth, max_states=max_states, seed=seed, walks=walks,
                            all_violations=all_violations, progress=display and display.line, workers=workers,
                            max_memory=max_memory, progress_figures=display and display.figures,
                            progress_interval=display.interval if display else 3.0, por=por)
    if checkpointing:
        options.checkpoint, options.resume = _checkpointing(checkpointing, model, options, quiet)
    with display or contextlib.nullcontext():
        result = run_engine(engine, model, selected, options, settings)
    result.limits = search_limits(options, engine)
    if options.checkpoint is not None and options.checkpoint.written and result.result in ("bounded", "interrupted"):
        depth, distinct = options.checkpoint.written
        click.echo(f"jbodcheck: checkpoint {checkpointing['path']}: depth {depth}, {distinct:,} distinct states; "
                   f"continue with --resume {checkpointing['path']}", err=True)
    raise_checker_failures(model, result, json_path)
    if result.note:
        click.echo(f"jbodcheck: {result.note}", err=True)
    if por and not quiet and result.por is not None and result.por.get("note"):
        click.echo(f"jbodcheck: partial-order reduction off: {result.por['note']}", err=True)
    report, summary = report_dict(model, result), summary_text(model, result)
    if settings:
        report, summary = annotate(report, summary, result)
    emit(report, summary, json_path)
    outputs.write(model, result, report, dot_bounds=(max_states, max_depth))
    return exit_code(result)


def _explore_liveness(model, invariant_ids, json_path, quiet, outputs, por=False):
    """explore --liveness (explorer/liveness.py): always without symmetry reduction or partial-order reduction.
    The trace outputs write every lasso (--save-lasso and --save-scenario alike: a scenario file with loop_start);
    --save-lasso writes the inconclusive lassos where there is no real one."""
    from explorer.liveness import POR_NOTE, liveness_properties

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
    result = run_engine(liveness_engine(), model, properties, SearchOptions(progress=progress), {})
    result.por = {"used": False, "note": POR_NOTE} if por else None
    report = report_dict(model, result)
    emit(report, summary_text(model, result), json_path)
    outputs.write(model, result, report)
    return exit_code(result)
