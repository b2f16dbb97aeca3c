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
from pathlib import Path

import attrs
import pytest

import explorer.engine_runs as engine_runs
from explorer.cli import default_workers
from explorer.errors import OutputError
from explorer.outputs import check_writable, write_text
from explorer.search import SearchResult

from support.helpers import REPO, SCENARIOS, device_fills_after_the_check, in_process
from support.damaged_reports import damaged, paths, renders_or_refuses

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
    ({"model": {"brokers": "three"}, "steps": []}, ("model.brokers must be a whole number",)),
    ({"model": {"brokers": [1]}, "steps": []}, ("model.brokers",)),
    ({"model": {"brokers": 2.5}, "steps": []}, ("model.brokers",)),
    ({"model": {"brokers": True}, "steps": []}, ("model.brokers",)),
    ({"model": {"brokers": 99 ** 20}, "steps": []}, ("brokers",)),
    ({"model": {"min_isr": "x"}, "steps": []}, ("model.min_isr",)),
    ({"model": {"preset": "tiny", "max_records": [1, 2, 3]}, "steps": []}, ("model.max_records",)),
    ({"model": {"eager_metadata": "yes"}, "steps": []}, ("eager_metadata",)),
    ({"model": {"saturation_recovery": 3}, "steps": []}, ("model.saturation_recovery",)),
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


# Python's own words in an error line: what a user should never have to decode (issue 41, item 3).
_INTERNALS = ("__init__", "object is not", "NoneType", "unexpected keyword", "Traceback", "'int' object",
              "'str' object", "'list' object", "'dict' object")


def _no_internals(line: str) -> str:
    assert not any(w in line for w in _INTERNALS), line
    return line


@pytest.mark.parametrize("model, words", [
    ({"preset": "tiny", "bogus": 1}, ("wrong.json: model has \"bogus\"", "not a model parameter")),
    ({"bogus": 1}, ("wrong.json: model has \"bogus\"", "not a model parameter")),
    ({"preset": "kraft-tiny", "bugs": 5}, ("\"bugs\"", "not a model parameter")),
    ({"preset": "kraft-tiny", "options": {"bugs": 5}}, ("wrong.json: model", "option bugs", "a JIRA id or a list")),
    ({"preset": "kraft-tiny", "options": {"alter_log_dirs": "x"}}, ("wrong.json: model", "option alter_log_dirs")),
    ({"preset": "tiny", "dirs": None}, ("wrong.json: model.dirs must be a whole number, not null",)),
    ({"preset": "tiny", "variant": None}, ("model.variant must be a string, not null",)),
    ({"preset": "tiny", "options": None}, ("model.options must be an object",)),
    ({"preset": "tiny", "max_records": [1, None]}, ("model.max_records must be a whole number or a list",)),
    ({"preset": "tiny", "max_faults": -1}, ("wrong.json: model.max_faults must be a whole number of at least 0",)),
    ({"preset": "tiny", "rf": 5}, ("wrong.json: model.rf 5 is larger than model.brokers 2",)),
    ({"preset": "tiny", "brokers": -1}, ("wrong.json: model.brokers must be a whole number of at least 1, not -1",)),
])
def test_a_scenario_s_bad_model_is_named_in_the_file_s_terms(tmp_path, capsys, model, words):
    path = _write(tmp_path, "wrong.json", {"model": model, "steps": []})
    _no_internals(one_line(*in_process(capsys, "replay", path), 2, *words))


def _wrong_values(kind: str) -> list:
    """JSON values of every other kind than a field's own (null, a bool, a number, a string, a list, an object)."""
    every = [None, True, 7, 1.5, "x", [None], {"x": 1}]
    own = {"bool": (True,), "int": (7,), "str": ("x",), "int | tuple": (7,), "tuple": ({"x": 1},)}[kind]
    return [v for v in every if v not in own and not (kind == "int" and v is True)]


def _every_field_with_a_wrong_value():
    import attrs

    from model import ModelConfig

    for field in attrs.fields(ModelConfig):
        for value in _wrong_values(str(field.type)):
            yield field.name, value


@pytest.mark.parametrize("field, value", list(_every_field_with_a_wrong_value()))
@pytest.mark.parametrize("preset", ["tiny", "kraft-tiny"])
def test_every_model_field_of_the_wrong_type_is_named(tmp_path, capsys, preset, field, value):
    """The sweep: every parameter, every JSON kind it is not, with a ZooKeeper and a KRaft preset."""
    path = _write(tmp_path, "wrong.json", {"model": {"preset": preset, field: value}, "steps": []})
    _no_internals(one_line(*in_process(capsys, "replay", path), 2, f"model.{field} must be"))


def test_replay_with_a_preset_over_the_file_s(tmp_path, capsys):
    """--preset NAME takes the file's preset's place (docs/cli.md: the file's other fields, then the flags, go
    over it); it used to fail with Python's `unexpected keyword argument 'preset'`."""
    path = _write(tmp_path, "s.json", {"model": {"preset": "tiny", "max_records": 0},
                                       "steps": ["CreateTopic(partition=0)"]})
    code, out, err = in_process(capsys, "replay", path, "--preset", "small", "--json", tmp_path / "r.json")
    assert code == 0, err
    model = json.loads((tmp_path / "r.json").read_text())["model"]
    assert (model["preset"], model["brokers"], model["rf"], model["max_records"]) == ("small", 3, 3, 0)
    code, out, err = in_process(capsys, "replay", path, "--preset", "small", "--max-records", "1", "--json",
                                tmp_path / "r.json")
    assert code == 0 and json.loads((tmp_path / "r.json").read_text())["model"]["max_records"] == 1


def test_replay_with_an_unknown_preset_is_one_line(tmp_path, capsys):
    path = _write(tmp_path, "s.json", {"model": {"preset": "tiny"}, "steps": []})
    _no_internals(one_line(*in_process(capsys, "replay", path, "--preset", "nope"), 2, "nope"))


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
    path = _write(tmp_path, "report.json", damaged(saved_report, where, value))
    one_line(*in_process(capsys, "view", path, "--html", tmp_path / "page.html"), 2, "report.json", *words)
    assert not (tmp_path / "page.html").exists()


@pytest.mark.parametrize("content, words", [
    ('{"tool": "jbodcheck", "tool": "jbodcheck", "violations": []}', ('"tool" appears twice',)),
    ('{"tool": "jbodcheck", "version": "\\udc80"}', ("lone surrogate",)),
    ('{"tool": "jbodcheck", "distinct_states": ' + "9" * 5000 + "}", ("a number of 5,000 digits at line 1",)),
    ('{"tool": "jbodcheck", "model": ' + '{"a": ' * 40 + "1" + "}" * 40 + "}", ("nested more than",)),
])
def test_view_refuses_ambiguous_or_non_text_reports(tmp_path, capsys, content, words):
    path = _write(tmp_path, "report.json", content)
    one_line(*in_process(capsys, "view", path, "--html", tmp_path / "page.html"), 2, *words)


def test_the_issues_report_with_a_string_coverage_exits_2_in_a_subprocess(tmp_path, saved_report):
    path = _write(tmp_path, "report.json", {**saved_report, "coverage": "all of them"})
    proc_line(run("view", path, "--html", tmp_path / "page.html"), 2, "coverage")


def _field_paths(report: dict) -> list[str]:
    """Every field of the report up to its list indices, as its first and its last occurrence: a field of the
    first step and of a later one (which the page compares with the step before), of broker 0 and of broker 1."""
    import re

    first, last = {}, {}
    for p in paths(report):
        if p == "tool" or " " in p:
            continue
        pattern = re.sub(r"\[\d+\]", "[]", p)
        first.setdefault(pattern, p)
        last[pattern] = p
    return sorted(set(first.values()) | set(last.values()))


# One value of every JSON kind, and the containers of each: what a damaged field can be, one level deep.
_EVERY_KIND = [None, True, -1, 1.5, "x", [], [None], [0], [{}], {}, {"x": None}]


@pytest.fixture(scope="module")
def kraft_report(tmp_path_factory) -> dict:
    """A KRaft-mode report (its states have other fields: no inbox, a metadata log) with its violations."""
    path = tmp_path_factory.mktemp("kraft-report") / "report.json"
    p = run("replay", SCENARIOS / "kraft-finding-1-acked-record-lost.json", "--json", path)
    assert p.returncode == 1, p.stderr
    return json.loads(path.read_text())


def _last_steps(report: dict, lasso: bool = False) -> dict:
    """The report with its first violation alone, on its last two steps (the page draws the second against the
    first); with ``lasso``, a lasso (explore --liveness) whose cycle starts at the first (the page reads
    loop_start)."""
    v = report["violations"][0]
    return {**report, "violations": [{**v, "trace": v["trace"][-2:], **({"loop_start": 0} if lasso else {})}]}


@pytest.mark.parametrize("which", ["zookeeper-lasso", "kraft"])
def test_every_field_of_every_kind_renders_or_is_refused(saved_report, kraft_report, which):
    """Deterministic and whole (issue 41, item 0): every field of a real report (each path, up to its list
    indices) replaced by a value of every JSON kind: the shape check refuses it, or the page renders. No
    sample, so CI does not depend on which examples a property test draws."""
    from explorer.reports.html import page
    from explorer.reports.report_shape import ShapeError, check_report

    report = _last_steps(saved_report, lasso=True) if which == "zookeeper-lasso" else _last_steps(kraft_report)
    crashes = []
    for where in _field_paths(report):
        for value in _EVERY_KIND:
            data = damaged(report, where, value)
            try:
                check_report(data)
            except ShapeError:
                continue
            try:
                page(data, {})
            except Exception as e:               # noqa: BLE001 -- any exception is the defect this test looks for
                crashes.append(f"{where} = {json.dumps(value)}: {type(e).__name__}: {e}")
    assert not crashes, "\n".join(crashes)


_STATE = "violations[0].trace[1].state"


@pytest.mark.parametrize("where", [
    "model", "coverage", "violations", "rules_not_in_configuration", "violations[0].trace",
    "violations[0].trace[1]", _STATE, f"{_STATE}.brokers", f"{_STATE}.brokers[1]", f"{_STATE}.brokers[1].up",
    f"{_STATE}.brokers[1].dirs", f"{_STATE}.brokers[1].dirs[0]", f"{_STATE}.brokers[1].partitions",
    f"{_STATE}.brokers[1].partitions[0]", f"{_STATE}.brokers[1].partitions[0].partition",
    f"{_STATE}.brokers[1].partitions[0].hosted", f"{_STATE}.brokers[1].partitions[0].log_on_dirs",
    f"{_STATE}.brokers[0].inbox", f"{_STATE}.brokers[0].responses", f"{_STATE}.controller",
    f"{_STATE}.controller.partitions", f"{_STATE}.controller.partitions[0]",
])
def test_view_refuses_null_where_the_page_draws_a_value(tmp_path, capsys, saved_report, where):
    """A null list, object or state field, at every level the page draws: bad input naming its path (issue 41:
    `state.brokers[i].dirs` or `state.controller` null used to exit 3 with a TypeError)."""
    path = _write(tmp_path, "report.json", damaged(saved_report, where, None))
    one_line(*in_process(capsys, "view", path, "--html", tmp_path / "page.html"), 2, "report.json",
             f"{where} must be", "not null")
    assert not (tmp_path / "page.html").exists()


@pytest.mark.parametrize("where", [
    "symmetry_note", "depth", "elapsed_s", "result", "violations[0].trace[0].action", "violations[0].message",
    f"{_STATE}.brokers[0].partitions[0].metadata", f"{_STATE}.controller.partitions[0].leader",
    f"{_STATE}.controller.epoch", f"{_STATE}.records",
])
def test_view_renders_null_where_a_report_may_hold_it(tmp_path, capsys, saved_report, where):
    """Null where a report holds it (the initial step's action, a partition without a leader, a fact of the
    summary) or where the page draws any value as text: the page renders."""
    path = _write(tmp_path, "report.json", damaged(saved_report, where, None))
    code, out, err = in_process(capsys, "view", path, "--html", tmp_path / "page.html")
    assert code == 0 and "Traceback" not in err, err
    assert (tmp_path / "page.html").read_text().startswith("<!DOCTYPE html>")


def test_whatever_view_accepts_it_renders(saved_report):
    """Any one field of a real report replaced by any JSON value, nested values too: the shape check refuses it,
    or the page renders (never an exception from the renderer). Derandomized whatever the profile, without an
    example database: the same examples on every run of one Hypothesis version; the whole single-level sweep
    above does not depend on them."""
    renders_or_refuses(saved_report, [p for p in paths(saved_report) if p != "tool" and not any(c in p for c in " ")])


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

    monkeypatch.setattr(engine_runs, "bfs", broken)
    one_line(*in_process(capsys, "explore", *SMALL_RUN), 3, "internal error", "KeyError")


def test_a_dead_worker_is_a_checker_failure(capsys, monkeypatch):
    from explorer.parallel import WorkerError

    def dies(*args, **kwargs):
        raise WorkerError("BFS worker 1 failed:\nTraceback (most recent call last):\n  ...\nValueError: bad")

    monkeypatch.setattr(engine_runs, "bfs", dies)
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
def test_a_failed_final_write_exits_3_and_keeps_the_summary(capsys, monkeypatch):
    device_fills_after_the_check(monkeypatch)
    code, out, err = in_process(capsys, "explore", *SMALL_RUN, "--json", "/dev/full")
    one_line(code, out, err, 3, "/dev/full", "No space left")
    assert "Result: bounded" in out


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_fuzz_keeps_its_counterexample_when_the_scenario_cannot_be_written(capsys, monkeypatch):
    device_fills_after_the_check(monkeypatch)
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
    real = engine_runs.bfs

    def interrupted(model, selected, options):
        r = real(model, selected, options)
        return _Interrupted(r.engine, "interrupted", r.distinct_states, r.states_generated, r.depth, r.elapsed_s,
                            r.coverage, [], signal=sig)

    monkeypatch.setattr(engine_runs, "bfs", interrupted)
    path = tmp_path / "report.json"
    code, out, err = in_process(capsys, "explore", *SMALL_RUN, "--json", path)
    one_line(code, out, err, 128 + sig, f"signal {sig}")
    assert "Result: interrupted" in out
    assert json.loads(path.read_text())["result"] == "interrupted"


def test_a_keyboard_interrupt_that_escapes_exits_130(capsys, monkeypatch):
    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(engine_runs, "bfs", interrupt)
    one_line(*in_process(capsys, "explore", *SMALL_RUN), 130, "interrupted")


def test_spark_failing_during_the_search_is_a_checker_failure(capsys, monkeypatch):
    from spark_explore import SparkRunError

    def fails(*args, **kwargs):
        raise SparkRunError("the Spark search failed: a task failed (Spark's log: /tmp/x.log)")

    monkeypatch.setattr(engine_runs, "spark", fails)
    line = one_line(*in_process(capsys, "explore", "--preset", "tiny", "--engine", "spark", "-q"), 3,
                    "the Spark search failed")
    assert line.startswith("jbodcheck: failure:")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_fuzz_keeps_the_report_it_wrote_when_the_scenario_write_fails(tmp_path, capsys, monkeypatch):
    device_fills_after_the_check(monkeypatch)
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


# ---- devices and pipes as outputs (issue 41, items 00 and 4) ------------------------------------------------------

@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("command, option", _OUTPUTS, ids=lambda x: x if isinstance(x, str) else x[0])
def test_a_device_that_refuses_every_write_is_refused_before_any_work(capsys, command, option):
    """/dev/full takes no byte: every output checks it with a write of zero bytes before the run (compare used to
    run the whole comparison, then read /dev/full without end)."""
    code, out, err = in_process(capsys, *command, option, "/dev/full")
    one_line(code, out, err, 2, "/dev/full", "No space left on device")
    assert out == ""


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_compare_markdown_on_dev_full_fails_before_the_comparison():
    """The issue's case, end to end, with progress lines on: nothing is run (no `[compare]` line)."""
    p = run("compare", "--configs", "tiny", "--markdown", "/dev/full", timeout=60)
    proc_line(p, 2, "cannot write the Markdown table to /dev/full", "No space left on device")
    assert p.stdout == "" and "[compare]" not in p.stderr


def _write_markdown_in(path: str, stdout=subprocess.PIPE):
    """compare's write_markdown(path, a table) in a fresh interpreter with 1 GB of address space and 30 s: reading
    /dev/zero first grew until the kernel killed it; /dev/stdout on a pipe blocked."""
    import resource

    def limits():
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    code = ("import sys\nfrom explorer.cli.compare import write_markdown\nfrom explorer.errors import OutputError\n"
            "try:\n    write_markdown(sys.argv[1], '| design | a |\\n|---|---|\\n| x | holds (1) |')\n"
            "except OutputError as e:\n    print(e, file=sys.stderr)\n    sys.exit(3)\n")
    return subprocess.run([sys.executable, "-c", code, path], stdout=stdout, stderr=subprocess.PIPE, text=True,
                          cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, preexec_fn=limits, timeout=30)


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_compare_markdown_writes_a_device_without_reading_it():
    p = _write_markdown_in("/dev/zero")
    assert p.returncode == 0 and p.stderr == "", p.stderr[-500:]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_compare_markdown_on_a_full_device_is_no_space_left():
    p = _write_markdown_in("/dev/full")
    assert p.returncode == 3 and "No space left on device" in p.stderr, p.stderr[-500:]


def test_compare_markdown_on_stdout_as_a_pipe_is_written_not_read():
    p = _write_markdown_in("/dev/stdout")
    assert p.returncode == 0, p.stderr[-500:]
    assert p.stdout.startswith("<!-- BEGIN GENERATED") and "| x | holds (1) |" in p.stdout


def test_compare_markdown_into_a_fifo_is_written_not_read(tmp_path):
    import threading

    fifo = tmp_path / "table.fifo"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()))
    reader.start()
    p = _write_markdown_in(str(fifo))
    reader.join(timeout=30)
    assert p.returncode == 0, p.stderr[-500:]
    assert received and "| x | holds (1) |" in received[0]


def test_compare_markdown_keeps_the_text_around_the_block_of_a_regular_file(tmp_path):
    from explorer.cli.compare import BEGIN, END, write_markdown

    path = tmp_path / "designs.md"
    path.write_text(f"# Designs\n\n{BEGIN}\nold\n{END}\n\nAfter.\n")
    write_markdown(str(path), "| new |")
    assert path.read_text() == f"# Designs\n\n{BEGIN}\n\n| new |\n\n{END}\n\nAfter.\n"


def test_a_fifo_is_not_opened_by_the_check(tmp_path):
    """A FIFO is written directly at the end; the check before the run does not open it (a reader waiting on it
    would see the end of its input and stop)."""
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    check_writable(str(fifo), "the JSON report")       # no reader: opening it would block or fail


# ---- outputs that are one file, or the input (issue 46, items 7 and 8) ----------------------------------------------

_FINDING_1 = SCENARIOS / "kraft-finding-1-replica-recreated-over-failed-dir.json"


def _copy(tmp_path, source, name):
    target = tmp_path / name
    target.write_bytes(source.read_bytes())
    return target


@pytest.mark.parametrize("case", ["explore-json-html", "replay-json-scenario", "reproduce-json-scenario",
                                  "fuzz-json-save-scenario", "compare-markdown-json", "view-html-report",
                                  "explore-resume-json", "replay-itf-through-a-link"])
def test_outputs_that_name_one_file_or_the_input_are_refused_before_any_work(tmp_path, capsys, monkeypatch, case):
    """One shared check (explorer/outputs.py check_distinct), every command: two outputs on one path, or an output
    on the command's input (the scenario was lost after a cluster run), is bad input before anything runs."""
    made = _scripted_cluster(monkeypatch)       # never a real cluster, whatever reproduce does
    scenario = _copy(tmp_path, SCENARIOS / "kip112-1-dir-failure-at-bootstrap.json", "s.json")
    kraft = _copy(tmp_path, _FINDING_1, "k.json")
    (tmp_path / "link.json").symlink_to(scenario)
    p = tmp_path / "p.out"
    args, words = {
        "explore-json-html": (("explore", *SMALL_RUN, "--json", p, "--html", p), ("--json and --html", str(p))),
        "replay-json-scenario": (("replay", scenario, "--json", scenario), ("--json", "the scenario")),
        "reproduce-json-scenario": (("reproduce", kraft, "--kafka", "4.4", "--json", kraft),
                                    ("--json", "the scenario")),
        "fuzz-json-save-scenario": ((*_FUZZ, "--json", p, "--save-scenario", p), ("--json and --save-scenario",)),
        "compare-markdown-json": (("compare", "-q", "--markdown", p, "--json", p), ("--markdown and --json",)),
        "view-html-report": (("view", scenario, "--html", scenario), ("--html", "the report")),
        "explore-resume-json": (("explore", *SMALL_RUN, "--resume", scenario, "--json", scenario),
                                ("--json", "--resume")),
        "replay-itf-through-a-link": (("replay", scenario, "--itf", tmp_path / "link.json"), ("--itf", "the scenario")),
    }[case]
    before = {f.name: f.read_bytes() for f in tmp_path.iterdir()}
    code, out, err = in_process(capsys, *args)
    one_line(code, out, err, 2, *words)
    assert out == "" and made == []
    assert {f.name: f.read_bytes() for f in tmp_path.iterdir()} == before


def test_a_checkpoint_may_be_resumed_and_saved_on_one_path(tmp_path, capsys):
    """--resume C --checkpoint C goes on saving the search it continues: not two outputs on one file."""
    path = tmp_path / "ck"
    code, _, err = in_process(capsys, "explore", "--preset", "tiny", "--max-depth", "2", "-q", "--workers", "1",
                              "--checkpoint", path)
    assert code == 0 and path.exists(), err
    code, out, err = in_process(capsys, "explore", "--preset", "tiny", "--max-depth", "3", "-q", "--workers", "1",
                                "--resume", path, "--checkpoint", path)
    assert code == 0, err


@pytest.mark.skipif(not os.path.isfile("/proc/version"), reason="needs /proc")
@pytest.mark.parametrize("command", [("explore", *SMALL_RUN), _REPLAY, _FUZZ])
def test_a_directory_where_no_file_can_be_created_is_refused_before_any_work(capsys, command):
    """os.access says yes to root for /proc; the check creates the atomic write's temporary file there instead."""
    one_line(*in_process(capsys, *command, "--json", "/proc/version"), 2, "/proc/version", "no file can be created")


@pytest.mark.skipif(not os.path.isfile("/proc/version"), reason="needs /proc")
def test_reproduce_json_in_proc_is_refused_before_any_cluster_starts(capsys, monkeypatch):
    from support.reproduce_fake import fake_harness

    module, made, made_for = fake_harness(lambda path: None)
    made_for.append(_FINDING_1)
    monkeypatch.setitem(sys.modules, "realkafka.cluster", module)
    code, out, err = in_process(capsys, "reproduce", _FINDING_1, "--kafka", "4.4", "--json", "/proc/version")
    one_line(code, out, err, 2, "/proc/version", "no file can be created")
    assert made == [] and out == ""


# ---- a closed standard output (issue 46, item 16) ---------------------------------------------------------------

@pytest.mark.parametrize("args", [("presets",), ("rules", "--json"), ("--help",), ("explore", "--help"),
                                  ("--version",), ("explore", "--preset", "tiny", "--max-depth", "1", "-q")])
def test_a_closed_standard_output_exits_141_quietly(args):
    """`jbodcheck presets | head -c 10` exited 1 (click's EPIPE handling), the code of a violation: a stdout whose
    reader went away is exit 141 (128 + SIGPIPE), nothing on stderr (docs/cli.md, exit codes). The pipe's read end
    is closed before the command starts, so its first write fails whatever the output's size."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        env = {k: v for k, v in os.environ.items() if k != "JBODCHECK_PLUGINS"}
        p = subprocess.run([sys.executable, "-m", "explorer", *args], stdout=write_end, stderr=subprocess.PIPE,
                           text=True, cwd=REPO, env={**env, "PYTHONPATH": str(REPO)}, timeout=120)
    finally:
        os.close(write_end)
    assert p.returncode == 141 and p.stderr == "", (p.returncode, p.stderr[-2000:])


# ---- reproduce's report on every exit (issue 46, item 6) --------------------------------------------------------

def _scripted_cluster(monkeypatch, **kw):
    """The scripted cluster of tests/support/reproduce_fake.py in place of realkafka.cluster, for finding 1's scenario at
    4.4.0: (the clusters made)."""
    from support.reproduce_fake import fake_harness

    from explorer.cli.reproduce import _kraft_model
    from explorer.scenario import load_scenario

    module, made, made_for = fake_harness(lambda path: _kraft_model(load_scenario(str(path)), "4.4.0")[2], **kw)
    made_for.append(_FINDING_1)
    monkeypatch.setitem(sys.modules, "realkafka.cluster", module)
    return made


def _boom(name, args):
    if name == "BrokerCrash":
        raise RuntimeError("boom")
    return False


@pytest.mark.parametrize("how, code, words", [
    ({"fail_on": "observe"}, 3, "the real cluster failed: observe failed"),
    ({"deviate": _boom}, 3, "internal error: RuntimeError: boom"),
])
def test_reproduce_that_fails_writes_an_error_report_over_a_previous_one(tmp_path, capsys, monkeypatch, how, code,
                                                                        words):
    """Exit 3 used to write no report and leave a previous run's at --json PATH: it reads "error", with the
    steps done and the failure's line, and no claim that anything was reproduced."""
    made = _scripted_cluster(monkeypatch, **how)
    report = tmp_path / "r.json"
    report.write_text('{"result": "matched", "a previous run": true}')
    rc, out, err = in_process(capsys, "reproduce", _FINDING_1, "--kafka", "4.4.0", "--json", report)
    assert rc == code and err.strip().splitlines()[-1].endswith(words), err
    data = json.loads(report.read_text())
    assert data["result"] == "error" and data["exit_code"] == code and data["error"].endswith(words)
    assert data["violation"]["reproduced"] is False and "a previous run" not in data
    assert bool(data["steps"]) == ("deviate" in how)       # observe fails at the start; BrokerCrash is step 5
    assert made[0].stopped


def test_reproduce_plan_only_writes_the_plan_as_its_report(tmp_path, capsys):
    scenario = SCENARIOS / "kraft-finding-5-unfenced-leader-on-failed-dir.json"
    report = tmp_path / "plan.json"
    code, out, err = in_process(capsys, "reproduce", scenario, "--kafka", "3.9.2", "--plan-only", "--json", report)
    assert code == 0, err
    data = json.loads(report.read_text())
    assert data["result"] == "planned" and data["command"] == "reproduce" and data["kafka"] == "3.9.2"
    assert data["violation"]["expected"] == ["leader_not_acceptable", "leader_on_failed_dir"]
    steps = data["plan"]["steps"]
    assert len(steps) == len(load_steps(scenario)) + 2 and steps[-1]["checks"].keys() >= {"leader_on_failed_dir"}
    assert data["plan"]["heartbeat_windows"] == [[0, 4, 10]] and "heartbeats held" in out
    code, out, err = in_process(capsys, "reproduce", scenario, "--kafka", "3.9.2", "--plan-only", "--json", "-")
    assert code == 0 and json.loads(out) == data and "heartbeats held" in err


def load_steps(path) -> list:
    return json.loads(path.read_text())["steps"]


def test_reproduce_json_dash_is_json_alone_on_stdout(capsys, monkeypatch):
    """The header and every step's lines go to stderr with --json -: stdout parses as the report."""
    _scripted_cluster(monkeypatch)
    code, out, err = in_process(capsys, "reproduce", _FINDING_1, "--kafka", "4.4.0", "--json", "-")
    assert code == 0, err
    data = json.loads(out)
    assert data["result"] == "matched" and data["command"] == "reproduce"
    assert "model expects:" in err and "Reproduce " in err and "Verdict: " in err


# ---- checkpoints whose header lies, and a zlib bomb (issue 46, item 17) ------------------------------------------

def _rewritten(data: bytes, edit_search=None, frontier: bytes | None = None) -> bytes:
    """The checkpoint with its header's search figures edited (``edit_search(search)``) and/or its frontier
    section replaced, every checksum recomputed: what a hand edit that knows the format produces."""
    import hashlib

    from explorer.checkpoint import MAGIC

    start, end = len(MAGIC) + 8, _header_end(data) - 32
    header = json.loads(data[start:end])
    sections, offset = [], _header_end(data)
    for s in header["sections"]:
        sections.append(data[offset:offset + s["bytes"]])
        offset += s["bytes"]
    if edit_search is not None:
        edit_search(header["search"])
    if frontier is not None:
        i = [s["name"] for s in header["sections"]].index("frontier")
        sections[i] = frontier
        header["sections"][i].update(bytes=len(frontier), sha256=hashlib.sha256(frontier).hexdigest())
    raw = json.dumps(header).encode()
    return MAGIC + len(raw).to_bytes(8, "little") + raw + hashlib.sha256(raw).digest() + b"".join(sections)


def _set(key, value):
    return lambda search: search.__setitem__(key, value(search[key]) if callable(value) else value)


@pytest.mark.parametrize("name, edit, words", [
    ("depth", _set("depth", lambda d: d + 2), ("its depth",)),
    ("depth-down", _set("depth", lambda d: d - 1), ("its depth",)),
    ("generated", _set("generated", 1), ("transitions",)),
    ("generated-up", _set("generated", lambda g: g * 10), ("transitions",)),
    ("coverage", _set("coverage", lambda c: [0] * len(c)), ("transitions",)),
    ("coverage-moved", _set("coverage", lambda c: c[1:] + c[:1]), ("coverage",)),
    ("elapsed", _set("elapsed_s", -5.0), ("impossible time",)),
    ("failed", _set("failed", ["no_recreate_with_bad_dir"]), ("invariants it says failed",)),
])
def test_a_checkpoint_whose_header_figures_were_edited_is_refused(tmp_path, capsys, checkpoint_bytes, name, edit,
                                                                  words):
    """A header edited with its checksum recomputed used to resume with its figures (depth, transitions,
    coverage, time): they are checked against the data they describe."""
    path = _write(tmp_path, name, _rewritten(checkpoint_bytes, edit))
    one_line(*in_process(capsys, "explore", *SMALL_RUN, "--resume", path), 2, str(path), "damaged", *words)


def test_an_unedited_rewrite_still_resumes(tmp_path, capsys, checkpoint_bytes):
    """The rewriting above changes nothing by itself: the refusals come from the edits."""
    path = _write(tmp_path, "same", _rewritten(checkpoint_bytes))
    code, out, err = in_process(capsys, "explore", *SMALL_RUN[:2], "--max-depth", "4", "-q", "--workers", "1",
                                "--resume", path)
    assert code == 0, err


def test_a_frontier_that_is_a_zlib_bomb_is_refused_before_it_is_inflated(tmp_path, capsys, checkpoint_bytes,
                                                                         monkeypatch):
    """64 MB of zeros in a 64 KB section: inflated up to the bound a frontier of that size can reach, no further."""
    import zlib

    import explorer.checkpoint as checkpoint

    inflated = []
    real = zlib.decompressobj

    class Counting:
        def __init__(self):
            self.inner = real()

        def decompress(self, data, max_length=0):
            out = self.inner.decompress(data, max_length)
            inflated.append(len(out))
            return out

        def __getattr__(self, name):
            return getattr(self.inner, name)

    monkeypatch.setattr(checkpoint.zlib, "decompressobj", Counting)
    path = _write(tmp_path, "bomb", _rewritten(checkpoint_bytes, frontier=zlib.compress(bytes(64 << 20), 9)))
    one_line(*in_process(capsys, "explore", *SMALL_RUN, "--resume", path), 2, str(path), "frontier", "inflate")
    assert max(inflated) < 8 << 20


# ---- errors in plain words (issue 46, item 22) ------------------------------------------------------------------

_PYTHON_WORDS = ("utf-8-sig", "set_int_max_str_digits", "starting at at", "Expecting", "delimiter", "Errno",
                 "OSError", "internal error")


@pytest.mark.parametrize("content, words", [
    (b'{"steps": [\n"abc', ('a string is never closed (a " is missing): it starts at line 2, column 1',)),
    (b'\xef\xbb\xbf{"steps": []}', ("starts with a byte order mark (BOM)",)),
    (b'{"steps": [], "model": {"brokers": ' + b"9" * 5000 + b"}}", ("a number of 5,000 digits at line 1, column 36",)),
    (b'{"steps": [],}', ("a key in double quotes is missing (or a comma is one too many) at line 1, column 14",)),
    (b'{"steps": [] "x": 1}', ("a comma is missing at line 1, column 14",)),
    (b'{"steps": ["a\tb"]}', ("raw control character", "line 1, column 14")),
    (b'{"steps": []} x', ("there is more after the JSON value at line 1, column 15",)),
])
def test_json_errors_name_the_file_the_place_and_the_cause_in_plain_words(tmp_path, capsys, content, words):
    path = _write(tmp_path, "s.json", content)
    line = one_line(*in_process(capsys, "replay", path), 2, f"scenario {path}", *words)
    assert not any(w in line for w in _PYTHON_WORDS), line


def test_a_scenario_field_is_named_as_the_file_names_it_by_reproduce_too(tmp_path, capsys):
    """`"brokers": -1` in the file was reported as the flag --brokers (and, by reproduce, without the file)."""
    path = _write(tmp_path, "k.json", {"model": {"preset": "kraft-tiny", "brokers": -1}, "steps": []})
    one_line(*in_process(capsys, "reproduce", path, "--kafka", "4.4", "--plan-only"), 2,
             f"scenario {path}: model.brokers must be a whole number of at least 1, not -1")


def test_an_os_error_that_escapes_is_one_plain_line_with_its_cause_and_path(capsys, monkeypatch):
    """"internal error: OSError: [Errno 28] ..." lost the cause in Python's words: the OS's cause and the path."""
    def full(*args, **kwargs):
        raise OSError(28, "No space left on device", "/var/cache/jbodcheck/kafka/4.4.0/libs/x.jar")

    monkeypatch.setattr(engine_runs, "bfs", full)
    line = one_line(*in_process(capsys, "explore", *SMALL_RUN), 3)
    assert line == "jbodcheck: failure: No space left on device: /var/cache/jbodcheck/kafka/4.4.0/libs/x.jar", line


# ---- Kafka releases and the cache (`kafka fetch`, realkafka/cluster/release.py; fake Maven: tests/support/fake_tools.py) ---

def _fetch(tmp_path, mvn, *versions, cache=None):
    from support.fake_tools import fake_tools, mvn_calls

    tools = fake_tools(tmp_path, mvn)
    if cache is not None:
        tools["env"]["JBODCHECK_KAFKA_CACHE"] = str(cache)
    p = run("kafka", "fetch", *versions, env_extra=tools["env"])
    return p, mvn_calls(tools), tools["cache"]


def _fetch_line(p, code, *words):
    """One error line after what the fetch said it does (the Maven step it began), no traceback."""
    lines = [line for line in p.stderr.splitlines() if line.strip()]
    assert lines and all(line.startswith("jbodcheck: fetching Kafka ") for line in lines[:-1]), p.stderr
    return one_line(p.returncode, p.stdout, lines[-1] + "\n", code, *words)


def test_a_release_maven_central_does_not_serve_is_bad_input_and_leaves_nothing(tmp_path):
    from support.fake_tools import NOT_SERVED

    p, calls, cache = _fetch(tmp_path, f"printf '%s' '{NOT_SERVED.format(v='9.9.9')}'; exit 1", "9.9.9")
    line = _fetch_line(p, 2, "no such Kafka release 9.9.9", "served: 3.7.0 to 4.4.0")
    assert line.endswith("written)"), line          # whole words: nothing cut
    assert len(calls) == 1 and "-Dkafka.version=9.9.9" in calls[0]
    assert not (cache / "9.9.9").exists()


def test_a_release_known_not_to_exist_is_refused_without_maven(tmp_path):
    from realkafka.cluster.release import known_absent, resolve

    for version in ("3.10.0", "3.7.9", "3.8.2"):
        with pytest.raises(ValueError, match=f"no such Kafka release {version} .*served: 3.7.0 to 4.4.0"):
            resolve(version)
    assert known_absent("3.9.3") is None and known_absent("4.4.1") is None and known_absent("5.0.0") is None
    p, calls, cache = _fetch(tmp_path, "exit 1", "3.10.0")
    proc_line(p, 2, "no such Kafka release 3.10.0", "served: 3.7.0 to 4.4.0")
    assert calls == [] and not cache.exists()


BAD_VERSIONS = ["3.9.2\n", " 3.9.2", "\u0663.\u0669.\u0662", "3.9.\uff12", "03.9.2", "4.4.0.1", "4.4.", "4.4.0\n"]


def test_a_version_with_a_newline_or_other_digits_never_reaches_maven(tmp_path, monkeypatch):
    """`kafka fetch`, `reproduce --kafka` (resolve) and the harness's fetch refuse them before Maven runs."""
    from realkafka.cluster import release

    monkeypatch.setenv(release.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setattr(release.processes, "run", lambda *a, **k: pytest.fail(f"Maven ran: {a}"))
    for version in BAD_VERSIONS:
        for call in (release.resolve, release.fetch):
            with pytest.raises(ValueError, match="is not a Kafka release"):
                call(version)
    assert release.resolve("3.9") == "3.9.2" and release.resolve("4.4") == "4.4.0"
    assert not (tmp_path / "cache").exists()
    p, calls, _ = _fetch(tmp_path, "exit 1", "3.9.2\n")
    proc_line(p, 2, "is not a Kafka release")
    assert calls == []


def test_a_maven_failure_is_one_line_cut_between_words_and_leaves_nothing(tmp_path):
    long = "[ERROR] Failed to execute goal on project x: " + "transfer failed because the network is down " * 12
    p, calls, cache = _fetch(tmp_path, f"echo '{long}'; exit 1", "4.3.1")
    line = _fetch_line(p, 3, "Maven could not fetch Kafka 4.3.1")
    assert line.endswith(" ...") and line[:-4].rsplit(" ", 1)[1] in long.split(), line    # a whole word
    assert len(calls) == 1
    assert not (cache / "4.3.1").exists()


def test_kafka_fetch_takes_x_y_as_its_newest_patch_and_says_nothing_of_maven_when_cached(tmp_path):
    from realkafka.cluster.release import STAMP, _classes_dir, _classes_stamp, _libs_stamp

    cache = tmp_path / "cache"
    for part, stamp in ((cache / "4.4.0" / "libs", _libs_stamp()), (_classes_dir(cache / "4.4.0"), _classes_stamp())):
        part.mkdir(parents=True)
        (part / STAMP).write_text(stamp + "\n")
    p, calls, _ = _fetch(tmp_path, "exit 1", "4.4", cache=cache)
    assert p.returncode == 0 and p.stdout.split() == ["4.4.0", str(cache / "4.4.0" / "libs")], p.stderr
    assert calls == [] and p.stderr == ""


@pytest.mark.parametrize("where", ["a file", "under /dev/full", "/dev/full"])
def test_an_unusable_kafka_cache_is_bad_input_naming_the_path_and_the_reason(tmp_path, where):
    cache = {"a file": tmp_path / "cache-file", "under /dev/full": Path("/dev/full/cache"),
             "/dev/full": Path("/dev/full")}[where]
    if where == "a file":
        cache.write_text("not a directory\n")
    elif not Path("/dev/full").exists():
        pytest.skip("no /dev/full")
    p, calls, _ = _fetch(tmp_path, "exit 1", "4.4.0", cache=cache)
    line = proc_line(p, 2, f"the Kafka cache {cache} cannot be used")
    assert any(reason in line for reason in ("Not a directory", "File exists")), line
    assert calls == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes in a read-only directory")
def test_a_read_only_kafka_cache_is_bad_input(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    cache.chmod(0o555)
    try:
        p, calls, _ = _fetch(tmp_path, "exit 1", "4.4.0", cache=cache)
    finally:
        cache.chmod(0o755)
    proc_line(p, 2, f"the Kafka cache {cache} cannot be used", "Permission denied")


# ---- options checked before any work (issue 46, item 15) ---------------------------------------------------------

def test_prove_refuses_a_configuration_the_model_refuses_before_the_z3_work(capsys, monkeypatch):
    import explorer.cli.prove_kraft as prove_kraft

    monkeypatch.setattr(prove_kraft, "run", lambda *a, **k: pytest.fail("the z3 work began"))
    one_line(*in_process(capsys, "prove", "--variant", "kraft", "--kafka", "3.9", "--option", "elr=true"), 2,
             "elr=true needs Kafka 4.0 or later")


@pytest.mark.parametrize("fixes", [True, False])
@pytest.mark.parametrize("configs", ["", " , "])
def test_compare_refuses_configs_that_name_nothing(capsys, monkeypatch, fixes, configs):
    import explorer.cli.compare as compare
    import explorer.cli.compare_fixes as compare_fixes

    monkeypatch.setattr(compare_fixes, "compare_fixes", lambda *a, **k: pytest.fail("the table ran"))
    monkeypatch.setattr(compare, "compare", lambda *a, **k: pytest.fail("the table ran"))
    args = ["compare", *(["--fixes"] if fixes else []), "--configs", configs]
    one_line(*in_process(capsys, *args), 2, "--configs", "names no configuration")


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "-1", "0.5", "NaN"])
def test_a_step_timeout_that_is_not_a_finite_number_of_seconds_from_1_is_refused(capsys, value):
    scenario = SCENARIOS / "kraft-finding-1-replica-recreated-over-failed-dir.json"
    one_line(*in_process(capsys, "reproduce", scenario, "--kafka", "4.4", "--plan-only", "--step-timeout", value),
             2, "--step-timeout")


def test_checkpoint_every_nan_is_refused(capsys):
    one_line(*in_process(capsys, "explore", *SMALL_RUN, "--checkpoint-every", "nan"), 2, "--checkpoint-every",
             "not a finite number of seconds")


@pytest.mark.parametrize("value", ["3.90", "4.40", "3.9.2\n4", "\u0663.\u0669", "4.4.0x"])
def test_option_kafka_is_read_as_text_not_as_a_json_number(capsys, value):
    one_line(*in_process(capsys, "explore", "--preset", "kraft-tiny", "--max-depth", "1", "-q", "--option",
                         f"kafka={value}"), 2, "kafka must be a release")


def test_option_kafka_still_takes_a_release_given_as_a_number_or_as_a_json_string(capsys):
    for value in ("3.9", '"4.1.2"', "4.0"):
        code, _, err = in_process(capsys, "explore", "--preset", "kraft-tiny", "--max-depth", "1", "-q", "--option",
                                  f"kafka={value}")
        assert code == 0, (value, err)


@pytest.mark.parametrize("name", ["", " "])
def test_a_blank_plugin_is_refused(capsys, name):
    one_line(*in_process(capsys, "explore", *SMALL_RUN, "--plugin", name), 2, "--plugin takes a module name")
