"""The real-cluster harness (realkafka/cluster, docs/realkafka.md).

Without a JVM: the controller's image rebuilt from metadata records as Kafka's replay does, the dir names, the
gate's API names, Maven's errors, the storage tool's ELR arguments.

With Java, javac and Maven (skipped with a one-line reason otherwise; .ci/run installs Maven and fetches the
release): a 2-broker x 2-dir cluster of ``JBODCHECK_KAFKA_RELEASE`` (default 3.9.2) whose leader's dir fails,
a restart with that dir still failed, AssignReplicasToDirs held by the gate, and the hygiene checks (no JVM,
port or temporary directory left after a stop, a SIGINT, or a failed test).
``pytest -m realkafka`` with ``JBODCHECK_KAFKA_RELEASES=3.9.2,4.0.2,4.4.0`` runs the dir-failure check on each
release listed (opt-in: skipped when the variable is unset).
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from support.helpers import REPO
from realkafka.cluster import Cluster, ClusterSpec, HarnessError, api_name
from realkafka.cluster.config import format_features
from realkafka.cluster.observation import RESERVED, DirNames, ImageBuilder, MetadataRecord
from realkafka.cluster.release import _first_error, fetch, parse_version

RELEASE = os.environ.get("JBODCHECK_KAFKA_RELEASE", "3.9.2")
RELEASES = [v for v in os.environ.get("JBODCHECK_KAFKA_RELEASES", "").split(",") if v]
MISSING = [tool for tool in ("java", "javac", "mvn") if shutil.which(tool) is None]
needs_kafka = pytest.mark.skipif(bool(MISSING), reason=f"the real-cluster harness needs {', '.join(MISSING)}")
UNASSIGNED = next(k for k, v in RESERVED.items() if v == "UNASSIGNED")


# ---- without a JVM ----------------------------------------------------------------------------------------------

def _rec(offset, type_, **data):
    return MetadataRecord(offset, type_, data)


def test_image_replays_registrations_and_partitions_as_kafka_does():
    names = DirNames({"d00": (0, 0), "d01": (0, 1), "d10": (1, 0), "d11": (1, 1)})
    b = ImageBuilder(names)
    for r in [
        _rec(1, "RegisterBrokerRecord", brokerId=0, brokerEpoch=5, fenced=True, logDirs=["d00", "d01"]),
        _rec(2, "RegisterBrokerRecord", brokerId=1, brokerEpoch=6, fenced=True, logDirs=["d11", "d10"]),
        _rec(3, "BrokerRegistrationChangeRecord", brokerId=0, brokerEpoch=5, fenced=-1, logDirs=[]),
        _rec(4, "UnfenceBrokerRecord", id=1, epoch=6),
        _rec(5, "TopicRecord", name="t", topicId="T"),
        _rec(6, "PartitionRecord", partitionId=0, topicId="T", replicas=[0, 1], isr=[0, 1], leader=0, leaderEpoch=0,
             partitionEpoch=0, directories=[UNASSIGNED, UNASSIGNED]),
        _rec(7, "PartitionChangeRecord", partitionId=0, topicId="T", directories=["d00", UNASSIGNED]),
        _rec(8, "PartitionChangeRecord", partitionId=0, topicId="T", isr=[1], leader=1),
        _rec(9, "BrokerRegistrationChangeRecord", brokerId=0, brokerEpoch=5, logDirs=["d01"]),
        _rec(10, "BrokerRegistrationChangeRecord", brokerId=0, brokerEpoch=4, fenced=1),   # an old epoch: ignored
        _rec(11, "PartitionChangeRecord", partitionId=0, topicId="T", directories=["d10", "d10"]),
    ]:
        b.replay(r)
    image = b.image(up=True, held=False)
    assert image.registrations[0].dirs == (1,) and not image.registrations[0].fenced     # [] keeps the dirs
    assert image.registrations[1].dirs == (1, 0) and not image.registrations[1].fenced
    p = image.partitions[("t", 0)]
    assert (p.leader, p.isr, p.leader_epoch, p.partition_epoch) == (1, (1,), 1, 3)
    # a Directories entry that names another broker's dir is shown as (broker, dir), never as a bare index
    assert p.directories == ((1, 0), 0)
    assert image.last_offset == 11


def test_image_elr_fields_and_clear_elr_record():
    b = ImageBuilder(DirNames({}))
    b.replay(_rec(1, "TopicRecord", name="t", topicId="T"))
    b.replay(_rec(2, "PartitionRecord", partitionId=0, topicId="T", replicas=[0, 1], isr=[0, 1], leader=0,
                  leaderEpoch=0, partitionEpoch=0))
    b.replay(_rec(3, "PartitionChangeRecord", partitionId=0, topicId="T", isr=[0], eligibleLeaderReplicas=[1],
                  lastKnownElr=[]))
    p = b.image(up=True, held=False).partitions[("t", 0)]
    assert p.directories == ("MIGRATING", "MIGRATING")        # PartitionRegistration.defaultToMigrating
    assert (p.isr, p.elr, p.leader_epoch) == ((0,), (1,), 0)  # no leader field: the leader epoch stays
    b.replay(_rec(4, "ClearElrRecord", topicName="t"))
    assert b.image(up=True, held=False).partitions[("t", 0)].elr == ()


def test_reserved_dir_ids_are_kafkas():
    # DirectoryId.MIGRATING = Uuid(0, 0), UNASSIGNED = Uuid(0, 1), LOST = Uuid(0, 2), as Uuid.toString writes them
    assert RESERVED == {"AAAAAAAAAAAAAAAAAAAAAA": "MIGRATING", "AAAAAAAAAAAAAAAAAAAAAQ": "UNASSIGNED",
                        "AAAAAAAAAAAAAAAAAAAAAg": "LOST"}


def test_api_names_and_versions():
    assert api_name("AssignReplicasToDirs") == "ASSIGN_REPLICAS_TO_DIRS"
    assert api_name("BrokerHeartbeat") == "BROKER_HEARTBEAT"
    assert api_name("FETCH") == api_name("Fetch") == "FETCH"
    assert parse_version("4.4.0") == (4, 4, 0)
    for bad in ("3.6.2", "4.4", "latest"):
        with pytest.raises(ValueError):
            parse_version(bad)
    assert format_features((3, 9, 2), True) == [] and format_features((4, 1, 2), None) == []
    assert format_features((4, 0, 2), True) == ["--feature", "eligible.leader.replicas.version=1"]
    with pytest.raises(ValueError, match="runs no ELR on a production metadata version"):
        ClusterSpec(release="3.9.2", elr=True)
    assert ClusterSpec(release="3.9.2", elr=False).elr is False


def test_maven_errors_become_one_line():
    out = ("\x1b[0m[ERROR] Failed to execute goal on project x: Could not resolve dependencies: "
           "org.apache.kafka:kafka_2.13:jar:3.9.9 was not found in a repository\n[ERROR] -> [Help 1]\n")
    assert _first_error(out) == "the registry does not serve org.apache.kafka:kafka_2.13:jar:3.9.9"
    assert _first_error("[ERROR] Network is unreachable\n[ERROR] To see the full stack") == "Network is unreachable"
    # Maven's generic line gives way to the cause it wraps (issue 46 item 22: "Error executing Maven.")
    assert _first_error("[ERROR] Error executing Maven.\n[ERROR] java.lang.IllegalStateException: x\n"
                        "Caused by: java.nio.file.AccessDeniedException: /root/.m2/repository") \
        == "java.nio.file.AccessDeniedException: /root/.m2/repository"
    assert _first_error("[ERROR] Error executing Maven.\n[ERROR] The specified user settings file does not exist") \
        == "The specified user settings file does not exist"


# ---- with a JVM: a real cluster ----------------------------------------------------------------------------------

def _listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _jvms_under(root: str) -> list[str]:
    """The command lines of live JVMs whose arguments name this cluster's directory (other clusters on the
    machine are not ours to count)."""
    out = subprocess.run(["pgrep", "-af", r"kafka\.Kafka |jbodcheck\.Probe|kafka\.tools\.StorageTool"],
                         capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if root in line]


def assert_nothing_left(root: str, ports: list[int]) -> None:
    assert not _jvms_under(root), _jvms_under(root)
    assert not [p for p in ports if _listening(p)]
    assert not Path(root).exists()


def check_dir_failure(release: str) -> None:
    """Broker 0 leads t-0 with a record on its dir 0; that dir fails. Kafka (3.7 to 4.4): the broker takes the dir
    offline (LogDirFailureChannel; describeLogDirs says KafkaStorageException), tells the controller
    (BrokerLifecycleManager.propagateDirectoryFailure -> a heartbeat with offlineLogDirs), and the controller
    moves leadership to broker 1 with ISR [1] (ReplicationControlManager.handleDirectoriesOffline: one
    PartitionChangeRecord) and drops the dir from broker 0's registration (a BrokerRegistrationChangeRecord with
    LogDirs = the online dir only). The partition's Directories still name broker 0's dir 0. The record is read
    back from broker 1."""
    with Cluster(ClusterSpec(release=release, brokers=2, dirs=2)) as c:
        root, ports = str(c.root), list(c.ports)
        c.create_topic("t", {0: [0, 1]}, configs={"min.insync.replicas": "1"})
        c.wait_until(lambda o: all(isinstance(d, int) for d in o.controller.partitions[("t", 0)].directories),
                     timeout=120, what="t-0's replicas assigned to dirs (AssignReplicasToDirs)")
        assert c.produce("t", 0, b"r0").offset == 0
        before = c.wait_until(lambda o: o.brokers[1].replicas.get(("t", 0)) is not None
                              and o.brokers[1].replicas[("t", 0)].log_end_offset == 1,
                              timeout=120, what="broker 1's replica of t-0 caught up")
        assert before.controller.partitions[("t", 0)].leader == 0
        d = before.brokers[0].replicas[("t", 0)].dir
        assert before.brokers[0].replicas[("t", 0)].records == ((0, b"r0"),)
        assert before.controller.partitions[("t", 0)].directories[0] == d
        offset = before.controller.last_offset

        c.fail_dir(0, d)             # waits until describeLogDirs reports the dir offline
        after = c.wait_until(lambda o: o.controller.partitions[("t", 0)].leader == 1
                             and o.controller.registrations[0].dirs == (1 - d,),
                             timeout=120, what="t-0 led by broker 1 and broker 0 registered without the failed dir")
        assert after.brokers[0].up and after.brokers[0].dirs[d].online is False and not after.brokers[0].dirs[d].exists
        assert after.brokers[0].dirs[1 - d].online is True
        p = after.controller.partitions[("t", 0)]
        assert p.isr == (1,) and p.leader_epoch == 1 and p.directories[0] == d
        new = after.records_after(offset)
        assert any(r.type == "PartitionChangeRecord" and r.data.get("leader") == 1 and r.data.get("isr") == [1]
                   for r in new), new
        assert any(r.type == "BrokerRegistrationChangeRecord" and r.data["brokerId"] == 0
                   and len(r.data.get("logDirs") or ()) == 1 for r in new), new
        assert not after.controller.registrations[0].fenced
        assert c.consume("t", 0).records == ((0, b"r0"),)
        check_restart_with_the_dir_failed_and_the_gate(c, d)
    assert_nothing_left(root, ports)


def check_restart_with_the_dir_failed_and_the_gate(c: Cluster, d: int) -> None:
    """Broker 0 crashes and restarts with its dir d still a regular file: it starts, registers with its other dir
    only (MetaPropertiesEnsemble.Loader cannot read the dir's meta.properties: an error dir; LogManager leaves it
    offline) and is unfenced; its replica of t-0 is not re-created on the online dir (t-0's Directories name the
    failed dir), except on 3.7.0, which has KAFKA-16234 and re-creates it (seen: JBODCHECK_KAFKA_RELEASES=3.7.0). Then, with AssignReplicasToDirs held at the controller, a new topic's Directories stay
    UNASSIGNED (AssignmentsManager retries the denied request) until the hold is released."""
    c.crash(0)
    c.restart(0)                     # waits for a new registration, unfenced
    o = c.observe()
    assert o.brokers[0].up and o.brokers[0].dirs[d].online is False and o.brokers[0].dirs[1 - d].online is True
    assert o.controller.registrations[0].dirs == (1 - d,) and not o.controller.registrations[0].fenced
    if parse_version(c.spec.release) < (3, 7, 1):
        # KAFKA-16234 (fixed in 3.7.1, "Log directory failure re-creates partitions in another logdir
        # automatically"): 3.7.0 re-creates the replica on the online dir and it catches up from the leader
        assert o.brokers[0].replicas[("t", 0)].dir == 1 - d
    else:
        assert o.brokers[0].replicas.get(("t", 0)) is None
    c.hold("AssignReplicasToDirs")
    c.create_topic("u", {0: [1]})
    held = c.wait_until(lambda o: len(c.denials()) > 0, timeout=60, what="an AssignReplicasToDirs denied")
    assert held.controller.partitions[("u", 0)].directories == ("UNASSIGNED",)
    assert all(" ASSIGN_REPLICAS_TO_DIRS at=1000 from=1 " in line for line in c.denials())
    c.release("AssignReplicasToDirs")
    c.wait_until(lambda o: isinstance(o.controller.partitions[("u", 0)].directories[0], int), timeout=60,
                 what="u-0 assigned to a dir once AssignReplicasToDirs is released")


@needs_kafka
def test_a_failed_dir_moves_leadership_on_a_real_cluster():
    fetch(RELEASE)
    check_dir_failure(RELEASE)


@pytest.mark.realkafka
@pytest.mark.parametrize("release", RELEASES or ["(none)"])
@needs_kafka
def test_a_failed_dir_on_each_release(release):
    if not RELEASES:
        pytest.skip("opt-in: set JBODCHECK_KAFKA_RELEASES=3.9.2,4.0.2,4.4.0 (docs/testing.md)")
    fetch(release)
    check_dir_failure(release)


# ---- hygiene: nothing left after a SIGINT or a failed test --------------------------------------------------------

STARTER = """
import sys, time
from realkafka.cluster import Cluster, ClusterSpec
with Cluster(ClusterSpec(release=sys.argv[1], brokers=1, dirs=1)) as c:
    print(c.root, *c.ports, flush=True)
    c.hold_controller()          # a stopped JVM must be ended too
    time.sleep(600)
"""


@needs_kafka
def test_sigint_leaves_no_process_port_or_directory(tmp_path):
    fetch(RELEASE)
    script = tmp_path / "starter.py"
    script.write_text(STARTER)
    proc = subprocess.Popen([sys.executable, str(script), RELEASE], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        line = proc.stdout.readline().split()
        assert line, proc.stderr.read()[-2000:]
        root, ports = line[0], [int(p) for p in line[1:]]
        assert _jvms_under(root) and Path(root).is_dir()
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode != 0
    assert_nothing_left(root, ports)


FAILING_TEST = """
from pathlib import Path
from realkafka.cluster import Cluster, ClusterSpec

def test_fails():
    with Cluster(ClusterSpec(release={release!r}, brokers=1, dirs=1)) as c:
        Path({out!r}).write_text(" ".join([str(c.root), *map(str, c.ports)]))
        assert False, "a failing test"
"""


@needs_kafka
def test_a_failing_test_leaves_no_process_port_or_directory(tmp_path):
    fetch(RELEASE)
    out = tmp_path / "cluster.txt"
    (tmp_path / "test_fails.py").write_text(FAILING_TEST.format(release=RELEASE, out=str(out)))
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path / "test_fails.py")],
                       cwd=tmp_path, capture_output=True, text=True, timeout=600,
                       env={**os.environ, "PYTHONPATH": str(REPO)})
    assert p.returncode == 1 and "a failing test" in p.stdout, p.stdout[-2000:] + p.stderr[-2000:]
    root, *ports = out.read_text().split()
    assert_nothing_left(root, [int(x) for x in ports])


@pytest.mark.realkafka
@needs_kafka
def test_a_release_the_registry_does_not_serve_is_one_line():
    if not RELEASES:
        pytest.skip("opt-in (asks the registry): set JBODCHECK_KAFKA_RELEASES (docs/testing.md)")
    from realkafka.cluster.errors import BadRelease

    with pytest.raises(BadRelease, match="no such Kafka release 4.2.9: Maven Central does not serve"):
        fetch("4.2.9")


def test_kafka_fetch_refuses_a_release_before_kraft_jbod():
    p = subprocess.run([sys.executable, "-m", "explorer", "kafka", "fetch", "3.6.2"], cwd=REPO, capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "predates KRaft JBOD" in p.stderr


@needs_kafka
def test_kafka_fetch_prints_the_release_and_its_jars():
    fetch(RELEASE)
    p = subprocess.run([sys.executable, "-m", "explorer", "kafka", "fetch", RELEASE], cwd=REPO, capture_output=True,
                       text=True, timeout=600)
    version, libs = p.stdout.split()
    assert p.returncode == 0 and version == RELEASE and (Path(libs) / f"kafka_2.13-{RELEASE}.jar").is_file()


@needs_kafka
@pytest.mark.long_run
def test_a_cluster_formatted_before_directory_assignment_upgrades_its_metadata_version():
    """ClusterSpec.metadata_version formats at an older metadata.version (the storage tool's --release-version);
    upgrade_metadata_version raises it to the brokers' highest level, after which each broker registers its dir
    (BrokerRegistrationTracker): the model's kraft-mv-upgrade, on a real cluster."""
    fetch(RELEASE)
    with Cluster(ClusterSpec(release=RELEASE, brokers=1, dirs=1, metadata_version="3.6-IV2")) as c:
        root, ports = str(c.root), list(c.ports)
        before = c.features()["metadata.version"]
        assert not c.observe(light=True).controller.registrations[0].dirs, "no LogDirs before 3.7-IV2"
        old, new = c.upgrade_metadata_version()
        assert old == before < new == c.features()["metadata.version"]
        c.wait_until(lambda o: len(o.controller.registrations[0].dirs) == 1, timeout=60,
                     what="broker 0 re-registered with its dir")
    assert_nothing_left(root, ports)


@needs_kafka
@pytest.mark.long_run
def test_a_failed_dir_replaced_or_removed_while_its_broker_is_down():
    """replace_dir: an empty dir in place of the failed one; Kafka gives it a new directory.id at the next start,
    which the harness names dir 0 (the old id: 'before its replacement'). remove_dir: the next start runs without
    the dir, which the observation reports as not configured and the registration no longer lists."""
    fetch(RELEASE)
    with Cluster(ClusterSpec(release=RELEASE, brokers=1, dirs=2)) as c:
        root, ports = str(c.root), list(c.ports)
        old = next(u for u, named in c.dir_ids.items() if named == (0, 0))
        c.fail_dir(0, 0, wait=False)
        c.crash(0)
        c.replace_dir(0, 0)
        c.restart(0)
        o = c.wait_until(lambda o: len(o.controller.registrations[0].dirs) == 2 and o.brokers[0].dirs[0].online,
                         timeout=120, what="broker 0 registered with its new dir 0 online")
        assert 0 in o.controller.registrations[0].dirs and o.brokers[0].dirs[0].id != old
        assert c.names.index(old, 0) == "dir 0 of broker 0 before its replacement"
        c.fail_dir(0, 1, wait=False)
        c.crash(0)
        c.remove_dir(0, 1)
        c.restart(0)
        o = c.wait_until(lambda o: len(o.controller.registrations[0].dirs) == 1, timeout=120,
                         what="broker 0 registered with one dir")
        assert o.brokers[0].dirs[1].configured is False and o.brokers[0].dirs[0].online
    assert_nothing_left(root, ports)


def test_a_node_that_exited_by_itself_is_told_by_its_exception_not_its_stack(tmp_path):
    import subprocess as sp

    from realkafka.cluster.cluster import Node

    node = Node(0, "broker", tmp_path)
    node.log.write_text("[t] ERROR Exiting Kafka due to fatal exception during startup. (kafka.Kafka$)\n"
                        "org.apache.kafka.common.KafkaException: Socket server failed to bind to 127.0.0.1:4000\n"
                        "\tat kafka.network.Acceptor.openServerSocket(SocketServer.scala:1)\n"
                        "Caused by: java.net.BindException: Address already in use\n\t... 17 more\n")
    node.expected, node.proc = True, sp.Popen(["false"])
    node.proc.wait()
    assert node.died() == (f"broker 0 exited with code 1; its last error: [t] ERROR Exiting Kafka due to fatal "
                           f"exception during startup. (kafka.Kafka$); its exception ({node.log}): Caused by: "
                           f"java.net.BindException: Address already in use")
