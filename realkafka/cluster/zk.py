"""A real ZooKeeper-mode cluster on loopback (Kafka 3.x: KIP-112's own mode): one ZooKeeper server started from the
release's own jars and N brokers with D log dirs each, the controller elected among the brokers through ZooKeeper
(docs/realkafka.md, "ZooKeeper mode"). Everything else is the KRaft Cluster's: the hygiene (processes.py), the
probe, the faults on dirs and brokers, the brokers' dirs and replicas, the waits.

    with ZkCluster(ClusterSpec(release="3.9.2", brokers=3, dirs=2)) as c:
        c.create_topic("t", {0: [0, 1, 2]})
        c.fail_dir(0, 0)
        c.wait_until(lambda o: o.controller.partitions[("t", 0)].leader == 1, what="t-0 led by broker 1")
"""
from __future__ import annotations

import logging
import subprocess

from . import config, processes
from .cluster import Cluster
from .errors import HarnessError
from .node import JVM_OPTIONS, Node, free_port
from .observation import DirNames
from .probe import ProbeError
from .release import parse_version
from .zkstate import ZkObservation, read_controller_state

ZOOKEEPER_MAIN = "org.apache.zookeeper.server.quorum.QuorumPeerMain"   # as Kafka's zookeeper-server-start.sh


class ZkCluster(Cluster):
    """A started ZooKeeper-mode cluster (``with ZkCluster(spec) as c``: ZooKeeper up, every broker registered in
    /brokers/ids, a controller elected; stopped and removed at the end, also on an exception or Ctrl-C).
    ``c.controller`` is the ZooKeeper server's node; the elected controller is ``c.observe().controller.controller``.
    The spec's ``elr`` and ``metadata_version`` are KRaft's: ZooKeeper mode has neither."""

    OBSERVATION = ZkObservation
    # no gate, no controller process to hold, no answer proxy, no metadata log, no metadata.version (roles.py)
    capabilities = frozenset({"replace_dir", "remove_dir", "delete_topic", "move_controller", "server_log"})

    def __init__(self, spec, *, log=None):
        if parse_version(spec.release)[0] >= 4:
            raise ValueError(f"Kafka {spec.release} has no ZooKeeper mode (removed in 4.0): ZooKeeper mode runs 3.x")
        if spec.elr or spec.metadata_version:
            raise ValueError("ZooKeeper mode has no ELR and no metadata.version to format at")
        super().__init__(spec, log=log)
        self._zk = None

    def _nodes_line(self) -> str:
        return f"ZooKeeper (port {self.zookeeper_port}) and brokers {list(self.brokers)}"

    def start(self) -> "ZkCluster":
        super().start()
        try:
            self.wait_until(lambda o: o.controller.controller in self.brokers, timeout=self.spec.start_timeout,
                            what="a broker elected controller (/controller)", light=True)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        self._drop_client()
        super().stop()

    # ---- set-up --------------------------------------------------------------------------------------------------

    def _layout(self) -> None:
        spec, root = self.spec, self.root
        self.gate_file, self.gate_log = root / "gate", root / "gate.log"     # (no gate in ZooKeeper mode: hold refuses)
        self.zookeeper_port = free_port()
        self._broker_port = {b: free_port() for b in range(spec.brokers)}
        self.ports = [self.zookeeper_port, *self._broker_port.values()]
        zk = Node(config.CONTROLLER_ID, "zookeeper", root / "zookeeper")
        zk.home.mkdir()
        (zk.home / "data").mkdir()
        config.write_properties(zk.properties, config.zookeeper_properties(port=self.zookeeper_port,
                                                                           data_dir=zk.home / "data"))
        self.controller = zk
        for b in range(spec.brokers):
            node = Node(b, "broker", root / f"broker-{b}")
            node.home.mkdir()
            node.dirs = [node.home / f"dir-{d}" for d in range(spec.dirs)]
            self.brokers[b] = node
            config.write_properties(node.properties, config.zk_broker_properties(
                broker_id=b, listener_port=self._broker_port[b], zookeeper_port=self.zookeeper_port,
                log_dirs=node.dirs, connection_timeout_ms=int(spec.start_timeout * 1000),
                settings={**spec.settings, **spec.broker_settings}))

    def _format(self, nodes=None, extra=()) -> None:
        """ZooKeeper mode formats nothing: each broker writes its dirs' meta.properties when it starts (a replaced
        dir's too, replace_dir)."""
        if nodes is None:
            self.names = DirNames({})

    def _learn_replaced_ids(self) -> None:
        """(ZooKeeper mode names dirs by their index, never by a directory.id.)"""

    def move_controller(self) -> None:
        """The /controller znode deleted, as an operator forces a controller re-election: the controller resigns
        and the brokers elect one again (a new /controller_epoch); no broker fails."""
        from kazoo.exceptions import NoNodeError

        try:
            self._client().delete("/controller")
        except NoNodeError:
            raise HarnessError("no /controller znode to delete: no controller is elected now") from None
        self._log("cluster: /controller deleted (a controller re-election)")

    def _start_node(self, node: Node) -> None:
        if node.kind != "zookeeper":
            return super()._start_node(node)
        out = open(node.stdout, "ab")
        argv = [self._java, "-Xms16m", "-Xmx128m", *JVM_OPTIONS, "-Dzookeeper.jmx.log4j.disable=true",
                *self._logging_options(node.home / "server"), "-cp", self.kafka.classpath, ZOOKEEPER_MAIN,
                str(node.properties)]
        node.proc = processes.spawn(argv, cwd=node.home, stdout=out, stderr=subprocess.STDOUT)
        out.close()
        node.held = False
        node.expected = True

    # ---- what ZooKeeper mode has not (yet) -----------------------------------------------------------------------

    def hold_controller(self) -> None:
        raise HarnessError("a ZooKeeper-mode cluster has no controller process to hold (its controller is a broker)")

    def hold(self, api: str, **_) -> None:
        raise HarnessError(f"the request gate is not installed on ZooKeeper-mode brokers: {api} cannot be held")

    def metadata_records(self) -> list:
        return []                    # ZooKeeper mode has no metadata log: its state is the znodes (zkstate.py)

    # ---- observation ---------------------------------------------------------------------------------------------

    def _client(self):
        """A kazoo client of the cluster's ZooKeeper, started on first use (ProbeError while it cannot connect:
        the server is still starting)."""
        if self._zk is None:
            from kazoo.client import KazooClient

            quiet = logging.getLogger("jbodcheck.kazoo")
            quiet.setLevel(logging.CRITICAL)
            quiet.propagate = False
            self._zk = KazooClient(hosts=f"127.0.0.1:{self.zookeeper_port}", timeout=30, logger=quiet)
        if not self._zk.connected:
            try:
                self._zk.start(timeout=15)
            except Exception as e:
                raise ProbeError(f"ZooKeeper at 127.0.0.1:{self.zookeeper_port} did not answer: {e!r}") from None
        return self._zk

    def _controller_view(self) -> tuple:
        if not self.controller.up:
            raise HarnessError(f"the ZooKeeper server is not running (see {self.controller.log})")
        for attempt in (1, 2):
            try:
                return read_controller_state(self._client(), up=True), []
            except ProbeError:
                raise
            except Exception as e:   # kazoo's connection loss, a timeout, its own session expired on a busy machine
                self._drop_client()
                if attempt == 2:
                    raise ProbeError(f"reading ZooKeeper: {e!r}") from None

    def _drop_client(self) -> None:
        """Forget the kazoo client (the next read starts a new session): its session expires when the machine is
        too busy for its heartbeats, which says nothing about Kafka's."""
        if self._zk is not None:
            try:
                self._zk.stop()
                self._zk.close()
            except Exception:        # a client of a dead session: nothing of it is worth a graceful close
                pass
            self._zk = None
