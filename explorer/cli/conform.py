"""`jbodcheck conform --kafka VERSION...`: a conformance campaign (model -> real): traces generated from the model's
own rules, each driven on a fresh real KRaft cluster of the release and judged by trace validation; a report of
every trace's outcome and every rule's agreement, and a scenario file per disagreement (docs/conform.md;
realkafka/campaign/ does the work). Imported only when the command runs.

Exit codes: 0 every trace run stayed a behaviour of the model; 1 at least one left it (a disagreement: its scenario
is written); 2 bad input; 3 the harness failed on a trace and none disagreed (the campaign is incomplete);
130 / 143 interrupted (the running cluster is stopped, the report written with "result": "interrupted").
"""
from __future__ import annotations

import json
import time
from pathlib import Path
from types import SimpleNamespace

import click

from explorer import __version__, signals
from explorer.errors import JbodcheckFailure, one_line

from .exits import EXIT_OK, EXIT_VIOLATION, BadInput
from .outputs import checked_distinct, checked_writable, emit
from .reproduce import _format_at, _kraft_model, _non_default, _release, _settings, _zk_model
from .reproduce_zk import zk_conform_model, zk_settings


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

EXIT_HARNESS = 3


@click.command(name="conform")
@click.option("--kafka", "kafka", required=True, multiple=True, metavar="VERSION",
              help="A Kafka release to run (X.Y.Z, or X.Y: its newest patch); repeatable: traces are dealt "
                   "round-robin over the releases.")
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
@click.option("--seed", type=int, default=0, show_default=True, metavar="N", help="The walks' random seed.")
@click.option("--out", "out", default="conform-out", show_default=True, metavar="DIR",
              help="Where the scenario file of every disagreeing or refused trace is written.")
@click.option("--json", "json_path", default=None, metavar="PATH|-", help="Write the JSON report to PATH or stdout.")
@click.option("--step-timeout", type=click.FloatRange(min=1), default=120.0, show_default=True, metavar="SECONDS",
              help="The longest a step waits for the real cluster.")
def conform_command(kafka, preset, model_set, traces, length, mode, faults, shrink_budget, parallel, kafka_timers,
                    seed, out, json_path, step_timeout):
    """Drive traces generated from the model on real Kafka clusters and judge each by the model."""
    from realkafka.campaign.campaign import report_dict, run_campaign

    checked_writable(json_path)
    checked_distinct({"--json": json_path, "--out": out})
    releases = list(dict.fromkeys(_release(k) for k in kafka))
    out_dir = Path(out)
    if out_dir.exists() and not out_dir.is_dir():
        raise BadInput(f"--out {out}: not a directory")
    given = {"preset": preset, **_model_settings(model_set)}
    zk = _zk_model(SimpleNamespace(model=given))
    models = {}
    for release in releases:
        if zk is not None:
            models[release] = (zk_conform_model(zk, release), given)
            continue
        _, base, model, _ = _kraft_model(SimpleNamespace(model=given), release)
        models[release] = (model, {"preset": preset, **base})
    try:
        from realkafka.cluster import KAFKA_TIMERS, Cluster, ClusterSpec, fetch
        if zk is not None:
            from realkafka.cluster import ZkCluster
            from realkafka.campaign.zk import ENGINE as ZK_ENGINE
    except ImportError as e:
        raise JbodcheckFailure(f"the real-cluster harness (realkafka.cluster) is not available: {one_line(e)}") \
            from None

    def start_cluster(model, planned):
        release = next(r for r, (m, _) in models.items() if m is model)
        if zk is not None:
            return ZkCluster(ClusterSpec(release=release, brokers=model.cfg.brokers, dirs=model.cfg.dirs,
                                         settings={**zk_settings(model), **timers}, keep=False),
                             log=lambda line: None)
        spec = ClusterSpec(release=release, brokers=model.cfg.brokers, dirs=model.cfg.dirs, elr=None,
                           settings={**_settings(model, planned), **timers}, keep=False, **_format_at(model))
        return Cluster(spec, log=lambda line: None)

    timers = dict(KAFKA_TIMERS) if kafka_timers else {}
    # a walk drives no BrokerDirFailureTimeout, so every trace's cluster sets the dir-failure timeout beyond the run
    settings = ({**zk_settings(zk), **timers} if zk is not None else
                {**_non_default(models[releases[0]][0], SimpleNamespace(dir_failure_timeout=False)), **timers})
    click.echo(f"jbodcheck conform: {traces} trace(s) of preset {preset} (at most {length} driven steps each, seed "
               f"{seed}) on Kafka {', '.join(releases)}; Kafka settings the harness sets (the release's defaults "
               "otherwise): " + ", ".join(f"{k}={v}" for k, v in sorted(settings.items())), err=True)
    start = time.monotonic()
    campaign, interrupted = None, None
    holder = {}
    try:
        with signals.interruptible():
            for release in releases:
                fetch(release, log=lambda line: click.echo(f"jbodcheck: {line}", err=True))
            campaign = run_campaign(
                releases=releases, model_of=lambda r: models[r][0], start_cluster=start_cluster, traces=traces,
                seed=seed, length=length, out=out_dir, cluster_has=lambda m: hasattr(Cluster, m),
                step_timeout=step_timeout, echo=lambda line: click.echo(f"jbodcheck: {line}", err=True),
                model_params=lambda r: models[r][1], holder=holder, mode=mode, faults=faults,
                shrink_budget=shrink_budget, parallel=parallel, engine=ZK_ENGINE if zk is not None else None)
    except signals.INTERRUPTS as e:
        interrupted = signals.interrupt_signal(e)
        campaign = holder.get("campaign")
    if campaign is None:
        from realkafka.campaign.campaign import Campaign
        campaign = Campaign()
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
                         version=__version__, elapsed_s=time.monotonic() - start, exit_code=code)
    report["mode"], report["faults"] = mode, faults
    report["controller"] = "zookeeper" if zk is not None else "kraft"
    if model_set:
        report["model"] = given
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
