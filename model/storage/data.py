"""The data path: logs, the leader's high watermark and the history of committed and acknowledged entries.

An entry is the leader epoch that appended it: one leader appends at most one entry at an offset in an epoch,
so (offset, epoch) names a record. The leader learns a follower's log end within the fetch step itself (the
fetch request and its response are one step), and counts only followers that fetch from it, i.e. host the
partition as followers at its leader epoch (KIP-320's fencing); any other ISR member holds the HW back.
"""
from __future__ import annotations

from model.storage.state import H_FOLLOWER, H_LEADER, LIVE_DIR, OFFLINE, State, replace_at


def matching_prefix(log: tuple, other: tuple) -> int:
    """How many leading entries the two logs share: where a follower truncates to (KIP-101/279)."""
    n = min(len(log), len(other))
    i = 0
    while i < n and log[i] == other[i]:
        i += 1
    return i


def leader_at_epoch(s: State, replicas, p: int, epoch: int) -> int:
    """The running broker among the replicas that hosts p as leader at this leader epoch, or -1 (an epoch has
    one leader)."""
    for b in replicas:
        broker = s.brokers[b]
        if broker.up and broker.hosted[p] == H_LEADER and broker.epoch[p] == epoch:
            return b
    return -1


def fetch_result(follower_log: tuple, leader_log: tuple) -> tuple:
    """One fetch: truncate to the longest prefix shared with the leader, then append the leader's next entry."""
    common = matching_prefix(follower_log, leader_log)
    if common < len(leader_log):
        return leader_log[:common + 1]
    return leader_log[:common]


def hw_candidate(s: State, p: int, leader: int) -> int:
    """The smallest log end over the leader's cached ISR, as the leader knows it: a member that does not fetch
    from it at its epoch counts as 0."""
    lb = s.brokers[leader]
    log, epoch, isr = lb.logs[p], lb.epoch[p], lb.isr[p]
    low = len(log)
    member = 0
    while isr >> member:
        if isr >> member & 1 and member != leader:
            fb = s.brokers[member]
            if fb.up and fb.hosted[p] == H_FOLLOWER and fb.epoch[p] == epoch:
                low = min(low, matching_prefix(fb.logs[p], log))
            else:
                return 0
        member += 1
    return low


def advance_hw(m, s: State, p: int, leader: int) -> State:
    """maybeIncrementLeaderHW: the leader's HW rises to the smallest ISR log end; entries passing it join the
    committed history and, if the leader's ISR has at least min.insync.replicas members, are acknowledged
    (Partition.checkEnoughReplicasReachOffset; else NOT_ENOUGH_REPLICAS_AFTER_APPEND). A mode whose model sets
    ``strict_min_isr`` (KRaft: Kafka 3.7+, KIP-966's rule, ELR or not) raises no HW while the leader's ISR is
    below min.insync.replicas (Partition.isUnderMinIsr)."""
    lb = s.brokers[leader]
    if getattr(m, "strict_min_isr", False) and bin(lb.isr[p]).count("1") < m.cfg.min_isr_of(p):
        return s  # KRaft's Partition.maybeIncrementLeaderHW (Kafka 3.7+): isUnderMinIsr holds the HW back
    old = lb.hw[p]
    new = hw_candidate(s, p, leader)
    if new <= old:
        return s
    lb = lb._replace(hw=replace_at(lb.hw, p, new))
    committed, acked = s.committed[p], s.acked[p]
    start = len(committed)
    if new > start:
        committed = committed + lb.logs[p][start:new]
    if bin(lb.isr[p]).count("1") >= m.cfg.min_isr_of(p):
        log = lb.logs[p]
        for offset in range(old, new):
            if log[offset] == committed[offset]:  # else a committed entry was lost and replaced: not this one
                acked |= 1 << offset
    return s._replace(brokers=replace_at(s.brokers, leader, lb), committed=replace_at(s.committed, p, committed),
                      acked=replace_at(s.acked, p, acked))


def advance_leaders(m, s: State, broker: int) -> State:
    """After a LeaderAndIsr: the HW of every partition the broker now leads may rise (e.g. an ISR of one)."""
    for p, h in enumerate(s.brokers[broker].hosted):
        if h == H_LEADER:
            s = advance_hw(m, s, p, broker)
    return s


def record_survives(m, s: State, p: int, offset: int) -> bool:
    """Some disk may still hold the committed record at this offset: a live log has it, or a broker has a copy
    of the partition on an offline dir (out of reach, not destroyed; its content is not kept, so it counts as
    holding the record)."""
    entry = s.committed[p][offset]
    for b in m.assignments[p]:
        broker = s.brokers[b]
        copies = broker.copies[p]
        live = offline = False
        for d, status in enumerate(broker.dirs):
            if copies >> d & 1:
                live = live or LIVE_DIR[status]
                offline = offline or status == OFFLINE
        if offline:
            return True
        log = broker.logs[p]
        if live and offset < len(log) and log[offset] == entry:
            return True
    return False


def note_wiped(m, s: State) -> State:
    """After a disk is replaced or removed: mark the partitions a committed record of which no disk holds."""
    wiped = s.wiped
    for p, committed in enumerate(s.committed):
        if not wiped >> p & 1 and not all(record_survives(m, s, p, o) for o in range(len(committed))):
            wiped |= 1 << p
    return s if wiped == s.wiped else s._replace(wiped=wiped)
