"""The command line against ../shared/CONTRACT.md: exit codes, one-line errors, the JSON report and listings."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

import explorer
from model import ModelConfig
from explorer.catalog import PRESETS, preset_config

from support.cli import assert_bad_input, cli
from support.helpers import REPO, in_process, init, model_of, step
from explorer.catalog import build_model, builtin_invariants

REPORT_KEYS = {"schema", "tool", "version", "model", "engine", "result", "distinct_states", "states_generated",
               "depth", "elapsed_s", "coverage", "violations"}
VIOLATION_KEYS = {"invariant", "kind", "message", "trace"}
TRACE_KEYS = {"step", "action", "state"}


# ---- explore -----------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_explore_tiny_is_ok_and_every_rule_fires(tmp_path):
    p = cli("explore", "--preset", "tiny", "-q", "--json", tmp_path / "report.json")
    assert p.returncode == 0, p.stderr
    assert "Result: ok" in p.stdout
    # tiny leaves the feature rules out (saturation, deletion, reassignment); every other rule fires.
    assert "Every rule of this configuration fired." in p.stdout
    assert "Rules not in this configuration (no action in their domain): Write, DirSaturate" in p.stdout
    assert "never fired" not in p.stdout
    assert "VIOLATION" not in p.stdout
    assert p.stderr == ""  # -q: no progress lines
    _check_clean_tiny_report(json.loads((tmp_path / "report.json").read_text()))


def test_explore_small_legacy_exits_1_and_names_the_invariant():
    p = cli("explore", "--preset", "small", "--variant", "legacy", "-q")
    assert p.returncode == 1, p.stderr
    assert "no_recreate_with_bad_dir" in p.stdout
    assert "VIOLATION" in p.stdout and "Trace" in p.stdout


def _check_report(report, preset, variant, expect_violation):
    assert REPORT_KEYS <= set(report), REPORT_KEYS - set(report)
    assert report["schema"] == 1 and report["tool"] == "jbodcheck" and report["version"] == explorer.__version__
    model = report["model"]
    assert model["preset"] == preset and model["variant"] == variant
    cfg = preset_config(preset, variant=variant)
    assert model == {"preset": preset, **cfg.as_dict()}  # every model parameter
    assert report["engine"] == "bfs"
    assert report["result"] == ("violation" if expect_violation else "ok")
    for key in ("distinct_states", "states_generated", "depth"):
        assert isinstance(report[key], int) and report[key] >= 0
    assert isinstance(report["elapsed_s"], (int, float))
    assert list(report["coverage"]) == list(build_model(cfg).reported_rules)   # every rule of the design
    assert isinstance(report["violations"], list)
    assert bool(report["violations"]) == expect_violation
    ids = {i.id: i.kind for i in builtin_invariants()}
    for v in report["violations"]:
        assert VIOLATION_KEYS <= set(v)
        assert v["kind"] == ids[v["invariant"]]
        assert isinstance(v["message"], str) and "\n" not in v["message"]
        assert [t["step"] for t in v["trace"]] == list(range(len(v["trace"])))
        for t in v["trace"]:
            assert TRACE_KEYS <= set(t)
            assert isinstance(t["state"], dict) and t["state"]
        assert v["trace"][0]["action"] is None
        assert all(isinstance(t["action"], str) and "(" in t["action"] for t in v["trace"][1:])


def test_json_to_stdout_parses_and_has_every_contract_key():
    p = cli("explore", "--preset", "tiny", "--variant", "legacy", "-q", "--json", "-")
    assert p.returncode == 1
    report = json.loads(p.stdout)  # stdout holds only the JSON; the summary goes to stderr
    _check_report(report, "tiny", "legacy", expect_violation=True)
    assert report["violations"][0]["invariant"] == "no_recreate_with_bad_dir"
    assert "no_recreate_with_bad_dir" in p.stderr


def _check_clean_tiny_report(report):
    """The JSON report of a clean run (test_explore_tiny_is_ok_and_every_rule_fires writes it)."""
    _check_report(report, "tiny", "kip112", expect_violation=False)
    absent = set(report["rules_not_in_configuration"])
    assert {"Write", "DeleteTopic", "ReassignPartition"} <= absent
    assert all(n > 0 for rule, n in report["coverage"].items() if rule not in absent)
    assert all(report["coverage"][rule] == 0 for rule in absent)
    assert report["states_generated"] >= report["distinct_states"] - 1


def test_json_to_a_file_keeps_the_summary_on_stdout(tmp_path, capsys):
    path = tmp_path / "report.json"
    code, out, _ = in_process(capsys, "explore", "--preset", "tiny", "-q", "--max-depth", "3", "--json", path)
    assert code == 0
    assert "Result: bounded" in out
    report = json.loads(path.read_text())
    assert report["result"] == "bounded" and report["depth"] == 3


def test_invariant_option_limits_the_check(capsys):
    base = ("explore", "--preset", "tiny", "--variant", "legacy", "-q", "--max-depth", "4", "--json", "-")
    code, out, _ = in_process(capsys, *base)
    assert code == 1 and json.loads(out)["violations"][0]["invariant"] == "no_recreate_with_bad_dir"
    code, out, _ = in_process(capsys, *base, "--invariant", "offline_gauges_match",
                              "--invariant", "leader_is_live_isr_member")
    assert code == 0
    report = json.loads(out)
    assert report["violations"] == [] and report["result"] == "bounded"


def test_explicit_flags_override_the_preset(capsys):
    code, out, _ = in_process(capsys, "explore", "--preset", "tiny", "--max-crashes", "0", "-q", "--max-depth", "2",
                              "--json", "-")
    assert code == 0
    model = json.loads(out)["model"]
    assert model["max_crashes"] == 0 and model["brokers"] == 2


# ---- bad input: exit 2, one line on stderr, no traceback -----------------------------------------------------------

@pytest.mark.parametrize("args, words", [
    (("explore", "--preset", "nope"), ("nope",)),
    (("explore", "--brokers", "3", "--rf", "4"), ("--rf",)),
    (("explore", "--brokers", "0"), ("--brokers",)),
    (("explore", "--preset", "tiny", "--frobnicate"), ("--frobnicate",)),
    (("explore", "--preset", "tiny", "--invariant", "no_such_invariant"), ("no_such_invariant",)),
    (("explore", "--preset", "tiny", "--variant", "nope"), ("nope",)),
    (("explore", "--preset", "tiny", "--max-states", "0"), ("--max-states",)),
    (("explore", "--preset", "tiny", "--engine", "nope"), ("nope",)),
    (("explore", "--preset", "tiny", "--brokers", "two"), ("two",)),
    (("no-such-command",), ("no-such-command",)),
    (("rules", "--preset", "nope"), ("nope",)),
])
def test_bad_options_exit_2_with_one_line(args, words):
    line = assert_bad_input(cli(*args), *words)
    assert line.startswith("jbodcheck")


def _scenario(tmp_path, name, data):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


@pytest.mark.parametrize("name, data, words", [
    ("invalid.json", '{"model": {"preset": "tiny"}, "steps": [', ("not valid JSON",)),
    ("not-a-list.json", {"model": {"preset": "tiny"}, "steps": "CreateTopic(partition=0)"}, ("steps",)),
    ("not-strings.json", {"model": {"preset": "tiny"}, "steps": [1, 2]}, ("steps",)),
    ("unknown-rule.json", {"model": {"preset": "tiny"}, "steps": ["CreateTopic(partition=0)", "Explode(broker=0)"]},
     ("step 2", "Explode")),
    ("bad-args.json", {"model": {"preset": "tiny"}, "steps": ["BrokerCrash(node=0)"]}, ("step 1", "broker")),
    ("out-of-range.json", {"model": {"preset": "tiny"}, "steps": ["BrokerCrash(broker=9)"]}, ("step 1",)),
    ("bad-model.json", {"model": {"preset": "tiny", "rf": 5}, "steps": []}, ("model.rf 5",)),
    ("unknown-key.json", {"model": {"preset": "tiny"}, "steps": [], "expected": {}}, ("expected",)),
    ("not-an-object.json", '["CreateTopic(partition=0)"]', ()),
])
def test_malformed_scenario_files_exit_2(tmp_path, name, data, words):
    path = _scenario(tmp_path, name, data)
    assert_bad_input(cli("replay", path), *words)


def test_disabled_step_names_the_step_and_the_guards_reason(tmp_path):
    steps = ["CreateTopic(partition=0)", "BrokerLeaderAndIsr(broker=0)", "BrokerStopReplica(broker=0)"]
    path = _scenario(tmp_path, "disabled.json", {"model": {"preset": "tiny"}, "steps": steps})
    m = model_of("tiny")
    s = step(m, step(m, init(m), "CreateTopic", 0), "BrokerLeaderAndIsr", 0)
    reason = m.rule("BrokerStopReplica").guard(m, s, 0)
    assert reason is not None
    line = assert_bad_input(cli("replay", path), "step 3", "BrokerStopReplica(broker=0)")
    assert reason in line


def test_disabled_first_step(tmp_path):
    path = _scenario(tmp_path, "first.json", {"model": {"preset": "tiny"}, "steps": ["BrokerLeaderAndIsr(broker=1)"]})
    m = model_of("tiny")
    reason = m.rule("BrokerLeaderAndIsr").guard(m, init(m), 1)
    line = assert_bad_input(cli("replay", path), "step 1", "BrokerLeaderAndIsr(broker=1)")
    assert reason in line


def test_nonexistent_scenario_path_exits_2(tmp_path):
    assert_bad_input(cli("replay", tmp_path / "nowhere" / "scenario.json"), "nowhere")


@pytest.mark.parametrize("where", ["missing-dir", "is-a-dir"])
def test_unwritable_json_path_exits_2(tmp_path, where):
    target = tmp_path / "missing" / "report.json" if where == "missing-dir" else tmp_path
    line = assert_bad_input(cli("explore", "--preset", "tiny", "-q", "--max-depth", "2", "--json", target), "JSON")
    assert str(target) in line


def test_in_process_bad_input_also_exits_2(capsys):
    code, out, err = in_process(capsys, "explore", "--preset", "nope")
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "nope" in err


# ---- replay --------------------------------------------------------------------------------------------------

def test_replay_of_a_failing_expectation_exits_1(tmp_path):
    data = {"model": {"preset": "tiny"}, "steps": ["CreateTopic(partition=0)"], "expect": {"quiescent": True}}
    p = cli("replay", _scenario(tmp_path, "busy.json", data))
    assert p.returncode == 1
    assert "Expectations that do not hold" in p.stdout and "quiescent" in p.stdout


def test_replay_json_report_has_the_explore_shape(tmp_path, capsys):
    data = {"model": {"preset": "tiny"}, "steps": ["CreateTopic(partition=0)", "BrokerLeaderAndIsr(broker=0)"]}
    code, out, _ = in_process(capsys, "replay", _scenario(tmp_path, "ok.json", data), "--json", "-")
    assert code == 0
    report = json.loads(out)
    assert REPORT_KEYS <= set(report)
    assert report["result"] == "ok" and report["violations"] == []
    assert report["model"]["preset"] == "tiny"
    assert report["coverage"]["CreateTopic"] == 1 and report["coverage"]["BrokerLeaderAndIsr"] == 1


# ---- listings ----------------------------------------------------------------------------------------------------

def test_presets_json(capsys):
    code, out, _ = in_process(capsys, "presets", "--json")
    assert code == 0
    entries = json.loads(out)
    assert {"tiny", "small", "medium"} <= {e["name"] for e in entries}
    assert [e["name"] for e in entries] == list(PRESETS)
    for e in entries:
        assert {"name", "model", "description"} <= set(e)
        assert set(ModelConfig.field_names()) <= set(e["model"])
        assert e["model"] == preset_config(e["name"]).as_dict()
        assert e["description"]


def test_rules_json(capsys):
    code, out, _ = in_process(capsys, "rules", "--json")
    assert code == 0
    entries = json.loads(out)
    model = build_model(ModelConfig())
    assert [e["name"] for e in entries] == list(model.reported_rules)
    assert [e["name"] for e in entries if e["in_configuration"]] == [r.name for r in model.rules]
    for e in entries:
        assert {"name", "reference", "doc", "feature"} <= set(e)
        assert e["reference"] and e["doc"]


def test_invariants_json(capsys):
    code, out, _ = in_process(capsys, "invariants", "--json")
    assert code == 0
    entries = json.loads(out)
    assert [e["id"] for e in entries] == [i.id for i in builtin_invariants()]
    for e in entries:
        assert {"id", "kind", "statement", "reference"} <= set(e)
        assert e["kind"] in ("state", "transition", "quiescent", "eventually", "leads_to")


def test_text_listings_work(capsys):
    for command in ("presets", "rules", "invariants"):
        code, out, _ = in_process(capsys, command)
        assert code == 0 and out.strip()
    _, out, _ = in_process(capsys, "invariants")
    assert all(i.id in out for i in builtin_invariants())


# ---- entry points ---------------------------------------------------------------------------------------------------

def test_console_script_is_on_path():
    exe = shutil.which("jbodcheck")
    assert exe, "the jbodcheck console script is not on PATH (pip install -e .)"
    p = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0
    for command in ("explore", "replay", "presets", "rules", "invariants"):
        assert command in p.stdout
    v = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=60)
    assert v.returncode == 0 and explorer.__version__ in v.stdout


def test_python_dash_m_explorer_help():
    p = cli("--help")
    assert p.returncode == 0 and "explore" in p.stdout and "replay" in p.stdout
    p = cli("explore", "--help")
    assert p.returncode == 0
    for option in ("--preset", "--variant", "--brokers", "--dirs", "--partitions", "--rf", "--max-depth",
                   "--max-states", "--seed", "--invariant", "--all-violations", "--json"):
        assert option in p.stdout, option


# ---- the feature presets and options (saturation, deletion, reassignment) ------------------------------------------

FEATURES = ("saturation", "deletion", "reassignment")


def test_presets_json_lists_the_feature_presets_with_their_switches(capsys):
    code, out, _ = in_process(capsys, "presets", "--json")
    assert code == 0
    entries = {e["name"]: e for e in json.loads(out)}
    switches = {"saturation": {"saturation"}, "deletion": {"saturation", "deletion"}, "reassignment": {"reassignment"},
                "reassignment-race": {"reassignment"}, "reassignment-deletion": {"reassignment", "deletion"},
                "reassignment-saturation": {"reassignment", "saturation"}}
    for name, on in switches.items():
        model = entries[name]["model"]
        assert {f for f in FEATURES if model[f]} == on, name
        assert entries[name]["description"]
    for name in ("tiny", "small", "medium"):
        assert not any(entries[name]["model"][f] for f in FEATURES), name
    assert entries["reassignment"]["model"]["rf"] < entries["reassignment"]["model"]["brokers"]
    assert entries["reassignment"]["model"]["probe_new_replicas"] is True
    # The race preset is the reassignment preset with a disk failure and a disk repair allowed.
    race, plain = entries["reassignment-race"]["model"], entries["reassignment"]["model"]
    assert plain["max_dir_failures"] == 0 and race["max_dir_failures"] == 1
    assert {k: v for k, v in race.items() if k not in ("max_dir_failures", "max_fixes")} == \
        {k: v for k, v in plain.items() if k not in ("max_dir_failures", "max_fixes")}
    _, text, _ = in_process(capsys, "presets")
    assert "features: reassignment" in text and "features: saturation (dir_capacity=2" in text


@pytest.mark.parametrize("args, words", [
    (("--reassignment", "--brokers", "2", "--rf", "2"), ("--reassignment", "--rf 2", "--brokers 2")),
    (("--preset", "reassignment", "--rf", "2"), ("--reassignment",)),
    (("--preset", "saturation", "--saturation-recovery", "bogus"), ("--saturation-recovery", "bogus")),
    (("--preset", "saturation", "--dir-capacity", "0"), ("--dir-capacity",)),
    (("--preset", "saturation", "--dir-capacity", "1"), ("--dir-capacity", "reserved file")),
    (("--preset", "tiny", "--dir-capacity", "9"), ("--dir-capacity",)),
    (("--preset", "deletion", "--dir-capacity", "two"), ("two",)),
])
def test_bad_feature_options_exit_2_with_one_line(capsys, args, words):
    code, out, err = in_process(capsys, "explore", *args, "-q", "--max-depth", "1", "--workers", "1")
    assert code == 2 and out == "" and "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("jbodcheck"), err
    for w in words:
        assert w in lines[0], (w, lines[0])


def test_a_bad_reassignment_option_through_a_fresh_interpreter():
    assert_bad_input(cli("explore", "--reassignment", "--brokers", "3", "--rf", "3", "-q"), "--reassignment")


def _reassign_scenario(expect):
    scenario = json.loads((REPO / "scenarios" / "kip112-7-reassign-onto-a-broker-with-an-offline-dir.json").read_text())
    return {**scenario, "expect": expect}


@pytest.mark.parametrize("expect, key", [
    ({"reassigned": [7]}, "reassigned"), ({"assignment": {"0": "1,2"}}, "assignment"),
    ({"deleted_topics": "0"}, "deleted_topics"), ({"dirs": {"0": ["good"]}}, "dirs"),
])
def test_a_bad_new_expect_value_exits_2(tmp_path, capsys, expect, key):
    path = _scenario(tmp_path, f"bad-{key}.json", _reassign_scenario(expect))
    code, out, err = in_process(capsys, "replay", path)
    assert code == 2 and "Traceback" not in out + err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and f"expect.{key}" in lines[0], err


def test_a_wrong_new_expectation_exits_1_and_is_named(tmp_path, capsys):
    path = _scenario(tmp_path, "wrong.json", _reassign_scenario({"reassigned": [0], "assignment": {"0": [0, 1]}}))
    code, out, _ = in_process(capsys, "replay", path)
    assert code == 1
    assert "Expectations that do not hold" in out and "partition 0's assignment to be [0, 1], found [1, 2]" in out
    code, out, _ = in_process(capsys, "replay", path, "--json", "-")
    report = json.loads(out)
    assert code == 1 and report["result"] == "violation" and report["violations"] == []
    assert len(report["expectations_failed"]) == 1 and "assignment" in report["expectations_failed"][0]


# ---- compare's outputs (issue #29) -----------------------------------------------------------------------------

def test_compare_markdown_is_written_atomically_between_its_markers(tmp_path, monkeypatch):
    import explorer.outputs as outputs
    from explorer.cli.compare import BEGIN, END, write_markdown

    doc = tmp_path / "designs.md"
    doc.write_text(f"intro\n{BEGIN}\nold table\n{END}\noutro\n")
    write_markdown(str(doc), "| new | table |")
    assert doc.read_text() == f"intro\n{BEGIN}\n\n| new | table |\n\n{END}\noutro\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["designs.md"]      # no temporary file left

    def fail(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(outputs.os, "replace", fail)
    with pytest.raises(outputs.OutputError, match="Markdown table"):
        write_markdown(str(doc), "| newer |")
    assert "| new | table |" in doc.read_text() and sorted(p.name for p in tmp_path.iterdir()) == ["designs.md"]


@pytest.mark.parametrize("script", ["explorer/cli/submit.py", "spark_explore/submit.py"])
def test_the_spark_submit_driver_scripts_run_the_cli(tmp_path, script):
    """docs/spark.md: spark-submit runs explorer/cli/submit.py, and spark_explore/submit.py (the earlier path)
    still launches it; both are the CLI with its exit codes, run as scripts from another directory."""
    env = {**{k: v for k, v in os.environ.items() if k != "JBODCHECK_PLUGINS"}, "PYTHONPATH": str(REPO)}
    run = [sys.executable, str(REPO / script)]
    listed = subprocess.run(run + ["presets", "--json"], capture_output=True, text=True, cwd=tmp_path, env=env,
                            timeout=120)
    assert listed.returncode == 0, listed.stderr
    assert [p["name"] for p in json.loads(listed.stdout)] == list(PRESETS)
    bad = subprocess.run(run + ["explore", "--preset", "no-such-preset"], capture_output=True, text=True,
                         cwd=tmp_path, env=env, timeout=120)
    assert_bad_input(bad, "no-such-preset")


def test_the_old_console_script_entry_point_still_runs_the_cli():
    """Installs made before the CLI moved to explorer/cli/ call explorer.entry:main."""
    p = subprocess.run([sys.executable, "-c", "import sys; from explorer.entry import main; main(sys.argv[1:])",
                        "--version"], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert p.returncode == 0 and p.stdout.strip() == f"jbodcheck, version {explorer.__version__}", p.stderr


# ---- replay's output and a light start (issue 46, item 21) -----------------------------------------------------

def test_replay_prints_its_header_first_and_the_trace_once(capsys):
    """Finding 1's replay printed the walkthrough, then the header, then each violation's trace again (465 lines):
    the title and the header first, the trace once, each violation at its step of that trace."""
    code, out, _ = in_process(capsys, "replay", REPO / "scenarios" / "kraft-finding-1-acked-record-lost.json")
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith("Replay of ") and lines[1].startswith("jbodcheck replay: ")
    assert lines[2] == "Step 0: initial state" and out.count("Step 0: initial state") == 1
    assert "Trace (" not in out and "At step 12 of the trace above." in out and "At step 10 of the trace above." in out
    assert len(lines) < 250


@pytest.mark.parametrize("args", [["--version"], ["--help"]])
def test_version_and_help_load_no_model(args):
    """`jbodcheck --version` and `--help` import the command group alone (every command is lazy,
    explorer/cli/app.py): neither the model nor numpy."""
    probe = ("import sys\nfrom explorer.cli.entry import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
             "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('model', 'numpy', 'invariants') "
             "or m in ('explorer.search', 'explorer.catalog'))\nprint('HEAVY', heavy, file=sys.stderr)\n")
    p = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, cwd=REPO, timeout=60,
                       env={**os.environ, "PYTHONPATH": str(REPO)})
    assert "HEAVY []" in p.stderr, p.stderr[-2000:]
    assert ("version" in p.stdout) if args == ["--version"] else ("explore" in p.stdout and "reproduce" in p.stdout)


def test_the_short_helps_are_the_commands_own():
    """The short help `jbodcheck --help` shows (given without importing the command), less a closing parenthesis,
    starts the command's own."""
    import re

    from explorer.cli.app import cli

    for name, command in cli.commands.items():
        own = " ".join((command.load().help or "").split())
        assert own.startswith(re.sub(r" \([^)]*\)\.$|\.$", "", command.short_help)), (name, own[:120])
