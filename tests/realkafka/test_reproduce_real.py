"""The reproductions on real Kafka clusters (docs/reproduce.md, "Results"): `jbodcheck reproduce` on a real KRaft
cluster, checking the outcome the docs record (the exit code and the violations the real cluster showed).

- In the default suite, when Java, javac and Maven are there (else skipped with a one-line reason): finding 1's
  7-step trace on ``JBODCHECK_KAFKA_RELEASE`` (default 3.9.2, the harness's own test release: its jars are fetched
  once, then cached), about a minute and a half.
- Opt-in (marker ``realkafka``): every reproduction of the results table whose release ``JBODCHECK_KAFKA_RELEASES``
  lists (comma-separated, or ``all``); skipped when the variable is unset.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from support.helpers import REPO, SCENARIOS

RELEASE = os.environ.get("JBODCHECK_KAFKA_RELEASE", "3.9.2")
RELEASES = [v.strip() for v in os.environ.get("JBODCHECK_KAFKA_RELEASES", "").split(",") if v.strip()]
MISSING = [tool for tool in ("java", "javac", "mvn") if shutil.which(tool) is None]
needs_kafka = pytest.mark.skipif(bool(MISSING), reason=f"the real-cluster harness needs {', '.join(MISSING)}")

F1 = "kraft-finding-1-replica-recreated-over-failed-dir.json"
F1_RECORD = "kraft-finding-1-acked-record-lost.json"
F1_RF1 = "kraft-finding-1-rf1-acked-record-lost.json"
RECREATED, LOST = "replica_recreated_over_failed_dir", "acked_record_gone"

# (scenario, release, --elr, the exit code the docs record, the violations the real cluster showed)
CASES = [
    (F1, "3.9.2", "default", 0, {RECREATED}),
    (F1, "4.0.2", "default", 0, {RECREATED}),
    (F1, "4.4.0", "default", 0, {RECREATED}),
    (F1, "4.4.0", "off", 0, {RECREATED}),
    (F1_RECORD, "3.9.2", "default", 0, {RECREATED, LOST}),
    (F1_RECORD, "4.0.2", "default", 0, {RECREATED, LOST}),
    (F1_RECORD, "4.4.0", "default", 1, {RECREATED, LOST}),     # differs: the model has no ELR (docs/reproduce.md)
    (F1_RECORD, "4.4.0", "off", 0, {RECREATED, LOST}),
    (F1_RF1, "3.9.2", "default", 0, {RECREATED, LOST}),
]


def run_reproduce(tmp_path, scenario: str, release: str, elr: str = "default") -> tuple[int, dict, str]:
    report = tmp_path / "report.json"
    p = subprocess.run([sys.executable, "-m", "explorer", "reproduce", str(SCENARIOS / scenario), "--kafka", release,
                        "--elr", elr, "--json", str(report)], cwd=REPO, capture_output=True, text=True,
                       timeout=3600)
    data = json.loads(report.read_text()) if report.exists() else {}
    return p.returncode, data, (p.stdout[-8000:] + p.stderr[-2000:])


def real_violations(report: dict) -> set:
    return set(report.get("violation", {}).get("real", {}))


@needs_kafka
@pytest.mark.long_run
def test_finding_1_reproduces_on_a_real_cluster(tmp_path):
    """Finding 1's 7-step trace: the real cluster matches the model at every step and re-creates the replica empty
    on dir 1 while its copy sits on failed dir 0 (exit 0)."""
    code, report, out = run_reproduce(tmp_path, F1, RELEASE)
    assert code == 0, out
    assert report["result"] == "matched" and real_violations(report) == {RECREATED}, out
    assert "real cluster:  the same" in out and "The scenario's violation happened on the real cluster" in out


@pytest.mark.realkafka
@pytest.mark.parametrize("scenario, release, elr, code, shown", CASES,
                         ids=[f"{c[0].removeprefix('kraft-').removesuffix('.json')}-{c[1]}-elr-{c[2]}" for c in CASES])
def test_each_recorded_reproduction(tmp_path, scenario, release, elr, code, shown):
    if not RELEASES:
        pytest.skip("opt-in: set JBODCHECK_KAFKA_RELEASES (e.g. 3.9.2,4.0.2,4.4.0, or all) to run the reproductions")
    if release not in RELEASES and RELEASES != ["all"]:
        pytest.skip(f"release {release} is not in JBODCHECK_KAFKA_RELEASES")
    if MISSING:
        pytest.skip(f"the real-cluster harness needs {', '.join(MISSING)}")
    got, report, out = run_reproduce(tmp_path, scenario, release, elr)
    assert got == code, out
    assert real_violations(report) == shown, out


@needs_kafka
@pytest.mark.long_run
def test_a_broker_killed_from_outside_mid_run_is_a_harness_failure_exit_3(tmp_path):
    """A node the harness did not end (here: SIGKILL from outside, as the OOM killer would) is exit 3 naming the
    node, never 'Kafka differs from the model'; the cluster's directory and every JVM go with the run."""
    import signal
    import time

    report = tmp_path / "report.json"
    p = subprocess.Popen([sys.executable, "-m", "explorer", "reproduce", str(SCENARIOS / F1), "--kafka", RELEASE,
                          "--json", str(report)], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        root = None
        for line in p.stderr:                      # the harness names the cluster's directory when it starts it
            if "starting (Kafka" in line:
                root = line.rsplit(", ", 1)[1].rstrip(")\n")
                break
        assert root, "the cluster never started"
        deadline = time.monotonic() + 120
        for line in p.stdout:                      # once the topic exists, broker 1 dies by a signal not ours
            if line.startswith("step 2/"):
                break
            assert time.monotonic() < deadline
        victim = subprocess.run(["pgrep", "-f", f"{root}/broker-1/"], capture_output=True, text=True).stdout.split()
        assert victim, "broker 1's JVM not found"
        os.kill(int(victim[0]), signal.SIGKILL)
        err = p.communicate(timeout=300)[1]
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 3, err[-2000:]
    last = err.strip().splitlines()[-1]
    assert "broker 1 was ended by signal SIGKILL, not by jbodcheck" in last
    assert not os.path.exists(root)
    assert not subprocess.run(["pgrep", "-f", root], capture_output=True).stdout
