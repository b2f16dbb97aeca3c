"""KRaft mode (issue 31, first slice; docs/kraft.md): kraft-tiny and kraft-tiny-faults exhaust with every rule of
their configuration fired (kraft-tiny without a violation), finding 1's shortest trace, the layering, and the broker's three create-or-not gates
each shown to refuse and to create."""
from __future__ import annotations

import grimp
import pytest

from explorer.catalog import build_model, preset_config
from explorer.search import SearchOptions, bfs
from model.spec.errors import ConfigError
from model.kraft.metadata import UNASSIGNED, PartitionState
from model.kraft.replica_manager import CREATED, SKIPPED_DIR, SKIPPED_OFFLINE, STORAGE_ERROR, apply_local
from model.storage.state import GOOD, H_FOLLOWER, H_LEADER, H_NONE, H_OFFLINE, H_STOPPED, OFFLINE
from support.kraft_paths import REASSIGNED, walk
from support.profiles import profile_name


def _exhaust(preset: str, **params):
    model = build_model(preset_config(preset, **params))
    return model, bfs(model, list(model.invariants), SearchOptions(all_violations=True))


def _fired(result) -> set:
    return {name for name, n in result.coverage.items() if n}


@pytest.mark.slow
@pytest.mark.long_run
def test_kraft_tiny_faults_exhausts_with_every_rule_of_its_configuration_fired_and_finds_the_recreation():
    model, result = _exhaust("kraft-tiny-faults")
    assert result.result == "violation"  # all_violations: the search went on to the end
    assert _fired(result) == {r.name for r in model.rules if r.domain(model)}
    assert {r.name for r in model.rules if not r.domain(model)} == {"Produce", "ReplicaFetch", "LeaderShrinkIsr",
                                                                     "Consume"}
    assert {v.invariant.id for v in result.violations} == {"no_recreate_over_offline_copy"}


@pytest.mark.slow
@pytest.mark.long_run
def test_kraft_tiny_exhausts_with_every_rule_of_its_configuration_fired_and_holds():
    """The issue's acceptance: kraft-tiny exits 0 with every rule fired. One fault: a disk is repaired only on a
    broker that is down with a failed dir (two faults), so the repairs are not in its configuration. At --kafka 3.9,
    whose counts are those from before the release option (the default, 4.4 with ELR, is the next test's)."""
    model, result = _exhaust("kraft-tiny", options={"kafka": "3.9"})
    assert result.result == "ok" and not result.violations
    assert _fired(result) == {r.name for r in model.rules if r.domain(model)} == (
        {r.name for r in model.rules} - {"ReplaceDisk", "RemoveDirFromConfig"})
    assert (result.distinct_states, result.states_generated, result.depth) == (781_830, 2_449_174, 33)


@pytest.mark.skipif(profile_name() != "thorough", reason="kraft-tiny at 4.4 with ELR, a million states: the "
                    "thorough profile (docs/testing.md)")
def test_kraft_tiny_at_the_default_release_exhausts_and_holds():
    model, result = _exhaust("kraft-tiny")
    assert result.result == "ok" and not result.violations
    assert (result.distinct_states, result.states_generated, result.depth) == (1_014_332, 3_167_822, 36)


def test_kraft_tiny_data_is_a_deprecated_name_of_kraft_tiny():
    from explorer.catalog import preset_deprecation_note
    old, new = build_model(preset_config("kraft-tiny-data")), build_model(preset_config("kraft-tiny"))
    assert old.cfg == new.cfg
    assert "use --preset kraft-tiny" in preset_deprecation_note("kraft-tiny-data")
    assert preset_deprecation_note("kraft-tiny") is None


def test_the_recreation_finding_has_a_seven_step_shortest_trace():
    model = build_model(preset_config("kraft-tiny-faults"), invariants=["no_recreate_over_offline_copy"])
    result = bfs(model, list(model.invariants), SearchOptions())
    assert [model.rules[a.rule].name for a, _ in result.violations[0].trace[1:]] == [
        "CreateTopic", "BrokerReplay", "DirFail", "BrokerCrash", "ControllerFenceBroker", "BrokerRestart",
        "BrokerLoad"]


def test_model_kraft_imports_nothing_of_model_zk():
    graph = grimp.build_graph("model")
    kraft = {m for m in graph.modules if m.startswith("model.kraft")}
    assert kraft, "model.kraft is missing"
    for module in kraft:
        assert not {m for m in graph.find_modules_directly_imported_by(module) if m.startswith("model.zk")}, module


# ---- the three gates, on a hand-built broker ----------------------------------------------------------------------

@pytest.fixture
def broker():
    model = build_model(preset_config("kraft-tiny-faults"))
    return model.init_states()[0].brokers[0]


LEADS = PartitionState(leader=0, leader_epoch=3, isr=0b11, partition_epoch=5, dirs=(UNASSIGNED, UNASSIGNED))


def _with(b, **fields):
    return b._replace(**fields)


def test_gate1_skips_an_offline_partition(broker):
    b = _with(broker, hosted=(H_OFFLINE,), copies=(0b01,), dirs=(OFFLINE, GOOD))
    after, why = apply_local(0, b, 0, LEADS, listed=1)
    assert why == SKIPPED_OFFLINE and after == b


def test_gate1_creates_for_no_entry(broker):
    after, why = apply_local(0, broker, 0, LEADS, listed=UNASSIGNED)
    assert why == CREATED and after.copies == (0b01,) and after.hosted == (H_LEADER,) and after.epoch == (3,)


def test_gate2_refuses_a_listed_dir_that_is_offline_while_a_dir_is_offline(broker):
    b = _with(broker, copies=(0b01,), dirs=(OFFLINE, GOOD))
    after, why = apply_local(0, b, 0, LEADS, listed=0)
    assert why == SKIPPED_DIR and after.copies == (0b01,) and after.hosted == (H_STOPPED,)


def test_gate2_creates_for_unassigned_even_with_a_dir_offline(broker):
    b = _with(broker, copies=(0b01,), dirs=(OFFLINE, GOOD))
    after, why = apply_local(0, b, 0, LEADS, listed=UNASSIGNED)
    assert why == CREATED and after.copies == (0b11,)


def test_gate2_creates_on_a_listed_live_dir(broker):
    b = _with(broker, dirs=(OFFLINE, GOOD))
    after, why = apply_local(1, b, 0, LEADS, listed=1)
    assert why == CREATED and after.copies == (0b10,) and after.hosted == (H_FOLLOWER,)


def test_gate3_refuses_an_existing_replica_without_a_log_while_a_dir_is_offline(broker):
    b = _with(broker, hosted=(H_STOPPED,), dirs=(OFFLINE, GOOD))
    after, why = apply_local(0, b, 0, LEADS, listed=None)
    assert why == STORAGE_ERROR and after.copies == (0,) and after.hosted == (H_OFFLINE,)


def test_gate3_creates_an_existing_replica_without_a_log_when_no_dir_is_offline(broker):
    b = _with(broker, hosted=(H_STOPPED,))
    after, why = apply_local(0, b, 0, LEADS, listed=None)
    assert why == CREATED and after.copies == (0b01,) and after.hosted == (H_LEADER,)


def test_a_new_replica_is_not_stopped_at_gate3(broker):
    b = _with(broker, hosted=(H_NONE,), dirs=(OFFLINE, GOOD))
    after, why = apply_local(0, b, 0, LEADS, listed=None)
    assert why == CREATED and after.copies == (0b10,)


# ---- the first bug switch: KAFKA-16234 ----------------------------------------------------------------------------

SCENARIO_16234 = "kraft-kafka-16234-offline-partition-recreated.json"


def _replay_16234(**options):
    from explorer.scenario import load_scenario, replay
    from support.helpers import SCENARIOS

    scenario = load_scenario(str(SCENARIOS / SCENARIO_16234))
    model = build_model(preset_config(scenario.model["preset"], options=options or None))
    result, _, failed = replay(model, scenario, list(model.invariants))  # as `jbodcheck replay` does
    return result, failed


def test_kafka_16234_scenario_holds_without_the_switch():
    result, failed = _replay_16234()
    assert result.result == "ok" and not result.violations and failed == []


def test_kafka_16234_scenario_recreates_the_offline_replica_with_the_switch():
    result, _ = _replay_16234(bugs=("KAFKA-16234",))
    assert [v.invariant.id for v in result.violations] == ["no_recreate_over_offline_copy"]
    assert len(result.violations[0].trace) == 9  # the scenario's last step


def test_an_unknown_bug_is_refused():
    from model.spec.errors import ConfigError

    with pytest.raises(ConfigError, match="KAFKA-1"):
        build_model(preset_config("kraft-tiny-faults", options={"bugs": ("KAFKA-1",)}))


def test_gate1_with_kafka_16234_takes_an_offline_partition_for_a_new_one(broker):
    b = _with(broker, hosted=(H_OFFLINE,), copies=(0b01,), dirs=(OFFLINE, GOOD))
    after, why = apply_local(0, b, 0, LEADS, listed=None, bugs=("KAFKA-16234",))
    assert why == CREATED and after.copies == (0b11,)


# ---- KRaft's invariants break on hand-made input (tests/zk/test_invariants.py counts these as its breaking cases) -----

def _kraft_invariant(model, id_):
    return next(i for i in model.invariants if i.id == id_)


def _created_over_a_failed_dir(model):
    s = model.init_states()[0]
    before = s.brokers[0]._replace(copies=(0b01,), dirs=(OFFLINE, GOOD))
    after = before._replace(copies=(0b11,))
    return (s._replace(brokers=(before, s.brokers[1])), None, s._replace(brokers=(after, s.brokers[1])))


def _fenced_broker_elected(model):
    from model.kraft.metadata import K_PARTITION_CHANGE, PartitionChange

    s = model.init_states()[0]
    _, s = model.step(s, "CreateTopic", (0,))
    c = s.controller
    fenced = c.registrations[1]._replace(fenced=True)
    s = s._replace(controller=c._replace(registrations=(c.registrations[0], fenced)))
    after = s._replace(controller=s.controller._replace(
        log=s.controller.log + ((PartitionChange(K_PARTITION_CHANGE, 0, 1, None, None),),)))
    return s, None, after


def _offline_under_the_deleted_topic(model):
    model = build_model(preset_config("kraft-deletion"))
    s = walk(model, [("CreateTopic", (0,)), ("BrokerReplay", (0,)), ("DeleteTopic", (0,)), ("CreateTopic", (0,)),
                      ("BrokerReplay", (0,)), ("BrokerReplay", (0,))])
    b = s.brokers[0]._replace(hosted=(H_OFFLINE,), topics=(1,))
    return model, s._replace(brokers=(b, s.brokers[1]))


def _added_replica_unlisted(model):
    model = build_model(preset_config("kraft-reassignment"))
    return model, walk(model, REASSIGNED + [("ReplicaCatchUp", (0, 1)), ("BrokerReplay", (0,)),
                                             ("BrokerReplay", (1,))])


_offline_under_the_deleted_topic.own_model = _added_replica_unlisted.own_model = True

BROKEN_HERE = {
    "no_recreate_over_offline_copy": [_created_over_a_failed_dir],
    "kraft_leader_passes_leader_acceptor": [_fenced_broker_elected],
    "kraft_recreated_topic_hosted": [_offline_under_the_deleted_topic],
    "kraft_directories_match_actual_dir": [_added_replica_unlisted],
}


@pytest.mark.parametrize("id_, make", [(i, mk) for i, makers in BROKEN_HERE.items() for mk in makers])
def test_kraft_invariant_breaks_on_hand_made_input(id_, make):
    model = build_model(preset_config("kraft-tiny-faults"))
    if getattr(make, "own_model", False):  # a state invariant, on the model of its feature's preset
        model, state = make(model)
        assert _kraft_invariant(model, id_).check(model, state)
        return
    message = _kraft_invariant(model, id_).check(model, *make(model))
    assert message


def test_kraft_invariants_hold_on_the_unbroken_input():
    model = build_model(preset_config("kraft-tiny-faults"))
    s, _, after = _fenced_broker_elected(model)
    unfenced = s.controller.registrations[1]._replace(fenced=False)
    s = s._replace(controller=s.controller._replace(registrations=(s.controller.registrations[0], unfenced)))
    assert _kraft_invariant(model, "kraft_leader_passes_leader_acceptor").check(model, s, None, after) is None
    before, _, created = _created_over_a_failed_dir(model)
    good = before._replace(brokers=(before.brokers[0]._replace(dirs=(GOOD, GOOD)), before.brokers[1]))
    assert _kraft_invariant(model, "no_recreate_over_offline_copy").check(model, good, None, created) is None


def test_saturation_with_a_zookeeper_only_recovery_is_refused_with_kraft():
    """KRaft models KIP-928 saturation with recovery by restart only (tests/kraft/test_kraft_saturation.py, docs/kraft.md):
    asking for ZooKeeper mode's recovery is bad input, not a model that silently leaves it out."""
    with pytest.raises(ConfigError, match="--saturation-recovery free-space is ZooKeeper mode's"):
        build_model(preset_config("kraft-saturation", saturation_recovery="free-space"))


@pytest.mark.parametrize("switch, feature", [("deletion", "kraft-deletion"), ("reassignment", "kraft-reassignment")])
def test_deletion_and_reassignment_are_kraft_features_with_the_same_flags(switch, feature):
    model = build_model(preset_config("kraft-tiny-faults", brokers=3, **{switch: True}))
    assert model.has_feature(feature) and not model.has_feature(switch)
