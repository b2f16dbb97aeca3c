"""The candidate fixes as patches of Kafka's code (realkafka/patches/, docs/fixes.md "On Kafka's own code"): every
patch applies to the release's source it names; the class-loading log check tells a patched class from the
release's; `reproduce --fix` refuses what it cannot run. The default profile needs no network: a release whose
-sources jar is not in the local Maven repository is skipped; the thorough profile (tests/long_runs.py) fetches
and compiles."""
from __future__ import annotations

import zipfile

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


def test_the_recommended_fix_of_findings_1_5_and_6_has_a_patch_at_3_9_2_and_4_4_0():
    for fix in ("assign-lost-at-start-up",):
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
    options = cluster._node_classpath(Home)
    assert options[0] == f"-Xlog:class+load=info:file={tmp_path / 'broker-0' / 'class-load-%p.log'}"
    assert options[1:] == ["-cp", f"{jar}:{cluster.kafka.classpath}"]
    plain = Cluster(ClusterSpec(release="3.9.2"))
    plain.kafka = cluster.kafka
    assert plain._node_classpath(Home) == ["-cp", cluster.kafka.classpath]


@pytest.mark.parametrize("fix,release", PAIRS, ids=[f"{f}@{r}" for f, r in PAIRS])
def test_each_patch_compiles_against_its_release_into_a_jar_of_its_classes(fix, release):
    """Thorough (tests/long_runs.py): fetches the release, its -sources jar and scalac with Maven, and compiles."""
    from realkafka.patches import jar_classes

    jar = patched_jar(fix, release)
    assert SOURCES[fix].class_name in jar_classes(jar)
