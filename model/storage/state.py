"""The model's state: immutable, hashable, canonical values.

Every container is a tuple (NamedTuples for readability). Their ``repr`` is the plain tuple ``repr``,
written by CPython's C code, so ``repr`` is a canonical encoding. The fingerprint is xxh3-64 of the packed
xxh3-64 digests of the brokers', the controller's and the other fields' encodings (docs/model.md, section 10),
so it is stable across processes and machines (Python's ``hash()`` is not used).
"""
from __future__ import annotations

import struct
from typing import NamedTuple

import xxhash


# Log dir status (per broker, per configured dir).
GOOD, SATURATED, OFFLINE, REMOVED = 0, 1, 2, 3
DIR_NAMES = ("good", "saturated", "offline", "removed")
LIVE_DIR = (True, True, False, False)  # the broker can read and write it (saturated: read and delete only)

# The broker's hold on a partition (ReplicaManager's HostedPartition plus the replica's role).
# H_SATURATED is KIP-928's saturated replica: its dir is full, so it neither leads nor fetches, but retention
# and deletion still run on it.
H_NONE, H_OFFLINE, H_STOPPED, H_FOLLOWER, H_LEADER, H_SATURATED = 0, 1, 2, 3, 4, 5
HOSTED_NAMES = ("none", "offline", "stopped", "follower", "leader", "saturated")
SERVING = (False, False, False, True, True, False)

# Controller replica states (ReplicaStateMachine).
R_NONEXISTENT, R_NEW, R_ONLINE, R_OFFLINE = 0, 1, 2, 3
R_DELETION_STARTED, R_DELETION_SUCCESSFUL, R_DELETION_INELIGIBLE = 4, 5, 6
REPLICA_STATE_NAMES = ("NonExistentReplica", "NewReplica", "OnlineReplica", "OfflineReplica",
                       "ReplicaDeletionStarted", "ReplicaDeletionSuccessful", "ReplicaDeletionIneligible")

# Controller partition states (PartitionStateMachine).
P_NONEXISTENT, P_NEW, P_ONLINE, P_OFFLINE = 0, 1, 2, 3
PARTITION_STATE_NAMES = ("NonExistentPartition", "NewPartition", "OnlinePartition", "OfflinePartition")

NO_LEADER = -1
LEADER_DURING_DELETE = -2  # the leader an UpdateMetadata names for a partition being deleted: brokers drop it

# Topic deletion, per partition (one partition a topic): TopicDeletionManager's topicsToBeDeleted and
# topicsIneligibleForDeletion, and a completed deletion (the topic is gone for good: it is not re-created).
D_NONE, D_QUEUED, D_INELIGIBLE, D_DONE = 0, 1, 2, 3
DELETION_NAMES = ("none", "queued", "ineligible", "deleted")

# Partition reassignment, per partition: none requested, in progress (/admin/reassign_partitions), done.
RA_NONE, RA_IN_PROGRESS, RA_DONE = 0, 1, 2
REASSIGNMENT_NAMES = ("none", "in progress", "done")

# Messages from the controller to a broker.
LEADER_AND_ISR, UPDATE_METADATA, STOP_REPLICA, STOP_REPLICA_DELETE = 0, 1, 2, 3
MESSAGE_NAMES = ("LeaderAndIsr", "UpdateMetadata", "StopReplica", "StopReplica(delete)")

# Per-partition error codes in a LeaderAndIsr response.
E_NONE, E_STORAGE, E_STALE = 0, 1, 2
ERROR_NAMES = ("NONE", "KAFKA_STORAGE_ERROR", "STALE_CONTROLLER_EPOCH")

# Indices into State.budget: how many of each bounded environment event have happened.
BUDGET_FIELDS = ("max_dir_failures", "max_saturations", "max_crashes", "max_restarts", "max_fixes", "max_failovers")
B_DIR_FAILURES, B_SATURATIONS, B_CRASHES, B_RESTARTS, B_FIXES, B_FAILOVERS = range(6)


class PartitionMeta(NamedTuple):
    """One partition in a broker's metadata cache: what a MetadataResponse shows."""
    leader: int
    isr: int        # bitmask of brokers
    offline: int    # bitmask of brokers: the offline_replicas field

    __repr__ = tuple.__repr__


class LeaderAndIsrEntry(NamedTuple):
    """LeaderAndIsrRequestPartitionState, as far as the model needs it."""
    partition: int
    leader: int
    leader_epoch: int
    isr: int        # bitmask of brokers
    is_new: bool    # KIP-112's isNewReplica

    __repr__ = tuple.__repr__


class UpdateMetadataEntry(NamedTuple):
    partition: int
    leader: int
    isr: int
    offline: int

    __repr__ = tuple.__repr__


class Message(NamedTuple):
    """A controller-to-broker request. body: LeaderAndIsrEntry tuple, UpdateMetadataEntry tuple, or a partition."""
    kind: int
    body: tuple

    __repr__ = tuple.__repr__


class Broker(NamedTuple):
    up: bool                  # running and registered in ZooKeeper
    dirs: tuple               # per configured dir: GOOD / SATURATED / OFFLINE / REMOVED
    # KIP-928's disk space (docs/model.md, section 6.4), constant unless the saturation feature is on:
    used: tuple               # per dir: units of space in use (segments, plus the reserved file)
    reserved: int             # bitmask of dirs holding the reserved space-of-last-resort file
    copies: tuple             # per partition: bitmask of dirs holding a copy of its log (on disk, survives restarts)
    hosted: tuple             # per partition: H_* (in memory, cleared by a crash)
    epoch: tuple              # per partition: the leader epoch the broker last accepted, -1 if none
    logs: tuple               # per partition: the log on its live copy, a tuple of entries, each the leader epoch
                              # that appended it; () when the broker has no live copy (on disk: survives restarts)
    hw: tuple                 # per partition: the high watermark, kept by the leader only (0 on any other replica)
    isr: tuple                # per partition: the leader's cached ISR bitmask (0 on any other replica)
    meta: tuple               # per partition: PartitionMeta or None (the metadata cache)
    segs: tuple               # per partition: units (segments) of the log on its live copy (KIP-928)
    inbox: tuple              # controller requests not yet handled, in order (the controller channel is FIFO)
    replies: tuple            # LeaderAndIsr responses not yet handled by the controller: tuples of (partition, error)
    stop_replies: tuple       # StopReplica(delete=true) responses not yet handled by the controller:
                              # tuples of (partition, error)

    __repr__ = tuple.__repr__


class Partition(NamedTuple):
    """The controller's view of a partition; leader, epoch and isr are the ZooKeeper leader-and-ISR record."""
    state: int                # P_*
    leader: int               # broker id or NO_LEADER
    leader_epoch: int         # -1 while no leader-and-ISR record exists
    isr: int                  # bitmask of brokers

    __repr__ = tuple.__repr__


class Controller(NamedTuple):
    epoch: int                # controller epoch: 1 + failovers so far
    live: int                 # bitmask: brokers the controller believes alive (as of the last broker-change event)
    offline: tuple            # per broker: bitmask of partitions it knows to be on offline dirs (replicasOnOfflineDirs)
    partitions: tuple         # per partition: Partition
    replicas: tuple           # per partition: per assigned replica (assignment order): R_*
    deletion: tuple           # per partition: D_* (topic deletion)
    assigned: tuple           # per partition: the brokers of its replica assignment in ZooKeeper, in order
    reassigning: tuple        # per partition: RA_* (partition reassignment)

    __repr__ = tuple.__repr__


class State(NamedTuple):
    brokers: tuple            # per broker: Broker
    controller: Controller
    notifications: int        # bitmask of brokers with a pending /log_dir_event_notification znode
    budget: tuple             # per BUDGET_FIELDS entry: how many of those events happened
    committed: tuple          # history, per partition: the entries that ever passed a leader's high watermark,
                              # in offset order (a tuple of leader epochs)
    acked: tuple              # history, per partition: bitmask of the offsets of `committed` acknowledged to the
                              # producer (acks=all: the high watermark passed with the ISR at min.insync.replicas)
    consumed: tuple           # history, per partition: the entries the consumer read, in order
    wiped: int                # history: bitmask of partitions a committed record of which no disk holds any more
                              # (every copy was on disks replaced or removed from the config)
    ext: tuple = ()           # the extension state fields of features added from outside (model/spec/feature.py
                              # StateField), in the order the model lists them; () when there are none

    __repr__ = tuple.__repr__


# ---- the declared schema -----------------------------------------------------------------------------------
# What each component of a broker is. Crash, the failover's clearing of the controller's channels, quiescence,
# the dir symmetry's canonical form and the readable state (explorer/render.py) are derived from these
# declarations (model/spec/schema.py, model/spec/symmetry.py), not hand-listed.

class Show(NamedTuple):
    """How a field reads in traces and JSON state dumps (explorer/render.py): under ``key``, formatted by the
    renderer's formatter ``fmt``; ``scope`` "top" (the record's own key), "partition" (one value per partition,
    under the record's per-partition entries) or "responses" (joined into one list); shown only when the model
    includes ``feature`` (None: always)."""
    key: str
    fmt: str = "plain"
    scope: str = "top"
    feature: str | None = None


class Field(NamedTuple):
    name: str
    # "disk": on disk, survives a crash; "memory": back to its initial value when the broker crashes or halts;
    # "registration": the broker's ZooKeeper registration (False after a crash).
    lifetime: str
    # A channel of requests or responses between the controller and this broker: lost when either side fails,
    # and a state with a message in one is not quiescent.
    channel: bool = False
    # How the field is indexed by log dir, for the dir symmetry: "" (not), "per-dir" (a tuple, one value a dir),
    # "dir-mask" (a bitmask of dirs), "partition-dir-masks" (per partition, a bitmask of dirs).
    dirs: str = ""
    show: Show | None = None


BROKER_SCHEMA = (
    Field("up", "registration", show=Show("up")),
    Field("dirs", "disk", dirs="per-dir", show=Show("dirs", "dir_names")),
    Field("used", "disk", dirs="per-dir", show=Show("dir_units_used", "list", feature="saturation")),
    Field("reserved", "disk", dirs="dir-mask", show=Show("reserved_file_on_dirs", "bits", feature="saturation")),
    Field("copies", "disk", dirs="partition-dir-masks", show=Show("log_on_dirs", "bits", "partition")),
    Field("hosted", "memory", show=Show("hosted", "hosted", "partition")),
    Field("epoch", "memory", show=Show("leader_epoch", "plain", "partition")),
    Field("logs", "disk", show=Show("log", "list", "partition")),
    Field("hw", "memory", show=Show("hw", "plain", "partition")),
    Field("isr", "memory", show=Show("leader_isr", "bits", "partition")),
    Field("meta", "memory", show=Show("metadata", "metadata", "partition")),
    Field("segs", "disk", show=Show("segments", "plain", "partition", "saturation")),
    Field("inbox", "memory", channel=True, show=Show("inbox", "messages")),
    Field("replies", "memory", channel=True, show=Show("responses", "leader_and_isr_responses", "responses")),
    Field("stop_replies", "memory", channel=True, show=Show("responses", "stop_replica_responses", "responses")),
)
assert tuple(f.name for f in BROKER_SCHEMA) == Broker._fields, "BROKER_SCHEMA must declare every Broker field"

# How the controller's and the state's fields read (explorer/render.py), in order: (field, Show).
CONTROLLER_VIEW = (
    ("epoch", Show("epoch")),
    ("live", Show("live_brokers", "bits")),
    ("offline", Show("offline_replicas_by_broker", "per_broker_bits")),
    ("partitions", Show("partitions", "partition_record", "partition")),
    ("replicas", Show("replicas", "replica_states", "partition")),
    ("deletion", Show("topic_deletion", "deletion", "partition", "deletion")),
    ("assigned", Show("assignment", "list", "partition", "reassignment")),
    ("reassigning", Show("reassignment", "reassignment", "partition", "reassignment")),
)
STATE_VIEW = (
    ("notifications", Show("log_dir_event_notifications", "bits")),
    ("budget", Show("events_used", "budget")),
    ("committed", Show("committed", "list", "partition")),
    ("acked", Show("acked_offsets", "bits", "partition")),
    ("consumed", Show("consumed", "list", "partition")),
    ("wiped", Show("wiped", "partition_bit", "partition")),
)

# State components that are in flight while they differ from their initial value (a pending znode).
PENDING_STATE_FIELDS = ("notifications",)


def with_broker(s: State, b: int, broker: Broker) -> State:
    """The state with broker b replaced (brokers is State's first field: built without keyword parsing, as this
    is on the explorer's hot path)."""
    return State._make((replace_at(s.brokers, b, broker),) + s[1:])


def digest(value) -> int:
    """xxh3-64 of a value's plain tuple ``repr`` (UTF-8): stable across processes and machines."""
    return xxhash.xxh3_64_intdigest(repr(value).encode())


def component_fingerprint(broker_digest, other_digest, state: State) -> int:
    """The fingerprint of a state, given the functions that digest each broker and the other components:
    xxh3-64 of the little-endian 64-bit digests of each broker, of the controller and of the tuple of the other
    fields (notifications, budget, committed, acked, consumed, wiped, ext), in that order. A model passes its
    own memoised digests (``Model.cached``) and, under dir symmetry, a broker digest of the canonical form."""
    brokers = state.brokers
    return xxhash.xxh3_64_intdigest(struct.pack(
        f"<{len(brokers) + 2}Q", *map(broker_digest, brokers), other_digest(state.controller),
        other_digest(state[2:])))


def fingerprint(state: State) -> int:
    """A 64-bit fingerprint, stable across processes and machines (without symmetry; ``Model.fingerprint`` is
    the one a model's search uses)."""
    return component_fingerprint(digest, digest, state)


def replace_at(values: tuple, index: int, value) -> tuple:
    return values[:index] + (value,) + values[index + 1:]


def bits(mask: int) -> list[int]:
    out, i = [], 0
    while mask:
        if mask & 1:
            out.append(i)
        mask >>= 1
        i += 1
    return out
