"""Partition reassignment: KafkaController.onPartitionReassignment (ZooKeeper mode, Kafka 1.0 to 2.3) over a
ControllerStep. KIP-112 scenario 7: the procedure stays as it was; replicas count as online by broker liveness
and LeaderAndIsr answers (ControllerStep.is_replica_online), and a StopReplica to an offline replica fails; the
destination replicas are created as at topic creation, with isNewReplica=true (NewReplica)."""
from __future__ import annotations

from typing import Callable, NamedTuple

from model.zk.controller import VALID_PARTITION_PREVIOUS, targets_in_isr
from model.zk.deletion import mark_ineligible, resume_deletion_for
from model.storage.state import (
    P_ONLINE, R_DELETION_STARTED, R_DELETION_SUCCESSFUL, R_NONEXISTENT, RA_DONE, RA_IN_PROGRESS, Partition,
)


class Procedure(NamedTuple):
    """Where Kafka's reassignment procedure changed between versions (the ``reassignment_procedure`` hook)."""
    name: str
    # The replica set while the reassignment is in progress, from (old, target): its order is the assignment
    # order elections and requests follow.
    replica_set: Callable
    # KAFKA-10314 (Kafka 2.7): the step-2 LeaderAndIsr goes to the added replicas with isNewReplica=true.
    adding_is_new: bool
    # KIP-455 (Kafka 2.4+): onPartitionReassignment marks the topic ineligible for deletion while it runs.
    marks_deletion_ineligible: bool


# Kafka 1.0 to 2.3: the assignment is old + new (initiateReassignReplicasForTopicPartition,
# onPartitionReassignment's "RAR + OAR").
KAFKA_1_0 = Procedure("kafka-1.0", lambda old, target: old + tuple(b for b in target if b not in old), False, False)
# Kafka 2.7: ReplicaAssignment.fromOldAndNewReplicas puts the target first ((new ++ old).distinct, KIP-455, Kafka
# 2.4); updateLeaderEpochAndSendRequest sends isNew=true to the adding replicas (KAFKA-10314, PR #9122, Kafka 2.7).
KAFKA_2_7 = Procedure("kafka-2.7", lambda old, target: target + tuple(b for b in old if b not in target), True, True)


def move_of(m, state, p: int) -> tuple:
    """(old, target) of partition p's reassignment: the design's ``reassignment_move`` hook (the admin's move of
    partition 0 from its assignment to the next brokers by default; KIP-46's self-healing moves, model/zk/design_kip46.py)."""
    return m.hooks.reassignment_move(m, state, p)


def _slot(step, p: int, b: int) -> tuple[int, int]:
    return p, step.m.assignments[p].index(b)


def on_partition_reassignment(step, p: int, move: tuple | None = None) -> None:
    """Steps 1-3 while the target replicas are not all in the ISR (in ZooKeeper): the assignment becomes old +
    target; LeaderAndIsr with a bumped leader epoch to all of them (isNewReplica=false); the added replicas go
    NewReplica (LeaderAndIsr with isNewReplica=true). Once they are all in the ISR, complete (steps 5-12).
    ``move``: (old, target), by default the partition's (``move_of``)."""
    old, target = move or move_of(step.m, step.state, p)
    procedure = step.m.hooks.reassignment_procedure
    if procedure.marks_deletion_ineligible:
        mark_ineligible(step, p)  # only a topic queued for deletion; resumed when the reassignment completes
    if targets_in_isr(step.partitions[p].isr, target):
        _complete(step, p, old, target)
        return
    both = procedure.replica_set(old, target)
    added = [b for b in target if b not in old]
    step.assigned[p] = both
    _update_leader_epoch_and_send(step, p, both, added if procedure.adding_is_new else ())
    step.replicas_to_new([_slot(step, p, b) for b in added])
    step.reassigning[p] = RA_IN_PROGRESS


def _update_leader_epoch_and_send(step, p: int, recipients, adding=()) -> None:
    """updateLeaderEpochAndSendRequest: the leader epoch in ZooKeeper + 1, LeaderAndIsr with isNewReplica=false
    (and, Kafka 2.7's KAFKA-10314 fix, isNewReplica=true to the replicas being added, ``adding``)."""
    part = step.partitions[p]
    if not step.has_leadership_record(p):
        return
    step.set_partition(p, part._replace(leader_epoch=part.leader_epoch + 1))
    step.add_leader_and_isr([b for b in recipients if b not in adding], p, is_new=False)
    step.add_leader_and_isr([b for b in recipients if b in adding], p, is_new=True)
    step.flush()


def _complete(step, p: int, old: tuple, target: tuple) -> None:
    step.replicas_to_online([_slot(step, p, b) for b in target])                        # 5
    step.assigned[p] = target                                                             # 6
    _move_leader_if_required(step, p, target)                                             # 7
    removed = [_slot(step, p, b) for b in old if b not in target]                         # 8, 9
    step.replicas_to_offline(removed)
    for state in (R_DELETION_STARTED, R_DELETION_SUCCESSFUL, R_NONEXISTENT):
        step.replicas_to(removed, state)
    step.reassigning[p] = RA_DONE                                                         # 10, 11
    step.add_update_metadata([p])                                                         # 12
    step.flush()
    resume_deletion_for(step, [p])


def _move_leader_if_required(step, p: int, target: tuple) -> None:
    """moveReassignedPartitionLeaderIfRequired: if the leader is a live target replica, bump the leader epoch and
    send LeaderAndIsr to the targets. Otherwise partitionStateMachine.handleStateChanges(OnlinePartition) with
    ReassignedPartitionLeaderSelector: the transition is validated first, so a partition the state machine does not
    allow to go OnlinePartition (NonExistentPartition: its topic is being deleted) is left as it is and nothing is
    sent; else the first target replica that is live and in the ISR is elected (the ISR is kept) and LeaderAndIsr
    goes to the targets; with none, the election fails and nothing changes."""
    part = step.partitions[p]
    if part.leader in target and step.is_replica_online(part.leader, p):
        _update_leader_epoch_and_send(step, p, target)
        return
    if part.state not in VALID_PARTITION_PREVIOUS[P_ONLINE]:
        return  # PartitionStateMachine logs the invalid transition and changes nothing
    candidates = [b for b in target if step.is_replica_online(b, p) and part.isr >> b & 1]
    if not candidates:
        return
    step.set_partition(p, Partition(P_ONLINE, candidates[0], part.leader_epoch + 1, part.isr))
    step.add_leader_and_isr(target, p, is_new=False)
    step.flush()


def resume_reassignments(step, broker: int | None = None) -> None:
    """Restart the reassignments in progress (after a failover), or those with a target replica on a broker
    that just started."""
    for p, state in enumerate(step.reassigning):
        if state == RA_IN_PROGRESS and (broker is None or broker in move_of(step.m, step.state, p)[1]):
            on_partition_reassignment(step, p)
