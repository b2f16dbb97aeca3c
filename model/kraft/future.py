"""Intra-broker moves on KRaft (KIP-113's AlterReplicaLogDirs under KIP-858; docs/kraft.md, "Future replicas"):
the feature ``kraft-future``. A broker asked to move a replica to another of its dirs creates a ``-future`` log
there, copies the current log into it (ReplicaAlterLogDirsThread) and promotes it in three steps: once caught up
it queues ``Assign(future dir)`` (Queued), the controller's answer accepts it (Accepted), once caught up again the
future log replaces the current one (Effective). A cancellation or a dir failure in Queued or Accepted queues
``Assign(current dir)`` back (KAFKA-16297's fix; with its switch the model is 3.7.0's thread: only Queued is
reverted and a delta does not reset the promotion); at start-up a future log in the dir the metadata names is promoted in
place of the current log (KAFKA-16082's fix, LogManager.recoverAbandonedFutureLogs).

The feature is on when its option ``alter_log_dirs`` (the bound on AlterReplicaLogDirs requests) is given, or a
bug switch of its own is (``bugs``: KAFKA-16297, KAFKA-16082); kraft-core's model is unchanged without it.
"""
from __future__ import annotations

from model.kraft import rules as R
from model.kraft.bugs import bugs
from model.kraft.disks import id_of, index_of
from model.kraft.fixes import UNDER_WAY, keeps_promotion_state, promotes_abandoned_future
from model.kraft.metadata import image_of
from model.kraft.render import optional_dir
from model.kraft.replica_manager import enqueue
from model.kraft.rules import KRAFT
from model.spec.feature import Feature, Option
from model.spec.schema import Field, Show
from model.storage import broker as B
from model.storage.common import brokers, set_broker
from model.storage.state import GOOD, H_FOLLOWER, H_LEADER, LIVE_DIR, replace_at

# ReplicaAlterLogDirsThread's PromotionState per partition; NO_FETCHER: the thread does not have the partition.
NO_FETCHER, P_NONE, P_QUEUED, P_ACCEPTED = -1, 0, 1, 2
NOT_FETCHED = None  # a future log the thread has not fetched into since it was created (flog)
assert (P_QUEUED, P_ACCEPTED) == UNDER_WAY  # the candidate fixes read the promotion states too (fixes.py)
OWN_BUGS = ("KAFKA-16297", "KAFKA-16082")


def _enabled(cfg) -> bool:
    options = dict(cfg.options)
    named = options.get("bugs", ())
    named = (named,) if isinstance(named, str) else tuple(named)
    return "alter_log_dirs" in options or any(b in OWN_BUGS for b in named)


def _check_count(name):
    def check(value):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            return f"{name} must be a whole number, not {value!r}"
        return None
    return check


def _per_partition(value):
    return lambda m: (value,) * m.cfg.partitions


FIELDS = (
    Field("future", "brokers", _per_partition(-1), after="inflight",
          show=Show("future_log_dir", "kraft_optional_dir", "partition"),
          doc="per partition: the dir holding the partition's -future log, or -1 (on disk: survives a crash)"),
    Field("flog", "brokers", _per_partition(NOT_FETCHED), after="future",
          show=Show("future_log", "plain", "partition"),
          doc="per partition: the -future log's entries, None until the first fetch into it (on disk)"),
    Field("mover", "brokers", _per_partition(NO_FETCHER), "volatile", after="flog",
          show=Show("promotion", "kraft_promotion", "partition"),
          doc="per partition: ReplicaAlterLogDirsThread's promotion state, -1 when the thread does not have the "
              "partition, 0 None, 1 Queued (Assign(future dir) queued), 2 Accepted (the controller answered it)"),
    Field("moves", "", lambda m: (0, 0), show=Show("alter_log_dirs_used", "kraft_moves"),
          doc="(AlterReplicaLogDirs requests made, promotions queued): bounded by the options alter_log_dirs and "
              "future_promotions"),
)


# How the fields read (model/kraft/render.py): the promotion state by ReplicaAlterLogDirsThread's ReassignmentState
# names (null: the thread does not have the partition, no PromotionState).
PROMOTION_NAMES = {NO_FETCHER: None, P_NONE: "ReassignmentState.None", P_QUEUED: "ReassignmentState.Queued",
                   P_ACCEPTED: "ReassignmentState.Accepted"}
FORMATS = {
    "kraft_optional_dir": optional_dir,
    "kraft_promotion": lambda m, value: PROMOTION_NAMES[value],
    "kraft_moves": lambda m, value: {"alter_replica_log_dirs": value[0], "promotions_queued": value[1]},
}


def _quiescent(m, s) -> bool:
    """Nothing of the move is under way: every running broker published the whole log and no partition is with
    ReplicaAlterLogDirsThread (the thread always has a next step: a fetch, a promotion or its answer)."""
    end = len(s.controller.log)
    return all(not b.up or (b.loaded and b.applied == end and all(x == NO_FETCHER for x in b.mover))
               for b in s.brokers)


FUTURE = Feature(
    "kraft-future",
    "Intra-broker moves on KRaft: AlterReplicaLogDirs, the -future log and ReplicaAlterLogDirsThread's promotion "
    "(Queued, Accepted, Effective) with AssignReplicasToDirs, its revert on cancellation or dir failure, and the "
    "promotion of an abandoned future log at start-up",
    enabled=_enabled,
    requires=(KRAFT,),
    options=(Option("alter_log_dirs", 1, "kraft-future: the bound on AlterReplicaLogDirs requests (giving it turns "
                    "the feature on)", _check_count("alter_log_dirs")),
             Option("future_promotions", 2, "kraft-future: the bound on promotions queued (Assign(future dir)), "
                    "which a delta bumping the partition epoch restarts", _check_count("future_promotions"))),
    fields=FIELDS,
    formats=FORMATS,
    quiescent=_quiescent,
)


def _main_dir(b, p) -> int:
    return B.live_copy_dir(b, p)


def _future_dir(b, p) -> int:
    """The -future log's dir if it is live (a future log on a failed dir is not loaded), else -1."""
    f = b.future[p]
    return f if f >= 0 and LIVE_DIR[b.dirs[f]] else -1


def _queue(b, p, d):
    """AssignmentsManager.onAssignment: (p, dir d's id, topic id) replaces any queued entry for the partition of
    that topic id; the topic id is the hosted partition's (Partition.topicId, the broker's ``topics``)."""
    return b._replace(queue=enqueue(b.queue, p, id_of(b, d), b.topics[p]))


def _remove_fetcher(m, b, p, original: int):
    """ReplicaAlterLogDirsThread.removePartitions: a promotion Queued or Accepted queues Assign(original dir)
    back, so that the controller does not keep naming the future dir (KAFKA-16297's fix, 3.7.1; 3.7.0 reverted
    only QUEUED, to Partition.logDirectoryId: the current log's dir, as ``original`` is here)."""
    state = b.mover[p]
    revert = state == P_QUEUED or (state == P_ACCEPTED and "KAFKA-16297" not in bugs(m))
    if revert and original >= 0:
        b = _queue(b, p, original)
    return b._replace(mover=replace_at(b.mover, p, NO_FETCHER))


def _drop_future(b, p):
    return b._replace(future=replace_at(b.future, p, -1), flog=replace_at(b.flog, p, NOT_FETCHED))


def _promote(b, p):
    """LogManager.replaceCurrentWithFutureLog: the future log is renamed into the current one; the current log on a
    live dir is deleted (one on a failed dir stays on that disk)."""
    f = b.future[p]
    copies = (b.copies[p] & ~B.live_dir_mask(b)) | 1 << f
    b = b._replace(copies=replace_at(b.copies, p, copies), logs=replace_at(b.logs, p, b.flog[p] or ()))
    return _drop_future(b, p)._replace(mover=replace_at(b.mover, p, NO_FETCHER))


# What kraft-core's BrokerLoad and BrokerReplay read and write (a delta's application).
DELTA_READS = ("broker[broker]", "broker[*].up", "broker[*].hosted", "broker[*].epoch", "broker[*].logs",
               "broker[*].hw", "broker[*].isr", "controller.log", "controller.partitions", "committed", "acked")
DELTA_WRITES = ("broker[broker]", "committed", "acked")


# ---- the rules ---------------------------------------------------------------------------------------------------

def _broker_partition_dirs(m):
    return [(b, p, d) for b in range(m.cfg.brokers) for p in range(m.cfg.partitions) for d in range(m.cfg.dirs)]


def alter_guard(m, s, broker, partition, dir):
    if s.moves[0] >= m.option("alter_log_dirs"):
        return f"the bound alter_log_dirs {m.option('alter_log_dirs')} is used up"
    b = s.brokers[broker]
    if not b.up or not b.loaded:
        return f"broker {broker} is not running with its image loaded"
    main = _main_dir(b, partition)
    if b.hosted[partition] not in (H_LEADER, H_FOLLOWER) or main < 0:
        return f"broker {broker} does not serve partition {partition} from a live log"
    if b.dirs[dir] != GOOD:
        return f"dir {dir} of broker {broker} is not a good dir (KafkaStorageException)"
    if dir == main and _future_dir(b, partition) < 0:
        return f"partition {partition}'s log is on dir {dir} already and has no future log to cancel"
    if dir != main and b.future[partition] == dir:
        return f"partition {partition}'s future log is on dir {dir} already"
    return None


@FUTURE.rule("AlterReplicaLogDirs",
      reads=("broker[broker]", "moves"), writes=("broker[broker]", "moves"),
      params=("broker", "partition", "dir"), domain=_broker_partition_dirs, guard=alter_guard, kind="client",
      reference="ReplicaManager.alterReplicaLogDirs; Partition.maybeCreateFutureReplica; "
                "AbstractFetcherManager.addFetcherForPartitions, removeFetcherForPartitions "
                "(ReplicaAlterLogDirsManager's); ReplicaAlterLogDirsThread.removePartitions")
def alter_replica_log_dirs(m, s, broker, partition, dir):
    """An administrator asks the broker to move the replica to ``dir`` (kafka-reassign-partitions.sh with log
    dirs; answered in the step). To another dir: any future log elsewhere is dropped (its promotion reverted),
    an empty -future log is created on ``dir`` and ReplicaAlterLogDirsThread takes the partition (promotion None).
    To the current log's dir: the move is cancelled, the thread drops the partition (a promotion Queued or
    Accepted queues Assign(current dir): KAFKA-16297's fix) and the future log is deleted."""
    b = s.brokers[broker]
    main = _main_dir(b, partition)
    if b.mover[partition] != NO_FETCHER:
        b = _remove_fetcher(m, b, partition, main)
    b = _drop_future(b, partition)
    if dir != main:
        b = b._replace(future=replace_at(b.future, partition, dir), mover=replace_at(b.mover, partition, P_NONE))
    s = s._replace(moves=(s.moves[0] + 1, s.moves[1]))
    return set_broker(s, broker, b)


def _movable(b, p) -> str | None:
    if not b.up:
        return "the broker is down"
    if b.mover[p] == NO_FETCHER:
        return f"ReplicaAlterLogDirsThread does not have partition {p}"
    if _future_dir(b, p) < 0 or _main_dir(b, p) < 0 or b.hosted[p] not in (H_LEADER, H_FOLLOWER):
        return f"partition {p} has no live current and future log"
    return None


def fetch_guard(m, s, broker, partition):
    b = s.brokers[broker]
    why = _movable(b, partition)
    if why is not None:
        return why
    if b.flog[partition] == b.logs[partition]:
        return f"partition {partition}'s future log has caught up"
    return None


def _broker_partitions(m):
    return [(b, p) for b in range(m.cfg.brokers) for p in range(m.cfg.partitions)]


@FUTURE.rule("AlterLogDirsFetch",
      reads=("broker[broker]",), writes=("broker[broker].flog",),
      params=("broker", "partition"), domain=_broker_partitions, guard=fetch_guard, kind="broker",
      reference="LocalLeaderEndPoint.fetch (ReplicaAlterLogDirsThread's leader: the local log, "
                "FetchIsolation.LOG_END), ReplicaAlterLogDirsThread.processPartitionData; "
                "AbstractFetcherThread (truncation)")
def alter_log_dirs_fetch(m, s, broker, partition):
    """ReplicaAlterLogDirsThread copies the current log into the future log up to its end (one fetch does it all
    here; a truncated current log truncates the future one)."""
    b = s.brokers[broker]
    return set_broker(s, broker, b._replace(flog=replace_at(b.flog, partition, b.logs[partition])))


def promote_guard(m, s, broker, partition):
    b = s.brokers[broker]
    why = _movable(b, partition)
    if why is not None:
        return why
    if b.flog[partition] != b.logs[partition]:
        return f"partition {partition}'s future log has not caught up"
    state = b.mover[partition]
    if state == P_QUEUED:
        return f"the promotion of partition {partition} waits for the controller's answer"
    if state == P_NONE and s.moves[1] >= m.option("future_promotions"):
        return f"the bound future_promotions {m.option('future_promotions')} is used up"
    if _main_dir(b, partition) == b.future[partition] and "KAFKA-16082" not in bugs(m):
        return f"partition {partition}'s current and future logs are on one dir (the fix resumes no such future log)"
    return None


@FUTURE.rule("PromoteFutureReplica",
      reads=("broker[broker]", "moves"), writes=("broker[broker]", "moves"),
      params=("broker", "partition"), domain=_broker_partitions, guard=promote_guard, kind="broker",
      reference="ReplicaAlterLogDirsThread.maybePromoteFutureReplica; Partition.maybeReplaceCurrentWithFutureReplica; "
                "LogManager.replaceCurrentWithFutureLog; AssignmentsManager.onAssignment")
def promote_future_replica(m, s, broker, partition):
    """The future log has caught up. Promotion None: Assign(future dir) is queued (Queued). Accepted: the future
    log replaces the current one (Effective) and the thread drops the partition. With KAFKA-16082 (before 3.7.1)
    a resumed future log can sit in the current log's dir: the rename finds the partition's dir there, fails with
    an I/O error, and LogDirFailureChannel takes the healthy dir offline."""
    b = s.brokers[broker]
    f = b.future[partition]
    if b.mover[partition] == P_NONE:
        b = _queue(b, partition, f)._replace(mover=replace_at(b.mover, partition, P_QUEUED))
        return set_broker(s._replace(moves=(s.moves[0], s.moves[1] + 1)), broker, b)
    if _main_dir(b, partition) == f:
        new, running = B.fail_dir(m, b, f)
        s = set_broker(s, broker, new)
        return m.hooks.dir_event(m, s, broker, dir=f) if running else s
    return set_broker(s, broker, _promote(b, partition))


def _answered(m, s, broker, sent) -> object:
    """AssignmentsManager.handleAssignmentResponse runs the success callback of each entry answered: that of a
    promotion's Assign(future dir) sets the promotion Accepted, whatever its state now, while the thread has
    the partition (ReplicaAlterLogDirsThread.updateReassignmentState; a delta may have reset it to None since).
    Only a promotion queues the future dir, so the entry names its callback."""
    b = s.brokers[broker]
    mover = b.mover
    for p, d, topic in sent:
        if mover[p] != NO_FETCHER and b.future[p] >= 0 and index_of(b, d) == b.future[p] and b.topics[p] == topic:
            mover = replace_at(mover, p, P_ACCEPTED)
    return set_broker(s, broker, b._replace(mover=mover)) if mover != b.mover else s


@FUTURE.rule("ControllerAssignReplicasToDirs", replaces="ControllerAssignReplicasToDirs",
      reads=("broker[broker]", *R.CONTROLLER_EVENT),
      writes=("broker[broker].inflight", "broker[broker].queue", "broker[broker].mover", *R.CONTROLLER_EVENT),
      needs_message=True,
      params=("broker",), domain=brokers, guard=R.assign_guard, kind="controller",
      reference="ReplicationControlManager.handleAssignReplicasToDirs; AssignmentsManager (response, callbacks); "
                "ReplicaAlterLogDirsThread (promotion Accepted)")
def controller_assign_replicas_to_dirs(m, s, broker):
    """As kraft-core's rule; the answer also runs the callbacks of the entries it carried: a promotion's
    Assign(future dir) sets the promotion Accepted."""
    sent = s.brokers[broker].inflight
    failed = s.controller.registrations[broker] is None
    s = R.controller_assign_replicas_to_dirs(m, s, broker)
    return s if failed else _answered(m, s, broker, sent)


def _after_delta(m, b, touched):
    """ReplicaManager.applyDelta's maybeAddLogDirFetchers: a partition the delta changed is given to the thread
    again; one no longer served leaves the thread. Since 3.7.1 (KAFKA-16297's fix) ReplicaAlterLogDirsThread.
    addPartitions puts a fresh PromotionState(None) (a promotion Queued or Accepted restarts: finding 2's reset);
    3.7.0's addPartitions kept the partition's entry of assignmentRequestStates (QUEUED or COMPLETED), so with the
    switch KAFKA-16297 the promotion keeps its state, as does the candidate fix keep-promotion-state
    (model/kraft/fixes.py)."""
    mover = b.mover
    keep = "KAFKA-16297" in bugs(m) or keeps_promotion_state(m)
    for p in touched:
        if mover[p] != NO_FETCHER:
            served = b.hosted[p] in (H_LEADER, H_FOLLOWER) and _main_dir(b, p) >= 0 and _future_dir(b, p) >= 0
            mover = replace_at(mover, p, (mover[p] if keep else P_NONE) if served else NO_FETCHER)
    return b._replace(mover=mover)


@FUTURE.rule("BrokerReplay", replaces="BrokerReplay",
      reads=DELTA_READS, writes=DELTA_WRITES,
      params=("broker",), domain=brokers, guard=R.replay_guard, kind="broker",
      reference="ReplicaManager.applyDelta (maybeAddLogDirFetchers: ReplicaAlterLogDirsThread.addPartitions resets "
                "the promotion to None); as kraft-core's BrokerReplay")
def broker_replay(m, s, broker):
    """As kraft-core's rule; a partition whose record in the batch bumps its partition epoch is given to
    ReplicaAlterLogDirsThread again, its promotion back to None (3.7.1+; 3.7.0, switch KAFKA-16297: kept). The
    broker's own promotion record, replayed before the swap, also queues Assign(current dir): the listed dir is
    not the current log's."""
    batch = s.controller.log[s.brokers[broker].applied]
    touched = sorted({r.partition for r in batch if getattr(r, "partition", None) is not None})
    s = R.broker_replay(m, s, broker)
    return set_broker(s, broker, _after_delta(m, s.brokers[broker], touched))


@FUTURE.rule("BrokerLoad", replaces="BrokerLoad",
      reads=DELTA_READS, writes=DELTA_WRITES,
      params=("broker",), domain=brokers, guard=R.load_guard, kind="broker",
      reference="LogManager.loadLogs (future logs); LogManager.recoverAbandonedFutureLogs (KAFKA-16082's fix, "
                "BrokerMetadataPublisher's first publish); ReplicaManager.applyDelta (maybeAddLogDirFetchers)")
def broker_load(m, s, broker):
    """Before kraft-core's first delta: a future log on a live dir that the metadata names for the replica is
    promoted in place of the current log (a future log on a failed dir is not loaded). With KAFKA-16082 (before
    3.7.1) it is not: the first delta re-creates the current log on that dir if the old one is out of reach,
    and the stale future log is resumed beside it. After the delta every future log left is given to
    ReplicaAlterLogDirsThread (promotion None), with the fix only one in another dir than the current log."""
    b = s.brokers[broker]
    image = image_of(m, s.controller.log)
    fixed = "KAFKA-16082" not in bugs(m)
    for p in range(m.cfg.partitions):
        if b.future[p] >= 0 and _future_dir(b, p) < 0:
            b = _drop_future(b, p)
        part = image.partitions[p]
        if fixed and b.future[p] >= 0 and part.leader_epoch >= 0 and broker in part.replicas \
                and index_of(b, part.dirs[part.replicas.index(broker)]) == b.future[p] \
                and promotes_abandoned_future(m, b, p):  # (not a stale one with the candidate fix, fixes.py)
            b = _promote(b, p)
    s = R.broker_load(m, set_broker(s, broker, b), broker)
    b = s.brokers[broker]
    mover = b.mover
    for p in range(m.cfg.partitions):
        served = b.hosted[p] in (H_LEADER, H_FOLLOWER) and _main_dir(b, p) >= 0 and _future_dir(b, p) >= 0
        if served and (not fixed or _main_dir(b, p) != b.future[p]):
            mover = replace_at(mover, p, P_NONE)
    return set_broker(s, broker, b._replace(mover=mover))


# ---- the dir failure hook ------------------------------------------------------------------------------------------

def dir_event(m, s, broker, dir=None):
    """kraft-core's dir_event, then ReplicaManager.handleLogDirFailure's part for moves: a future log on the failed
    dir is dropped (its files stay on that disk) and its partition leaves the thread; a partition whose current
    log was on it leaves the thread too (its future log stays, abandoned); leaving the thread reverts a promotion
    Queued or Accepted (ReplicaAlterLogDirsThread.removePartitions)."""
    s = R.dir_event(m, s, broker, dir=dir)
    if dir is None:
        return s
    b = s.brokers[broker]
    for p in range(m.cfg.partitions):
        lost_main = b.copies[p] >> dir & 1 and _main_dir(b, p) < 0
        if b.future[p] == dir:
            b = _drop_future(_remove_fetcher(m, b, p, _main_dir(b, p)), p)
        elif lost_main and b.mover[p] != NO_FETCHER:
            b = _remove_fetcher(m, b, p, dir)
    return set_broker(s, broker, b)


FUTURE.hooks["dir_event"] = dir_event

FUTURE.presets.update({
    "kraft-future": ("KRaft, intra-broker moves: 1 broker x 2 dirs, 1 partition, RF 1, no record; one "
                     "AlterReplicaLogDirs, two promotions queued; a dir failure, a crash, a restart, at most two "
                     "faults",
                     dict(variant="kraft", brokers=1, dirs=2, partitions=1, rf=1, max_dir_failures=1,
                          max_saturations=0, max_crashes=1, max_restarts=1, max_fixes=0, max_failovers=0,
                          max_records=0, consumer=False, max_faults=2, options={"alter_log_dirs": 1})),
})
