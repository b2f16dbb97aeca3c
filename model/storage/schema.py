"""The storage layer's part of the state schema (model/spec/schema.py): the brokers, each with its log dirs,
the copies of logs they hold and the replicas they host, and the history of the data path; and the fields of
KIP-928 saturation (its feature, model/storage/rules_space.py, declares them). The field order is the order of
the values in a broker's tuple, which the fingerprint digests (docs/model.md, section 10)."""
from __future__ import annotations

from model.spec.schema import Field, Record, Show
from model.storage.state import BUDGET_FIELDS, GOOD, H_NONE


def _per_partition(value):
    return lambda m: (value,) * m.cfg.partitions


BROKERS = Record("brokers", "Broker", member="broker", members=lambda m: m.cfg.brokers, doc_index="a broker's log dirs",
                 doc="per broker: its registration, log dirs, hosted replicas, logs and metadata cache")

BROKER_FIELDS = (
    Field("up", "brokers", lambda m: True, "volatile", crash_value=False, show=Show("up"),
          doc="running and registered (False after a crash)"),
    Field("dirs", "brokers", lambda m: (GOOD,) * m.cfg.dirs, index="per-index", show=Show("dirs", "dir_names"),
          doc="per configured dir: GOOD / SATURATED / OFFLINE / REMOVED"),
    Field("copies", "brokers", _per_partition(0), index="item-index-masks",
          show=Show("log_on_dirs", "bits", "partition"),
          doc="per partition: bitmask of dirs holding a copy of its log (on disk, survives restarts)"),
    Field("hosted", "brokers", _per_partition(H_NONE), "volatile", show=Show("hosted", "hosted", "partition"),
          doc="per partition: H_* (in memory, cleared by a crash)"),
    Field("epoch", "brokers", _per_partition(-1), "volatile", show=Show("leader_epoch", "plain", "partition"),
          doc="per partition: the leader epoch the broker last accepted, -1 if none"),
    Field("logs", "brokers", _per_partition(()), show=Show("log", "list", "partition"),
          doc="per partition: the log on its live copy, a tuple of entries, each the leader epoch that appended it"),
    Field("hw", "brokers", _per_partition(0), "volatile", show=Show("hw", "plain", "partition"),
          doc="per partition: the high watermark, kept by the leader only (0 on any other replica)"),
    Field("isr", "brokers", _per_partition(0), "volatile", show=Show("leader_isr", "bits", "partition"),
          doc="per partition: the leader's cached ISR bitmask (0 on any other replica)"),
    Field("meta", "brokers", _per_partition(None), "volatile", show=Show("metadata", "metadata", "partition"),
          doc="per partition: PartitionMeta or None (the metadata cache)"),
)

# The state's own fields of the storage layer: the event budget and the data path's history.
STATE_FIELDS = (
    Field("budget", "", lambda m: (0,) * len(BUDGET_FIELDS), show=Show("events_used", "budget"),
          doc="per BUDGET_FIELDS entry: how many of those events happened"),
    Field("committed", "", _per_partition(()), show=Show("committed", "list", "partition"),
          doc="history, per partition: the entries that ever passed a leader's high watermark, in offset order"),
    Field("acked", "", _per_partition(0), show=Show("acked_offsets", "bits", "partition"),
          doc="history, per partition: bitmask of the offsets of `committed` acknowledged to the producer"),
    Field("consumed", "", _per_partition(()), show=Show("consumed", "list", "partition"),
          doc="history, per partition: the entries the consumer read, in order"),
    Field("wiped", "", lambda m: 0, show=Show("wiped", "partition_bit", "partition"),
          doc="history: bitmask of partitions a committed record of which no disk holds any more"),
)

STORAGE_SCHEMA = (BROKERS, *BROKER_FIELDS, *STATE_FIELDS)


def _reserves(m) -> bool:
    """KIP-928's reserved file: one unit of every dir, written at start-up (section 6.4)."""
    return bool(m.cfg.saturation and m.cfg.reserved_file)


# KIP-928's disk space (docs/model.md, section 6.4), constant unless the saturation feature is on.
SATURATION_FIELDS = (
    Field("used", "brokers", lambda m: (1 if _reserves(m) else 0,) * m.cfg.dirs, after="dirs", index="per-index",
          show=Show("dir_units_used", "list"), doc="per dir: units of space in use (segments, plus the reserved file)"),
    Field("reserved", "brokers", lambda m: (1 << m.cfg.dirs) - 1 if _reserves(m) else 0, after="used",
          index="index-mask", show=Show("reserved_file_on_dirs", "bits"),
          doc="bitmask of dirs holding the reserved space-of-last-resort file"),
    Field("segs", "brokers", _per_partition(0), after="meta", show=Show("segments", "plain", "partition"),
          doc="per partition: units (segments) of the log on its live copy"),
)
SATURATION_CONSTANTS = {"reserves": _reserves}

# The bound of each BUDGET_FIELDS entry (model/storage/common.py budget_left).
STORAGE_CONSTANTS = {"bounds": lambda m: tuple(getattr(m.cfg, name) for name in BUDGET_FIELDS)}
