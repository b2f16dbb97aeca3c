"""ZooKeeper-mode clusters of the real-cluster harness (realkafka/cluster/zk.py, docs/realkafka.md "ZooKeeper mode").

Without a JVM: the controller state read from znodes as Kafka writes them (a fake ZooKeeper client). With Java,
javac and Maven (the thorough profile: the long_run marker): a 3-broker x 2-dir cluster of Kafka 3.9.2 in
ZooKeeper mode whose leader's dir fails, and the hygiene checks (no ZooKeeper or Kafka JVM, port or temporary
directory left after a stop or a SIGINT; no JVM or port after a SIGKILL of the harness).
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from support.helpers import REPO
from realkafka.cluster import ClusterSpec, ZkCluster
from realkafka.cluster.release import fetch
from realkafka.cluster.zkstate import read_controller_state

RELEASE = "3.9.2"
MISSING = [tool for tool in ("java", "javac", "mvn") if shutil.which(tool) is None]
needs_kafka = pytest.mark.skipif(bool(MISSING), reason=f"the real-cluster harness needs {', '.join(MISSING)}")


# ---- without a JVM ----------------------------------------------------------------------------------------------

class FakeZooKeeper:
    """znodes as a dict path -> (bytes, czxid)."""

    def __init__(self, nodes: dict):
        self.nodes = nodes

    def get(self, path):
        from kazoo.exceptions import NoNodeError

        if path not in self.nodes:
            raise NoNodeError(path)
        data, czxid = self.nodes[path]
        return data, SimpleNamespace(czxid=czxid)

    def get_children(self, path):
        from kazoo.exceptions import NoNodeError

        prefix = path.rstrip("/") + "/"
        kids = {p[len(prefix):].split("/")[0] for p in self.nodes if p.startswith(prefix)}
        if path not in self.nodes and not kids:
            raise NoNodeError(path)
        return sorted(kids)


def _j(value) -> bytes:
    return json.dumps(value).encode()


def test_controller_state_is_read_from_the_znodes_kafka_writes():
    zk = FakeZooKeeper({
        "/controller": (_j({"version": 2, "brokerid": 1, "timestamp": "1", "kraftControllerEpoch": -1}), 5),
        "/controller_epoch": (b"3", 4),
        "/brokers/ids": (b"", 1),
        "/brokers/ids/0": (_j({"host": "127.0.0.1"}), 17),
        "/brokers/ids/1": (_j({"host": "127.0.0.1"}), 9),
        "/brokers/topics": (b"", 1),
        "/brokers/topics/t": (_j({"version": 3, "partitions": {"0": [0, 1, 2]}, "adding_replicas": {},
                                  "removing_replicas": {}}), 20),
        "/brokers/topics/t/partitions/0/state": (_j({"controller_epoch": 3, "leader": 1, "version": 1,
                                                     "leader_epoch": 2, "isr": [1, 2]}), 21),
        "/log_dir_event_notification/log_dir_event_0000000001": (_j({"version": 1, "broker": 0, "event": 1}), 30),
        "/admin/delete_topics/u": (b"", 31),
    })
    s = read_controller_state(zk, up=True)
    assert (s.controller, s.controller_epoch) == (1, 3)
    assert {b: r.epoch for b, r in s.registrations.items()} == {0: 17, 1: 9}
    assert not any(r.fenced for r in s.registrations.values())
    p = s.partitions[("t", 0)]
    assert (p.replicas, p.isr, p.leader, p.leader_epoch, p.controller_epoch) == ((0, 1, 2), (1, 2), 1, 2, 3)
    assert s.log_dir_events == (0,) and s.deleting == ("u",) and s.reassigning == ()


def test_a_cluster_without_an_elected_controller_or_topics_reads_as_empty():
    s = read_controller_state(FakeZooKeeper({}), up=True)
    assert (s.controller, s.controller_epoch, s.registrations, s.partitions) == (-1, 0, {}, {})


def test_zookeeper_mode_is_refused_on_4x():
    with pytest.raises(ValueError, match="no ZooKeeper mode"):
        ZkCluster(ClusterSpec(release="4.0.2"))


# ---- with a JVM: a real ZooKeeper-mode cluster ------------------------------------------------------------------

JVMS = r"kafka\.Kafka |jbodcheck\.Probe|QuorumPeerMain|ZooKeeperServerMain"


def _listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _jvms_under(root: str) -> list[str]:
    out = subprocess.run(["pgrep", "-af", JVMS], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if root in line]


def assert_nothing_left(root: str, ports: list[int], *, dir_too: bool = True) -> None:
    assert not _jvms_under(root), _jvms_under(root)
    assert not [p for p in ports if _listening(p)]
    if dir_too:
        assert not Path(root).exists()


@needs_kafka
@pytest.mark.long_run
def test_a_leader_dir_failure_in_zookeeper_mode_moves_leadership_and_leaves_nothing():
    """KIP-112's test plan 2 on Kafka 3.9.2 in ZooKeeper mode: broker 0 leads t-0 (replicas 0, 1, 2) with a record;
    its dir holding t-0 fails at runtime. Broker 0 takes the dir offline (describeLogDirs: KafkaStorageException)
    and keeps running; the controller (another broker) moves leadership to broker 1 and shrinks the ISR to [1, 2]
    in t-0's state znode; the handled /log_dir_event_notification znode is gone; the record is read from broker 1.
    After the stop: no JVM, port or directory."""
    fetch(RELEASE)
    with ZkCluster(ClusterSpec(release=RELEASE, brokers=3, dirs=2)) as c:
        root, ports = str(c.root), list(c.ports)
        assert len(_jvms_under(root)) == 5                          # ZooKeeper, 3 brokers, the probe
        c.create_topic("t", {0: [0, 1, 2]}, configs={"min.insync.replicas": "1"})
        assert c.produce("t", 0, b"r0").offset == 0
        before = c.wait_until(lambda o: all(o.brokers[b].replicas.get(("t", 0)) is not None
                                            and o.brokers[b].replicas[("t", 0)].log_end_offset == 1 for b in range(3)),
                              timeout=120, what="every replica of t-0 caught up")
        p = before.controller.partitions[("t", 0)]
        assert (p.leader, p.isr, p.leader_epoch) == (0, (0, 1, 2), 0)
        epoch = before.controller.controller_epoch
        assert p.controller_epoch == epoch and before.controller.controller in (0, 1, 2)
        d = before.brokers[0].replicas[("t", 0)].dir
        c.fail_dir(0, d)
        after = c.wait_until(lambda o: o.controller.partitions[("t", 0)].leader == 1
                             and not o.controller.log_dir_events, timeout=120,
                             what="t-0 led by broker 1 and the log dir event handled")
        p = after.controller.partitions[("t", 0)]
        assert p.isr == (1, 2) and p.leader_epoch == 1
        assert after.brokers[0].up and after.brokers[0].dirs[d].online is False
        assert after.brokers[0].dirs[1 - d].online is True
        assert after.topics[("t", 0)]["isr"] == [1, 2] and after.topics[("t", 0)]["leader"] == 1
        assert c.consume("t", 0).records == ((0, b"r0"),)
    assert_nothing_left(root, ports)


STARTER = """
import sys, time
from realkafka.cluster import ZkCluster, ClusterSpec
with ZkCluster(ClusterSpec(release=sys.argv[1], brokers=1, dirs=1)) as c:
    print(c.root, *c.ports, flush=True)
    time.sleep(600)
"""


def _started(tmp_path):
    script = tmp_path / "starter.py"
    script.write_text(STARTER)
    proc = subprocess.Popen([sys.executable, str(script), RELEASE], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    line = proc.stdout.readline().split()
    if not line:
        proc.kill()
        pytest.fail(proc.stderr.read()[-2000:])
    root, ports = line[0], [int(p) for p in line[1:]]
    assert len(_jvms_under(root)) == 3 and Path(root).is_dir()     # ZooKeeper, the broker, the probe
    assert all(_listening(p) for p in ports)
    return proc, root, ports


@needs_kafka
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL])
@pytest.mark.long_run
def test_a_signal_to_the_harness_leaves_no_zookeeper_or_kafka_process_or_port(tmp_path, sig):
    """SIGINT: the with block unwinds, every JVM killed, the directory removed. SIGKILL: the kernel ends every JVM
    (PR_SET_PDEATHSIG, processes.py); nothing runs to remove the directory, so the test does."""
    import time

    fetch(RELEASE)
    proc, root, ports = _started(tmp_path)
    try:
        proc.send_signal(sig)
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode != 0
    # The kernel's SIGKILL of the children is asynchronous: a JVM on its way out may be gone from pgrep while its
    # sockets still listen (a run of 2026-12-07 saw a broker's port open after pgrep found no JVM).
    deadline = time.monotonic() + 30
    while (_jvms_under(root) or any(_listening(p) for p in ports)) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert_nothing_left(root, ports, dir_too=sig != signal.SIGKILL)
    shutil.rmtree(root, ignore_errors=True)
