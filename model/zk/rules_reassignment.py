"""Partition reassignment (KIP-112 scenario 7): the admin's request and the ISR change that completes it
(docs/model.md, section 6.6). A feature, included with --reassignment; it requires replica deletion (the old
replicas are deleted)."""
from __future__ import annotations



from model.storage.config import ONE_OF_EACH
from model.zk.controller import ControllerStep, is_replica_online, targets_in_isr
from model.zk.reassignment import KAFKA_1_0, KAFKA_2_7, on_partition_reassignment
from model.zk.footprints import CONTROLLER_STEP_APPENDS, CONTROLLER_STEP_READS, CONTROLLER_STEP_WRITES
from model.spec.feature import Feature, Flag
from model.zk.rules_deletion import REPLICA_DELETION
from model.zk.schema import REASSIGNMENT_FIELDS
from model.storage.state import D_NONE, P_NONEXISTENT, RA_IN_PROGRESS, RA_NONE


REASSIGNMENT = Feature(
    "reassignment",
    "Partition reassignment (KIP-112 scenario 7; KafkaController.onPartitionReassignment, Kafka 1.0 to 2.3): "
    "partition 0 may move once to the next brokers",
    enabled=lambda cfg: cfg.reassignment,
    requires=(REPLICA_DELETION,),
    fields=REASSIGNMENT_FIELDS,
    config_fields=("reassignment",),
    flags=(Flag("reassignment", "--reassignment/--no-reassignment",
                "Partition reassignment (KIP-112 scenario 7): partition 0 may move to the next brokers."),),
    hooks={"reassignment_procedure": KAFKA_1_0},
)

# Kafka 2.4+ (KIP-455) with Kafka 2.7's KAFKA-10314 fix: overrides the procedure hook (docs/model.md, 6.6).
REASSIGNMENT_KAFKA_2_7 = Feature(
    "reassignment-kafka-2.7",
    "Kafka 2.7's reassignment procedure: the target replicas first in the replica set, the topic ineligible for "
    "deletion while it runs (KIP-455), and the added replicas sent isNewReplica=true from the start (KAFKA-10314)",
    enabled=lambda cfg: cfg.reassignment and cfg.reassignment_procedure == "kafka-2.7",
    requires=(REASSIGNMENT,),
    config_fields=("reassignment_procedure",),
    flags=(Flag("reassignment_procedure", "--reassignment-procedure",
                "Kafka's reassignment procedure: kafka-1.0 (1.0 to 2.3, default) or kafka-2.7 (KIP-455 and the "
                "KAFKA-10314 fix).", "choice", choices=("kafka-1.0", "kafka-2.7")),),
    hooks={"reassignment_procedure": KAFKA_2_7},
)


def _partitions(m):
    return [(p,) for p in range(m.cfg.partitions) if m.targets[p] is not None]


def _guard_reassign(m, s, partition):
    c = s.controller
    if c.reassigning[partition] != RA_NONE:
        return f"partition {partition} has already been reassigned (or is being reassigned)"
    if c.partitions[partition].state == P_NONEXISTENT or c.partitions[partition].leader_epoch < 0:
        return f"partition {partition} does not exist or has no leader-and-ISR record yet"
    if c.deletion[partition] != D_NONE:
        return f"partition {partition}'s topic is being deleted"
    down = [b for b in m.targets[partition] if not is_replica_online(c.live, c.offline, b, partition)]
    if down:
        return f"target replica(s) {down} are not online: the controller rejects the reassignment"
    return None


@REASSIGNMENT.rule("ReassignPartition",
      guard_reads=("controller",), reads=CONTROLLER_STEP_READS, writes=CONTROLLER_STEP_WRITES, appends=CONTROLLER_STEP_APPENDS,
      params=("partition",), domain=_partitions, guard=_guard_reassign, kind="controller", fair=False,
      reference="KIP-112 scenario 7 (partition reassignment); KafkaController.onPartitionReassignment steps 1-3")
def reassign_partition(m, s, partition):
    """An admin asks to move the partition to its target replicas (every replica to the next broker); the
    controller accepts when every target replica is online. Its assignment becomes old + target, the leader epoch
    is bumped and LeaderAndIsr (isNewReplica=false) goes to all of them; the added replicas go NewReplica
    (LeaderAndIsr with isNewReplica=true, as at topic creation). If the targets are already in the ISR the
    reassignment completes at once (see ControllerReassignmentIsrChange)."""
    step = ControllerStep(m, s)
    on_partition_reassignment(step, partition)
    return step.finish()


def _guard_isr_change(m, s, partition):
    if s.controller.reassigning[partition] != RA_IN_PROGRESS:
        return f"partition {partition} is not being reassigned"
    if not targets_in_isr(s.controller.partitions[partition].isr, m.targets[partition]):
        return f"the target replicas of partition {partition} are not all in its ISR"
    return None


@REASSIGNMENT.rule("ControllerReassignmentIsrChange",
      guard_reads=("controller.reassigning", "controller.partitions"), reads=CONTROLLER_STEP_READS, writes=CONTROLLER_STEP_WRITES, appends=CONTROLLER_STEP_APPENDS,
      params=("partition",), domain=_partitions, guard=_guard_isr_change,
      kind="controller",
      reference="KIP-112 scenario 7; PartitionReassignmentIsrChange, onPartitionReassignment steps 5-12")
def controller_reassignment_isr_change(m, s, partition):
    """The controller sees the partition's ISR (in ZooKeeper) contain every target replica and completes the
    reassignment: the targets go OnlineReplica, the assignment becomes the target, a new leader is elected
    among the live in-sync targets if the leader is not one (else the leader epoch is bumped), the old replicas
    go OfflineReplica, ReplicaDeletionStarted (StopReplica with delete; the answer is not awaited),
    ReplicaDeletionSuccessful and NonExistentReplica, and UpdateMetadata goes to every live broker."""
    step = ControllerStep(m, s)
    on_partition_reassignment(step, partition)
    return step.finish()


REASSIGNMENT.presets.update({
    "reassignment": ("Partition reassignment: 2 brokers x 2 dirs, 1 partition with one replica, moved from broker 0 "
                     "to broker 1; one record; a crash, a restart and a controller failover, no disk failure (see "
                     "reassignment-race)",
                     dict(brokers=2, dirs=2, partitions=1, rf=1, reassignment=True, max_records=1, consumer=False,
                          **{**ONE_OF_EACH, "max_dir_failures": 0, "max_fixes": 0})),
    "reassignment-race": ("The reassignment preset with one disk failure and one disk repair as well: finds the race "
                          "of docs/model.md 11.1, finding 4 (exits 1 by design)",
                          dict(brokers=2, dirs=2, partitions=1, rf=1, reassignment=True, max_records=1,
                               consumer=False, **ONE_OF_EACH)),
    "reassignment-deletion": ("The reassignment preset with topic deletion as well: a reassignment completing while "
                              "its topic is deleted counts the old replica deleted before it answers, so a copy can "
                              "outlive the deletion (docs/model.md 11.1, finding 8; exits 1 by design)",
                              dict(brokers=2, dirs=2, partitions=1, rf=1, reassignment=True, deletion=True,
                                   max_records=1, consumer=False,
                                   **{**ONE_OF_EACH, "max_dir_failures": 0, "max_fixes": 0})),
    "reassignment-saturation": ("The reassignment preset with KIP-928's saturation (2 units a dir): the target or the "
                                "old replica's dir may fill up during the move; no failover, at most one fault",
                                dict(brokers=2, dirs=2, partitions=1, rf=1, reassignment=True, saturation=True,
                                     dir_capacity=2, max_records=1, consumer=False,
                                     **{**ONE_OF_EACH, "max_dir_failures": 0, "max_fixes": 0, "max_failovers": 0,
                                        "max_faults": 1})),
})
