"""A broker's storage, as every controller mode has it: LogManager's create-or-refuse decision and the dirs
that hold a partition's log, the replicas it serves, the reaction to a failed, saturated or recovered log dir,
and deleting a log. How the broker handles its controller's requests is the controller mode's."""
from __future__ import annotations

from model.storage.state import (
    GOOD, H_NONE, H_OFFLINE, H_SATURATED, LIVE_DIR, OFFLINE, SATURATED, SERVING, Broker, replace_at,
)


def live_copy_dir(broker: Broker, p: int) -> int:
    """The live dir (good or saturated) holding the partition's log, or -1: what LogManager has loaded."""
    mask = broker.copies[p]
    for d, status in enumerate(broker.dirs):
        if mask >> d & 1 and LIVE_DIR[status]:
            return d
    return -1


def served_replicas(broker: Broker) -> list[tuple[int, int, int]]:
    """(partition, hosted, live dir or -1) of every replica the broker leads or follows."""
    return [(p, h, live_copy_dir(broker, p)) for p, h in enumerate(broker.hosted) if SERVING[h]]


def resize_log(broker: Broker, p: int, segs: int) -> Broker:
    """The broker with partition p's log at ``segs`` units (KIP-928's space), its live dir's use adjusted."""
    d = live_copy_dir(broker, p)
    return broker._replace(segs=replace_at(broker.segs, p, segs),
                           used=replace_at(broker.used, d, broker.used[d] + segs - broker.segs[p]))


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


def get_or_create_log(broker: Broker, p: int, may_create: bool) -> tuple[Broker, int]:
    """LogManager.getOrCreateLog for partition p: the broker and the live dir (good or saturated) holding p's log;
    if there is none and ``may_create``, a new empty log on the good dir with the fewest logs
    (``choose_new_log_dir``). -1 when there is no log and none may be or can be created (KafkaStorageException)."""
    found = live_copy_dir(broker, p)
    if found >= 0 or not may_create:
        return broker, found
    d = choose_new_log_dir(broker)
    if d < 0:
        return broker, -1
    return broker._replace(copies=replace_at(broker.copies, p, broker.copies[p] | 1 << d),
                           logs=replace_at(broker.logs, p, ()), segs=replace_at(broker.segs, p, 0)), d


def fail_dir(m, broker: Broker, d: int) -> tuple[Broker, bool]:
    """A log dir fails. Returns the broker and whether it is still running (it halts with no live dir left)."""
    dirs = replace_at(broker.dirs, d, OFFLINE)
    # The logs whose live copy was on d are out of reach for good (an offline dir never comes back).
    on_d = [live_copy_dir(broker, p) == d for p in range(len(broker.logs))]
    logs = tuple(() if x else log for x, log in zip(on_d, broker.logs))
    segs = tuple(0 if x else n for x, n in zip(on_d, broker.segs))
    if not broker.up:
        return broker._replace(dirs=dirs, logs=logs, segs=segs), False
    lost = [broker.copies[p] >> d & 1 and h != H_NONE for p, h in enumerate(broker.hosted)]
    hosted = tuple(H_OFFLINE if x else h for x, h in zip(lost, broker.hosted))
    hw = tuple(0 if x else v for x, v in zip(lost, broker.hw))
    isr = tuple(0 if x else v for x, v in zip(lost, broker.isr))
    failed = broker._replace(dirs=dirs, hosted=hosted, logs=logs, hw=hw, isr=isr, segs=segs)
    if not has_live_dir(failed):
        return m.crashed(failed), False
    return failed, True


def saturate_dir(broker: Broker, d: int) -> Broker:
    """KIP-928: a write to dir d failed for lack of space. The dir is saturated, its reserved file (if any) is
    deleted, and the replicas the broker hosts on it become saturated: no longer led or fetched."""
    on_d = [broker.hosted[p] != H_NONE and live_copy_dir(broker, p) == d for p in range(len(broker.hosted))]
    hosted = tuple(H_SATURATED if x else h for x, h in zip(on_d, broker.hosted))
    hw = tuple(0 if x else v for x, v in zip(on_d, broker.hw))
    isr = tuple(0 if x else v for x, v in zip(on_d, broker.isr))
    used, reserved = broker.used, broker.reserved
    if reserved >> d & 1:
        used, reserved = replace_at(used, d, used[d] - 1), reserved & ~(1 << d)
    return broker._replace(dirs=replace_at(broker.dirs, d, SATURATED), hosted=hosted, hw=hw, isr=isr, used=used,
                           reserved=reserved)


def recover_dir(broker: Broker, d: int, reserves: bool) -> Broker:
    """A saturated dir d has space again and is good: its saturated replicas are no longer hosted (as after a
    restart: the logs are loaded, nothing is hosted until a LeaderAndIsr) and, if reserves, the reserved file is
    written again."""
    on_d = [h == H_SATURATED and live_copy_dir(broker, p) == d for p, h in enumerate(broker.hosted)]
    hosted = tuple(H_NONE if x else h for x, h in zip(on_d, broker.hosted))
    epoch = tuple(-1 if x else e for x, e in zip(on_d, broker.epoch))
    used, reserved = broker.used, broker.reserved
    if reserves:
        used, reserved = replace_at(used, d, used[d] + 1), reserved | 1 << d
    return broker._replace(dirs=replace_at(broker.dirs, d, GOOD), hosted=hosted, epoch=epoch, used=used,
                           reserved=reserved)


def live_dirs(broker: Broker) -> tuple[int, ...]:
    """The broker's dirs it can read and write now (not failed, not removed from log.dirs), in dir order."""
    return tuple(d for d, status in enumerate(broker.dirs) if LIVE_DIR[status])


def live_dir_mask(broker: Broker) -> int:
    return sum(1 << d for d in live_dirs(broker))


def delete_log(broker: Broker, p: int) -> Broker:
    """The partition's log on its live dirs is deleted, with the space it took; a copy on an offline dir stays."""
    live_dirs = live_dir_mask(broker)
    d = live_copy_dir(broker, p)
    used = broker.used if d < 0 else replace_at(broker.used, d, broker.used[d] - broker.segs[p])
    return broker._replace(
        copies=replace_at(broker.copies, p, broker.copies[p] & ~live_dirs), logs=replace_at(broker.logs, p, ()),
        segs=replace_at(broker.segs, p, 0), used=used, hosted=replace_at(broker.hosted, p, H_NONE),
        epoch=replace_at(broker.epoch, p, -1), hw=replace_at(broker.hw, p, 0), isr=replace_at(broker.isr, p, 0),
    )
