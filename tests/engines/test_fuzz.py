"""`jbodcheck fuzz`: the acceptance runs of docs/extending.md, the JSON report, scenario files, bad input."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from explorer.fuzz import DEFAULT_EXAMPLES, DEFAULT_STEPS

from support.helpers import REPO

pytestmark = pytest.mark.stateful

BIG = ["--brokers", "5", "--dirs", "3", "--partitions", "6"]


def jbodcheck(*args, env=None):
    environment = {k: v for k, v in os.environ.items() if k != "JBODCHECK_PLUGINS"}
    environment.update(env or {})
    return subprocess.run([sys.executable, "-m", "explorer", *args], capture_output=True, text=True, cwd=REPO,
                          env=environment, timeout=600)


def test_legacy_is_caught_within_the_default_budget_and_replays(tmp_path):
    report_path, scenario_path = tmp_path / "report.json", tmp_path / "cx.json"
    run = jbodcheck("fuzz", "--variant", "legacy", *BIG, "-q", "--json", str(report_path),
                    "--save-scenario", str(scenario_path))
    assert run.returncode == 1, run.stderr
    assert "VIOLATION of no_recreate_with_bad_dir" in run.stdout
    report = json.loads(report_path.read_text())
    assert report["engine"] == "hypothesis" and report["result"] == "violation"
    assert report["model"]["variant"] == "legacy" and report["model"]["brokers"] == 5
    hypothesis = report["hypothesis"]
    assert (hypothesis["examples"], hypothesis["steps"], hypothesis["seed"]) == (DEFAULT_EXAMPLES, DEFAULT_STEPS, 0)
    assert hypothesis["examples_run"] >= 1
    (violation,) = report["violations"]
    assert violation["invariant"] == "no_recreate_with_bad_dir" and violation["kind"] == "transition"
    steps = violation["steps"]
    assert 1 <= len(steps) <= min(15, hypothesis["shrunk_steps"])
    trace = violation["trace"]
    assert len(trace) == len(steps) + 1 and trace[0]["action"] is None
    assert [t["action"].split(" + ")[0] for t in trace[1:]] == steps
    scenario = json.loads(scenario_path.read_text())
    assert scenario["steps"] == steps and scenario["model"]["variant"] == "legacy"
    replayed = jbodcheck("replay", str(scenario_path), "--json", "-")
    assert replayed.returncode == 1, replayed.stderr
    again = json.loads(replayed.stdout)
    assert "no_recreate_with_bad_dir" in [v["invariant"] for v in again["violations"]]
    assert again["violations"][0]["trace"][-1]["state"] == trace[-1]["state"]


@pytest.mark.long_run
def test_kip112_passes_within_the_default_budget():
    run = jbodcheck("fuzz", *BIG, "-q", "--json", "-")
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    report = json.loads(run.stdout)
    assert report["result"] == "bounded" and report["violations"] == []
    assert report["model"]["max_crashes"] == 2  # the loose bounds (explorer.fuzz.LOOSE_BOUNDS)
    assert report["states_generated"] > DEFAULT_EXAMPLES
    assert "not exhaustive" in run.stderr


def test_a_preset_keeps_its_bounds_unless_loose_bounds_is_asked_for():
    run = jbodcheck("fuzz", "--preset", "tiny", "--examples", "3", "--steps", "5", "--json", "-", "-q")
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["model"]["max_faults"] == 2
    run = jbodcheck("fuzz", "--preset", "tiny", "--loose-bounds", "--max-crashes", "1", "--examples", "3",
                    "--steps", "5", "--json", "-", "-q")
    model = json.loads(run.stdout)["model"]
    assert model["max_faults"] == 4 and model["max_crashes"] == 1


def test_invariant_selection_and_seed():
    run = jbodcheck("fuzz", "--preset", "small", "--variant", "legacy", "--invariant", "offline_gauges_match",
                    "--seed", "7", "--examples", "20", "--json", "-", "-q")
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["hypothesis"]["seed"] == 7


@pytest.mark.parametrize("args, words", [
    (["--rf", "9"], "--rf 9 is larger than --brokers"),
    (["--invariant", "nope"], "unknown invariant nope"),
    (["--variant", "nope"], "unknown variant"),
    (["--examples", "0"], "--examples"),
    (["--plugin", "no_such_plugin_module"], "cannot import plugin 'no_such_plugin_module'"),
])
def test_bad_input_is_one_line_and_exit_2(args, words):
    run = jbodcheck("fuzz", "--preset", "tiny", *args)
    assert run.returncode == 2
    assert words in run.stderr and len(run.stderr.strip().splitlines()) == 1, run.stderr


def test_help_states_the_defaults():
    run = jbodcheck("fuzz", "--help")
    text = " ".join(run.stdout.split())
    assert f"[default: {DEFAULT_EXAMPLES}]" in text and f"[default: {DEFAULT_STEPS}]" in text
