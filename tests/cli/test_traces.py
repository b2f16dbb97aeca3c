"""Trace outputs (issue #17): --save-scenario on explore, --itf, --dot, --html (its content; the browser test is
tests/cli/test_browser.py) and `jbodcheck view`."""
from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from model.spec.engine import Checker
from explorer.reports.html import page, references
from explorer.reports.itf import decode, itf_steps
from explorer.reports.render import state_dict
from explorer.scenario import parse_step
from explorer.catalog import preset_config

from support.cli import assert_bad_input, cli
from explorer.catalog import build_model

LEGACY = ("explore", "--preset", "small", "--variant", "kip112-no-isnew-check", "-q")
INVARIANT = "no_recreate_with_bad_dir"


def _legacy_run(tmp_path, *extra):
    p = cli(*LEGACY, *extra)
    assert p.returncode == 1, (p.stdout, p.stderr)
    return p


# ---- --save-scenario -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("engine", ["bfs", "dfs"])
@pytest.mark.long_run(ids=["dfs"])
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
    model = build_model(preset_config(params.pop("preset"), **params))
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
    model = build_model(preset_config("tiny"))
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
def test_html_write_failure_is_exit_3_after_the_summary(capsys, monkeypatch):
    """A device that fills up during the run: the summary is out, the failed write is exit 3 (one line)."""
    from support.helpers import device_fills_after_the_check, in_process

    device_fills_after_the_check(monkeypatch)
    code, out, err = in_process(capsys, *LEGACY, "--html", "/dev/full")
    assert code == 3, err
    assert "VIOLATION" in out
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "/dev/full" in lines[0] and "No space left" in lines[0] and "Traceback" not in err


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_device_that_refuses_writes_is_refused_before_the_run():
    p = cli(*LEGACY, "--html", "/dev/full")
    assert_bad_input(p, "the HTML page", "/dev/full", "No space left")
    assert p.stdout == "" and len(p.stderr.strip().splitlines()) == 1


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
    from support.helpers import REPO

    cli_md = (REPO / "docs" / "cli.md").read_text()
    for needle in ("`--html PATH`", "`--itf PATH`", "`--save-scenario PATH`", "`--dot PATH`",
                   "jbodcheck view REPORT.json --html PATH", "## Trace outputs", "live display"):
        assert needle in cli_md, needle
    readme = (REPO / "README.md").read_text()
    assert "## Looking at a trace" in readme and "](docs/img/legacy-trace.png)" in readme
    assert (REPO / "docs" / "img" / "legacy-trace.png").read_bytes()[:4] == b"\x89PNG"


def test_replay_html_without_a_violation_shows_the_replayed_steps(tmp_path):
    from support.helpers import SCENARIOS

    scenario = SCENARIOS / "kip928-disk-fills-on-the-leader.json"
    steps = json.loads(scenario.read_text())["steps"]
    path = tmp_path / "r.html"
    p = cli("replay", scenario, "--html", path)
    assert p.returncode == 0, p.stderr
    text = path.read_text()
    assert text.count('<article class="step') == len(steps) + 1
    assert "Replay of" in text and 'class="dir saturated"' in text and "Violation of" not in text


# ---- every counterexample, lassos (issue #29) -------------------------------------------------------------------

ALL_LEGACY = ("explore", "--preset", "tiny", "--variant", "legacy", "--all-violations", "--workers", "1", "-q")
# docs/model.md 11.2, L3: with no records a reassignment cannot complete; the lasso stutters at step 14.
LIVENESS = ("explore", "--brokers", "3", "--dirs", "2", "--partitions", "1", "--rf", "2", "--reassignment",
            "--max-records", "0", "--max-faults", "1", "--liveness", "-q")


def test_numbered_paths_keep_the_extension():
    from explorer.outputs import numbered_path

    assert [numbered_path("out/t.itf.json", n) for n in (1, 2, 3)] == \
        ["out/t.itf.json", "out/t-2.itf.json", "out/t-3.itf.json"]
    assert numbered_path("s.json", 2) == "s-2.json" and numbered_path("trace", 2) == "trace-2"
    assert numbered_path(".hidden", 2) == ".hidden-2"
    assert numbered_path("/dev/null", 2) == "/dev/null"        # a device takes them all


@pytest.mark.long_run
def test_all_violations_writes_every_counterexample(tmp_path):
    itf, scenario, page_path, report = (tmp_path / n for n in ("t.itf.json", "s.json", "p.html", "r.json"))
    p = cli(*ALL_LEGACY, "--itf", itf, "--save-scenario", scenario, "--html", page_path, "--json", report)
    assert p.returncode == 1, p.stderr
    violations = json.loads(report.read_text())["violations"]
    assert len(violations) >= 2
    itfs = [itf] + [tmp_path / f"t-{n}.itf.json" for n in range(2, len(violations) + 1)]
    scenarios = [scenario] + [tmp_path / f"s-{n}.json" for n in range(2, len(violations) + 1)]
    assert not (tmp_path / f"t-{len(violations) + 1}.itf.json").exists()
    for v, itf_path, scenario_path in zip(violations, itfs, scenarios):
        trace = json.loads(itf_path.read_text())
        assert trace["#meta"]["invariant"] == v["invariant"] and "loop" not in trace
        assert len(trace["states"]) == len(v["trace"])
        data = json.loads(scenario_path.read_text())
        assert v["invariant"] in data["description"] and len(data["steps"]) == len(v["trace"]) - 1
        replayed = cli("replay", scenario_path, "--json", "-")
        assert replayed.returncode == 1, replayed.stderr
        assert replayed.stdout and json.loads(replayed.stdout)["violations"][-1]["invariant"] == v["invariant"]
    # One line per option names the files.
    assert f"{len(violations)} counterexamples (--itf): {itf}, {itfs[1]}" in p.stderr
    assert f"{len(violations)} counterexamples (--save-scenario): {scenario}, {scenarios[1]}" in p.stderr
    text = page_path.read_text()
    assert text.count('<section class="violation"') == len(violations)
    assert all(f"Violation of <code>{v['invariant']}</code>" in text for v in violations)


PLUGIN_DIR_FAILS = """
from model.spec.invariant import liveness
from model.storage.state import OFFLINE


@liveness("plugin_a_dir_fails", kind="eventually", statement="Eventually some log dir of some broker fails.",
          reference="a test property that must fail: DirFail is not fair")
def a_dir_fails(model, state):
    return any(d == OFFLINE for broker in state.brokers for d in broker.dirs)
"""


def test_liveness_writes_every_trace_output(tmp_path):
    plugin = tmp_path / "dir_fails.py"
    plugin.write_text(PLUGIN_DIR_FAILS)
    paths = {n: tmp_path / f for n, f in (("html", "l.html"), ("itf", "l.itf.json"), ("scenario", "s.json"),
                                          ("lasso", "l.json"), ("json", "r.json"))}
    p = cli("explore", "--preset", "tiny", "--max-records", "0", "--plugin", plugin, "--invariant",
            "plugin_a_dir_fails", "-q", "--html", paths["html"], "--itf", paths["itf"],
            "--save-scenario", paths["scenario"], "--save-lasso", paths["lasso"], "--json", paths["json"])
    assert p.returncode == 1, p.stderr
    (v,) = json.loads(paths["json"].read_text())["violations"]
    trace = json.loads(paths["itf"].read_text())
    # ITF's lasso: "loop" is the state the loop starts at; it ends in the last state.
    assert trace["loop"] == trace["#meta"]["loop_start"] == v["loop_start"]
    assert len(trace["states"]) == len(v["trace"])
    assert trace["#meta"]["invariant"] == "plugin_a_dir_fails"
    assert "liveness property" in trace["#meta"]["description"]
    assert paths["scenario"].read_text() == paths["lasso"].read_text()
    assert json.loads(paths["lasso"].read_text())["loop_start"] == v["loop_start"]
    text = paths["html"].read_text()
    assert "Violation of <code>plugin_a_dir_fails</code> (eventually property: a lasso)" in text
    assert "violated by this behaviour" in text


def test_an_inconclusive_lasso_is_saved_by_save_lasso_only(tmp_path):
    """With --max-records 0 the reassignment lasso needs a fetch the configuration leaves out: not a violation
    (exit 0), so --itf and --save-scenario write nothing, while --save-lasso keeps it to replay."""
    paths = {n: tmp_path / f for n, f in (("itf", "l.itf.json"), ("scenario", "s.json"), ("lasso", "l.json"),
                                          ("json", "r.json"))}
    p = cli(*LIVENESS, "--itf", paths["itf"], "--save-scenario", paths["scenario"], "--save-lasso",
            paths["lasso"], "--json", paths["json"])
    assert p.returncode == 0, p.stderr
    report = json.loads(paths["json"].read_text())
    assert report["result"] == "bounded" and not report["violations"]
    (v,) = report["inconclusive"]
    assert json.loads(paths["lasso"].read_text())["loop_start"] == v["loop_start"] == 14
    assert not paths["itf"].exists() and not paths["scenario"].exists()
    r = cli("replay", paths["lasso"])
    assert r.returncode == 0 and "Result: ok." in r.stdout, r.stdout[-500:]


def test_every_lasso_is_written_with_its_cycle(tmp_path):
    """Several lassos (one per failing property) go to PATH, PATH-2, ...; a cycle (loop_start before the last
    step) is ITF's loop and is marked on the page."""
    import attrs

    from explorer.reports.artifacts import TraceOutputs
    from explorer.reports.itf import itf_trace
    from explorer.liveness import check_liveness, liveness_properties
    from explorer.reports.report import report_dict
    from model import ModelConfig

    cfg = ModelConfig(brokers=3, dirs=2, partitions=1, rf=2, reassignment=True, max_records=0, max_faults=1)
    model = build_model(cfg, invariants=["reassignment_completes"])
    result = check_liveness(model, liveness_properties(model, ("reassignment_completes",)))
    (lasso,) = result.inconclusive                  # (with no record, it needs a fetch: only a sample here)
    cycle = attrs.evolve(lasso, loop_start=10)       # as if steps 11 to 14 repeated
    result.violations = [lasso, cycle]
    outputs = TraceOutputs(html=str(tmp_path / "p.html"), itf=str(tmp_path / "t.itf.json"),
                           lasso=str(tmp_path / "l.json"))
    outputs.write(model, result, report_dict(model, result))
    assert json.loads((tmp_path / "l.json").read_text())["loop_start"] == 14
    assert json.loads((tmp_path / "l-2.json").read_text())["loop_start"] == 10
    assert json.loads((tmp_path / "t-2.itf.json").read_text())["loop"] == 10 == itf_trace(model, cycle)["loop"]
    text = (tmp_path / "p.html").read_text()
    assert "the cycle starts here: steps 11 to 14 repeat forever" in text
    assert "the cycle closes here: back in the state of step 10" in text
