"""One Kafka-native test run: Maven compiles the finding's test for the release's test kit (``kafka3/`` for 3.9.x,
``kafka4/`` for 4.x), runs it with Surefire in a build directory of the cache, and the Surefire report says whether
it passed. With a fix, the patch jar's classes are unpacked into the run's classes directory, which the test JVM
puts ahead of every dependency, and the JVM's class-loading log must show that each patched class it loaded came
from there (the patch's own class at least): a run never silently tests the release's class.
"""
from __future__ import annotations

import re
import shutil
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import attrs

from realkafka.cluster import processes
from realkafka.cluster.errors import HarnessError
from realkafka.cluster.release import _first_error, _shorten, _tool, cache_root, parse_version

HERE = Path(__file__).resolve().parent
POM = HERE / "pom.xml"
PACKAGE = "kafka.server"
# finding -> its test class (kafka3/ and kafka4/ each hold one of that name)
TESTS = {1: "UnassignedReplicaRestartTest", 5: "UnfencingHeartbeatOfflineDirTest",
         6: "ReassignedReplicaDirectoryTest"}
CHECKED = ("3.9.2", "4.4.0")          # the releases each test was run on (docs/kafka-tests.md, "Results")
# The registry's kafka-clients test jar of these releases lacks org.apache.kafka.test.TestUtils, which the 4.x test
# kit's SslManager needs: the release whose test jar is taken instead.
CLIENTS_TEST_JAR = {"4.4.0": "4.3.1"}


@attrs.frozen
class KafkaTestResult:
    finding: int
    release: str
    fix: str | None
    test: str                 # kafka.server.UnassignedReplicaRestartTest
    passed: bool
    detail: str               # the assertion's message when it failed; the patched classes loaded when it passed
    seconds: float

    def line(self) -> str:
        on = f"Kafka {self.release}" + (f" with --fix {self.fix}" if self.fix else "")
        if self.passed:
            return f"finding {self.finding} on {on}: PASSED {self.test} ({self.seconds:.0f} s{self.detail})"
        return f"finding {self.finding} on {on}: FAILED {self.test}: {self.detail} ({self.seconds:.0f} s)"


def class_of(finding: int) -> str:
    """The finding's test class, or ValueError (one line) for a finding without one."""
    if finding not in TESTS:
        raise ValueError(f"finding {finding} has no Kafka-native test (findings with one: "
                         f"{', '.join(str(n) for n in TESTS)})")
    return f"{PACKAGE}.{TESTS[finding]}"


def kit_line(release: str) -> str:
    """Which test kit the release's tests are written for: "3" (3.9.x: kafka.test in core's test jar) or "4" (4.x:
    kafka-test-common-runtime); ValueError for another release."""
    major, minor, _ = parse_version(release)
    if (major, minor) == (3, 9):
        return "3"
    if major == 4:
        return "4"
    raise ValueError(f"the Kafka-native tests are written for the test kits of 3.9 and 4.x, not {release}")


def build_dir(release: str, fix: str | None) -> Path:
    return cache_root() / "kafkatests" / release / (fix or "release")


def maven_command(mvn: str, finding: int, release: str, build: Path, patch_jar: Path | None) -> list[str]:
    line = kit_line(release)
    argv = [mvn, "-B", "-q", "-f", str(POM), f"-Dkafka.version={release}", f"-Dkafka.line={line}",
            f"-Dkafkatests.build={build}", f"-Dtest={TESTS[finding]}", "-Dsurefire.failIfNoSpecifiedTests=true"]
    if release in CLIENTS_TEST_JAR:
        argv.append(f"-Dkafka.clients.test.version={CLIENTS_TEST_JAR[release]}")
    if patch_jar is not None:
        argv.append(f"-Dkafka.patch.jar={patch_jar}")
    return [*argv, "test"]


def maven_error(output: str) -> str:
    """Why Maven ran no test: javac's first error (a test that does not compile against the release), else
    Maven's first error."""
    for line in re.sub(r"\x1b\[[0-9;]*m", "", output).splitlines():
        if ".java:[" in line and "[ERROR]" in line:
            return _shorten("compile error: " + line.split("[ERROR]", 1)[1].strip())
    return _first_error(output)


def read_report(report: Path) -> tuple[int, int, int, str]:
    """A Surefire XML report: (tests, failures, errors, the first failure's or error's message)."""
    suite = ET.parse(report).getroot()
    message = ""
    for case in suite.iter("testcase"):
        for kind in ("failure", "error"):
            found = case.find(kind)
            if found is not None and not message:
                text = (found.get("message") or found.text or "").strip()
                message = text.splitlines()[0] if text else kind
    count = {k: int(suite.get(k, "0")) for k in ("tests", "failures", "errors", "skipped")}
    return count["tests"] - count["skipped"], count["failures"], count["errors"], " ".join(str(message).split())


def patch_problems(loaded: dict[str, str], patched: list[str], own: str, classes: Path) -> list[str]:
    """Why the run did not test the patch, one line each: a patched class loaded from elsewhere than the run's
    classes directory, or the patch's own class never loaded."""
    where = classes.resolve().as_uri().rstrip("/")
    problems = [f"{name} was loaded from {loaded[name]}, not from the patch"
                for name in patched if name in loaded and not loaded[name].rstrip("/").startswith(
                    (where, where.replace("file:///", "file:/", 1)))]
    if own not in loaded:
        problems.append(f"the test never loaded the patched class {own}")
    return problems


def run(finding: int, release: str, *, fix: str | None = None, log=None) -> KafkaTestResult:
    """Run the finding's Kafka-native test on the release (with the fix's patch jar ahead of the release's jars).
    ValueError for a finding, release or fix this cannot run; HarnessError (realkafka.patches.PatchError among
    them) when Maven, Java, the compiler or the test's own machinery fails: the test neither passed nor failed."""
    test = class_of(finding)
    kit_line(release)
    mvn, _ = _tool("mvn"), _tool("java")
    patch_jar = own = None
    if fix is not None:
        from realkafka.patches import SOURCES, patched_jar
        if fix not in SOURCES:
            raise ValueError(f"no patch of Kafka's code for the fix {fix!r} (patched: {', '.join(SOURCES)})")
        patch_jar, own = patched_jar(fix, release, log=log), SOURCES[fix].class_name
    build = build_dir(release, fix)
    build.mkdir(parents=True, exist_ok=True)
    for stale in ("surefire-reports", "classes", "class-load.log"):
        target = build / stale
        shutil.rmtree(target, ignore_errors=True) if target.is_dir() else target.unlink(missing_ok=True)
    if log:
        log(f"Maven runs {test} on Kafka {release}" + (f" with {patch_jar.name} ahead" if patch_jar else "")
            + f" (build directory {build})")
    start = time.monotonic()
    p = processes.run(maven_command(mvn, finding, release, build, patch_jar), cwd=build)
    seconds = time.monotonic() - start
    report = build / "surefire-reports" / f"TEST-{test}.xml"
    if not report.is_file():
        raise HarnessError(f"Maven did not run {test} on Kafka {release}: {maven_error(p.stdout + p.stderr)}")
    tests, failures, errors, message = read_report(report)
    if errors or not tests:
        raise HarnessError(f"{test} could not run on Kafka {release}: "
                           + (message if errors else "Surefire ran no test"))
    detail = message
    if patch_jar is not None:
        from realkafka.patches import jar_classes
        from realkafka.patches.loaded import _loaded as loaded_from     # the class-loading log's parser
        patched = jar_classes(patch_jar)
        class_log = build / "class-load.log"
        loaded = loaded_from(class_log) if class_log.is_file() else {}
        problems = patch_problems(loaded, patched, own, build / "classes")
        if problems:
            raise HarnessError(f"{test} on Kafka {release} did not run the patch of {fix}: {'; '.join(problems[:3])}")
        if not failures:
            used = sum(1 for name in patched if name in loaded)
            detail = (f"; {used} of the patch jar's {len(patched)} classes loaded from it, {own} among them"
                      if len(patched) > 1 else f"; the patch jar's one class, {own}, loaded from it")
    return KafkaTestResult(finding, release, fix, test, not failures, detail, seconds)
