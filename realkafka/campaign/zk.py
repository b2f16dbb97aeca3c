"""The ZooKeeper-mode parts of a conformance campaign (docs/reproduce-zk.md, "Campaigns"): how a generated trace's
cluster steps follow a driven one, how a trace is driven and judged (the ZooKeeper-mode driver, run.py), and a
random-fault run (real -> model). The campaign itself, the choice of traces, the loop, the counts, the scenario
files and the report, is realkafka/campaign's, given ``ENGINE``.
"""
from __future__ import annotations

import random
import time
from types import SimpleNamespace

from realkafka.driver.mapping import DRIVEN
from realkafka.driver.run import NodeDied as KraftNodeDied
from realkafka.driver.session import Session
from realkafka.driver.zk import run
from realkafka.driver.zk.mapping import awaited_steps, handler
from realkafka.driver.zk.run import NodeDied, RunLeftModel, ZkDriver

from .campaign import TraceResult, _harness_failed, write_trace
from .generate import labels
from .shrink import shrink

MAX_OWN_STEPS = 400       # the cluster's own steps after one driven step, at most (the model's settle)


def drivable(model, cluster_has=lambda capability: True) -> list[tuple]:
    """(rule, args) of every action the harness drives on a ZooKeeper-mode cluster (whose harness capability the
    cluster kind declares, ``cluster_has``: realkafka/cluster/roles.py)."""
    return [(rule, args) for _, rule, args in model.action_space if handler(rule.name).how == DRIVEN
            and (handler(rule.name).needs is None or cluster_has(handler(rule.name).needs))]


class ZkBehaviour:
    """A behaviour of the ZooKeeper-mode model being built: driven steps, each followed by the cluster's own steps
    (the awaited rules, the timed one too: Kafka takes it once its timer runs out) until none is enabled, the first
    enabled in the action space's order each time (the driver accepts any order: trace validation)."""

    def __init__(self, model):
        self.model = model
        self.own = awaited_steps(model)
        self.steps: list[tuple] = []
        self.state = model.init_states()[0]
        self._settle()

    def _settle(self) -> None:
        for _ in range(MAX_OWN_STEPS):
            for rule, args in self.own:
                if rule.guard(self.model, self.state, *args) is None:
                    _, nxt = self.model.step(self.state, rule.name, args)
                    if nxt != self.state:
                        self.state = nxt
                        self.steps.append((rule.name, tuple(args)))
                        break
            else:
                return
        raise RuntimeError(f"the model's own steps did not settle within {MAX_OWN_STEPS} steps")

    def enabled(self, rule, args) -> bool:
        return rule.guard(self.model, self.state, *args) is None

    def accepts_a_move(self, rule, args) -> bool:
        return False        # no answer window: ZooKeeper mode has no AssignReplicasToDirs

    def take(self, rule, args, hold_answer: bool = False) -> None:
        _, self.state = self.model.step(self.state, rule.name, args)
        self.steps.append((rule.name, tuple(args)))
        self._settle()


def _tally(release: str, run) -> list:
    """(rule, release, what) per count a trace's run adds: each driven step taken, each awaited step the scenario
    lists before a view the cluster showed; agreed where that view was a settled state of the model."""
    out = []
    for step in run.steps:
        rule = step.label.split("(", 1)[0]
        out.append((rule, release, "driven"))
        if step.valid:
            out.append((rule, release, "driven_agreed"))
        for label in step.own:
            out.append((label.split("(", 1)[0], release, "observed"))
            if step.valid:
                out.append((label.split("(", 1)[0], release, "observed_agreed"))
    return out


def _run(start_cluster, model, steps, step_timeout):
    with start_cluster(model, None) as cluster:
        return ZkDriver(cluster, model, steps, timeout=step_timeout).run()


def model_trace(job, model, start_cluster, step_timeout, shrink_budget, actions, out, seed, model_params):
    result = TraceResult(job.number, job.release, labels(model, job.steps), "refused")
    tally: list = []
    start = time.monotonic()
    try:
        run = _run(start_cluster, model, job.steps, step_timeout)
        tally = _tally(job.release, run)
        if run.left_model is not None:
            result.outcome, result.says = "disagrees", run.left_model
            if shrink_budget:
                small, result.shrink_runs = shrink(
                    model, job.steps, actions,
                    lambda trace: _run(start_cluster, model, trace, step_timeout).left_model is not None,
                    shrink_budget, ZkBehaviour)
                result.shrunk = labels(model, small)
        else:
            result.outcome = "matched" if run.matched else "conforms"
            result.says = "every observation a settled state of the model"
    except Exception as e:  # noqa: BLE001 - the harness failing is an outcome of the trace, not the end
        _harness_failed(result, _as_harness(e))
    result.elapsed_s = time.monotonic() - start
    write_trace(result, model, out, seed, model_params)
    return result, tally


def _as_harness(e: Exception) -> Exception:
    """A ZooKeeper-mode node that ended unasked, as the campaign counts it (the KRaft driver's NodeDied)."""
    return KraftNodeDied(str(e)) if isinstance(e, NodeDied) else e


class ZkChaos:
    """A random-fault run (real -> model, chaos.py's shape): a topic per partition, then ``faults`` actions the model
    enables in some candidate state (weighted toward the least taken; where only the cluster's own steps would
    enable one, after them), each after a random time watching the cluster; every view read twice in a row must be a state the cluster's own steps reach from the candidates
    (settled or not), and the last, once the cluster is quiet, a settled one."""

    def __init__(self, model, cluster, rng: random.Random, *, step_timeout: float, gap: tuple):
        self.model, self.rng, self.gap = model, rng, gap
        self.quiet = min(20.0, step_timeout / 2)
        self.driver = ZkDriver(cluster, model, [], timeout=step_timeout)
        self.actions = [(r, a) for r, a in drivable(model) if r.name != "CreateTopic"]
        self.done: list[str] = []
        self.times: dict = {}
        self.observations = 0

    def act(self, rule, args) -> None:
        try:
            answer = handler(rule.name).act(self.driver, *args) or {}
        except RunLeftModel:
            if rule.name != "Produce":
                raise
            return      # the leader moved since the pick (the driver's producer checks it): nothing was sent
        refused = bool(answer.get("refused"))
        self.done.append(rule.label(args) + (" (refused)" if refused else ""))
        self.times[rule.name] = self.times.get(rule.name, 0) + 1
        self.driver.apply(rule.name, args, refused)

    def _enabled(self) -> list[tuple]:
        """The actions the model enables in a candidate state (one that shows the cluster's view now), not merely in
        one the cluster's own steps reach from it: a restart before the controller counts the crashed broker dead,
        before its ZooKeeper session expired, would find its old /brokers/ids znode and exit (KafkaZkClient.
        registerBroker), which the model's restart_blocked rules out."""
        states = self.driver.states
        return [(r, a) for r, a in self.actions if self._client_may(r, a)
                and any(r.guard(self.model, s, *a) is None for s in states)]

    def _client_may(self, rule, args) -> bool:
        """The client produces to and reads from the partition's leader as the state znode names it now (the model's
        Produce and Consume name the broker)."""
        if rule.name not in ("Produce", "Consume"):
            return True
        broker, partition = args
        state = self.driver.cluster.observe(light=True).controller.partitions.get((f"t{partition}", 0))
        return state is not None and state.leader == broker

    def watch(self, seconds: float) -> None:
        """Observe for ``seconds``, then on until the view is a state of the model (or changing), narrowing the
        candidates on views read twice in a row. A view no reachable state shows is a disagreement only once it
        stayed unchanged ``quiet`` seconds: a fault takes Kafka a moment to show (a failed dir is seen offline at
        the next checkpoint), which the model's step does at once."""
        end = time.monotonic() + seconds
        last, last_change, found = None, time.monotonic(), True
        while True:
            real = self.driver._real(False)
            self.observations += 1
            now = time.monotonic()
            stable = real == last
            if not stable:
                last, last_change = real, now
            else:
                found = self.driver.narrow(real)
                if not found and now - last_change >= self.quiet:
                    raise RunLeftModel("the cluster showed, unchanged for "
                                       f"{self.quiet:.0f} s, a view no state reachable from the candidates shows; "
                                       "the closest differs: " + "; ".join(self.driver.closest(real)))
            if now >= end and stable and found:
                return
            time.sleep(run.POLL)

    def run(self, faults: int) -> None:
        for p in range(self.model.cfg.partitions):
            self.act(self.model.rule("CreateTopic"), (p,))
            self.driver._await(read=False)
        for _ in range(faults):
            enabled = self._enabled()
            if not enabled and any(self.driver.enabled_somewhere(r, a) for r, a in self.actions):
                self.driver._await(read=False)     # what the model enables only after the cluster's own steps
                enabled = self._enabled()
            if not enabled:
                break
            rule, args = self.rng.choices(enabled, weights=[1 / (1 + self.times.get(r.name, 0)) for r, _ in enabled])[0]
            self.act(rule, args)
            self.watch(self.rng.uniform(*self.gap))
        self.driver._await(read=False)


def real_run(job, model, start_cluster, faults, cluster_has, step_timeout, out=None):
    # (out: where a KRaft run keeps a disagreeing cluster's logs; a ZooKeeper-mode cluster keeps none yet)
    result = TraceResult(job.number, job.release, [], "conforms", kind="real")
    tally: list = []
    start = time.monotonic()
    session = None

    def drive(chaos) -> None:
        try:
            chaos.run(faults)
            result.says = f"{chaos.observations} observations, every one a behaviour of the model"
        except RunLeftModel as e:
            result.outcome = "disagrees"
            result.says = f"after action {len(chaos.done)}: {e}"
    try:
        session = Session(start_cluster(model, None), lambda cluster: ZkChaos(
            model, cluster, random.Random(job.seed), step_timeout=step_timeout, gap=(0.0, min(4.0, step_timeout / 8))))
        session.run(drive)
        chaos = session.driver
        result.steps = list(chaos.done)
        for rule, times in chaos.times.items():
            tally += [(rule, job.release, "driven")] * times
            if result.outcome != "disagrees":
                tally += [(rule, job.release, "driven_agreed")] * times
    except Exception as e:  # noqa: BLE001 - the harness failing is an outcome of the run, not the end
        if session is not None and session.driver is not None:
            result.steps = list(session.driver.done)
        _harness_failed(result, _as_harness(e))
    result.elapsed_s = time.monotonic() - start
    return result, tally


ENGINE = SimpleNamespace(drivable=drivable, behaviour=ZkBehaviour, model_trace=model_trace, real_run=real_run)

__all__ = ["ENGINE", "ZkBehaviour", "ZkChaos", "drivable"]
