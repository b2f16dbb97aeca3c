"""The data path's rules: a producer (acks=all), follower fetching, the leader's ISR changes and a consumer.

They are enabled only with --max-records at least 1. References name the Kafka code followed; the KIP-112
test plan validates every scenario with "a producer and a consumer work without message loss or duplication".
"""
from __future__ import annotations


from model.storage.data import advance_hw, fetch_result, leader_at_epoch, matching_prefix
from model.storage.broker import live_copy_dir
from model.storage.mode import ISR_RECORD, ISR_RECORD_READS, ISR_WRITER_READS, declares
from model.storage.footprints import FETCH_READS, LEADER_HW_READS
from model.spec.feature import Feature, Flag
from model.storage.state import GOOD, H_FOLLOWER, H_LEADER, State, replace_at, with_broker

DATA = Feature(
    "data",
    "The data path: a producer with acks=all and min.insync.replicas, followers fetching and truncating by leader "
    "epoch, the high watermark, ISR shrink and expansion, and a consumer",
    config_fields=("max_records", "min_isr", "consumer"),
    flags=(
        Flag("max_records", "--max-records",
             "Entries a log may hold (Produce's bound): one value, or one per partition; 0: no data.",
             "per-partition", metavar="N[,N...]"),
        Flag("min_isr", "--min-isr", "min.insync.replicas: one value, or one per partition (e.g. 1,2).",
             "per-partition", metavar="N[,N...]"),
        Flag("consumer", "--consumer/--no-consumer",
             "An explicit consumer (the Consume rule); without it reads_below_hw_are_committed covers every "
             "consumer."),
    ),
)


@declares(reads=(), writes=())
def fetch_refused(m, s, partition, follower, leader) -> str | None:
    """Why the leader refuses the follower's fetch, or None: never here, as a leader at the follower's leader epoch
    knows its replicas in both modes; a KRaft reassignment adds a replica without a new leader epoch
    (model/kraft/reassignment.py overrides this hook)."""
    return None


DATA.hooks.update({"fetch_refused": fetch_refused})


def _replicas(m):
    """(broker, partition) for every assigned replica of a partition that carries records."""
    return [(b, p) for p in range(m.cfg.partitions) if m.cfg.max_records_of(p) > 0 for b in m.assignments[p]]


def _consumer_replicas(m):
    return _replicas(m) if m.cfg.consumer else []


def _partition_followers(m):
    """(partition, follower) for every assigned replica: the follower an ISR change names."""
    return [(p, b) for b, p in _replicas(m)]


def _with_log(s: State, b: int, p: int, log: tuple) -> State:
    broker = s.brokers[b]
    return with_broker(s, b, broker._replace(logs=replace_at(broker.logs, p, log)))


def _writable(broker, p: int) -> bool:
    """The replica's log is on a good dir: it can be appended to (not offline, not saturated: KIP-928)."""
    d = live_copy_dir(broker, p)
    return d >= 0 and broker.dirs[d] == GOOD


def _guard_produce(m, s, broker, partition):
    b = s.brokers[broker]
    if not b.up or b.hosted[partition] != H_LEADER:
        return f"broker {broker} does not lead partition {partition}"
    if not _writable(b, partition):
        return f"broker {broker}'s log of partition {partition} is not on a good dir"
    limit = m.cfg.max_records_of(partition)
    if len(b.logs[partition]) >= limit:
        return f"the log holds --max-records {limit} entries"
    min_isr = m.cfg.min_isr_of(partition)
    if bin(b.isr[partition]).count("1") < min_isr:
        return f"the ISR is smaller than min.insync.replicas {min_isr} (NOT_ENOUGH_REPLICAS)"
    return None


@DATA.rule("Produce",
      guard_reads=("broker[broker].up", "broker[broker].hosted", "broker[broker].copies", "broker[broker].dirs", "broker[broker].logs", "broker[broker].isr"),
      reads=("broker[broker]",) + LEADER_HW_READS, writes=("broker[broker].logs", "broker[broker].hw", "committed", "acked"),
      params=("broker", "partition"), domain=_replicas, guard=_guard_produce, kind="client",
      reference="KIP-112 test plan (a producer works without message loss); Partition.appendRecordsToLeader (acks=all)")
def produce(m, s, broker, partition):
    """A producer (acks=all) sends a record to a broker that leads the partition on a good dir, whose cached ISR
    has at least min.insync.replicas members: the leader appends an entry tagged with its leader epoch. The
    record is acknowledged when the leader's HW passes it (see ReplicaFetch)."""
    b = s.brokers[broker]
    s = _with_log(s, broker, partition, b.logs[partition] + (b.epoch[partition],))
    return advance_hw(m, s, partition, broker)


def _leader_for(m, s, broker, partition) -> int:
    b = s.brokers[broker]
    return leader_at_epoch(s, m.assignments[partition], partition, b.epoch[partition])


def _guard_fetch(m, s, broker, partition):
    b = s.brokers[broker]
    if not b.up or b.hosted[partition] != H_FOLLOWER:
        return f"broker {broker} does not follow partition {partition}"
    if not _writable(b, partition):
        return f"broker {broker}'s log of partition {partition} is not on a good dir (its fetcher is stopped)"
    leader = _leader_for(m, s, broker, partition)
    if leader < 0:
        return f"no running broker leads partition {partition} at broker {broker}'s leader epoch"
    refused = m.hooks.fetch_refused(m, s, partition, broker, leader)
    if refused is not None:
        return refused
    if _fetched(m, s, broker, partition, leader) == s:
        return (f"a fetch by broker {broker} would change nothing: its log of partition {partition} is the "
                f"leader's, the ISR stays as it is and so does the leader's HW")
    return None


def epoch_start_offset(log: tuple, epoch: int) -> int:
    """Where the leader's current epoch began: its first entry of that epoch, else its log end (it has
    appended nothing since it became leader at this epoch, because it appends with its current epoch)."""
    for offset, entry in enumerate(log):
        if entry >= epoch:
            return offset
    return len(log)


def _joins_isr(m, s, partition, follower, leader) -> bool:
    """maybeExpandIsr: the follower is out of the leader's ISR, its log has reached both the leader's HW and
    the start of the leader's current epoch (KAFKA-7128), and the leader may write the ISR (the controller
    mode's ``isr_writer``; in ZooKeeper mode: the conditional ISR write succeeds)."""
    lb = s.brokers[leader]
    if lb.isr[partition] >> follower & 1 or m.hooks.isr_writer(m, s, partition) != leader:
        return False
    log = lb.logs[partition]
    shared = matching_prefix(s.brokers[follower].logs[partition], log)
    return shared >= lb.hw[partition] and shared >= epoch_start_offset(log, lb.epoch[partition])


def _fetched(m, s, broker, partition, leader) -> State:
    log = fetch_result(s.brokers[broker].logs[partition], s.brokers[leader].logs[partition])
    if log != s.brokers[broker].logs[partition]:
        s = _with_log(s, broker, partition, log)
    if _joins_isr(m, s, partition, broker, leader):
        return _change_isr(m, s, partition, broker, expand=True)
    return advance_hw(m, s, partition, leader)


# What a fetch and an ISR shrink read wherever their leader is (the leader is looked up among every broker's roles
# and epochs, the HW among the ISR members' logs): with the leader known, only its HW and ISR are touched.
_LEADER_LOOKUP_READS = ("broker[*].up", "broker[*].hosted", "broker[*].epoch", "broker[*].logs", *ISR_WRITER_READS,
                        *ISR_RECORD_READS, "committed", "acked")


def _fetch_footprint(m, s, broker, partition):
    """ReplicaFetch's footprint when enabled: the follower's log, the leader's HW and ISR (not every broker's)."""
    leader = _leader_for(m, s, broker, partition)
    return ((f"broker[{broker}].copies", f"broker[{broker}].dirs", f"broker[{leader}].hw", f"broker[{leader}].isr",
             "@fetch_refused.reads") + _LEADER_LOOKUP_READS,
            (f"broker[{broker}].logs", f"broker[{leader}].hw", f"broker[{leader}].isr", *ISR_RECORD,
             "committed", "acked"))


@DATA.rule("ReplicaFetch",
      reads=FETCH_READS, writes=("broker[*].logs", "broker[*].hw", "broker[*].isr", *ISR_RECORD,
      "committed", "acked"), footprint_at=_fetch_footprint,
      params=("broker", "partition"), domain=_replicas, guard=_guard_fetch, kind="broker",
      reference="ReplicaFetcherThread (truncation by leader epoch, KIP-101/279); Partition.maybeIncrementLeaderHW")
def replica_fetch(m, s, broker, partition):
    """A follower fetches from the broker that leads at its leader epoch: it truncates its log to the longest
    prefix it shares with the leader's, then appends the leader's next entry. The leader learns the follower's
    log end and raises its HW to the smallest log end over its ISR; entries passing it are committed, and
    acknowledged if the ISR has at least min.insync.replicas members. If the follower is out of the ISR, its log
    has reached the HW and the start of the leader's current epoch (KAFKA-7128), and the leader is the one in
    ZooKeeper, the leader adds it to the ISR in the same step (Partition.updateFollowerFetchState calls
    maybeExpandIsr), in ZooKeeper and its cache. The step is enabled when the fetch changes something: the
    follower's log, the ISR or the leader's HW (a caught-up follower's fetch still moves a new leader's HW)."""
    return _fetched(m, s, broker, partition, _leader_for(m, s, broker, partition))


def _guard_shrink_isr(m, s, partition, follower):
    leader = m.hooks.isr_writer(m, s, partition)
    if leader < 0:
        return f"no broker leads partition {partition} at the leader epoch in the controller's record"
    lb = s.brokers[leader]
    if follower == leader or not lb.isr[partition] >> follower & 1:
        return f"broker {follower} is not a follower in the ISR"
    if matching_prefix(s.brokers[follower].logs[partition], lb.logs[partition]) >= len(lb.logs[partition]):
        return f"broker {follower} is caught up with the leader"
    return None


def _shrink_footprint(leader: int):
    """LeaderShrinkIsr's footprint when enabled: the current leader's ISR and HW (not every broker's)."""
    mine = (f"broker[{leader}].isr", f"broker[{leader}].hw")
    return mine + _LEADER_LOOKUP_READS, mine + (*ISR_RECORD, "committed", "acked")


def _change_isr(m, s, partition, follower, expand: bool) -> State:
    leader = m.hooks.isr_writer(m, s, partition)
    lb = s.brokers[leader]
    isr = lb.isr[partition] | (1 << follower) if expand else lb.isr[partition] & ~(1 << follower)
    lb = lb._replace(isr=replace_at(lb.isr, partition, isr))
    s = m.hooks.isr_written(m, with_broker(s, leader, lb), partition, isr)
    return advance_hw(m, s, partition, leader)


@DATA.rule("LeaderShrinkIsr",
      reads=ISR_WRITER_READS + ISR_RECORD_READS + LEADER_HW_READS,
      writes=("broker[*].isr", "broker[*].hw", *ISR_RECORD, "committed", "acked"),
      footprint_at=lambda m, s, partition, follower: _shrink_footprint(m.hooks.isr_writer(m, s, partition)),
      params=("partition", "follower"), domain=_partition_followers,
      guard=_guard_shrink_isr, kind="broker",
      reference="Partition.maybeShrinkIsr (replica.lag.time.max.ms), ZooKeeper-era conditional ISR update")
def leader_shrink_isr(m, s, partition, follower):
    """The current leader removes from the ISR a follower whose log is not caught up with its own (it lagged
    longer than replica.lag.time.max.ms: the model leaves the timing free), writing the new ISR to ZooKeeper
    and its cache; its HW may then rise."""
    return _change_isr(m, s, partition, follower, expand=False)


def _guard_consume(m, s, broker, partition):
    b = s.brokers[broker]
    if not b.up or b.hosted[partition] != H_LEADER:
        return f"broker {broker} does not lead partition {partition}"
    if live_copy_dir(b, partition) < 0:
        return f"broker {broker} has no live copy of partition {partition}"
    if len(s.consumed[partition]) >= b.hw[partition]:
        return f"the consumer has read up to broker {broker}'s HW {b.hw[partition]}"
    return None


@DATA.rule("Consume",
      guard_reads=("broker[broker].up", "broker[broker].hosted", "broker[broker].copies", "broker[broker].dirs", "broker[broker].hw", "consumed"),
      reads=("broker[broker]", "consumed"), writes=("consumed",),
      params=("broker", "partition"), domain=_consumer_replicas, guard=_guard_consume, kind="client",
      reference="KIP-112 test plan (a consumer works without message loss or duplication); fetch up to the HW")
def consume(m, s, broker, partition):
    """The consumer fetches the next entry after those it has read from a broker that leads the partition,
    if it is below that leader's HW (saturated dirs can be read), and keeps it."""
    b = s.brokers[broker]
    consumed = s.consumed[partition]
    entry = b.logs[partition][len(consumed)]
    return s._replace(consumed=replace_at(s.consumed, partition, consumed + (entry,)))


