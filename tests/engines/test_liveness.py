"""Liveness checking (explorer/liveness.py): weak fairness per action instance, fair SCCs, lassos that replay."""
from __future__ import annotations

import json

import numpy as np
import pytest

from explorer.liveness import StateGraph, check_instance, check_liveness, cycle_is_fair
from explorer.scenario import lasso_scenario
from explorer.scenario import load_scenario, replay
from model.spec.invariant import LIVENESS_KINDS, liveness
from explorer.catalog import preset_config
from model.storage.state import OFFLINE
from explorer.catalog import build_model


@liveness("test_a_dir_fails", kind="eventually", statement="Eventually some log dir of some broker fails.",
          reference="KIP-112 (a test property that must fail: DirFail is not fair)")
def a_dir_failed(model, state):
    return any(d == OFFLINE for broker in state.brokers for d in broker.dirs)


def _inbox_waiting(model, state):
    return sum(1 << b for b, broker in enumerate(state.brokers) if broker.up and broker.inbox)


@liveness("test_inbox_handled", kind="leads_to", p=_inbox_waiting,
          statement="A request in a running broker's inbox is eventually handled (or the broker goes down).",
          reference="KIP-112 (a test property that must hold: BrokerLeaderAndIsr and BrokerStopReplica are fair)")
def inbox_empty_or_down(model, state):
    return sum(1 << b for b, broker in enumerate(state.brokers) if not broker.up or not broker.inbox)


@pytest.fixture(scope="module")
def tiny():
    model = build_model(preset_config("tiny"))
    props = [a_dir_failed.invariant, inbox_empty_or_down.invariant]
    props += [i for i in model.all_invariants if i.kind in LIVENESS_KINDS]
    return model, check_liveness(model, props)


def _replays(model, trace, loop_start) -> None:
    """model.step along the lasso's steps gives its states, and the last one is the cycle's first."""
    state = model.init_states()[0]
    for action, expected in trace[1:]:
        _, state = model.step(state, model.rules[action.rule].name, action.args)
        assert state == expected
    assert state == trace[loop_start][1]


def test_rule_fairness_defaults_by_kind_and_admin_rules_are_unfair():
    model = build_model(preset_config("reassignment"))
    fair = {r.name: r.fair for r in model.rules}
    assert not fair["BrokerCrash"] and not fair["Produce"] and not fair["ControllerFailover"]
    assert not fair["CreateTopic"] and not fair["ReassignPartition"]
    assert fair["BrokerLeaderAndIsr"] and fair["ControllerLeaderAndIsrResponse"] and fair["ReplicaFetch"]


def test_liveness_properties_are_not_in_the_default_safety_selection():
    model = build_model(preset_config("tiny"), symmetry=True)
    assert model.symmetry and model.invariants and all(i.kind not in LIVENESS_KINDS for i in model.invariants)
    assert {"leader_eventually", "offline_replica_reported"} <= {i.id for i in model.all_invariants}


def test_eventually_a_dir_fails_fails_with_a_fair_lasso_that_replays(tiny):
    model, result = tiny
    assert result.result == "violation" and result.distinct_states == 87_862
    (v,) = [v for v in result.violations if v.invariant.id == "test_a_dir_fails"]
    assert not any(a_dir_failed(model, s) for _a, s in v.trace)
    assert cycle_is_fair(model, v.trace, v.loop_start)
    _replays(model, v.trace, v.loop_start)


def test_a_property_that_holds_and_the_built_ins_are_ok_on_tiny(tiny):
    _model, result = tiny
    assert {v.invariant.id for v in result.violations} == {"test_a_dir_fails"}


def test_the_lasso_scenario_replays_and_replay_checks_the_loop(tiny, tmp_path):
    model, result = tiny
    data = lasso_scenario(model, result.violations[0], "tiny")
    path = tmp_path / "lasso.json"
    path.write_text(json.dumps(data))
    scenario = load_scenario(str(path))
    assert scenario.loop_start == result.violations[0].loop_start
    outcome, trace, failed = replay(model, scenario, [])
    assert outcome.result == "ok" and not failed and len(trace) == len(result.violations[0].trace)
    # A loop start whose state the run does not return to is a failed expectation.
    data["steps"] = ["CreateTopic(partition=0)"]
    data["loop_start"] = 0
    path.write_text(json.dumps(data))
    _outcome, _trace, failed = replay(model, load_scenario(str(path)), [])
    assert failed and "lasso" in failed[0]


class _Prop:
    id, kind = "synthetic", "eventually"


def _graph(edges, fair, goal, n):
    """A hand-made graph: edges [(source, target, action id)] sorted by source; Q holds in the goal states."""
    edges = sorted(edges)
    offsets = np.searchsorted(np.array([e[0] for e in edges] or [0]), np.arange(n + 1)).astype(np.int64)
    offsets[-1] = len(edges)
    q = np.array([1 if s in goal else 0 for s in range(n)], dtype=np.uint64)
    p = np.array([1] + [0] * (n - 1), dtype=np.uint64)
    return StateGraph(None, None, offsets, np.array([e[1] for e in edges], dtype=np.int32),
                      np.array([e[2] for e in edges], dtype=np.uint16), {"synthetic": p}, {"synthetic": q},
                      np.array(fair, dtype=bool), 0, 0)


def test_a_fair_cycle_is_found_and_visits_a_witness_for_each_fair_action():
    # 0 -a0-> 1 -a1-> 2 -a2-> 1, and 2 -a3-> 3 (the goal), all fair. a3 is enabled in 2 only: the cycle 1, 2 is fair.
    g = _graph([(0, 1, 0), (1, 2, 1), (2, 1, 2), (2, 3, 3)], [True, True, True, True], {3}, 4)
    start, stem, cycle = check_instance(g, _Prop, 0)
    assert start == 0 and [s for _a, s in stem] == [1]
    assert [a for a, _s in cycle] == [1, 2] and cycle[-1][1] == 1


def test_a_cycle_that_never_takes_a_continuously_enabled_fair_action_is_not_fair():
    # As above, but the same fair action a3 leads to the goal from 1 and from 2: enabled all along the cycle.
    g = _graph([(0, 1, 0), (1, 2, 1), (2, 1, 2), (2, 3, 3), (1, 3, 3)], [True, True, True, True], {3}, 4)
    assert check_instance(g, _Prop, 0) is None


def test_a_state_with_only_unfair_steps_is_a_place_to_stay():
    # 0 -a0-> 1 (the goal), a0 unfair: the behaviour may stay in 0 forever.
    g = _graph([(0, 1, 0)], [False], {1}, 2)
    assert check_instance(g, _Prop, 0) == (0, [], [])


def test_cli_liveness_lasso_json_and_replay(tmp_path):
    """explore --liveness on a lasso that needs a step the configuration leaves out (docs/model.md 11.2, L3: with no
    records a target replica never joins the ISR): not a violation (exit 0, result bounded, the lasso under
    "inconclusive" with the step it needs), and its lasso scenario passes `jbodcheck replay`."""
    import subprocess
    import sys

    from support.helpers import REPO

    report, lasso = tmp_path / "report.json", tmp_path / "lasso.json"
    args = ["--brokers", "3", "--dirs", "2", "--partitions", "1", "--rf", "2", "--reassignment", "--max-records", "0",
            "--max-faults", "1", "--invariant", "reassignment_completes", "-q"]
    p = subprocess.run([sys.executable, "-m", "explorer", "explore", *args, "--json", str(report),
                        "--save-lasso", str(lasso)], capture_output=True, text=True, cwd=REPO, timeout=600)
    assert p.returncode == 0, p.stderr[-500:]
    assert "The system stops here (step 14)" in p.stdout
    assert "NOT A VIOLATION of reassignment_completes" in p.stdout and "VIOLATION of" not in p.stdout.replace(
        "NOT A VIOLATION of", "")
    assert "Fair rules this configuration leaves without actions (a bound of 0): ReplicaFetch, LeaderShrinkIsr." \
        in p.stdout
    data = json.loads(report.read_text())
    assert data["symmetry"] is False and data["engine"] == "liveness"
    assert data["result"] == "bounded" and data["violations"] == []
    (v,) = data["inconclusive"]
    assert v["invariant"] == "reassignment_completes" and v["kind"] == "leads_to"
    assert v["needs"] == {"max_records": ["ReplicaFetch(broker=2, partition=0)"]}
    assert v["loop_start"] == len(v["trace"]) - 1 == 14
    assert data["bounds"]["model"]["max_records"] == 0 and data["bounds"]["search"]["exhaustive"] is False
    assert data["bounds"]["fairness"]["fair_rules_without_actions"] == ["ReplicaFetch", "LeaderShrinkIsr"]
    assert json.loads(lasso.read_text())["loop_start"] == 14
    r = subprocess.run([sys.executable, "-m", "explorer", "replay", str(lasso)], capture_output=True, text=True,
                       cwd=REPO, timeout=600)
    assert r.returncode == 0 and "Result: ok." in r.stdout, r.stdout[-500:]


def test_a_lasso_that_needs_no_left_out_step_stays_a_violation():
    """With max_records 0 the data path's fair rules have no actions, but a dir failure (not fair) never has to
    happen whatever the data path does: the lasso is a violation, with nothing it needs."""
    model = build_model(preset_config("tiny", max_records=0))
    result = check_liveness(model, [a_dir_failed.invariant])
    assert result.result == "violation" and result.inconclusive == []
    (v,) = result.violations
    assert v.needs == {}


def test_left_out_progress_names_the_bound_and_the_step():
    """The L3 lasso's end state: with max_records raised to 1, ReplicaFetch of the target replica is enabled there,
    and it has no action in the configuration with max_records 0; with a record (the same state) it is an action
    of the configuration, so nothing is left out."""
    from explorer.liveness import LivenessViolation, left_out_progress

    cfg = dict(brokers=3, dirs=2, partitions=1, rf=2, reassignment=True, max_faults=1)
    model = build_model(_config(max_records=0, **cfg))
    result = check_liveness(model, [i for i in model.all_invariants if i.id == "reassignment_completes"])
    (v,) = result.inconclusive
    assert v.needs == {"max_records": ["ReplicaFetch(broker=2, partition=0)"]}
    with_records = build_model(_config(max_records=1, **cfg))
    again = LivenessViolation(v.invariant, v.message, v.trace, loop_start=v.loop_start)
    assert left_out_progress(with_records, again) == {}


def _config(**kw):
    from model import ModelConfig

    return ModelConfig(**kw)


def test_cli_liveness_says_its_fairness_and_that_por_is_off(tmp_path):
    import subprocess
    import sys

    from support.helpers import REPO

    report = tmp_path / "report.json"
    p = subprocess.run([sys.executable, "-m", "explorer", "explore", "--preset", "tiny", "--max-failovers", "0",
                        "--max-crashes", "0", "--liveness", "--por", "--json", str(report)],
                       capture_output=True, text=True, cwd=REPO, timeout=600)
    assert p.returncode == 0, p.stderr[-500:]
    assert p.stderr.count("partial-order reduction is off for liveness") == 1
    assert "Fairness assumed: weak, per action instance (rule and arguments), of " in p.stdout
    data = json.loads(report.read_text())
    assert data["por"]["used"] is False and "weak fairness" in data["por"]["note"]
    fair = data["bounds"]["fairness"]
    model = build_model(preset_config("tiny", max_failovers=0, max_crashes=0))
    configured = {r.name for _i, r, _a in model.action_space}
    assert fair["fair_rules"] == [r.name for r in model.rules if r.fair and r.name in configured]
    assert "BrokerLeaderAndIsr" in fair["fair_rules"] and "DirFail" in fair["unfair_rules"]
    assert fair["fair_rules_without_actions"] == []
