"""KRaft partition reassignment (issue 31; docs/kraft.md, "Reassignment"): adding a replica with its Directories
entry from defaultDir, the added replica never listed, completion by the ISR join, removal and the removed
replica's deletion, the bug switch KAFKA-16886 with its scenario, the presets, and deletion with reassignment."""
from __future__ import annotations

import pytest

from explorer.catalog import build_model, preset_config
from explorer.scenario import load_scenario, replay
from explorer.search import SearchOptions, bfs
from helpers import SCENARIOS
from model.kraft.metadata import UNASSIGNED
from model.spec.errors import ConfigError
from model.storage.state import H_FOLLOWER, H_LEADER, H_NONE

SCENARIO_16886 = "kraft-kafka-16886-assignment-of-a-removed-replica-retried.json"

# Broker 0's assignment delivered, then partition 0 reassigned and the added broker 1 caught up.
DELIVERED = [("CreateTopic", (0,)), ("BrokerReplay", (0,)), ("BrokerSendAssignments", (0,)),
             ("ControllerAssignReplicasToDirs", (0,)), ("BrokerReplay", (0,)), ("BrokerReplay", (1,)),
             ("BrokerReplay", (1,))]
REASSIGNED = DELIVERED + [("ReassignPartition", (0,)), ("BrokerReplay", (0,)), ("BrokerReplay", (1,))]


def _model(preset="kraft-reassignment", **options):
    return build_model(preset_config(preset, options=options or None))


def _walk(model, steps):
    s = model.init_states()[0]
    for name, args in steps:
        _, s = model.step(s, name, args)
    return s


def test_reassignment_is_refused_with_records_on_kraft():
    with pytest.raises(ConfigError, match="--reassignment with --variant kraft is modelled without records"):
        build_model(preset_config("kraft-tiny", brokers=3, reassignment=True))


def test_a_pure_add_writes_replicas_adding_and_the_added_replicas_default_dir():
    s = _walk(_model(), DELIVERED + [("ReassignPartition", (0,))])
    part = s.controller.partitions[0]
    assert part.replicas == (0, 1) and part.adding == (1,) and part.removing == ()
    assert part.dirs == (0, UNASSIGNED)  # defaultDir: broker 1 registered two dirs


def test_the_added_replica_is_created_but_its_dir_is_never_listed():
    s = _walk(_model(), REASSIGNED)
    b1 = s.brokers[1]
    assert b1.hosted == (H_FOLLOWER,) and b1.copies == (0b01,)
    assert b1.queue == () and b1.inflight == ()  # directory(1) of the old registration throws: not listed


def test_the_isr_join_completes_a_pure_add_and_directories_stay_unassigned():
    model = _model()
    s = _walk(model, REASSIGNED + [("ReplicaCatchUp", (0, 1)), ("BrokerReplay", (0,)), ("BrokerReplay", (1,))])
    part = s.controller.partitions[0]
    assert part.isr == 0b11 and part.adding == () and part.replicas == (0, 1)
    assert part.dirs == (0, UNASSIGNED) and model.is_quiescent(s)
    inv = next(i for i in model.invariants if i.id == "kraft_directories_match_actual_dir")
    assert "Directories entry is UNASSIGNED" in inv.check(model, s)


def test_a_move_completes_removes_the_old_replica_and_moves_leadership():
    model = _model("kraft-reassignment-move")
    s = _walk(model, REASSIGNED + [("ReplicaCatchUp", (0, 1))])
    part = s.controller.partitions[0]
    assert part.replicas == (1,) and part.isr == 0b10 and part.leader == 1 and part.removing == ()
    s = _walk(model, REASSIGNED + [("ReplicaCatchUp", (0, 1)), ("BrokerReplay", (0,)), ("BrokerReplay", (1,))])
    assert s.brokers[0].hosted == (H_NONE,) and s.brokers[0].copies == (0,)
    assert s.brokers[1].hosted == (H_LEADER,)
    # The completion changes Replicas, so its record carries Directories and lists broker 1: its dir is queued.
    assert s.brokers[1].queue == ((0, 0, 1),)


def test_the_reassign_to_option_is_checked():
    with pytest.raises(ConfigError, match="reassign_to must be add or move"):
        _model(reassign_to="swap")


# ---- KAFKA-16886 --------------------------------------------------------------------------------------------------

def _replay(deletion=False, **options):
    scenario = load_scenario(str(SCENARIOS / SCENARIO_16886))
    model = build_model(preset_config(scenario.model["preset"], deletion=deletion, options=options or None))
    result, trace, failed = replay(model, scenario, list(model.invariants))
    return model, result, trace, failed


def test_kafka_16886_scenario_drains_without_the_switch():
    _, result, trace, failed = _replay()
    assert result.result == "ok" and failed == [] and trace[-1][1].brokers[0].queue == ()


def test_kafka_16886_scenario_resends_the_removed_replicas_assignment_forever_with_the_switch():
    model, result, trace, failed = _replay(bugs=("KAFKA-16886",))
    assert failed and not result.violations
    _, answered = model.step(trace[-1][1], "ControllerAssignReplicasToDirs", (0,))
    assert answered == trace[-2][1]  # NOT_LEADER_OR_FOLLOWER, retried: a cycle


def test_kafka_17190_alone_drops_not_leader_or_follower_on_the_answer():
    from explorer.scenario import ScenarioError

    # KAFKA-17190's switch needs kraft-deletion (refused without it); its NOT_LEADER_OR_FOLLOWER path is the move's.
    with pytest.raises(ScenarioError, match="queue is empty"):
        _replay(deletion=True, bugs=("KAFKA-17190",))


@pytest.mark.slow
def test_kraft_assignments_drain_fails_with_kafka_16886_on_the_move():
    from explorer.liveness import check_liveness

    model = build_model(preset_config("kraft-reassignment-move", options={"bugs": ("KAFKA-16886",)}),
                        invariants=["kraft_assignments_drain"])
    result = check_liveness(model, list(model.invariants))
    assert [v.invariant.id for v in result.violations] == ["kraft_assignments_drain"]


# ---- the presets, and deletion with reassignment -----------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("preset", ["kraft-reassignment", "kraft-reassignment-move"])
def test_reassignment_presets_fire_every_rule_and_find_the_unlisted_added_replica(preset):
    model = _model(preset)
    result = bfs(model, list(model.invariants), SearchOptions(all_violations=True))
    assert {name for name, n in result.coverage.items() if n} == {r.name for r in model.rules if r.domain(model)}
    # finding 6, and what its UNASSIGNED entry leads to once the added replica's dir fails (docs/kraft.md)
    expected = {"kraft_directories_match_actual_dir", "metadata_shows_offline_replicas"}
    if preset == "kraft-reassignment-move":
        expected.add("leader_is_live_isr_member")
    assert {v.invariant.id for v in result.violations} == expected


def test_deleting_a_topic_under_reassignment_ends_it_and_the_re_created_topic_starts_on_its_assignment():
    model = build_model(preset_config("kraft-reassignment", deletion=True))
    s = _walk(model, REASSIGNED + [("DeleteTopic", (0,)), ("BrokerReplay", (0,)), ("BrokerReplay", (1,))])
    assert s.controller.partitions[0].leader_epoch == -1
    assert s.brokers[1].hosted == (H_NONE,) and s.brokers[1].copies == (0,)
    s = _walk(model, REASSIGNED + [("DeleteTopic", (0,)), ("CreateTopic", (0,))])
    part = s.controller.partitions[0]
    assert part.replicas == (0,) and part.adding == () and part.topic == 2
    assert model.rule("ReassignPartition").guard(model, s, 0) is None  # the new topic may be reassigned again


def test_deletion_and_reassignment_together_without_faults_find_only_the_unlisted_added_replica():
    model = build_model(preset_config("kraft-reassignment", deletion=True, max_faults=0))
    result = bfs(model, list(model.invariants), SearchOptions(all_violations=True))
    assert {"DeleteTopic", "ReassignPartition", "ReplicaCatchUp", "CreateTopic"} <= {
        name for name, n in result.coverage.items() if n}
    assert {v.invariant.id for v in result.violations} == {"kraft_directories_match_actual_dir"}
