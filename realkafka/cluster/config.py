"""The properties of the controller and the brokers, and their logging (docs/realkafka.md, "Settings": each
setting and why). Pure functions of the spec, the ports and the paths."""
from __future__ import annotations

from pathlib import Path

CONTROLLER_ID = 1000          # far from the brokers' ids 0..N-1, so that a log line's "node 1000" is the controller

# Every node: small thread pools (a 2-core machine runs several clusters' JVMs at once), no automatic leader
# rebalance (a trace moves leadership itself), a log cleaner with a small buffer (its 128 MB default would fill
# a small heap).
COMMON = {
    "num.network.threads": "1",
    "num.io.threads": "2",
    "background.threads": "2",
    "log.cleaner.threads": "1",
    "log.cleaner.dedupe.buffer.size": "2097152",
    "auto.create.topics.enable": "false",
    "auto.leader.rebalance.enable": "false",
}

BROKER = {
    # A broker heartbeats every 500 ms (default 2000) and is fenced after 6 s without one (default 9000): a crash is
    # seen in seconds, and a loaded machine's pauses (serial GC, a busy core) stay far below the session.
    "broker.heartbeat.interval.ms": "500",
    "broker.session.timeout.ms": "6000",
    # A failed dir is noticed at the next checkpoint: the high-watermark checkpoint (dirs holding a replica), the
    # recovery-point and log-start-offset checkpoints (every live dir); each every second instead of 5 s / 60 s.
    "replica.high.watermark.checkpoint.interval.ms": "1000",
    "log.flush.offset.checkpoint.interval.ms": "1000",
    "log.flush.start.offset.checkpoint.interval.ms": "1000",
    # A follower that stops fetching leaves the ISR after 8 s (default 30 s); fetch waits stay at 500 ms, so a
    # fetching follower is never near it.
    "replica.lag.time.max.ms": "8000",
    "num.replica.fetchers": "1",
    # Internal topics that a probe's producer may touch (idempotence) fit on one broker.
    "offsets.topic.replication.factor": "1",
    "offsets.topic.num.partitions": "1",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "transaction.state.log.num.partitions": "1",
    "group.initial.rebalance.delay.ms": "0",
    "num.partitions": "1",
    "default.replication.factor": "1",
}

CONTROLLER = {}

# Kafka's own defaults of the timers BROKER shortens (3.7 to 4.4's KafkaConfig / ReplicationConfigs): a cluster run
# with these (``kafka_timers``) is judged at Kafka's timing, slower.
KAFKA_TIMERS = {
    "broker.heartbeat.interval.ms": "2000",
    "broker.session.timeout.ms": "9000",
    "replica.high.watermark.checkpoint.interval.ms": "5000",
    "log.flush.offset.checkpoint.interval.ms": "60000",
    "log.flush.start.offset.checkpoint.interval.ms": "60000",
    "replica.lag.time.max.ms": "30000",
}


def non_default_settings(settings: dict[str, str]) -> dict[str, str]:
    """Every Kafka setting a broker of the harness's clusters has that is not the release's default (the listeners,
    ids and paths aside): the harness's own (COMMON, BROKER, the request gate's authorizer) and ``settings`` (the
    run's: ClusterSpec.settings), which win."""
    out = {**COMMON, **BROKER, "authorizer.class.name": "jbodcheck.Gate"}
    out.update({k: str(v) for k, v in settings.items()})
    return out


def node_properties(*, node_id: int, roles: str, listener_port: int, controller_port: int, log_dirs: list[Path],
                    metadata_dir: Path | None, gate_file: Path, gate_log: Path, version: tuple[int, int, int],
                    elr: bool | None, settings: dict[str, str]) -> dict[str, str]:
    """One node's server.properties."""
    props = dict(COMMON)
    props.update({
        "process.roles": roles,
        "node.id": str(node_id),
        "controller.quorum.voters": f"{CONTROLLER_ID}@127.0.0.1:{controller_port}",
        "controller.listener.names": "CONTROLLER",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        "log.dirs": ",".join(str(d) for d in log_dirs),
        # The gate (realkafka/java/jbodcheck/Gate.java): allows everything the control file does not hold.
        "authorizer.class.name": "jbodcheck.Gate",
        "jbodcheck.gate.file": str(gate_file),
        "jbodcheck.gate.log": str(gate_log),
    })
    if roles == "controller":
        props["listeners"] = f"CONTROLLER://127.0.0.1:{controller_port}"
        props.update(CONTROLLER)
    else:
        props["listeners"] = f"PLAINTEXT://127.0.0.1:{listener_port}"
        props["advertised.listeners"] = f"PLAINTEXT://127.0.0.1:{listener_port}"
        props["inter.broker.listener.name"] = "PLAINTEXT"
        props["metadata.log.dir"] = str(metadata_dir)
        props.update(BROKER)
    props.update({k: str(v) for k, v in settings.items()})
    return props


# ZooKeeper mode (docs/realkafka.md, "ZooKeeper mode"): the KRaft-only heartbeat settings left out; a broker's
# ZooKeeper session expires 6 s after its last heartbeat (a crash is seen in seconds, as KRaft's broker session),
# and a broker waits as long as the cluster's start-up for its first ZooKeeper connection (a JVM on a loaded machine).
KRAFT_ONLY = {"broker.heartbeat.interval.ms", "broker.session.timeout.ms"}
ZK_BROKER = {"zookeeper.session.timeout.ms": "6000"}


def zk_broker_properties(*, broker_id: int, listener_port: int, zookeeper_port: int, log_dirs: list[Path],
                         connection_timeout_ms: int, settings: dict[str, str]) -> dict[str, str]:
    """One ZooKeeper-mode broker's server.properties (no process.roles: 3.9 runs ZooKeeper mode)."""
    props = dict(COMMON)
    props.update({k: v for k, v in BROKER.items() if k not in KRAFT_ONLY})
    props.update(ZK_BROKER)
    props.update({
        "broker.id": str(broker_id),
        "zookeeper.connect": f"127.0.0.1:{zookeeper_port}",
        "zookeeper.connection.timeout.ms": str(connection_timeout_ms),
        "listeners": f"PLAINTEXT://127.0.0.1:{listener_port}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{listener_port}",
        "log.dirs": ",".join(str(d) for d in log_dirs),
    })
    props.update({k: str(v) for k, v in settings.items()})
    return props


def zookeeper_properties(*, port: int, data_dir: Path) -> dict[str, str]:
    """A standalone ZooKeeper server on loopback (ZooKeeperServerMain): no admin server (its Jetty port), a
    500 ms tick (sessions of 1 to 10 s allowed: the brokers' 6 s fits)."""
    return {"dataDir": str(data_dir), "clientPort": str(port), "clientPortAddress": "127.0.0.1",
            "tickTime": "500", "maxClientCnxns": "0", "admin.enableServer": "false",
            "4lw.commands.whitelist": "ruok,srvr"}


def format_features(version: tuple[int, int, int], elr: bool | None) -> list[str]:
    """The storage tool's ``--feature`` arguments for ELR: from 4.0 ELR is the feature
    ``eligible.leader.replicas.version``, whose level a new cluster gets from the bootstrap metadata version (off
    in 4.0, whose latest production metadata version 4.0-IV3 is below ELRV_1's bootstrap 4.1-IV0; on from 4.1,
    EligibleLeaderReplicasVersion.LATEST_PRODUCTION). None keeps the release's default."""
    if elr is None or version[0] < 4:
        return []
    return ["--feature", f"eligible.leader.replicas.version={1 if elr else 0}"]


def write_properties(path: Path, props: dict[str, str]) -> None:
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))


def log4j1(log_file: Path) -> str:
    """3.x: log4j 1 (reload4j) properties, one server log per node."""
    return f"""log4j.rootLogger=INFO, file
log4j.appender.file=org.apache.log4j.FileAppender
log4j.appender.file.File={log_file}
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.org.apache.kafka.clients=WARN
log4j.logger.kafka.request.logger=WARN
log4j.logger.state.change.logger=INFO
"""


def log4j2(log_file: Path) -> str:
    """4.x: log4j2 properties, one server log per node."""
    return f"""status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = {log_file}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = info
rootLogger.appenderRef.file.ref = file
logger.clients.name = org.apache.kafka.clients
logger.clients.level = warn
"""


def logging_config(kind: str, log_file: Path) -> tuple[str, str]:
    """(the file's text, the JVM option that names it)."""
    if kind == "reload4j":
        return log4j1(log_file), "-Dlog4j.configuration=file:{}"
    return log4j2(log_file), "-Dlog4j2.configurationFile={}"
