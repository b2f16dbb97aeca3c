"""Finding 1's aftermath on a real KRaft cluster (docs/findings/finding-1-replica-recreated-over-failed-dir.md,
"What happens afterwards" and "Affected releases and settings"; issue 40): what was read from Kafka's code, run.

One broker x two dirs leads t-0 alone (RF 1, min.insync.replicas 1) with AssignReplicasToDirs held at the
controller, so that Directories stays UNASSIGNED; a record is acknowledged; the log's dir fails (I/O errors: the
harness's regular file in its place) and the broker crashes; with the hold released it restarts, re-creates t-0
empty on its other dir and leads it: the record is gone (finding 1, RF 1). Then:

- the disk repaired (its data back), the broker does not start: LogManager.loadLog throws "Duplicate log
  directories for t-0 are found in both ..." (3.9.2 line 378, the same in every release read);
- the disk's mount point empty (an unmounted disk), the broker does not start: KafkaRaftServer.initializeLogDirs
  stops for a dir that MetaPropertiesEnsemble.Loader found without meta.properties ("No `meta.properties` found
  in ...", 3.9.2 line 165), where a dir giving I/O errors only goes offline.

Opt-in (``-m realkafka`` with ``JBODCHECK_KAFKA_RELEASES=3.9.2,4.4.0``): a cluster per release, one to three
minutes each on a loaded machine.
"""
from __future__ import annotations

import os
import shutil

import pytest

from realkafka.cluster import Cluster, ClusterSpec, HarnessError
from realkafka.cluster.release import fetch

RELEASES = [v for v in os.environ.get("JBODCHECK_KAFKA_RELEASES", "").split(",") if v]
MISSING = [tool for tool in ("java", "javac", "mvn") if shutil.which(tool) is None]
needs_kafka = pytest.mark.skipif(bool(MISSING), reason=f"the real-cluster harness needs {', '.join(MISSING)}")
T0 = ("t", 0)


def _start_fails(c: Cluster, b: int) -> str:
    """Restart broker b, expecting its start-up to fail; what its server log says from this start on."""
    log = c.server_log(b)
    start = log.stat().st_size if log.exists() else 0
    with pytest.raises(HarnessError, match=f"broker {b} exited"):
        c.restart(b, wait="registered")
    with open(log, "rb") as f:
        f.seek(start)
        return f.read().decode(errors="replace")


def check_finding_1_and_its_aftermath(release: str) -> None:
    with Cluster(ClusterSpec(release=release, brokers=1, dirs=2)) as c:
        c.hold("AssignReplicasToDirs")
        c.create_topic("t", {0: [0]}, configs={"min.insync.replicas": "1"})
        o = c.wait_until(lambda o: o.brokers[0].replicas.get(T0) is not None
                         and o.controller.partitions[T0].leader == 0,
                         timeout=120, what="t-0's log created on broker 0, which leads it")
        assert o.controller.partitions[T0].directories == ("UNASSIGNED",)
        d = o.brokers[0].replicas[T0].dir
        assert c.produce("t", 0, b"r0").offset == 0          # acknowledged with ISR [0]

        c.fail_dir(0, d)             # waits until describeLogDirs reports the dir offline
        c.crash(0)
        c.release("AssignReplicasToDirs")
        c.restart(0)                 # registers its other dir only; unfenced
        o = c.wait_until(lambda o: o.brokers[0].replicas.get(T0) is not None
                         and o.brokers[0].replicas[T0].dir == 1 - d
                         and o.controller.partitions[T0].leader == 0,
                         timeout=120, what="t-0 re-created on broker 0's other dir and led by it")
        assert o.controller.registrations[0].dirs == (1 - d,)
        assert c.consume("t", 0).records == ()               # the acknowledged record is gone

        # The disk repaired: two logs of t-0, the old one (the record) and the re-created one.
        c.crash(0)
        c.repair_dir(0, d)
        said = _start_fails(c, 0)
        assert "Duplicate log directories for t-0 are found in both" in said, said[-2000:]

        # The same disk unmounted (its mount point an empty dir): the start-up stops, where an I/O error did not.
        path = c.dir_path(0, d)
        path.rename(path.with_name(path.name + ".unmounted"))
        path.mkdir()
        said = _start_fails(c, 0)
        assert "No `meta.properties` found in" in said, said[-2000:]


@pytest.mark.realkafka
@pytest.mark.parametrize("release", RELEASES or ["(none)"])
@needs_kafka
def test_finding_1_s_re_creation_then_a_repaired_disk_and_an_unmounted_one(release):
    if not RELEASES:
        pytest.skip("opt-in: set JBODCHECK_KAFKA_RELEASES=3.9.2,4.4.0 (docs/testing.md)")
    fetch(release)
    check_finding_1_and_its_aftermath(release)
