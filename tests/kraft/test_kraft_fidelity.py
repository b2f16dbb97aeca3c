"""Three fidelity questions of the KRaft model settled against Kafka's code (docs/kraft.md): finding 7 (a replica
created before the metadata.version upgrade keeps MIGRATING on a running broker), finding 6 (an added replica's
Directories entry stays UNASSIGNED) with its consequence for a failed dir, and DirectoryId.LOST, which no path of
Kafka 3.7 to 3.9 (trunk 1eb7644349) writes, nor does the model."""
from __future__ import annotations

import pytest

from explorer.catalog import build_model, preset_config
from explorer.scenario import load_scenario
from explorer.search import SearchOptions, bfs
from support.helpers import SCENARIOS, bfs_states, enabled_labels, run_labels
from invariants.kraft.quiescent import kraft_directories_match_actual_dir
from model import ModelConfig
from model.kraft.metadata import LOST, MIGRATING, UNASSIGNED, PartitionChange, PartitionRecord, image_of

FINDING_7 = SCENARIOS / "kraft-finding-7-migrating-kept-after-the-mv-upgrade.json"
FINDING_6 = SCENARIOS / "kraft-finding-6-added-replica-stays-unassigned.json"
CREATED_BEFORE_THE_UPGRADE = ["CreateTopic(partition=0)", "BrokerReplay(broker=0)", "BrokerReplay(broker=1)"]
UPGRADED = CREATED_BEFORE_THE_UPGRADE + ["UpgradeMetadataVersion()", "BrokerReplay(broker=0)", "BrokerReplay(broker=1)"]
RESTART_0 = ["BrokerCrash(broker=0)", "ControllerFenceBroker(broker=0)", "BrokerRestart(broker=0)",
             "BrokerRegister(broker=0)", "BrokerLoad(broker=0)"]


def _scenario(path, **override):
    scenario = load_scenario(str(path))
    params = dict(scenario.model)
    preset = params.pop("preset")
    model = build_model(preset_config(preset, **(params | override)))
    return model, scenario, run_labels(model, scenario.steps)


def _directories_check(model, state):
    return kraft_directories_match_actual_dir.invariant.check(model, state)


# ---- finding 7: MIGRATING after the metadata.version upgrade ----------------------------------------------------

def test_before_the_upgrade_migrating_is_kafkas_design_not_a_violation():
    model = build_model(preset_config("kraft-mv-upgrade", max_faults=0))
    s = run_labels(model, CREATED_BEFORE_THE_UPGRADE)
    assert s.controller.partitions[0].dirs == (MIGRATING, MIGRATING)
    assert s.brokers[0].copies == (1,) and s.brokers[1].copies == (1,)
    assert not image_of(model, s.controller.log).jbod and model.is_quiescent(s)
    assert _directories_check(model, s) is None  # no directory assignment exists before 3.7-IV2


def test_quiescence_waits_for_the_re_registration_after_the_upgrade():
    model = build_model(preset_config("kraft-mv-upgrade", max_faults=0))
    s = run_labels(model, UPGRADED)
    assert not model.is_quiescent(s)  # BrokerRegistrationTracker's re-registration is due
    assert {"BrokerReregister(broker=0)", "BrokerReregister(broker=1)"} <= enabled_labels(model, s)


def test_finding_7_no_step_of_a_running_cluster_assigns_the_migrating_replicas():
    model, scenario, s = _scenario(FINDING_7)
    assert "UpgradeMetadataVersion()" in scenario.steps and "BrokerReregister(broker=1)" in scenario.steps
    part = s.controller.partitions[0]
    assert part.dirs == (MIGRATING, MIGRATING) and model.is_quiescent(s)
    assert all(b.queue == () and b.inflight == () and b.copies == (1,) for b in s.brokers)
    assert [r.dirs for r in s.controller.registrations] == [(0,), (0,)]  # both re-registered their dir
    assert "Directories entry is MIGRATING" in _directories_check(model, s)
    assert list(model.successors(s)) == []  # without a fault nothing is left to do: no path assigns them


def test_finding_7_holds_on_3_7_0s_re_registration_path_too():
    model = build_model(preset_config("kraft-mv-upgrade", max_faults=0, options={"mv_upgrade": True,
                                                                                 "bugs": ("KAFKA-16757",)}))
    inv = kraft_directories_match_actual_dir.invariant
    result = bfs(model, [inv], SearchOptions())
    assert [v.invariant.id for v in result.violations] == [inv.id]
    final = result.violations[0].trace[-1][1]
    assert final.controller.partitions[0].dirs == (MIGRATING, MIGRATING)
    assert all(r.dirs == (0,) for r in final.controller.registrations)  # re-registered (RegisterBroker, fenced)


def test_finding_7_a_restart_assigns_the_migrating_replica():
    model, _, s = _scenario(FINDING_7, max_faults=1)
    s = run_labels(model, RESTART_0, s)
    assert s.brokers[0].queue == ((0, 0, 1),)  # the first image lists every replica (TopicDelta.localChanges)
    s = run_labels(model, ["BrokerSendAssignments(broker=0)", "ControllerAssignReplicasToDirs(broker=0)"], s)
    assert s.controller.partitions[0].dirs == (0, MIGRATING)


# ---- finding 6: the added replica's UNASSIGNED entry --------------------------------------------------------------

def test_finding_6_the_added_replica_is_created_but_never_listed():
    model, _, s = _scenario(FINDING_6)
    part = s.controller.partitions[0]
    assert part.replicas == (0, 1) and part.adding == (1,) and part.dirs == (0, UNASSIGNED)
    assert s.brokers[1].copies == (0b01,) and s.brokers[1].queue == () and s.brokers[1].inflight == ()
    assert model.is_quiescent(s) and "Directories entry is UNASSIGNED" in _directories_check(model, s)


def test_finding_6_a_restart_of_the_added_broker_assigns_its_dir():
    model, _, s = _scenario(FINDING_6, max_crashes=1, max_restarts=1)
    restart_1 = [step.replace("broker=0", "broker=1") for step in RESTART_0]
    s = run_labels(model, restart_1 + ["BrokerSendAssignments(broker=1)", "ControllerAssignReplicasToDirs(broker=1)"], s)
    assert s.controller.partitions[0].dirs == (0, 0)


def test_finding_6_a_failed_dir_of_the_added_replica_is_not_handled_by_the_controller():
    model, _, s = _scenario(FINDING_6)
    s = run_labels(model, ["ReplicaCatchUp(partition=0, broker=1)", "BrokerReplay(broker=0)", "BrokerReplay(broker=1)",
                           "DirFail(broker=1, dir=0)", "BrokerHeartbeat(broker=1)", "BrokerReplay(broker=0)",
                           "BrokerReplay(broker=1)"], s)
    part = s.controller.partitions[0]
    # handleDirectoriesOffline indexes no reserved id: broker 1 stays in the ISR, its dir left out of its registration.
    assert part.isr == 0b11 and part.dirs == (0, UNASSIGNED) and s.controller.registrations[1].dirs == (1,)
    assert model.is_quiescent(s)
    shows = next(i for i in model.invariants if i.id == "metadata_shows_offline_replicas")
    assert "but {1} are offline" in shows.check(model, s)


# ---- LOST: never written --------------------------------------------------------------------------------------------

def _tiny_one_fault():
    return ModelConfig.from_dict(dict(variant="kraft", brokers=2, dirs=2, partitions=1, rf=2, max_dir_failures=1,
                                      max_saturations=0, max_crashes=1, max_restarts=1, max_fixes=0, max_failovers=0,
                                      max_records=0, consumer=False, max_faults=1))


def _logged_directories(state):
    return [r.dirs for batch in state.controller.log for r in batch
            if isinstance(r, (PartitionRecord, PartitionChange)) and r.dirs is not None]


def _lost_written(state) -> bool:
    """LOST in the controller's Directories, a Directories carried by a record of the log, or an assignment."""
    in_log = any(LOST in dirs for dirs in _logged_directories(state))
    in_brokers = any(e[1] == LOST for b in state.brokers for e in b.queue + b.inflight)
    return in_log or in_brokers or any(LOST in p.dirs for p in state.controller.partitions)


@pytest.mark.parametrize("config", [
    preset_config("kraft-mv-upgrade", max_faults=0), _tiny_one_fault(),
    preset_config("kraft-reassignment-move"), preset_config("kraft-future"),
], ids=["mv-upgrade", "tiny-one-fault", "reassignment-move", "future"])
@pytest.mark.long_run(ids=["reassignment-move"])
def test_no_reachable_state_holds_lost(config):
    model = build_model(config)
    states = bfs_states(model, lambda s: s).values()
    assert len(states) > 200 and any(_logged_directories(s) for s in states)
    assert not any(_lost_written(s) for s in states)


def test_the_lost_check_sees_a_planted_lost():
    model, _, s = _scenario(FINDING_6)
    part = s.controller.partitions[0]
    planted = s._replace(controller=s.controller._replace(
        partitions=(part._replace(dirs=(0, LOST)),) + s.controller.partitions[1:]))
    assert not _lost_written(s) and _lost_written(planted)
