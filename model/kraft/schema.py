"""KRaft mode's part of the state schema (model/spec/schema.py): the active controller's record (its metadata log
and the image of it) and the brokers' KRaft fields (how far each replayed the log, its registration, its failed
dirs and their acknowledgement, its AssignReplicasToDirs queue and request in flight)."""
from __future__ import annotations

from model.kraft import disks
from model.kraft.metadata import (
    K_BROKER_CHANGE, K_FEATURE_LEVEL, K_REGISTER, MV_UPGRADE_OPTION, NO_PARTITION, BrokerChange, FeatureLevel,
    RegisterBroker, image_of,
)
from model.spec.schema import Field, Record, Show
from model.storage.state import D_NONE


def _per_partition(value):
    return lambda m: (value,) * m.cfg.partitions


CONTROLLER = Record("controller", "KraftController", after="brokers",
                    doc="the active controller: its metadata log and the image of the whole log")


def started_log(m) -> tuple:
    """The initial metadata log: the cluster has started, every broker registered with all its dirs and was
    unfenced (its first heartbeats after catching up). The model starts here rather than from an empty log: the
    start-up's interleavings are explored anyway after a crash (BrokerRegister, BrokerLoad, BrokerHeartbeat)."""
    every_dir = tuple(range(m.cfg.dirs))
    if dict(m.cfg.options).get(MV_UPGRADE_OPTION):
        # Before metadata.version 3.7-IV2 (model/kraft/migration.py): the log starts with that level, and a
        # registration keeps no LogDirs (ClusterControlManager.registerBroker).
        return ((FeatureLevel(K_FEATURE_LEVEL, False),),) + tuple(
            (RegisterBroker(K_REGISTER, b, ()),) for b in range(m.cfg.brokers)) + tuple(
            (BrokerChange(K_BROKER_CHANGE, b, False, None),) for b in range(m.cfg.brokers))
    return (tuple((RegisterBroker(K_REGISTER, b, every_dir),) for b in range(m.cfg.brokers))
            + tuple((BrokerChange(K_BROKER_CHANGE, b, False, None),) for b in range(m.cfg.brokers)))


CONTROLLER_FIELDS = (
    Field("log", "controller", started_log, show=Show("metadata_log", "kraft_log"),
          doc="the metadata log: one batch per controller event, of RegisterBroker, BrokerChange, PartitionRecord and "
              "PartitionChange records"),
    Field("registrations", "controller", lambda m: image_of(m, started_log(m)).registrations,
          show=Show("registrations", "kraft_registrations"),
          doc="per broker: Registration(epoch, fenced, dirs) or None, the image of the whole log"),
    Field("partitions", "controller", _per_partition(NO_PARTITION),
          show=Show("registration", "kraft_partition", "partition"),
          doc="per partition: PartitionState(leader, leader_epoch, isr, partition_epoch, dirs), the image of the log"),
    # Topic deletion is not modelled in KRaft mode: constant, read by the shared durability invariants.
    Field("deletion", "controller", _per_partition(D_NONE), doc="per partition: D_NONE (no topic deletion)"),
)

BROKER_FIELDS = (
    Field("applied", "brokers", lambda m: len(started_log(m)), "volatile", crash_value=0, show=Show("applied_offset"),
          doc="how many batches of the metadata log the broker's published image includes"),
    Field("loaded", "brokers", lambda m: True, "volatile", crash_value=False, show=Show("loaded"),
          doc="the broker published its first image since it started (False after a crash until BrokerLoad)"),
    Field("registered", "brokers", lambda m: True, "volatile", crash_value=False, show=Show("registered"),
          doc="this incarnation registered (its broker epoch is its registration's in the controller's image)"),
    Field("failed", "brokers", lambda m: 0, "volatile", index="index-mask", show=Show("failed_dirs", "bits"),
          doc="bitmask of dirs that failed since the broker started (every heartbeat carries them)"),
    Field("acked_dirs", "brokers", lambda m: 0, "volatile", index="index-mask", show=Show("acknowledged_dirs", "bits"),
          doc="bitmask of failed dirs a heartbeat response acknowledged"),
    Field("queue", "brokers", lambda m: (), "volatile", channel=True,
          show=Show("assignment_queue", "kraft_assignments"),
          doc="AssignmentsManager's queue: (partition, dir) entries, the latest per partition"),
    Field("inflight", "brokers", lambda m: (), "volatile", channel=True,
          show=Show("assignment_in_flight", "kraft_assignments"),
          doc="the AssignReplicasToDirs request in flight: (partition, dir) entries"),
    disks.FIELD,
)

KRAFT_SCHEMA = (CONTROLLER, *CONTROLLER_FIELDS, *BROKER_FIELDS)

# Per partition: its configured assignment (``original``: CreateTopic's replicas, in order) and every broker that may
# hold a replica of it (``assignments``, the hook ``replica_slots``: the assignment, then the brokers its
# reassignment adds), which the data path's rules and invariants range over. The current Replicas are in the state.
KRAFT_CONSTANTS = {
    "original": lambda m: tuple(m.cfg.assignment(p) for p in range(m.cfg.partitions)),
    "assignments": lambda m: tuple(m.hooks.replica_slots(m, p) for p in range(m.cfg.partitions)),
}
