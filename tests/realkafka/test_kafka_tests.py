"""The Kafka-native regression tests of the findings (realkafka/kafkatests/, docs/kafka-tests.md) and `jbodcheck
kafka test`: its argument handling, the Surefire report and class-loading log it reads (fast, no Maven); and,
opt-in (``-m realkafka`` with ``JBODCHECK_KAFKA_RELEASES=3.9.2,4.4.0``), each test run by Maven on a release,
where it must fail, and with the finding's patched fix, where it must pass (minutes each)."""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from explorer.cli.app import main
from realkafka.kafkatests import TESTS, kit_line, read_report, class_of
from realkafka.kafkatests.runner import HERE, maven_command, patch_problems

RELEASES = [v for v in os.environ.get("JBODCHECK_KAFKA_RELEASES", "").split(",") if v]
MISSING = [tool for tool in ("java", "mvn") if shutil.which(tool) is None]


def invoke(capsys, *args) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as e:
        main(["kafka", "test", *args])
    out, err = capsys.readouterr()
    return e.value.code, out, err


@pytest.mark.parametrize("args,says", [
    (["2", "--kafka", "4.4.0"], "finding 2 has no Kafka-native test"),
    (["1", "--kafka", "3.8.1"], "written for the test kits of 3.9 and 4.x, not 3.8.1"),
    (["1", "--kafka", "9.9"], "--kafka: 9.9: no such Kafka release line"),
    (["1", "--kafka", "4.4.0", "--fix", "nope"], "--fix nope: no such fix"),
    (["5", "--kafka", "4.4.0", "--fix", "gate2-strict"], "gate2-strict is a fix of finding 1, not of finding 5"),
])
def test_bad_input_is_refused_in_one_line_before_maven_runs(args, says, monkeypatch, capsys):
    monkeypatch.setattr("realkafka.cluster.processes.run", lambda *a, **k: pytest.fail("Maven ran"))
    code, out, err = invoke(capsys, *args)
    assert (code, out) == (2, "")
    assert err.startswith("jbodcheck: error: ") and says in err and err.count("\n") == 1


def test_a_missing_maven_is_a_tool_failure(monkeypatch, capsys):
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv("JAVA_HOME", raising=False)
    code, out, err = invoke(capsys, "1", "--kafka", "4.4.0")
    assert (code, out) == (3, "")
    assert err == "jbodcheck: failure: Maven (mvn) is not installed: the real-cluster harness needs it " \
                  "(docs/realkafka.md)\n"


@pytest.mark.parametrize("passed,code", [(False, 1), (True, 0)])
def test_the_result_is_one_line_and_a_failed_test_exits_1(passed, code, monkeypatch, capsys):
    from realkafka.kafkatests import KafkaTestResult

    result = KafkaTestResult(1, "4.4.0", None, "kafka.server.UnassignedReplicaRestartTest", passed,
                             "" if passed else "broker 0 re-created foo-0", 68.2)
    monkeypatch.setattr("realkafka.kafkatests.run", lambda *a, **k: result)
    got, out, _ = invoke(capsys, "1", "--kafka", "4.4")
    assert got == code
    assert out == ("finding 1 on Kafka 4.4.0: PASSED kafka.server.UnassignedReplicaRestartTest (68 s)\n" if passed
                   else "finding 1 on Kafka 4.4.0: FAILED kafka.server.UnassignedReplicaRestartTest: broker 0 "
                        "re-created foo-0 (68 s)\n")


def test_each_finding_has_its_test_written_for_both_kits():
    for finding, name in TESTS.items():
        assert class_of(finding) == f"kafka.server.{name}"
        for kit in ("kafka3", "kafka4"):
            source = HERE / kit / "kafka" / "server" / f"{name}.java"
            assert f"public class {name}" in source.read_text(), source
    assert kit_line("3.9.2") == "3" and kit_line("4.0.2") == "4" and kit_line("4.4.0") == "4"


def test_the_maven_command_names_the_kit_the_test_and_the_patch(tmp_path):
    argv = maven_command("mvn", 1, "4.4.0", tmp_path, tmp_path / "p.jar")
    assert argv[-1] == "test"
    assert {"-Dkafka.version=4.4.0", "-Dkafka.line=4", "-Dtest=UnassignedReplicaRestartTest",
            f"-Dkafka.patch.jar={tmp_path / 'p.jar'}", "-Dkafka.clients.test.version=4.3.1"} <= set(argv)
    argv = maven_command("mvn", 6, "3.9.2", tmp_path, None)
    assert "-Dkafka.line=3" in argv and not any(a.startswith("-Dkafka.patch.jar") for a in argv)


REPORT = """<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="kafka.server.UnassignedReplicaRestartTest" tests="1" errors="{errors}" skipped="0" failures="{failures}">
  <testcase name="test(ClusterInstance)[1]" classname="kafka.server.UnassignedReplicaRestartTest" time="68.2">
    {body}
  </testcase>
</testsuite>
"""


@pytest.mark.parametrize("failures,errors,body,expected", [
    (1, 0, '<failure message="broker 0 re-created foo-0 on /d0 ==&gt; expected: &lt;true&gt;" '
           'type="org.opentest4j.AssertionFailedError">trace</failure>',
     (1, 1, 0, "broker 0 re-created foo-0 on /d0 ==> expected: <true>")),
    (0, 1, '<error type="java.lang.NoClassDefFoundError">java.lang.NoClassDefFoundError: x\n\tat y</error>',
     (1, 0, 1, "java.lang.NoClassDefFoundError: x")),
    (0, 0, "", (1, 0, 0, "")),
])
def test_the_surefire_report_is_read(tmp_path, failures, errors, body, expected):
    report = tmp_path / "TEST-x.xml"
    report.write_text(REPORT.format(failures=failures, errors=errors, body=body))
    assert read_report(report) == expected


def test_a_patched_class_loaded_from_the_release_jar_is_a_problem(tmp_path):
    classes = tmp_path / "classes"
    classes.mkdir()
    own = "kafka.cluster.Partition"
    ours = {own: classes.as_uri() + "/", "kafka.cluster.Partition$1": "file:" + str(classes) + "/"}
    assert patch_problems(ours, [own, "kafka.cluster.Partition$1", "kafka.cluster.Partition$2"], own, classes) == []
    theirs = dict(ours, **{"kafka.cluster.Partition$1": "file:/m2/kafka_2.13-4.4.0.jar"})
    assert patch_problems(theirs, [own, "kafka.cluster.Partition$1"], own, classes) == [
        "kafka.cluster.Partition$1 was loaded from file:/m2/kafka_2.13-4.4.0.jar, not from the patch"]
    assert patch_problems({}, [own], own, classes) == [
        "the test never loaded the patched class kafka.cluster.Partition"]


FIX_OF = {1: "assign-lost-at-start-up", 5: "unfence-without-offline-dirs", 6: "list-added-replica"}


@pytest.mark.realkafka
@pytest.mark.skipif(bool(MISSING), reason=f"Maven runs the tests: {', '.join(MISSING)} missing")
@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("finding", sorted(TESTS))
def test_each_test_fails_on_the_release_and_passes_with_the_fix(finding, release):
    from realkafka.kafkatests import run
    from realkafka.patches import patched_releases

    from realkafka.cluster import processes

    before = set(Path(tempfile.gettempdir()).glob("kafka-*"))
    bare = run(finding, release)
    assert not bare.passed, bare.line()
    if release in patched_releases(FIX_OF[finding]):
        fixed = run(finding, release, fix=FIX_OF[finding])
        assert fixed.passed, fixed.line()
    # Maven's JVMs are gone, and the test kit removed the cluster's directories
    assert processes.live() == []
    assert set(Path(tempfile.gettempdir()).glob("kafka-*")) - before == set()


def test_no_jar_is_kept_in_the_repository():
    assert list(HERE.rglob("*.java")) and not list(HERE.rglob("*.jar"))


def fake_maven(tmp_path, monkeypatch, body: str) -> dict:
    """A fake ``mvn`` (tests/support/fake_tools.py) that runs ``body`` with ``$b`` the run's build directory."""
    from support.fake_tools import fake_tools

    tools = fake_tools(tmp_path, 'for a in "$@"; do case "$a" in -Dkafkatests.build=*) b="${a#*=}";; esac; done\n'
                       + body)
    for name, value in tools["env"].items():
        monkeypatch.setenv(name, value)
    return tools


def surefire(report: str) -> str:
    return (f'mkdir -p "$b/surefire-reports"\ncat > "$b/surefire-reports/TEST-kafka.server.'
            f"UnassignedReplicaRestartTest.xml\" <<'EOF'\n{report}EOF\nexit 1")


def test_a_compile_error_is_a_tool_failure_in_one_line(tmp_path, monkeypatch, capsys):
    fake_maven(tmp_path, monkeypatch, 'echo "[ERROR] COMPILATION ERROR : "\necho "[ERROR] /r/kafka4/kafka/server/'
               'UnassignedReplicaRestartTest.java:[55,43] cannot find symbol"\nexit 1')
    code, out, err = invoke(capsys, "1", "--kafka", "4.4.0")
    assert (code, out) == (3, "")
    assert err.splitlines()[-1].startswith("jbodcheck: failure: Maven did not run "
                                           "kafka.server.UnassignedReplicaRestartTest on Kafka 4.4.0: ")
    assert "cannot find symbol" in err.splitlines()[-1]


def test_a_failing_test_exits_1_with_its_assertion_and_an_erring_one_3(tmp_path, monkeypatch, capsys):
    tools = fake_maven(tmp_path, monkeypatch, surefire(REPORT.format(
        failures=1, errors=0, body='<failure message="broker 0 re-created foo-0">trace</failure>')))
    code, out, _ = invoke(capsys, "1", "--kafka", "3.9.2")
    assert code == 1
    assert out.startswith("finding 1 on Kafka 3.9.2: FAILED kafka.server.UnassignedReplicaRestartTest: broker 0 "
                          "re-created foo-0 (")
    assert "-Dkafka.line=3" in tools["calls"].read_text()

    (tmp_path / "bin" / "mvn").write_text("#!/bin/sh\n" + 'for a in "$@"; do case "$a" in -Dkafkatests.build=*) '
                                           'b="${a#*=}";; esac; done\n' + surefire(REPORT.format(
                                               failures=0, errors=1, body="<error>java.lang.NoClassDefFoundError: "
                                                                          "org/apache/kafka/test/TestUtils</error>")))
    code, out, err = invoke(capsys, "1", "--kafka", "3.9.2")
    assert (code, out) == (3, "")
    assert err.splitlines()[-1] == ("jbodcheck: failure: kafka.server.UnassignedReplicaRestartTest could not run on "
                                    "Kafka 3.9.2: java.lang.NoClassDefFoundError: org/apache/kafka/test/TestUtils")


def test_a_fix_without_a_patch_for_the_release_is_bad_input_before_maven_runs(tmp_path, monkeypatch, capsys):
    tools = fake_maven(tmp_path, monkeypatch, "exit 7")
    code, out, err = invoke(capsys, "1", "--kafka", "4.0.2", "--fix", "gate2-strict")
    assert (code, out) == (2, "")
    assert err == ("jbodcheck: error: the fix gate2-strict has no patch for Kafka 4.0.2 "
                   "(realkafka/patches/gate2-strict/)\n")
    assert not tools["calls"].exists()
