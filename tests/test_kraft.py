"""KRaft mode (issue 31, first slice; docs/kraft.md): kraft-tiny and kraft-tiny-data exhaust with every rule of
their configuration fired, the finding's shortest trace, the layering, and the broker's three create-or-not gates
each shown to refuse and to create."""
from __future__ import annotations

import grimp
import pytest

from explorer.catalog import build_model, preset_config
from explorer.search import SearchOptions, bfs
from model.kraft.metadata import UNASSIGNED, PartitionState
from model.kraft.replica_manager import CREATED, SKIPPED_DIR, SKIPPED_OFFLINE, STORAGE_ERROR, apply_local
from model.storage.state import GOOD, H_FOLLOWER, H_LEADER, H_NONE, H_OFFLINE, H_STOPPED, OFFLINE


def _exhaust(preset: str):
    model = build_model(preset_config(preset))
    return model, bfs(model, list(model.invariants), SearchOptions(all_violations=True))


def _fired(result) -> set:
    return {name for name, n in result.coverage.items() if n}


@pytest.mark.slow
def test_kraft_tiny_exhausts_with_every_rule_of_its_configuration_fired_and_finds_the_recreation():
    model, result = _exhaust("kraft-tiny")
    assert result.result == "violation"  # all_violations: the search went on to the end
    assert _fired(result) == {r.name for r in model.rules if r.domain(model)}
    assert {r.name for r in model.rules if not r.domain(model)} == {"Produce", "ReplicaFetch", "LeaderShrinkIsr",
                                                                     "Consume"}
    assert {v.invariant.id for v in result.violations} == {"kraft_no_recreate_over_failed_dir"}


@pytest.mark.slow
def test_kraft_tiny_data_exhausts_with_every_rule_but_the_repairs_fired_and_holds():
    model, result = _exhaust("kraft-tiny-data")
    assert result.result == "ok" and not result.violations
    # One fault: a disk is repaired only on a broker that is down with a failed dir (two faults).
    assert _fired(result) == {r.name for r in model.rules} - {"ReplaceDisk", "RemoveDirFromConfig"}


def test_the_recreation_finding_has_a_seven_step_shortest_trace():
    model = build_model(preset_config("kraft-tiny"), invariants=["kraft_no_recreate_over_failed_dir"])
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
    model = build_model(preset_config("kraft-tiny"))
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
