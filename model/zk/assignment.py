"""Which brokers a topic may be created on (``--assignment``; docs/model.md, sections 3.3 and 14).

The model's assignment is fixed (``ModelConfig.assignment``), and by default ``CreateTopic`` may run at any
moment, also while brokers of the assignment are down: a manual assignment (``kafka-topics.sh
--replica-assignment``) may name them. Kafka's automatic assignment (``AdminUtils.assignReplicasToBrokers``)
picks among the brokers registered in ZooKeeper (/brokers/ids) only. ``--assignment live-brokers`` keeps the
fixed assignment and lets a topic be created only while every broker of it is registered (running): the
creations an automatic assignment could have made, up to the brokers' names (it does not model the choice of
other brokers, so it covers fewer creations, never more).
"""
from __future__ import annotations

from model.storage.common import partitions
from model.storage.config import ASSIGNMENTS
from model.spec.feature import Feature, Flag
from model.zk.footprints import CONTROLLER_STEP_APPENDS, CONTROLLER_STEP_READS, CONTROLLER_STEP_WRITES
from model.zk.rules import create_topic, create_topic_guard

LIVE_BROKER_ASSIGNMENT = Feature(
    "live-broker-assignment",
    "A topic is created only while every broker of its assignment is registered (as Kafka's automatic "
    "assignment picks registered brokers), not on brokers that are down (a manual assignment may name them)",
    enabled=lambda cfg: cfg.assignment_policy == "live-brokers",
    config_fields=("assignment_policy",),
    flags=(Flag("assignment_policy", "--assignment",
                "Which brokers a topic may be created on: any (a manual assignment, brokers that are down "
                "included; the default) or live-brokers (only while all of its assigned brokers run).",
                "choice", choices=ASSIGNMENTS),),
)


def _guard_create_on_live_brokers(m, s, partition):
    down = [b for b in m.original[partition] if not s.brokers[b].up]
    if down:
        return (f"broker(s) {down} of partition {partition}'s assignment are not registered (--assignment "
                f"live-brokers)")
    return create_topic_guard(m, s, partition)


@LIVE_BROKER_ASSIGNMENT.rule(
    "CreateTopic",
    guard_reads=("controller.partitions", "controller.deletion", "broker[*].up"), reads=CONTROLLER_STEP_READS,
    writes=CONTROLLER_STEP_WRITES, appends=CONTROLLER_STEP_APPENDS,
    params=("partition",), domain=partitions, guard=_guard_create_on_live_brokers, kind="controller", fair=False,
    replaces="CreateTopic",
    reference="KIP-112 scenario 1 (topic gets created); AdminUtils.assignReplicasToBrokers (registered brokers "
              "only); KafkaController.onNewPartitionCreation")
def create_topic_on_live_brokers(m, s, partition):
    """As the core's CreateTopic, once every broker of the partition's assignment is registered (running)."""
    return create_topic(m, s, partition)
