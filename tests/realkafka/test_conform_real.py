"""A short conformance campaign on real KRaft clusters (docs/conform.md): one model -> real trace and one real ->
model run of ``JBODCHECK_KAFKA_RELEASE`` (default 3.9.2), each judged by trace validation. It takes one to two
minutes, beyond the README's test budget: the thorough profile runs it (the long_run marker); its last result is
in docs/testing.md, "Long runs". Skipped with a one-line reason without java, javac or mvn."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from support.helpers import REPO

RELEASE = os.environ.get("JBODCHECK_KAFKA_RELEASE", "3.9.2")
MISSING = [tool for tool in ("java", "javac", "mvn") if shutil.which(tool) is None]


@pytest.mark.skipif(bool(MISSING), reason=f"the real-cluster harness needs {', '.join(MISSING)}")
@pytest.mark.long_run
def test_a_short_campaign_on_a_real_cluster_stays_a_behaviour_of_the_model(tmp_path):
    """Both directions run to an outcome the real cluster agreed with; the report counts the driven rules per
    release, names every non-default setting, and ends "conforms" with exit 0."""
    report = tmp_path / "campaign.json"
    p = subprocess.run([sys.executable, "-m", "explorer", "conform", "--preset", "kraft-tiny-faults", "--kafka",
                        RELEASE, "--traces", "2", "--length", "4", "--faults", "4", "--seed", "7",
                        "--out", str(tmp_path / "out"), "--json", str(report)],
                       cwd=REPO, capture_output=True, text=True, timeout=1800)
    out = p.stdout[-6000:] + p.stderr[-3000:]
    data = json.loads(report.read_text())
    assert [t["kind"] for t in data["traces"]] == ["model", "real"], out
    assert {t["outcome"] for t in data["traces"]} <= {"matched", "conforms"}, out
    assert p.returncode == 0 and data["result"] == "conforms" and data["exit_code"] == 0, out
    assert data["kafka"] == [RELEASE], out
    driven = {rule for rule, by in data["rules"].items() if by.get(RELEASE, {}).get("driven", 0)}
    assert {"CreateTopic", "Produce"} <= driven, data["rules"]
    counts = [by[RELEASE] for by in data["rules"].values() if RELEASE in by]
    assert all(c.get("driven_agreed", 0) == c.get("driven", 0) for c in counts), data["rules"]
    assert "log.dir.failure.timeout.ms" in data["settings"], data["settings"]
