"""The gate's delaying mode on a real cluster (opt-in: ``JBODCHECK_KAFKA_RELEASES=3.9.2,4.4.0 python -m pytest -m
realkafka tests/realkafka/test_realkafka_gate_delay.py``; docs/realkafka.md, "The gate"): broker 0's AssignReplicasToDirs
held with ``delay=True`` waits at the controller (not refused: no denial), heartbeats keep flowing past the
session timeout (no broker fenced), another broker's assignment is handled meanwhile (the controller's other
request handler thread), and the waiting request is delivered at the release."""
from __future__ import annotations

import os
import shutil
import time

import pytest

from realkafka.cluster import Cluster, ClusterSpec
from realkafka.cluster.release import fetch

RELEASES = [v for v in os.environ.get("JBODCHECK_KAFKA_RELEASES", "").split(",") if v]
MISSING = [tool for tool in ("java", "javac", "mvn") if shutil.which(tool) is None]


def _assigned(topic):
    return lambda o: isinstance(o.controller.partitions[(topic, 0)].directories[0], int)


@pytest.mark.realkafka
@pytest.mark.parametrize("release", RELEASES or ["(none)"])
@pytest.mark.skipif(bool(MISSING), reason=f"the real-cluster harness needs {', '.join(MISSING)}")
def test_a_delayed_assignment_waits_at_the_controller_and_is_delivered_at_the_release(release):
    if not RELEASES:
        pytest.skip("opt-in: set JBODCHECK_KAFKA_RELEASES=3.9.2,4.4.0 (docs/testing.md)")
    fetch(release)
    with Cluster(ClusterSpec(release=release, brokers=2, dirs=2)) as c:
        c.hold("AssignReplicasToDirs", broker=0, delay=True)
        c.create_topic("u", {0: [0]})
        time.sleep(8)                       # beyond broker.session.timeout.ms (6 s)
        o = c.observe(light=True)
        assert o.controller.partitions[("u", 0)].directories == ("UNASSIGNED",)
        assert not any(r.fenced for r in o.controller.registrations.values())
        assert c.denials() == [] and c.delays() == []      # waiting: nothing logged yet
        c.create_topic("v", {0: [1]})
        c.wait_until(_assigned("v"), timeout=30, what="v-0 assigned while u-0's request waits")
        c.release("AssignReplicasToDirs")
        c.wait_until(_assigned("u"), timeout=30, what="u-0 assigned at the release")
        assert c.denials() == []
        [line] = c.delays()
        assert " ASSIGN_REPLICAS_TO_DIRS at=1000 from=0 " in line and line.endswith(" then=ALLOWED")
        assert int(line.split(" delayed=")[1].split()[0]) >= 8000


@pytest.mark.realkafka
@pytest.mark.parametrize("release", RELEASES or ["(none)"])
@pytest.mark.skipif(bool(MISSING), reason=f"the real-cluster harness needs {', '.join(MISSING)}")
def test_a_held_answer_keeps_an_accepted_move_unswapped_until_its_release(release):
    """The answer proxy (ClusterSpec(answers=True)): with the controller's answers to broker 0's AssignReplicasToDirs
    held, an alterReplicaLogDirs is accepted by the controller (Directories name the new dir) while the broker keeps
    its log on the old dir and the -future log on the new one; released, the broker swaps."""
    if not RELEASES:
        pytest.skip("opt-in: set JBODCHECK_KAFKA_RELEASES=3.9.2,4.4.0 (docs/testing.md)")
    fetch(release)
    with Cluster(ClusterSpec(release=release, brokers=1, dirs=2, answers=True)) as c:
        c.create_topic("t", {0: [0]})
        c.wait_until(lambda o: o.controller.partitions[("t", 0)].directories == (0,), timeout=60, what="t-0 on dir 0")
        assert c.produce("t", 0, b"r0").offset == 0
        c.hold_answers(0)
        c.alter_replica_log_dir("t", 0, broker=0, dir=1)
        c.wait_until(lambda o: o.controller.partitions[("t", 0)].directories == (1,), timeout=60,
                     what="the controller accepts dir 1")
        time.sleep(8)
        o = c.observe()
        replica = o.brokers[0].replicas[("t", 0)]
        assert (replica.dir, replica.future_dir) == (0, 1) and not o.controller.registrations[0].fenced
        c.release_answers(0)
        c.wait_until(lambda o: (o.brokers[0].replicas[("t", 0)].dir, o.brokers[0].replicas[("t", 0)].future_dir)
                     == (1, None), timeout=60, what="the swap once the answer went through")
        assert [r[1] for r in c.consume("t", 0).records] == [b"r0"]
