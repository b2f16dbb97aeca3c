"""The real-cluster harness (docs/realkafka.md): Kafka releases fetched by Maven, KRaft clusters on loopback,
faults (a failed dir, a crash, a restart, a controlled shutdown, a held controller or request), the Admin API,
a producer and a consumer, and observations of it all, in four roles (roles.py: Lifecycle, Nemesis, Client,
Observer) with each cluster kind's declared capabilities; ZooKeeper-mode clusters of 3.x too (zk.py). It knows
Kafka, not the model: it imports nothing of model/, invariants/, explorer/, proofs/ or spark_explore/ (pyproject.toml's contracts)."""
from .cluster import JVM_OPTIONS, Cluster, ClusterSpec, ConsumeResult, ProduceResult, api_name
from .config import KAFKA_TIMERS, non_default_settings
from .errors import HarnessError
from .observation import (BrokerObservation, ClusterObservation, ControllerImage, Dir, MetadataRecord,
                          PartitionImage, Registration, Replica)
from .probe import ProbeError
from .roles import CAPABILITIES, Client, Lifecycle, Nemesis, Observer, has
from .release import Release, cache_root, cached, fetch
from .zk import ZkCluster
from .zkstate import ZkControllerState, ZkObservation, ZkPartitionState, ZkRegistration

__all__ = ["CAPABILITIES", "Client", "Lifecycle", "Nemesis", "Observer", "has", "JVM_OPTIONS", "KAFKA_TIMERS", "non_default_settings", "BrokerObservation", "Cluster", "ClusterObservation", "ClusterSpec", "ConsumeResult", "ControllerImage",
           "Dir", "HarnessError", "MetadataRecord", "PartitionImage", "ProbeError", "ProduceResult", "Registration",
           "Release", "Replica", "ZkCluster", "ZkControllerState", "ZkObservation", "ZkPartitionState",
           "ZkRegistration", "api_name", "cache_root", "cached", "fetch"]
