"""The Spark engine (spark_explore) against the local BFS, on a real local Spark (2 cores), and its CLI errors.

One SparkContext serves the whole module; the CLI's own runs in this process reuse it.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import attrs
import pytest

from explorer.cli import main as cli_main
from explorer.search import SearchOptions, bfs
from invariants import Invariant
from explorer.catalog import select_invariants as select
from model import Model, fingerprint
from explorer.catalog import preset_config
from model.storage.state import B_CRASHES

from support.profiles import THOROUGH

pytest.importorskip("pyspark")
pytest.importorskip("numpy")

from spark_explore import SparkOptions, explore_spark  # noqa: E402
from spark_explore import session  # noqa: E402
from explorer.catalog import build_model

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COUNTS = ("result", "distinct_states", "states_generated", "depth", "coverage")

needs_java = pytest.mark.skipif(shutil.which("java") is None and not os.environ.get("JAVA_HOME"),
                                reason="Spark needs Java 17+")


@pytest.fixture(scope="module")
def sc():
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("Spark needs Java 17+")
    handle = session.start(SparkOptions(master="local[2]"))
    yield handle.sc
    handle.stop()


def _counts(result) -> dict:
    return {k: getattr(result, k) for k in COUNTS}


def _run_both(name: str, sc, *, invariants=None, partitions=None, spark_options=None, symmetry=False, **search):
    model = build_model(preset_config(name, **search.pop("model", {})), symmetry=symmetry)
    invs = select() if invariants is None else invariants
    local = bfs(model, invs, SearchOptions(**search))
    spark_options = spark_options or SparkOptions(partitions=partitions)
    lines: list[str] = []
    spark = explore_spark(model, invs, SearchOptions(progress=lines.append, **search), spark_options, sc=sc)
    return model, local, spark, lines


def _replay_fails(model: Model, violation) -> None:
    """Replay the trace's actions from the initial state with model.step; the invariant fails at the end."""
    state = model.init_states()[0]
    previous = action = None
    for step, (expected_action, expected_state) in enumerate(violation.trace[1:], start=1):
        name = model.rules[expected_action.rule].name
        previous = state
        action, state = model.step(state, name, expected_action.args)
        assert fingerprint(state) == fingerprint(expected_state), f"step {step} does not replay"
    inv = violation.invariant
    if inv.kind == "transition":
        assert inv.check(model, previous, action, state) is not None
    else:
        assert inv.check(model, state) is not None


def test_tiny_counts_equal_bfs(sc):
    """Both engines exhaust the same space: tiny with one fault in the ci profile (2,121 states), tiny itself
    (87,862 states without symmetry) under the thorough profile."""
    _, local, spark, lines = _run_both("tiny", sc, **({} if THOROUGH else {"model": {"max_faults": 1}}))
    assert local.result == "ok"
    assert _counts(spark) == _counts(local)
    assert spark.engine == "spark" and spark.violations == []
    # One progress line per level: level, frontier, distinct so far, seconds (levels 0..depth, and usually
    # the empty level that ends the search).
    assert len(lines) in (spark.depth + 1, spark.depth + 2)
    assert lines[0].startswith("level 0  frontier 1  distinct 1  ")
    assert all(line.startswith(f"level {i}  frontier ") and line.split()[-3].endswith("s")
               for i, line in enumerate(lines))
    assert f"distinct {spark.distinct_states:,}  " in lines[-1]


@pytest.mark.long_run
def test_tiny_counts_equal_bfs_up_to_dir_symmetry(sc):
    """With dir symmetry both engines dedup by the canonical fingerprint. They may expand different concrete
    members of a class (each keeps its own first), but the reduction is sound, so every count is the same."""
    depth = 14 if THOROUGH else 10
    model, local, spark, _ = _run_both("tiny", sc, symmetry=True, partitions=3, max_depth=depth)
    assert model.symmetry and local.result == "bounded"
    assert _counts(spark) == _counts(local)
    plain = bfs(build_model(preset_config("tiny")), select(), SearchOptions(max_depth=depth))
    assert spark.distinct_states < plain.distinct_states, "the reduction merged some states"


def test_medium_with_per_partition_records_counts_equal_bfs(sc):
    """medium's max_records is one value per partition (a list in the configuration's dict)."""
    model, local, spark, _ = _run_both("medium", sc, symmetry=True, max_depth=6)
    assert model.cfg.as_dict()["max_records"] == [1, 0] and local.result == "bounded"
    assert _counts(spark) == _counts(local)


def test_counts_do_not_depend_on_partitions(sc):
    _, local, spark, _ = _run_both("tiny", sc, partitions=3, max_depth=9)
    assert local.result == "bounded"
    assert _counts(spark) == _counts(local)


def test_max_depth_counts_equal_bfs(sc):
    for depth in (0, 1, 6):
        _, local, spark, _ = _run_both("tiny", sc, max_depth=depth)
        assert _counts(spark) == _counts(local), depth


@pytest.mark.slow
@pytest.mark.long_run
def test_small_bounded_counts_equal_bfs(sc):
    _, local, spark, _ = _run_both("small", sc, max_depth=8)
    assert local.result == "bounded"
    assert _counts(spark) == _counts(local)


@pytest.mark.parametrize("symmetry", [False, True], ids=["plain", "dir-symmetry"])
@pytest.mark.long_run(ids=["dir-symmetry"])
def test_legacy_violation_has_a_shortest_trace_that_replays(sc, symmetry):
    model, local, spark, _ = _run_both("small", sc, symmetry=symmetry, model={"variant": "legacy"})
    assert model.symmetry is symmetry
    assert local.result == spark.result == "violation"
    assert spark.depth == local.depth
    [expected] = local.violations
    assert len(spark.violations) >= 1
    for violation in spark.violations:
        assert len(violation.trace) == len(expected.trace)
        _replay_fails(model, violation)
    assert spark.spark["notes"], "a violation run says that its counts may differ from BFS's"
    # The pick among violations at the same depth does not depend on the partitioning.
    _, _, spark3, _ = _run_both("small", sc, partitions=3, symmetry=symmetry, model={"variant": "legacy"})
    assert [[a for a, _ in v.trace] for v in spark3.violations] == [[a for a, _ in v.trace] for v in spark.violations]


@pytest.mark.long_run
def test_all_violations_exhausts_with_bfs_counts(sc):
    """Every legacy violation of tiny (the longest trace is 13 steps): to depth 13 in the ci profile (41,311 states,
    the same violations), exhausted under thorough."""
    bound = {} if THOROUGH else {"max_depth": 13}
    model, local, spark, _ = _run_both("tiny", sc, all_violations=True, model={"variant": "legacy"}, **bound)
    assert local.result == "violation"
    assert _counts(spark) == _counts(local)
    by_id = {v.invariant.id: len(v.trace) for v in local.violations}
    assert {v.invariant.id: len(v.trace) for v in spark.violations} == by_id
    for violation in spark.violations:
        _replay_fails(model, violation)


def _no_crash(model, state):
    return "a broker crashed" if state.budget[B_CRASHES] else None


def test_an_invariant_from_outside_the_packages_travels_to_the_executors(sc):
    # Defined here, in a module the Python workers cannot import: it is shipped with the tasks, by value.
    inv = Invariant("test_no_crash", "state", "No broker ever crashes.", "test", _no_crash)
    model, local, spark, _ = _run_both("tiny", sc, invariants=[inv])
    assert local.result == spark.result == "violation"
    assert spark.depth == local.depth
    [violation] = spark.violations
    assert len(violation.trace) == len(local.violations[0].trace)
    _replay_fails(model, violation)


def test_reliable_checkpoints(sc, tmp_path):
    """Every second level is checkpointed with a manifest naming it; the previous checkpoint's files go; a
    completed run leaves nothing behind."""
    directory = tmp_path / "ckpt"
    seen = []

    def look(figures):
        manifest = json.loads((directory / "jbodcheck-spark-manifest.json").read_text())
        rdd_dirs = sorted(os.path.basename(d) for d, _, files in os.walk(directory) if "part-00000" in files)
        seen.append((figures["level"], manifest["level"], manifest["rdd"].rsplit("/", 1)[-1], rdd_dirs))

    model = build_model(preset_config("tiny"))
    spark = explore_spark(model, select(), SearchOptions(max_depth=5),
                          SparkOptions(checkpoint_dir=str(directory), checkpoint_every=2), sc=sc, on_level=look)
    assert _counts(spark) == _counts(bfs(model, select(), SearchOptions(max_depth=5)))
    assert spark.spark["recovery"] == "reliable-checkpoint"
    assert [(level, saved) for level, saved, _, _ in seen] == [(0, 0), (1, 0), (2, 2), (3, 2), (4, 4), (5, 4)]
    assert all(rdd_dirs == [rdd] for _, _, rdd, rdd_dirs in seen), "only the manifest's checkpoint is kept"
    assert os.listdir(directory) == []


@pytest.mark.parametrize("max_states", [1, 9, 100])
def test_max_states_is_exact(sc, max_states):
    """--max-states N ends with exactly N distinct states, as BFS does (1 is the initial state alone; 9 ends
    level 1 exactly, 100 is inside level 3)."""
    model = build_model(preset_config("tiny"))
    options = SearchOptions(max_states=max_states)
    local = bfs(model, select(), options)
    spark = explore_spark(model, select(), options, SparkOptions(partitions=2), sc=sc)
    assert (spark.result, spark.distinct_states, spark.depth) == ("bounded", max_states, local.depth)
    assert spark.spark["notes"], "the report says which states the last level kept"
    if max_states == 1:
        assert spark.states_generated == local.states_generated == 0


def test_max_states_keeps_the_same_states_on_any_partitioning(sc):
    """The last level keeps its new states with the smallest fingerprints, checked but not expanded: the
    counts and coverage do not depend on the partitioning."""
    model = build_model(preset_config("tiny"))
    runs = [explore_spark(model, select(), SearchOptions(max_states=500), SparkOptions(partitions=p), sc=sc)
            for p in (2, 3)]
    assert runs[0].distinct_states == 500 and _counts(runs[0]) == _counts(runs[1])


class _FailsOn:
    """A state invariant that fails on one state, named by its fingerprint."""

    def __init__(self, fp: int):
        self.fp = fp

    def __call__(self, model, state):
        return "the marked state" if model.fingerprint(state) == self.fp else None


def _levels(model, depth: int) -> list[list]:
    """The BFS levels up to depth, as lists of new states."""
    init = model.init_states()[0]
    seen, levels = {model.fingerprint(init)}, [[init]]
    for _ in range(depth):
        new = []
        for state in levels[-1]:
            for _, after in model.successors(state):
                if (fp := model.fingerprint(after)) not in seen:
                    seen.add(fp)
                    new.append(after)
        levels.append(new)
    return levels


@pytest.mark.parametrize("rank, result", [(9, "violation"), (10, "bounded")], ids=["last-kept", "first-dropped"])
def test_max_states_checks_exactly_the_kept_states(sc, rank, result):
    """With --max-states ending inside level 3 with 10 of its states, the 10 with the smallest fingerprints are
    kept and checked; a violation in the next one is not reported (it was not visited)."""
    model = build_model(preset_config("tiny"))
    levels = _levels(model, 3)
    third = sorted(model.fingerprint(state) for state in levels[3])
    before = sum(len(level) for level in levels[:3])
    inv = Invariant("test_marked", "state", "Fails on one state.", "test", _FailsOn(third[rank]))
    spark = explore_spark(model, [inv], SearchOptions(max_states=before + 10), SparkOptions(partitions=3), sc=sc)
    assert spark.result == result and spark.distinct_states == before + 10
    if result == "violation":
        [violation] = spark.violations
        assert len(violation.trace) == 4 and model.fingerprint(violation.trace[-1][1]) == third[rank]


def _dies_on_a_crash(model, state):
    if state.budget[B_CRASHES]:
        os._exit(7)          # the Python worker dies: on local[N] Spark does not retry the task
    return None


def test_a_dead_python_worker_is_a_run_error_naming_how_far_the_search_got(sc):
    from spark_explore import SparkRunError

    inv = Invariant("test_dies", "state", "Kills its Python worker on a crashed broker.", "test", _dies_on_a_crash)
    with pytest.raises(SparkRunError) as info:
        explore_spark(build_model(preset_config("tiny")), [inv], SearchOptions(), SparkOptions(partitions=2), sc=sc)
    message = str(info.value)
    assert message.startswith("the Spark search failed after 1 complete level(s), 1 distinct states, depth 0: "), message
    assert message.endswith("a task failed 1 time(s): Python worker exited unexpectedly (crashed)")
    # The SparkContext is still usable afterwards.
    assert explore_spark(build_model(preset_config("tiny")), select(), SearchOptions(max_depth=1), sc=sc).distinct_states == 9


def _interrupt_after(level: int):
    def on_level(figures):
        if figures["level"] == level:
            raise KeyboardInterrupt
    return on_level


def _interrupted_run(sc, directory, model, stop_after: int, **search):
    options = SparkOptions(checkpoint_dir=str(directory), checkpoint_every=3, partitions=2)
    result = explore_spark(model, select(), SearchOptions(**search), options, sc=sc, on_level=_interrupt_after(stop_after))
    assert result.result == "interrupted"
    assert (directory / "jbodcheck-spark-manifest.json").exists()
    return options


def test_resume_from_the_checkpoint_dir_gives_bfs_counts(sc, tmp_path):
    model = build_model(preset_config("tiny"))
    options = _interrupted_run(sc, tmp_path, model, 4, max_depth=6)   # the last reliable checkpoint: level 3
    lines: list[str] = []
    resumed = explore_spark(model, select(), SearchOptions(max_depth=6, progress=lines.append),
                            attrs.evolve(options, resume=True, partitions=None), sc=sc)
    assert lines[0].startswith("resuming after level 3  distinct ") and lines[1].startswith("level 4  ")
    assert _counts(resumed) == _counts(bfs(model, select(), SearchOptions(max_depth=6)))
    assert resumed.spark["levels"] == 7
    assert os.listdir(tmp_path) == [], "a completed run leaves no checkpoint behind"


def test_resume_refuses_another_search(sc, tmp_path):
    from spark_explore import SparkSetupError

    options = attrs.evolve(_interrupted_run(sc, tmp_path, build_model(preset_config("tiny")), 4), resume=True)
    with pytest.raises(SparkSetupError, match="of another search: it differs in model.variant"):
        explore_spark(build_model(preset_config("tiny", variant="legacy")), select(), SearchOptions(), options, sc=sc)
    with pytest.raises(SparkSetupError, match="differs in partitions"):
        explore_spark(build_model(preset_config("tiny")), select(), SearchOptions(), attrs.evolve(options, partitions=3),
                      sc=sc)
    with pytest.raises(SparkSetupError, match="already at --max-depth"):
        explore_spark(build_model(preset_config("tiny")), select(), SearchOptions(max_depth=3), options, sc=sc)


# -- the CLI -------------------------------------------------------------------------------------------

def _cli(capsys, *args) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        cli_main(list(args))
    out, err = capsys.readouterr()
    return exit_info.value.code, out, err


def test_cli_json_report_equals_bfs(sc, capsys):
    for flag, symmetry in (("--symmetry", True), ("--no-symmetry", False)):
        code, out, err = _cli(capsys, "explore", "--engine", "spark", "--preset", "tiny", "--max-depth", "8",
                              "--spark-partitions", "2", flag, "--json", "-")
        assert code == 0
        report = json.loads(out)
        code_bfs, out_bfs, _ = _cli(capsys, "explore", "--preset", "tiny", "--max-depth", "8", flag,
                                    "--json", "-", "-q")
        assert code_bfs == 0
        expected = json.loads(out_bfs)
        assert report["engine"] == "spark"
        assert report["symmetry"] is symmetry and expected["symmetry"] is symmetry
        for key in ("result", "distinct_states", "states_generated", "depth", "coverage"):
            assert report[key] == expected[key], (flag, key)
    assert report["spark"]["partitions"] == 2 and report["spark"]["collision_probability"] < 1e-9
    assert "[spark] level 0  frontier 1  distinct 1" in err


def test_cli_legacy_trace_replays_with_jbodcheck_replay(sc, capsys, tmp_path):
    code, out, _ = _cli(capsys, "explore", "--engine", "spark", "--preset", "small", "--variant", "legacy",
                        "--json", "-", "-q")
    assert code == 1
    report = json.loads(out)
    code_bfs, out_bfs, _ = _cli(capsys, "explore", "--preset", "small", "--variant", "legacy", "--json", "-", "-q")
    assert code_bfs == 1
    expected = json.loads(out_bfs)
    assert report["depth"] == expected["depth"]
    assert len(report["violations"][0]["trace"]) == len(expected["violations"][0]["trace"])

    model = build_model(preset_config("small", variant="legacy"))
    result = explore_spark(model, select(), SearchOptions(), SparkOptions(), sc=sc)
    steps = [model.rules[a.rule].label(a.args) for a, _ in result.violations[0].trace[1:]]
    scenario = tmp_path / "spark-trace.json"
    scenario.write_text(json.dumps({"model": {"preset": "small", "variant": "legacy"}, "steps": steps}))
    code, out, _ = _cli(capsys, "replay", str(scenario))
    assert code == 1
    assert f"VIOLATION of {result.violations[0].invariant.id}" in out


def _cli_process(*args, tmpdir=None, timeout=120) -> subprocess.CompletedProcess:
    env = dict(os.environ, TMPDIR=str(tmpdir)) if tmpdir is not None else None
    return subprocess.run([sys.executable, "-m", "explorer", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=timeout, env=env)


def _one_error_line(proc) -> str:
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("jbodcheck: error: ")
    assert "Traceback" not in proc.stderr
    return lines[0]


@pytest.mark.parametrize("master", ["nonsense", "local[0]", "spark://"])
def test_cli_bad_master(master):
    line = _one_error_line(_cli_process("explore", "--preset", "tiny", "--engine", "spark", "--master", master))
    assert "--master" in line


@pytest.mark.slow
@needs_java
def test_cli_master_that_spark_rejects(tmp_path):
    # Well formed, so Spark itself is started and refuses it: still one line, no Spark log on the terminal.
    line = _one_error_line(_cli_process("explore", "--preset", "tiny", "--engine", "spark", "--master",
                                        "nosuchscheme://somewhere", tmpdir=tmp_path))
    assert "cannot start Spark" in line
    assert str(tmp_path) in line, "the line names the kept log file"


def test_cli_unusable_checkpoint_dir(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    line = _one_error_line(_cli_process("explore", "--preset", "tiny", "--engine", "spark",
                                        "--checkpoint-dir", str(blocker / "checkpoints")))
    assert "--checkpoint-dir" in line


@pytest.mark.parametrize("conf", ["no-equals-sign", "=value", "not.spark.key=1"])
def test_cli_malformed_spark_conf(conf):
    line = _one_error_line(_cli_process("explore", "--preset", "tiny", "--engine", "spark", "--spark-conf", conf))
    assert "--spark-conf" in line


def test_cli_resume_without_a_checkpoint_is_bad_input(sc, capsys, tmp_path):
    code, _, err = _cli(capsys, "explore", "--preset", "tiny", "--engine", "spark", "--resume", str(tmp_path), "-q")
    assert code == 2
    assert err.strip() == f"jbodcheck: error: no Spark checkpoint to resume in {tmp_path} (no " \
                          "jbodcheck-spark-manifest.json: the run completed, or wrote no reliable checkpoint yet)"


def test_cli_spark_options_need_the_spark_engine():
    line = _one_error_line(_cli_process("explore", "--preset", "tiny", "--master", "local[2]"))
    assert "--engine spark" in line
