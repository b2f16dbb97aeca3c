"""`jbodcheck reproduce SCENARIO --kafka 3.x` for a ZooKeeper-mode scenario (``--variant kip112``): the scenario
on a real ZooKeeper-mode cluster of that release, each driven step's planned view beside the real one, judged by
trace validation (realkafka/driver/zk/, docs/reproduce-zk.md). Exit codes as reproduce's (explorer/cli/reproduce.py).
"""
from __future__ import annotations

import click

from explorer import __version__, signals
from explorer.errors import JbodcheckFailure, one_line
from explorer.scenario import ScenarioError, parse_step
from realkafka.driver.session import zk_settings

from .exits import EXIT_OK, EXIT_VIOLATION, BadInput
from .outputs import emit
from .harness_failure import harness_failure

# The ZooKeeper-mode designs Kafka never shipped, and the one whose difference a real Kafka cannot show.
UNSHIPPED = "a design Kafka never shipped (only --variant kip112 is KIP-112 as Kafka 1.0 to 3.9 implement it)"
NO_ISNEW = ("Kafka has the isNewReplica check, so a real run cannot show what kip112-no-isnew-check changes: "
            "run it as --variant kip112")


def zk_variant(model) -> bool:
    """The model is a ZooKeeper-mode one (every design but kraft)."""
    return model.cfg.variant != "kraft"


def refusal(model, release: str) -> str | None:
    """Why a real ZooKeeper-mode cluster of ``release`` cannot judge this model, or None."""
    if model.cfg.variant == "kip112-no-isnew-check":
        return NO_ISNEW
    if model.cfg.variant == "pre-kip112":
        return ("its model is --variant pre-kip112, the broker before KIP-112 (Kafka before 1.0), which the harness "
                "does not run (it runs 3.7.0 and later)")
    if model.cfg.variant != "kip112":
        return f"its model is --variant {model.cfg.variant}, {UNSHIPPED}: no real cluster can judge it"
    if model.cfg.reassignment and model.cfg.reassignment_procedure != "kafka-2.7":
        return (f"its model reassigns by Kafka 1.0's procedure (reassignment_procedure "
                f"{model.cfg.reassignment_procedure}); Kafka 2.4 and later, {release} included, run KIP-455's with "
                "KAFKA-10314's fix (KafkaController.onPartitionReassignment): a model with "
                "\"reassignment_procedure\": \"kafka-2.7\" is its reading (docs/reproduce-zk.md)")
    return None


def release_refusal(release: str) -> str | None:
    if release.split(".")[0] != "3":
        return (f"--kafka {release}: Kafka 4.0 and later have no ZooKeeper mode; a --variant kip112 model runs on "
                "3.x (e.g. --kafka 3.9.2)")
    return None


def zk_conform_model(model, release: str):
    """A conform campaign's ZooKeeper-mode model (BadInput where a real cluster cannot judge it, or where its
    features have rules the harness cannot drive: KIP-928's saturation)."""
    why = refusal(model, release)
    if why is None and model.cfg.saturation:
        why = ("its model has KIP-928's saturation, which Kafka never shipped (a full disk is a dir failure in "
               f"{release}): no real cluster can judge it")
    if why is not None:
        raise BadInput(f"--preset: {why}")
    if release_refusal(release):
        raise BadInput(release_refusal(release))
    return model


def reproduce_zk(scenario_path, scenario, model, release, keep, step_timeout, json_path, plan_only) -> int:
    from realkafka.driver.mapping import NOT_REPRODUCIBLE
    from realkafka.driver.zk.mapping import handler

    why = refusal(model, release)
    if why is not None:
        raise BadInput(f"{scenario_path}: {why}")
    if release_refusal(release):
        raise BadInput(release_refusal(release))
    try:
        steps = [parse_step(model, text, n) for n, text in enumerate(scenario.steps, start=1)]
    except ScenarioError as e:
        raise BadInput(str(e)) from None
    for n, (rule, _) in enumerate(steps, start=1):
        try:
            h = handler(rule)
        except KeyError:
            raise BadInput(f"{scenario_path}: step {n} {rule} has no mapping onto a real cluster") from None
        if h.how == NOT_REPRODUCIBLE:
            raise BadInput(f"{scenario_path} cannot be reproduced by this harness: step {n} {rule}: {h.says} "
                           "(docs/reproduce-zk.md)")
    header = [f"Reproduce {scenario_path} on Kafka {release} in ZooKeeper mode",
              f"model: --variant kip112, {model.cfg.brokers} broker(s) x {model.cfg.dirs} dirs, "
              f"{model.cfg.partitions} partition(s), RF {model.cfg.rf}"]
    if scenario.description:
        header.append(f"The scenario's own description (its claims are the file's): {scenario.description}")
    if plan_only:
        click.echo("\n".join(header + [f"step {n}: {model.rule(r).label(a)} ({handler(r).how})"
                                       for n, (r, a) in enumerate(steps, start=1)]))
        return EXIT_OK
    return _run(scenario_path, release, keep, step_timeout, json_path, header, model, steps)


def _lines(step) -> list[str]:
    out = [f"step {step.number}: {step.label}" + (f" ({step.says})" if step.says else "")]
    width = max([len(x) for x in step.planned] + [len("model (the scenario's path)")])
    out.append(f"  {'model (the scenario' + chr(39) + 's path)':<{width}} | real")
    for i in range(max(len(step.planned), len(step.real))):
        left = step.planned[i] if i < len(step.planned) else ""
        right = step.real[i] if i < len(step.real) else ""
        out.append(f"  {left:<{width}} | {right}")
    mark = ("the cluster's own steps would change the scenario's view here (its next driven step comes first): "
            "not compared"
            if not step.compared else "matches the scenario" if not step.differences
            else "differs from the scenario: " + "; ".join(step.differences))
    out.append(f"  -> {'a state of the model' if step.valid else 'NOT a state of the model'}; {mark}")
    return out


def _run(scenario_path, release, keep, step_timeout, json_path, header, model, steps) -> int:
    from realkafka.driver.session import Session, zk_cluster
    from realkafka.driver.zk.mapping import handler
    from realkafka.driver.zk.run import NodeDied, ZkDriver, ZkRunResult

    try:
        from realkafka.cluster import HarnessError, ProbeError, ZkCluster, fetch
    except ImportError as e:
        raise JbodcheckFailure(f"the real-cluster harness (realkafka.cluster) is not available: {one_line(e)}") \
            from None
    missing = sorted({handler(rule).needs for rule, _ in steps if handler(rule).needs}
                     - set(getattr(ZkCluster, "capabilities", ())))
    if missing:
        raise BadInput(f"this harness cannot drive the scenario: its ZooKeeper-mode cluster has no capability "
                       f"{', '.join(missing)} (docs/realkafka.md, 'Roles')")
    settings = zk_settings(model)
    click.echo("\n".join(header + ["Kafka settings the run sets beside the harness's (docs/realkafka.md): "
                                   + ", ".join(f"{k}={v}" for k, v in sorted(settings.items()))]))
    session, interrupted = None, None
    say = lambda line: click.echo(f"jbodcheck: {line}", err=True)      # noqa: E731
    try:
        with signals.interruptible():
            try:
                fetch(release, log=say)
                cluster = zk_cluster(release, model, settings=settings, keep=keep, log=say)
                say(f"starting a ZooKeeper-mode cluster of Kafka {release}: ZooKeeper and {model.cfg.brokers} "
                    f"broker(s) x {model.cfg.dirs} dirs")
                session = Session(cluster, lambda running: ZkDriver(
                    running, model, steps, timeout=step_timeout, echo=lambda step: click.echo("\n".join(_lines(step)))),
                    keep=keep)
                session.run()
            except (HarnessError, ProbeError, NodeDied) as e:
                raise harness_failure(e) from None
            except ValueError as e:
                raise BadInput(str(e)) from None
    except signals.INTERRUPTS as e:
        interrupted = signals.interrupt_signal(e)
    logs = session.kept if session is not None else None
    run = session.driver.result if session is not None and session.driver is not None else ZkRunResult()
    if interrupted is not None:
        text = f"interrupted (signal {interrupted}) after {len(run.steps)} driven step(s)"
        code = 128 + interrupted
    elif run.matched:
        compared = sum(s.compared for s in run.steps)
        text = (f"matched: Kafka {release} in ZooKeeper mode showed, after each of the {len(run.steps)} driven "
                "steps, a state of the model, and the scenario's own view "
                + ("at each" if compared == len(run.steps) else
                   f"at the {compared} where it can be compared"))
        code = EXIT_OK
    elif run.left_model:
        text = f"differs: the real cluster left the model at {run.left_model}"
        code = EXIT_VIOLATION
    else:
        off = [s for s in run.steps if s.differences]
        text = (f"differs from the scenario: every view was a state of the model, but the real cluster took another "
                f"path than the scenario's at step {off[0].number} ({'; '.join(off[0].differences)})")
        code = EXIT_VIOLATION
    result = ("interrupted" if interrupted is not None else "matched" if run.matched
              else "left the model" if run.left_model else "another path")
    # the KRaft report's common keys (realkafka/driver/report.py), with "mode" naming the cluster's
    report = {"tool": "jbodcheck", "command": "reproduce", "version": __version__, "mode": "zookeeper",
              "scenario": scenario_path, "kafka": release, "settings": settings, "result": result,
              "disagreement": run.left_model, "verdict": text, "exit_code": code, "logs": str(logs) if logs else None,
              "steps": [{"step": s.number, "action": s.label, "expected": s.planned, "observed": s.real,
                         "conforms": s.valid, "compared": s.compared, "differences": s.differences,
                         "says": s.says} for s in run.steps]}
    emit(report, "Verdict: " + text + (f"\nThe cluster's directory is kept at {logs}" if logs else ""), json_path)
    return code
