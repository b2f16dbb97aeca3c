"""`jbodcheck reproduce SCENARIO --kafka VERSION`: a KRaft scenario file on a real KRaft cluster of that Kafka
release (a ZooKeeper-mode one, ``--variant kip112``, on a ZooKeeper-mode cluster: reproduce_zk.py), step by step
beside the model (docs/reproduce.md; realkafka/driver/ does the work, realkafka/cluster/
runs the cluster). Imported only when the command runs (explorer/cli/app.py LazyCommand).

Exit codes: 0 the real cluster matched the model at every observable point and the scenario's violation happened
on it (for a scenario that expects none: none happened); 1 the real cluster differs from the model, or the
violation did not happen; 2 bad input (not a KRaft scenario, an unknown release, a rule with no mapping or one the
harness cannot drive, no such release, an unusable Kafka cache); 3 the harness failed (no JVM, a jar not fetched, a
broker that would not start); 130 / 143 / 129 interrupted by SIGINT / SIGTERM / SIGHUP (the cluster is stopped and
the report written first). A run that fails (2 or 3 once the cluster's work began) still writes its report, with
"result": "error" (explorer/cli/reproduce_report.py); --plan-only's report has "result": "planned". With --json -
stdout holds the JSON report alone.
"""
from __future__ import annotations

import contextlib
import json

import click

from explorer import __version__, signals
from explorer.errors import JbodcheckFailure, OutputError, one_line
from explorer.outputs import write_json
from explorer.scenario import ScenarioError, load_scenario, parse_step
from realkafka.driver.session import kraft_settings

from .exits import EXIT_OK, EXIT_VIOLATION, BadInput, os_error_line
from .model_value import command_model
from .numbers import Seconds
from .harness_failure import harness_failure
from .reproduce_fix import build_patches, checked_patches, fix_lines, fixes_report, patch_files, with_fixes
from .outputs import checked_distinct, checked_writable, emit, guard_report


def _version(text: str) -> tuple:
    return tuple(int(x) for x in text.split("."))


def release_bugs(model, release: str) -> tuple:
    """The bug switches Kafka ``release`` implies (model/kraft/bugs.py ``implied``: each known bug it still has)
    whose feature this model includes (a kraft-future switch only when the model has kraft-future: naming it would
    turn the feature on)."""
    from model.kraft.bugs import BUGS, implied

    have = set(model.feature_names)
    return tuple(i for i in implied(_version(release)) if BUGS[i].feature is None or BUGS[i].feature in have)


def _kraft_model(scenario, release: str, elr: str = "default", path: str | None = None, fixes: tuple = ()):
    """The scenario's model, following ``release`` (the model's release option ``kafka``: its rules, its ELR default
    unless ``elr`` says on or off, and the bug switches it implies, listed), with the data path on where the
    scenario's model allows it (a real cluster's followers always fetch: without records the model leaves ISR
    expansions out), and with the candidate ``fixes`` on (``--fix``: model/kraft/fixes.py) besides the file's own."""
    base = dict(scenario.model)
    preset = base.pop("preset", None)
    named = f"scenario {path}: model" if path is not None else None     # a field of the file is named as such
    first = command_model(preset, {}, base=base, quiet=True, base_name=named)
    if first.cfg.variant != "kraft":
        raise BadInput(f"reproduce runs KRaft scenarios: this one's model is --variant {first.cfg.variant}")
    options = dict(first.cfg.options)     # the preset's options with the file's over them
    given = options.get("bugs", ())
    bugs = tuple(dict.fromkeys((given,) if isinstance(given, str) else tuple(given)))
    if bugs:
        options["bugs"] = list(bugs)
    options["kafka"] = release          # the release implies its bug switches (model/kraft/bugs.py ``implied``)
    if elr != "default":
        options["elr"] = elr == "on"
    if fixes:
        from model.kraft.fixes import FIXES_OPTION

        given_fixes = options.get(FIXES_OPTION, ())
        given_fixes = (given_fixes,) if isinstance(given_fixes, str) else tuple(given_fixes)
        options[FIXES_OPTION] = list(dict.fromkeys(given_fixes + tuple(fixes)))
    base["options"] = options
    try:
        model = command_model(preset, {}, base={**base, "max_records": max(1, first.cfg.max_records_of(0))},
                              quiet=True)
    except BadInput:
        model = command_model(preset, {}, base=base, quiet=True)
    return preset, base, model, bugs + tuple(b for b in release_bugs(model, release) if b not in bugs)


def _zk_model(scenario, path: str | None = None):
    """The scenario's model when it is a ZooKeeper-mode one (explorer/cli/reproduce_zk.py runs it), else None (a
    field of the file named as such: ``scenario PATH: model.brokers``)."""
    base = dict(scenario.model)
    named = f"scenario {path}: model" if path is not None else None
    model = command_model(base.pop("preset", None), {}, base=base, quiet=True, base_name=named)
    return None if model.cfg.variant == "kraft" else model


def _steps(scenario, model) -> list:
    """The scenario's steps on the run's model. A step the scenario's own model takes but the run's leaves without
    actions is the plan's to map (realkafka/driver/plan.py ``data_path_step``: a reassignment's catch-up written
    without records is, with the data path on, the added replica's fetch); any other step out of the run's model
    is refused as parse_step says."""
    from realkafka.driver.plan import data_path_step

    own = None
    steps = []
    for number, text in enumerate(scenario.steps, start=1):
        try:
            steps.append(parse_step(model, text, number))
            continue
        except ScenarioError:
            if own is None:
                base = dict(scenario.model)
                own = command_model(base.pop("preset", None), {}, base=base, quiet=True)
            mapped = data_path_step(model, *parse_step(own, text, number))
            if mapped is None:
                raise
        steps.append(mapped)
    return steps


def _release(text: str) -> str:
    """A full release (X.Y.Z) as given (from 3.7.0 on), or X.Y as its newest patch (realkafka/cluster/release.py
    ``resolve``); bad input otherwise."""
    from realkafka.cluster.release import resolve

    try:
        return resolve(text)
    except ValueError as e:
        raise BadInput(f"--kafka {e}" if str(e).startswith(text) else f"--kafka: {e}") from None


@click.command(name="reproduce")
@click.argument("scenario_path", metavar="SCENARIO.json")
@click.option("--kafka", "kafka", required=True, metavar="VERSION",
              help="The Kafka release to run (X.Y.Z, or X.Y: its newest patch), fetched from Maven Central on "
                   "first use; the model follows it (the bug switches fixed after it are on).")
@click.option("--elr", type=click.Choice(["default", "on", "off"]), default="default", show_default=True,
              help="Eligible leader replicas (KIP-966) on the new cluster: the release's default (on from 4.1), or "
                   "forced; the model follows the same setting (docs/kraft.md, \"Eligible Leader Replicas\").")
@click.option("--json", "json_path", default=None, metavar="PATH|-", help="Write the JSON report to PATH or stdout.")
@click.option("--keep", is_flag=True, help="Keep the cluster's directory (its logs and data) and say where.")
@click.option("--plan-only", is_flag=True,
              help="Print the model side (the planned steps, holds, expected views and violation) and start no "
                   "cluster.")
@click.option("--step-timeout", type=Seconds(min=1), default=180.0, show_default=True, metavar="SECONDS",
              help="How long a step waits for the real cluster to match the model before it counts as a difference.")
@click.option("--fix", "fixes", multiple=True, metavar="NAME",
              help="A candidate fix (jbodcheck fixes) on both sides: the model with the fix, and the cluster with "
                   "the fix's patch of Kafka's code (realkafka/patches/NAME/RELEASE.diff) compiled ahead of the "
                   "release's jars; repeatable (docs/fixes.md, \"On Kafka's own code\").")
@guard_report
def reproduce_command(scenario_path, kafka, elr, json_path, keep, plan_only, step_timeout, fixes):
    """Run a KRaft scenario on a real Kafka cluster of that release and compare it with the model, step by step."""
    from model.kraft.controller import elr_enabled
    from realkafka.driver.plan import PlanError, plan, unjudged, why_unforced
    from realkafka.driver.report import plan_lines

    checked_writable(json_path)
    checked_distinct({"--json": json_path}, {"the scenario": scenario_path})
    release = _release(kafka)
    fixes = tuple(dict.fromkeys(fixes))
    patched = patch_files(fixes, release)
    try:
        scenario = load_scenario(scenario_path)
        zk = _zk_model(scenario, scenario_path)
        if zk is not None:
            if fixes:
                raise BadInput("--fix: the candidate fixes are KRaft's (model/kraft/fixes.py); this scenario is a "
                               "ZooKeeper-mode one")
            from .reproduce_zk import reproduce_zk
            return reproduce_zk(scenario_path, scenario, zk, release, keep, step_timeout, json_path, plan_only)
        preset, base, model, bugs = _kraft_model(scenario, release, elr, scenario_path, fixes)
        steps = _steps(scenario, model)
        planned = plan(model, steps)
        unfixed = None
        if fixes:        # the run without the fixes: the finding's violation, that the patched run should not show
            plain = _kraft_model(scenario, release, elr, scenario_path)[2]
            unfixed = plan(plain, _steps(scenario, plain))
    except (ScenarioError, PlanError) as e:
        raise BadInput(str(e)) from None
    if scenario.loop_start is not None and not planned.target:
        raise BadInput(f"{scenario_path}: its violation is a liveness one (the behaviour loops from step "
                       f"{scenario.loop_start} for ever) that no check of the driver judges on a real cluster "
                       "(docs/reproduce.md, 'When a violation happened'): it cannot be reproduced")
    header = [f"Reproduce {scenario_path} on Kafka {release}"] + _described(scenario, release) + [
              f"model: {model.cfg.brokers} broker(s) x {model.cfg.dirs} dirs, {model.cfg.partitions} partition(s), "
              f"RF {model.cfg.rf}; following Kafka {release} (ELR {'on' if elr_enabled(model) else 'off'}): bug "
              "switches " + (", ".join(bugs) if bugs else "none")] + fix_lines(patched, unfixed)
    common = {"scenario": scenario_path, "release": release, "elr": elr, "model_params": base, "bugs": bugs,
              "version": __version__, "fixes": fixes_report(patched, unfixed)}
    if plan_only:
        from .reproduce_report import plan_report

        emit(plan_report({**common, "settings": _non_default(model, planned)}, planned),
             "\n".join(header + plan_lines(model, planned)), json_path)
        return EXIT_OK
    unforced = why_unforced(model, steps, planned)
    if unforced is not None:
        raise BadInput(f"{scenario_path} cannot be reproduced by this harness: {unforced} (docs/reproduce.md, "
                       "'The model run the cluster follows'; --plan-only shows the plan)")
    blind = unjudged(model, steps, planned.target)
    if blind:
        raise BadInput(f"{scenario_path}: its trace violates "
                       + ", ".join(f"{i} (step {n})" for i, n in sorted(blind.items(), key=lambda x: x[1]))
                       + ", which no real-cluster check shows on its trace (docs/reproduce.md, 'When a violation "
                       "happened'): "
                       "a real run could not say whether it happened")
    return _run_on_cluster(release, elr, keep, step_timeout, json_path, header, model, common, planned, patched)


def _described(scenario, release: str) -> list[str]:
    """The scenario file's own description, with the release its text was written for (the one its model names,
    else the model's default), so that its Kafka claims do not read as this run's."""
    from model.kraft.release import NEWEST, line_of, parse

    if not scenario.description:
        return []
    named = (dict(scenario.model).get("options") or {}).get("kafka")
    written = (f"Kafka {line_of(named)}, the release its model names" if parse(named) is not None else
               f"the model's default release, Kafka {NEWEST} now: the file names none")
    return [f"The scenario's own description (written for {written}; this run follows Kafka {release}, and the "
            f"text's claims are the file's): {scenario.description}"]


def _non_default(model, planned) -> dict:
    """Every Kafka setting the run's cluster has that is not the release's default: the harness's own (realkafka/
    cluster/config.py, where the harness has them) and the model's environment (``kraft_settings``)."""
    try:
        from realkafka.cluster import non_default_settings
    except ImportError:
        return kraft_settings(model, planned)
    return non_default_settings(kraft_settings(model, planned))


def _run_on_cluster(release, elr, keep, step_timeout, json_path, header, model, common, planned, patched=()):
    """The run, its report and its exit code; a failure (exit 2 or 3) writes a report that says so (result
    "error", explorer/cli/reproduce_report.py) before its one line, so that no file at --json PATH is a previous
    run's. With ``--json -`` every line but the JSON goes to stderr."""
    from realkafka.driver.run import RunResult

    from .reproduce_report import error_report

    state = {"session": None, "logs": None, "settings": None}
    try:
        return _drive(release, elr, keep, step_timeout, json_path, header, model, common, planned, state, patched)
    except Exception as e:  # noqa: BLE001 - reported in the JSON report, then as ever (app.py main)
        if json_path is None:
            raise
        message = " ".join(e.format_message().split()) if isinstance(e, click.ClickException) else \
            " ".join(str(e).split()) if isinstance(e, JbodcheckFailure) else \
            os_error_line(e) if isinstance(e, OSError) else f"internal error: {one_line(e)}"
        code = e.exit_code if isinstance(e, click.ClickException) else 3
        session = state["session"]
        run = session.driver.result if session is not None and session.driver is not None else RunResult([])
        report = error_report({**common, "settings": state["settings"]}, planned, run, message, code,
                              str(state["logs"]) if state["logs"] else None)
        with contextlib.suppress(OutputError):   # then guard_report removes a previous run's report
            if json_path == "-":
                click.echo(json.dumps(report, indent=2))
            else:
                write_json(json_path, report, "the JSON report")
        raise


def _drive(release, elr, keep, step_timeout, json_path, header, model, common, planned, state, patched=()):
    from realkafka.driver.report import report_dict, step_lines, verdict
    from realkafka.driver.run import Driver, HarnessCannot, NodeDied, RunResult
    from realkafka.driver.session import Session, kraft_cluster
    from realkafka.driver.validate import TooManyCandidates

    try:
        from realkafka.cluster import Cluster, HarnessError, ProbeError, fetch
    except ImportError as e:
        raise JbodcheckFailure(f"the real-cluster harness (realkafka.cluster) is not available: {one_line(e)}") \
            from None
    missing = sorted(_needs(planned) - set(getattr(Cluster, "capabilities", ())))
    if missing:
        raise BadInput(f"this harness cannot drive the scenario: its KRaft cluster has no capability "
                       f"{', '.join(missing)} (docs/realkafka.md, 'Roles')")
    total = len(planned.steps) - 2
    settings = state["settings"] = _non_default(model, planned)
    to_stderr = json_path == "-"           # stdout holds the JSON report alone
    click.echo("\n".join(header + ["Kafka settings the harness sets (the release's defaults otherwise): "
                                   + ", ".join(f"{k}={v}" for k, v in sorted(settings.items()))]), err=to_stderr)
    session = None
    interrupted = None
    say = lambda line: click.echo(f"jbodcheck: {line}", err=True)      # noqa: E731

    def check_patches(cluster, _outcome):
        if jars:
            common["fixes"] = checked_patches(cluster, jars, common["fixes"])
    try:
        with signals.interruptible():
            try:
                fetch(release, log=say)
                jars = build_patches(patched, release)
                try:
                    cluster = kraft_cluster(release, model, planned, elr={"default": None, "on": True, "off": False}[elr],
                                            keep=keep, log=say, **({"patches": tuple(jars)} if jars else {}))
                except ValueError as e:
                    raise BadInput(str(e)) from None
                say(f"starting a KRaft cluster of Kafka {release}: 1 controller, {model.cfg.brokers} broker(s) x "
                    f"{model.cfg.dirs} dirs")
                session = state["session"] = Session(cluster, lambda running: Driver(
                    running, model, planned, timeout=step_timeout, still=min(45.0, step_timeout / 4),
                    echo=lambda step, prev: click.echo("\n".join(step_lines(step, prev, total)), err=to_stderr)),
                    keep=keep)
                session.run(after=check_patches)
            except HarnessCannot as e:
                raise BadInput(str(e)) from None
            except (HarnessError, ProbeError, NodeDied, TooManyCandidates) as e:
                raise harness_failure(e) from None
            finally:
                logs = state["logs"] = session.kept if session is not None else None
    except signals.INTERRUPTS as e:
        interrupted = signals.interrupt_signal(e)
    run = session.driver.result if session is not None and session.driver is not None else RunResult([])
    run.interrupted = interrupted
    text, ok, violation = verdict(planned, run, release, settings)
    text = with_fixes(text, common["fixes"], run)
    code = 128 + interrupted if interrupted is not None else (EXIT_OK if ok else EXIT_VIOLATION)
    report = report_dict(**common, plan=planned, run=run, text=text, violation=violation, exit_code=code,
                         logs=str(logs) if logs else None, settings=settings)
    emit(report, "Verdict: " + text + (f"\nThe cluster's directory is kept at {logs}" if logs else ""), json_path)
    return code


def _needs(planned) -> set:
    from realkafka.driver.mapping import DRIVEN, handler

    return {handler(s.rule).needs for s in planned.steps
            if s.rule is not None and handler(s.rule).how == DRIVEN and handler(s.rule).needs}
