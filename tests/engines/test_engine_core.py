"""The engine core (explorer/core.py): interrupts end a search with a partial result, --max-states is exact on
every local engine and on workers, every engine reports the fingerprint-collision estimate, and a worker that
dies ends the run with WorkerError instead of a hang."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from model.spec.engine import collision_probability
from explorer.parallel import WorkerError
from explorer.search import SearchOptions, explore
from invariants import Invariant
from explorer.catalog import preset_config
from support.profiles import THOROUGH
from explorer.catalog import build_model, select_invariants

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


@pytest.mark.parametrize("workers,sig,code", [(1, signal.SIGINT, 130), (2, signal.SIGINT, 130),
                                              (1, signal.SIGTERM, 143), (2, signal.SIGTERM, 143)])
def test_a_signal_stops_the_search_with_a_partial_report(tmp_path, workers, sig, code):
    report = tmp_path / "report.json"
    # A new session and default signal dispositions: a background job may otherwise inherit an ignored SIGINT.
    proc = subprocess.Popen([sys.executable, "-m", "explorer", "explore", "--preset", "small", "--workers",
                             str(workers), "-q", "--json", str(report)], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(3)
    workers_pids = _children(proc.pid)
    assert len(workers_pids) == (workers if workers > 1 else 0)
    sent = time.monotonic()
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    assert time.monotonic() - sent < 5
    assert proc.returncode == code, err
    assert "Traceback" not in err and "Traceback" not in out
    data = json.loads(report.read_text())
    assert data["result"] == "interrupted" and data["signal"] == sig
    assert 1 < data["distinct_states"] < 4_045_873 and data["states_generated"] > 0
    assert sum(data["coverage"].values()) >= data["states_generated"]
    assert "Result: interrupted." in out and "stopped by a signal" in out
    for pid in workers_pids:                     # no orphan worker
        assert not os.path.exists(f"/proc/{pid}") or open(f"/proc/{pid}/stat").read().split()[2] == "Z"


def _run(engine: str, workers: int = 1, **options):
    model = build_model(preset_config("small"))
    return explore(engine, model, select_invariants(), SearchOptions(workers=workers, **options))


@pytest.mark.parametrize("engine", ["bfs", "dfs", "random"])
def test_max_states_one_gives_one_state(engine):
    r = _run(engine, max_states=1)
    assert (r.result, r.distinct_states, r.states_generated, r.depth) == ("bounded", 1, 0, 0)


@pytest.mark.parametrize("engine", ["bfs", "dfs", "random"])
def test_max_states_is_exact(engine):
    r = _run(engine, max_states=1234, walks=10_000)
    assert r.result == "bounded" and r.distinct_states == 1234


@pytest.mark.parametrize("bound", [1, 2, 500, 5000, 21_000])
def test_max_states_on_two_workers_equals_one_worker(bound):
    one, two = _run("bfs", 1, max_states=bound), _run("bfs", 2, max_states=bound)
    assert two.distinct_states == bound
    keys = ("result", "distinct_states", "states_generated", "depth", "coverage")
    assert [getattr(two, k) for k in keys] == [getattr(one, k) for k in keys]


@pytest.mark.parametrize("engine,workers", [("bfs", 1), ("bfs", 2), ("dfs", 1), ("random", 1)])
def test_every_engine_reports_the_collision_estimate(engine, workers):
    p = subprocess.run([sys.executable, "-m", "explorer", "explore", "--preset", "tiny", "--max-faults", "1",
                        "--engine", engine, "--workers", str(workers), "--walks", "50", "-q", "--json", "-"],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    data = json.loads(p.stdout)
    n = data["distinct_states"]
    assert data["collision_probability"] == pytest.approx(n * (n - 1) / 2 ** 65) and data["signal"] is None
    assert "Fingerprints: 64-bit" in p.stderr


def test_collision_probability():
    assert collision_probability(0) == collision_probability(1) == 0
    assert collision_probability(236_764) == pytest.approx(1.52e-9, rel=0.01)


def test_a_killed_worker_raises_worker_error_promptly():
    parent = os.getpid()

    def suicidal(model, state):
        if os.getpid() != parent and state.controller.epoch > 1:
            os.kill(os.getpid(), signal.SIGKILL)
        return None

    inv = Invariant("test_kills_its_worker", "state", "never fails; kills the worker", "test", suicidal)
    started = time.monotonic()
    with pytest.raises(WorkerError, match=r"^BFS worker \d \(pid \d+\) was killed by signal 9 \(SIGKILL\)"):
        explore("bfs", build_model(preset_config("tiny")), [inv], SearchOptions(workers=2))
    assert time.monotonic() - started < 30


@pytest.mark.parametrize("sig,code", [(signal.SIGTERM, 143), pytest.param(signal.SIGINT, 130, marks=pytest.mark.skipif(
    not THOROUGH, reason="a second Spark run (20 s); the BFS runs above take both signals: JBODCHECK_PROFILE=thorough"))])
@pytest.mark.long_run(ids=["15-143"])
def test_spark_stops_on_a_signal_with_the_last_complete_level(tmp_path, sig, code):
    pytest.importorskip("pyspark")
    report = tmp_path / "report.json"
    proc = subprocess.Popen([sys.executable, "-m", "explorer", "explore", "--engine", "spark", "--master",
                             "local[2]", "--preset", "small", "--json", str(report)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    # Wait for a few levels (progress lines), then signal the driver.
    lines = []
    while len(lines) < 8:
        line = proc.stderr.readline()
        assert line, "".join(lines)
        lines.append(line)
    sent = time.monotonic()
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    assert time.monotonic() - sent < 20
    assert proc.returncode == code, err
    assert "Traceback" not in err and "Traceback" not in out, err
    data = json.loads(report.read_text())
    assert data["result"] == "interrupted" and data["signal"] == sig and data["distinct_states"] > 1
    assert data["collision_probability"] == data["spark"]["collision_probability"]


def _per_member(members, combine):
    """A state invariant lifted from a check of one member, declared as the kernel's Checker reads it."""
    def declare(member_check):
        def check(model, state):
            return combine(map(member_check, members(state)))
        check.member_check, check.members, check.combine = member_check, members, combine
        return Invariant(member_check.__name__, "state", "", "", check)
    return declare


def test_the_checker_evaluates_per_member_invariants_as_their_plain_checks():
    """Per-member invariants over two member functions (two groups), each with its own way of naming the
    failure: the Checker (which evaluates each group once per distinct member) reports what calling each
    check on the state reports, on every state of a bounded search."""
    from model.spec.engine import Checker

    model = build_model(preset_config("tiny"))
    brokers = lambda state: state.brokers              # noqa: E731
    reversed_brokers = lambda state: state.brokers[::-1]  # noqa: E731

    def first(results):
        return next((f"member {k}: {r}" for k, r in enumerate(results) if r is not None), None)

    def every(results):
        found = [r for r in results if r is not None]
        return "; ".join(found) if found else None

    invs = [_per_member(brokers, first)(lambda b: None if b.up else "down"),
            _per_member(brokers, every)(lambda b: None if b.inbox == () else f"{len(b.inbox)} queued"),
            _per_member(reversed_brokers, first)(lambda b: None if b.up else "down")]
    invs = [Invariant(f"i{k}", i.kind, "", "", i.check) for k, i in enumerate(invs)]
    checker = Checker(model, invs)
    assert len(checker.groups) == 2
    states, frontier = [], model.init_states()
    for _ in range(6):
        frontier = [after for s in frontier for _, after in model.successors(s)][:400]
        states.extend(frontier)
    failing = 0
    for state in states:
        expected = [(i.id, i.check(model, state)) for i in invs if i.check(model, state) is not None]
        assert [(i.id, m) for i, m in checker.check_state(state)] == expected
        failing += bool(expected)
    assert 0 < failing < len(states)
