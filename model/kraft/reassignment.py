"""KRaft mode's partition reassignment (issue 31; docs/kraft.md, "Reassignment"): the feature
``kraft-reassignment``, on with ``--reassignment`` as ZooKeeper mode's (the same meaning: an admin moves a
partition). Partition 0 is reassigned once, by the feature option ``reassign_to``: ``add`` (its replicas plus the
next broker: RF 1 -> 2, a pure add) or ``move`` (every replica to the next broker: an added and a removed
replica). AlterPartitionReassignments writes Replicas = target + removing with AddingReplicas,
RemovingReplicas and the added replica's Directories entry (defaultDir); the added broker creates the replica
(its dir is never listed: ``directory(b)`` of the old registration throws); once the added replica catches up,
the leader's AlterPartition adds it to the ISR and the change completes the reassignment (the removed replica
leaves Replicas and ISR, leadership moves); the removed broker deletes its replica. Without records a hosted
follower is caught up, so ``ReplicaCatchUp`` stands for its fetches and the leader's ISR expansion; with records
(``--max-records`` at least 1) the data path's ``ReplicaFetch`` is that catch-up (the added broker is one of the
partition's ``replica_slots``, and the leader serves it only once its image lists it: ``fetch_refused``), and
``ReplicaCatchUp`` has no action.
"""
from __future__ import annotations

from model.kraft import controller as C
from model.kraft.metadata import K_PARTITION_CHANGE, PartitionChange, default_dir
from model.kraft.rules import CONTROLLER_EVENT, KRAFT, broker_image, controller_image, isr_writer, isr_written, write
from model.spec.feature import Feature, Option
from model.storage.broker import live_copy_dir
from model.storage.mode import declares
from model.storage.state import H_FOLLOWER

KRAFT_REASSIGNMENT = Feature(
    "kraft-reassignment",
    "KRaft partition reassignment: AlterPartitionReassignments (adding and removing replicas, Directories from "
    "defaultDir), the added replica's creation, its ISR join completing the move, the removed replica's deletion",
    enabled=lambda cfg: cfg.reassignment,
    requires=(KRAFT,),
    config_fields=("reassignment",),
    flags=(),  # --reassignment is the ZooKeeper-mode feature's flag: one option, the same meaning
    options=(Option("reassign_to", "add", "KRaft reassignment's target: add (the replicas plus the next broker) or "
                    "move (every replica to the next broker)",
                    lambda v: None if v in ("add", "move") else f"reassign_to must be add or move, not {v!r}"),),
)


def target_of(m, p: int) -> tuple:
    """The admin's target for partition p (option reassign_to): ``add``, its assignment plus the next broker not in
    it (RF 1: [0] -> [0, 1]); ``move``, every replica to the next broker (RF 1: [0] -> [1])."""
    replicas = m.original[p]
    if m.option("reassign_to") == "move":
        return tuple((b + 1) % m.cfg.brokers for b in replicas)
    return replicas + tuple(b for b in range(m.cfg.brokers) if b not in replicas)[:1]


def _reassignable(m):
    return [(0,)]


def reassign_guard(m, s, partition):
    image = controller_image(s)
    part = image.partitions[partition]
    if part.leader_epoch < 0:
        return f"partition {partition} does not exist"
    if part.adding or part.removing:
        return f"partition {partition} is being reassigned"
    target = target_of(m, partition)
    if part.replicas == target:
        return f"partition {partition} is on its target replicas {list(target)} already"
    if any(image.registrations[b] is None for b in target):
        return f"a target broker of partition {partition} is not registered"
    return None


@KRAFT_REASSIGNMENT.rule("ReassignPartition",
      reads=CONTROLLER_EVENT, writes=CONTROLLER_EVENT,
      params=("partition",), domain=_reassignable, guard=reassign_guard, kind="controller", fair=False,
      reference="ReplicationControlManager.alterPartitionReassignments, changePartitionReassignment; "
                "PartitionReassignmentReplicas; PartitionChangeBuilder.setAssignmentChanges (defaultDir)")
def reassign_partition(m, s, partition):
    """An admin moves the partition to its target replicas: one PartitionChangeRecord with Replicas = target +
    removing, AddingReplicas, RemovingReplicas, and Directories (the kept replicas' entries, defaultDir for an
    added one: UNASSIGNED for a broker with two registered dirs); completed at once if the ISR allows it."""
    image = controller_image(s)
    part = image.partitions[partition]
    target = target_of(m, partition)
    removing = tuple(b for b in part.replicas if b not in target)
    adding = tuple(b for b in target if b not in part.replicas)
    replicas = target + removing
    dirs = tuple(part.dirs[part.replicas.index(b)] if b in part.replicas else default_dir(image.registrations[b])
                 for b in replicas)
    staged = part._replace(replicas=replicas, adding=adding, removing=removing, dirs=dirs)
    record = PartitionChange(K_PARTITION_CHANGE, partition, None, None, dirs, replicas, adding, removing)
    staged_image = image._replace(partitions=image.partitions[:partition] + (staged,) + image.partitions[partition + 1:])
    completion = C.partition_change(m, staged_image, partition)  # completeReassignmentIfNeeded in the same build
    if completion is not None:
        record = _merge(record, completion)
    return write(m, s, [record])


def _merge(first: PartitionChange, second: PartitionChange) -> PartitionChange:
    return PartitionChange(*(b if b is not None else a for a, b in zip(first, second)))


def catch_up_guard(m, s, partition, broker):
    part = s.controller.partitions[partition]
    if broker not in part.adding:
        return f"broker {broker} is not an added replica of partition {partition}"
    if part.isr >> broker & 1:
        return f"broker {broker} is in partition {partition}'s ISR"
    leader = isr_writer(m, s, partition)
    if leader < 0:
        return f"partition {partition} has no leader whose AlterPartition the controller accepts"
    b = s.brokers[broker]
    if not (b.up and b.hosted[partition] == H_FOLLOWER and live_copy_dir(b, partition) >= 0
            and b.epoch[partition] == part.leader_epoch):
        return f"broker {broker} does not follow partition {partition} at its leader epoch from a live log"
    if broker_image(m, s, leader).partitions[partition].replicas != part.replicas:
        return f"the leader has not applied partition {partition}'s Replicas yet"
    return None


def _pairs(m):
    """Without records only: with them the added replica's fetches are the data path's (ReplicaFetch)."""
    return [(0, b) for b in range(m.cfg.brokers)] if m.cfg.max_records_of(0) == 0 else []


@KRAFT_REASSIGNMENT.rule("ReplicaCatchUp",
      reads=("broker[broker]", "broker[*].up", "broker[*].hosted", "broker[*].epoch", "broker[*].applied", "controller"),
      writes=CONTROLLER_EVENT,
      params=("partition", "broker"), domain=_pairs, guard=catch_up_guard, kind="broker",
      reference="ReplicaFetcherThread (fetch); Partition.maybeExpandIsr; AlterPartition; "
                "ReplicationControlManager.alterPartition; PartitionChangeBuilder.completeReassignmentIfNeeded")
def replica_catch_up(m, s, partition, broker):
    """The added replica follows from a live log at the leader's epoch and, with no record to fetch, has caught
    up: the leader's AlterPartition adds it to the ISR (sent, handled and answered in one step); the change
    completes the reassignment when the ISR holds every target replica: the removed replicas leave Replicas and
    the ISR, a removed leader is replaced by an election through LeaderAcceptor."""
    part = s.controller.partitions[partition]
    return isr_written(m, s, partition, part.isr | 1 << broker)


def replica_slots(m, p: int) -> tuple:
    """The brokers that may hold a replica of partition p (the constant ``assignments``): its assignment, then the
    brokers its reassignment adds."""
    replicas = m.original[p]
    if p != 0:
        return replicas
    return replicas + tuple(b for b in target_of(m, p) if b not in replicas)


@declares(reads=("controller.log", "broker[*].applied"), writes=())
def fetch_refused(m, s, partition, follower, leader) -> str | None:
    """Partition.fetchRecords (followerReplicaOrThrow): a leader whose image does not list the follower among the
    partition's replicas answers its fetch UNKNOWN_LEADER_EPOCH ("possible in KRaft ... when new replicas are added
    as part of a reassignment": an added replica follows at the leader epoch the leader has not replayed the
    reassignment at yet), and the follower retries; a replica the reassignment removed is refused likewise."""
    if follower in broker_image(m, s, leader).partitions[partition].replicas:
        return None
    return f"broker {leader}'s image does not list broker {follower} among partition {partition}'s replicas"


KRAFT_REASSIGNMENT.hooks.update({"replica_slots": replica_slots, "fetch_refused": fetch_refused})


_PRESET = dict(variant="kraft", brokers=2, dirs=2, partitions=1, rf=1, reassignment=True, max_dir_failures=1,
               max_saturations=0, max_crashes=1, max_restarts=1, max_fixes=0, max_failovers=0, max_faults=1,
               max_records=0, consumer=False)
KRAFT_REASSIGNMENT.presets.update({
    "kraft-reassignment": ("KRaft partition reassignment: 2 brokers x 2 dirs, 1 partition, RF 1 -> 2 (broker 1 "
                           "added); a dir failure or a crash and a restart (one fault); no record", _PRESET),
    "kraft-reassignment-move": ("KRaft partition reassignment: 2 brokers x 2 dirs, 1 partition, RF 1 moved from "
                                "broker 0 to broker 1; a dir failure or a crash and a restart (one fault); no record",
                                dict(_PRESET, options={"reassign_to": "move"})),
})
