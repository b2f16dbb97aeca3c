"""The candidate fixes as patches of Kafka's code (realkafka/patches/, docs/fixes.md "On Kafka's own code"): every
patch applies to the release's source it names; the class-loading log check tells a patched class from the
release's; `reproduce --fix` refuses what it cannot run. The default profile needs no network: a release whose
-sources jar is not in the local Maven repository is skipped; the thorough profile (the long_run marker) fetches
and compiles."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import pytest

from model.kraft.fixes import FIXES
from realkafka.patches import (PORTS, SOURCES, PatchError, cached_sources, check_loaded, patch_path, patched_jar,
                               patched_releases, patched_source, patches)
from realkafka.patches.catalogue import HERE

PAIRS = [(fix, release) for fix, releases in patches().items() for release in releases]


def test_every_patch_is_of_a_model_fix_and_every_diff_file_is_catalogued():
    assert set(SOURCES) <= set(FIXES)
    assert PAIRS, "no patch at all"
    found = {(p.parent.name, p.stem) for p in HERE.glob("*/*.diff") if p.parent.name != "ports"}
    assert found == set(PAIRS)


def test_every_candidate_fix_of_findings_1_5_and_6_has_a_patch_at_3_9_2_and_4_4_0():
    fixes = [name for name, fix in FIXES.items() if set(fix.findings) & {1, 5, 6}]
    assert set(fixes) == {"gate2-strict", "assign-lost-at-start-up", "offline-dirs-before-unfence",
                          "unfence-without-offline-dirs", "list-added-replica"}
    for fix in fixes:
        assert {"3.9.2", "4.4.0"} <= set(patched_releases(fix)), fix


@pytest.mark.parametrize("fix,release", PAIRS, ids=[f"{f}@{r}" for f, r in PAIRS])
def test_each_patch_applies_cleanly_to_the_release_source_it_names(fix, release):
    source = SOURCES[fix]
    if not cached_sources(source.artifact, release):
        pytest.skip(f"{source.artifact} {PORTS.get(release, release)}'s -sources jar is not in the local Maven "
                    "repository (the thorough profile fetches it)")
    text = patched_source(fix, release)
    unpatched = patched_source(fix, release, dry_run=True)
    assert text != unpatched
    header = patch_path(fix, release).read_text().splitlines()[:2]
    assert header == [f"--- a/{source.path}", f"+++ b/{source.path}"]


def test_a_patch_that_does_not_apply_is_refused_in_one_line(tmp_path, monkeypatch):
    import realkafka.patches.build as build

    fix = "assign-lost-at-start-up"
    source = SOURCES[fix]
    if not cached_sources(source.artifact, "3.9.2"):
        pytest.skip("kafka_2.13 3.9.2's -sources jar is not cached")
    bad = tmp_path / "x" / fix / "3.9.2.diff"
    bad.parent.mkdir(parents=True)
    bad.write_text(f"--- a/{source.path}\n+++ b/{source.path}\n@@ -1,1 +1,1 @@\n-no such line\n+other\n")
    monkeypatch.setattr(build, "patch_path", lambda f, r: bad)
    with pytest.raises(PatchError) as e:
        build.patched_source(fix, "3.9.2")
    assert "does not apply" in str(e.value) and "\n" not in str(e.value)


def _jar(path, names):
    with zipfile.ZipFile(path, "w") as z:
        for n in names:
            z.writestr(n.replace(".", "/") + ".class", b"\xca\xfe\xba\xbe")
    return path


def test_the_class_loading_log_shows_which_jar_each_patched_class_came_from(tmp_path):
    jar = _jar(tmp_path / "fix.jar", ["kafka.server.ReplicaManager", "kafka.server.ReplicaManager$"])
    broker, controller = tmp_path / "broker-0", tmp_path / "controller"
    broker.mkdir(), controller.mkdir()
    uri = jar.resolve().as_uri()
    (broker / "class-load-11.log").write_text(
        f"[0.5s][info][class,load] kafka.server.ReplicaManager source: {uri}\n"
        f"[0.5s][info][class,load] kafka.server.ReplicaManager$ source: {uri}\n"
        "[0.6s][info][class,load] kafka.server.KafkaConfig source: file:/c/libs/kafka_2.13-3.9.2.jar\n")
    (controller / "class-load-12.log").write_text("[0.4s][info][class,load] java.lang.Object source: jrt:/java.base\n")
    where, problems = check_loaded([broker, controller], {jar: "kafka.server.ReplicaManager"})
    assert problems == [] and where == {"kafka.server.ReplicaManager": ["broker-0"]}
    # the release's class loaded in place of the patched one: a problem, named
    (broker / "class-load-13.log").write_text(
        "[0.5s][info][class,load] kafka.server.ReplicaManager source: file:/c/libs/kafka_2.13-3.9.2.jar\n")
    _, problems = check_loaded([broker], {jar: "kafka.server.ReplicaManager"})
    assert problems == ["broker-0 loaded kafka.server.ReplicaManager from file:/c/libs/kafka_2.13-3.9.2.jar, not from "
                        "the patch fix.jar"]
    # no node loaded the patched class at all
    _, problems = check_loaded([controller], {jar: "kafka.server.ReplicaManager"})
    assert problems == ["no node loaded kafka.server.ReplicaManager from its patch jar"]


def test_reproduce_fix_refuses_an_unknown_fix_and_a_release_without_its_patch():
    from explorer.cli.exits import BadInput
    from explorer.cli.reproduce_fix import patch_files

    with pytest.raises(BadInput, match="no such candidate fix"):
        patch_files(("nope",), "3.9.2")
    with pytest.raises(BadInput, match="no patch of Kafka's code for Kafka 3.8.1"):
        patch_files(("assign-lost-at-start-up",), "3.8.1")
    (fix, path, source), = patch_files(("assign-lost-at-start-up",), "3.9.2")
    assert path == patch_path(fix, "3.9.2") and source.class_name == "kafka.server.ReplicaManager"


def test_the_patched_cluster_puts_the_patch_jars_first_and_logs_class_loading(tmp_path):
    from realkafka.cluster import Cluster, ClusterSpec
    from realkafka.cluster.release import Release

    jar = tmp_path / "fix.jar"
    cluster = Cluster(ClusterSpec(release="3.9.2", patches=[jar]))
    cluster.kafka = Release("3.9.2", tmp_path / "libs", tmp_path / "classes")

    class Home:
        home = tmp_path / "broker-0"
    log = f"-Xlog:class+load=info:file={tmp_path / 'broker-0' / 'class-load-%p.log'}"
    assert cluster._class_load_log(Home) == [log]
    assert cluster._nodes_classpath() == f"{jar}:{cluster.kafka.classpath}"
    # class-data sharing would log a patched class as from its archive, not the patch jar: off on a patched cluster
    sharing = Cluster(ClusterSpec(release="3.9.2", patches=[jar], class_sharing=True))
    sharing.kafka = cluster.kafka
    assert sharing._class_sharing() is None
    plain = Cluster(ClusterSpec(release="3.9.2"))
    plain.kafka = cluster.kafka
    assert plain._class_load_log(Home) == [] and plain._nodes_classpath() == cluster.kafka.classpath


@pytest.mark.parametrize("fix,release", PAIRS, ids=[f"{f}@{r}" for f, r in PAIRS])
@pytest.mark.long_run
def test_each_patch_compiles_against_its_release_into_a_jar_of_its_classes(fix, release):
    """Thorough (the long_run marker): fetches the release, its -sources jar and scalac with Maven, and compiles."""
    from realkafka.patches import jar_classes

    jar = patched_jar(fix, release)
    assert SOURCES[fix].class_name in jar_classes(jar)


REPO = Path(__file__).resolve().parents[2]
FINDING_1 = str(REPO / "scenarios" / "kraft-finding-1-rf1-acked-record-lost.json")
RELEASES = [v for v in os.environ.get("JBODCHECK_KAFKA_RELEASES", "").split(",") if v]


@pytest.mark.realkafka
@pytest.mark.parametrize("release", RELEASES or ["(none)"])
def test_finding_1_on_a_patched_cluster_keeps_the_record_and_leaves_nothing_behind(release):
    """Opt-in (-m realkafka, JBODCHECK_KAFKA_RELEASES=3.9.2,4.4.0): `reproduce --fix assign-lost-at-start-up` of
    finding 1's loss on a real cluster whose broker loads the patched ReplicaManager: it matches the model with the
    fix, the loss does not happen, and no JVM of the patched cluster nor its directory is left."""
    if not RELEASES:
        pytest.skip("opt-in: set JBODCHECK_KAFKA_RELEASES=3.9.2,4.4.0 (docs/testing.md)")
    repo = REPO
    jar = patched_jar("assign-lost-at-start-up", release)
    before = set(Path(tempfile.gettempdir()).glob(f"jbodcheck-kafka-{release}-*"))
    p = subprocess.run([sys.executable, "-m", "explorer", "reproduce", FINDING_1, "--kafka", release, "--fix",
                        "assign-lost-at-start-up", "--json", "-"], cwd=repo, capture_output=True, text=True,
                       timeout=1800, env={**os.environ, "PYTHONPATH": str(repo)})
    assert p.returncode == 0, p.stderr[-3000:]
    report = json.loads(p.stdout)
    (fix,) = report["fixes"]
    assert fix["jar"] == str(jar) and "broker-0" in fix["loaded_by"]
    assert "acked_record_gone" in fix["without_fix"] and "acked_record_gone" not in report["violation"]["real"]
    jvms = subprocess.run(["pgrep", "-af", jar.name], capture_output=True, text=True).stdout
    assert not [line for line in jvms.splitlines() if "kafka.Kafka" in line]
    # other clusters may run on the machine: a directory left by this run is one whose nodes logged class loading
    new = set(Path(tempfile.gettempdir()).glob(f"jbodcheck-kafka-{release}-*")) - before
    assert not [d for d in new if any(d.glob("*/class-load-*.log"))]


def gate2_strict_cost(release: str, patched: bool) -> dict:
    """docs/fixes.md, gate2-strict's cost, looked for on a real cluster (one broker x two dirs): dir 0 fails while
    the broker's heartbeats are held (the session timeout raised, so that it is not fenced), a topic is created on
    it (its Directories entry UNASSIGNED: the registration still lists both dirs), then the heartbeat reports dir 0.
    What the cluster shows then: t-0's leader, the broker's log of it, whether a producer is acknowledged."""
    from realkafka.cluster import Cluster, ClusterSpec

    jars = (patched_jar("gate2-strict", release),) if patched else ()
    t0 = ("t", 0)
    spec = ClusterSpec(release=release, brokers=1, dirs=2, patches=jars,
                       controller_settings={"broker.session.timeout.ms": "120000"})
    with Cluster(spec) as c:
        c.hold("BrokerHeartbeat", broker=0)
        c.fail_dir(0, 0)
        c.create_topic("t", {0: [0]}, configs={"min.insync.replicas": "1"})
        created = c.wait_until(lambda o: t0 in o.controller.partitions, timeout=60, what="t-0 created")
        time.sleep(5)                                   # the broker replays the PartitionRecord
        c.release("BrokerHeartbeat", broker=0)
        c.wait_until(lambda o: o.controller.registrations[0].dirs == (1,), timeout=60,
                     what="broker 0's heartbeat reported dir 0 offline")
        time.sleep(10)
        o = c.observe()
        replica = o.brokers[0].replicas.get(t0)
        produced = c.produce("t", 0, b"r0", timeout=20)
        return {"directories_at_creation": created.controller.partitions[t0].directories,
                "leader": o.controller.partitions[t0].leader, "log_dir": replica.dir if replica else None,
                "acked": produced.offset, "producer_error": produced.error}


@pytest.mark.realkafka
@pytest.mark.parametrize("release", RELEASES or ["(none)"])
def test_gate2_strict_costs_a_new_topic_a_leader_that_holds_no_log(release):
    """Opt-in: gate2-strict's cost (docs/fixes.md) on a real patched cluster, and the same steps without the patch."""
    if not RELEASES:
        pytest.skip("opt-in: set JBODCHECK_KAFKA_RELEASES=3.9.2,4.4.0 (docs/testing.md)")
    plain = gate2_strict_cost(release, patched=False)
    assert plain["directories_at_creation"] == ("UNASSIGNED",)
    assert (plain["leader"], plain["log_dir"], plain["acked"]) == (0, 1, 0)
    strict = gate2_strict_cost(release, patched=True)
    assert (strict["leader"], strict["log_dir"], strict["acked"]) == (0, None, None), strict


def test_reproduce_plan_only_with_a_fix_names_the_patch_and_what_the_run_without_it_shows(capsys):
    from explorer.cli.app import main

    with pytest.raises(SystemExit) as e:
        main(["reproduce", FINDING_1, "--kafka", "3.9.2", "--fix", "assign-lost-at-start-up", "--plan-only",
              "--json", "-"])
    assert e.value.code == 0
    report = json.loads(capsys.readouterr().out)
    (fix,) = report["fixes"]
    assert fix["patch"] == "realkafka/patches/assign-lost-at-start-up/3.9.2.diff"
    assert fix["without_fix"] == ["acked_record_gone", "replica_recreated_over_failed_dir"]
    # the model with the fix: the loss is gone, and the replica is assigned to LOST (its cost, docs/fixes.md)
    assert report["violation"] == {"expected": ["directories_name_the_log_dir"],
                                   "planned": ["directories_name_the_log_dir"]}
    assert report["model"]["options"]["candidate_fixes"] == ["assign-lost-at-start-up"]
