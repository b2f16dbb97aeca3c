"""Issue 31's candidate findings of kraft-future, each checked step by step against Kafka's code (docs/kraft.md,
"Future replicas"): their scenario files replay to the violation with no bug switch; and a bug switch whose
feature is not in the model is refused (exit 2), not a silent no-op."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from explorer.catalog import build_model, preset_config
from explorer.scenario import load_scenario, replay, parse_step
from support.helpers import SCENARIOS
from model.kraft.bugs import BUGS, TURN_ON, refuse_without_feature
from model.kraft.future import P_NONE, P_QUEUED
from model.spec.errors import ConfigError
from model.storage.state import NO_LEADER

FINDINGS = {  # scenario file -> (the invariants it violates, at its last step)
    # The metadata names the future dir for a log on a failed dir: kraft-core's quiescent checks see it too.
    "kraft-finding-2-reset-promotion-loses-its-revert.json": [
        "leader_is_live_isr_member", "metadata_shows_offline_replicas", "kraft_directories_name_the_log_dir"],
    "kraft-finding-3-assignment-elects-by-the-old-dir.json": ["kraft_leader_passes_leader_acceptor"],
    "kraft-finding-4-stale-future-log-promoted-at-start-up.json": ["no_acked_record_lost"],
}


def _scenario_model(scenario):
    params = dict(scenario.model)
    return build_model(preset_config(params.pop("preset"), **params))


def _states(name):
    """The scenario's model and the states after each of its steps (the initial state first)."""
    scenario = load_scenario(str(SCENARIOS / name))
    model = _scenario_model(scenario)
    states = [model.init_states()[0]]
    for number, text in enumerate(scenario.steps, 1):
        rule, args = parse_step(model, text, number)
        states.append(model.step(states[-1], rule, args)[1])
    return scenario, model, states


@pytest.mark.parametrize("name", sorted(FINDINGS))
def test_a_finding_replays_to_its_violation_at_its_last_step_with_no_switch(name):
    scenario = load_scenario(str(SCENARIOS / name))
    assert "bugs" not in scenario.model.get("options", {})
    model = _scenario_model(scenario)
    result, trace, failed = replay(model, scenario, list(model.invariants))
    assert [(v.invariant.id, len(v.trace) - 1) for v in result.violations] == [
        (i, len(scenario.steps)) for i in FINDINGS[name]]
    assert failed == []  # the facts the description states hold at the end


@pytest.mark.parametrize("name", sorted(FINDINGS))
def test_a_finding_replays_to_exit_1_through_the_cli(name):
    p = _cli("replay", SCENARIOS / name, "--json", "-")
    assert p.returncode == 1, p.stderr
    report = json.loads(p.stdout)
    assert [v["invariant"] for v in report["violations"]] == FINDINGS[name]
    assert report["expectations_failed"] == []


def test_finding_2_a_delta_of_the_partition_resets_a_queued_promotion():
    """ReplicaManager.applyDelta -> maybeAddLogDirFetchers -> ReplicaAlterLogDirsThread.addPartitions puts
    PromotionState(None) over Queued; the dir failure then queues no revert, and Assign(future dir) is still queued."""
    scenario, model, s = _states("kraft-finding-2-reset-promotion-loses-its-revert.json")
    replay_at = scenario.steps.index("BrokerReplay(broker=0)", 4) + 1
    before, after = s[replay_at - 1].brokers[0], s[replay_at].brokers[0]
    assert before.mover == (P_QUEUED,) and after.mover == (P_NONE,)
    assert after.queue == ((0, 1, 1),)  # the promotion's Assign(dir 1), not reverted by the failure that follows
    fail = scenario.steps.index("DirFail(broker=0, dir=0)") + 1
    assert s[fail].brokers[0].queue == ((0, 1, 1),)


def test_finding_2_s_reset_came_with_kafka_16297_s_fix_so_3_7_0_reverts_the_queued_promotion():
    """3.7.0's ReplicaAlterLogDirsThread.addPartitions put no state (the fix's PromotionState(None) came with
    KAFKA-16297's fix in 3.7.1): with the switch (3.7.0's thread) the delta keeps Queued, and the dir failure that
    follows queues Assign(dir 0) over Assign(dir 1): finding 2 does not occur (its step 12 has no batch to replay)."""
    scenario = load_scenario(str(SCENARIOS / "kraft-finding-2-reset-promotion-loses-its-revert.json"))
    model = build_model(preset_config("kraft-future", options={"bugs": "KAFKA-16297"}))
    s = [model.init_states()[0]]
    fail = scenario.steps.index("DirFail(broker=0, dir=0)") + 1
    for number, text in enumerate(scenario.steps[:fail], 1):
        rule, args = parse_step(model, text, number)
        s.append(model.step(s[-1], rule, args)[1])
    replay_at = scenario.steps.index("BrokerReplay(broker=0)", 4) + 1
    assert s[replay_at - 1].brokers[0].mover == (P_QUEUED,) and s[replay_at].brokers[0].mover == (P_QUEUED,)
    assert s[fail].brokers[0].queue == ((0, 0, 1),)  # the revert replaced Assign(dir 1)
    for number, text in enumerate(scenario.steps[fail:fail + 2], fail + 1):  # send and handle Assign(dir 0)
        rule, args = parse_step(model, text, number)
        s.append(model.step(s[-1], rule, args)[1])
    assert s[-1].controller.partitions[0].dirs == (0,) and len(s[-1].controller.log) == len(s[fail].controller.log)


def test_finding_3_the_election_reads_the_old_dir_and_the_record_names_the_offline_one():
    """handleAssignReplicasToDirs: PartitionChangeBuilder's LeaderAcceptor is over the registration before the
    change (Directories[0] = dir 1, online); the record elects broker 0 and sets offline dir 0."""
    _, model, s = _states("kraft-finding-3-assignment-elects-by-the-old-dir.json")
    before, after = s[-2].controller.partitions[0], s[-1].controller.partitions[0]
    assert (before.leader, before.dirs) == (NO_LEADER, (1,))
    assert (after.leader, after.dirs) == (0, (0,))
    assert 0 not in s[-1].controller.registrations[0].dirs  # dir 0 is offline for the controller


# ---- a switch needs its feature ------------------------------------------------------------------------------------

def _cli(*args):
    root = SCENARIOS.parent
    return subprocess.run([sys.executable, "-m", "explorer", *map(str, args)], capture_output=True, text=True,
                          cwd=root, env={**os.environ, "PYTHONPATH": str(root)}, timeout=120)


NEEDS_A_FEATURE = sorted(i for i, bug in BUGS.items() if bug.feature not in (None, "kraft-future"))


def test_every_switch_names_a_feature_the_design_has_and_a_way_to_turn_it_on():
    from model.kraft.design import KRAFT_DESIGN

    names = {f.name for f in KRAFT_DESIGN.features}
    assert NEEDS_A_FEATURE, "some switch needs a feature besides kraft-core"
    for bug in BUGS.values():
        assert bug.feature is None or (bug.feature in names and bug.feature in TURN_ON)


# kraft-tiny-faults at the default release (4.4) has ELR on: kraft-elr is left out at 3.9
WITHOUT = {"kraft-elr": {"kafka": "3.9"}}


@pytest.mark.parametrize("bug_id", NEEDS_A_FEATURE)
def test_a_switch_without_its_feature_is_refused(bug_id):
    options = {"bugs": (bug_id,), **WITHOUT.get(BUGS[bug_id].feature, {})}
    with pytest.raises(ConfigError, match=f"{bug_id} needs the feature {BUGS[bug_id].feature}"):
        build_model(preset_config("kraft-tiny-faults", options=options))


@pytest.mark.parametrize("bug_id", NEEDS_A_FEATURE)
def test_the_cli_refuses_a_switch_without_its_feature_with_exit_2_and_one_line_naming_how(bug_id):
    release = [f"--{k}={v}" for k, v in WITHOUT.get(BUGS[bug_id].feature, {}).items()]
    p = _cli("explore", "--preset", "kraft-tiny-faults", "--bug", bug_id, "-q", *release)
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and bug_id in lines[0] and TURN_ON[BUGS[bug_id].feature] in lines[0]


@pytest.mark.parametrize("bug_id", sorted(BUGS))
def test_each_switch_is_taken_by_its_scenario_s_model(bug_id):
    preset = load_scenario(str(SCENARIOS / BUGS[bug_id].scenario)).model["preset"]
    options = {**dict(preset_config(preset).options), "bugs": (bug_id,)}
    model = build_model(preset_config(preset, options=options))
    assert BUGS[bug_id].feature is None or model.has_feature(BUGS[bug_id].feature)


def test_kraft_future_s_switches_turn_their_feature_on_rather_than_being_refused():
    for bug_id in ("KAFKA-16297", "KAFKA-16082"):
        model = build_model(preset_config("kraft-tiny-faults", options={"bugs": (bug_id,)}))
        assert BUGS[bug_id].feature == "kraft-future" and model.has_feature("kraft-future")


def test_a_switch_of_kraft_core_is_taken_by_kraft_tiny():
    model = build_model(preset_config("kraft-tiny-faults", options={"bugs": ("KAFKA-16234",)}))
    assert model.option("bugs") == ("KAFKA-16234",)


def test_the_refusal_leaves_unknown_ids_and_malformed_values_to_the_option_s_check():
    assert refuse_without_feature(("KAFKA-1",), set()) is None
    assert refuse_without_feature(3, set()) is None
    assert "KAFKA-16162" in refuse_without_feature("KAFKA-16162", {"kraft-core"})
