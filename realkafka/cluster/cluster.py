"""A real KRaft cluster on loopback: one controller process and N broker processes with D log dirs each, started,
faulted, observed and stopped by the harness (docs/realkafka.md). ``Cluster`` composes the harness's four roles
(roles.py): its lifecycle (lifecycle.py), its nemesis (nemesis.py), its client (client.py) and its observer
(observer.py), over one shared state (the nodes, the probe, the dirs' ids), and declares its capabilities.

    with Cluster(ClusterSpec(release="3.9.2", brokers=2, dirs=2)) as c:
        c.create_topic("t", {0: [0, 1]})
        c.fail_dir(0, 0)
        c.wait_until(lambda o: o.controller.partitions[("t", 0)].leader == 1, what="t-0 led by broker 1")
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from . import sharing
from .answers import AnswerProxy
from .client import ClusterClient, ConsumeResult, ProduceResult
from .lifecycle import ClusterLifecycle
from .nemesis import TO_CONTROLLER, ClusterNemesis, api_name
from .node import CLASS_LOAD_LOG, JVM_OPTIONS, METADATA_PARTITION, PARTITION_DIR, Node, free_port
from .observer import ClusterObserver
from .observation import ClusterObservation
from .probe import Probe
from .release import Release, parse_version
from .spec import ClusterSpec

__all__ = ["CLASS_LOAD_LOG", "JVM_OPTIONS", "METADATA_PARTITION", "PARTITION_DIR", "TO_CONTROLLER", "Cluster",
           "ClusterSpec", "ConsumeResult", "Node", "ProduceResult", "api_name", "free_port"]


class Cluster(ClusterLifecycle, ClusterNemesis, ClusterClient, ClusterObserver):
    """A started cluster (``with Cluster(spec) as c``: formatted, started, every broker registered and
    unfenced; stopped and removed at the end, also on an exception or Ctrl-C)."""

    OBSERVATION = ClusterObservation
    # every optional capability but ZooKeeper mode's controller re-election (roles.py CAPABILITIES)
    capabilities = frozenset({"replace_dir", "remove_dir", "delete_topic", "upgrade_metadata_version", "hold_requests",
                              "hold_controller", "hold_answers", "metadata_log", "server_log"})

    def __init__(self, spec: ClusterSpec, *, log: Callable[[str], None] | None = None):
        self.spec = spec
        self.version = parse_version(spec.release)
        self._log = log or (lambda line: None)
        self.kafka: Release | None = None
        self.root: Path | None = None
        self.probe: Probe | None = None
        self.controller: Node | None = None
        self.brokers: dict[int, Node] = {}
        self.ports: list[int] = []
        self.dir_ids: dict[str, tuple[int, int] | str] = {}
        self._replaced: set = set()     # (broker, dir) replaced whose new directory.id is not known yet
        self._gate_rules: list[tuple[str, str, str, str]] = []
        self.answers: AnswerProxy | None = None
        self._started = False
        self._sharing: sharing.Sharing | None = None
