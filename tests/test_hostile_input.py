"""Hostile input: every bad file, option, plugin and output path gives its documented exit code (2 bad input,
3 the checker failed) and exactly one line on stderr, never a traceback (docs/cli.md, exit codes).

Small models only (tiny, a few levels): the whole file runs in seconds. Runs use -q, so stderr holds only
the error line.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import attrs
import pytest

import explorer.cli.explore as cli_module
from explorer.cli import default_workers
from explorer.errors import OutputError
from explorer.outputs import check_writable, write_text
from explorer.search import SearchResult

from helpers import REPO, SCENARIOS, in_process

SMALL_RUN = ("--preset", "tiny", "--max-depth", "3", "-q", "--workers", "1")


def run(*args, cwd=REPO, env_extra=None, timeout=120):
    """`python -m explorer ARGS` in a fresh interpreter (plugins register globally: keep them out of this one)."""
    env = {k: v for k, v in os.environ.items() if k != "JBODCHECK_PLUGINS"}
    env["PYTHONPATH"] = str(REPO)
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-m", "explorer", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=timeout)




def one_line(code, out, err, expected_code, *words):
    """The run exited with expected_code and wrote exactly one non-empty line on stderr, no traceback."""
    assert code == expected_code, (code, out[-2000:], err[-2000:])
    assert "Traceback" not in out and "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("jbodcheck: "), lines[0]
    for w in words:
        assert w in lines[0], (w, lines[0])
    return lines[0]


def proc_line(p, expected_code, *words):
    return one_line(p.returncode, p.stdout, p.stderr, expected_code, *words)


# ---- scenario files ---------------------------------------------------------------------------------------------

def _write(tmp_path, name, content):
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


@pytest.mark.parametrize("name, content, words", [
    ("latin1.json", '{"description": "caf\u00e9", "steps": []}'.encode("latin-1"), ("not UTF-8",)),
    ("utf16.json", '{"steps": []}'.encode("utf-16"), ("not UTF-8",)),
    ("binary.json", bytes(range(256)) * 8, ("not UTF-8",)),
    ("nul.json", b'{"steps": []}\x00\x00', ("not valid JSON",)),
    ("empty.json", b"", ("not valid JSON",)),
    ("deep-lists.json", "[" * 100_000 + "]" * 100_000, ("nested too deeply",)),
    ("deep-objects.json", '{"a":' * 100_000 + "1" + "}" * 100_000, ("nested too deeply",)),
    ("huge-int.json", '{"steps": [], "model": {"brokers": ' + "9" * 5000 + "}}", ("scenario",)),
])
def test_unreadable_scenario_files_exit_2(tmp_path, capsys, name, content, words):
    path = _write(tmp_path, name, content)
    one_line(*in_process(capsys, "replay", path), 2, *words)


def test_a_huge_scenario_is_rejected_quickly(tmp_path, capsys):
    steps = ["CreateTopic(partition=0)"] * 400_000          # about 10 MB of steps
    path = _write(tmp_path, "huge.json", {"model": {"preset": "tiny"}, "steps": steps})
    assert path.stat().st_size > 5_000_000
    start = time.monotonic()
    one_line(*in_process(capsys, "replay", path), 2, "larger than")
    assert time.monotonic() - start < 10


def test_a_50_mb_string_is_rejected_quickly(tmp_path, capsys):
    path = tmp_path / "long-string.json"
    with open(path, "w") as f:
        f.write('{"description": "' + "x" * 50_000_000 + '", "steps": []}')
    start = time.monotonic()
    one_line(*in_process(capsys, "replay", path), 2, "larger than")
    assert time.monotonic() - start < 10


def test_many_steps_under_the_size_limit_end_at_the_first_disabled_step(tmp_path, capsys):
    path = _write(tmp_path, "many.json", {"model": {"preset": "tiny"}, "steps": ["CreateTopic(partition=0)"] * 100_000})
    one_line(*in_process(capsys, "replay", path), 2, "step 2")


@pytest.mark.parametrize("data, words", [
    ({"model": {"preset": 5}, "steps": []}, ("preset",)),
    ({"model": {"preset": ["tiny"]}, "steps": []}, ("preset",)),
    ({"model": {"brokers": "three"}, "steps": []}, ("--brokers",)),
    ({"model": {"brokers": [1]}, "steps": []}, ("--brokers",)),
    ({"model": {"brokers": 2.5}, "steps": []}, ("--brokers",)),
    ({"model": {"brokers": True}, "steps": []}, ("--brokers",)),
    ({"model": {"brokers": 99 ** 20}, "steps": []}, ("brokers",)),
    ({"model": {"min_isr": "x"}, "steps": []}, ("--min-isr",)),
    ({"model": {"preset": "tiny", "max_records": [1, 2, 3]}, "steps": []}, ("--max-records",)),
    ({"model": {"eager_metadata": "yes"}, "steps": []}, ("eager_metadata",)),
    ({"model": {"saturation_recovery": 3}, "steps": []}, ("--saturation-recovery",)),
    ({"model": {"variant": {"name": "kip112"}}, "steps": []}, ("variant",)),
    ({"model": {"no_such_field": 1}, "steps": []}, ("no_such_field",)),
    ({"model": [], "steps": []}, ("'model'",)),
    ({"model": {"preset": "tiny"}, "steps": {"0": "CreateTopic(partition=0)"}}, ("'steps'",)),
    ({"model": {"preset": "tiny"}, "steps": [None]}, ("'steps'",)),
    ({"model": {"preset": "tiny"}, "steps": ["CreateTopic(partition=" + "9" * 40 + ")"]}, ("step 1",)),
    ({"model": {"preset": "tiny"}, "steps": ["CreateTopic(partition=zero)"]}, ("step 1",)),
    ({"model": {"preset": "tiny"}, "steps": ["CreateTopic"]}, ("step 1",)),
    ({"model": {"preset": "tiny"}, "steps": [], "expect": []}, ("'expect'",)),
    ({"model": {"preset": "tiny"}, "steps": [], "expect": {"leaders": [1]}}, ("expect.leaders",)),
    ({"model": {"preset": "tiny"}, "steps": [], "expect": {"isr": 3}}, ("expect.isr",)),
    ({"model": {"preset": "tiny"}, "steps": [], "expect": {"acked_records": [1]}}, ("expect.acked_records",)),
    ({"model": {"preset": "tiny"}, "steps": [], "expect": {"offline_replicas": {"0": "x"}}}, ("expect.offline_replicas",)),
    ({"model": {"preset": "tiny"}, "steps": [], "expect": {"dirs": {"x": 1}}}, ("expect.dirs",)),
    ({"model": {"preset": "tiny"}, "steps": [], "expect": {"quiescent": "yes"}}, ("expect.quiescent",)),
    ({"model": {"preset": "tiny"}, "steps": [], "expect": {"brokers_up": [0, 7]}}, ("expect.brokers_up",)),
    ({"model": {"preset": "tiny"}, "steps": [], "expect": {"leaders": {"9": 0}}}, ("expect.leaders",)),
    ("[]", ("JSON object",)),
    ('"a string"', ("JSON object",)),
    ("null", ("JSON object",)),
])
def test_wrong_types_in_a_scenario_exit_2(tmp_path, capsys, data, words):
    path = _write(tmp_path, "wrong.json", data)
    one_line(*in_process(capsys, "replay", path), 2, *words)


def test_a_scenario_path_that_is_a_directory_exits_2(tmp_path, capsys):
    one_line(*in_process(capsys, "replay", tmp_path), 2, str(tmp_path))


# ---- ambiguous, oversized and non-text input (issue 29) -------------------------------------------------------

@pytest.mark.parametrize("content, words", [
    ('{"model": {"preset": "tiny"}, "steps": ["CreateTopic(partition=0)", "DirFail(broker=0, broker=1, dir=0)"]}',
     ("step 2", "broker is given twice")),
    ('{"model": {"preset": "tiny"}, "steps": [], "steps": ["CreateTopic(partition=0)"]}', ('"steps" appears twice',)),
    ('{"model": {"preset": "tiny", "preset": "small"}, "steps": []}', ('"preset" appears twice',)),
    ('{"model": {"preset": "tiny"}, "steps": [], "expect": {"leaders": {"0": 0, "0": 1}}}', ('"0" appears twice',)),
    ('{"model": {"preset": "tiny"}, "steps": ["DirFail(broker=' + "9" * 5000 + ', dir=0)"]}',
     ("step 1", "out of range")),
    ('{"model": {"preset": "tiny"}, "steps": ["DirFail(broker=' + "9" * 4000 + ', dir=0)"]}',
     ("step 1", "out of range")),
    ('{"model": {"preset": "tiny"}, "steps": [], "expect": {"leaders": {"' + "9" * 5000 + '": 0}}}',
     ("expect.leaders",)),
    ('{"model": {"preset": "tiny"}, "steps": [], "expect": {"leaders": {"\u00b2": 0}}}', ("expect.leaders",)),
    ('{"model": {"preset": "tiny"}, "steps": [], "expect": {"acked_records": {"' + "9" * 5000 + '": 1}}}',
     ("expect.acked_records",)),
    ('{"model": {"preset": "tiny"}, "steps": [], "expect": {"dirs": {"' + "9" * 5000 + '": ["good", "good"]}}}',
     ("expect.dirs",)),
    ('{"model": {"preset": "tiny"}, "steps": ["CreateTopic(partition=\u0660)"]}', ("step 1",)),
    ('{"description": "a lone \\ud800 surrogate", "model": {"preset": "tiny"}, "steps": []}', ("lone surrogate",)),
    ('{"model": {"preset": "tiny"}, "steps": ["CreateTopic(partition=0)\\udfff"]}', ("lone surrogate",)),
    ('{"model": {"preset": "tiny"}, "steps": [], "expect": {"\\ud800": 1}}', ("lone surrogate",)),
    ('{"model": {"preset": "tiny"}, "steps": [], "expect": ' + '{"a": ' * 40 + "1" + "}" * 40 + "}",
     ("nested more than",)),
])
def test_ambiguous_oversized_or_non_text_scenarios_exit_2(tmp_path, capsys, content, words):
    path = _write(tmp_path, "hostile.json", content)
    one_line(*in_process(capsys, "replay", path), 2, *words)


@pytest.mark.parametrize("option, value", [
    ("--brokers", "9" * 5000), ("--max-states", "9" * 5000), ("--max-depth", "9" * 5000), ("--seed", "9" * 5000),
    ("--max-memory", "9" * 5000 + "G"), ("--max-memory", "9" * 400 + "G"), ("--max-records", "9" * 5000 + ",1"),
])
def test_options_with_thousands_of_digits_exit_2(capsys, option, value):
    one_line(*in_process(capsys, "explore", *SMALL_RUN, option, value), 2, option)


def test_a_duplicate_argument_in_a_subprocess_exits_2(tmp_path):
    """The issue's case, end to end: the last value used to win and the step replayed."""
    path = _write(tmp_path, "dup.json", '{"model": {"preset": "tiny"}, "steps": ["CreateTopic(partition=0)", '
                                        '"DirFail(broker=0, broker=1, dir=0)"]}')
    proc_line(run("replay", path), 2, "given twice")


@pytest.fixture(scope="module")
def saved_report(tmp_path_factory) -> dict:
    """A real report with a violation and its trace (tiny, legacy)."""
    path = tmp_path_factory.mktemp("report") / "report.json"
    p = run("explore", "--preset", "tiny", "--variant", "legacy", "-q", "--workers", "1", "--json", path)
    assert p.returncode == 1, p.stderr
    return json.loads(path.read_text())


def _damaged(report: dict, where: str, value) -> dict:
    """The report with the value at ``where`` (dotted, [i] for list items; a dotted ``.0`` is an object's key)
    replaced."""
    import copy
    import re

    data = copy.deepcopy(report)
    parts = [int(index) if index else name for index, name in re.findall(r"\[(\d+)\]|([^.\[\]]+)", where)]
    target = data
    for p in parts[:-1]:
        target = target[p]
    target[parts[-1]] = value
    return data


@pytest.mark.parametrize("where, value, words", [
    ("coverage", "CreateTopic: 3", ("coverage must be an object",)),
    ("coverage", ["CreateTopic"], ("coverage must be an object",)),
    ("coverage.DirFail", "many", ("coverage.DirFail",)),
    ("coverage.DirFail", -1, ("coverage.DirFail",)),
    ("rules_not_in_configuration", "Write", ("rules_not_in_configuration",)),
    ("model", ["tiny"], ("model must be",)),
    ("version", 4, ("version must be a string",)),
    ("distinct_states", "many", ("distinct_states",)),
    ("violations", {"0": {}}, ("violations must be a list",)),
    ("violations[0]", "broken", ("violations[0] must be",)),
    ("violations[0].invariant", ["x"], ("violations[0].invariant",)),
    ("violations[0].trace", "x", ("violations[0].trace",)),
    ("violations[0].trace[1].action", 7, ("violations[0].trace[1].action",)),
    ("violations[0].trace[1].state", [], ("violations[0].trace[1].state",)),
    ("violations[0].trace[1].state.brokers", "two", ("state.brokers",)),
    ("violations[0].trace[1].state.brokers[0]", 0, ("state.brokers[0]",)),
    ("violations[0].trace[1].state.brokers[0].dirs", {"0": "good"}, ("brokers[0].dirs",)),
    ("violations[0].trace[1].state.brokers[0].dirs[0]", ["good"], ("brokers[0].dirs[0]",)),
    ("violations[0].trace[1].state.brokers[0].up", "yes", ("brokers[0].up",)),
    ("violations[0].trace[1].state.brokers[0].partitions", {"p": 1}, ("brokers[0].partitions",)),
    ("violations[0].trace[1].state.brokers[0].partitions[0].log_on_dirs", "01", ("log_on_dirs",)),
    ("violations[0].trace[1].state.brokers[0].partitions[0].hosted", ["leader"], ("hosted",)),
    ("violations[0].trace[1].state.controller", "c", ("state.controller",)),
    ("violations[0].trace[1].state.controller.partitions", [1], ("controller.partitions",)),
])
def test_view_refuses_a_report_of_the_wrong_shape(tmp_path, capsys, saved_report, where, value, words):
    path = _write(tmp_path, "report.json", _damaged(saved_report, where, value))
    one_line(*in_process(capsys, "view", path, "--html", tmp_path / "page.html"), 2, "report.json", *words)
    assert not (tmp_path / "page.html").exists()


@pytest.mark.parametrize("content, words", [
    ('{"tool": "jbodcheck", "tool": "jbodcheck", "violations": []}', ('"tool" appears twice',)),
    ('{"tool": "jbodcheck", "version": "\\udc80"}', ("lone surrogate",)),
    ('{"tool": "jbodcheck", "distinct_states": ' + "9" * 5000 + "}", ("not valid JSON",)),
    ('{"tool": "jbodcheck", "model": ' + '{"a": ' * 40 + "1" + "}" * 40 + "}", ("nested more than",)),
])
def test_view_refuses_ambiguous_or_non_text_reports(tmp_path, capsys, content, words):
    path = _write(tmp_path, "report.json", content)
    one_line(*in_process(capsys, "view", path, "--html", tmp_path / "page.html"), 2, *words)


def test_the_issues_report_with_a_string_coverage_exits_2_in_a_subprocess(tmp_path, saved_report):
    path = _write(tmp_path, "report.json", {**saved_report, "coverage": "all of them"})
    proc_line(run("view", path, "--html", tmp_path / "page.html"), 2, "coverage")


def _json_values():
    from hypothesis import strategies as st

    scalars = st.none() | st.booleans() | st.integers(-3, 3) | st.floats(allow_nan=False) | st.text(max_size=4)
    return st.recursive(scalars, lambda inner: st.lists(inner, max_size=3)
                        | st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=6)


def _paths(value, prefix="") -> list[str]:
    out = [prefix] if prefix else []
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, f"{prefix}.{k}" if prefix else k)
    elif isinstance(value, list):
        for i, v in enumerate(value[:3]):
            out += _paths(v, f"{prefix}[{i}]")
    return out


def test_whatever_view_accepts_it_renders(saved_report):
    """Any one field of a real report replaced by any JSON value: the shape check refuses it, or the page
    renders (never an exception from the renderer)."""
    renders_or_refuses(saved_report, [p for p in _paths(saved_report) if p != "tool" and not any(c in p for c in " ")])


def renders_or_refuses(report: dict, paths: list[str]) -> None:
    """For 300 examples: the value at one of ``paths`` replaced by any JSON value, the shape check refuses the
    report or the page renders it (tests/test_kraft_render.py uses it on a KRaft report)."""
    from hypothesis import given, settings, strategies as st

    from explorer.reports.html import page
    from explorer.reports.report_shape import ShapeError, check_report

    @settings(max_examples=300, deadline=None, database=None)
    @given(st.sampled_from(paths), _json_values())
    def one(where, value):
        data = _damaged(report, where, value)
        try:
            check_report(data)
        except ShapeError:
            return
        page(data, {})

    one()


# ---- options -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("args, words", [
    (("--preset", "nope"), ("nope",)),
    (("--preset", ""), ("preset",)),
    (("--preset", "tiny", "--variant", "nope"), ("nope",)),
    (("--preset", "tiny", "--max-depth", "-1"), ("--max-depth",)),
    (("--preset", "tiny", "--max-states", "-5"), ("--max-states",)),
    (("--preset", "tiny", "--max-crashes", "-1"), ("--max-crashes",)),
    (("--preset", "tiny", "--max-faults", "-1"), ("--max-faults",)),
    (("--preset", "tiny", "--brokers", "-2"), ("--brokers",)),
    (("--preset", "tiny", "--rf", "3"), ("--rf",)),
    (("--brokers", "2", "--rf", "5"), ("--rf",)),
    (("--preset", "tiny", "--rf", "0"), ("--rf",)),
    (("--preset", "tiny", "--max-memory", "lots"), ("--max-memory",)),
    (("--preset", "tiny", "--max-memory", "-1G"), ("--max-memory",)),
    (("--preset", "tiny", "--max-memory", "0"), ("--max-memory",)),
    (("--preset", "tiny", "--min-isr", "3"), ("--min-isr",)),
    (("--preset", "tiny", "--min-isr", "0"), ("--min-isr",)),
    (("--preset", "tiny", "--min-isr", "one"), ("--min-isr",)),
    (("--preset", "tiny", "--min-isr", "1,1,1"), ("--min-isr",)),
    (("--preset", "tiny", "--max-records", "1,,2"), ("--max-records",)),
    (("--preset", "tiny", "--workers", "0"), ("--workers",)),
    (("--preset", "tiny", "--workers", "-3"), ("--workers",)),
    (("--preset", "tiny", "--engine", "dfs", "--workers", "2"), ("--workers",)),
    (("--preset", "tiny", "--invariant", "no_such_invariant"), ("no_such_invariant",)),
    (("--preset", "tiny", "--seed", "x"), ("x",)),
    (("--preset", "tiny", "--walks", "0"), ("--walks",)),
    (("--preset", "tiny", "--master", "local[2]"), ("--engine spark",)),
])
def test_every_bad_option_value_exits_2(capsys, args, words):
    one_line(*in_process(capsys, "explore", *args, "-q"), 2, *words)


@pytest.mark.parametrize("command", [("fuzz", "--examples", "0"), ("fuzz", "--steps", "-1"),
                                     ("fuzz", "--invariant", "nope"), ("rules", "--variant", "nope"),
                                     ("replay", str(SCENARIOS / "kip112-1-dir-failure-at-bootstrap.json"),
                                      "--invariant", "nope")])
def test_bad_options_of_other_commands_exit_2(capsys, command):
    one_line(*in_process(capsys, *command), 2)


def test_more_workers_than_cores_warns_once_and_goes_on(capsys):
    n = default_workers() + 1
    code, out, err = in_process(capsys, "explore", "--preset", "tiny", "--max-depth", "2", "-q", "--workers", n)
    line = one_line(code, out, err, 0, f"--workers {n}", f"the {n - 1} core")
    assert line.startswith("jbodcheck: warning:")
    assert "Result: bounded" in out


# ---- plugins ------------------------------------------------------------------------------------------------

RAISES_AT_IMPORT = """
raise RuntimeError("this plugin is broken")
"""

RAISES_AT_CHECK = """
from invariants import invariant

@invariant("explodes_on_a_failed_dir", kind="{kind}", statement="raises once a dir failed", reference="test")
def explodes(model, state, *rest):
    after = rest[-1] if rest else state
    if any(d != 0 for b in after.brokers for d in b.dirs):
        raise ZeroDivisionError("the plugin divided by zero\\non two lines")
    return None
"""


def test_a_plugin_that_raises_at_import_is_bad_input(tmp_path):
    plugin = _write(tmp_path, "broken_plugin.py", RAISES_AT_IMPORT)
    proc_line(run("explore", *SMALL_RUN, "--plugin", plugin), 2, "broken_plugin", "RuntimeError")


@pytest.mark.parametrize("kind, workers", [("state", "1"), ("state", "2"), ("transition", "1")])
def test_a_plugin_that_raises_at_check_time_exits_3_and_names_the_invariant(tmp_path, kind, workers):
    plugin = _write(tmp_path, "explodes.py", RAISES_AT_CHECK.replace("{kind}", kind))
    report = tmp_path / "out" / "report.json"
    report.parent.mkdir()
    report.write_text('{"result": "ok", "a previous run": true}')
    p = run("explore", "--preset", "tiny", "--max-depth", "3", "-q", "--workers", workers, "--plugin", plugin,
            "--json", report)
    line = proc_line(p, 3, "explodes_on_a_failed_dir", "ZeroDivisionError", "depth 1")
    assert p.stdout == ""
    assert not report.exists(), "a previous run's report must not be left looking like this run's result"
    scenario = report.parent / "jbodcheck-failure-explodes_on_a_failed_dir.json"
    assert str(scenario) in line
    data = json.loads(scenario.read_text())
    assert len(data["steps"]) == 1 and data["steps"][0].startswith("DirFail(")
    # The scenario reaches the state: replaying it with the plugin fails the same way, after that step.
    proc_line(run("replay", scenario, "--plugin", plugin), 3, "explodes_on_a_failed_dir", "after step 1")


def test_a_plugin_that_raises_in_fuzz_exits_3(tmp_path):
    plugin = _write(tmp_path, "explodes.py", RAISES_AT_CHECK.replace("{kind}", "state"))
    p = run("fuzz", "--preset", "tiny", "--examples", "30", "-q", "--plugin", plugin, cwd=tmp_path)
    line = proc_line(p, 3, "explodes_on_a_failed_dir", "ZeroDivisionError")
    assert (tmp_path / "jbodcheck-failure-explodes_on_a_failed_dir.json").exists(), line


def test_an_unexpected_exception_is_an_internal_error(capsys, monkeypatch):
    def broken(*args, **kwargs):
        raise KeyError("something the CLI did not expect")

    monkeypatch.setattr(cli_module, "run_search", broken)
    one_line(*in_process(capsys, "explore", *SMALL_RUN), 3, "internal error", "KeyError")


def test_a_dead_worker_is_a_checker_failure(capsys, monkeypatch):
    from explorer.parallel import WorkerError

    def dies(*args, **kwargs):
        raise WorkerError("BFS worker 1 failed:\nTraceback (most recent call last):\n  ...\nValueError: bad")

    monkeypatch.setattr(cli_module, "run_search", dies)
    one_line(*in_process(capsys, "explore", *SMALL_RUN), 3, "BFS worker 1 failed", "ValueError: bad")


# ---- checkpoint files (explore --resume) --------------------------------------------------------------------

@pytest.fixture(scope="module")
def checkpoint_bytes(tmp_path_factory) -> bytes:
    """A whole checkpoint of tiny at depth 3 (explorer/checkpoint.py)."""
    from explorer.cli import main

    path = tmp_path_factory.mktemp("checkpoint") / "ck"
    with pytest.raises(SystemExit):
        main(["explore", *SMALL_RUN, "--checkpoint", str(path)])
    return path.read_bytes()


def _header_end(data: bytes) -> int:
    from explorer.checkpoint import MAGIC

    return len(MAGIC) + 8 + int.from_bytes(data[len(MAGIC):len(MAGIC) + 8], "little") + 32


def _other_format(data: bytes) -> bytes:
    import hashlib

    from explorer.checkpoint import MAGIC

    start = len(MAGIC) + 8
    header = data[start:_header_end(data) - 32].replace(b'"format": 1', b'"format": 99')
    return MAGIC + len(header).to_bytes(8, "little") + header + hashlib.sha256(header).digest() + data[
        _header_end(data):]


@pytest.mark.parametrize("name, damage, words", [
    ("empty", lambda d: b"", ("not a jbodcheck checkpoint",)),
    ("a-report", lambda d: json.dumps({"result": "ok"}).encode(), ("not a jbodcheck checkpoint",)),
    ("binary", lambda d: bytes(range(256)) * 64, ("not a jbodcheck checkpoint",)),
    ("magic-only", lambda d: d[:21], ("damaged checkpoint", "truncated")),
    ("huge-header-length", lambda d: d[:21] + (1 << 62).to_bytes(8, "little") + d[29:], ("implausible",)),
    ("truncated-header", lambda d: d[:200], ("truncated",)),
    ("truncated-sections", lambda d: d[:len(d) - 100], ("truncated",)),
    ("header-byte-flipped", lambda d: d[:40] + bytes([d[40] ^ 1]) + d[41:], ("header's checksum",)),
    ("section-byte-flipped", lambda d: d[:-10] + bytes([d[-10] ^ 1]) + d[-9:], ("checksum of its frontier",)),
    ("trailing-bytes", lambda d: d + b"\0", ("bytes after its last section",)),
    ("other-format", _other_format, ("format 99", "reads format 1")),
])
def test_bad_checkpoint_files_exit_2(tmp_path, capsys, checkpoint_bytes, name, damage, words):
    path = _write(tmp_path, name, damage(checkpoint_bytes))
    one_line(*in_process(capsys, "explore", *SMALL_RUN, "--resume", path), 2, str(path), *words)


def test_a_checkpoint_path_that_is_missing_or_a_directory_exits_2(tmp_path, capsys):
    one_line(*in_process(capsys, "explore", *SMALL_RUN, "--resume", tmp_path / "nope"), 2, "No such file")
    one_line(*in_process(capsys, "explore", *SMALL_RUN, "--resume", tmp_path), 2, "Is a directory")


# ---- outputs ----------------------------------------------------------------------------------------------

_FUZZ = ("fuzz", "--preset", "tiny", "--examples", "2", "-q")


@pytest.mark.parametrize("command, option", [
    (("explore", *SMALL_RUN), "--json"), (_FUZZ, "--json"), (_FUZZ, "--save-scenario"),
    (("replay", str(SCENARIOS / "kip112-1-dir-failure-at-bootstrap.json")), "--json")])
@pytest.mark.parametrize("where", ["missing-dir", "is-a-dir"])
def test_unwritable_outputs_exit_2_before_any_work(tmp_path, capsys, command, option, where):
    target = tmp_path / "nonexistent" / "x.json" if where == "missing-dir" else tmp_path
    code, out, err = in_process(capsys, *command, option, target)
    one_line(code, out, err, 2, str(target))
    assert out == "" and not (tmp_path / "nonexistent").exists()


def test_the_pre_check_neither_creates_nor_truncates(tmp_path, capsys):
    new, old = tmp_path / "new.json", tmp_path / "old.json"
    old.write_text("previous content")
    for target in (new, old):
        # bad input after the pre-check: nothing is written
        one_line(*in_process(capsys, "explore", "--preset", "nope", "--json", target), 2, "nope")
    assert not new.exists() and old.read_text() == "previous content"
    check_writable(str(new), "x")
    check_writable(str(old), "x")
    assert not new.exists() and old.read_text() == "previous content"


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_failed_final_write_exits_3_and_keeps_the_summary(capsys):
    code, out, err = in_process(capsys, "explore", *SMALL_RUN, "--json", "/dev/full")
    one_line(code, out, err, 3, "/dev/full", "No space left")
    assert "Result: bounded" in out


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_fuzz_keeps_its_counterexample_when_the_scenario_cannot_be_written(capsys):
    code, out, err = in_process(capsys, "fuzz", "--preset", "tiny", "--variant", "kip112-no-isnew-check", "--examples", "50", "-q",
                                "--save-scenario", "/dev/full")
    one_line(code, out, err, 3, "/dev/full")
    assert "Counterexample (" in out and "BrokerLeaderAndIsr(broker=" in out and "Scenario NOT written" in out


def test_writes_are_atomic(tmp_path, monkeypatch):
    target = tmp_path / "report.json"
    target.write_text("previous")
    os.chmod(target, 0o640)
    write_text(str(target), "new", "the report")
    assert target.read_text() == "new" and (target.stat().st_mode & 0o777) == 0o640

    def fails(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fails)
    with pytest.raises(OutputError, match="No space left"):
        write_text(str(target), "newer", "the report")
    assert target.read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"], "the temporary file is removed"


def test_a_new_file_gets_the_usual_permissions(tmp_path):
    target = tmp_path / "fresh.json"
    write_text(str(target), "{}", "the report")
    mask = os.umask(0)
    os.umask(mask)
    assert (target.stat().st_mode & 0o777) == 0o666 & ~mask


# ---- interrupted runs -------------------------------------------------------------------------------------

@attrs.define
class _Interrupted(SearchResult):
    signal: int | None = attrs.field(default=None, kw_only=True)


@pytest.mark.parametrize("sig", [2, 15])
def test_an_interrupted_search_exits_128_plus_the_signal_after_writing_the_report(tmp_path, capsys, monkeypatch,
                                                                                  sig):
    real = cli_module.run_search

    def interrupted(engine, model, selected, options):
        r = real(engine, model, selected, options)
        return _Interrupted(r.engine, "interrupted", r.distinct_states, r.states_generated, r.depth, r.elapsed_s,
                            r.coverage, [], signal=sig)

    monkeypatch.setattr(cli_module, "run_search", interrupted)
    path = tmp_path / "report.json"
    code, out, err = in_process(capsys, "explore", *SMALL_RUN, "--json", path)
    one_line(code, out, err, 128 + sig, f"signal {sig}")
    assert "Result: interrupted" in out
    assert json.loads(path.read_text())["result"] == "interrupted"


def test_a_keyboard_interrupt_that_escapes_exits_130(capsys, monkeypatch):
    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_module, "run_search", interrupt)
    one_line(*in_process(capsys, "explore", *SMALL_RUN), 130, "interrupted")


def test_spark_failing_during_the_search_is_a_checker_failure(capsys, monkeypatch):
    import explorer.cli.spark as spark_cli
    from spark_explore import SparkRunError

    def fails(*args, **kwargs):
        raise SparkRunError("the Spark search failed: a task failed (Spark's log: /tmp/x.log)")

    monkeypatch.setattr(spark_cli, "run", fails)
    line = one_line(*in_process(capsys, "explore", "--preset", "tiny", "--engine", "spark", "-q"), 3,
                    "the Spark search failed")
    assert line.startswith("jbodcheck: failure:")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_fuzz_keeps_the_report_it_wrote_when_the_scenario_write_fails(tmp_path, capsys):
    report = tmp_path / "report.json"
    report.write_text("a previous run's report")
    code, out, err = in_process(capsys, "fuzz", "--preset", "tiny", "--variant", "kip112-no-isnew-check", "--examples", "50", "-q",
                                "--json", report, "--save-scenario", "/dev/full")
    one_line(code, out, err, 3, "/dev/full")
    data = json.loads(report.read_text())
    assert data["result"] == "violation" and data["violations"][0]["steps"]


# ---- every output path, every command, before any work (issue #29) ----------------------------------------------

_LIVE = ("explore", "--brokers", "3", "--dirs", "2", "--partitions", "1", "--rf", "2", "--reassignment",
         "--max-records", "0", "--max-faults", "1", "--liveness", "-q")
_REPLAY = ("replay", str(SCENARIOS / "kip112-1-dir-failure-at-bootstrap.json"))
_OUTPUTS = [
    (("explore", *SMALL_RUN), "--html"), (("explore", *SMALL_RUN), "--itf"),
    (("explore", *SMALL_RUN), "--save-scenario"), (("explore", "--preset", "tiny", "--max-states", "5", "-q"), "--dot"),
    (("explore", *SMALL_RUN), "--checkpoint"),
    (_LIVE, "--json"), (_LIVE, "--html"), (_LIVE, "--itf"), (_LIVE, "--save-scenario"), (_LIVE, "--save-lasso"),
    (_REPLAY, "--html"), (_REPLAY, "--itf"), (_FUZZ, "--html"), (_FUZZ, "--itf"),
    (("compare", "-q"), "--markdown"), (("compare", "-q"), "--json"),
    (("view", str(SCENARIOS / "kip112-1-dir-failure-at-bootstrap.json")), "--html"),
    (("prove", "--property", "no_recreate_with_bad_dir"), "--json"),
]


@pytest.mark.parametrize("command, option", _OUTPUTS, ids=lambda x: x if isinstance(x, str) else x[0])
@pytest.mark.parametrize("where", ["missing-dir", "is-a-dir", "under-a-file"])
def test_every_output_path_is_checked_before_any_work(tmp_path, capsys, command, option, where):
    (tmp_path / "afile").write_text("kept")
    target = {"missing-dir": tmp_path / "nonexistent" / "x.out", "is-a-dir": tmp_path,
              "under-a-file": tmp_path / "afile" / "x.out"}[where]
    code, out, err = in_process(capsys, *command, option, target)
    one_line(code, out, err, 2, str(target))
    assert out == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"] and (tmp_path / "afile").read_text() == "kept"


@pytest.mark.parametrize("command, option", _OUTPUTS, ids=lambda x: x if isinstance(x, str) else x[0])
def test_an_unwritable_output_path_exits_2_before_any_work(tmp_path, capsys, monkeypatch, command, option):
    locked, read_only = tmp_path / "locked", tmp_path / "ro.out"
    locked.mkdir(mode=0o500)
    read_only.write_text("kept")
    read_only.chmod(0o400)
    real_access = os.access

    def access(path, mode, *args, **kwargs):       # as for a user other than root, who may write anywhere
        if os.fspath(path) in (str(locked), str(read_only)) and mode & os.W_OK:
            return False
        return real_access(path, mode, *args, **kwargs)

    monkeypatch.setattr(os, "access", access)
    try:
        one_line(*in_process(capsys, *command, option, locked / "x.out"), 2, str(locked), "not writable")
        one_line(*in_process(capsys, *command, option, read_only), 2, str(read_only), "permission denied")
        assert read_only.read_text() == "kept" and list(locked.iterdir()) == []
    finally:
        locked.chmod(0o700)


@pytest.mark.parametrize("where", ["a-file", "missing-parent"])
def test_compare_scenarios_must_be_a_directory(tmp_path, capsys, where):
    (tmp_path / "afile").write_text("kept")
    target = tmp_path / "afile" if where == "a-file" else tmp_path / "nonexistent" / "dir"
    code, out, err = in_process(capsys, "compare", "-q", "--scenarios", target)
    one_line(code, out, err, 2, str(target), "not a directory" if where == "a-file" else "no such directory")
    assert out == "" and sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


def test_save_lasso_needs_liveness(tmp_path, capsys):
    code, out, err = in_process(capsys, "explore", *SMALL_RUN, "--save-lasso", tmp_path / "l.json")
    one_line(code, out, err, 2, "--save-lasso needs --liveness")
    assert out == "" and not (tmp_path / "l.json").exists()


def test_dev_stdout_on_a_pipe_is_written_directly(tmp_path):
    """/dev/stdout on a pipe: its real path (/proc/self/fd/pipe:[N]) names no file; the report still goes out."""
    p = run("explore", *SMALL_RUN, "--json", "/dev/stdout", "--itf", "/dev/stdout", "--variant", "legacy",
            "--max-depth", "5")
    assert p.returncode == 1, p.stderr
    report_text, _, itf_text = p.stdout.partition('"result"')[2].partition("\n}\n")
    assert '"no_recreate_with_bad_dir"' in report_text and '"format": "ITF"' in itf_text
