"""SIGINT and SIGTERM at every moment (explorer/signals.py): the command exits with 128 + the signal, writes one
line on stderr (never a traceback) and the report wherever one can be written.

The moments are named points of the code (``JBODCHECK_TEST_SIGNAL``, explorer/signals.py ``test_point``): the
signal is sent when the point is reached (deterministic), or a given time after it (timed: wherever the run is
then). The Spark engine is interrupted in this process on one SparkContext (many moments, one JVM) and through
the CLI; the thorough profile (tests/support/profiles.py) adds moments. benchmarks/signal_loop.sh runs these tests in a
loop (docs/testing.md).
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

import pytest

from explorer import signals
from explorer.search import SearchOptions, explore
from explorer.catalog import preset_config
from support.profiles import THOROUGH
from explorer.catalog import build_model, select_invariants

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
INT, TERM = int(signal.SIGINT), int(signal.SIGTERM)

needs_spark = pytest.mark.skipif(shutil.which("java") is None and not os.environ.get("JAVA_HOME"),
                                 reason="Spark needs Java 17+")


def _cli(args, spec=None, *, timeout=300):
    """Run ``python -m explorer ARGS`` with the signal hook ``spec``: (exit code, stdout, stderr)."""
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop(signals.TEST_ENV, None)
    if spec:
        env[signals.TEST_ENV] = spec
    p = subprocess.run([sys.executable, "-m", "explorer", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=timeout, start_new_session=True,
                       preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    return p.returncode, p.stdout, p.stderr


def _one_line(code, out, err, sig):
    """Exit 128 + sig, exactly one non-empty stderr line (jbodcheck's, naming the signal), no traceback."""
    assert code == 128 + sig, (code, err[-3000:])
    assert "Traceback" not in err and "Traceback" not in out, err[-3000:]
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("jbodcheck: interrupted by signal "), err[-3000:]
    assert f"signal {sig}" in lines[0]
    return lines[0]


# ---- the Spark engine in this process: one JVM, many moments -------------------------------------------------

SPARK_MOMENTS = [                     # (JBODCHECK_TEST_SIGNAL spec, what it interrupts)
    ("search-start:15", "before the first job"),
    ("level-start#2:2", "between levels (the second level about to start)"),
    ("job-running#4:15", "inside a job (the fourth level's, as Spark runs it)"),
    ("level-done#3:2", "after a level's counts, before the next"),
    ("level-start#5:2+0.05*2", "two SIGINTs 50 ms apart, inside the fifth level"),
    ("search-start:15+0.7", "timed: 0.7 s into the search"),
]
if THOROUGH:
    SPARK_MOMENTS += [(f"level-start#{n}:{sig}", "between levels") for n, sig in ((1, 2), (3, 15), (8, 15), (12, 2))]
    SPARK_MOMENTS += [(f"job-running#{n}:{sig}", "inside a job") for n, sig in ((1, 2), (2, 15), (6, 2), (10, 15))]
    SPARK_MOMENTS += [(f"level-done#{n}:{sig}", "after a level") for n, sig in ((1, 15), (7, 2))]
    SPARK_MOMENTS += [(f"search-start:{sig}+{s}", "timed") for sig, s in ((2, 0.2), (15, 1.5), (2, 2.5), (15, 4.0))]


@pytest.fixture(scope="module")
def sc():
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("Spark needs Java 17+")
    pytest.importorskip("pyspark")
    from spark_explore import session
    from spark_explore.options import SparkOptions

    handle = session.start(SparkOptions(master="local[2]"))
    yield handle.sc
    handle.stop()


def _join_senders() -> None:
    """Wait for the timed hooks' senders: a late signal must not land in the next search of this process."""
    for t in threading.enumerate():
        if t.name == "jbodcheck-test-signal":
            t.join(timeout=30)


@pytest.fixture
def late_signals():
    """A signal that a timed hook sends after the search ended goes here, not to pytest (the search restores
    the handlers it found)."""
    got = []
    previous = {s: signal.signal(s, lambda signum, _f: got.append(signum)) for s in signals.SIGNALS}
    yield got
    _join_senders()
    for s, handler in previous.items():
        signal.signal(s, handler)


@pytest.fixture(scope="module")
def bfs_by_depth():
    """Distinct states up to each depth (local BFS with --max-depth): what the Spark engine's complete levels hold."""
    model = build_model(preset_config("tiny"))
    cache = {}

    def distinct(depth: int) -> int:
        if depth not in cache:
            result = explore("bfs", model, select_invariants(), SearchOptions(max_depth=depth))
            assert result.result == "bounded" or (result.result == "ok" and result.depth <= depth), result.result
            cache[depth] = result.distinct_states
        return cache[depth]

    return distinct


@pytest.mark.parametrize("spec,moment", SPARK_MOMENTS, ids=[s for s, _ in SPARK_MOMENTS])
def test_the_spark_engine_stops_at_any_moment_with_the_last_complete_level(sc, monkeypatch, late_signals,
                                                                          bfs_by_depth, spec, moment):
    from spark_explore.engine import explore_spark
    from spark_explore.options import SparkOptions

    monkeypatch.setenv(signals.TEST_ENV, spec)
    monkeypatch.setattr(signals, "_counts", {})
    sig = signals._parse(spec)[2]
    model = build_model(preset_config("tiny"))
    result = explore_spark(model, select_invariants(), SearchOptions(), SparkOptions(), sc=sc, signals=signals)
    _join_senders()                        # (a second signal of the spec may still be on its way)
    if result.result != "interrupted":     # a timed signal that came after the search: recorded, result complete
        assert "+" in spec and result.result == "ok" and set(late_signals) == {sig}, (result.result, moment)
        return
    assert result.signal == sig, moment
    levels = result.spark["levels"]
    assert "Stopped by a signal" in " ".join(result.spark["notes"])
    if levels == 0:
        assert (result.distinct_states, result.states_generated, result.depth) == (0, 0, 0)
    else:
        # The counts are exactly those of the complete levels: states up to depth levels - 1.
        assert result.depth == levels - 1
        assert result.distinct_states == bfs_by_depth(levels - 1), moment
        assert result.states_generated > 0 and sum(result.coverage.values()) >= result.states_generated
    if spec.startswith(("level-start#", "level-done#")) and "+" not in spec:
        nth = signals._parse(spec)[1]
        assert levels == (nth - 1 if spec.startswith("level-start") else nth), moment
    # The SparkContext is still usable: the next search runs (the next test) and so does a job now.
    assert sc.parallelize(range(10), 2).count() == 10


# ---- the Spark engine through the CLI: the exit code, the line, the report -----------------------------------

SPARK_CLI = [
    ("job-running#3:15", "interrupted"),       # inside a job
    ("spark-start:2", "interrupted"),          # before Spark started (the JVM starts, the report has 0 states)
    ("search-end:15", "ok"),                   # after the search, while the driver stops and writes the report
]
if THOROUGH:
    SPARK_CLI += [("level-done#6:2", "interrupted"), ("spark-stop:15+0.1", None), ("job-running#8:2+0.2*2", None)]


@needs_spark
@pytest.mark.parametrize("spec,result", SPARK_CLI, ids=[s for s, _ in SPARK_CLI])
@pytest.mark.long_run(ids=["search-end:15", "job-running#3:15"])
def test_spark_through_the_cli_exits_128_plus_the_signal_with_a_report(tmp_path, spec, result):
    pytest.importorskip("pyspark")
    report = tmp_path / "report.json"
    sig = signals._parse(spec)[2]
    code, out, err = _cli(["explore", "--engine", "spark", "--master", "local[2]", "--preset", "tiny", "-q",
                           "--json", str(report)], spec)
    line = _one_line(code, out, err, sig)
    data = json.loads(report.read_text())
    assert data["result"] == (result or data["result"]) and data["result"] in ("interrupted", "ok")
    if data["result"] == "interrupted":
        assert data["signal"] == sig and "the result is partial" in line
        assert "Result: interrupted." in out
    else:                                      # the search had ended: its report is complete, the exit code says
        assert data["signal"] is None and data["distinct_states"] == 63_335 and "its outputs are complete" in line


# ---- start-up, and the local engines ---------------------------------------------------------------------------

STARTUP = [("imports:2", False), ("imports:15", False), ("startup:2", False), ("imports:2+0.05", None),
           ("imports:2+0.3", None)]
if THOROUGH:
    STARTUP += [(f"imports:{sig}+{s}", None) for sig in (2, 15) for s in (0.01, 0.1, 0.2, 0.5, 0.8, 1.2)]


@pytest.mark.parametrize("spec,reported", STARTUP, ids=[s for s, _ in STARTUP])
def test_a_signal_during_start_up_is_one_line(tmp_path, spec, reported):
    """While the CLI imports its modules and builds the model (or, timed, wherever it is then): one line, no
    traceback, 128 + the signal; a report only if the search had begun, and then an interrupted one."""
    report = tmp_path / "report.json"
    sig = signals._parse(spec)[2]
    code, out, err = _cli(["explore", "--preset", "small", "-q", "--json", str(report)], spec)
    line = _one_line(code, out, err, sig)
    if report.exists():
        assert reported is not False
        assert json.loads(report.read_text())["result"] == "interrupted" and "the result is partial" in line
    else:
        assert "had not started" in line or "before a result could be reported" in line


def _wait_for_progress(proc) -> None:
    line = proc.stderr.readline()           # the first progress line: the search runs
    assert line, proc.stderr.read()


@pytest.mark.parametrize("workers", [2] + ([1] if THOROUGH else []))
def test_two_ctrl_c_50_ms_apart_still_write_the_report(tmp_path, workers):
    report = tmp_path / "report.json"
    proc = subprocess.Popen([sys.executable, "-m", "explorer", "explore", "--preset", "small", "--workers",
                             str(workers), "--json", str(report)], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env={k: v for k, v in os.environ.items() if k != signals.TEST_ENV},
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    _wait_for_progress(proc)
    os.killpg(proc.pid, signal.SIGINT)       # as a terminal's Ctrl-C: to the whole process group, twice
    time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "Traceback" not in out, err
    assert [line for line in err.splitlines() if line.startswith("jbodcheck:")] == [
        "jbodcheck: interrupted by signal 2: the result is partial"]
    data = json.loads(report.read_text())
    assert data["result"] == "interrupted" and data["signal"] == 2 and data["distinct_states"] > 1


def test_a_closed_terminal_sighup_stops_a_command_as_sigterm_does(tmp_path):
    """SIGHUP (a closed terminal, a dropped ssh session) mid-command: it stops as on SIGTERM, its outputs are
    written, exit 129 (128 + 1). (`reproduce`: tests/realkafka/test_reproduce.py, the cluster's directory removed.)"""
    js = tmp_path / "designs.json"
    code, out, err = _cli(["compare", "--configs", "tiny", "-q", "--json", str(js)], "compare-cell#1:1")
    assert "the comparison is partial" in _one_line(code, out, err, 1)
    assert json.loads(js.read_text())["signal"] == 1


def test_an_ignored_sighup_stays_ignored():
    """Under nohup the user asked the command to outlive its terminal: install() leaves SIGHUP ignored."""
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    installed = False
    try:
        installed = signals.install()
        assert installed and signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
        assert signal.getsignal(signal.SIGTERM) is signals._handler
    finally:
        if installed:
            signals.uninstall()
        signal.signal(signal.SIGHUP, previous)


# ---- compare ---------------------------------------------------------------------------------------------------

COMPARE = [("compare-cell#2:2+0.5", 2), ("compare-cell#1:15", 0)]
if THOROUGH:
    COMPARE += [("compare-cell#3:15+0.2*2", 3), ("compare-cell#1:2+1.0", 1)]


@pytest.mark.parametrize("spec,reached", COMPARE, ids=[s for s, _ in COMPARE])
def test_compare_stops_on_the_first_signal_and_writes_a_partial_table(tmp_path, spec, reached):
    """The cell under way keeps its partial report; the rows after it are not run (their cells say so); the
    Markdown and the JSON are written; the exit code is 128 + the signal."""
    sig = signals._parse(spec)[2]
    md, js = tmp_path / "designs.md", tmp_path / "designs.json"
    code, out, err = _cli(["compare", "--configs", "tiny", "-q", "--markdown", str(md), "--json", str(js)], spec)
    line = _one_line(code, out, err, sig)
    assert "the comparison is partial" in line
    data = json.loads(js.read_text())
    assert data["signal"] == sig
    results = [report["result"] for report in data["cells"]["tiny"].values()]
    run = [r for r in results if r != "not reached"]
    assert results[len(run):] == ["not reached"] * (len(results) - len(run))
    assert len(run) <= reached and len(results) > len(run)
    if run:
        assert run[-1] in ("interrupted", "ok", "violation") and all(r in ("ok", "violation") for r in run[:-1])
    table = md.read_text()
    assert "not reached (interrupted)" in table and f"**Interrupted** (signal {sig})" in table
    if run and run[-1] == "interrupted":
        assert "unknown (interrupted)" in table


@pytest.mark.parametrize("half_imported", [True, False])
def test_the_handler_counts_a_sigint_for_the_plugin_guard_even_while_that_module_is_half_imported(
        monkeypatch, half_imported):
    """The handler tells invariants.plugins of a SIGINT (a user's Ctrl-C, not a plugin's own KeyboardInterrupt); a
    signal that comes while that module is still being imported (no note_sigint yet: the signal loop once caught
    an AttributeError there, a traceback at start-up) is still just the interrupt."""
    import types

    from invariants import plugins

    module = types.ModuleType("invariants.plugins") if half_imported else plugins
    monkeypatch.setitem(sys.modules, "invariants.plugins", module)
    monkeypatch.setattr(signals._state, "mode", signals.RAISE)
    monkeypatch.setattr(signals._state, "received", None)
    before = plugins.sigints_received()
    try:
        with pytest.raises(KeyboardInterrupt):
            signals._handler(signal.SIGINT, None)
    finally:
        signals._reset()
    assert plugins.sigints_received() == before + (0 if half_imported else 1)


def _processes_with(marker: str) -> list[int]:
    """The pids whose command line holds ``marker`` (the JVM's carries every --spark-conf)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    if marker.encode() in f.read():
                        found.append(int(entry))
            except OSError:
                pass
    return found


@needs_spark
@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc")
@pytest.mark.parametrize("spec", ["job-running#3:15", "level-done#2:2", None])
@pytest.mark.long_run(ids=["None", "job-running#3:15"])
def test_the_jvm_does_not_outlive_jbodcheck(tmp_path, spec):
    """The JVM this run launched is gone when jbodcheck exits, after a signal or not (issue 41: it outlived it
    by about 3 s, until it noticed its stdin had closed)."""
    pytest.importorskip("pyspark")
    import uuid

    marker = f"spark.jbodcheck.test.marker={uuid.uuid4().hex}"
    code, out, err = _cli(["explore", "--engine", "spark", "--master", "local[2]", "--preset", "tiny", "-q",
                           "--max-depth", "6", "--spark-conf", marker], spec)
    left = _processes_with(marker)
    for pid in left:                           # end what the run left (before the assertion: never leak it)
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    assert code in ((128 + signals._parse(spec)[2],) if spec else (0,)), err[-2000:]
    assert not left, f"the JVM outlived jbodcheck: pids {left}"


# ---- fuzz and prove write their report (issue 46, item 6) -------------------------------------------------------

@pytest.mark.parametrize("spec, variant, found", [
    ("fuzz-example#3:2", "kip112", False),                 # SIGINT while it searches: no violation met yet
    ("fuzz-example#12:15", "kip112-no-isnew-check", True),  # SIGTERM while Hypothesis shrinks a failing run
])
def test_fuzz_stopped_by_a_signal_writes_an_interrupted_report(tmp_path, spec, variant, found):
    """The contract: an interrupted run's summary and report are written, "result": "interrupted" (fuzz used to
    write nothing; SIGTERM inside Hypothesis's data generation was an internal error). A failing run met before
    the signal is kept, as it was found."""
    sig = signals._parse(spec)[2]
    report = tmp_path / "report.json"
    code, out, err = _cli(["fuzz", "--preset", "tiny", "--variant", variant, "--examples", "200", "-q", "--json",
                           str(report)], spec)
    _one_line(code, out, err, sig)
    data = json.loads(report.read_text())
    assert data["result"] == "interrupted" and data["signal"] == sig and "Result: interrupted" in out
    assert bool(data["violations"]) == found and data["hypothesis"]["shrunk_steps"] is None
    if found:
        assert "before it was shrunk" in out


@pytest.mark.parametrize("spec, variant", [("prove:2", "kip112"), ("prove:15", "kraft")])
def test_prove_stopped_by_a_signal_writes_an_interrupted_report(tmp_path, spec, variant):
    pytest.importorskip("z3")
    sig = signals._parse(spec)[2]
    report = tmp_path / "report.json"
    code, out, err = _cli(["prove", "--variant", variant, "--json", str(report)], spec)
    _one_line(code, out, err, sig)
    data = json.loads(report.read_text())
    assert data["result"] == "interrupted" and data["signal"] == sig and data["command"] == "prove"
    assert "nothing is proved" in out


# ---- Maven and javac (realkafka/cluster/processes.py ``run``) ----------------------------------------------------

def _gone(pid: int) -> bool:
    """Ended (a zombie not yet reaped by init counts as ended)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def _poll(condition, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc")
def test_a_sigkilled_kafka_fetch_leaves_no_maven_process(tmp_path):
    """SIGKILL of jbodcheck while Maven runs (a fake `mvn` that started a child of its own): Maven and its child
    end with it (issue 46: Maven's JVM ran on, reparented to init, writing into the cache)."""
    from support.fake_tools import fake_tools

    pids = tmp_path / "pids"
    tools = fake_tools(tmp_path, f"sleep 300 &\necho $! >> {pids}\necho $$ >> {pids}\nwait")
    env = {**os.environ, "PYTHONPATH": ROOT, **tools["env"]}
    proc = subprocess.Popen([sys.executable, "-m", "explorer", "kafka", "fetch", "4.4.0"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    started: list[int] = []
    try:
        assert _poll(lambda: pids.exists() and len(pids.read_text().split()) == 2, 120), "the fake Maven never ran"
        started = [int(p) for p in pids.read_text().split()]
        assert not any(_gone(p) for p in started)
        proc.kill()
        proc.wait(timeout=30)
        assert _poll(lambda: all(_gone(p) for p in started), 30), \
            f"left running: {[p for p in started if not _gone(p)]}"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid in started:
            if not _gone(pid):
                os.kill(pid, signal.SIGKILL)


def test_a_tool_runs_to_its_end_with_its_code_and_output():
    from realkafka.cluster import processes

    done = processes.run(["sh", "-c", "echo out; echo err >&2; exit 7"], cwd=ROOT)
    assert (done.returncode, done.stdout, done.stderr) == (7, "out\n", "err\n")
    assert not processes.live()
