"""KRaft partition reassignment (issue 31; docs/kraft.md, "Reassignment"): adding a replica with its Directories
entry from defaultDir, the added replica never listed, completion by the ISR join, removal and the removed
replica's deletion, the bug switch KAFKA-16886 with its scenario, the presets, deletion with reassignment, and the
data path (issue 45): the added replica's catch-up by its fetches and a restarted follower's rejoin."""
from __future__ import annotations

import pytest

from explorer.catalog import build_model, preset_config
from explorer.scenario import load_scenario, replay
from explorer.search import SearchOptions, bfs
from support.helpers import SCENARIOS
from support.kraft_paths import DELIVERED, REASSIGNED, walk
from model.kraft.metadata import UNASSIGNED
from model.spec.errors import ConfigError
from model.storage.state import H_FOLLOWER, H_LEADER, H_NONE

SCENARIO_16886 = "kraft-kafka-16886-assignment-of-a-removed-replica-retried.json"

# With a record: produced, then the reassignment; broker 1 fetches it once broker 0 replayed the reassignment.
ADDED_WITH_A_RECORD = DELIVERED + [("Produce", (0, 0)), ("ReassignPartition", (0,)), ("BrokerReplay", (1,)),
                                   ("BrokerReplay", (0,)), ("ReplicaFetch", (1, 0))]
# The reassignment completed, then broker 1 crashes, is fenced (out of the ISR) and restarts.
RESTART = [("BrokerReplay", (0,)), ("BrokerReplay", (1,)), ("BrokerCrash", (1,)), ("ControllerFenceBroker", (1,)),
           ("BrokerReplay", (0,)), ("BrokerRestart", (1,)), ("BrokerRegister", (1,)), ("BrokerLoad", (1,)),
           ("BrokerHeartbeat", (1,)), ("BrokerReplay", (0,)), ("BrokerReplay", (0,)), ("BrokerReplay", (1,))]


def _model(preset="kraft-reassignment", max_records=0, max_faults=1, **options):
    return build_model(preset_config(preset, max_records=max_records, max_faults=max_faults,
                                     options=options or None))


def test_with_records_the_added_replica_catches_up_by_the_data_paths_fetch():
    model = _model(max_records=1)
    assert model.assignments == ((0, 1),) and model.original == ((0,),)   # broker 1 may hold a replica
    assert [a for _, r, a in model.action_space if r.name == "ReplicaCatchUp"] == []
    s = walk(model, DELIVERED + [("Produce", (0, 0)), ("ReassignPartition", (0,)), ("BrokerReplay", (1,))])
    # Partition.fetchRecords: the leader has not replayed the reassignment, so it does not know broker 1 yet
    assert "does not list broker 1" in model.rule("ReplicaFetch").guard(model, s, 1, 0)
    s = walk(model, ADDED_WITH_A_RECORD)
    part = s.controller.partitions[0]
    assert s.brokers[1].logs == ((0,),) and part.isr == 0b11 and part.adding == ()   # caught up: completed


def test_a_restarted_follower_rejoins_the_isr_with_records_and_stays_out_without():
    model = _model(max_records=1, max_faults=2)
    s = walk(model, ADDED_WITH_A_RECORD + RESTART)
    assert s.controller.partitions[0].isr == 0b01 and s.brokers[1].hosted == (H_FOLLOWER,)
    s = walk(model, [("ReplicaFetch", (1, 0))], s)   # Partition.maybeExpandIsr -> AlterPartition
    assert s.controller.partitions[0].isr == 0b11 and s.brokers[0].isr == (0b11,)
    # Without records nothing brings it back: ReplicaCatchUp is the added replica's only, before completion.
    model = _model(max_faults=2)
    s = walk(model, REASSIGNED + [("ReplicaCatchUp", (0, 1))] + RESTART)
    for _ in range(10):   # the cluster's own steps (a fault aside) until none is left: the ISR stays {0}
        enabled = [(r.name, a) for _, r, a in model.action_space
                   if r.name not in ("DirFail", "BrokerCrash") and r.guard(model, s, *a) is None]
        if not enabled:
            break
        s = walk(model, enabled[:1], s)
    assert enabled == [] and s.controller.partitions[0].isr == 0b01 and model.is_quiescent(s)


def test_the_restarted_follower_scenario_rejoins_the_isr_once_the_control_plane_is_quiet():
    scenario = load_scenario(str(SCENARIOS / "kraft-reassignment-restarted-follower-rejoins-the-isr.json"))
    model = build_model(preset_config(scenario.model["preset"], **{k: v for k, v in scenario.model.items()
                                                                   if k != "preset"}))
    result, trace, failed = replay(model, scenario, list(model.invariants))
    assert result.result == "ok" and failed == []
    quiet, rejoined = trace[20][1], trace[21][1]
    assert scenario.steps[20] == "ReplicaFetch(broker=1, partition=0)"
    assert model.is_quiescent(quiet) and quiet.controller.partitions[0].isr == 0b01 and quiet.brokers[1].up
    assert rejoined.controller.partitions[0].isr == 0b11


def test_with_records_the_rules_stay_within_their_declared_footprints():
    """ReplicaFetch's guard now asks the leader's image (fetch_refused): its declared footprint covers it. On the
    states of the restart trace above (refused, then served, fetches; the ISR shrunk and expanded)."""
    from model.spec.footprint import footprint_violations

    model = _model(max_records=1, max_faults=2)
    s, states = model.init_states()[0], []
    for step in ADDED_WITH_A_RECORD + RESTART + [("ReplicaFetch", (1, 0))]:
        s = walk(model, [step], s)
        states.append(s)
    assert footprint_violations(model, states, budgets=lambda state: state.budget) == []


def test_deletion_with_records_is_still_refused_with_reassignment():
    with pytest.raises(ConfigError, match="--deletion with --variant kraft is modelled without records"):
        build_model(preset_config("kraft-reassignment", deletion=True, max_records=1))


def test_a_pure_add_writes_replicas_adding_and_the_added_replicas_default_dir():
    s = walk(_model(), DELIVERED + [("ReassignPartition", (0,))])
    part = s.controller.partitions[0]
    assert part.replicas == (0, 1) and part.adding == (1,) and part.removing == ()
    assert part.dirs == (0, UNASSIGNED)  # defaultDir: broker 1 registered two dirs


def test_the_added_replica_is_created_but_its_dir_is_never_listed():
    s = walk(_model(), REASSIGNED)
    b1 = s.brokers[1]
    assert b1.hosted == (H_FOLLOWER,) and b1.copies == (0b01,)
    assert b1.queue == () and b1.inflight == ()  # directory(1) of the old registration throws: not listed


def test_the_isr_join_completes_a_pure_add_and_directories_stay_unassigned():
    model = _model()
    s = walk(model, REASSIGNED + [("ReplicaCatchUp", (0, 1)), ("BrokerReplay", (0,)), ("BrokerReplay", (1,))])
    part = s.controller.partitions[0]
    assert part.isr == 0b11 and part.adding == () and part.replicas == (0, 1)
    assert part.dirs == (0, UNASSIGNED) and model.is_quiescent(s)
    inv = next(i for i in model.invariants if i.id == "kraft_directories_match_actual_dir")
    assert "Directories entry is UNASSIGNED" in inv.check(model, s)


def test_a_move_completes_removes_the_old_replica_and_moves_leadership():
    model = _model("kraft-reassignment-move")
    s = walk(model, REASSIGNED + [("ReplicaCatchUp", (0, 1))])
    part = s.controller.partitions[0]
    assert part.replicas == (1,) and part.isr == 0b10 and part.leader == 1 and part.removing == ()
    s = walk(model, REASSIGNED + [("ReplicaCatchUp", (0, 1)), ("BrokerReplay", (0,)), ("BrokerReplay", (1,))])
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
@pytest.mark.long_run
def test_kraft_assignments_drain_fails_with_kafka_16886_on_the_move():
    from explorer.liveness import check_liveness

    model = build_model(preset_config("kraft-reassignment-move", options={"bugs": ("KAFKA-16886",)}),
                        invariants=["kraft_assignments_drain"])
    result = check_liveness(model, list(model.invariants))
    assert [v.invariant.id for v in result.violations] == ["kraft_assignments_drain"]


# ---- the presets, and deletion with reassignment -----------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("preset", ["kraft-reassignment", "kraft-reassignment-move"])
@pytest.mark.long_run(ids=["kraft-reassignment-move", "kraft-reassignment"])
def test_reassignment_presets_fire_every_rule_and_find_the_unlisted_added_replica(preset):
    model = _model(preset)
    result = bfs(model, list(model.invariants), SearchOptions(all_violations=True))
    assert {name for name, n in result.coverage.items() if n} == {r.name for r in model.rules if r.domain(model)}
    # finding 6, and what its UNASSIGNED entry leads to once the added replica's dir fails (docs/kraft.md)
    expected = {"kraft_directories_match_actual_dir", "metadata_shows_offline_replicas"}
    if preset == "kraft-reassignment-move":
        expected.add("leader_is_live_isr_member")
    assert {v.invariant.id for v in result.violations} == expected


@pytest.mark.slow
@pytest.mark.long_run
def test_a_move_with_records_exhausts_and_finds_finding_6_and_no_record_lost():
    """kraft-reassignment-move with one record (docs/kraft.md, "Counts"): every rule fires but LeaderShrinkIsr (the
    added replica's ISR join completes the move at once, so the ISR never holds a lagging follower), finding 6 and
    its consequences are the only violations: the data path's durability properties hold."""
    model = _model("kraft-reassignment-move", max_records=1, kafka="3.9")
    result = bfs(model, list(model.invariants), SearchOptions(all_violations=True))
    assert (result.distinct_states, result.states_generated, result.depth) == (180_352, 576_294, 31)
    configured = {r.name for r in model.rules if r.domain(model)}
    assert configured - {name for name, n in result.coverage.items() if n} == {"LeaderShrinkIsr"}
    assert {v.invariant.id for v in result.violations} == {
        "kraft_directories_match_actual_dir", "metadata_shows_offline_replicas", "leader_is_live_isr_member"}


def test_deleting_a_topic_under_reassignment_ends_it_and_the_re_created_topic_starts_on_its_assignment():
    model = build_model(preset_config("kraft-reassignment", deletion=True))
    s = walk(model, REASSIGNED + [("DeleteTopic", (0,)), ("BrokerReplay", (0,)), ("BrokerReplay", (1,))])
    assert s.controller.partitions[0].leader_epoch == -1
    assert s.brokers[1].hosted == (H_NONE,) and s.brokers[1].copies == (0,)
    s = walk(model, REASSIGNED + [("DeleteTopic", (0,)), ("CreateTopic", (0,))])
    part = s.controller.partitions[0]
    assert part.replicas == (0,) and part.adding == () and part.topic == 2
    assert model.rule("ReassignPartition").guard(model, s, 0) is None  # the new topic may be reassigned again


def test_deletion_and_reassignment_together_without_faults_find_only_the_unlisted_added_replica():
    model = build_model(preset_config("kraft-reassignment", deletion=True, max_faults=0))
    result = bfs(model, list(model.invariants), SearchOptions(all_violations=True))
    assert {"DeleteTopic", "ReassignPartition", "ReplicaCatchUp", "CreateTopic"} <= {
        name for name, n in result.coverage.items() if n}
    assert {v.invariant.id for v in result.violations} == {"kraft_directories_match_actual_dir"}
