"""Broker-side procedures: LogManager's create-or-refuse decision, ReplicaManager's request handling,
the reaction to a failed log dir, and what a crash leaves behind."""
from __future__ import annotations

from .state import (
    E_NONE, E_STALE, E_STORAGE, GOOD, H_FOLLOWER, H_LEADER, H_NONE, H_OFFLINE, H_STOPPED, LIVE_DIR, OFFLINE,
    SERVING, Broker, PartitionMeta, replace_at,
)


def live_copy_dir(broker: Broker, p: int) -> int:
    """The live dir (good or saturated) holding the partition's log, or -1: what LogManager has loaded."""
    mask = broker.copies[p]
    for d, status in enumerate(broker.dirs):
        if mask >> d & 1 and LIVE_DIR[status]:
            return d
    return -1


def has_offline_dir(broker: Broker) -> bool:
    return OFFLINE in broker.dirs


def has_live_dir(broker: Broker) -> bool:
    return any(LIVE_DIR[s] for s in broker.dirs)


def choose_new_log_dir(broker: Broker) -> int:
    """LogManager.nextLogDirs: the good dir holding the fewest logs (lowest index on a tie), or -1."""
    best, best_count = -1, None
    for d, status in enumerate(broker.dirs):
        if status != GOOD:
            continue  # offline dirs are not live; a saturated dir takes no new replica (KIP-928)
        count = sum(1 for mask in broker.copies if mask >> d & 1)
        if best_count is None or count < best_count:
            best, best_count = d, count
    return best


def may_create_log(variant: str, broker: Broker, is_new: bool) -> bool:
    """LogManager.getOrCreateLog's KIP-112 check: a missing log with isNew=false and an offline dir is refused."""
    if variant == "legacy":
        return True  # before KIP-112 the broker had no isNew flag and always created a missing log
    return is_new or not has_offline_dir(broker)


def handle_leader_and_isr(variant: str, broker_id: int, broker: Broker, entries) -> tuple[Broker, tuple]:
    """ReplicaManager.becomeLeaderOrFollower for one request; returns the broker and its response."""
    copies, hosted, epoch = list(broker.copies), list(broker.hosted), list(broker.epoch)
    response = []
    for e in entries:
        p = e.partition
        if hosted[p] == H_OFFLINE:
            response.append((p, E_STORAGE))
            continue
        if hosted[p] != H_NONE and e.leader_epoch <= epoch[p]:
            response.append((p, E_STALE))  # the leader epoch is not newer: the request is ignored for it
            continue
        current = broker._replace(copies=tuple(copies))
        if live_copy_dir(current, p) < 0:
            d = choose_new_log_dir(current) if may_create_log(variant, current, e.is_new) else -1
            if d < 0:
                hosted[p] = H_OFFLINE  # KafkaStorageException: the partition is marked offline
                response.append((p, E_STORAGE))
                continue
            copies[p] |= 1 << d
        hosted[p] = H_LEADER if e.leader == broker_id else H_FOLLOWER
        epoch[p] = e.leader_epoch
        response.append((p, E_NONE))
    new = broker._replace(copies=tuple(copies), hosted=tuple(hosted), epoch=tuple(epoch))
    return new, tuple(response)


def handle_update_metadata(broker: Broker, entries) -> Broker:
    """The metadata cache takes the request's values for the partitions it names; the request is consumed."""
    meta = list(broker.meta)
    for e in entries:
        meta[e.partition] = PartitionMeta(e.leader, e.isr, e.offline)
    up, dirs, copies, hosted, epoch, _, inbox, replies = broker
    return Broker(up, dirs, copies, hosted, epoch, tuple(meta), inbox[1:], replies)


def handle_stop_replica(broker: Broker, partitions) -> Broker:
    """StopReplica(delete=false): the replica stops leading or fetching; an offline partition stays offline."""
    hosted = broker.hosted
    for p in partitions:
        if SERVING[hosted[p]]:
            hosted = replace_at(hosted, p, H_STOPPED)
    return broker._replace(hosted=hosted)


def fail_dir(broker: Broker, d: int) -> tuple[Broker, bool]:
    """A log dir fails. Returns the broker and whether it is still running (it halts with no live dir left)."""
    dirs = replace_at(broker.dirs, d, OFFLINE)
    if not broker.up:
        return broker._replace(dirs=dirs), False
    hosted = tuple(
        H_OFFLINE if (h != H_NONE and broker.copies[p] >> d & 1) else h for p, h in enumerate(broker.hosted)
    )
    failed = broker._replace(dirs=dirs, hosted=hosted)
    if not has_live_dir(failed):
        return crashed(failed), False
    return failed, True


def crashed(broker: Broker) -> Broker:
    """What survives a crash or halt: the disks. Memory, requests and unsent responses are gone."""
    n = len(broker.hosted)
    return broker._replace(
        up=False, hosted=(H_NONE,) * n, epoch=(-1,) * n, meta=(None,) * n, inbox=(), replies=()
    )
