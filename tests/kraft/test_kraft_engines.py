"""Every engine on KRaft mode (issue 31): BFS on 1 and 2 workers, DFS, random walks, Spark, `fuzz`, `replay`, the
HTML/ITF/DOT outputs, checkpoint and resume, and `--liveness` with KRaft's own liveness properties
(invariants/kraft/liveness.py), each shown to fail on a model that breaks it.

The configurations are explicit (kraft-tiny-faults' preset with its shape pinned), so that a change of the preset does
not move what these tests check; every expected count is computed here by BFS, none is written down. The
default profile runs SMALL (kraft-tiny-faults with one fault: thousands of states, under a second); the thorough one
(JBODCHECK_PROFILE=thorough) runs the kraft-tiny-faults preset itself where the issue asks for it (Spark's counts)."""
from __future__ import annotations

import json
import os
import shutil

import attrs
import pytest

from explorer.catalog import build_model, preset_config
from explorer.fuzz import minimize
from explorer.liveness import check_liveness
from explorer.scenario import replay
from explorer.search import SearchOptions, bfs
from invariants.kraft import liveness as kraft_liveness
from model.kraft import controller
from model.spec.invariant import LIVENESS_KINDS, invariants_in

from support.profiles import THOROUGH
from support.cli import cli

# kraft-tiny-faults' shape, pinned: 2 brokers x 2 dirs, 1 partition, RF 2, no record, a dir failure, a crash, a restart,
# a repair; NO_DATA with two faults (finding 1's configuration), SMALL with one.
SHAPE = dict(max_records=0, consumer=False, max_dir_failures=1, max_crashes=1, max_restarts=1, max_fixes=1)
NO_DATA = dict(SHAPE, max_faults=2)
SMALL = dict(SHAPE, max_faults=1)
SMALL_FLAGS = ("--preset", "kraft-tiny-faults", "--max-records", "0", "--no-consumer", "--max-dir-failures", "1",
               "--max-crashes", "1", "--max-restarts", "1", "--max-fixes", "1", "--max-faults", "1")
FINDING = "no_recreate_over_offline_copy"
COUNTS = ("result", "distinct_states", "states_generated", "depth", "coverage")


def kraft(**overrides):
    return build_model(preset_config("kraft-tiny-faults", **overrides))


def counts(result) -> dict:
    return {k: getattr(result, k) for k in COUNTS}


def search(model, **options):
    return bfs(model, list(model.invariants), SearchOptions(all_violations=True, **options))


@pytest.fixture(scope="module")
def small():
    model = kraft(**SMALL)
    return model, search(model, workers=1)


# ---- BFS, DFS, random walks ------------------------------------------------------------------------------------

def test_bfs_on_two_workers_gives_one_workers_counts(small):
    model, one = small
    assert one.result == "ok" and one.distinct_states > 1000
    assert counts(search(model, workers=2)) == counts(one)


@pytest.mark.slow
def test_bfs_on_two_workers_gives_one_workers_counts_on_finding_1s_configuration():
    if not THOROUGH:
        pytest.skip("hundreds of thousands of states twice: JBODCHECK_PROFILE=thorough")
    model = kraft(**NO_DATA)
    one = search(model, workers=1)
    assert one.result == "violation" and FINDING in [v.invariant.id for v in one.violations]
    two = search(model, workers=2)
    assert counts(two) == counts(one)
    assert [(v.invariant.id, len(v.trace)) for v in two.violations] == \
        [(v.invariant.id, len(v.trace)) for v in one.violations]


def test_dfs_exhausts_the_same_states_as_bfs(small):
    model, one = small
    from explorer.search import dfs

    result = dfs(model, list(model.invariants), SearchOptions(all_violations=True))
    assert result.result == "ok"
    assert (result.distinct_states, result.states_generated, result.coverage) == \
        (one.distinct_states, one.states_generated, one.coverage)
    assert result.depth >= one.depth          # a depth-first path to a state is never shorter than BFS's


def test_random_walks_are_seeded_and_stay_in_the_reachable_space(small):
    model, one = small
    out = cli("explore", *SMALL_FLAGS, "--engine", "random", "--walks", "200", "--seed", "3", "-q", "--json", "-")
    again = cli("explore", *SMALL_FLAGS, "--engine", "random", "--walks", "200", "--seed", "3", "-q", "--json", "-")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["engine"] == "random" and report["result"] == "bounded"
    assert 1 < report["distinct_states"] <= one.distinct_states
    assert sum(report["coverage"].values()) == report["states_generated"] > 0
    assert {k: v for k, v in json.loads(again.stdout).items() if k not in ("elapsed_s", "states_per_s")} == \
        {k: v for k, v in report.items() if k not in ("elapsed_s", "states_per_s")}


# ---- Spark -----------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def sc():
    pytest.importorskip("pyspark")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("Spark needs Java 17+")
    from spark_explore import SparkOptions, session

    handle = session.start(SparkOptions(master="local[2]"))
    yield handle.sc
    handle.stop()


def _spark_counts_equal_bfs(model, sc):
    from spark_explore import SparkOptions, explore_spark

    invariants = list(model.invariants)
    local = bfs(model, invariants, SearchOptions(all_violations=True))
    spark = explore_spark(model, invariants, SearchOptions(all_violations=True), SparkOptions(partitions=2), sc=sc)
    assert spark.engine == "spark"
    assert counts(spark) == counts(local)
    assert [v.invariant.id for v in spark.violations] == [v.invariant.id for v in local.violations]
    return local


@pytest.mark.long_run
def test_spark_gives_bfs_exact_counts_on_small_kraft(sc):
    assert _spark_counts_equal_bfs(kraft(**SMALL), sc).result == "ok"


@pytest.mark.slow
def test_spark_gives_bfs_exact_counts_on_kraft_tiny(sc):
    """The issue's acceptance: Spark on kraft-tiny (the preset as it is) gives BFS's exact counts."""
    if not THOROUGH:
        pytest.skip("the kraft-tiny preset on local Spark takes minutes: JBODCHECK_PROFILE=thorough")
    model = build_model(preset_config("kraft-tiny"))
    assert _spark_counts_equal_bfs(model, sc).result in ("ok", "violation")


# ---- fuzz and replay -------------------------------------------------------------------------------------------

def _violates(model, actions) -> list[str]:
    """The invariants replay (as `jbodcheck replay`) finds broken along the actions."""
    from explorer.fuzz import scenario_steps
    from explorer.scenario import Scenario

    result, _trace, _failed = replay(model, Scenario(model.cfg.as_dict(), tuple(scenario_steps(model, actions)), {}),
                                     list(model.invariants))
    return [v.invariant.id for v in result.violations]


@pytest.mark.long_run
def test_fuzz_variant_kraft_on_the_command_line_saves_a_scenario_that_replays(tmp_path):
    scenario = tmp_path / "fuzz.json"
    bounds = [f"--{k.replace('_', '-')}={v}" for k, v in NO_DATA.items() if k.startswith("max_")]
    run = cli("fuzz", "--variant", "kraft", "--brokers", "2", "--dirs", "2", "--partitions", "1", "--rf", "2",
              "--no-consumer", "--model-bounds", *bounds,
              "--examples", "1000", "--steps", "30", "-q", "--json", "-", "--save-scenario", scenario)
    assert run.returncode == 1, run.stderr
    report = json.loads(run.stdout)
    assert report["model"]["variant"] == "kraft"
    (violation,) = report["violations"]
    assert violation["invariant"] == FINDING
    # Shrunk (Hypothesis, then minimize): no longer than Hypothesis's run, no shorter than BFS's shortest trace.
    assert len(violation["steps"]) <= report["hypothesis"]["shrunk_steps"]
    model = kraft(**NO_DATA)
    shortest = bfs(model, list(model.invariants), SearchOptions(workers=1)).violations[0]
    assert len(violation["steps"]) >= len(shortest.trace) - 1
    replayed = cli("replay", scenario, "--json", "-")
    assert replayed.returncode == 1, replayed.stderr
    again = json.loads(replayed.stdout)
    assert [v["invariant"] for v in again["violations"]] == [FINDING]
    assert again["violations"][0]["trace"][-1]["state"] == violation["trace"][-1]["state"]


def test_minimize_keeps_the_violation_and_never_lengthens_the_trace():
    """Finding 1's shortest run, with a protocol step (no fault) of the other broker before each step where one
    fits, shrinks back: still violating, no longer than the padded run."""
    model = kraft(**NO_DATA)
    shortest = [a for a, _ in bfs(model, list(model.invariants), SearchOptions(workers=1)).violations[0].trace[1:]]
    state, padded = model.init_states()[0], []
    for action in shortest:
        for extra, probe in model.successors(state):
            if model.rules[extra.rule].fair and extra.args[:1] == (1,) and \
                    any(x == action for x, _ in model.successors(probe)):
                padded.append(extra)
                state = probe
                break
        padded.append(action)
        state = model.step(state, model.rules[action.rule].name, action.args)[1]
    assert len(padded) > len(shortest) and FINDING in _violates(model, padded)
    finding = next(i for i in model.invariants if i.id == FINDING)
    shrunk, message = minimize(model, finding, padded)
    assert len(shrunk) <= len(padded) and message
    assert FINDING in _violates(model, shrunk)


def test_replay_of_a_kraft_scenario_saved_by_explore(tmp_path):
    scenario = tmp_path / "finding.json"
    run = cli("explore", *SMALL_FLAGS[:-2], "--max-faults", "2", "--workers", "1", "-q", "--save-scenario", scenario)
    assert run.returncode == 1, run.stderr
    saved = json.loads(scenario.read_text())
    assert saved["model"]["variant"] == "kraft" and FINDING in saved["description"]
    replayed = cli("replay", scenario, "--json", "-")
    assert replayed.returncode == 1, replayed.stderr
    report = json.loads(replayed.stdout)
    assert [v["invariant"] for v in report["violations"]] == [FINDING]
    assert len(report["violations"][0]["trace"]) == len(saved["steps"]) + 1


# ---- the outputs: HTML, ITF, DOT -------------------------------------------------------------------------------

def test_html_itf_and_dot_of_a_kraft_trace(tmp_path):
    from explorer.reports.itf import decode, itf_steps
    from explorer.reports.render import state_dict
    from explorer.scenario import parse_step

    report, html, itf, dot = (tmp_path / n for n in ("r.json", "r.html", "r.itf.json", "g.dot"))
    run = cli("explore", *SMALL_FLAGS[:-2], "--max-faults", "2", "--workers", "1", "-q", "--json", report,
              "--html", html, "--itf", itf)
    assert run.returncode == 1, run.stderr
    (violation,) = json.loads(report.read_text())["violations"]
    steps = [t["action"] for t in violation["trace"][1:]]
    page = html.read_text()
    assert page.startswith("<!DOCTYPE html>") and FINDING in page
    assert page.count('<article class="step') == len(steps) + 1
    assert all(step.split(" + ")[0] in page for step in steps)
    assert "http://" not in page and "https://" not in page and " src=" not in page
    viewed = cli("view", report, "--html", tmp_path / "v.html")
    assert viewed.returncode == 0, viewed.stderr
    assert (tmp_path / "v.html").read_text() == page

    # The ITF trace replays through Model.step, every state as the model has it.
    trace = json.loads(itf.read_text())
    assert trace["#meta"]["invariant"] == FINDING and trace["#meta"]["model"]["variant"] == "kraft"
    assert {"brokers", "controller"} <= set(trace["vars"]) and len(trace["states"]) == len(steps) + 1
    model = kraft(**NO_DATA)
    state = model.init_states()[0]
    for number, (itf_state, text) in enumerate(zip(trace["states"][1:], itf_steps(trace)), start=1):
        name, args = parse_step(model, text, number)
        action, state = model.step(state, name, args)
        assert decode({k: v for k, v in itf_state.items() if k not in ("#meta", "action")}) == \
            json.loads(json.dumps(state_dict(model, state))), number

    # DOT: the graph of the first states, the counterexample's steps highlighted when it is in it.
    drawn = cli("explore", *SMALL_FLAGS[:-2], "--max-faults", "2", "--workers", "1", "-q", "--max-states", "2000",
                "--invariant", FINDING, "--dot", dot)
    assert drawn.returncode in (0, 1), drawn.stderr
    text = dot.read_text()
    assert text.startswith("digraph jbodcheck {") and text.rstrip().endswith("}")
    assert text.count("->") > 100 and "BrokerReplay(broker=0)" in text
    if drawn.returncode == 1:
        for i, step in enumerate(steps, start=1):
            assert f'label="{i}: {step.split(" + ")[0]}"' in text


# ---- checkpoint and resume -------------------------------------------------------------------------------------

@pytest.mark.parametrize("workers", ["1", "2"])
def test_checkpoint_and_resume_give_one_runs_counts(small, tmp_path, workers):
    model, one = small
    ck = tmp_path / "search.ckpt"
    stopped = cli("explore", *SMALL_FLAGS, "--all-violations", "--workers", workers, "-q", "--checkpoint", ck,
                  "--max-states", str(one.distinct_states // 3), "--json", "-")
    assert stopped.returncode == 0, stopped.stderr
    assert json.loads(stopped.stdout)["result"] == "bounded" and ck.exists()
    resumed = cli("explore", *SMALL_FLAGS, "--all-violations", "--workers", workers, "-q", "--resume", ck,
                  "--json", "-")
    assert resumed.returncode == 0, resumed.stderr
    report = json.loads(resumed.stdout)
    assert (report["result"], report["distinct_states"], report["states_generated"], report["depth"]) == \
        (one.result, one.distinct_states, one.states_generated, one.depth)
    # The report also lists the rules of the design's features that are off, with 0 firings.
    assert {r: n for r, n in report["coverage"].items() if n} == {r: n for r, n in one.coverage.items() if n}


# ---- liveness --------------------------------------------------------------------------------------------------

KRAFT_LIVENESS = [i.id for i in invariants_in(kraft_liveness)] + ["dir_failure_acknowledged_or_broker_stops"]


def _liveness(model):
    props = [i for i in model.all_invariants if i.kind in LIVENESS_KINDS]
    assert [i.id for i in props] == KRAFT_LIVENESS
    return check_liveness(model, props)


def _premise_states(model, prop) -> int:
    """How many reachable states have an instance of the property's premise."""
    init = model.init_states()[0]
    seen, frontier, found = {init}, [init], 0
    while frontier:
        nxt = []
        for state in frontier:
            found += bool(prop.p(model, state))
            for _, after in model.successors(state):
                if after not in seen:
                    seen.add(after)
                    nxt.append(after)
        frontier = nxt
    return found


def test_kraft_declares_the_facts_files_liveness_properties_and_they_hold_on_small_kraft(small):
    model, one = small
    result = _liveness(model)
    assert result.result == "ok" and result.distinct_states == one.distinct_states
    premises = {i.id: _premise_states(model, i) for i in model.all_invariants if i.kind in LIVENESS_KINDS}
    # Every premise but the election's occurs: every event that makes an ISR member acceptable elects in the
    # same batch (handleBrokerUnfenced, PartitionChangeBuilder), so a leaderless partition with an acceptable
    # member is never reached; the broken model below reaches it.
    assert premises.pop("kraft_leader_eventually") == 0
    assert all(premises.values()), premises


def test_the_liveness_command_line_on_kraft(tmp_path):
    named = [arg for prop in KRAFT_LIVENESS for arg in ("--invariant", prop)]
    run = cli("explore", *SMALL_FLAGS, "--liveness", *named, "-q", "--json", "-")
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["engine"] == "liveness" and report["result"] == "ok" and report["violations"] == []


def _unfair(model, rule: str):
    """The model with one rule's steps no longer weakly fair (they may be taken, never have to be)."""
    model.action_space = tuple((ri, attrs.evolve(r, fair=False) if r.name == rule else r, args)
                               for ri, r, args in model.action_space)
    return model


def _unfencing_elects_nothing(monkeypatch):
    from model.kraft.metadata import K_BROKER_CHANGE, BrokerChange

    monkeypatch.setattr(controller, "broker_unfenced",
                        lambda m, image, b: [BrokerChange(K_BROKER_CHANGE, b, False, None)])
    # One dir a broker, two crashes: the last ISR member is fenced (no leader), restarts and is unfenced. At 3.9: with
    # ELR (the default 4.4) the fencing empties the ISR into the ELR, and the property's premise reads the ISR.
    return kraft(**dict(SMALL, dirs=1, max_dir_failures=0, max_fixes=0, max_crashes=2, max_faults=2,
                        options={"kafka": "3.9"}))


def _assignments_always_stale(monkeypatch):
    monkeypatch.setattr(controller, "assign_replicas_to_dirs",
                        lambda m, image, b, epoch, entries: ([], "STALE_BROKER_EPOCH", ()))
    return kraft(**SMALL)


def _dir_failures_ignored(monkeypatch):
    monkeypatch.setattr(controller, "directories_offline", lambda m, image, b, offline: [])
    return kraft(**SMALL)


BROKEN = {
    # property: (how the model breaks it, in words; the broken model)
    "kraft_leader_eventually": ("handleBrokerUnfenced elects no leader", _unfencing_elects_nothing),
    "kraft_assignments_drain": ("every AssignReplicasToDirs answer is STALE_BROKER_EPOCH", _assignments_always_stale),
    "dir_failure_acknowledged_or_broker_stops": ("heartbeats are not fair",
                                                 lambda mp: _unfair(kraft(**SMALL), "BrokerHeartbeat")),
    "kraft_replica_dir_recorded": ("assignments are never sent (not fair)",
                                   lambda mp: _unfair(kraft(**SMALL), "BrokerSendAssignments")),
    "kraft_leadership_leaves_failed_dir": ("handleDirectoriesOffline moves nothing", _dir_failures_ignored),
}


@pytest.mark.parametrize("prop", KRAFT_LIVENESS)
def test_each_liveness_property_fails_on_a_model_that_breaks_it(prop, monkeypatch):
    _how, broken = BROKEN[prop]
    model = broken(monkeypatch)
    result = _liveness(model)
    assert result.result == "violation"
    assert prop in [v.invariant.id for v in result.violations]
