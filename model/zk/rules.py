"""The KIP-112 core feature of ZooKeeper mode: topic creation, the ZooKeeper-era controller's events and the
brokers' handling of its requests (model/zk/requests.py), with the storage layer's rules (model/storage/faults.py:
the environment's faults, crash and restart) at their place in its rule order, and the hooks they call
(model/storage/mode.py). Which replicas a broker may create is the design's choice (model/zk/designs.py: the
``may_create_log`` hook); the data path, KIP-928, deletion and reassignment are features of their own.

Guards return None when the rule is enabled and otherwise a short reason; effects return the next state.
References name the KIP-112 scenario (docs/model.md numbers them as the KIP does) or the Kafka code followed.
"""
from __future__ import annotations

from model.spec.feature import Feature, Flag
from model.storage.footprints import LEADER_HW_READS
from model.storage.schema import STORAGE_CONSTANTS, STORAGE_SCHEMA
from model.zk.footprints import (
    CHANNELS, CONTROLLER_STEP_APPENDS, CONTROLLER_STEP_READS, CONTROLLER_STEP_WRITES, controller_handles_response,
)
from model.zk.schema import MEMO_KINDS, UPDATE_METADATA_EAGER, ZK_CONSTANTS, ZK_SCHEMA
from model.storage.common import bounded, brokers, budget_left, nothing, partitions, set_broker, spend
from model.storage.config import ONE_OF_EACH
from model.storage.data import advance_leaders
from model.storage.faults import STORAGE, add_storage_rules
from model.storage.mode import declares
from model.storage.state import (
    B_FAILOVERS, BUDGET_FIELDS, D_INELIGIBLE, D_NONE, D_QUEUED, LEADER_AND_ISR, P_NEW, P_NONEXISTENT, P_OFFLINE,
    P_ONLINE, R_DELETION_INELIGIBLE, R_NEW, R_ONLINE, STOP_REPLICA, UPDATE_METADATA,
)
from model.zk import requests
from model.zk.controller import ControllerStep
from model.zk.deletion import resume_deletion_for, resume_deletions
from model.zk.isr import isr_writer, isr_written
from model.zk.reassignment import resume_reassignments
from model.zk.requests import oldest_request_is, waiting_response


def _controller_view_is_current(m, s) -> bool:
    """The controller's view of live brokers is that of the registrations (no broker change event pending)."""
    live = 0
    for b, broker in enumerate(s.brokers):
        if broker.up:
            live |= 1 << b
    return live == s.controller.live


@declares(reads=("notifications",), writes=("notifications",))
def write_log_dir_event(m, s, broker, dir=None):
    """The broker writes a /log_dir_event_notification znode (KIP-112): ControllerLogDirEvent handles it (the
    znode does not name the dir)."""
    return s._replace(notifications=s.notifications | 1 << broker)


@declares(reads=("controller.live",), writes=())
def restart_blocked(m, s, broker) -> str | None:
    """The model starts a stopped broker again only once the controller has processed its failure (the
    controller no longer counts it live)."""
    if s.controller.live >> broker & 1:
        return f"the controller has not yet processed broker {broker}'s failure"
    return None


CORE = Feature(
    "kip112-core",
    "The ZooKeeper-era controller (replica and partition state machines, LeaderAndIsr, UpdateMetadata with "
    "offline_replicas, /log_dir_event_notification) and brokers with JBOD log dirs that fail, crash, restart and "
    "are repaired (KIP-112)",
    # max_saturations is the saturation feature's (its DirSaturate spends it): without it no dir saturates
    config_fields=("brokers", "dirs", "partitions", "rf", "eager_metadata", "unclean_election", "probe_new_replicas",
                   *(f for f in BUDGET_FIELDS if f != "max_saturations"), "max_faults"),
    flags=(
        *STORAGE.flags,
        Flag("eager_metadata", "--eager-metadata/--no-eager-metadata",
             "Apply UpdateMetadata as soon as it heads a broker's queue (default) or interleave it."),
        Flag("unclean_election", "--unclean-election/--no-unclean-election",
             "unclean.leader.election.enable: elect a live replica outside the ISR when none is in it."),
        Flag("probe_new_replicas", "--probe-new-replicas/--no-probe-new-replicas",
             "The log-dir probe also queries replicas in NewReplica (KIP-112, default) or, as in Kafka's code, "
             "skips them."),
    ),
    dir_symmetry=STORAGE.dir_symmetry,
    quiescent=_controller_view_is_current,
    fields=STORAGE_SCHEMA + ZK_SCHEMA, constants={**STORAGE_CONSTANTS, **ZK_CONSTANTS}, eager=UPDATE_METADATA_EAGER,
    memo_kinds=MEMO_KINDS,
    hooks={
        # The environment's bounds (model/storage/common.py): why a rule that ``spends`` one may not fire again
        # (partial-order reduction treats such actions as dead: explorer/por.py).
        "budget_left": budget_left,
        # The storage layer's hooks (model/storage/mode.py): a running broker's dir event writes a
        # /log_dir_event_notification znode; a stopped broker restarts once the controller processed its failure.
        "dir_event": write_log_dir_event,
        "restart_blocked": restart_blocked,
        # The data path's ISR changes go to the partition's ZooKeeper record (model/zk/isr.py).
        "isr_writer": isr_writer,
        "isr_written": isr_written,
        # KIP-112 scenario 8: which replicas of a topic being deleted get StopReplica(delete=true); the others
        # are ineligible at once (an offline replica is handled as if its broker were offline).
        "deletion_reaches": lambda step, broker, p: step.is_replica_online(broker, p),
        # Whether the controller reacts to replicas that answer without error again (KIP-928's recovery).
        "reelect_on_recovery": lambda cfg: False,
        # isNewReplica of a LeaderAndIsr entry for a replica on a broker (ControllerStep.add_leader_and_isr):
        # KIP-112 as adopted sends the replica state machine's choice (true from NewReplica only) as it is.
        "is_new_replica": lambda step, broker, p, is_new: is_new,
        # Whether a replica whose deletion started waits for its StopReplica answer when found offline.
        "deletion_awaits_answer": lambda cfg: False,
        # Whether a running broker's DirFail writes a /log_dir_event_notification (KIP-112; KIP-46's broker halts).
        "dir_failure_notifies": True,
        # (old, target) of partition p's reassignment (model/zk/reassignment.py): the admin's move of partition 0
        # (ModelConfig.reassignment_target); KIP-46's self-healing moves the replicas of a failed broker instead.
        "reassignment_move": lambda m, state, p: (m.original[p], m.targets[p]),
        # Every broker that may hold a replica of partition p (the controller's replica state slots), in order:
        # the assignment, then the brokers a reassignment adds.
        "replica_slots": lambda cfg, p: cfg.assignment(p) + tuple(
            b for b in (cfg.reassignment_target(p) or ()) if b not in cfg.assignment(p)),
    },
)


# ---------------------------------------------------------------------------------------------
# Environment: topic creation, disks, brokers, the controller's own failure.
# ---------------------------------------------------------------------------------------------

def create_topic_guard(m, s, partition):
    if s.controller.partitions[partition].state != P_NONEXISTENT:
        return f"partition {partition} already exists"
    if s.controller.deletion[partition] != D_NONE:
        return f"partition {partition}'s topic was deleted (the model does not re-create a topic)"
    return None


@CORE.rule("CreateTopic",
      guard_reads=("controller.partitions", "controller.deletion"), reads=CONTROLLER_STEP_READS, writes=CONTROLLER_STEP_WRITES, appends=CONTROLLER_STEP_APPENDS,
      params=("partition",), domain=partitions, guard=create_topic_guard, kind="controller", fair=False,
      reference="KIP-112 scenario 1 (topic gets created); KafkaController.onNewPartitionCreation")
def create_topic(m, s, partition):
    """The controller creates the partition: its replicas go NewReplica, the partition is New, then Online with
    the first live replica in assignment order as leader and the live replicas as ISR (LeaderAndIsr with
    isNewReplica=true to them); then the replicas go OnlineReplica, which sends nothing from NewReplica. With no
    live replica the partition stays New."""
    step = ControllerStep(m, s)
    step.partitions_to_new([partition])
    step.replicas_to_new([(partition, i) for i in range(m.cfg.rf)])
    step.trigger_online_partition_state_change([partition])
    step.replicas_to_online([(partition, i) for i in range(m.cfg.rf)])
    return step.finish()


# The storage layer's rules (model/storage/faults.py: DirFail, BrokerCrash, BrokerRestart, ReplaceDisk,
# RemoveDirFromConfig), at their place in the core's rule order.
add_storage_rules(CORE)


def _guard_controller_failover(m, s):
    return budget_left(m, s, B_FAILOVERS)


@CORE.rule("ControllerFailover",
      # It empties the channels before it sends, so it reads none of them (nor the notifications it deletes).
      guard_reads=("budget",), reads=("controller", "broker[*].up", "ext", "budget"),
      writes=CONTROLLER_STEP_WRITES + CHANNELS + ("notifications", "budget"),
      spends=B_FAILOVERS,
      params=(), domain=bounded(nothing, "max_failovers"),
      guard=_guard_controller_failover, kind="controller", fair=False,
      reference="KIP-112 scenario 6 (controller failover); KafkaController.onControllerFailover")
def controller_failover(m, s):
    """The controller moves to another broker. The old one's queued requests and unprocessed responses are
    lost. The new controller (epoch + 1) reads the live brokers and leader-and-ISR records from ZooKeeper,
    starts with no knowledge of offline dirs, deletes pending log-dir notifications and sends UpdateMetadata
    to every live broker. Its replica state machine starts: live replicas go OnlineReplica (LeaderAndIsr
    with isNewReplica=false), the others ReplicaDeletionIneligible then OfflineReplica (removed from the ISR
    except the last member, leader none if they led); a topic being deleted with a replica not online is
    ineligible for deletion. Its partition state machine starts: partitions are Online (leader live), Offline
    or New (no record), and leaders are elected for the New and Offline ones that are not being deleted. Then
    it restarts the reassignments in progress and resumes the topic deletions."""
    brokers = tuple(map(m.schema.without_channels, s.brokers))
    live = 0
    for i, b in enumerate(s.brokers):
        if b.up:
            live |= 1 << i
    c = s.controller
    cleared = c._replace(epoch=c.epoch + 1, live=live, offline=(0,) * m.cfg.brokers)
    step = ControllerStep(m, s._replace(brokers=brokers, controller=cleared, notifications=0,
                                        budget=spend(s, B_FAILOVERS)))
    step.add_update_metadata(range(m.cfg.partitions))
    step.flush()
    # ReplicaStateMachine.startup (Kafka 2.x to 3.6): initializeReplicaState puts the replicas that are not
    # online in ReplicaDeletionIneligible, then the online ones go OnlineReplica and the others OfflineReplica.
    online, offline = [], []
    for p in range(m.cfg.partitions):
        if not step.is_assigned(p):
            continue
        for _, i in step.assigned_replicas(p):
            is_online = step.is_replica_online(m.assignments[p][i], p)
            step.set_replica(p, i, R_ONLINE if is_online else R_DELETION_INELIGIBLE, exempt="initializeReplicaState")
            (online if is_online else offline).append((p, i))
        if step.is_queued_for_deletion(p):  # TopicDeletionManager.init: replicas not online make it ineligible
            step.deletion[p] = D_INELIGIBLE if any(q == p for q, _ in offline) else D_QUEUED
    step.replicas_to_online(online)
    step.replicas_to_offline(offline)
    # PartitionStateMachine.startup: initializePartitionState (from ZooKeeper, where a topic being deleted still
    # has its partitions), then triggerOnlinePartitionStateChange (which leaves out topics being deleted).
    for p, part in enumerate(step.partitions):
        if not step.is_assigned(p):
            continue
        if not step.has_leadership_record(p):
            state = P_NEW
        elif part.leader != -1 and step.is_replica_online(part.leader, p):
            state = P_ONLINE
        else:
            state = P_OFFLINE
        step.set_partition(p, part._replace(state=state), exempt="initializePartitionState")
    step.trigger_online_partition_state_change()
    resume_reassignments(step)  # maybeTriggerPartitionReassignment
    resume_deletions(step)  # TopicDeletionManager.tryTopicDeletion
    return step.finish()


# ---------------------------------------------------------------------------------------------
# Controller events (ZooKeeper watches and responses), each processed atomically.
# ---------------------------------------------------------------------------------------------

def controller_broker_startup_guard(m, s, broker):
    if not s.brokers[broker].up:
        return f"broker {broker} is not registered"
    if s.controller.live >> broker & 1:
        return f"the controller already counts broker {broker} as live"
    return None


@CORE.rule("ControllerBrokerStartup",
      guard_reads=("broker[broker].up", "controller.live"), reads=CONTROLLER_STEP_READS, writes=CONTROLLER_STEP_WRITES, appends=CONTROLLER_STEP_APPENDS,
      needs_message=True,
      params=("broker",), domain=brokers, guard=controller_broker_startup_guard,
      kind="controller", reference="KIP-112 scenario 3; KafkaController.onBrokerStartup")
def controller_broker_startup(m, s, broker):
    """The controller sees a newly registered broker: it counts it live and forgets what it knew of its offline
    dirs, sends UpdateMetadata for every partition to every live broker, moves the broker's replicas to
    OnlineReplica (LeaderAndIsr with isNewReplica=false) and elects leaders for New and Offline partitions;
    then it restarts the reassignments with a target replica on the broker and resumes the deletion of the
    topics with a replica on it."""
    step = ControllerStep(m, s)
    step.live |= 1 << broker
    step.offline[broker] = 0
    step.add_update_metadata(range(m.cfg.partitions))
    step.flush()
    step.replicas_to_online(step.replicas_on(broker))
    step.trigger_online_partition_state_change()
    resume_reassignments(step, broker)  # maybeResumeReassignments: those with a target replica on the broker
    resume_deletion_for(step, [p for p, _ in step.replicas_on(broker) if step.is_queued_for_deletion(p)])
    return step.finish()


def controller_broker_failure_guard(m, s, broker):
    if s.brokers[broker].up:
        return f"broker {broker} is registered"
    if not s.controller.live >> broker & 1:
        return f"the controller already counts broker {broker} as dead"
    return None


@CORE.rule("ControllerBrokerFailure",
      guard_reads=("broker[broker].up", "controller.live"), reads=CONTROLLER_STEP_READS, writes=CONTROLLER_STEP_WRITES, appends=CONTROLLER_STEP_APPENDS,
      needs_message=True,
      params=("broker",), domain=brokers, guard=controller_broker_failure_guard,
      kind="controller", reference="KafkaController.onBrokerFailure and onReplicasBecomeOffline")
def controller_broker_failure(m, s, broker):
    """The controller sees a broker's registration vanish: it counts it dead, forgets its offline dirs, moves
    partitions whose leader is no longer live to Offline, elects new leaders, and moves the broker's replicas
    to OfflineReplica (removed from the ISR, except the last member); those of topics being deleted fail
    their deletion (ReplicaDeletionIneligible)."""
    step = ControllerStep(m, s)
    step.live &= ~(1 << broker)
    step.offline[broker] = 0
    step.on_replicas_become_offline(step.replicas_on(broker))
    return step.finish()


def _guard_controller_log_dir_event(m, s):
    if not s.notifications:
        return "no /log_dir_event_notification znode is pending"
    return None


def _if_notifications(m):
    """A notification is written by a dir failure or saturation (and a recovery, which needs a saturation): with
    neither possible in the configuration, the controller's handler has nothing to handle."""
    c = m.cfg
    by_dir_failure = c.max_dir_failures > 0 and m.hooks.dir_failure_notifies
    possible = c.max_faults > 0 and (by_dir_failure or (c.saturation and c.max_saturations > 0))
    return [()] if possible else []


@CORE.rule("ControllerLogDirEvent",
      guard_reads=("notifications",), reads=CONTROLLER_STEP_READS + ("notifications",), writes=CONTROLLER_STEP_WRITES + ("notifications",), appends=CONTROLLER_STEP_APPENDS,
      needs_message=True,
      params=(), domain=_if_notifications, guard=_guard_controller_log_dir_event,
      kind="controller", reference="KIP-112 scenario 2; KafkaController.onBrokerLogDirFailure")
def controller_log_dir_event(m, s):
    """The controller reads the pending /log_dir_event_notification znodes, moves every replica of the brokers
    they name to OnlineReplica (a LeaderAndIsr with isNewReplica=false that probes the broker; for a replica in
    NewReplica, being added by a reassignment, one with isNewReplica=true, or nothing with
    --no-probe-new-replicas as in Kafka's code) and deletes the znodes."""
    step = ControllerStep(m, s)
    named = [b for b in range(m.cfg.brokers) if s.notifications >> b & 1]
    replicas = [r for b in named for r in step.replicas_on(b)]
    if m.cfg.probe_new_replicas:
        # KIP-112 scenarios 2 and 3: query every partition on the broker, a NewReplica with isNewReplica=true.
        # (Kafka's OnlineReplica transition sends nothing from NewReplica: a replica being added by a
        # reassignment is then never probed; --no-probe-new-replicas.)
        for p, i in replicas:
            if step.replicas[p][i] == R_NEW and step.has_leadership_record(p):
                step.add_leader_and_isr([m.assignments[p][i]], p, is_new=True)
    step.replicas_to_online(replicas)
    step.notifications = 0
    return step.finish()


@CORE.rule("ControllerLeaderAndIsrResponse",
      **controller_handles_response("replies"),
      params=("broker",), domain=brokers, guard=waiting_response("replies", "LeaderAndIsr"),
      kind="controller", reference="KIP-112 scenarios 1-3 and 6; KafkaController's LeaderAndIsrResponseReceived")
def controller_leader_and_isr_response(m, s, broker):
    """The controller handles a broker's oldest LeaderAndIsr response: the broker's offline-replica set becomes
    (previous set minus partitions answered without error) plus partitions answered KAFKA_STORAGE_ERROR; for
    newly offline replicas it runs onReplicasBecomeOffline (leader election, OfflineReplica, UpdateMetadata).
    With KIP-928 and --saturation-recovery free-space, replicas answered without error that were offline (back
    from a saturated dir) make it elect leaders for Offline partitions and send UpdateMetadata to every broker."""
    b = s.brokers[broker]
    response = b.replies[0]
    s = set_broker(s, broker, b._replace(replies=b.replies[1:]))
    previous = s.controller.offline[broker]
    current = previous
    for p, error in response:
        if error == 0:
            current &= ~(1 << p)
        elif error == 1:
            current |= 1 << p
    recovered = previous & ~current and m.hooks.reelect_on_recovery(m.cfg)
    if current == previous and not recovered:
        return s  # nothing new for the controller: the response is only consumed
    step = ControllerStep(m, s)
    step.offline[broker] = current
    newly = current & ~previous
    if newly:
        step.on_replicas_become_offline(
            [(p, i) for p, i in m.replicas_on[broker] if newly >> p & 1],
            answer_pending=m.hooks.deletion_awaits_answer(m.cfg),
        )
    if recovered:
        # KIP-928 is silent here; the model's choice (docs/model.md, 6.4): replicas back from a saturated dir
        # make the controller elect leaders for Offline partitions and refresh every broker's metadata.
        step.trigger_online_partition_state_change()
        step.add_update_metadata(range(m.cfg.partitions))
        step.flush()
    return step.finish()


# ---------------------------------------------------------------------------------------------
# Brokers handling the controller's requests, oldest first.
# ---------------------------------------------------------------------------------------------

@CORE.rule("BrokerLeaderAndIsr",
      guard_reads=("broker[broker].inbox",), reads=("broker[broker]",) + LEADER_HW_READS,
      writes=("broker[broker]", "committed", "acked"),
      needs_message=True,
      params=("broker",), domain=brokers, guard=oldest_request_is(LEADER_AND_ISR, "LeaderAndIsr"),
      kind="broker", reference="KIP-112 scenarios 1, 3, 4; LogManager.getOrCreateLog, ReplicaManager.becomeLeaderOrFollower")
def broker_leader_and_isr(m, s, broker):
    """The broker handles its oldest request, a LeaderAndIsr. Per partition: already marked offline ->
    KAFKA_STORAGE_ERROR; leader epoch not newer than the one it has -> ignored (STALE_CONTROLLER_EPOCH);
    otherwise it uses the log found on a live dir, or, if there is none, creates one on the good dir with
    the fewest logs, unless isNewReplica=false while it has an offline dir (kip112; kip112-no-isnew-check ignores the flag),
    or it has no good dir: then it marks the partition offline and answers KAFKA_STORAGE_ERROR. Else it
    becomes leader or follower, records the leader epoch, and answers NONE. A new leader caches the request's
    ISR (its HW then rises if the ISR allows, e.g. an ISR of one); a follower keeps no HW or ISR."""
    new = m.cached(_leader_and_isr_handled, bind=True)(broker, s.brokers[broker])
    return advance_leaders(m, set_broker(s, broker, new), broker)


# The broker's side of a request is a function of the broker alone (and its id and the model's hooks): remembered
# by value in the model's cache (Model.cached), as the same broker meets the same request in many states.
def _leader_and_isr_handled(m, broker_id, b):
    new, response = requests.handle_leader_and_isr(m.hooks.may_create_log, broker_id, b, b.inbox[0].body)
    return new._replace(inbox=b.inbox[1:], replies=b.replies + (response,))


def _update_metadata_handled(b):
    return requests.handle_update_metadata(b, b.inbox[0].body)


@CORE.rule("BrokerUpdateMetadata",
      guard_reads=("broker[broker].inbox",), reads=("broker[broker].inbox", "broker[broker].meta"),
      writes=("broker[broker].inbox", "broker[broker].meta"),
      needs_message=True,
      params=("broker",), domain=brokers,
      guard=oldest_request_is(UPDATE_METADATA, "UpdateMetadata"), kind="broker",
      reference="KIP-112 scenario 5 (user queries replica state); MetadataCache.updateMetadata")
def broker_update_metadata(m, s, broker):
    """The broker handles its oldest request, an UpdateMetadata: its metadata cache (what a MetadataResponse
    shows: leader, ISR, offline_replicas) takes the request's values for the partitions it names."""
    return set_broker(s, broker, m.cached(_update_metadata_handled)(s.brokers[broker]))


@CORE.rule("BrokerStopReplica",
      guard_reads=("broker[broker].inbox",), reads=("broker[broker]",), writes=("broker[broker]",),
      needs_message=True,
      params=("broker",), domain=brokers, guard=oldest_request_is(STOP_REPLICA, "StopReplica"),
      kind="broker", reference="KIP-112 scenario 2; ReplicaManager.stopReplicas (delete=false)")
def broker_stop_replica(m, s, broker):
    """The broker handles its oldest request, a StopReplica without delete: the named replicas stop leading or
    following; a partition marked offline stays so. The controller ignores the response."""
    b = s.brokers[broker]
    new = requests.handle_stop_replica(b, b.inbox[0].body)._replace(inbox=b.inbox[1:])
    return set_broker(s, broker, new)


# ---------------------------------------------------------------------------------------------
# What the core claims and the configurations it is explored in.
# ---------------------------------------------------------------------------------------------

CORE.presets.update({
    "tiny": ("2 brokers x 2 dirs, 1 partition, RF 2; one record, a consumer; one of each event, at most two faults",
             dict(brokers=2, dirs=2, partitions=1, rf=2, max_records=1, consumer=True, **ONE_OF_EACH)),
    "small": ("3 brokers x 2 dirs, 1 partition, RF 3: KIP-112's test-plan cluster; one record; one of each event, "
              "at most two faults",
              dict(brokers=3, dirs=2, partitions=1, rf=3, max_records=1, consumer=False, **ONE_OF_EACH)),
    "medium": ("3 brokers x 2 dirs, 2 partitions, RF 2; one record in partition 0; one of each event, at most two "
               "faults",
               dict(brokers=3, dirs=2, partitions=2, rf=2, max_records=(1, 0), consumer=False, **ONE_OF_EACH)),
})
