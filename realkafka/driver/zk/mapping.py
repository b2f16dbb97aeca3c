"""How each rule of the ZooKeeper-mode model maps onto a real ZooKeeper-mode cluster: one table, ``RULES``
(docs/reproduce-zk.md prints it; tests/realkafka/test_reproduce_zk.py checks that every rule of ``--variant kip112`` has a
row). The ways are the KRaft table's (realkafka/driver/mapping.py): driven (the driver makes it happen: ``act``),
awaited (the cluster does it by itself; the run's model takes it in any order between driven steps), or not
reproducible (why). ``timed`` marks an awaited rule that Kafka takes only after a timeout (replica.lag.time.max.ms):
a state where only such a rule is enabled counts as settled.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..mapping import AWAITED, DRIVEN, NOT_REPRODUCIBLE
from ..view import topic_of


@dataclass(frozen=True)
class ZkHandler:
    how: str
    says: str
    act: Callable | None = None       # driven: act(driver, *args) -> None, or what Kafka answered (a dict)
    timed: bool = False
    needs: str | None = None          # driven: the harness capability the act needs (realkafka/cluster/roles.py)


def create_topic(ctx, partition):
    ctx.cluster.create_topic(topic_of(partition), {0: list(ctx.model.original[partition])},
                             configs={"min.insync.replicas": str(ctx.model.cfg.min_isr_of(partition))}, wait=False)


def fail_dir(ctx, broker, dir):
    ctx.cluster.fail_dir(broker, dir, wait=False)


def crash(ctx, broker):
    ctx.cluster.crash(broker)


def restart(ctx, broker):
    ctx.cluster.restart(broker, wait=None)


def produce(ctx, broker, partition):
    return ctx.produce(broker, partition)


def replace_disk(ctx, broker, dir):
    ctx.cluster.replace_dir(broker, dir)


def remove_dir_from_config(ctx, broker, dir):
    ctx.cluster.remove_dir(broker, dir)


def move_controller(ctx):
    ctx.cluster.move_controller()


def _refusable(call, *args, **kwargs):
    """Kafka's answer to an Admin call: None when it was accepted, else {"refused": True, "says": its error} (the
    probe's error is Kafka's refusal; anything else the harness's, raised on)."""
    try:
        call(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - only the probe's error is Kafka's answer
        if type(e).__name__ != "ProbeError":
            raise
        return {"refused": True, "says": "Kafka refused: " + " ".join(str(e).split())}
    return None


def delete_topic(ctx, partition):
    return _refusable(ctx.cluster.delete_topic, topic_of(partition), wait=False)


def reassign(ctx, partition):
    return _refusable(ctx.cluster.reassign, topic_of(partition), 0, list(ctx.model.targets[partition]))


def consume(ctx, broker, partition):
    return ctx.consume(broker, partition)


SESSION = "the broker's ZooKeeper session (zookeeper.session.timeout.ms 6 s)"

RULES: dict[str, ZkHandler] = {
    # driven
    "CreateTopic": ZkHandler(DRIVEN, "Admin createTopics of t{p} with the model's assignment and min.insync.replicas",
                             create_topic),
    "DirFail": ZkHandler(DRIVEN, "the dir moved aside and a file put in its place (LogDirFailureTest's way): the next "
                                 "checkpoint fails and LogDirFailureChannel takes the dir offline", fail_dir),
    "BrokerCrash": ZkHandler(DRIVEN, "SIGKILL of the broker's JVM", crash),
    "BrokerRestart": ZkHandler(DRIVEN, "the broker's JVM started again with the same config (a failed dir stays a "
                                       "file: offline at start-up)", restart),
    "Produce": ZkHandler(DRIVEN, "one record with acks=all to the leader the model names (the run differs when the "
                                 "real leader is another broker)", produce),
    "Consume": ZkHandler(DRIVEN, "a consumer reads t{p}-0 from offset 0 up to the high watermark", consume),
    # awaited: the cluster's own steps
    "ControllerBrokerStartup": ZkHandler(AWAITED, "the controller's BrokerChange handling of the new /brokers/ids "
                                                  "znode (onBrokerStartup); seen as that znode (the view's "
                                                  "registration)"),
    "ControllerBrokerFailure": ZkHandler(AWAITED, f"the controller's BrokerChange handling once {SESSION} expires "
                                                  "and the ephemeral /brokers/ids znode goes (onBrokerFailure); seen "
                                                  "as that znode gone (the view's registration)"),
    "ControllerLogDirEvent": ZkHandler(AWAITED, "the controller handles the /log_dir_event_notification znode: "
                                                "LeaderAndIsr to the broker (the znode is then deleted)"),
    "ControllerLeaderAndIsrResponse": ZkHandler(AWAITED, "the controller handles a LeaderAndIsr response (a "
                                                         "KAFKA_STORAGE_ERROR moves the replica offline)"),
    "BrokerLeaderAndIsr": ZkHandler(AWAITED, "a broker handles a LeaderAndIsr request (becomes leader or follower, "
                                             "or answers KAFKA_STORAGE_ERROR)"),
    "BrokerUpdateMetadata": ZkHandler(AWAITED, "a broker handles an UpdateMetadata request (its metadata cache)"),
    "BrokerStopReplica": ZkHandler(AWAITED, "a broker handles a StopReplica request (delete=false)"),
    "ReplicaFetch": ZkHandler(AWAITED, "a follower's fetcher copies the leader's records and the HW advances"),
    "LeaderShrinkIsr": ZkHandler(AWAITED, "the leader drops a follower that lagged replica.lag.time.max.ms (8 s) "
                                          "from the ISR in the state znode", timed=True),
    "ControllerFailover": ZkHandler(DRIVEN, "the /controller znode deleted (kazoo), as an operator forces a "
                                    "re-election: the controller resigns and the brokers elect one again "
                                    "(onControllerFailover at a new epoch); no broker fails", move_controller,
                                    needs="move_controller"),
    "ReplaceDisk": ZkHandler(DRIVEN, "while the broker is down, an empty dir in place of the failed one (the broker "
                             "writes its meta.properties when it starts)", replace_disk, needs="replace_dir"),
    "RemoveDirFromConfig": ZkHandler(DRIVEN, "while the broker is down, the dir taken out of its log.dirs (its next "
                                     "start runs without it)", remove_dir_from_config,
                                     needs="remove_dir"),
    "DeleteTopic": ZkHandler(DRIVEN, "Admin deleteTopics of t{p} (the controller's /admin/delete_topics/t{p}); "
                             "Kafka's refusal is judged by the model", delete_topic, needs="delete_topic"),
    "ReassignPartition": ZkHandler(DRIVEN, "Admin alterPartitionReassignments of t{p}-0 to the model's target "
                                   "replicas (KIP-455: 3.9.2 runs the kafka-2.7 procedure, "
                                   "KafkaController.onPartitionReassignment); Kafka's refusal is judged by the "
                                   "model", reassign),
    "BrokerStopReplicaDelete": ZkHandler(AWAITED, "a broker handles a StopReplica request with delete=true (the "
                                         "log renamed -delete and gone from describeLogDirs)"),
    "ControllerStopReplicaResponse": ZkHandler(AWAITED, "the controller handles a StopReplica(delete=true) response "
                                               "(TopicDeletionStopReplicaResponseReceived; a topic done: its "
                                               "znodes deleted)"),
    "ControllerReassignmentIsrChange": ZkHandler(AWAITED, "the controller sees every target replica in the ISR of "
                                                 "the state znode and completes the reassignment (phase B of "
                                                 "onPartitionReassignment)"),
    # not reproducible: why
    "DirRecover": ZkHandler(NOT_REPRODUCIBLE, "a saturated dir serving again once space is freed (KIP-928's "
                            "saturation feature, which Kafka never shipped; Kafka never takes an offline dir back "
                            "without a restart, LogManager)"),
    "DirSaturate": ZkHandler(NOT_REPRODUCIBLE, "a full disk (KIP-928, which Kafka never shipped: a full disk is an "
                             "IOException, a dir failure, in 3.9.2): the harness does not fill dirs"),
    "Write": ZkHandler(NOT_REPRODUCIBLE, "a unit of a dir's space filled (KIP-928's saturation feature, which Kafka "
                       "never shipped): the harness writes only records, through Produce"),
    "Retention": ZkHandler(NOT_REPRODUCIBLE, "retention freeing a saturated dir's space (KIP-928's saturation "
                           "feature, which Kafka never shipped): the harness neither fills dirs nor sets retention"),
}


def handler(rule: str) -> ZkHandler:
    """The rule's handler; KeyError for a rule with no mapping (a new rule must get one: the mapping test)."""
    return RULES[rule]


def awaited_steps(model) -> list[tuple]:
    """(rule, args) of every awaited rule of this model's action space."""
    return [(rule, args) for _, rule, args in model.action_space if RULES[rule.name].how == AWAITED]
