"""The broker's side of a metadata delta (ReplicaManager.applyDelta): per local replica, the three-gate
create-or-not decision that replaces ZooKeeper mode's isNewReplica, then the role it takes; and the
AssignReplicasToDirs it queues when the dir it used differs from the one the delta listed.

Hosted states (model/storage/state.py H_*), as ReplicaManager's HostedPartition: H_NONE = no entry, H_OFFLINE =
Offline, H_STOPPED = Online without a log it serves (log creation was skipped by gate 2), H_LEADER and
H_FOLLOWER = Online and served; H_SATURATED (only with KIP-928's saturation, model/kraft/saturation.py) = its log
is on a saturated dir: not served, but retention and deletion reach it.
"""
from __future__ import annotations

from model.kraft.disks import id_of, index_of
from model.kraft.fixes import gate2_exempts_unassigned
from model.kraft.metadata import UNASSIGNED, PartitionState
from model.storage.broker import delete_log, has_offline_dir, live_copy_dir
from model.storage.state import (
    GOOD, H_FOLLOWER, H_LEADER, H_NONE, H_OFFLINE, H_SATURATED, H_STOPPED, LIVE_DIR, SATURATED, Broker, replace_at,
)

# Why a replica's delta ended where it did (tests and docs name the gates).
SKIPPED_OFFLINE, SKIPPED_DIR, STORAGE_ERROR, CREATED, FOUND, SATURATED_LOG = (
    "gate 1: Offline, skipped", "gate 2: not created", "gate 3: storage error", "created", "found",
    "found on a saturated dir: not served")


def _target_or_least_loaded(broker: Broker, target: int | None) -> int:
    """LogManager.getOrCreateLog's dir: the target dir id's if it is a good dir of the broker (one of its current
    disks), else the good dir with the fewest logs (lowest index on a tie), or -1."""
    d = -1 if target is None else index_of(broker, target)
    if d >= 0 and broker.dirs[d] == GOOD:
        return d
    best, best_count = -1, None
    for d, status in enumerate(broker.dirs):
        if status == GOOD:
            count = sum(1 for mask in broker.copies if mask >> d & 1)
            if best_count is None or count < best_count:
                best, best_count = d, count
    return best


def gate2_allows(broker: Broker, listed: int, exempts_unassigned: bool = True) -> bool:
    """Partition.createLogInAssignedDirectoryId: create iff the listed dir id is a live dir here
    (LogManager.onlineLogDirId: an id of a disk the broker no longer has is not), or the broker has no offline dir,
    or the dir is UNASSIGNED (not with the candidate fix gate2-strict: ``exempts_unassigned``)."""
    here = index_of(broker, listed)
    live_here = here >= 0 and LIVE_DIR[broker.dirs[here]]
    return live_here or not has_offline_dir(broker) or (exempts_unassigned and listed == UNASSIGNED)


def apply_local(broker_id: int, broker: Broker, p: int, part: PartitionState, listed: int | None,
                bugs: tuple = (), fixes: tuple = ()) -> tuple[Broker, str]:
    """One local replica of a delta (applyLocalLeadersDelta / applyLocalFollowersDelta): the broker after it, and
    which gate decided. ``listed``: the replica's dir if the delta listed it (TopicDelta.localChanges), else None.
    ``bugs``: fixed Kafka bugs re-introduced (model/kraft/bugs.py); ``fixes``: candidate fixes applied
    (model/kraft/fixes.py)."""
    hosted = broker.hosted[p]
    # Gate 1, ReplicaManager.getOrCreatePartition: Offline with the delta's topic id is skipped; with another one
    # (the topic was deleted and re-created) the partition is new.
    # KAFKA-16234 (before 3.7.1): the Offline partition's topic id came from its log, gone with the dir, so the
    # partition counted as one of another topic: a new partition.
    # KAFKA-16157 (before 3.7.0): HostedPartition.Offline kept no topic id: every Offline partition is skipped, so
    # a re-created topic is never hosted here.
    if hosted == H_OFFLINE and ("KAFKA-16157" in bugs
                                or (broker.topics[p] == part.topic and "KAFKA-16234" not in bugs)):
        return broker, SKIPPED_OFFLINE
    is_new = hosted in (H_NONE, H_OFFLINE)
    broker = broker._replace(topics=replace_at(broker.topics, p, part.topic))
    found = live_copy_dir(broker, p)
    if found >= 0 and broker.dirs[found] == SATURATED:
        # KIP-928 (the model's reading on KRaft): the log's dir is saturated, so the replica is neither led nor
        # followed, whatever the delta says; it keeps its log for retention and deletion.
        return broker._replace(hosted=replace_at(broker.hosted, p, H_SATURATED), hw=replace_at(broker.hw, p, 0),
                               isr=replace_at(broker.isr, p, 0)), SATURATED_LOG
    outcome = FOUND
    if found < 0:
        # Gate 2, Partition.createLogInAssignedDirectoryId, when the delta listed the replica's dir.
        if listed is not None and not gate2_allows(broker, listed, gate2_exempts_unassigned(fixes)):
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


def in_kafka_order(entries) -> tuple:
    """AssignmentsManager keeps its assignments in maps keyed by TopicIdPartition (``ready``, ``inflight``: 3.7.1 and
    later; ``pending`` in 3.7.0) and builds each request from a map (``buildRequestData``, grouped by directory), so
    the order of a queue or a request is a function of its set of entries, never of their arrival. The model's
    queue and request are tuples in one canonical order, by (partition, topic id): the key, unique in a queue (a
    dir rename of the symmetry reduction keeps the order)."""
    return tuple(sorted(entries, key=lambda e: (e[0], e[2])))


def enqueue(queue: tuple, p: int, d: int, topic: int) -> tuple:
    """AssignmentsManager.onAssignment (``ready.put``): (p, d, topic id) replaces any queued entry for the same
    TopicIdPartition."""
    return in_kafka_order([e for e in queue if e[::2] != (p, topic)] + [(p, d, topic)])


def queue_assignment(broker: Broker, p: int, listed: int, topic: int) -> Broker:
    """After a delta that listed the replica's dir: if its log is on another dir (another id: a replaced disk's old
    id names none of its dirs), AssignmentsManager.onAssignment queues (partition, actual dir's id, topic id),
    replacing any queued entry for the partition of that topic id (its TopicIdPartition)."""
    actual = live_copy_dir(broker, p)
    if actual < 0 or id_of(broker, actual) == listed:
        return broker
    return broker._replace(queue=enqueue(broker.queue, p, id_of(broker, actual), topic))


def label_stray(before: Broker, after: Broker, p: int, deleted: bool) -> Broker:
    """A copy created for a topic the controller has deleted already (a broker replaying behind the log) is that
    topic's: labelled stray, as DeleteTopic labels the copies existing when it runs (the model's stand-in for
    the topic id in each log's partition.metadata)."""
    new = after.copies[p] & ~before.copies[p]
    if not (deleted and new):
        return after
    return after._replace(stray=replace_at(after.stray, p, after.stray[p] | new))


def drop_stray(broker: Broker, p: int) -> Broker:
    """The copies of a deleted topic's partition (``stray``) leave the broker's copies: those on live dirs are
    deleted (LogManager.asyncDelete, or at start-up LogManager's stray logs), those on offline dirs are out of
    reach for good (a repair empties the dir)."""
    if not broker.stray[p]:
        return broker
    d = live_copy_dir(broker, p)
    if d >= 0 and broker.stray[p] >> d & 1 and broker.segs[p]:
        # The deleted log's space is freed (KIP-928's units; without saturation segs stay 0).
        broker = broker._replace(used=replace_at(broker.used, d, broker.used[d] - broker.segs[p]),
                                 segs=replace_at(broker.segs, p, 0))
    return broker._replace(copies=replace_at(broker.copies, p, broker.copies[p] & ~broker.stray[p]),
                           stray=replace_at(broker.stray, p, 0))


def stop_and_delete(broker: Broker, p: int) -> Broker:
    """ReplicaManager.stopPartitions(deleteLocalLog = true) for a replica the delta deletes (its topic was deleted,
    or the broker is no longer a replica): an Online partition is removed and its log deleted from its live dirs;
    an Offline one stays Offline (its log is out of reach); then the deleted topic's copies are dropped."""
    if broker.hosted[p] == H_OFFLINE:
        return drop_stray(broker, p)
    broker = delete_log(broker, p)._replace(topics=replace_at(broker.topics, p, 0))
    return drop_stray(broker, p)


def requeue_inflight(broker: Broker) -> Broker:
    """AssignmentsManager.handleResponse on a global error (a stale broker epoch, a failed or lost request): the
    request's entries go back to the queue (``putIfAbsent``: not over a newer entry for the same partition), and
    nothing is in flight."""
    newer = {e[::2] for e in broker.queue}  # (partition, topic id): the key of a TopicIdPartition
    return broker._replace(inflight=(), queue=in_kafka_order(
        [e for e in broker.inflight if e[::2] not in newer] + list(broker.queue)))
