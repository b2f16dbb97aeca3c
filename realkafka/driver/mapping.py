"""How each rule of the KRaft model maps onto a real cluster: one table, ``RULES``, from the rule's name to a named
handler (docs/reproduce.md prints it). Four ways:

- **driven**: the driver makes it happen (an Admin call, a fault, a client); ``act(ctx, *args)`` does it;
- **awaited**: the cluster does it by itself (a broker replays the metadata log, heartbeats, the controller fences
  a broker whose session expired); the driver waits until the real view matches the model's after it. Between
  scenario steps the model takes these steps too, as the cluster would (plan.py), in ``order`` (lower first),
  unless a hold (``held_by``) stops them;
- **ordered by a hold**: the driver keeps a request from the controller (the harness's request gate) so that it
  happens only where the trace has it (plan.py says which holds are in force at each step) and waits;
- **not reproducible**: why, in a line; a scenario naming such a rule is refused (exit 2).

A hold is ``Hold(api, broker, partition)``: the controller API the harness's gate keeps (AssignReplicasToDirs,
BrokerHeartbeat) from that broker, or a follower's Fetch of one partition (partition None: every one). The gate
refuses a held request; ``Hold(DELAYED, broker)`` beside a broker's AssignReplicasToDirs hold says how: delayed
(kept waiting at the controller, then delivered at the release) rather than refused (plan.py says where).
``Hold(ANSWER, broker)`` holds the controller's answer to the broker's AssignReplicasToDirs after the controller
handled it (the harness's answer proxy, realkafka/cluster/answers.py), so that the broker's ReplicaAlterLogDirsThread
does not swap a -future log the controller accepted (it stops PromoteFutureReplica).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, NamedTuple

DRIVEN, AWAITED, ORDERED, NOT_REPRODUCIBLE = "driven", "awaited", "ordered by a hold", "not reproducible"


class Hold(NamedTuple):
    api: str                 # "AssignReplicasToDirs", "BrokerHeartbeat", "Fetch" or DELAYED
    broker: int
    partition: int | None = None

    def text(self) -> str:
        if self.api == "Fetch":
            return f"broker {self.broker}'s Fetch of t{self.partition}-0"
        if self.api == DELAYED:
            return f"broker {self.broker}'s AssignReplicasToDirs delayed, not refused"
        if self.api == ANSWER:
            return f"the controller's answers to broker {self.broker}'s AssignReplicasToDirs"
        return f"broker {self.broker}'s {self.api}"


ASSIGN, HEARTBEAT, FETCH = "AssignReplicasToDirs", "BrokerHeartbeat", "Fetch"
DELAYED = "delayed AssignReplicasToDirs"   # the mode of the broker's ASSIGN hold, not a hold of its own
ANSWER = "AssignReplicasToDirs answer"      # held by the answer proxy, after the controller handled the request


@dataclass(frozen=True)
class Handler:
    how: str
    says: str                                   # how the real cluster is driven or observed, in a line
    act: Callable | None = None                 # driven: act(ctx, *args)
    order: int = 0                              # awaited: the priority among the cluster's own steps
    held_by: Callable | None = None             # awaited: (*args) -> the Hold that stops it, or None
    needs: str | None = None                    # the harness capability the act needs (realkafka/cluster/roles.py)


# ---- the acts (ctx: run.py's Driver) ---------------------------------------------------------------------------

def create_topic(ctx, partition):
    ctx.create_topic(partition)


def fail_dir(ctx, broker, dir):
    # the driver awaits the model's view itself (a fenced broker cannot be asked whether the dir is offline)
    ctx.cluster.fail_dir(broker, dir, wait=False)


def crash(ctx, broker):
    ctx.cluster.crash(broker)


def restart(ctx, broker):
    ctx.restart(broker)


def replace_disk(ctx, broker, dir):
    ctx.cluster.replace_dir(broker, dir)


def remove_dir_from_config(ctx, broker, dir):
    ctx.cluster.remove_dir(broker, dir)


def produce(ctx, broker, partition):
    ctx.produce(partition)


def consume(ctx, broker, partition):
    ctx.consume(partition)


def alter_replica_log_dirs(ctx, broker, partition, dir):
    ctx.cluster.alter_replica_log_dir(ctx.topic(partition), 0, broker=broker, dir=dir)


def controlled_shutdown(ctx, broker):
    ctx.cluster.controlled_shutdown(broker)


def delete_topic(ctx, partition):
    ctx.cluster.delete_topic(ctx.topic(partition))


def reassign(ctx, partition):
    ctx.reassign(partition)


def upgrade_metadata_version(ctx):
    ctx.cluster.upgrade_metadata_version()


def _heartbeat(broker, *_):
    return Hold(HEARTBEAT, broker)


def _fetch(broker, partition):
    return Hold(FETCH, broker, partition)


def _catch_up_fetch(partition, broker):
    return Hold(FETCH, broker, partition)


_KIP928 = "KIP-928 (saturation) has no Kafka code: the model's reading of it has nothing to run on"

RULES: dict[str, Handler] = {
    # kraft-core
    "CreateTopic": Handler(DRIVEN, "Admin createTopics of t{p} with one partition on the configured assignment (in "
                           "order) and the model's min.insync.replicas", create_topic),
    "DirFail": Handler(DRIVEN, "the dir is moved aside and a file put in its place (LogDirFailureTest's way): the "
                       "next write or checkpoint takes it offline; on a broker that is down, it fails at the next "
                       "start", fail_dir),
    "BrokerCrash": Handler(DRIVEN, "SIGKILL of the broker's JVM", crash),
    "BrokerRestart": Handler(DRIVEN, "the broker's JVM started again with the same log.dirs (a failed dir stays "
                             "failed)", restart),
    "ReplaceDisk": Handler(DRIVEN, "while the broker is down, its failed dir becomes an empty dir that the "
                           "storage tool formats (--ignore-formatted), as an operator brings in a new disk: a new "
                           "directory.id, as the model's new disk id (the views name the old id apart on both "
                           "sides)", replace_disk, needs="replace_dir"),
    "RemoveDirFromConfig": Handler(DRIVEN, "while the broker is down, the failed dir leaves its log.dirs (its "
                                   "next start runs without it)",
                                   remove_dir_from_config, needs="remove_dir"),
    "BrokerRegister": Handler(AWAITED, "a started broker's BrokerRegistration: awaited in the controller's image",
                              order=0),
    "BrokerLoad": Handler(AWAITED, "a started broker's first metadata image: awaited in its log dirs", order=1),
    "BrokerReplay": Handler(AWAITED, "a broker replays the metadata log: awaited in its log dirs", order=2),
    "BrokerSendAssignments": Handler(AWAITED, "AssignmentsManager sends after its batching delay: not observable "
                                     "by itself (the controller's answer is held)", order=3),
    "BrokerHeartbeat": Handler(AWAITED, "the broker's next heartbeat (every broker.heartbeat.interval.ms): awaited "
                               "in the controller's image; held where the trace orders it later", order=5,
                               held_by=_heartbeat),
    "ControllerFenceBroker": Handler(AWAITED, "the controller fences a crashed broker after broker.session.timeout.ms: "
                                     "awaited", order=6),
    "ControllerAssignReplicasToDirs": Handler(ORDERED, "AssignReplicasToDirs is held at the controller from the start "
                                              "and released only for this step (then held again; at the end of the "
                                              "run, for good): refused, or delayed and delivered at the release "
                                              "where the broker queues a newer assignment of the same partition "
                                              "behind the one in flight", order=4,
                                              held_by=lambda broker: Hold(ASSIGN, broker)),
    # the data path
    "Produce": Handler(DRIVEN, "a producer (acks=all) sends one record, asynchronously: its acknowledgement is "
                       "awaited with the ISR", produce),
    "ReplicaFetch": Handler(AWAITED, "followers fetch continuously: awaited (log end offsets, ISR)", order=7,
                            held_by=_fetch),
    "LeaderShrinkIsr": Handler(ORDERED, "the follower's fetches are held from the start, so the leader shrinks the "
                               "ISR after replica.lag.time.max.ms: awaited"),
    "Consume": Handler(DRIVEN, "a consumer reads the partition from offset 0 up to the high watermark", consume),
    # kraft-mv-upgrade
    "UpgradeMetadataVersion": Handler(DRIVEN, "Admin updateFeatures metadata.version to the release's latest, on a "
                                      "cluster formatted before 3.7-IV2", upgrade_metadata_version,
                                      needs="upgrade_metadata_version"),
    "BrokerReregister": Handler(AWAITED, "BrokerRegistrationTracker re-registers the broker with its dirs: awaited",
                                order=4),
    # kraft-sessions
    "BrokerHeartbeatAnswerLost": Handler(NOT_REPRODUCIBLE, "a heartbeat the controller handled whose answer never "
                                         "reaches the broker: the harness's gate refuses a request before the "
                                         "controller handles it, it cannot drop an answer after"),
    "ControllerExpireSession": Handler(ORDERED, "the broker's heartbeats are held until the controller fences it "
                                       "(broker.session.timeout.ms)"),
    "BrokerDirFailureTimeout": Handler(AWAITED, "with its heartbeats held, the broker shuts itself down "
                                       "log.dir.failure.timeout.ms after the dir failure (3.8+): awaited where the "
                                       "trace takes it; elsewhere left out, the timeout set beyond the run",
                                       order=9),
    "ControllerFailover": Handler(NOT_REPRODUCIBLE, "a controller failover needs a quorum of controllers: the "
                                  "harness runs one"),
    # kraft-future
    "AlterReplicaLogDirs": Handler(DRIVEN, "Admin alterReplicaLogDirs of the broker's replica to the dir",
                                   alter_replica_log_dirs),
    "AlterLogDirsFetch": Handler(AWAITED, "ReplicaAlterLogDirsThread copies into the -future log: awaited", order=7),
    "PromoteFutureReplica": Handler(AWAITED, "ReplicaAlterLogDirsThread promotes the caught-up -future log (its "
                                    "assignment held like any other): awaited; where the trace swaps later than "
                                    "Kafka would after the controller accepted the -future dir, the controller's "
                                    "answer is held by the harness's answer proxy until then (needs the harness's "
                                    "`hold_answers()`)", order=8,
                                    held_by=lambda broker, partition: Hold(ANSWER, broker)),
    # kraft-shutdown
    "BrokerBeginControlledShutdown": Handler(DRIVEN, "SIGTERM of the broker (controlled.shutdown.enable)",
                                             controlled_shutdown),
    "BrokerHeartbeatControlledShutdown": Handler(AWAITED, "the wantShutDown heartbeat that moves the broker's "
                                                 "leaderships: awaited", order=5, held_by=_heartbeat),
    "BrokerHeartbeatShutdownNow": Handler(AWAITED, "the heartbeat answered shouldShutDown: awaited", order=5,
                                          held_by=_heartbeat),
    "BrokerShutdown": Handler(AWAITED, "the broker's JVM exits: awaited", order=9),
    "BrokerControlledShutdownTimeout": Handler(NOT_REPRODUCIBLE, "the broker stops when the controller has not "
                                               "granted its controlled shutdown by the shutdown's deadline (5 "
                                               "minutes): the harness holds heartbeats for seconds, not minutes"),
    # kraft-deletion
    "DeleteTopic": Handler(DRIVEN, "Admin deleteTopics", delete_topic, needs="delete_topic"),
    # kraft-reassignment
    "ReassignPartition": Handler(DRIVEN, "Admin alterPartitionReassignments to the model's target", reassign),
    "ReplicaCatchUp": Handler(AWAITED, "the added replica fetches and joins the ISR, completing the reassignment: "
                              "awaited (a run with the data path on takes it as the added replica's ReplicaFetch)",
                              order=7, held_by=_catch_up_fetch),
    # KIP-928 saturation (storage's rules under kraft-saturation)
    "Write": Handler(NOT_REPRODUCIBLE, _KIP928),
    "DirSaturate": Handler(NOT_REPRODUCIBLE, _KIP928),
    "Retention": Handler(NOT_REPRODUCIBLE, _KIP928),
    "DirRecover": Handler(NOT_REPRODUCIBLE, _KIP928),
}


def handler(rule: str) -> Handler:
    """The rule's handler; KeyError for a rule with no mapping (a new rule must get one: tests/realkafka/test_reproduce.py)."""
    return RULES[rule]


def own_steps(model) -> list[tuple]:
    """The steps the cluster takes by itself in this model, in the order the planner tries them: (order, rule
    index, rule, args) for every awaited rule, and every ordered one that only its hold stops
    (ControllerAssignReplicasToDirs: taken by the cluster once its hold is released for good)."""
    out = []
    for ri, rule, args in model.action_space:
        h = RULES.get(rule.name)
        if h is not None and (h.how == AWAITED or (h.how == ORDERED and h.held_by is not None)):
            out.append((h.order, ri, rule, args))
    return sorted(out, key=lambda x: (x[0], x[1]))
