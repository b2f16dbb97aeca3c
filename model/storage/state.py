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

from model.spec.schema import digest, replace_at  # noqa: F401 (re-exported: the rules' modules use them)


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


class Partition(NamedTuple):
    """The controller's view of a partition; leader, epoch and isr are the ZooKeeper leader-and-ISR record."""
    state: int                # P_*
    leader: int               # broker id or NO_LEADER
    leader_epoch: int         # -1 while no leader-and-ISR record exists
    isr: int                  # bitmask of brokers

    __repr__ = tuple.__repr__


# The records (a broker, the controller, the state) are composed by each model from the fields its design's
# features declare (model/spec/schema.py; the storage layer's in model/storage/schema.py, the ZooKeeper
# controller's in model/zk/schema.py): NamedTuples whose repr is the plain tuple repr. These names are for type
# hints only.
Broker = Controller = State = tuple


def with_broker(s: State, b: int, broker: Broker) -> State:
    """The state with broker b replaced (brokers is the state's first field: built without keyword parsing, as
    this is on the explorer's hot path)."""
    return tuple.__new__(type(s), (replace_at(s.brokers, b, broker),) + s[1:])


def fingerprint(state: State) -> int:
    """A 64-bit fingerprint, stable across processes and machines (without symmetry; ``Model.fingerprint`` is
    the one a model's search uses): xxh3-64 of the little-endian 64-bit digests of each broker, of the
    controller and of the tuple of the other fields (model/spec/schema.py Schema.fingerprint_with)."""
    brokers = state.brokers
    return xxhash.xxh3_64_intdigest(struct.pack(
        f"<{len(brokers) + 2}Q", *map(digest, brokers), digest(state.controller), digest(state[2:])))


def bits(mask: int) -> list[int]:
    out, i = [], 0
    while mask:
        if mask & 1:
            out.append(i)
        mask >>= 1
        i += 1
    return out
