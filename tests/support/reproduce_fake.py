"""A cluster that behaves as the model does, in the harness's interface (realkafka.cluster): the driver's loop
(realkafka/driver/run.py) and `jbodcheck reproduce` tested without a JVM. It keeps a model state; each driven call
takes the matching rule; every observation first lets the cluster take its own steps (plan.settle, under the holds
in force). A follower whose fetches are held and who lags is shrunk out of the ISR, as a real leader does after
replica.lag.time.max.ms, and a broker whose heartbeats are held has its session expired, as the controller does
after broker.session.timeout.ms (both ``lag`` seconds after the hold first applied). ``deviate`` plants a
difference: a function of (call name, args) that returns True to skip the call (the cluster does not do what it
was asked); ``warp`` plants an observation no model state has: a function of (the view, the calls so far) that
returns the view to show; ``dead`` plants a node that died unasked: a function of the calls so far that returns
the harness's lines for it (Cluster.dead)."""
from __future__ import annotations

import threading
import time
import types
from types import SimpleNamespace

from model.storage.data import leader_at_epoch
from realkafka.driver.mapping import Hold, own_steps
from realkafka.driver.plan import settle
from realkafka.driver.projection import project
from model.storage.state import OFFLINE
from realkafka.driver.view import partition_of


class FakeHarnessError(Exception):
    pass


class ModelCluster:
    capabilities = frozenset({"delete_topic", "hold_requests", "hold_answers"})   # (realkafka/cluster/roles.py)

    def __init__(self, model, deviate=lambda name, args: False, fail_on=None, lag=0.3, root=None,
                 dir_failure_timeout=True, warp=None, dead=None):
        import tempfile
        from pathlib import Path

        self.model = model
        self.root = Path(root or tempfile.mkdtemp(prefix="jbodcheck-fake-"))
        self.state = model.init_states()[0]
        self.holds: set = set()
        self.deviate = deviate
        self.fail_on = fail_on          # a call name that raises FakeHarnessError (the harness failing)
        self.lock = threading.RLock()
        self.calls: list = []
        self.gate_calls: list = []      # (api, broker, delayed) of every hold asked of the gate
        self.stopped = False
        self.lag = lag
        self.warp = warp
        self._dead = dead
        self.lagging: dict = {}         # (partition, follower) -> when it first lagged
        # the cluster's own steps; without log.dir.failure.timeout.ms (set beyond the run) no broker stops itself
        self.own = [o for o in own_steps(model) if dir_failure_timeout or o[2].name != "BrokerDirFailureTimeout"]

    # ---- context manager, as Cluster is ----
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        import shutil

        self.stopped = True
        shutil.rmtree(self.root, ignore_errors=True)
        return False

    def dir_path(self, b, d):
        return self.root / f"broker-{b}" / f"dir-{d}"

    def _take(self, name, *args):
        self.calls.append((name, args))
        if self.fail_on == name:
            raise FakeHarnessError(f"{name} failed")
        if self.deviate(name, args):
            return
        with self.lock:
            _, self.state = self.model.step(self.state, name, tuple(args))

    # ---- the gate ----
    def hold(self, api, *, broker=None, delay=False):
        # the model's request in flight waits either way (a delay is what the model has; a refusal's re-sending is
        # the real broker's); the mode is recorded for the tests
        self.holds.add((api, broker))
        self.gate_calls.append((api, broker, bool(delay)))

    def hold_answers(self, broker):
        self.holds.add(("AssignReplicasToDirs answer", broker))
        self.gate_calls.append(("AssignReplicasToDirs answer", broker, False))

    def release_answers(self, broker=None):
        self.holds = {h for h in self.holds if h[0] != "AssignReplicasToDirs answer" or broker not in (None, h[1])}

    def release(self, api=None, *, broker=None):
        self.holds.discard((api, broker))

    def _model_holds(self) -> frozenset:
        """The gate's rules as the planner's holds (a Fetch hold stops every partition's fetches of the broker)."""
        out = set()
        for api, broker in self.holds:
            if api == "Fetch":
                out |= {Hold("Fetch", broker, p) for p in range(self.model.cfg.partitions)}
            else:
                out.add(Hold(api, broker))
        return frozenset(out)

    # ---- the driven calls ----
    def create_topic(self, topic, assignment, configs=None):
        self._take("CreateTopic", partition_of(topic))

    def fail_dir(self, broker, dir, wait=True):
        copies = [p for p, mask in enumerate(self.state.brokers[broker].copies) if mask >> dir & 1]
        self._take("DirFail", broker, dir)
        if self.state.brokers[broker].dirs[dir] == OFFLINE:
            aside = self.dir_path(broker, dir).with_name(f"dir-{dir}.failed")
            for p in copies:
                (aside / f"t{p}-0").mkdir(parents=True, exist_ok=True)

    def crash(self, broker):
        self._take("BrokerCrash", broker)

    def restart(self, broker, wait="unfenced"):
        self._settle()
        self._take("BrokerRestart", broker)

    def controlled_shutdown(self, broker, timeout=120):
        self._take("BrokerBeginControlledShutdown", broker)

    def delete_topic(self, topic):
        self._take("DeleteTopic", partition_of(topic))

    def reassign(self, topic, partition, target):
        self._take("ReassignPartition", partition_of(topic))

    def alter_replica_log_dir(self, topic, partition, broker, dir):
        self._take("AlterReplicaLogDirs", broker, partition_of(topic), dir)

    def produce(self, topic, partition, value, timeout=30):
        return self.send(topic, partition, value, timeout=timeout)()

    def send(self, topic, partition, value, timeout=30):
        """The leader appends the record at once; the returned call waits for its acknowledgement (or the
        producer's timeout), as the real harness's send."""
        p = partition_of(topic)
        with self.lock:
            self._settle()
            part = self.state.controller.partitions[p]
            leader = leader_at_epoch(self.state, self.model.assignments[p], p, part.leader_epoch)
            offset = len(self.state.brokers[leader].logs[p])
        self._take("Produce", leader, p)

        def sent():
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                with self.lock:
                    self._settle()
                    if self.state.acked[p] >> offset & 1:
                        return SimpleNamespace(offset=offset, error=None)
                time.sleep(0.005)
            return SimpleNamespace(offset=None, error="TimeoutException: not acknowledged in time")
        return sent

    def consume(self, topic, partition, timeout=30):
        with self.lock:
            self._settle()
            view = project(self.model, self.state)
            read = view.data[topic].read or 0
        return SimpleNamespace(records=tuple((o, b"r") for o in range(read)))

    # ---- observation ----
    def _settle(self):
        with self.lock:
            self.state, _, _ = settle(self.model, self.state, self._model_holds(), self.own)
            for hold in sorted(self._model_holds()):
                if hold.api in ("Fetch", "BrokerHeartbeat"):
                    # a leader shrinks a lagging follower out of the ISR; the controller expires a session
                    name = "LeaderShrinkIsr" if hold.api == "Fetch" else "ControllerExpireSession"
                    if name not in self.model.rule_index:
                        continue
                    rule = self.model.rule(name)
                    args = (hold.partition, hold.broker) if hold.api == "Fetch" else (hold.broker,)
                    if rule.guard(self.model, self.state, *args) is not None:
                        self.lagging.pop(args, None)
                        continue
                    since = self.lagging.setdefault(args, time.monotonic())
                    if time.monotonic() - since >= self.lag:
                        _, self.state = self.model.step(self.state, name, args)
                        self.state, _, _ = settle(self.model, self.state, self._model_holds(), self.own)

    def observe(self):
        if self.fail_on == "observe":
            raise FakeHarnessError("observe failed")
        with self.lock:
            self._settle()
            faulted = {tuple(a) for n, a in self.calls if n == "DirFail"}
            view = project(self.model, self.state, faulted)
            return observation(self.warp(view, list(self.calls)) if self.warp is not None else view)

    def dead(self):
        return self._dead(list(self.calls)) if self._dead is not None else []


def observation(view):
    """A ClusterObservation (realkafka.cluster's shape) showing ``view``: replicas from the dirs on disk (a failed
    dir is a file: nothing listed; a dir the broker took offline by itself is still listed), dirs' online-ness as a
    running broker tells it (None while it is down)."""
    brokers = {}
    for i, b in enumerate(view.brokers):
        dirs = [SimpleNamespace(online=(status == "online") if b.up else None,
                                exists=status == "online" or (i, d) not in view.faulted,
                                configured=status != "absent")
                for d, status in enumerate(b.dirs)]
        replicas = {(t, 0): SimpleNamespace(dir=log.dir, future_dir=log.future_dir, log_end_offset=log.log_end)
                    for t, log in (b.logs or {}).items()}
        for t, ds in (b.on_failed_dirs or {}).items():
            for d in ds:
                if (i, d) not in view.faulted and (t, 0) not in replicas:
                    replicas[(t, 0)] = SimpleNamespace(dir=d, future_dir=None, log_end_offset=None)
        brokers[i] = SimpleNamespace(up=b.up, dirs=dirs, replicas=replicas)
    regs = {b: SimpleNamespace(fenced=r.fenced, dirs=tuple(sorted(r.dirs)), epoch=0,
                               in_controlled_shutdown=r.in_controlled_shutdown)
            for b, r in enumerate(view.registrations) if r is not None}
    parts = {(t, 0): SimpleNamespace(leader=p.leader, isr=tuple(sorted(p.isr)), elr=tuple(sorted(p.elr or ())),
                                     last_known_elr=tuple(sorted(p.last_known_elr or ())),
                                     directories=tuple(p.directories), replicas=tuple(p.replicas),
                                     adding=tuple(p.adding), removing=tuple(p.removing))
             for t, p in view.partitions.items()}
    features = {} if view.jbod is None else {"metadata.version": 17 if view.jbod else 14}
    return SimpleNamespace(brokers=brokers, controller=SimpleNamespace(registrations=regs, partitions=parts,
                                                                       features=features), records=())


def fake_harness(model_of, **kw):
    """A stand-in for the module realkafka.cluster whose Cluster is a ModelCluster of ``model_of(made_for[0])``
    (the scenario a test appends to ``made_for``): (module, made: the clusters made, made_for). The real
    realkafka.cluster.release stays importable (the command resolves --kafka with it)."""
    import realkafka.cluster.release  # noqa: F401  (in sys.modules before the fake package replaces its parent)

    made: list = []
    made_for: list = []

    class Cluster:
        def __init__(self, spec, *, log=None):
            self.spec = spec

        def __enter__(self):
            timeout = (self.spec.get("settings") or {}).get("log.dir.failure.timeout.ms") != "3600000"
            self.inner = ModelCluster(model_of(made_for[0]), dir_failure_timeout=timeout, **kw)
            self.inner.spec = self.spec      # what the cluster was asked to be (its settings, its format)
            made.append(self.inner)
            return self.inner

        def __exit__(self, *exc):
            return self.inner.__exit__(*exc)

    module = types.ModuleType("realkafka.cluster")
    module.Cluster = Cluster
    module.ClusterSpec = lambda **kw: kw
    module.HarnessError = FakeHarnessError
    module.ProbeError = type("ProbeError", (Exception,), {})
    module.fetch = lambda release, log=None: None
    module.JVM_OPTIONS = ["-XX:+UseSerialGC"]
    # what the command checks up front; the driver then checks the ModelCluster's own (realkafka/cluster/roles.py)
    Cluster.capabilities = frozenset({"replace_dir", "remove_dir", "delete_topic", "upgrade_metadata_version"})
    return module, made, made_for
