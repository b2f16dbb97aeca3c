"""A cluster that behaves as the model does, in the harness's interface (realkafka.cluster): the driver's loop
(realkafka/driver/run.py) and `jbodcheck reproduce` tested without a JVM. It keeps a model state; each driven call
takes the matching rule; every observation first lets the cluster take its own steps (plan.settle, under the holds
in force), and a follower whose fetches are held and who lags is shrunk out of the ISR, as a real leader does
after replica.lag.time.max.ms (here ``lag`` seconds after the follower first lagged). ``deviate`` plants a difference: a function of (call name, args) that returns True
to skip the call (the cluster does not do what it was asked)."""
from __future__ import annotations

import threading
import time
from types import SimpleNamespace

from model.storage.data import leader_at_epoch
from realkafka.driver.mapping import Hold
from realkafka.driver.plan import settle
from realkafka.driver.projection import project
from realkafka.driver.view import partition_of


class FakeHarnessError(Exception):
    pass


class ModelCluster:
    def __init__(self, model, deviate=lambda name, args: False, fail_on=None, lag=0.3):
        self.model = model
        self.state = model.init_states()[0]
        self.holds: set = set()
        self.deviate = deviate
        self.fail_on = fail_on          # a call name that raises FakeHarnessError (the harness failing)
        self.lock = threading.RLock()
        self.calls: list = []
        self.stopped = False
        self.lag = lag
        self.lagging: dict = {}         # (partition, follower) -> when it first lagged

    # ---- context manager, as Cluster is ----
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stopped = True
        return False

    def _take(self, name, *args):
        self.calls.append((name, args))
        if self.fail_on == name:
            raise FakeHarnessError(f"{name} failed")
        if self.deviate(name, args):
            return
        with self.lock:
            _, self.state = self.model.step(self.state, name, tuple(args))

    # ---- the gate ----
    def hold(self, api, broker, topic=None, partition=None):
        self.holds.add(Hold(api, broker, None if topic is None else partition_of(topic)))

    def release(self, api, broker, topic=None, partition=None):
        self.holds.discard(Hold(api, broker, None if topic is None else partition_of(topic)))

    # ---- the driven calls ----
    def create_topic(self, topic, assignment, configs=None):
        self._take("CreateTopic", partition_of(topic))

    def fail_dir(self, broker, dir):
        self._take("DirFail", broker, dir)

    def crash(self, broker):
        self._take("BrokerCrash", broker)

    def restart(self, broker):
        self._settle()
        self._take("BrokerRestart", broker)

    def reassign(self, topic, partition, target):
        self._take("ReassignPartition", partition_of(topic))

    def alter_replica_log_dir(self, topic, partition, broker, dir):
        self._take("AlterReplicaLogDirs", broker, partition_of(topic), dir)

    def produce(self, topic, partition, value):
        p = partition_of(topic)
        with self.lock:
            self._settle()
            part = self.state.controller.partitions[p]
            leader = leader_at_epoch(self.state, self.model.assignments[p], p, part.leader_epoch)
            offset = len(self.state.brokers[leader].logs[p])
        self._take("Produce", leader, p)
        while True:
            with self.lock:
                self._settle()
                if self.state.acked[p] >> offset & 1:
                    return offset
            time.sleep(0.005)

    def consume(self, topic, partition):
        with self.lock:
            self._settle()
            view = project(self.model, self.state)
            read = view.data[topic].read or 0
        return [b"r"] * read

    # ---- observation ----
    def _settle(self):
        with self.lock:
            self.state, _, _ = settle(self.model, self.state, frozenset(self.holds))
            for hold in list(self.holds):
                if hold.api == "Fetch":
                    rule = self.model.rule("LeaderShrinkIsr")
                    args = (hold.partition, hold.broker)
                    if rule.guard(self.model, self.state, *args) is not None:
                        self.lagging.pop(args, None)
                        continue
                    since = self.lagging.setdefault(args, time.monotonic())
                    if time.monotonic() - since >= self.lag:
                        _, self.state = self.model.step(self.state, "LeaderShrinkIsr", args)
                        self.state, _, _ = settle(self.model, self.state, frozenset(self.holds))

    def observe(self):
        if self.fail_on == "observe":
            raise FakeHarnessError("observe failed")
        with self.lock:
            self._settle()
            return observation(project(self.model, self.state))


def observation(view):
    """A ClusterObservation (realkafka.cluster's shape) showing ``view``."""
    brokers = []
    for b in view.brokers:
        dirs = []
        for d, status in enumerate(b.dirs):
            held = [(t, 0) for t, ds in (b.on_failed_dirs or {}).items() if d in ds]
            dirs.append(SimpleNamespace(online=status == "online", configured=status != "absent", partitions=held))
        replicas = {(t, 0): SimpleNamespace(dir=log.dir, future=log.future_dir, log_end_offset=log.log_end)
                    for t, log in (b.logs or {}).items()} if b.up else None
        brokers.append(SimpleNamespace(up=b.up, dirs=dirs, replicas=replicas))
    regs = {b: None if r is None else SimpleNamespace(fenced=r.fenced, dirs=sorted(r.dirs), epoch=0,
                                                       in_controlled_shutdown=r.in_controlled_shutdown)
            for b, r in enumerate(view.registrations)}
    parts = {(t, 0): SimpleNamespace(leader=p.leader, isr=sorted(p.isr), elr=None, last_known_elr=None,
                                     directories=list(p.directories), replicas=list(p.replicas),
                                     adding=list(p.adding), removing=list(p.removing))
             for t, p in view.partitions.items()}
    return SimpleNamespace(brokers=brokers, controller=SimpleNamespace(registrations=regs, partitions=parts),
                           records=[])
