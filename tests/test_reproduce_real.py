"""The reproductions on real Kafka clusters (docs/reproduce.md, "Results"): each runs `jbodcheck reproduce` on a real
KRaft cluster and checks the outcome the docs record. Opt-in (marker ``realkafka``): they run only when
``JBODCHECK_KAFKA_RELEASES`` names the releases to run (comma-separated, e.g. ``3.9.2,4.0.2,4.4.0``; ``all``: every
release of the table), each with the case's release among them; without a JVM or the harness they skip with one
line. `short` below runs in the default suite when a JVM and the release's jars are there (tests/test_reproduce.py
has the runs without a cluster)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from helpers import REPO, SCENARIOS

RELEASES_ENV = "JBODCHECK_KAFKA_RELEASES"

# (scenario, release, elr, the exit code the docs record, the violations the real cluster showed)
CASES = [
    ("kraft-finding-1-replica-recreated-over-failed-dir.json", "3.9.2", "default", 0,
     {"replica_recreated_over_failed_dir"}),
]


def _why_not(release: str) -> str | None:
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        return "no JVM (Java 17+) on this machine"
    try:
        import realkafka.cluster  # noqa: F401
    except ImportError as e:
        return f"the real-cluster harness is not available: {e}"
    return None


def _selected(release: str) -> bool:
    wanted = os.environ.get(RELEASES_ENV, "")
    return wanted == "all" or release in [r.strip() for r in wanted.split(",") if r.strip()]


def run_reproduce(tmp_path, scenario: str, release: str, elr: str) -> tuple[int, dict, str]:
    report = tmp_path / "report.json"
    p = subprocess.run([sys.executable, "-m", "explorer", "reproduce", str(SCENARIOS / scenario), "--kafka", release,
                        "--elr", elr, "--json", str(report)], cwd=REPO, capture_output=True, text=True,
                       timeout=3 * 3600)
    data = json.loads(report.read_text()) if report.exists() else {}
    return p.returncode, data, p.stdout[-6000:] + p.stderr[-2000:]


@pytest.mark.realkafka
@pytest.mark.parametrize("scenario, release, elr, code, shown", CASES,
                         ids=[f"{c[0].removeprefix('kraft-').removesuffix('.json')}-{c[1]}-elr-{c[2]}" for c in CASES])
def test_reproduction_on_a_real_cluster(tmp_path, scenario, release, elr, code, shown):
    if not _selected(release):
        pytest.skip(f"real-cluster reproduction: set {RELEASES_ENV} to run it (release {release})")
    why = _why_not(release)
    if why:
        pytest.skip(why)
    got, report, out = run_reproduce(tmp_path, scenario, release, elr)
    assert got == code, out
    assert set(report["verdict"] and report["steps"][-1]["checks"]["real"]) | {
        c for s in report["steps"] for c in s["checks"]["real"]} == shown, out
