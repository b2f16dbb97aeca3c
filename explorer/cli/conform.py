"""`jbodcheck conform --kafka VERSION...`: a conformance campaign (model -> real): traces generated from the model's
own rules, each driven on a fresh real KRaft cluster of the release and judged by trace validation; a report of
every trace's outcome and every rule's agreement, and a scenario file per disagreement (docs/conform.md;
realkafka/campaign/ does the work). Imported only when the command runs.

Exit codes: 0 every trace run stayed a behaviour of the model; 1 at least one left it (a disagreement: its scenario
is written); 2 bad input; 3 the harness failed on a trace and none disagreed (the campaign is incomplete);
130 / 143 interrupted (the running cluster is stopped, the report written with "result": "interrupted"; ``--resume``
runs the traces it did not finish and appends them).
"""
from __future__ import annotations

import json
import time
from pathlib import Path
from types import SimpleNamespace

import click

from explorer import __version__, signals
from explorer.errors import one_line
from realkafka.driver.session import zk_settings

from .exits import EXIT_OK, EXIT_VIOLATION, BadInput
from .outputs import checked_distinct, checked_writable, emit
from .conform_parts import _with_defaults, around_steps, campaign_parts
from .reproduce import _non_default, _release, _zk_model
from .reproduce_fix import build_patches, patch_files

EXIT_HARNESS = 3

def _model_settings(pairs) -> dict:
    """--model NAME=VALUE pairs: VALUE is JSON, else text."""
    out = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        if not sep or not name.strip():
            raise BadInput(f"--model takes NAME=VALUE, not {pair!r}")
        try:
            out[name.strip()] = json.loads(text)
        except ValueError:
            out[name.strip()] = text
    return out


@click.command(name="conform")
@click.option("--kafka", "kafka", multiple=True, metavar="VERSION",
              help="A Kafka release to run (X.Y.Z, or X.Y: its newest patch); repeatable: traces are dealt "
                   "round-robin over the releases. Required but with --resume.")
@click.option("--preset", default="kraft-tiny", show_default=True, metavar="NAME",
              help="The preset whose rules the traces walk (its features and cluster): a KRaft one, or a --variant "
                   "kip112 one for ZooKeeper-mode clusters of Kafka 3.x (docs/reproduce-zk.md, \"Campaigns\").")
@click.option("--model", "model_set", multiple=True, metavar="NAME=VALUE",
              help="A model setting over the preset's, as a scenario file's \"model\" holds it (VALUE is JSON, "
                   "else text), e.g. deletion=true; repeatable.")
@click.option("--traces", type=click.IntRange(min=1), default=10, show_default=True, metavar="N",
              help="How many traces in all.")
@click.option("--length", type=click.IntRange(min=1), default=6, show_default=True, metavar="N",
              help="At most this many driven steps per trace.")
@click.option("--mode", type=click.Choice(["model", "real", "both"]), default="both", show_default=True,
              help="model: traces generated from the model (model -> real); real: random faults and a workload at "
                   "the cluster's own timing, nothing held (real -> model); both: alternating.")
@click.option("--faults", type=click.IntRange(min=0), default=5, show_default=True, metavar="N",
              help="Actions (faults, produce, consume) per real -> model run.")
@click.option("--shrink", "shrink_budget", type=click.IntRange(min=0), default=4, show_default=True, metavar="RUNS",
              help="Shrink each disagreement of a generated trace with at most this many more runs (dropping driven "
                   "steps while it still disagrees); 0: keep it whole.")
@click.option("--parallel", type=click.IntRange(min=1, max=8), default=1, show_default=True, metavar="K",
              help="Run K traces at once, each on its own cluster (a waiting cluster costs 2 to 3% CPU per JVM).")
@click.option("--kafka-timers", is_flag=True,
              help="Run the clusters with Kafka's default heartbeat, session, ISR-lag and checkpoint timers instead "
                   "of the harness's shorter ones (slower; the verdict lists the settings either way).")
@click.option("--kafka-defaults", is_flag=True,
              help="As --kafka-timers, and with Kafka's own preferred-leader balancing (auto.leader.rebalance."
                   "enable=true) and dir-failure shutdown timeout (log.dir.failure.timeout.ms, 30 s from 3.8) in "
                   "place of the harness's (off, an hour): what either makes Kafka do that the model lacks is a "
                   "disagreement, not hidden.")
@click.option("--seed", type=int, default=0, show_default=True, metavar="N", help="The walks' random seed.")
@click.option("--out", "out", default="conform-out", show_default=True, metavar="DIR",
              help="Where the scenario file of every disagreeing or refused trace is written.")
@click.option("--json", "json_path", default=None, metavar="PATH|-", help="Write the JSON report to PATH or stdout.")
@click.option("--step-timeout", type=click.FloatRange(min=1), default=120.0, show_default=True, metavar="SECONDS",
              help="The longest a step waits for the real cluster.")
@click.option("--fix", "fixes", multiple=True, metavar="NAME",
              help="A candidate fix on both sides, as reproduce --fix: the model with the fix, and every cluster "
                   "with the fix's patch of Kafka's code ahead of the release's jars; repeatable.")
@click.option("--format-each", is_flag=True,
              help="Format every cluster with the release's storage tool instead of copying a tree formatted once "
                   "(the same dirs, fresh ids; docs/conform.md, \"The cost of a trace\").")
@click.option("--no-class-sharing", is_flag=True,
              help="Start the nodes' JVMs without the class-data sharing archive of their kind (slower starts; "
                   "docs/conform.md, \"The cost of a trace\").")
@click.option("--spark", "spark", is_flag=True,
              help="Run each trace as a Spark task (pyspark), on a loopback cluster of its executor's own; "
                   "--parallel traces in flight (docs/conform.md, \"On Spark\").")
@click.option("--master", default=None, metavar="URL",
              help="With --spark: Spark's master (local[N], spark://HOST:PORT, ...; default local[*]).")
@click.option("--around", "around", multiple=True, metavar="SCENARIO.json",
              help="Make the model traces mutations of this scenario's (a finding's) trace: a step dropped, two "
                   "adjacent steps swapped, or a fault the model enables inserted; walks once none is left. The "
                   "scenario's model must be the campaign's (--preset, --model); repeatable (docs/conform.md, "
                   "\"Around a finding\").")
@click.option("--resume", "resume_path", default=None, metavar="REPORT.json",
              help="Resume the interrupted campaign of this JSON report: the traces it did not finish run with its "
                   "options, and the report (or --json) is written with them all.")
def conform_command(kafka, preset, model_set, traces, length, mode, faults, shrink_budget, parallel, kafka_timers,
                    kafka_defaults, seed, out, json_path, step_timeout, fixes, format_each, no_class_sharing, spark,
                    master, around, resume_path):
    """Drive traces generated from the model on real Kafka clusters and judge each by the model."""
    from realkafka.campaign.campaign import check_resumable, report_dict, run_campaign
    from realkafka.campaign.resume import ResumeMismatch

    resumed, before_s, resumed_count = None, 0.0, 0
    if resume_path is not None:
        resumed, params, before_s, resumed_count = _resumed(resume_path)
        given = dict(kafka=list(dict.fromkeys(_release(k) for k in kafka)) if kafka else None, preset=preset,
                     seed=seed, length=length, mode=mode, faults=faults, traces_planned=traces,
                     shrink=shrink_budget, step_timeout=step_timeout, kafka_timers=kafka_timers,
                     kafka_defaults=kafka_defaults, out=str(Path(out).resolve()), format_each=format_each, no_class_sharing=no_class_sharing,
                     fixes=list(dict.fromkeys(fixes)), around=list(around) or None)
        _same_as_report(resume_path, params, given)
        kafka, preset, seed, length, mode, faults = (params[k] for k in ("kafka", "preset", "seed", "length", "mode",
                                                                          "faults"))
        traces, shrink_budget, step_timeout = params["traces_planned"], params["shrink"], params["step_timeout"]
        kafka_timers, out, format_each = params["kafka_timers"], params["out"], params["format_each"]
        no_class_sharing, fixes = params["no_class_sharing"], params["fixes"]
        kafka_defaults, around = params["kafka_defaults"], tuple(params["around"])
        if model_set:
            raise BadInput(f"--resume {resume_path}: the campaign keeps its own model settings; give no --model")
        model_set = params["model"]     # the report's model settings, as --model gave them
        json_path = json_path or resume_path
    elif not kafka:
        raise BadInput("conform needs --kafka VERSION (or --resume REPORT.json)")
    if master is not None and not spark:
        raise BadInput("--master is a Spark option: give --spark too")
    fixes = tuple(dict.fromkeys(fixes))
    given = {"preset": preset, **(model_set if isinstance(model_set, dict) else _model_settings(model_set))}
    zk = _zk_model(SimpleNamespace(model=given))
    if zk is not None and (fixes or spark or resume_path or kafka_defaults or around):
        raise BadInput("a ZooKeeper-mode campaign (preset " + preset + ") takes none of --fix, --spark, --resume, "
                       "--kafka-defaults and --around yet")
    if around and mode == "real":
        raise BadInput("--around mutates the model's traces: give --mode model or both, not real")
    if resume_path is not None and resumed_controller(resume_path) == "zookeeper":
        raise BadInput(f"--resume {resume_path}: a ZooKeeper-mode campaign cannot be resumed yet")
    if fixes and spark:
        raise BadInput("--fix with --spark: a Spark executor does not build the patched jars yet; run without --spark")
    checked_writable(json_path)
    checked_distinct({"--json": json_path, "--out": out})
    releases = list(dict.fromkeys(_release(k) for k in kafka))
    out_dir = Path(out)
    if out_dir.exists() and not out_dir.is_dir():
        raise BadInput(f"--out {out}: not a directory")
    patched = {release: patch_files(fixes, release) for release in releases}
    jars: dict = {}   # release -> the fixes' patch jars, built once the releases are fetched
    models, start_cluster, cluster_has = campaign_parts(preset, releases, kafka_timers=kafka_timers,
                                                        kafka_defaults=kafka_defaults, format_each=format_each,
                                                        no_class_sharing=no_class_sharing, fixes=fixes, jars=jars,
                                                        given=given, zk=zk)
    mutated = around_steps(around, models, fixes) if around else None
    engine = None
    if zk is not None:
        from realkafka.campaign.zk import ENGINE as engine
    from realkafka.cluster import JVM_OPTIONS, KAFKA_TIMERS, fetch

    timers = dict(KAFKA_TIMERS) if kafka_timers or kafka_defaults else {}
    # a walk drives no BrokerDirFailureTimeout, so every trace's cluster sets the dir-failure timeout beyond the run
    # (unless --kafka-defaults keeps Kafka's)
    settings = ({**zk_settings(zk), **timers} if zk is not None else
                _with_defaults({**_non_default(models[releases[0]][0], SimpleNamespace(dir_failure_timeout=False)),
                                **timers}, kafka_defaults))
    if resumed is not None:
        try:
            check_resumable(resumed, releases=releases, model_of=lambda r: models[r][0],
                            cluster_has=cluster_has, traces=traces, seed=seed, length=length,
                            mode=mode, engine=engine, around=mutated)
        except ResumeMismatch as e:
            raise BadInput(f"--resume: {e}") from None
    harness = _harness(format_each, no_class_sharing, JVM_OPTIONS)
    if zk is not None:
        harness = {"formatted_copy": False, "class_sharing": False, "jvm_options": list(JVM_OPTIONS),
                   "says": "ZooKeeper-mode clusters (a ZooKeeper server and the brokers), each started afresh; JVM "
                           "options " + " ".join(JVM_OPTIONS)}
    click.echo(f"jbodcheck conform: {traces} trace(s) of preset {preset} (at most {length} driven steps each, seed "
               f"{seed}) on Kafka {', '.join(releases)}"
               + (f" with the fix(es) {', '.join(fixes)} in the model and patched into Kafka" if fixes else "")
               + (f", the model traces mutations of {', '.join(around)} while any is left" if around else "")
               + (f", resuming {resume_path} ({len(resumed.traces)} done)" if resumed is not None else "")
               + "; Kafka settings the harness sets (the release's defaults otherwise): "
               + ", ".join(f"{k}={v}" for k, v in sorted(settings.items())) + "; harness: " + harness["says"], err=True)
    start = time.monotonic()
    campaign, interrupted, runner = None, None, None
    holder = {}
    try:
        with signals.interruptible():
            if spark:
                runner = _spark_runner(dict(
                    preset=preset, releases=releases, kafka_timers=kafka_timers, kafka_defaults=kafka_defaults,
                    format_each=format_each,
                    no_class_sharing=no_class_sharing, step_timeout=step_timeout, shrink=shrink_budget,
                    faults=faults, out=str(out_dir.resolve()), seed=seed), master)
            for release in releases:
                fetch(release, log=lambda line: click.echo(f"jbodcheck: {line}", err=True))
                jars[release] = build_patches(patched[release], release)
            campaign = run_campaign(
                releases=releases, model_of=lambda r: models[r][0], start_cluster=start_cluster, traces=traces,
                seed=seed, length=length, out=out_dir, cluster_has=cluster_has,
                step_timeout=step_timeout, echo=lambda line: click.echo(f"jbodcheck: {line}", err=True),
                model_params=lambda r: models[r][1], holder=holder, mode=mode, faults=faults,
                shrink_budget=shrink_budget, parallel=parallel, resumed=resumed, runner=runner, engine=engine,
                around=mutated)
    except signals.INTERRUPTS as e:
        interrupted = signals.interrupt_signal(e)
        campaign = holder.get("campaign")
    finally:
        if runner is not None:
            runner.stop()
    if campaign is None:
        from realkafka.campaign.campaign import Campaign
        campaign = resumed if resumed is not None else Campaign()
    counts = campaign.outcomes()
    if interrupted is not None:
        code = 128 + interrupted
    elif counts.get("disagrees"):
        code = EXIT_VIOLATION
    elif counts.get("harness"):
        code = EXIT_HARNESS
    else:
        code = EXIT_OK
    report = report_dict(campaign, releases=releases, seed=seed, length=length, preset=preset, settings=settings,
                         version=__version__, elapsed_s=before_s + time.monotonic() - start, exit_code=code)
    report.update(mode=mode, faults=faults, traces_planned=traces, shrink=shrink_budget, step_timeout=step_timeout,
                  kafka_timers=kafka_timers, kafka_defaults=kafka_defaults, out=str(out_dir.resolve()), format_each=format_each,
                  no_class_sharing=no_class_sharing, harness=harness,
                  resumed=(resumed_count + 1) if resume_path is not None else 0)
    report["controller"] = "zookeeper" if zk is not None else "kraft"
    report["around"] = list(around)
    if model_set:
        report["model"] = given
    report["fixes"] = [{"fix": fix, "patches": {r: str(patch) for r in releases for f, patch, _ in patched[r]
                                                 if f == fix}} for fix in fixes]
    report["result"] = "interrupted" if interrupted is not None else (
        "disagreement" if counts.get("disagrees") else "incomplete" if counts.get("harness") else "conforms")
    lines = [f"Campaign: {len(campaign.traces)} trace(s) on Kafka {', '.join(releases)}: "
             + ", ".join(f"{counts.get(o, 0)} {o}" for o in ("matched", "conforms", "disagrees", "refused",
                                                              "harness"))]
    for t in campaign.traces:
        if t.kind == "real" and t.violations:
            lines.append(f"  trace {t.number} ({t.release}, random faults): the real cluster showed "
                         f"{', '.join(t.violations)} (a finding candidate): {t.says}")
        if t.outcome in ("disagrees", "harness"):
            lines.append(f"  trace {t.number} ({t.release}) {t.outcome}: {t.says}"
                         + (f" [{t.scenario}]" if t.scenario else "")
                         + (f"; shrunk to {len(t.shrunk)} steps in {t.shrink_runs} run(s)" if t.shrunk else ""))
    lines.append("Rules (driven/agreed, observed/agreed per release): " + "; ".join(
        f"{rule} " + ", ".join(f"{r} {c['driven']}/{c['driven_agreed']} {c['observed']}/{c['observed_agreed']}"
                               for r, c in sorted(by.items()))
        for rule, by in sorted(campaign.rules.items())))
    emit(report, "\n".join(lines), json_path)
    return code


def _spark_runner(params: dict, master: str | None):
    from spark_explore.options import SparkSetupError, check_master

    from .conform_spark import SparkRunner

    try:
        if master is not None:
            check_master(master)
        return SparkRunner(params, master)
    except SparkSetupError as e:
        raise BadInput(f"--spark: {e}") from None


def resumed_controller(path: str) -> str:
    """The controller mode of the campaign a report describes ("kraft" when it does not say, or cannot be read:
    _resumed then says why)."""
    try:
        with open(path) as f:
            return json.load(f).get("controller", "kraft")
    except (OSError, ValueError, AttributeError):
        return "kraft"


def _resumed(path: str):
    """(the campaign, its parameters, its seconds so far, how often it was resumed) of an interrupted campaign's
    report; bad input (exit 2) when it is none."""
    from realkafka.campaign.campaign import OUTCOMES, campaign_from_report
    from realkafka.campaign.resume import ResumeMismatch, resumable

    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        raise BadInput(f"--resume {path}: {one_line(e)}") from None
    try:
        params = resumable(data, path)
        params["fixes"] = [f["fix"] for f in data.get("fixes") or []]
        params["kafka_defaults"] = bool(data.get("kafka_defaults"))
        params["around"] = list(data.get("around") or [])
        params["model"] = {k: v for k, v in (data.get("model") or {}).items() if k != "preset"}
        campaign = campaign_from_report(data)
        if any(t.outcome not in OUTCOMES for t in campaign.traces):
            raise ResumeMismatch(f"{path}: a trace's outcome is none of {', '.join(OUTCOMES)}")
        return campaign, params, float(data.get("elapsed_s") or 0.0), int(data.get("resumed") or 0)
    except ResumeMismatch as e:
        raise BadInput(f"--resume: {e}") from None
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise BadInput(f"--resume {path}: a damaged report ({one_line(e)})") from None


def _same_as_report(path: str, params: dict, given: dict) -> None:
    """An option given with --resume must be the report's (bad input otherwise): the seed fixes the traces only with
    the same options."""
    ctx = click.get_current_context()
    names = {"kafka": "kafka", "traces_planned": "traces", "shrink": "shrink_budget"}
    for key, value in given.items():
        option = names.get(key, key)
        if ctx.get_parameter_source(option) != click.core.ParameterSource.COMMANDLINE or value is None:
            continue
        if value != params[key]:
            flag = "--" + {"traces_planned": "traces", "shrink": "shrink"}.get(key, key).replace("_", "-")
            raise BadInput(f"--resume {path}: the campaign ran with {flag} {params[key]!r}, not {value!r}")


def _harness(format_each: bool, no_class_sharing: bool, jvm_options: list) -> dict:
    """What the harness does that is not a Kafka setting, for the report (docs/conform.md, "The cost of a trace")."""
    copy, sharing = not format_each, not no_class_sharing
    return {"formatted_copy": copy, "class_sharing": sharing, "jvm_options": list(jvm_options),
            "says": ("each cluster's dirs are a copy of a tree formatted once by the release's storage tool, with "
                     "fresh cluster and directory ids" if copy else "each cluster formatted by the release's storage "
                     "tool") + ("; the nodes' JVMs map a class-data sharing archive of their kind (-XX:SharedArchive"
                                "File; the first cluster of a release writes it)" if sharing else "")
                    + "; JVM options " + " ".join(jvm_options)}
