"""Trace outputs (issue #17): --save-scenario on explore, --itf, --dot, --html (its content; the browser test is
tests/test_browser.py) and `jbodcheck view`."""
from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from explorer.core import Checker
from explorer.html import page, references
from explorer.itf import decode, itf_steps
from explorer.render import state_dict
from explorer.scenario import parse_step
from model import Model
from model.presets import preset_config

from test_cli import assert_bad_input, cli

LEGACY = ("explore", "--preset", "small", "--variant", "kip112-no-isnew-check", "-q")
INVARIANT = "no_recreate_with_bad_dir"


def _legacy_run(tmp_path, *extra):
    p = cli(*LEGACY, *extra)
    assert p.returncode == 1, (p.stdout, p.stderr)
    return p


# ---- --save-scenario -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("engine", ["bfs", "dfs"])
def test_explore_save_scenario_replays_to_the_same_violation(tmp_path, engine):
    path = tmp_path / "s.json"
    _legacy_run(tmp_path, "--engine", engine, "--workers", "1", "--save-scenario", path)
    scenario = json.loads(path.read_text())
    assert scenario["model"]["preset"] == "small" and scenario["model"]["variant"] == "kip112-no-isnew-check"
    assert scenario["steps"][0] == "CreateTopic(partition=0)"
    assert all("UpdateMetadata at" not in s for s in scenario["steps"])
    assert INVARIANT in scenario["description"]
    replayed = cli("replay", path, "--json", "-")
    assert replayed.returncode == 1, replayed.stderr
    report = json.loads(replayed.stdout)
    assert [v["invariant"] for v in report["violations"]] == [INVARIANT]
    assert len(report["violations"][0]["trace"]) == len(scenario["steps"]) + 1


def test_save_scenario_without_a_violation_writes_nothing(tmp_path):
    path = tmp_path / "s.json"
    p = cli("explore", "--preset", "tiny", "-q", "--max-states", "50", "--save-scenario", path)
    assert p.returncode == 0
    assert not path.exists()
    assert "no counterexample" in p.stderr and "not written" in p.stderr


# ---- --itf -----------------------------------------------------------------------------------------------------

def _bigints_only(value) -> bool:
    """No bare JSON number anywhere: every integer is {"#bigint": "..."}."""
    if isinstance(value, bool) or isinstance(value, str):
        return True
    if isinstance(value, (int, float)):
        return False
    if isinstance(value, list):
        return all(_bigints_only(v) for v in value)
    if isinstance(value, dict):
        if set(value) == {"#bigint"}:
            return isinstance(value["#bigint"], str) and value["#bigint"].lstrip("-").isdigit()
        return all(_bigints_only(v) for k, v in value.items() if k != "#meta")
    return False


def test_itf_trace_reads_back_and_replays_to_the_same_violation(tmp_path):
    path = tmp_path / "legacy.itf.json"
    _legacy_run(tmp_path, "--itf", path)
    trace = json.loads(path.read_text())
    assert trace["#meta"]["format"] == "ITF" and trace["#meta"]["invariant"] == INVARIANT
    assert trace["vars"][-1] == "action" and {"brokers", "controller"} <= set(trace["vars"])
    assert [s["#meta"]["index"] for s in trace["states"]] == list(range(len(trace["states"])))
    assert all(set(s) - {"#meta"} == set(trace["vars"]) for s in trace["states"])
    assert all(_bigints_only(s) for s in trace["states"])
    assert trace["states"][0]["action"] == "init"

    # Rebuild the model from the trace's metadata and replay the `action` labels through Model.step.
    params = dict(trace["#meta"]["model"])
    model = Model(preset_config(params.pop("preset"), **params))
    checker = Checker(model, list(model.invariants))
    state = model.init_states()[0]
    assert decode({k: v for k, v in trace["states"][0].items() if k not in ("#meta", "action")}) == \
        json.loads(json.dumps(state_dict(model, state)))
    found = []
    for number, (itf_state, text) in enumerate(zip(trace["states"][1:], itf_steps(trace)), start=1):
        name, args = parse_step(model, text, number)
        action, after = model.step(state, name, args)
        found = checker.check_transition(state, action, after) + checker.check_state(after)
        expected = json.loads(json.dumps(state_dict(model, after)))
        assert decode({k: v for k, v in itf_state.items() if k not in ("#meta", "action")}) == expected, number
        assert itf_state["#meta"]["label"] == model.label(action)
        if number < len(trace["states"]) - 1:
            assert not found, (number, found)
        state = after
    assert [(inv.id, msg) for inv, msg in found] == [(INVARIANT, trace["#meta"]["message"])]


# ---- --dot -----------------------------------------------------------------------------------------------------

def test_dot_needs_a_small_max_states(tmp_path):
    assert_bad_input(cli(*LEGACY, "--dot", tmp_path / "g.dot"), "--dot", "--max-states", "no bound")
    assert_bad_input(cli(*LEGACY, "--max-states", "5000", "--dot", tmp_path / "g.dot"), "--dot", "5,000")
    assert not (tmp_path / "g.dot").exists()


def test_dot_graph_highlights_the_counterexample_and_graphviz_accepts_it(tmp_path):
    path = tmp_path / "g.dot"
    _legacy_run(tmp_path, "--max-states", "300", "--dot", path)
    text = path.read_text()
    assert text.startswith("digraph jbodcheck {") and text.rstrip().endswith("}")
    assert INVARIANT in text
    for i, step in enumerate(["CreateTopic(partition=0)", "DirFail(broker=0, dir=0)", "ControllerFailover()",
                              "BrokerLeaderAndIsr(broker=0)"], start=1):
        assert f'label="{i}: {step}"' in text
    assert text.count("->") > 4
    dot = shutil.which("dot")
    if dot is None:
        pytest.skip("graphviz's dot is not installed: the DOT text was checked, not drawn")
    svg = subprocess.run([dot, "-Tsvg", str(path)], capture_output=True, text=True, timeout=120)
    assert svg.returncode == 0, svg.stderr
    assert "<svg" in svg.stdout and "CreateTopic" in svg.stdout


# ---- --html and view -------------------------------------------------------------------------------------------

def test_html_page_and_view_render_the_same_page(tmp_path):
    report, html_path, view_path = tmp_path / "r.json", tmp_path / "run.html", tmp_path / "view.html"
    _legacy_run(tmp_path, "--json", report, "--html", html_path)
    text = html_path.read_text()
    assert text.startswith("<!DOCTYPE html>")
    for needle in (INVARIANT, "DirFail(broker=0, dir=0)", "ControllerFailover()", "KIP-112 scenario",
                   "Coverage", 'class="dir offline"', "LeaderAndIsr(p0: leader=0 epoch=0 isr=[0,1,2] isNew=false)"):
        assert needle in text, needle
    assert text.count('<article class="step') == 5
    # Self-contained: nothing is fetched.
    assert "http://" not in text and "https://" not in text and " src=" not in text
    p = cli("view", report, "--html", view_path)
    assert p.returncode == 0, p.stderr
    assert view_path.read_text() == text


def test_html_escapes_every_text(tmp_path):
    model = Model(preset_config("tiny"))
    state = state_dict(model, model.init_states()[0])
    state["brokers"][0]["inbox"] = ['<img src=x onerror="alert(1)">']
    state["extensions"] = {"<b>field</b>": "</script><script>alert(2)</script>"}
    report = {"tool": "jbodcheck", "version": "x", "model": {"preset": "<i>p</i>"}, "result": "violation",
              "coverage": {"<u>Rule</u>": 1}, "violations": [{
                  "invariant": "<script>alert(3)</script>", "kind": "state", "message": "a & b < c",
                  "trace": [{"step": 0, "action": None, "state": state},
                            {"step": 1, "action": "Evil(<svg onload=alert(4)>)", "state": state}]}]}
    text = page(report, references(model))
    for raw in ('<img src=x', "<script>alert", "<svg onload", "<b>field", "<u>Rule", "<i>p</i>"):
        assert raw not in text, raw
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in text
    assert "a &amp; b &lt; c" in text
    assert text.count("<script>") == 1          # the page's own


def test_html_without_a_violation_and_bad_paths(tmp_path):
    path = tmp_path / "ok.html"
    p = cli("explore", "--preset", "tiny", "-q", "--max-states", "50", "--html", path)
    assert p.returncode == 0, p.stderr
    assert "No violation" in path.read_text()
    assert_bad_input(cli(*LEGACY, "--html", tmp_path / "missing" / "x.html"), "HTML page", "no such directory")
    assert_bad_input(cli(*LEGACY, "--itf", tmp_path), "ITF trace", "directory")
    assert_bad_input(cli("view", tmp_path / "nothing.json", "--html", path), "cannot read report")
    (tmp_path / "scenario.json").write_text('{"steps": []}')
    assert_bad_input(cli("view", tmp_path / "scenario.json", "--html", path), "not a jbodcheck JSON report")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_html_write_failure_is_exit_3_after_the_summary(tmp_path):
    p = cli(*LEGACY, "--html", "/dev/full")
    assert p.returncode == 3, p.stderr
    assert "VIOLATION" in p.stdout
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "/dev/full" in lines[0] and "Traceback" not in p.stderr


def test_replay_and_fuzz_take_html_and_itf(tmp_path):
    scenario = tmp_path / "s.json"
    _legacy_run(tmp_path, "--save-scenario", scenario)
    p = cli("replay", scenario, "--html", tmp_path / "r.html", "--itf", tmp_path / "r.itf.json")
    assert p.returncode == 1, p.stderr
    assert INVARIANT in (tmp_path / "r.html").read_text()
    assert json.loads((tmp_path / "r.itf.json").read_text())["#meta"]["invariant"] == INVARIANT
    p = cli("fuzz", "--preset", "small", "--variant", "legacy", "--examples", "50", "--seed", "1", "-q",
            "--html", tmp_path / "f.html", "--itf", tmp_path / "f.itf.json")
    assert p.returncode in (0, 1), p.stderr
    assert (tmp_path / "f.html").exists()
    assert (tmp_path / "f.itf.json").exists() == (p.returncode == 1)


def test_docs_document_each_trace_option():
    from helpers import REPO

    cli_md = (REPO / "docs" / "cli.md").read_text()
    for needle in ("`--html PATH`", "`--itf PATH`", "`--save-scenario PATH`", "`--dot PATH`",
                   "jbodcheck view REPORT.json --html PATH", "## Trace outputs", "live display"):
        assert needle in cli_md, needle
    readme = (REPO / "README.md").read_text()
    assert "## Looking at a trace" in readme and "](docs/img/legacy-trace.png)" in readme
    assert (REPO / "docs" / "img" / "legacy-trace.png").read_bytes()[:4] == b"\x89PNG"


def test_replay_html_without_a_violation_shows_the_replayed_steps(tmp_path):
    from helpers import SCENARIOS

    scenario = SCENARIOS / "kip928-disk-fills-on-the-leader.json"
    steps = json.loads(scenario.read_text())["steps"]
    path = tmp_path / "r.html"
    p = cli("replay", scenario, "--html", path)
    assert p.returncode == 0, p.stderr
    text = path.read_text()
    assert text.count('<article class="step') == len(steps) + 1
    assert "Replay of" in text and 'class="dir saturated"' in text and "Violation of" not in text
