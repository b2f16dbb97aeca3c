"""KRaft topic deletion (issue 31; docs/kraft.md, "Topic deletion"): the feature's rules, the re-created topic's
new topic id at gate 1, stray copies, the bug switches KAFKA-16157 and KAFKA-17190 with their scenarios, the
liveness property kraft_assignments_drain, and kraft-deletion's exhaustive run."""
from __future__ import annotations

import pytest

from explorer.catalog import build_model, preset_config
from explorer.scenario import load_scenario, replay
from explorer.search import SearchOptions, bfs
from support.helpers import SCENARIOS
from support.kraft_paths import walk
from model.kraft.metadata import UNASSIGNED, PartitionState
from model.kraft.replica_manager import CREATED, SKIPPED_OFFLINE, apply_local, stop_and_delete
from model.spec.errors import ConfigError
from model.storage.state import GOOD, H_LEADER, H_NONE, H_OFFLINE, OFFLINE

SCENARIO_16157 = "kraft-kafka-16157-recreated-topic-never-hosted.json"
SCENARIO_17190 = "kraft-kafka-17190-assignment-of-a-deleted-topic-retried.json"


def _model(**options):
    return build_model(preset_config("kraft-deletion", options=options or None))


def _replay(name, **options):
    scenario = load_scenario(str(SCENARIOS / name))
    model = build_model(preset_config(scenario.model["preset"], options=options or None))
    result, trace, failed = replay(model, scenario, list(model.invariants))
    return model, result, trace, failed


# ---- deletion and re-creation -----------------------------------------------------------------------------------

def test_deletion_is_refused_with_records_on_kraft():
    with pytest.raises(ConfigError, match="--deletion with --variant kraft is modelled without records"):
        build_model(preset_config("kraft-tiny", deletion=True))


def test_a_deleted_topic_is_re_created_with_a_new_topic_id_and_deleted_once():
    model = _model()
    s = walk(model, [("CreateTopic", (0,)), ("DeleteTopic", (0,))])
    part = s.controller.partitions[0]
    assert part.leader_epoch == -1 and part.topic == 1
    s = walk(model, [("CreateTopic", (0,)), ("DeleteTopic", (0,)), ("CreateTopic", (0,))])
    assert s.controller.partitions[0].topic == 2
    assert "deleted once already" in model.rule("DeleteTopic").guard(model, s, 0)


def test_a_broker_replaying_the_deletion_deletes_its_log_and_forgets_the_partition():
    model = _model()
    s = walk(model, [("CreateTopic", (0,)), ("BrokerReplay", (0,)), ("DeleteTopic", (0,))])
    assert s.brokers[0].stray == (0b01,) and s.brokers[0].copies == (0b01,)
    s = walk(model, [("CreateTopic", (0,)), ("BrokerReplay", (0,)), ("DeleteTopic", (0,)), ("BrokerReplay", (0,))])
    b = s.brokers[0]
    assert b.copies == (0,) and b.stray == (0,) and b.hosted == (H_NONE,) and b.topics == (0,)


def test_a_broker_down_during_the_deletion_drops_the_stray_copy_at_start_up():
    model = _model()
    s = walk(model, [("CreateTopic", (0,)), ("BrokerReplay", (0,)), ("BrokerCrash", (0,)), ("DeleteTopic", (0,)),
                      ("ControllerFenceBroker", (0,)), ("BrokerRestart", (0,)), ("BrokerLoad", (0,))])
    b = s.brokers[0]
    assert b.copies == (0,) and b.stray == (0,) and b.hosted == (H_NONE,)


# ---- gate 1 with topic ids --------------------------------------------------------------------------------------

@pytest.fixture
def broker():
    return _model().init_states()[0].brokers[0]


TOPIC_2 = PartitionState(leader=0, leader_epoch=0, isr=0b01, partition_epoch=0, dirs=(UNASSIGNED,), topic=2)


def _offline_under_topic_1(broker):
    return broker._replace(hosted=(H_OFFLINE,), topics=(1,), copies=(0,), dirs=(OFFLINE, GOOD))


def test_gate1_takes_an_offline_partition_of_another_topic_id_for_a_new_one(broker):
    after, why = apply_local(0, _offline_under_topic_1(broker), 0, TOPIC_2, listed=UNASSIGNED)
    assert why == CREATED and after.copies == (0b10,) and after.hosted == (H_LEADER,) and after.topics == (2,)


def test_gate1_skips_an_offline_partition_of_its_own_topic_id(broker):
    b = _offline_under_topic_1(broker)
    after, why = apply_local(0, b, 0, TOPIC_2._replace(topic=1), listed=UNASSIGNED)
    assert why == SKIPPED_OFFLINE and after == b


def test_gate1_with_kafka_16157_skips_every_offline_partition(broker):
    b = _offline_under_topic_1(broker)
    after, why = apply_local(0, b, 0, TOPIC_2, listed=UNASSIGNED, bugs=("KAFKA-16157",))
    assert why == SKIPPED_OFFLINE and after == b


def test_an_offline_partition_stays_offline_when_its_topic_is_deleted(broker):
    b = _offline_under_topic_1(broker)._replace(copies=(0b01,), stray=(0b01,))
    after = stop_and_delete(b, 0)
    assert after.hosted == (H_OFFLINE,) and after.topics == (1,) and after.copies == (0,) and after.stray == (0,)


# ---- the bug switches and their scenarios -----------------------------------------------------------------------

def test_kafka_16157_scenario_hosts_the_recreated_topic_without_the_switch():
    _, result, trace, failed = _replay(SCENARIO_16157)
    assert result.result == "ok" and failed == []
    assert trace[-1][1].brokers[0].hosted == (H_LEADER,) and trace[-1][1].brokers[0].topics == (2,)


def test_kafka_16157_scenario_never_hosts_the_recreated_topic_with_the_switch():
    _, result, _, _ = _replay(SCENARIO_16157, bugs=("KAFKA-16157",))
    assert [v.invariant.id for v in result.violations] == ["kraft_recreated_topic_hosted"]
    assert len(result.violations[0].trace) == 8  # the scenario's last step


def test_kafka_17190_scenario_drains_without_the_switch():
    _, result, trace, failed = _replay(SCENARIO_17190)
    assert result.result == "ok" and failed == []
    assert trace[-1][1].brokers[0].queue == () and trace[-1][1].brokers[0].inflight == ()


def test_kafka_17190_scenario_resends_the_deleted_topics_assignment_forever_with_the_switch():
    model, result, trace, failed = _replay(SCENARIO_17190, bugs=("KAFKA-17190",))
    assert failed and not result.violations  # the request is in flight: not quiescent
    before_send = trace[-2][1]
    _, answered = model.step(trace[-1][1], "ControllerAssignReplicasToDirs", (0,))
    assert answered == before_send  # UNKNOWN_TOPIC_ID, retried: a cycle that never drains the queue


def _liveness(**options):
    from explorer.liveness import check_liveness

    model = build_model(preset_config("kraft-deletion", options=options or None),
                        invariants=["kraft_assignments_drain"])
    return check_liveness(model, list(model.invariants))


@pytest.mark.slow
@pytest.mark.long_run
def test_kraft_assignments_drain_holds_on_kraft_deletion():
    assert _liveness().result == "ok"


@pytest.mark.slow
@pytest.mark.long_run
def test_kraft_assignments_drain_fails_with_kafka_17190():
    result = _liveness(bugs=("KAFKA-17190",))
    assert [v.invariant.id for v in result.violations] == ["kraft_assignments_drain"]


# ---- the preset ---------------------------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.long_run
def test_kraft_deletion_exhausts_with_every_rule_of_its_configuration_fired():
    model = _model()
    result = bfs(model, list(model.invariants), SearchOptions(all_violations=True))
    assert {name for name, n in result.coverage.items() if n} == {r.name for r in model.rules if r.domain(model)}
    # Finding 1, and finding 5's path (a dir failure before the unfencing heartbeat; docs/kraft.md).
    assert {v.invariant.id for v in result.violations} == {"no_recreate_over_offline_copy", "leader_is_live_isr_member"}


def test_kraft_tiny_includes_neither_deletion_nor_reassignment():
    model = build_model(preset_config("kraft-tiny-faults"))
    assert not model.has_feature("kraft-deletion") and not model.has_feature("kraft-reassignment")
    assert not {"DeleteTopic", "ReassignPartition", "ReplicaCatchUp"} & {r.name for r in model.rules}
