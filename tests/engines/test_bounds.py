"""Every verdict names its bounds (explorer/reports/bounds.py): the line under `Result:` and the report's `bounds`, for
every engine, derived from the model's features rather than listed per preset."""
from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from explorer.reports.bounds import model_bounds, model_bounds_text
from support.helpers import REPO
from model import BOUNDS, ModelConfig
from explorer.catalog import preset_config
from explorer.catalog import build_model


def test_the_model_bounds_are_the_shape_and_every_included_features_max_fields():
    bounds = model_bounds(build_model(preset_config("tiny")))
    assert list(bounds)[:4] == ["brokers", "dirs", "partitions", "rf"]
    assert set(BOUNDS) - {"max_saturations"} | {"max_records"} <= set(bounds)
    # tiny's preset sets max_saturations=1, but without the saturation feature no dir saturates: not a bound
    assert "dir_capacity" not in bounds and "max_created_resets" not in bounds and "max_saturations" not in bounds
    saturation = model_bounds(build_model(preset_config("tiny", saturation=True, dir_capacity=3)))
    assert saturation["dir_capacity"] == 3 and saturation["max_saturations"] == 1
    assert "saturations=1, crashes=1" in model_bounds_text(saturation)
    draft = model_bounds(build_model(preset_config("tiny", variant="kip112-draft")))
    assert draft["max_created_resets"] == 1


def test_disk_repairs_print_as_repairs_and_the_report_keeps_the_field_s_name_too():
    """max_fixes bounds disk repairs (ReplaceDisk, RemoveDirFromConfig), not `--fix`'s candidate fixes."""
    bounds = model_bounds(build_model(preset_config("tiny", max_fixes=2)))
    assert bounds["max_fixes"] == bounds["max_repairs"] == 2
    text = model_bounds_text(bounds)
    assert "restarts=1, repairs=2, failovers=1" in text and "fixes=" not in text


def test_per_partition_records_show_one_number_each():
    model = build_model(ModelConfig(brokers=2, dirs=2, partitions=2, rf=2, max_records=[1, 0]))
    bounds = model_bounds(model)
    assert bounds["max_records"] == [1, 0]
    assert "records=1,0" in model_bounds_text(bounds)
    assert model_bounds_text(bounds).startswith("2 brokers x 2 dirs, 2 partition(s), RF 2; dir_failures=1")


RESULT = re.compile(r"^Result: (\w+)\. [\d,]+ distinct states, [\d,]+ generated, depth \d+.*\n(.*)$", re.M)
TINY_BOUNDS = ("2 brokers x 2 dirs, 1 partition(s), RF 2; dir_failures=1, crashes=1, restarts=1, repairs=1, "
               "failovers=1, faults=2, records=1")


def _run(tmp_path, *args):
    report = tmp_path / "report.json"
    p = subprocess.run([sys.executable, "-m", "explorer", *args, "--json", str(report)], capture_output=True,
                       text=True, cwd=REPO, timeout=600)
    found = RESULT.search(p.stdout)
    assert found, p.stdout[-800:] + p.stderr[-500:]
    return p, found.group(1), found.group(2), json.loads(report.read_text())


@pytest.mark.parametrize("args, result, line", [
    pytest.param(["explore", "--preset", "tiny", "--workers", "1", "-q"], "ok",
                 f"No violation within: {TINY_BOUNDS}; every reachable state (up to dir symmetry).",
                 marks=pytest.mark.slow),
    (["explore", "--preset", "tiny", "--engine", "dfs", "--max-states", "100", "-q"], "bounded",
     f"No violation found within: {TINY_BOUNDS}; the search stopped at --max-states 100, not exhaustive."),
    (["explore", "--preset", "tiny", "--workers", "1", "--max-depth", "5", "-q"], "bounded",
     f"No violation found within: {TINY_BOUNDS}; the search stopped at --max-depth 5, not exhaustive."),
    (["explore", "--preset", "tiny", "--engine", "random", "--walks", "3", "--seed", "7", "-q"], "bounded",
     f"No violation found within: {TINY_BOUNDS}; 3 random walk(s) of up to 60 steps, seed 7, not exhaustive."),
    (["explore", "--preset", "small", "--variant", "legacy", "--workers", "1", "-q"], "violation",
     "Found within: 3 brokers x 2 dirs, 1 partition(s), RF 3; dir_failures=1, crashes=1, restarts=1, repairs=1, "
     "failovers=1, faults=2, records=1; a shortest trace (BFS)."),
    (["fuzz", "--preset", "tiny", "--examples", "3", "--steps", "10", "-q"], "bounded",
     f"No violation found within: {TINY_BOUNDS}; 3 Hypothesis example(s) of up to 10 steps, seed 0, not "
     f"exhaustive."),
    (["replay", "scenarios/kip112-2-leader-dir-failure-at-runtime.json"], "ok", None),
], ids=["bfs", "dfs-bounded", "bfs-depth", "random", "violation", "fuzz", "replay"])
def test_every_engine_says_what_its_verdict_covers(tmp_path, args, result, line):
    p, got, next_line, report = _run(tmp_path, *args)
    assert got == result
    if line is not None:
        assert next_line == line
    else:
        assert next_line.startswith("No violation within: ") and "one scenario of" in next_line
    bounds = report["bounds"]
    assert bounds["text"] in next_line and bounds["model"]["brokers"] == report["model"]["brokers"]
    assert bounds["search"]["exhaustive"] is (result == "ok" and args[0] == "explore")
    for name in set(BOUNDS) - {"max_saturations"}:
        assert bounds["model"][name] == report["model"][name]
    assert bounds["model"]["max_repairs"] == report["model"]["max_fixes"]
