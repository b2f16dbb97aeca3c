"""KRaft mode's core feature (KIP-858 as Kafka 3.7 to 4.x implement it; docs/kraft.md): the active controller as one
sequential machine over its metadata log, brokers that register, heartbeat and replay the log at their own pace
and take the three-gate create-or-not decision (model/kraft/replica_manager.py), and AssignReplicasToDirs; with
the storage layer's rules (model/storage/faults.py) at their place in its rule order and the hooks they call
(model/storage/mode.py).

Each step is one record applied by one broker, one request sent, or one controller event (which writes the
records of its handler, computed from the image before it: model/kraft/controller.py). Guards return None when
the rule is enabled and otherwise a short reason; effects return the next state. References name the Kafka
class.method followed (docs/kraft.md cites the files).
"""
from __future__ import annotations

import attrs

from model.kraft import controller as C
from model.kraft import release
from model.kraft.bugs import BUGS, bugs, check_bugs
from model.kraft import fixes as F
from model.kraft.disks import READS as DISK_READS, failed_dir_ids, live_dir_ids, replace_disk_effect
from model.kraft.metadata import K_PARTITION, LOST, image_of, replay_batch
from model.kraft.replica_manager import (
    apply_local, drop_stray, label_stray, queue_assignment, requeue_inflight, stop_and_delete,
)
from model.kraft.render import FORMATS
from model.kraft.schema import KRAFT_CONSTANTS, KRAFT_SCHEMA
from model.kraft.symmetry import dir_symmetry as kraft_dir_symmetry, permute_index_refs
from model.spec.errors import ConfigError
from model.spec.feature import Feature, Option
from model.storage.common import brokers, budget_left, partitions, set_broker
from model.storage.data import advance_leaders
from model.storage.faults import STORAGE, add_storage_rules
from model.storage.mode import declares
from model.storage.schema import SATURATION_CONSTANTS, SATURATION_FIELDS, STORAGE_CONSTANTS, STORAGE_SCHEMA
from model.storage.state import H_LEADER, State

# What a controller event reads and writes: the whole controller record (its log and image).
CONTROLLER_EVENT = ("controller",)


def write(m, s: State, records) -> State:
    """The controller appends an event's records to its log as one batch and replays them into its image."""
    if not records:
        return s
    c = s.controller
    batch = tuple(records)
    image = replay_batch(C.Image(c.registrations, c.partitions), len(c.log), batch)
    return s._replace(controller=c._replace(log=c.log + (batch,), registrations=image.registrations,
                                            partitions=image.partitions))


def controller_image(s: State):
    return C.Image(s.controller.registrations, s.controller.partitions)


def topic_deleted(s: State, p: int, topic: int) -> bool:
    """Whether the controller has deleted partition p's topic ``topic`` (a later topic id, or none)."""
    now = s.controller.partitions[p]
    return now.topic != topic or now.leader_epoch < 0


def broker_image(m, s: State, b: int):
    """The image the broker published: the log up to its applied offset."""
    return image_of(m, s.controller.log[:s.brokers[b].applied])


# ---- the storage layer's hooks (model/storage/mode.py), with what each reads and writes ----------------------------

@declares(reads=("broker[broker].failed",), writes=("broker[broker].failed",))
def dir_event(m, s, broker, dir=None):
    """ReplicaManager.handleLogDirFailure -> BrokerLifecycleManager.propagateDirectoryFailure: the dir's id joins
    the offline dirs every later heartbeat carries. A dir failure does not fence the broker."""
    if dir is None:
        return s  # KIP-928's saturation: model/kraft/saturation.py overrides this hook
    b = s.brokers[broker]
    return set_broker(s, broker, b._replace(failed=b.failed | 1 << dir))


@declares(reads=("controller.registrations",), writes=())
def restart_blocked(m, s, broker) -> str | None:
    """A stopped broker starts again only once the controller fenced its registration (its session timed out):
    the model leaves out a restart within the session timeout (docs/kraft.md)."""
    reg = s.controller.registrations[broker]
    if reg is not None and not reg.fenced:
        return f"the controller has not fenced broker {broker} yet (its session has not timed out)"
    return None


def shutdown_under_way(m, s, broker) -> str | None:
    """Why the broker's shutdown is under way (None: it is not): kraft-core has no controlled shutdown, and a
    broker that shuts down stops in the same step (model/kraft/shutdown.py provides the feature's own)."""
    return None


def shut_down(m, s, broker) -> State:
    """BrokerServer.shutdown without controlled shutdown: the broker stops, its memory lost as in a crash
    (LogManager.shutdown's clean shutdown file: the hook ``clean_stop``, which only kraft-elr fills in)."""
    s = m.hooks.clean_stop(m, s, broker)
    return set_broker(s, broker, m.crashed(s.brokers[broker]))


def clean_stop(m, s, broker) -> State:
    """What a broker's shutdown (not a crash) leaves on its disks for its next start-up: nothing the model reads
    without ELR (model/kraft/elr.py keeps the clean shutdown file's broker epoch)."""
    return s


def clean_shutdown(m, s, broker) -> bool:
    """ClusterControlManager.registerBroker's isCleanShutdown for the broker's registration now: read only with
    ELR (model/kraft/elr.py); without it both answers write the same records."""
    return False


# The leader's own image: the log up to its applied offset.
@declares(reads=("controller.partitions", "controller.log", "broker[*].up", "broker[*].hosted", "broker[*].epoch",
                 "broker[*].applied"), writes=())
def isr_writer(m, s, partition) -> int:
    """The broker whose AlterPartition the controller accepts now: the leader of the controller's partition state,
    running, leading at its leader epoch, with the controller's partition epoch in its own image
    (ReplicationControlManager.alterPartition: FENCED_LEADER_EPOCH, INVALID_UPDATE_VERSION otherwise), or -1."""
    part = s.controller.partitions[partition]
    leader = part.leader
    if leader < 0:
        return -1
    b = s.brokers[leader]
    if not (b.up and b.hosted[partition] == H_LEADER and b.epoch[partition] == part.leader_epoch):
        return -1
    if broker_image(m, s, leader).partitions[partition].partition_epoch != part.partition_epoch:
        return -1
    return leader


@declares(reads=CONTROLLER_EVENT, writes=("controller.log", "controller.partitions"))
def isr_written(m, s, partition, isr) -> State:
    """AlterPartition, sent and answered in the data path's step: a PartitionChangeRecord with the new ISR."""
    return write(m, s, [C.partition_change(m, controller_image(s), partition, isr=isr)])


def quiescent(m, s) -> bool:
    """Nothing of the control plane is pending (beside the assignment queues, which are channels): every running
    broker has registered, published the whole metadata log and has no unfencing or failed dir left to report
    (its heartbeat would change nothing), and every broker that is down is fenced or unregistered (no session
    left to time out). The data path (fetches, ISR changes) is not part of it, as in ZooKeeper mode."""
    log_length = len(s.controller.log)
    for broker, b in enumerate(s.brokers):
        reg = s.controller.registrations[broker]
        if not b.up:
            if reg is not None and not reg.fenced:
                return False
        elif (not b.registered or not b.loaded or b.applied < log_length or b.failed & ~b.acked_dirs
              or _unfences(s, broker)):
            return False
    return True


def _check_release(m) -> bool:
    """Refuse a configuration the release cannot run (model/kraft/release.py ``elr_refusal``): ConfigError, exit 2."""
    why = release.elr_refusal(m.cfg)
    if why is not None:
        raise ConfigError(why)
    return True


def _check_flag(value) -> str | None:
    return None if isinstance(value, bool) else f"dir_symmetry must be true or false, not {value!r}"


KRAFT = Feature(
    "kraft-core",
    "The KRaft controller over its metadata log (registrations with online dir ids, partitions with Directories, "
    "fencing, elections with LeaderAcceptor, handleDirectoriesOffline, AssignReplicasToDirs) and brokers that "
    "replay it and decide per replica whether to create its log (KIP-858)",
    config_fields=("brokers", "dirs", "partitions", "rf", "max_dir_failures", "max_crashes", "max_restarts",
                   "max_fixes", "max_faults"),
    options=(Option("bugs", (), "Fixed Kafka bugs re-introduced in KRaft mode: " + ", ".join(BUGS), check_bugs,
                    in_bounds=True),
             Option(F.FIXES_OPTION, (), "Candidate fixes of the KRaft findings applied (docs/fixes.md): "
                    + ", ".join(F.FIXES), F.check_fixes, in_bounds=True),
             Option("dir_symmetry", False, "Dir symmetry reduction in KRaft mode (with --symmetry, the default): "
                    "opt-in, as it saves states but not time (docs/performance.md)", _check_flag),
             Option(release.KAFKA_OPTION, release.NEWEST, "The Kafka release KRaft mode follows (--kafka): "
                    + ", ".join(release.RELEASES) + " or a version X.Y.Z of one (model/kraft/release.py)",
                    release.check_kafka, shown=release.text),
             Option(release.ELR_OPTION, None, "Eligible Leader Replicas (KIP-966; model/kraft/elr.py): true or "
                    "false; left out, the release's default for a new cluster (on from 4.1)", release.check_elr,
                    shown=lambda m: "on" if C.elr_enabled(m) else "off")),
    flags=(),  # the storage flags (--brokers, --dirs, ...) are the ZooKeeper core's already: one option each
    # The controller's record (metadata log, registrations, Directories) and the assignment queues hold dir ids:
    # permute_index_refs renames them with the brokers' dirs (model/kraft/symmetry.py).
    dir_symmetry=lambda cfg: STORAGE.dir_symmetry(cfg) or kraft_dir_symmetry(cfg),
    quiescent=quiescent,
    fields=STORAGE_SCHEMA + SATURATION_FIELDS + KRAFT_SCHEMA,
    # How the KRaft fields read in traces and views: records, images and entries in Kafka's names (render.py).
    formats=FORMATS,
    constants={**STORAGE_CONSTANTS, **SATURATION_CONSTANTS, **KRAFT_CONSTANTS,
               # The release's behaviours, computed once (model/kraft/release.py, bugs.py): checked first.
               "kraft_release_checked": _check_release, "kraft_elr": lambda m: release.elr_on(m.cfg),
               "kraft_bugs": bugs,
               # Partition.maybeIncrementLeaderHW (3.7.0+): no HW advance while the ISR is below min ISR.
               "strict_min_isr": lambda m: True},
    hooks={
        "budget_left": budget_left,
        "dir_event": dir_event,
        "restart_blocked": restart_blocked,
        "isr_writer": isr_writer,
        "isr_written": isr_written,
        # KRaft mode's own (model/kraft/shutdown.py overrides them): BrokerHeartbeat's and BrokerDirFailureTimeout's.
        "shutdown_under_way": shutdown_under_way,
        "shut_down": shut_down,
        # kraft-elr's (model/kraft/elr.py): the clean shutdown file and the registration's reading of it.
        "clean_stop": clean_stop,
        "clean_shutdown": clean_shutdown,
        "permute_index_refs": permute_index_refs,
        # The brokers that may hold a replica of partition p (the constant ``assignments``): its assignment;
        # kraft-reassignment adds the brokers its reassignment adds.
        "replica_slots": lambda m, p: m.original[p],
    },
)


# ---- the controller's events -----------------------------------------------------------------------------------

def create_topic_guard(m, s, partition):
    image = controller_image(s)
    if C.exists(image, partition):
        return f"partition {partition} already exists"
    replicas = m.original[partition]
    if any(image.registrations[b] is None for b in replicas):
        return f"a broker of partition {partition}'s assignment {list(replicas)} is not registered"
    if not any(C.is_active(image, b) for b in replicas):
        return f"every broker of partition {partition}'s assignment is fenced (INVALID_REPLICATION_FACTOR)"
    return None


@KRAFT.rule("CreateTopic",
      reads=CONTROLLER_EVENT, writes=CONTROLLER_EVENT,
      params=("partition",), domain=partitions, guard=create_topic_guard, kind="controller", fair=False,
      reference="ReplicationControlManager.createTopic (manual assignment); ClusterControlManager.defaultDir")
def create_topic(m, s, partition):
    """The controller creates the partition: a PartitionRecord with the active replicas as ISR, the first of them
    as leader, and each replica's Directories entry from defaultDir (UNASSIGNED for a broker with two or more
    registered dirs, its one dir for one, MIGRATING for none)."""
    return write(m, s, [C.create_partition(m, controller_image(s), partition)])


# The storage layer's rules (DirFail, BrokerCrash, BrokerRestart, ReplaceDisk, RemoveDirFromConfig), the first
# three cited as KRaft's code does them (KIP-112's ZooKeeper-mode bootstrap is not KRaft's start-up).
KRAFT_STORAGE_CITED = {
    "DirFail": (
        "ReplicaManager.handleLogDirFailure (LogDirFailureChannel); BrokerLifecycleManager.propagateDirectoryFailure "
        "(the dir in every later heartbeat's OfflineLogDirs); at start-up: LogManager.createAndValidateLogDirs",
        """A log dir fails (an I/O error). On a running broker the partitions it holds there go Offline (their fetchers
        stop) and the dir leaves the live dirs; the broker reports it in its next heartbeat (the dir_event hook). On a
        broker that is down the dir is offline when it starts again."""),
    "BrokerCrash": (
        "a broker process dies (kill -9, power loss); its session then expires (BrokerHeartbeatManager)",
        """A running broker dies: its memory (published image, AssignmentsManager's queue and request in flight,
        ReplicaAlterLogDirsThread's state) is lost; its disks keep what they hold."""),
    "BrokerRestart": (
        "KafkaRaftServer.initializeLogDirs (MetaPropertiesEnsemble.Loader.load: a dir whose meta.properties read "
        "fails with an I/O error is an error dir; one without meta.properties, empty or unmounted, stops the "
        "start-up); BrokerServer.startup: LogManager(errorLogDirs), LogManager.createAndValidateLogDirs (the error "
        "dirs offline), LogManager.loadLogs (the live dirs' logs)",
        """A stopped broker starts: the dirs it reads are live and their logs are loaded; a failed dir (its
        meta.properties gives an I/O error) stays offline, its logs not loaded (with KIP-928's reading a saturated
        dir is good again). Registration (BrokerRegister) and the first image (BrokerLoad) are steps of their own."""),
}
add_storage_rules(KRAFT, KRAFT_STORAGE_CITED)
# A replaced disk gets a new directory id (model/kraft/disks.py); ZooKeeper mode has no dir ids.
_at = next(i for i, r in enumerate(KRAFT.rules) if r.name == "ReplaceDisk")
KRAFT.rules[_at] = attrs.evolve(
    KRAFT.rules[_at], effect=replace_disk_effect(KRAFT.rules[_at].effect),
    reads=KRAFT.rules[_at].reads + DISK_READS, writes=KRAFT.rules[_at].writes + DISK_READS,
    doc=" ".join(replace_disk_effect(KRAFT.rules[_at].effect).__doc__.split()),
    reference=KRAFT.rules[_at].reference + "; kafka-storage format (a new directory.id in meta.properties)")


def register_guard(m, s, broker):
    b = s.brokers[broker]
    if not b.up:
        return f"broker {broker} is down"
    if b.registered:
        return f"broker {broker} registered this incarnation already"
    return None


@KRAFT.rule("BrokerRegister",
      reads=("broker[broker]", *CONTROLLER_EVENT), writes=("broker[broker].registered", *CONTROLLER_EVENT),
      params=("broker",), domain=brokers, guard=register_guard, kind="controller",
      reference="BrokerLifecycleManager.sendBrokerRegistration; ClusterControlManager.registerBroker")
def broker_register(m, s, broker):
    """A started broker registers (the request and the controller's handling are one step): LogDirs are the
    dirs it can read now (a failed or removed dir is not listed), by their current disks' ids; the controller
    writes a RegisterBrokerRecord, fenced, whose offset is the broker epoch, replacing any older registration and
    its dir list."""
    return register_broker(m, s, broker, live_dir_ids(s.brokers[broker]))


def register_broker(m, s, broker, dirs: tuple) -> State:
    """ClusterControlManager.registerBroker for a new incarnation with these LogDirs: the records of
    handleBrokerShutdown (4.0+: controller.broker_shutdown, clean or not as the hook ``clean_shutdown`` reads the
    broker's previous broker epoch), then the RegisterBrokerRecord."""
    records = C.broker_shutdown(m, controller_image(s), broker, m.hooks.clean_shutdown(m, s, broker))
    s = write(m, s, records + [C.register(broker, dirs)])
    return set_broker(s, broker, s.brokers[broker]._replace(registered=True))


def _unfences(s, broker) -> bool:
    """BrokerHeartbeatManager.calculateNextBrokerState: a fenced broker that wants no fencing is unfenced once
    its metadata offset reached its registration record."""
    b, reg = s.brokers[broker], s.controller.registrations[broker]
    return reg.fenced and b.loaded and b.applied > reg.epoch


def heartbeat_guard(m, s, broker):
    b = s.brokers[broker]
    if not b.up or not b.registered:
        return f"broker {broker} is not running registered"
    why = m.hooks.shutdown_under_way(m, s, broker)
    if why is not None:
        return why
    if not _unfences(s, broker) and not b.failed & ~b.acked_dirs:
        return f"a heartbeat of broker {broker} changes nothing (no unfencing due, no failed dir unacknowledged)"
    return None


@KRAFT.rule("BrokerHeartbeat",
      reads=("broker[broker]", *CONTROLLER_EVENT), writes=("broker[broker].acked_dirs", *CONTROLLER_EVENT),
      params=("broker",), domain=brokers, guard=heartbeat_guard, kind="controller",
      reference="BrokerLifecycleManager.sendBrokerHeartbeat; ReplicationControlManager.processBrokerHeartbeat, "
                "handleBrokerUnfenced, handleDirectoriesOffline")
def broker_heartbeat(m, s, broker):
    """A heartbeat carrying every dir that failed since the broker started, its answer NONE (sent, handled and
    answered in one step; a heartbeat that would change nothing is left out). The controller unfences the broker
    if its metadata offset reached its registration (BrokerRegistrationChangeRecord, then elections for the
    partitions with no leader, the broker counting as active), and runs handleDirectoriesOffline for the dirs it
    names, all computed from the image before the heartbeat. The answer acknowledges the dirs it carried."""
    b = s.brokers[broker]
    image = controller_image(s)
    offline = failed_dir_ids(m, b)
    # (Candidate fixes of finding 5, model/kraft/fixes.py: the unfencing judged without the reported dirs, or the
    # offline dirs' records first.)
    unfencing = C.broker_unfenced(m, F.unfencing_image(m, image, broker, offline), broker) \
        if _unfences(s, broker) else []
    dirs_offline = C.directories_offline(m, image, broker, offline)
    records = dirs_offline + unfencing if F.offline_dirs_first(m) else unfencing + dirs_offline
    s = write(m, s, records)
    return set_broker(s, broker, s.brokers[broker]._replace(acked_dirs=b.failed))


def fence_guard(m, s, broker):
    reg = s.controller.registrations[broker]
    if reg is None or reg.fenced:
        return f"broker {broker} is not registered unfenced"
    if s.brokers[broker].up:
        return f"broker {broker} is running (the model fences a broker only after its crash)"
    return None


@KRAFT.rule("ControllerFenceBroker",
      reads=("broker[broker].up", *CONTROLLER_EVENT), writes=CONTROLLER_EVENT,
      params=("broker",), domain=brokers, guard=fence_guard, kind="controller",
      reference="BrokerHeartbeatManager (session timeout); ReplicationControlManager.maybeFenceOneStaleBroker; "
                "ReplicationControlManager.handleBrokerFenced")
def controller_fence_broker(m, s, broker):
    """A crashed broker's session times out: it leaves every ISR (the last member stays) and every leadership,
    with elections through LeaderAcceptor, then its registration is fenced."""
    return write(m, s, C.broker_fenced(m, controller_image(s), broker))


def assign_guard(m, s, broker):
    if not s.brokers[broker].inflight:
        return f"broker {broker} has no AssignReplicasToDirs request in flight"
    return None


@KRAFT.rule("ControllerAssignReplicasToDirs",
      reads=("broker[broker]", *CONTROLLER_EVENT),
      writes=("broker[broker].inflight", "broker[broker].queue", *CONTROLLER_EVENT),
      needs_message=True,
      params=("broker",), domain=brokers, guard=assign_guard, kind="controller",
      reference="ReplicationControlManager.handleAssignReplicasToDirs; AssignmentsManager (response)")
def controller_assign_replicas_to_dirs(m, s, broker):
    """The controller handles the broker's AssignReplicasToDirs and the broker gets the answer: a stale broker
    epoch fails it all (the entries go back to the queue unless a newer one for their partition is there: retried);
    else per partition Directories[b] is written, with no partition-epoch check, and a dir not online for the broker
    also removes it from the ISR and leadership; an entry of a deleted topic (UNKNOWN_TOPIC_ID) or of a partition
    the broker is no longer a replica of (NOT_LEADER_OR_FOLLOWER) fails and goes back to the queue likewise."""
    b = s.brokers[broker]
    # The request's broker epoch: this incarnation's registration (a crash empties the request in flight).
    epoch = s.controller.registrations[broker].epoch
    records, error, failed = C.assign_replicas_to_dirs(m, controller_image(s), broker, epoch, b.inflight)
    s = write(m, s, records)
    b = s.brokers[broker]
    if error is not None:
        return set_broker(s, broker, requeue_inflight(b))
    # Kafka 3.7.1 to 3.8.0 (KAFKA-16886's fix, KAFKA-17190 not yet): NOT_LEADER_OR_FOLLOWER is dropped; since
    # 3.8.1 every per-partition error is retried, the entry being checked against the image before sending.
    drops = C.NOT_LEADER_OR_FOLLOWER if "KAFKA-17190" in bugs(m) and "KAFKA-16886" not in bugs(m) else None
    retried = tuple(entry for entry, why in failed if why != drops)
    return set_broker(s, broker, requeue_inflight(b._replace(inflight=retried)))


# ---- the brokers ---------------------------------------------------------------------------------------------------

def load_guard(m, s, broker):
    b = s.brokers[broker]
    if not b.up:
        return f"broker {broker} is down"
    if b.loaded:
        return f"broker {broker} published its image already"
    return None


@KRAFT.rule("BrokerLoad",
      reads=("broker[broker]", "broker[*].up", "broker[*].hosted", "broker[*].epoch", "broker[*].logs",
             "broker[*].hw", "broker[*].isr", "controller.log", "controller.partitions", "committed", "acked"),
      writes=("broker[broker]", "committed", "acked"),
      params=("broker",), domain=brokers, guard=load_guard, kind="broker",
      reference="BrokerServer start-up (initial catch-up); BrokerMetadataPublisher first publish; "
                "ReplicaManager.applyDelta; TopicDelta.localChanges")
def broker_load(m, s, broker):
    """A started broker catches up with the metadata log and publishes its first image: the delta from the empty
    image lists every local replica as new, with its Directories entry, so each takes the create-or-not decision
    with its dir listed; then the assignments whose dir differs are queued."""
    log = s.controller.log
    image = image_of(m, log)
    b = s.brokers[broker]
    for p, part in enumerate(image.partitions):
        b = drop_stray(b, p)  # LogManager.startup: logs of deleted topics are stray (isStrayKraftReplica)
        if part.leader_epoch < 0 or broker not in part.replicas:
            continue
        listed = part.dirs[part.replicas.index(broker)]
        # A candidate fix (model/kraft/fixes.py): a replica whose log may be on an offline dir is given LOST, so
        # gate 2 skips it, and assigned to LOST.
        lost = image.jbod and F.assigns_lost_at_start_up(m, b, p, listed)
        unapplied, (b, _) = b, apply_local(broker, b, p, part, LOST if lost else listed, bugs(m), F.fixes(m))
        b = label_stray(unapplied, b, p, topic_deleted(s, p, part.topic))
        if lost:
            b = F.queue_lost(b, p, part.topic)
        elif image.jbod and not F.promotion_assigns(m, b, p, listed):
            # ReplicaManager.applyDelta: assignments only at a metadata.version that supports them
            b = queue_assignment(b, p, listed, part.topic)
    s = set_broker(s, broker, b._replace(applied=len(log), loaded=True))
    return advance_leaders(m, s, broker)


def replay_guard(m, s, broker):
    b = s.brokers[broker]
    if not b.up or not b.loaded:
        return f"broker {broker} is not running with its image loaded"
    if b.applied >= len(s.controller.log):
        return f"broker {broker} applied the whole metadata log"
    return None


@KRAFT.rule("BrokerReplay",
      reads=("broker[broker]", "broker[*].up", "broker[*].hosted", "broker[*].epoch", "broker[*].logs",
             "broker[*].hw", "broker[*].isr", "controller.log", "controller.partitions", "committed", "acked"),
      writes=("broker[broker]", "committed", "acked"),
      params=("broker",), domain=brokers, guard=replay_guard, kind="broker",
      reference="MetadataLoader (one batch a delta here); ReplicaManager.applyDelta "
                "(getOrCreatePartition, Partition.createLogInAssignedDirectoryId, LogManager.getOrCreateLog); "
                "TopicDelta.localChanges; AssignmentsManager.onAssignment")
def broker_replay(m, s, broker):
    """The broker publishes the next batch of the metadata log as one delta (TopicDelta.localChanges). For each
    partition the batch touches that the broker is a replica of: its dir is listed if the partition is new in the
    delta or a record of the batch carries Directories; the replica takes the create-or-not decision (gate 1:
    an Offline partition is skipped; gate 2, if its dir is listed: create only if that dir is live here, or no
    dir is offline, or it is UNASSIGNED; gate 3: a missing log of an existing partition with a dir offline is a
    storage error, the partition goes Offline), then leads or follows at the delta's leader epoch; a listed dir
    that differs from the log's queues an assignment."""
    b = s.brokers[broker]
    batch = s.controller.log[b.applied]
    before = image_of(m, s.controller.log[:b.applied])
    b = b._replace(applied=b.applied + 1)
    image = image_of(m, s.controller.log[:b.applied])
    for p in range(m.cfg.partitions):
        touching = [r for r in batch if getattr(r, "partition", None) == p]
        part, was = image.partitions[p], broker in before.partitions[p].replicas
        if not touching or not (was or broker in part.replicas):
            continue
        if broker not in part.replicas:  # TopicDelta.localChanges: deletes (topic deleted, or replica removed)
            b = stop_and_delete(b, p)
            continue
        listed = None
        # directory(b) of the previous registration throws for a replica it does not have: an added replica is
        # never listed (the exception is swallowed).
        # (A candidate fix, list-added-replica, lists it.)
        if any(r.kind == K_PARTITION or r.dirs is not None for r in touching) and (
                was or any(r.kind == K_PARTITION for r in touching) or F.lists_added_replica(m)):
            listed = part.dirs[part.replicas.index(broker)]
        unapplied, (b, _) = b, apply_local(broker, b, p, part, listed, bugs(m), F.fixes(m))
        b = label_stray(unapplied, b, p, topic_deleted(s, p, part.topic))
        if listed is not None and image.jbod and not F.promotion_assigns(m, b, p, listed):  # (as in BrokerLoad)
            b = queue_assignment(b, p, listed, part.topic)
    return advance_leaders(m, set_broker(s, broker, b), broker)


def send_guard(m, s, broker):
    b = s.brokers[broker]
    if not b.up or not b.registered:
        return f"broker {broker} is not running registered"
    if not b.queue:
        return f"broker {broker}'s assignment queue is empty"
    if b.inflight:
        return f"broker {broker} has an AssignReplicasToDirs request in flight"
    return None


@KRAFT.rule("BrokerSendAssignments",
      reads=("broker[broker]", "controller.log"), writes=("broker[broker].queue", "broker[broker].inflight"),
      params=("broker",), domain=brokers, guard=send_guard, kind="broker",
      reference="AssignmentsManager.maybeSendAssignments (one request in flight, batched queue); Assignment.valid")
def broker_send_assignments(m, s, broker):
    """The broker sends its queued assignments as one AssignReplicasToDirs request (one in flight at a time),
    dropping first those its published image no longer backs: the topic id is gone (deleted) or the broker is no
    longer a replica (Assignment.valid, since 3.8.1; KAFKA-17190 and KAFKA-16886 send them all); nothing is sent
    if none is left."""
    b = s.brokers[broker]
    queue = b.queue
    if "KAFKA-17190" not in bugs(m) and "KAFKA-16886" not in bugs(m):
        image = broker_image(m, s, broker)
        queue = tuple(e for e in queue if image.partitions[e[0]].leader_epoch >= 0
                      and image.partitions[e[0]].topic == e[2] and broker in image.partitions[e[0]].replicas)
    return set_broker(s, broker, b._replace(inflight=queue, queue=()))


# kraft-tiny: one record, a consumer and one fault of any kind, exhausted in under a minute on two cores; a repair
# needs two faults (a failed dir on a broker that is down), so it has none. kraft-tiny-faults: the same cluster with
# two faults and a repair but no record (with one record and two faults the space is larger than a minute allows,
# and neither --por nor dir symmetry reduces it yet: docs/kraft.md, "Presets"); it finds finding 1. Together they
# fire every rule of kraft-core, the data path and the faults. kraft-small: two partitions, each on one broker (RF 1:
# the facts file's smallest bounds for the crash and restart paths), no repair.
_TINY = dict(variant="kraft", brokers=2, dirs=2, partitions=1, rf=2, max_dir_failures=1, max_saturations=0,
             max_crashes=1, max_restarts=1, max_fixes=1, max_failovers=0)
KRAFT.presets.update({
    "kraft-tiny": ("KRaft: 2 brokers x 2 dirs, 1 partition, RF 2; one record, a consumer; a dir failure, a crash, a "
                   "restart, at most one fault, no repair",
                   dict(_TINY, max_records=1, consumer=True, max_faults=1, max_fixes=0)),
    "kraft-tiny-faults": ("KRaft: 2 brokers x 2 dirs, 1 partition, RF 2, no record; a dir failure, a crash, a "
                          "restart, a repair, at most two faults (finding 1)",
                          dict(_TINY, max_records=0, consumer=False, max_faults=2)),
    "kraft-small": ("KRaft: 2 brokers x 2 dirs, 2 partitions, RF 1, no record; a dir failure, a crash, a restart, no "
                    "repair, at most two faults",
                    dict(_TINY, partitions=2, rf=1, max_fixes=0, max_records=0, consumer=False, max_faults=2)),
})
