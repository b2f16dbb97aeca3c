"""The ZooKeeper-mode controller's part of the state schema (model/spec/schema.py): the controller record, the
brokers' channels with it, the pending /log_dir_event_notification znodes; and the fields of deletion and
reassignment (their features, model/zk/rules_deletion.py and model/zk/rules_reassignment.py, declare them).
A feature's fields follow those of the features before it in the design, which keeps the order of the values
in each record's tuple (the fingerprint digests it)."""
from __future__ import annotations

from model.spec.feature import Eager
from model.spec.schema import Field, Record, Show
from model.storage.state import D_NONE, NO_LEADER, P_NONEXISTENT, R_NONEXISTENT, RA_NONE, UPDATE_METADATA, Partition


def _per_partition(value):
    return lambda m: (value,) * m.cfg.partitions


CONTROLLER = Record("controller", "Controller", after="brokers", doc="the active controller's view")

CONTROLLER_FIELDS = (
    Field("epoch", "controller", lambda m: 1, show=Show("epoch"), doc="controller epoch: 1 + failovers so far"),
    Field("live", "controller", lambda m: (1 << m.cfg.brokers) - 1, show=Show("live_brokers", "bits"),
          doc="bitmask: brokers the controller believes alive (as of the last broker-change event)"),
    Field("offline", "controller", lambda m: (0,) * m.cfg.brokers,
          show=Show("offline_replicas_by_broker", "per_broker_bits"),
          doc="per broker: bitmask of partitions it knows to be on offline dirs (replicasOnOfflineDirs)"),
    Field("partitions", "controller", _per_partition(Partition(P_NONEXISTENT, NO_LEADER, -1, 0)),
          show=Show("partitions", "partition_record", "partition"), doc="per partition: Partition"),
    Field("replicas", "controller", lambda m: tuple((R_NONEXISTENT,) * len(a) for a in m.assignments),
          show=Show("replicas", "replica_states", "partition"),
          doc="per partition: per assigned replica (assignment order): R_*"),
)

# The brokers' channels with the controller (a failover empties them; a message in one is in flight).
BROKER_CHANNELS = (
    Field("inbox", "brokers", lambda m: (), "volatile", channel=True, show=Show("inbox", "messages"),
          doc="controller requests not yet handled, in order (the controller channel is FIFO)"),
    Field("replies", "brokers", lambda m: (), "volatile", channel=True,
          show=Show("responses", "leader_and_isr_responses", "responses"),
          doc="LeaderAndIsr responses not yet handled by the controller: tuples of (partition, error)"),
)

NOTIFICATIONS = Field("notifications", "", lambda m: 0, after="controller", pending=True,
                      show=Show("log_dir_event_notifications", "bits"),
                      doc="bitmask of brokers with a pending /log_dir_event_notification znode")

ZK_SCHEMA = (CONTROLLER, *CONTROLLER_FIELDS, *BROKER_CHANNELS, NOTIFICATIONS)

# Per partition: every broker that may hold a replica ("slots": the controller's replica states are kept per slot;
# the hook ``replica_slots``): the assignment, then the brokers a reassignment may add. The current assignment is
# in the state.
ZK_CONSTANTS = {
    "original": lambda m: tuple(m.cfg.assignment(p) for p in range(m.cfg.partitions)),
    "targets": lambda m: tuple(m.cfg.reassignment_target(p) for p in range(m.cfg.partitions)),
    "assignments": lambda m: tuple(m.hooks.replica_slots(m.cfg, p) for p in range(m.cfg.partitions)),
    "replicas_on": lambda m: tuple(
        tuple((p, i) for p in range(m.cfg.partitions) for i, b in enumerate(m.assignments[p]) if b == broker)
        for broker in range(m.cfg.brokers)),
}

# Replica deletion's: the StopReplica(delete=true) responses; topic deletion's: the controller's deletion state.
REPLICA_DELETION_FIELDS = (
    Field("stop_replies", "brokers", lambda m: (), "volatile", channel=True,
          show=Show("responses", "stop_replica_responses", "responses", feature=""),
          doc="StopReplica(delete=true) responses not yet handled by the controller: tuples of (partition, error)"),
)
DELETION_FIELDS = (
    Field("deletion", "controller", _per_partition(D_NONE),
          show=Show("topic_deletion", "deletion", "partition"), doc="per partition: D_* (topic deletion)"),
)
# Reassignment's: the assignment in ZooKeeper and the reassignment's progress.
REASSIGNMENT_FIELDS = (
    Field("assigned", "controller", lambda m: m.original,
          show=Show("assignment", "list", "partition"),
          doc="per partition: the brokers of its replica assignment in ZooKeeper, in order"),
    Field("reassigning", "controller", _per_partition(RA_NONE),
          show=Show("reassignment", "reassignment", "partition"), doc="per partition: RA_* (partition reassignment)"),
)

# Eager metadata (--eager-metadata, the default): an UpdateMetadata at the head of a broker's queue is handled at
# once after the step that put it there (docs/model.md, section 7), counted under BrokerUpdateMetadata.
UPDATE_METADATA_EAGER = Eager(
    "BrokerUpdateMetadata", "inbox",
    ready=lambda broker: bool(broker.inbox) and broker.inbox[0].kind == UPDATE_METADATA,
    touches=("inbox", "meta"), enabled=lambda cfg: cfg.eager_metadata,
    label=lambda brokers: " + UpdateMetadata at " + ", ".join(f"broker {b}" for b in brokers))

# The rules whose effects are memoised (model/spec/effect_memo.py): the controller's (its replica and partition
# state machines) and the environment's (a disk or a broker changed wholesale). The brokers' and the clients'
# rules read the data path (every replica's log and high watermark): hashing those keys costs more than their
# effects (measured on small: BrokerLeaderAndIsr 2.7 times slower memoised, Produce 1.6 times).
MEMO_KINDS = ("controller", "environment")
