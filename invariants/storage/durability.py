"""Durability: what the producer was told is safe stays safe, and the consumer sees it once, in order."""
from __future__ import annotations

from model.storage.state import D_NONE, H_LEADER, NO_LEADER, bits

from model.spec.invariant import invariant


def serving_leader(state, p: int) -> int:
    """The partition's leader in ZooKeeper, if it runs and leads at the record's epoch, else -1."""
    part = state.controller.partitions[p]
    leader = part.leader
    if leader == NO_LEADER:
        return -1
    b = state.brokers[leader]
    if b.up and b.hosted[p] == H_LEADER and b.epoch[p] == part.leader_epoch:
        return leader
    return -1


def lapsed(state, p: int) -> bool:
    """The durability guarantees no longer apply to the partition: no disk holds one of its committed records
    (wiped), or its topic is being deleted or was deleted (the user asked for its records to go)."""
    return bool(state.wiped >> p & 1) or state.controller.deletion[p] != D_NONE


def _entry(epoch: int) -> str:
    return f"the record appended in leader epoch {epoch}"


@invariant(
    "no_acked_record_lost", kind="state", symmetric=True,
    reads=("broker[*].up", "broker[*].hosted", "broker[*].epoch", "broker[*].logs", "controller.partitions",
           "controller.deletion", "committed", "acked", "wiped"),
    statement="Whenever a partition has a leader (the one in ZooKeeper, serving at its epoch), every acknowledged "
              "record is in that leader's log at its offset; the guarantee lapses for a partition once no disk "
              "holds one of its committed records (every copy was on disks replaced or removed from the config), or "
              "once its topic is being deleted.",
    reference="KIP-112 Motivation and test plan (no message loss); acks=all with min.insync.replicas",
)
def no_acked_record_lost(model, state):
    for p, acked in enumerate(state.acked):
        if not acked or lapsed(state, p):
            continue
        leader = serving_leader(state, p)
        if leader < 0:
            continue
        log, committed = state.brokers[leader].logs[p], state.committed[p]
        for offset in bits(acked):
            if offset >= len(log) or log[offset] != committed[offset]:
                held = "nothing" if offset >= len(log) else _entry(log[offset])
                return (f"partition {p}'s leader {leader} has {held} at offset {offset}, where the acknowledged "
                        f"record is {_entry(committed[offset])}")
    return None


@invariant(
    "isr_logs_agree_below_hw", kind="state", symmetric=True,
    reads=("broker[*].up", "broker[*].hosted", "broker[*].epoch", "broker[*].logs", "broker[*].hw",
           "controller.partitions"),
    statement="Every member of a partition's ISR agrees with the leader on every entry it holds below the "
              "leader's high watermark.",
    reference="ReplicaFetcherThread, Partition.maybeIncrementLeaderHW: the HW is the offset below which every ISR member has the leader's log",
)
def isr_logs_agree_below_hw(model, state):
    for p in range(model.cfg.partitions):
        leader = serving_leader(state, p)
        if leader < 0:
            continue
        lb = state.brokers[leader]
        hw, log = lb.hw[p], lb.logs[p]
        for member in bits(state.controller.partitions[p].isr):
            if member == leader:
                continue
            other = state.brokers[member].logs[p]
            for offset in range(min(hw, len(other))):
                if other[offset] != log[offset]:
                    return (f"partition {p}: ISR member {member} has {_entry(other[offset])} at offset {offset}, "
                            f"below the HW {hw}, where leader {leader} has {_entry(log[offset])}")
    return None


@invariant(
    "consumer_sees_no_loss_or_duplicate", kind="state", symmetric=True,
    reads=("committed", "consumed", "wiped", "controller.deletion"),
    statement="What the consumer read is a gap-free, duplicate-free prefix of the committed records (those that "
              "passed a high watermark, which include every acknowledged record), in order; the guarantee lapses for "
              "a partition once no disk holds one of its committed records, or once its topic is being deleted.",
    reference="KIP-112 test plan (a producer and a consumer work without message loss or duplication)",
)
def consumer_sees_no_loss_or_duplicate(model, state):
    for p, read in enumerate(state.consumed):
        if lapsed(state, p):
            continue
        committed = state.committed[p]
        if committed[:len(read)] != read:
            offset = next(i for i, e in enumerate(read) if i >= len(committed) or committed[i] != e)
            expected = "no committed record" if offset >= len(committed) else _entry(committed[offset])
            return (f"partition {p}: the consumer read {_entry(read[offset])} at offset {offset}, where the "
                    f"committed history has {expected}")
    return None


@invariant(
    "reads_below_hw_are_committed", kind="state", symmetric=True,
    reads=("broker[*].up", "broker[*].hosted", "broker[*].logs", "broker[*].hw", "committed", "wiped",
           "controller.deletion"),
    statement="Every broker that leads a partition holds, below its high watermark, exactly the committed records: "
              "any consumer, reading from any leader at any time, sees no loss and no duplicate; the guarantee "
              "lapses for a partition once no disk holds one of its committed records, or once its topic is being "
              "deleted.",
    reference="KIP-112 test plan (a consumer works without message loss or duplication); Log.read up to the HW",
)
def reads_below_hw_are_committed(model, state):
    # Equivalent to consumer_sees_no_loss_or_duplicate for every consumer schedule: a consumer may wait and then
    # read from this leader offset by offset, so a mismatch here is one some consumer reads (docs/model.md, 9).
    for p in range(model.cfg.partitions):
        if lapsed(state, p):
            continue
        committed = state.committed[p]
        for b in model.assignments[p]:
            broker = state.brokers[b]
            hw = broker.hw[p]
            if hw and broker.up and broker.hosted[p] == H_LEADER and broker.logs[p][:hw] != committed[:hw]:
                log = broker.logs[p]
                offset = next(o for o in range(hw) if o >= len(committed) or log[o] != committed[o])
                expected = "no committed record" if offset >= len(committed) else _entry(committed[offset])
                return (f"partition {p}: leader {b} would serve {_entry(log[offset])} at offset {offset}, below its HW "
                        f"{hw}, where the committed history has {expected}")
    return None
