"""Candidate fixes of the KRaft findings (``--fix NAME``; docs/fixes.md): each one a change a Kafka committer could
make, modelled by one small predicate at the exact decision point the rules already have (the rules read it as
they read a bug switch, model/kraft/bugs.py), never by a copy of a rule.

``FIXES`` is the one catalogue: the CLI's option check, ``jbodcheck fixes`` and docs/fixes.md read it. Per fix:
the findings of docs/kraft.md it targets, the Kafka classes and methods it changes, the change in the words of a
pull request's description, the release the change is written against, the feature it needs besides kraft-core
(without it the fix would change nothing: refused, as a bug switch is) and the fix it competes with, if any.
What each fix costs and what it was checked on is docs/fixes.md's table (`jbodcheck compare --fixes`), not a
claim of this module.
"""
from __future__ import annotations

from typing import NamedTuple

from model.kraft.bugs import missing_feature
from model.kraft.disks import index_of
from model.kraft.metadata import LOST, UNASSIGNED, Image
from model.storage.broker import has_offline_dir, live_copy_dir
from model.storage.state import LIVE_DIR, replace_at

# The option of kraft-core that ``--fix`` sets (model/kraft/rules.py); not ``fixes``, which the bounds line already
# uses for ``max_fixes`` (disk repairs).
FIXES_OPTION = "candidate_fixes"


class Fix(NamedTuple):
    findings: tuple       # the findings of docs/kraft.md it targets
    where: str            # the Kafka classes and methods it changes
    change: str           # what changes, as a pull request's description would say it
    release: str          # the release the change is written against (and where the same code was read)
    feature: str | None = None   # the feature it needs besides kraft-core (None: kraft-core's own path)
    competes: str | None = None  # the fix it is an alternative to


GATE2_STRICT = "gate2-strict"
ASSIGN_LOST = "assign-lost-at-start-up"
PROMOTE_CAUGHT_UP = "promote-caught-up-future"
OFFLINE_DIRS_FIRST = "offline-dirs-before-unfence"
UNFENCE_WITHOUT_OFFLINE = "unfence-without-offline-dirs"
LIST_ADDED = "list-added-replica"
ELECT_BY_ASSIGNED = "elect-by-assigned-dir"
KEEP_PROMOTION = "keep-promotion-state"

FIXES: dict[str, Fix] = {
    GATE2_STRICT: Fix(
        (1,), "Partition.createLogInAssignedDirectoryId (core, kafka.cluster)",
        "Gate 2 no longer exempts DirectoryId.UNASSIGNED: while the broker has an offline log dir "
        "(logManager.hasOfflineLogDirs()), a replica whose directory id is UNASSIGNED is not created, as one whose "
        "id names an offline or unknown dir is not (its log may be on the offline dir). The condition becomes "
        "`logManager.onlineLogDirId(directoryId) || !logManager.hasOfflineLogDirs()`, on every delta.",
        "3.9.2 (the same condition in 4.3.1)", competes=ASSIGN_LOST),
    ASSIGN_LOST: Fix(
        (1,), "ReplicaManager.applyDelta (core, kafka.server)",
        "On the broker's first delta after start-up (BrokerMetadataPublisher's initial publish), while a log dir "
        "is offline, a local replica whose Directories entry is UNASSIGNED and that has no log on a live dir may "
        "have its log on the offline dir: it is not created (applyDelta gives makeLeader/makeFollower "
        "DirectoryId.LOST as its directory, so createLogInAssignedDirectoryId skips it) and it is assigned to "
        "LOST (directoryEventHandler.handleAssignment). The controller needs no change: handleAssignReplicasToDirs "
        "reads LOST as offline (BrokerRegistration.hasOnlineDir, DirectoryId.isOnline) and takes the broker out of "
        "the partition's ISR and leadership ('offline-dir-assignment'). KIP-858 reserved LOST for a replica on an "
        "unidentifiable offline dir; no Kafka code writes it today.",
        "3.9.2 (the same applyDelta, gate 2 and handleAssignReplicasToDirs in 4.3.1)", competes=GATE2_STRICT),
    PROMOTE_CAUGHT_UP: Fix(
        (4,), "LogManager.recoverAbandonedFutureLogs (core, kafka.log); ReplicaManager.applyDelta",
        "At start-up an abandoned -future log is promoted only if its current log is loaded and the future log has "
        "caught up with it (the check ReplicaAlterLogDirsThread makes before a swap, "
        "Partition.maybeReplaceCurrentWithFutureReplica); a future log behind its current log is resumed as a "
        "move instead (the first delta queues Assign(current dir), the metadata naming the future dir). With no "
        "current log loaded (its dir offline) nothing is promoted, and on the first delta the replica is not "
        "created and is assigned to DirectoryId.LOST (as assign-lost-at-start-up does for an UNASSIGNED one), so "
        "the controller moves leadership off it.",
        "3.9.2 (the same recoverAbandonedFutureLogs in 4.3.1)", feature="kraft-future"),
    OFFLINE_DIRS_FIRST: Fix(
        (5,), "ReplicationControlManager.processBrokerHeartbeat (metadata, org.apache.kafka.controller)",
        "handleDirectoriesOffline is called before the state change (handleBrokerUnfenced), so that the batch "
        "records the registration without the offline dirs before the unfencing and its elections. Every handler "
        "of the heartbeat still generates its records against the image before the event (QuorumController "
        "replays them after generateRecordsAndResult), so the unfencing's LeaderAcceptor still sees the dirs "
        "registered: the naive fix.",
        "3.9.2 (the same processBrokerHeartbeat in 4.3.1)", competes=UNFENCE_WITHOUT_OFFLINE),
    UNFENCE_WITHOUT_OFFLINE: Fix(
        (5,), "ReplicationControlManager.processBrokerHeartbeat, handleBrokerUnfenced (metadata, "
              "org.apache.kafka.controller)",
        "processBrokerHeartbeat passes the heartbeat's offlineLogDirs to handleBrokerUnfenced, whose elections for "
        "the leaderless partitions judge the unfenced broker without them: its LeaderAcceptor counts a replica of "
        "that broker whose Directories entry is one of the reported dirs as offline "
        "(registration.directoryDifference(offlineLogDirs) in place of the registration's dirs).",
        "3.9.2 (the same processBrokerHeartbeat and handleBrokerUnfenced in 4.3.1)", competes=OFFLINE_DIRS_FIRST),
    LIST_ADDED: Fix(
        (6,), "TopicDelta.localChanges (metadata, org.apache.kafka.image)",
        "A replica that the previous PartitionRegistration did not have (added by a reassignment) gets its "
        "directory listed in directoryIds instead of prevPartition.directory(brokerId)'s IllegalArgumentException "
        "being swallowed (`prevPartition == null || !Replicas.contains(prevPartition.replicas, brokerId) || "
        "prevPartition.directory(brokerId) != ...`): ReplicaManager creates it through "
        "createLogInAssignedDirectoryId with UNASSIGNED and maybeUpdateTopicAssignment queues its actual dir.",
        "3.9.2 (the same localChanges in 4.3.1)", feature="kraft-reassignment"),
    KEEP_PROMOTION: Fix(
        (2,), "ReplicaAlterLogDirsThread.addPartitions; ReplicaManager.maybeUpdateTopicAssignment (core, "
              "kafka.server)",
        "A metadata delta no longer restarts a promotion under way: addPartitions keeps the PromotionState of a "
        "partition the thread already has (promotionStates.putIfAbsent), so a Queued or Accepted promotion is "
        "still reverted by removePartitions when a dir failure or a cancellation ends it; and "
        "maybeUpdateTopicAssignment does not queue the current log's dir for a partition whose promotion to the "
        "listed dir is Queued or Accepted (the swap completes it, or removePartitions reverts it), where today the "
        "broker's replay of its own promotion record queues the current dir back.",
        "3.9.2 (the same addPartitions and maybeUpdateTopicAssignment in 4.3.1)", feature="kraft-future"),
    ELECT_BY_ASSIGNED: Fix(
        (3,), "ReplicationControlManager.handleAssignReplicasToDirs (metadata, org.apache.kafka.controller)",
        "The election of the PartitionChangeBuilder that records an assignment judges the replicas by the "
        "registration with the assigned directory (its LeaderAcceptor reads the builder's target directories, "
        "not the PartitionRegistration before the change): a broker assigned to an online dir may be elected, one "
        "assigned to an offline dir is not, whatever the entry said before.",
        "3.9.2 (the same handleAssignReplicasToDirs and LeaderAcceptor in 4.3.1)"),
}

# How a configuration includes each feature a fix needs.
TURN_ON: dict[str, str] = {
    "kraft-future": "--preset kraft-future or --option alter_log_dirs=N",
    "kraft-reassignment": "--preset kraft-reassignment or --reassignment",
}


def _ids(value) -> tuple:
    return (value,) if isinstance(value, str) else value


def check_fixes(value) -> str | None:
    ids = _ids(value)
    if not isinstance(ids, tuple) or not all(isinstance(i, str) for i in ids):
        return f"{FIXES_OPTION} must be a fix's name or a list of them, not {value!r}"
    unknown = [i for i in ids if i not in FIXES]
    return f"unknown fix(es) {', '.join(unknown)} (known: {', '.join(FIXES)})" if unknown else None


def refuse_without_feature(value, included: set) -> str | None:
    """Why a configuration whose features are ``included`` cannot take the fixes ``value`` (one line), or None: a
    fix whose feature is not in the model would change nothing. Unknown names are left to ``check_fixes``."""
    return missing_feature(value, included, FIXES, TURN_ON, "fix ", "fix")


def fixes(m) -> tuple:
    """The candidate fixes a model applies (its ``candidate_fixes`` option)."""
    return _ids(m.option(FIXES_OPTION))


# ---- the predicates the rules read at their decision points --------------------------------------------------------

def gate2_exempts_unassigned(on: tuple) -> bool:
    """Partition.createLogInAssignedDirectoryId: whether an UNASSIGNED directory id is created while a dir is
    offline (Kafka's gate 2; not with gate2-strict). ``on``: the model's fixes."""
    return GATE2_STRICT not in on


def assigns_lost_at_start_up(m, broker, p: int, listed: int) -> bool:
    """The first delta after start-up (BrokerLoad): whether the replica is left uncreated and assigned to LOST
    because its log may be on an offline dir. assign-lost-at-start-up: it is listed UNASSIGNED. promote-caught-up-
    future: the listed dir holds the replica's -future log, which was not promoted (its current log is not on a
    live dir). Either needs an offline dir and no log of the replica on a live dir."""
    on = fixes(m)
    if not on or not has_offline_dir(broker) or live_copy_dir(broker, p) >= 0:
        return False
    if ASSIGN_LOST in on and listed == UNASSIGNED:
        return True
    f = broker.future[p]
    return PROMOTE_CAUGHT_UP in on and f >= 0 and index_of(broker, listed) == f and LIVE_DIR[broker.dirs[f]]


def queue_lost(broker, p: int, topic: int):
    """AssignmentsManager.onAssignment(p, LOST): replaces any queued entry of the partition's topic id."""
    return broker._replace(queue=tuple(e for e in broker.queue if e[::2] != (p, topic)) + ((p, LOST, topic),))


def promotes_abandoned_future(m, broker, p: int) -> bool:
    """LogManager.recoverAbandonedFutureLogs: whether the -future log the image names may be promoted at start-up
    (Kafka: always; promote-caught-up-future: only if the current log is on a live dir and the future log has
    caught up with it, as the thread's swap requires)."""
    if PROMOTE_CAUGHT_UP not in fixes(m):
        return True
    return live_copy_dir(broker, p) >= 0 and (broker.flog[p] or ()) == broker.logs[p]


def offline_dirs_first(m) -> bool:
    """processBrokerHeartbeat: whether handleDirectoriesOffline's records come before the unfencing's."""
    return OFFLINE_DIRS_FIRST in fixes(m)


def unfencing_image(m, image: Image, broker: int, offline: tuple) -> Image:
    """The image handleBrokerUnfenced's elections judge by: the image before the heartbeat (Kafka), or with
    unfence-without-offline-dirs the broker's registration without the dirs the heartbeat reports offline."""
    if UNFENCE_WITHOUT_OFFLINE not in fixes(m) or not offline:
        return image
    reg = image.registrations[broker]
    kept = tuple(d for d in reg.dirs if d not in offline)
    return image._replace(registrations=replace_at(image.registrations, broker, reg._replace(dirs=kept)))


def lists_added_replica(m) -> bool:
    """TopicDelta.localChanges: whether a replica the previous registration did not have is listed."""
    return LIST_ADDED in fixes(m)


def assignment_acceptor_image(m, image: Image, p: int, dirs: tuple) -> Image:
    """The image the election of handleAssignReplicasToDirs' PartitionChangeBuilder judges by: the image before
    the request (Kafka), or with elect-by-assigned-dir the partition with its new Directories."""
    if ELECT_BY_ASSIGNED not in fixes(m):
        return image
    return image._replace(partitions=replace_at(image.partitions, p, image.partitions[p]._replace(dirs=dirs)))


def keeps_promotion_state(m) -> bool:
    """ReplicaAlterLogDirsThread.addPartitions: whether a delta keeps a partition's promotion state (with
    keep-promotion-state) or restarts it at None (Kafka)."""
    return KEEP_PROMOTION in fixes(m)


# ReplicaAlterLogDirsThread's promotion states Queued and Accepted (model/kraft/future.py P_QUEUED, P_ACCEPTED,
# which imports this module and checks they agree).
UNDER_WAY = (1, 2)


def promotion_assigns(m, broker, p: int, listed: int) -> bool:
    """ReplicaManager.maybeUpdateTopicAssignment: whether the listed dir is left to the promotion under way (with
    keep-promotion-state: the thread's promotion to the listed dir is Queued or Accepted, so it is either
    completed by the swap or reverted by removePartitions) rather than the current log's dir queued (Kafka)."""
    return (KEEP_PROMOTION in fixes(m) and broker.future[p] >= 0 and index_of(broker, listed) == broker.future[p]
            and broker.mover[p] in UNDER_WAY)
