"""KIP-928 saturation on KRaft (issue 31; docs/kraft.md, "KIP-928 saturation on KRaft"): the feature
kraft-saturation's reading of KIP-928 onto KIP-858 step by step (the saturated dir reported as a failed one, its
replica not served, no new log there, deletion and retention on it, recovery by restart), the configurations it
refuses, planted errors its invariants catch, kraft-core unchanged without it, its pairs with kraft-deletion and
kraft-reassignment (bounded), and its preset."""
from __future__ import annotations

import pytest

from explorer.catalog import CLAIMS, build_model, configure, preset_config
from explorer.search import SearchOptions, bfs
from support.helpers import in_process, run_labels
from model.kraft import replica_manager as RM
from model.kraft import saturation as KS
from model.kraft.design import KRAFT_DESIGN
from model.kraft.metadata import UNASSIGNED, PartitionState
from model.spec.engine import rebuild_trace
from model.spec.errors import ConfigError
from model.spec.feature import Design
from model.storage.state import (
    GOOD, H_FOLLOWER, H_LEADER, H_NONE, H_OFFLINE, H_SATURATED, OFFLINE, SATURATED,
)

# The partition is created, both replicas on dir 0, both assignments delivered and replayed by both brokers.
PLACED = ["CreateTopic(partition=0)", "BrokerReplay(broker=0)", "BrokerReplay(broker=1)",
          "BrokerSendAssignments(broker=0)", "ControllerAssignReplicasToDirs(broker=0)",
          "BrokerReplay(broker=0)", "BrokerReplay(broker=1)",
          "BrokerSendAssignments(broker=1)", "ControllerAssignReplicasToDirs(broker=1)",
          "BrokerReplay(broker=0)", "BrokerReplay(broker=1)"]
# Then broker 0 fills dir 0 (the reserved file takes one of its two units) and the next write saturates it.
SATURATED_0 = PLACED + ["Write(broker=0, partition=0)", "DirSaturate(broker=0, dir=0)"]
REPORTED = SATURATED_0 + ["BrokerHeartbeat(broker=0)", "BrokerReplay(broker=0)", "BrokerReplay(broker=1)"]


def _model(**overrides):
    return build_model(preset_config("kraft-saturation", **overrides))


def _quiescent(model, s) -> bool:
    return model.is_quiescent(s)


def _fails(model, s, invariant: str) -> bool:
    inv = next(i for i in model.invariants if i.id == invariant)
    return inv.check(model, s) is not None


# ---- the reading of KIP-928 on KIP-858, step by step ----------------------------------------------------------------

def test_a_saturated_dir_is_reported_in_the_heartbeat_as_a_failed_one():
    model = _model()
    s = run_labels(model, SATURATED_0)
    b0 = s.brokers[0]
    assert b0.dirs == (SATURATED, GOOD) and b0.hosted == (H_SATURATED,)
    assert b0.failed == 0b01 and b0.acked_dirs == 0   # propagateDirectoryFailure: the heartbeat's OfflineLogDirs
    assert b0.used == (1, 1) and b0.reserved == 0b10  # its reserved file deleted: one unit free for retention
    s = run_labels(model, ["BrokerHeartbeat(broker=0)"], s)
    part, reg = s.controller.partitions[0], s.controller.registrations[0]
    # handleDirectoriesOffline: Directories[0] = dir 0 leaves the ISR and leadership, broker 1 is elected, the
    # registration keeps dir 1 only.
    assert part.leader == 1 and part.isr == 0b10 and reg.dirs == (1,)
    assert s.brokers[0].acked_dirs == 0b01


def test_a_delta_naming_the_saturated_replica_does_not_serve_it():
    model = _model()
    s = run_labels(model, REPORTED)
    assert s.brokers[0].hosted == (H_SATURATED,) and s.brokers[1].hosted == (H_LEADER,)
    assert _quiescent(model, s)
    for inv in model.invariants:
        if inv.kind in ("state", "quiescent"):
            assert inv.check(model, s) is None, inv.id


def test_apply_local_serves_no_log_on_a_saturated_dir_and_creates_none_there():
    broker = _model().init_states()[0].brokers[0]
    leader = PartitionState(leader=0, leader_epoch=1, isr=0b11, partition_epoch=1, dirs=(0, UNASSIGNED), topic=1,
                            replicas=(0, 1))
    on_dir_0 = broker._replace(copies=(0b01,), hosted=(H_FOLLOWER,), dirs=(SATURATED, GOOD))
    after, why = RM.apply_local(0, on_dir_0, 0, leader, 0)
    assert why == RM.SATURATED_LOG and after.hosted == (H_SATURATED,) and after.copies == (0b01,)
    # A new replica with dir 0 saturated goes to the good dir; with no good dir it is a storage error.
    after, why = RM.apply_local(0, broker._replace(dirs=(SATURATED, GOOD)), 0, leader, UNASSIGNED)
    assert why == RM.CREATED and after.copies == (0b10,) and after.hosted == (H_LEADER,)
    after, why = RM.apply_local(0, broker._replace(dirs=(SATURATED, OFFLINE)), 0, leader, UNASSIGNED)
    assert why == RM.STORAGE_ERROR and after.copies == (0,)


def test_retention_frees_the_saturated_dir_and_a_restart_brings_it_back():
    model = _model()
    s = run_labels(model, REPORTED + ["Retention(broker=0, partition=0)"])
    assert s.brokers[0].segs == (0,) and s.brokers[0].used == (0, 1) and s.brokers[0].dirs[0] == SATURATED
    assert model.rule("DirRecover").domain(model) == []   # KRaft: no message brings a dir back online
    s = run_labels(model, ["BrokerCrash(broker=0)", "ControllerFenceBroker(broker=0)", "BrokerRestart(broker=0)",
                           "BrokerRegister(broker=0)"], s)
    assert s.brokers[0].dirs == (GOOD, GOOD) and s.controller.registrations[0].dirs == (0, 1)
    assert s.brokers[0].used == (1, 1)   # the reserved file written again at start-up


# ---- deletion: on a saturated dir it succeeds, on a failed dir it does not ----------------------------------------

def test_a_deleted_topics_log_on_a_saturated_dir_is_deleted_with_its_space():
    model = _model(deletion=True)
    s = run_labels(model, REPORTED + ["DeleteTopic(partition=0)", "BrokerReplay(broker=0)"])
    b0 = s.brokers[0]
    assert b0.copies == (0,) and b0.hosted == (H_NONE,) and b0.stray == (0,)
    assert b0.segs == (0,) and b0.used == (0, 1)


def test_a_deleted_topics_log_on_a_failed_dir_is_not_deleted():
    model = _model(deletion=True, max_dir_failures=1)
    steps = PLACED + ["Write(broker=0, partition=0)", "DirFail(broker=0, dir=0)", "BrokerHeartbeat(broker=0)",
                      "DeleteTopic(partition=0)", "BrokerReplay(broker=0)", "BrokerReplay(broker=0)"]
    b0 = run_labels(model, steps).brokers[0]
    assert b0.dirs[0] == OFFLINE and b0.hosted == (H_OFFLINE,)   # stays Offline: its log is out of reach
    assert b0.used[0] == 2   # nothing on the failed dir was freed


def test_a_broker_down_during_the_deletion_frees_the_stray_logs_space_at_start_up():
    model = _model(deletion=True)
    s = run_labels(model, SATURATED_0 + ["BrokerCrash(broker=0)", "DeleteTopic(partition=0)",
                                         "ControllerFenceBroker(broker=0)", "BrokerRestart(broker=0)"])
    assert s.brokers[0].used == (2, 1) and s.brokers[0].stray == (0b01,)   # the segment and the reserved file
    b0 = run_labels(model, ["BrokerLoad(broker=0)"], s).brokers[0]
    assert b0.copies == (0,) and b0.segs == (0,) and b0.used == (1, 1)


# ---- reassignment -------------------------------------------------------------------------------------------------

def test_the_added_replica_writes_and_may_saturate():
    model = _model(reassignment=True, rf=1)
    assert (1, 0) in model.rule("Write").domain(model) and (1, 0) in model.rule("Retention").domain(model)
    assert (1, 0) not in build_model(preset_config("kraft-saturation", rf=1)).rule("Write").domain(
        build_model(preset_config("kraft-saturation", rf=1)))


def test_a_move_off_a_saturated_sole_replica_cannot_complete():
    """KIP-928, Limitations: with every replica on a full disk, moving the partition is not possible."""
    model = _model(reassignment=True, rf=1, options={"reassign_to": "move"})
    steps = ["CreateTopic(partition=0)", "BrokerReplay(broker=0)", "BrokerReplay(broker=1)",
             "BrokerSendAssignments(broker=0)", "ControllerAssignReplicasToDirs(broker=0)", "BrokerReplay(broker=0)",
             "BrokerReplay(broker=1)", "Write(broker=0, partition=0)", "DirSaturate(broker=0, dir=0)",
             "BrokerHeartbeat(broker=0)", "ReassignPartition(partition=0)", "BrokerReplay(broker=0)",
             "BrokerReplay(broker=0)", "BrokerReplay(broker=1)", "BrokerReplay(broker=1)"]
    s = run_labels(model, steps)
    assert s.brokers[1].hosted == (H_FOLLOWER,)
    assert "no leader" in model.rule("ReplicaCatchUp").guard(model, s, 0, 1)


# ---- what it refuses ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("params,why", [
    (dict(saturation_recovery="free-space"), "--saturation-recovery free-space is ZooKeeper mode's"),
    (dict(saturation_recovery="free-space-unchanged-controller"), "is ZooKeeper mode's"),
    (dict(deletion_waits_for_response=False), "--deletion-fails-offline-replicas is ZooKeeper mode's"),
    (dict(options={"alter_log_dirs": 1}), "kraft-future"),
])
def test_zookeeper_only_saturation_options_and_future_replicas_are_refused(params, why):
    with pytest.raises(ConfigError, match=why):
        preset_config("kraft-saturation", **params)


def test_the_cli_refuses_kraft_with_the_default_recovery_in_one_line(capsys):
    code, out, err = in_process(capsys, "explore", "--variant", "kraft", "--saturation")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "--saturation-recovery restart" in err


def test_kraft_with_saturation_claims_kip928s_invariants():
    model = _model()
    claimed = {i.id for i in model.invariants}
    assert {getattr(i, "invariant", i).id for i in CLAIMS["saturation"]} <= claimed
    assert model.has_feature("kraft-saturation") and model.has_feature("saturation")


# ---- planted errors are caught ------------------------------------------------------------------------------------

def test_a_delta_serving_a_saturated_log_is_caught(monkeypatch):
    monkeypatch.setattr(RM, "SATURATED", -1)   # apply_local no longer sees a saturated dir
    model = _model()
    s = run_labels(model, REPORTED)
    assert s.brokers[0].hosted == (H_FOLLOWER,)
    assert _fails(model, s, "no_serving_from_saturated_dir")


def test_a_saturation_not_reported_is_caught(monkeypatch):
    monkeypatch.setitem(KS.KRAFT_SATURATION.hooks, "dir_event", KS.R.dir_event)   # kraft-core's: ignores it
    model = _model()
    s = run_labels(model, SATURATED_0)
    assert s.brokers[0].failed == 0 and s.controller.partitions[0].leader == 0 and _quiescent(model, s)
    assert _fails(model, s, "leader_is_live_isr_member")
    assert _fails(model, s, "metadata_shows_offline_replicas")


# ---- kraft-core unchanged without it ------------------------------------------------------------------------------

def test_without_saturation_the_kraft_model_is_the_one_without_the_features():
    """kraft-tiny's cluster with one fault: the design with the saturation features and the design without them
    reach the same states (counts and violations), and the features are not in the model."""
    cfg = configure(None, dict(variant="kraft", brokers=2, dirs=2, partitions=1, rf=2, max_dir_failures=1,
                               max_saturations=0, max_crashes=1, max_restarts=1, max_fixes=0, max_failovers=0,
                               max_faults=1, max_records=0, consumer=False))
    bare = Design(KRAFT_DESIGN.name, KRAFT_DESIGN.summary,
                  tuple(f for f in KRAFT_DESIGN.features if f.name not in ("saturation", "kraft-saturation")))
    results = []
    for design in (None, bare.claiming(CLAIMS)):
        model = build_model(cfg, **({} if design is None else {"design": design}))
        assert not model.has_feature("saturation") and not model.has_feature("kraft-saturation")
        r = bfs(model, list(model.invariants), SearchOptions(all_violations=True))
        results.append((r.distinct_states, r.states_generated, r.depth, sorted(v.invariant.id for v in r.violations)))
    assert results[0] == results[1]


# ---- pairs (bounded) and the preset -------------------------------------------------------------------------------

PAIRS = {
    "kraft-deletion": dict(deletion=True, rf=1),
    "kraft-reassignment-add": dict(reassignment=True, rf=1),
    "kraft-reassignment-move": dict(reassignment=True, rf=1, options={"reassign_to": "move"}),
}


@pytest.mark.parametrize("name", PAIRS)
def test_saturation_explores_with(name):
    model = _model(**PAIRS[name])
    other = "kraft-deletion" if name == "kraft-deletion" else "kraft-reassignment"
    assert model.has_feature("kraft-saturation") and model.has_feature(other)
    result = bfs(model, list(model.invariants), SearchOptions(all_violations=True, max_states=20_000))
    assert result.result in ("ok", "violation", "bounded"), result.note
    fired = {n for n, k in result.coverage.items() if k}
    for feature in ("saturation", other):
        rules = {r.name for f in model.features if f.name == feature for r in f.rules}
        assert fired & rules, f"no rule of {feature} fired"
    for v in result.violations:
        replayed = rebuild_trace(model, [action for action, _ in v.trace[1:]])
        assert model.fingerprint(replayed[-1][1]) == model.fingerprint(v.trace[-1][1])


@pytest.mark.slow
@pytest.mark.long_run
def test_kraft_saturation_exhausts_ok_with_every_rule_of_its_configuration_fired():
    model = _model()
    result = bfs(model, list(model.invariants), SearchOptions(all_violations=True))
    assert result.result == "ok", [v.invariant.id for v in result.violations]
    assert {name for name, n in result.coverage.items() if n} == {r.name for r in model.rules if r.domain(model)}


# ---- footprints -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("overrides", [{}, dict(deletion=True, rf=1), dict(reassignment=True, rf=1)],
                         ids=["preset", "deletion", "reassignment"])
def test_rules_stay_within_their_declared_footprints_with_saturation(overrides):
    from support.footprints import footprint_violations, sample_states

    model = _model(**overrides)
    states = sample_states(model, bfs=300, walks=40, depth=40)
    assert any(SATURATED in b.dirs for s in states for b in s.brokers)   # the samples reach a saturated dir
    assert footprint_violations(model, states) == []

