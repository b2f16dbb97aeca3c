"""BFS on worker processes (--workers), the compact visited set and --max-memory.

Counts are never hard-coded: every check compares the multi-worker BFS with the one-process BFS on the same
model (the model keeps growing). The configurations are bounded (--max-faults 1, --max-depth, --max-states)
so that the whole file runs in well under a minute.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from model.spec import codec
from model.spec.codec import decode_states, encode_states
from explorer.search import SearchOptions, explore
from explorer.visited import FingerprintSet, parse_size
from invariants import Invariant
from model import fingerprint
from explorer.catalog import preset_config

from support.helpers import REPO
from explorer.catalog import build_model, select_invariants

ALL = select_invariants()


def bfs(preset, workers, invs=None, model_overrides=None, **options):
    model = build_model(preset_config(preset, **(model_overrides or {})))
    return model, explore("bfs", model, ALL if invs is None else invs, SearchOptions(workers=workers, **options))


def summary(r):
    """Everything a search reports, with traces as (action, fingerprint) pairs."""
    return (r.result, r.distinct_states, r.states_generated, r.depth, r.coverage,
            [(v.invariant.id, v.message, [(a, fingerprint(s)) for a, s in v.trace]) for v in r.violations])


def cli(*args, timeout=240):
    env = {k: v for k, v in os.environ.items() if k != "JBODCHECK_PLUGINS"}
    return subprocess.run([sys.executable, "-m", "explorer", *map(str, args)], capture_output=True, text=True,
                          cwd=REPO, env=env, timeout=timeout)


ONE_FAULT = {"max_faults": 1}


# ---- identical results for every number of workers -------------------------------------------------------------

@pytest.mark.parametrize("preset, overrides, options", [
    ("tiny", ONE_FAULT, {}),                                # exhaustive
    ("small", ONE_FAULT, {"max_depth": 9}),                 # stops at a depth
    ("small", ONE_FAULT, {"max_states": 7777}),             # stops inside a level
    ("tiny", ONE_FAULT, {"max_states": 1}),                 # stops after the first transition
    ("tiny", ONE_FAULT, {"max_depth": 0}),
], ids=["tiny-exhaustive", "small-depth", "small-states", "tiny-one-state", "depth-0"])
def test_two_workers_report_what_one_reports(preset, overrides, options):
    _, one = bfs(preset, 1, model_overrides=overrides, **options)
    _, two = bfs(preset, 2, model_overrides=overrides, **options)
    assert summary(two) == summary(one)
    assert (one.workers, two.workers) == (1, 2)
    if not options:
        assert one.result == "ok" and one.distinct_states > 1000


@pytest.mark.slow
def test_two_workers_exhaust_small_like_one():
    overrides = {**ONE_FAULT, "max_crashes": 0}   # a few seconds: the full small preset takes minutes
    _, one = bfs("small", 1, model_overrides=overrides)
    _, two = bfs("small", 2, model_overrides=overrides)
    assert one.result == "ok"
    assert summary(two) == summary(one)


def test_three_workers_on_two_cores_still_agree():
    _, one = bfs("tiny", 1, model_overrides=ONE_FAULT, max_depth=12)
    _, three = bfs("tiny", 3, model_overrides=ONE_FAULT, max_depth=12)
    assert summary(three) == summary(one)


# ---- violations: the same one, the same shortest trace ---------------------------------------------------------

def test_legacy_violation_and_shortest_trace_do_not_depend_on_workers():
    model, one = bfs("small", 1, model_overrides={"variant": "legacy"})
    _, two = bfs("small", 2, model_overrides={"variant": "legacy"})
    assert one.result == two.result == "violation"
    assert [v.invariant.id for v in two.violations] == [v.invariant.id for v in one.violations]
    assert "no_recreate_with_bad_dir" in [v.invariant.id for v in two.violations]
    assert len(two.violations[0].trace) == len(one.violations[0].trace) == one.depth + 1
    assert summary(two) == summary(one)
    # The trace is a real path: every step replays from the initial state.
    state = model.init_states()[0]
    for action, recorded in two.violations[0].trace[1:]:
        _, state = model.step(state, model.rules[action.rule].name, action.args)
        assert state == recorded


def test_all_violations_agree():
    legacy = {"variant": "legacy"}
    _, one = bfs("tiny", 1, model_overrides=legacy, all_violations=True, max_depth=9)
    _, two = bfs("tiny", 2, model_overrides=legacy, all_violations=True, max_depth=9)
    assert one.violations
    assert summary(two) == summary(one)


def _state_inv(id, check):
    return Invariant(id, "state", "a test invariant", "tests/engines/test_parallel.py", check)


def test_a_state_invariant_fails_on_the_same_state_with_workers():
    """A state invariant (checked by the owner of the new state) that fails deep in the search."""
    inv = _state_inv("test_no_budget_used_twice", lambda model, s: "two events" if sum(s.budget) >= 2 else None)
    runs = [bfs("tiny", w, invs=[inv], model_overrides=ONE_FAULT) for w in (1, 2)]
    (_, one), (_, two) = runs
    assert one.result == "violation"
    assert summary(two) == summary(one)


def test_an_invariant_that_fails_on_the_initial_state():
    inv = _state_inv("test_always_fails", lambda model, s: "always")
    _, two = bfs("tiny", 2, invs=[inv])
    assert two.result == "violation" and two.distinct_states == 1 and len(two.violations[0].trace) == 1


def test_an_error_in_a_worker_is_raised_not_hung():
    def broken(model, s):
        if s.controller.epoch > 1:
            raise ZeroDivisionError("broken invariant")
        return None

    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        bfs("tiny", 2, invs=[_state_inv("test_broken", broken)], model_overrides=ONE_FAULT)


# ---- the compact visited set -----------------------------------------------------------------------------------

@pytest.mark.parametrize("workers", [1, 2])
def test_visited_set_takes_at_most_40_bytes_per_state(workers):
    _, r = bfs("tiny", workers, model_overrides=ONE_FAULT)
    assert r.distinct_states > 1000
    per_state = r.memory["visited_bytes"] / r.distinct_states
    assert per_state <= 40, per_state


def test_fingerprint_set():
    s = FingerprintSet()
    import numpy as np

    s.merge(np.array([5, 1 << 63, 2**64 - 1], dtype=np.uint64))
    s.add_unsorted([7, 0, 3])
    assert s.fps.tolist() == [0, 3, 5, 7, 1 << 63, 2**64 - 1]
    query = np.array([0, 1, 7, 2**64 - 1, 2**64 - 2], dtype=np.uint64)
    assert s.contains(query).tolist() == [True, False, True, True, False]
    assert s.nbytes == 6 * 8


def test_state_blocks_round_trip():
    model = build_model(preset_config("tiny"))
    states, frontier = [], model.init_states()
    for _ in range(4):
        frontier = [after for s in frontier for _, after in model.successors(s)]
        states.extend(frontier)
    decoded = decode_states(encode_states(states))
    assert decoded == states and [type(s) for s in decoded] == [type(s) for s in states]
    assert [fingerprint(s) for s in decoded] == [fingerprint(s) for s in states]
    assert decode_states(encode_states([])) == []
    assert decode_states(encode_states(states), [5, 2, 5]) == [states[5], states[2], states[5]]


def test_decoded_components_are_interned():
    """Equal components decoded in one process are one object (what the model's memos find by identity), also
    across blocks and after a bounded table is cleared."""
    model = build_model(preset_config("tiny"))
    states, frontier = [], model.init_states()
    for _ in range(3):
        frontier = [after for s in frontier for _, after in model.successors(s)]
        states.extend(frontier)
    first, again = decode_states(encode_states(states)), decode_states(encode_states(states[::-1]))[::-1]
    canonical: dict = {}
    for s, t in zip(first, again):
        assert s.controller is t.controller and all(a is b for a, b in zip(s.brokers, t.brokers))
        for broker in s.brokers:
            assert canonical.setdefault(broker, broker) is broker
    small, brokers = codec.Interner(limit=4), [b for s in states for b in s.brokers]
    for at in range(0, len(brokers), 3):
        chunk = brokers[at:at + 3]
        assert small.decode("k", small.encode("k", chunk)) == chunk and len(small.tables["k"][2]) <= 4


# ---- the command line: --workers, --max-memory -----------------------------------------------------------------

def test_cli_reports_the_worker_count_and_the_same_counts():
    reports = {}
    for workers in (1, 2):
        p = cli("explore", "--preset", "tiny", "--max-faults", 1, "--workers", workers, "-q", "--json", "-")
        assert p.returncode == 0, p.stderr
        reports[workers] = json.loads(p.stdout)
    assert reports[1]["workers"] == 1 and reports[2]["workers"] == 2
    for key in ("result", "distinct_states", "states_generated", "depth", "coverage"):
        assert reports[1][key] == reports[2][key], key


@pytest.mark.parametrize("value", ["abc", "0", "-1G", "12X", "", "1.5.2M", "G"])
def test_bad_max_memory_is_bad_input(value):
    p = cli("explore", "--preset", "tiny", "-q", "--max-memory", value)
    assert p.returncode == 2, (p.returncode, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("jbodcheck: error:") and "--max-memory" in lines[0]
    assert "Traceback" not in p.stderr


@pytest.mark.parametrize("args", [["--workers", "0"], ["--engine", "dfs", "--workers", "2"],
                                  ["--engine", "spark", "--max-memory", "1G"]])
def test_bad_worker_options_are_bad_input(args):
    p = cli("explore", "--preset", "tiny", "-q", *args)
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr


@pytest.mark.parametrize("workers", [1, 2])
def test_a_tiny_max_memory_stops_with_bounded(workers):
    p = cli("explore", "--preset", "tiny", "--workers", workers, "--max-memory", "1M", "-q", "--json", "-")
    assert p.returncode == 0, p.stderr
    report = json.loads(p.stdout)
    assert report["result"] == "bounded"
    notes = [line for line in p.stderr.splitlines() if line.startswith("jbodcheck: stopped at --max-memory")]
    assert len(notes) == 1, p.stderr
    assert "Traceback" not in p.stderr


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.long_run(ids=["1"])
def test_max_memory_stops_a_search_under_way(workers):
    """A limit above the start-up footprint: the search runs for a while, then stops with bounded."""
    p = cli("explore", "--preset", "small", "--max-memory", "80M", "--max-depth", 16, "--workers", workers,
            "-q", "--json", "-")
    assert p.returncode == 0, p.stderr
    report = json.loads(p.stdout)
    assert report["result"] == "bounded" and report["workers"] == workers
    assert report["distinct_states"] > 1 and report["depth"] < 16
    assert p.stderr.count("jbodcheck: stopped at --max-memory 80 MB") == 1, p.stderr


def test_workers_do_not_change_dfs_or_random():
    p = cli("explore", "--preset", "tiny", "--max-faults", 1, "--engine", "dfs", "--workers", 1, "-q")
    assert p.returncode == 0, p.stderr


@pytest.mark.parametrize("text, expected", [("512M", 512 << 20), ("2G", 2 << 30), ("1.5g", 3 << 29),
                                            ("300MB", 300 << 20), ("64KiB", 64 << 10), ("4096", 4096)])
def test_parse_size(text, expected):
    assert parse_size(text) == expected


def test_plugins_are_honoured_by_workers(tmp_path):
    plugin = tmp_path / "jbodcheck_parallel_plugin.py"
    plugin.write_text(
        "from invariants import invariant\n"
        "@invariant('parallel_plugin_two_events', kind='state', statement='At most one event.', reference='test')\n"
        "def check(model, state):\n"
        "    return 'two events happened' if sum(state.budget) >= 2 else None\n")
    outs = {}
    for workers in (1, 2):
        p = cli("explore", "--preset", "tiny", "--plugin", plugin, "--invariant", "parallel_plugin_two_events",
                "--workers", workers, "-q", "--json", "-")
        assert p.returncode == 1, p.stderr
        outs[workers] = json.loads(p.stdout)
    assert outs[2]["violations"][0]["invariant"] == "parallel_plugin_two_events"
    assert outs[1]["violations"] == outs[2]["violations"]


def test_symmetry_reduction_gives_the_same_counts_with_workers():
    """The engines dedup by model.fingerprint: with symmetry reduction, of a canonical representative."""
    cfg = preset_config("tiny", **ONE_FAULT)
    try:
        model = build_model(cfg, symmetry=True)
    except TypeError:
        pytest.skip("this model has no symmetry reduction")
    one = explore("bfs", model, ALL, SearchOptions(workers=1))
    two = explore("bfs", model, ALL, SearchOptions(workers=2))
    assert summary(two) == summary(one)
    plain = explore("bfs", build_model(cfg), ALL, SearchOptions(workers=1))
    assert one.distinct_states <= plain.distinct_states
