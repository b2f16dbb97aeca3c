"""How each rule of the ZooKeeper-mode model maps onto a real ZooKeeper-mode cluster: one table, ``RULES``
(docs/reproduce-zk.md prints it; tests/test_reproduce_zk.py checks that every rule of ``--variant kip112`` has a
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


def create_topic(ctx, partition):
    ctx.cluster.create_topic(topic_of(partition), {0: list(ctx.model.assignments[partition])},
                             configs={"min.insync.replicas": str(ctx.model.cfg.min_isr_of(partition))}, wait=False)


def fail_dir(ctx, broker, dir):
    ctx.cluster.fail_dir(broker, dir, wait=False)


def crash(ctx, broker):
    ctx.cluster.crash(broker)


def restart(ctx, broker):
    ctx.cluster.restart(broker, wait=None)


def produce(ctx, broker, partition):
    return ctx.produce(broker, partition)


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
                                                  "znode (onBrokerStartup)"),
    "ControllerBrokerFailure": ZkHandler(AWAITED, f"the controller's BrokerChange handling once {SESSION} expires "
                                                  "and the ephemeral /brokers/ids znode goes (onBrokerFailure)"),
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
    # not reproducible (yet): why
    "ControllerFailover": ZkHandler(NOT_REPRODUCIBLE, "the model moves the controller with no broker failing: the "
                                    "harness would have to expire the controller's ZooKeeper session, which it "
                                    "cannot do yet (issue 47)"),
    "ReplaceDisk": ZkHandler(NOT_REPRODUCIBLE, "an empty disk in place of a failed one: the harness repairs a dir "
                             "with its data (repair_dir), not with an empty one, yet (issue 47)"),
    "RemoveDirFromConfig": ZkHandler(NOT_REPRODUCIBLE, "the harness does not rewrite a broker's log.dirs yet "
                                     "(issue 47)"),
    "DirRecover": ZkHandler(NOT_REPRODUCIBLE, "a dir that recovers while the broker runs: Kafka never takes an "
                            "offline dir back without a restart (LogManager)"),
    "DirSaturate": ZkHandler(NOT_REPRODUCIBLE, "a full disk: the harness does not fill dirs yet (issue 47)"),
    "Write": ZkHandler(NOT_REPRODUCIBLE, "the model's abstract write without a producer: the harness writes only "
                       "through Produce"),
    "Retention": ZkHandler(NOT_REPRODUCIBLE, "retention deleting segments: the harness sets no retention yet "
                           "(issue 47)"),
    "DeleteTopic": ZkHandler(NOT_REPRODUCIBLE, "topic deletion is not mapped in ZooKeeper mode yet (issue 47): "
                             "/admin/delete_topics is observed only"),
    "BrokerStopReplicaDelete": ZkHandler(NOT_REPRODUCIBLE, "topic deletion is not mapped in ZooKeeper mode yet "
                                         "(issue 47)"),
    "ControllerStopReplicaResponse": ZkHandler(NOT_REPRODUCIBLE, "topic deletion is not mapped in ZooKeeper mode "
                                               "yet (issue 47)"),
    "ReassignPartition": ZkHandler(NOT_REPRODUCIBLE, "reassignment is not mapped in ZooKeeper mode yet (issue 47): "
                                   "/admin/reassign_partitions is observed only"),
    "ControllerReassignmentIsrChange": ZkHandler(NOT_REPRODUCIBLE, "reassignment is not mapped in ZooKeeper mode "
                                                 "yet (issue 47)"),
}


def handler(rule: str) -> ZkHandler:
    """The rule's handler; KeyError for a rule with no mapping (a new rule must get one: the mapping test)."""
    return RULES[rule]


def awaited_steps(model) -> list[tuple]:
    """(rule, args) of every awaited rule of this model's action space."""
    return [(rule, args) for _, rule, args in model.action_space if RULES[rule.name].how == AWAITED]
