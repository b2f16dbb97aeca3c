"""KRaft mode's part of the state schema (model/spec/schema.py): the active controller's record (its metadata log
and the image of it) and the brokers' KRaft fields (how far each replayed the log, its registration, its failed
dirs and their acknowledgement, its AssignReplicasToDirs queue and request in flight)."""
from __future__ import annotations

from model.kraft.metadata import NO_PARTITION
from model.spec.schema import Field, Record, Show
from model.storage.state import D_NONE


def _per_partition(value):
    return lambda m: (value,) * m.cfg.partitions


CONTROLLER = Record("controller", "KraftController", after="brokers",
                    doc="the active controller: its metadata log and the image of the whole log")

CONTROLLER_FIELDS = (
    Field("log", "controller", lambda m: (), show=Show("metadata_log", "plain"),
          doc="the metadata log: RegisterBroker, BrokerChange, PartitionRecord, PartitionChange records, in order"),
    Field("registrations", "controller", lambda m: (None,) * m.cfg.brokers, show=Show("registrations", "plain"),
          doc="per broker: Registration(epoch, fenced, dirs) or None, the image of the whole log"),
    Field("partitions", "controller", _per_partition(NO_PARTITION),
          show=Show("partitions", "plain", "partition"),
          doc="per partition: PartitionState(leader, leader_epoch, isr, partition_epoch, dirs), the image of the log"),
    # Topic deletion is not modelled in KRaft mode: constant, read by the shared durability invariants.
    Field("deletion", "controller", _per_partition(D_NONE), doc="per partition: D_NONE (no topic deletion)"),
)

BROKER_FIELDS = (
    Field("applied", "brokers", lambda m: 0, "volatile", show=Show("applied_offset"),
          doc="how many records of the metadata log the broker's published image includes"),
    Field("loaded", "brokers", lambda m: True, "volatile", crash_value=False, show=Show("loaded"),
          doc="the broker published its first image since it started (False after a crash until BrokerLoad)"),
    Field("registered", "brokers", lambda m: -1, "volatile", show=Show("broker_epoch"),
          doc="the broker epoch of this incarnation's registration, -1 before it registered"),
    Field("failed", "brokers", lambda m: 0, "volatile", index="index-mask", show=Show("failed_dirs", "bits"),
          doc="bitmask of dirs that failed since the broker started (every heartbeat carries them)"),
    Field("acked_dirs", "brokers", lambda m: 0, "volatile", index="index-mask", show=Show("acknowledged_dirs", "bits"),
          doc="bitmask of failed dirs a heartbeat response acknowledged"),
    Field("queue", "brokers", lambda m: (), "volatile", channel=True, show=Show("assignment_queue", "plain"),
          doc="AssignmentsManager's queue: (partition, dir) entries, the latest per partition"),
    Field("inflight", "brokers", lambda m: (), "volatile", channel=True, show=Show("assignment_in_flight", "plain"),
          doc="the AssignReplicasToDirs request in flight: (partition, dir) entries"),
)

KRAFT_SCHEMA = (CONTROLLER, *CONTROLLER_FIELDS, *BROKER_FIELDS)

KRAFT_CONSTANTS = {
    "assignments": lambda m: tuple(m.cfg.assignment(p) for p in range(m.cfg.partitions)),
}
