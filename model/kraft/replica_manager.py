"""The broker's side of a metadata delta (ReplicaManager.applyDelta): per local replica, the three-gate
create-or-not decision that replaces ZooKeeper mode's isNewReplica, then the role it takes; and the
AssignReplicasToDirs it queues when the dir it used differs from the one the delta listed.

Hosted states (model/storage/state.py H_*), as ReplicaManager's HostedPartition: H_NONE = no entry, H_OFFLINE =
Offline, H_STOPPED = Online without a log it serves (log creation was skipped by gate 2), H_LEADER and
H_FOLLOWER = Online and served.
"""
from __future__ import annotations

from model.kraft.metadata import UNASSIGNED, PartitionState
from model.storage.broker import has_offline_dir, live_copy_dir
from model.storage.state import GOOD, H_FOLLOWER, H_LEADER, H_NONE, H_OFFLINE, H_STOPPED, LIVE_DIR, Broker, replace_at

# Why a replica's delta ended where it did (tests and docs name the gates).
SKIPPED_OFFLINE, SKIPPED_DIR, STORAGE_ERROR, CREATED, FOUND = (
    "gate 1: Offline, skipped", "gate 2: not created", "gate 3: storage error", "created", "found")


def _target_or_least_loaded(broker: Broker, target: int | None) -> int:
    """LogManager.getOrCreateLog's dir: the target dir if it is a good dir of the broker, else the good dir with
    the fewest logs (lowest index on a tie), or -1."""
    if target is not None and 0 <= target < len(broker.dirs) and broker.dirs[target] == GOOD:
        return target
    best, best_count = -1, None
    for d, status in enumerate(broker.dirs):
        if status == GOOD:
            count = sum(1 for mask in broker.copies if mask >> d & 1)
            if best_count is None or count < best_count:
                best, best_count = d, count
    return best


def gate2_allows(broker: Broker, listed: int) -> bool:
    """Partition.createLogInAssignedDirectoryId: create iff the listed dir is live here, or the broker has no
    offline dir, or the dir is UNASSIGNED."""
    live_here = 0 <= listed < len(broker.dirs) and LIVE_DIR[broker.dirs[listed]]
    return live_here or not has_offline_dir(broker) or listed == UNASSIGNED


def apply_local(broker_id: int, broker: Broker, p: int, part: PartitionState, listed: int | None,
                bugs: tuple = ()) -> tuple[Broker, str]:
    """One local replica of a delta (applyLocalLeadersDelta / applyLocalFollowersDelta): the broker after it, and
    which gate decided. ``listed``: the replica's dir if the delta listed it (TopicDelta.localChanges), else None.
    ``bugs``: fixed Kafka bugs re-introduced (model/kraft/bugs.py)."""
    hosted = broker.hosted[p]
    # Gate 1, ReplicaManager.getOrCreatePartition: Offline (same topic id: one topic per partition here) is skipped.
    # KAFKA-16234 (before 3.7.1): the Offline partition's topic id came from its log, gone with the dir, so the
    # partition counted as one of another topic: a new partition.
    if hosted == H_OFFLINE and "KAFKA-16234" not in bugs:
        return broker, SKIPPED_OFFLINE
    is_new = hosted in (H_NONE, H_OFFLINE)
    found = live_copy_dir(broker, p)
    outcome = FOUND
    if found < 0:
        # Gate 2, Partition.createLogInAssignedDirectoryId, when the delta listed the replica's dir.
        if listed is not None and not gate2_allows(broker, listed):
            return broker._replace(hosted=replace_at(broker.hosted, p, H_STOPPED)), SKIPPED_DIR
        # Gate 3, LogManager.getOrCreateLog: an old replica with a dir offline is a KafkaStorageException.
        d = -1 if (not is_new and has_offline_dir(broker)) else _target_or_least_loaded(broker, listed)
        if d < 0:
            return broker._replace(hosted=replace_at(broker.hosted, p, H_OFFLINE), hw=replace_at(broker.hw, p, 0),
                                   isr=replace_at(broker.isr, p, 0)), STORAGE_ERROR
        broker = broker._replace(copies=replace_at(broker.copies, p, broker.copies[p] | 1 << d),
                                 logs=replace_at(broker.logs, p, ()))
        outcome = CREATED
    if part.leader == broker_id:
        hw = broker.hw[p] if hosted == H_LEADER else 0
        broker = broker._replace(hosted=replace_at(broker.hosted, p, H_LEADER), hw=replace_at(broker.hw, p, hw),
                                 isr=replace_at(broker.isr, p, part.isr))
    else:
        broker = broker._replace(hosted=replace_at(broker.hosted, p, H_FOLLOWER), hw=replace_at(broker.hw, p, 0),
                                 isr=replace_at(broker.isr, p, 0))
    return broker._replace(epoch=replace_at(broker.epoch, p, part.leader_epoch)), outcome


def queue_assignment(broker: Broker, p: int, listed: int) -> Broker:
    """After a delta that listed the replica's dir: if its log is on another dir, AssignmentsManager.onAssignment
    queues (partition, actual dir), replacing any queued entry for the partition."""
    actual = live_copy_dir(broker, p)
    if actual < 0 or actual == listed:
        return broker
    queue = tuple(e for e in broker.queue if e[0] != p) + ((p, actual),)
    return broker._replace(queue=queue)


def requeue_inflight(broker: Broker) -> Broker:
    """AssignmentsManager.handleResponse on a global error (a stale broker epoch, a failed or lost request): the
    request's entries go back to the queue (``putIfAbsent``: not over a newer entry for the same partition), and
    nothing is in flight."""
    newer = {p for p, _ in broker.queue}
    queue = tuple(e for e in broker.inflight if e[0] not in newer) + broker.queue
    return broker._replace(inflight=(), queue=queue)
