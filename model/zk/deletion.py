"""Topic deletion: the controller's TopicDeletionManager (Kafka 2.4 to 3.6, ZooKeeper mode) over a ControllerStep.

A topic has one partition in the model, so a topic's deletion state is its partition's (Controller.deletion):
queued (topicsToBeDeleted), ineligible (also in topicsIneligibleForDeletion), or done. KIP-112 scenario 8:
an offline replica is handled as if its broker were offline; KIP-928: StopReplica(delete=true) goes to every
replica on a live broker, whatever the controller knows of its dir.
"""
from __future__ import annotations

from model.storage.state import (
    D_DONE, D_INELIGIBLE, D_QUEUED, NO_LEADER, P_NONEXISTENT, R_DELETION_INELIGIBLE,
    R_DELETION_STARTED, R_DELETION_SUCCESSFUL, R_NONEXISTENT, Partition,
)


def _in_state(step, p: int, state: int) -> list[tuple[int, int]]:
    return [(p, i) for p, i in step.assigned_replicas(p) if step.replicas[p][i] == state]


def on_topic_deletion(step, partitions) -> None:
    """onTopicDeletion: partitions not yet seen go Offline then NonExistent; UpdateMetadata with
    LeaderDuringDelete to every live broker (they drop the partition); then the replicas' deletion starts."""
    for p in partitions:
        if step.partitions[p].state != P_NONEXISTENT:
            step.partitions_to_offline([p])
            step._set_partition_state(p, P_NONEXISTENT)  # valid from OfflinePartition only
    step.add_update_metadata(partitions)
    step.flush()
    for p in partitions:
        _start_replica_deletion(step, p)


def _start_replica_deletion(step, p: int) -> None:
    """deleteTopicReplicas: dead replicas are ineligible at once (and so the topic); the others that are not
    deleted yet go OfflineReplica (StopReplica without delete) then ReplicaDeletionStarted (with delete)."""
    reaches = step.m.hooks.deletion_reaches  # KIP-112: online replicas; KIP-928: every live broker's
    dead, retry = [], []
    for q, i in step.assigned_replicas(p):
        if step.replicas[q][i] == R_DELETION_SUCCESSFUL:
            continue
        (retry if reaches(step, step.m.assignments[q][i], p) else dead).append((q, i))
    step.replicas_to(dead, R_DELETION_INELIGIBLE)
    step.replicas_to_offline(retry)
    step.replicas_to(retry, R_DELETION_STARTED)
    if dead:
        mark_ineligible(step, p)


def mark_ineligible(step, p: int) -> None:
    if step.is_queued_for_deletion(p):
        step.deletion[p] = D_INELIGIBLE


def resume_deletions(step) -> None:
    """resumeDeletions: complete the topics whose replicas are all deleted; retry the ineligible replicas of
    the others (they go OfflineReplica); start deletion of the eligible ones (queued, none in progress)."""
    retry, eligible = [], []
    for p in range(len(step.partitions)):
        if not step.is_queued_for_deletion(p):
            continue
        states = [step.replicas[p][i] for _, i in step.assigned_replicas(p)]
        if all(r == R_DELETION_SUCCESSFUL for r in states):
            _complete_delete_topic(step, p)
            continue
        if R_DELETION_STARTED in states:
            continue
        if R_DELETION_INELIGIBLE in states:
            retry.append(p)
        if step.deletion[p] == D_QUEUED:
            eligible.append(p)
    for p in retry:
        step.replicas_to_offline(_in_state(step, p, R_DELETION_INELIGIBLE))
    if eligible:
        on_topic_deletion(step, eligible)


def resume_deletion_for(step, partitions) -> None:
    """resumeDeletionForTopics: the topics are eligible again (e.g. a broker holding their replicas started)."""
    resumed = False
    for p in set(partitions):
        if step.is_queued_for_deletion(p):
            step.deletion[p] = D_QUEUED
            resumed = True
    if resumed:
        resume_deletions(step)


def fail_replica_deletion(step, replicas) -> None:
    """failReplicaDeletion: the replicas go ReplicaDeletionIneligible and their topics ineligible."""
    failed = [(p, i) for p, i in replicas if step.is_queued_for_deletion(p)]
    if not failed:
        return
    for p, _ in failed:
        mark_ineligible(step, p)
    step.replicas_to(failed, R_DELETION_INELIGIBLE)
    resume_deletions(step)


def complete_replica_deletion(step, replicas) -> None:
    step.replicas_to([(p, i) for p, i in replicas if step.is_queued_for_deletion(p)], R_DELETION_SUCCESSFUL)
    resume_deletions(step)


def _complete_delete_topic(step, p: int) -> None:
    """completeDeleteTopic: the replicas become NonExistentReplica and the topic's znodes are deleted."""
    step.replicas_to(_in_state(step, p, R_DELETION_SUCCESSFUL), R_NONEXISTENT)
    # controllerContext.removeTopic: the partition's state is dropped, not changed by the state machine (it is
    # NonExistentPartition since onTopicDeletion, unless that transition was refused).
    step.set_partition(p, Partition(P_NONEXISTENT, NO_LEADER, -1, 0), exempt="completeDeleteTopic")
    step.deletion[p] = D_DONE

