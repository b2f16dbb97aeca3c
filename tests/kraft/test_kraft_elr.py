"""Eligible Leader Replicas (KIP-966) and the release option (docs/kraft.md, "Eligible Leader Replicas", "What changed
from 3.9 to 4.4"): each ELR rule on a hand-made partition state against what the Kafka method it follows does (each
test names it), the clean/unclean shutdown a registration reads, the data path's min ISR rule, the release option
and the switches a release implies, KAFKA-19522's scenario (violates with the switch, holds without), and planted
ELR bugs that the claimed properties catch."""
from __future__ import annotations

from pathlib import Path

import pytest

from explorer.catalog import build_model, preset_config
from explorer.scenario import load_scenario, replay
from explorer.search import SearchOptions, bfs
from model import ModelConfig
from model.kraft import controller as C
from model.kraft import release
from model.kraft.bugs import BUGS, NOT_EXPRESSED, affected, implied, not_expressed
from model.kraft.metadata import UNASSIGNED, Image, PartitionState, Registration
from model.spec.errors import ConfigError
from model.storage.data import advance_hw
from model.storage.state import H_LEADER, NO_LEADER

from support.helpers import in_process, run_labels

REPO = Path(__file__).resolve().parents[2]
SCENARIO_19522 = REPO / "scenarios" / "kraft-kafka-19522-fenced-last-known-leader-elected.json"
UP, FENCED = Registration(0, False, (0, 1)), Registration(0, True, (0, 1))


def model(kafka="4.4", min_isr=2, rf=2, brokers=2, records=0, **options):
    return build_model(ModelConfig(variant="kraft", brokers=brokers, dirs=2, partitions=1, rf=rf, min_isr=min_isr,
                                   max_records=records, consumer=False, max_dir_failures=1, max_saturations=0,
                                   max_crashes=1, max_restarts=1, max_fixes=1, max_failovers=0, max_faults=1,
                                   options={"kafka": kafka, **options}))


def image(leader=0, isr=0b11, elr=0, lke=(), regs=(UP, UP), dirs=(0, 0)):
    part = PartitionState(leader, 3, isr, 5, dirs, topic=1, replicas=(0, 1), elr=elr, last_known_elr=lke)
    return Image(tuple(regs), (part,))


# ---- PartitionChangeBuilder with ELR ----------------------------------------------------------------------------

def test_fencing_below_min_isr_moves_the_broker_into_the_elr():
    # handleBrokerFenced -> generateLeaderAndIsrUpdates(brokerToRemove) -> PartitionChangeBuilder.build:
    # maybePopulateTargetElr: the target ISR {1} is below min ISR 2, so ELR = (ELR + ISR) - target ISR = {0}.
    change = C.partition_change(model(), image(leader=0), 0, remove=0)
    assert (change.leader, change.isr, change.elr, change.recovering) == (1, 0b10, 0b01, None)


def test_an_isr_at_min_isr_clears_the_elr():
    # maybePopulateTargetElr: targetIsr.size() >= minISR -> targetElr = [] (AlterPartition's expansion back to 2).
    change = C.partition_change(model(), image(leader=1, isr=0b10, elr=0b01), 0, isr=0b11)
    assert (change.isr, change.elr) == (0b11, 0)


def test_with_elr_the_isr_may_empty_and_the_last_leader_is_remembered():
    # build(): "If ELR is enabled, the ISR is allowed to be empty"; maybeUpdateLastKnownLeader (4.1.1+,
    # apache/kafka#20629): the record names no leader and LastKnownElr is empty -> [the partition's leader].
    change = C.partition_change(model(min_isr=1), image(leader=0, isr=0b01), 0, remove=0)
    assert (change.leader, change.isr, change.elr, change.last_known_elr) == (NO_LEADER, 0, 0b01, (0,))
    # Without ELR (3.9) the last ISR member stays and nothing else changes but the leader.
    old = C.partition_change(model(kafka="3.9", min_isr=1), image(leader=0, isr=0b01), 0, remove=0)
    assert (old.leader, old.isr, old.elr, old.last_known_elr) == (NO_LEADER, None, None, None)


def test_election_order_is_isr_then_elr_then_the_last_known_leader():
    m = model()
    # electAnyLeader: an ISR member first (isValidNewLeader: in the target ISR) ...
    change = C.partition_change(m, image(leader=NO_LEADER, isr=0b10, elr=0b01), 0)
    assert change.leader == 1 and change.isr is None
    # ... else, with the ISR empty, an ELR member (tryElection: it becomes the ISR alone and leaves the ELR) ...
    change = C.partition_change(m, image(leader=NO_LEADER, isr=0, elr=0b11, regs=(FENCED, UP)), 0)
    assert (change.leader, change.isr, change.elr, change.recovering) == (1, 0b10, 0b01, None)
    # ... else the last known leader, when the ISR and ELR are empty (canElectLastKnownLeader): an unclean
    # election (ISR = it alone, LeaderRecoveryState RECOVERING; maybeUpdateLastKnownLeader clears LastKnownElr).
    change = C.partition_change(m, image(leader=NO_LEADER, isr=0, elr=0, lke=(0,)), 0)
    assert (change.leader, change.isr, change.recovering, change.last_known_elr) == (0, 0b01, True, ())


def test_the_last_known_leader_must_pass_leader_acceptor_unless_kafka_19522():
    # canElectLastKnownLeader: 4.1.0+ returns false when isAcceptableLeader refuses (KAFKA-19522's fix, #20200);
    # 4.0 only logged it.
    fenced = image(leader=NO_LEADER, isr=0, elr=0, lke=(0,), regs=(FENCED, UP))
    assert C.partition_change(model(), fenced, 0) is None
    for m in (model(bugs=["KAFKA-19522"]), model(kafka="4.0", elr=True)):
        change = C.partition_change(m, fenced, 0)
        assert (change.leader, change.recovering) == (0, True)
    # A dir offline for its registration refuses it too (LeaderAcceptor's hasOnlineDir).
    offline_dir = image(leader=NO_LEADER, isr=0, elr=0, lke=(0,), regs=(Registration(0, False, (1,)), UP))
    assert C.partition_change(model(), offline_dir, 0) is None


def test_a_leader_elected_from_the_elr_is_valid_while_the_isr_is_empty_only():
    # isValidNewLeader: (targetIsr.contains(r) || (targetIsr.isEmpty() && targetElr.contains(r))) && acceptable.
    assert C.partition_change(model(), image(leader=NO_LEADER, isr=0b10, elr=0b01, regs=(UP, FENCED)), 0) is None


def test_last_known_leader_rules_of_4_0_and_4_1_1_differ_when_a_leaderless_isr_empties():
    # A partition with no leader whose last ISR member leaves: 4.0's maybeUpdateLastKnownLeader records the
    # partition's leader (-1) when the ISR empties; 4.1.1+ only when a record removes a leader.
    part = image(leader=NO_LEADER, isr=0b01, regs=(Registration(0, False, (1,)), UP))
    old = C.partition_change(model(kafka="4.0", elr=True, min_isr=1), part, 0, remove=0)
    new = C.partition_change(model(kafka="4.1.1", min_isr=1), part, 0, remove=0)
    assert (old.isr, old.last_known_elr) == (0, (NO_LEADER,))
    assert (new.isr, new.last_known_elr) == (0, None)
    # 4.1.0 still has 4.0's rule.
    assert C.partition_change(model(kafka="4.1.0", min_isr=1), part, 0, remove=0).last_known_elr == (NO_LEADER,)


# ---- registration: handleBrokerShutdown (4.0+) -------------------------------------------------------------------

def test_an_unclean_shutdown_removes_the_broker_from_the_elr_at_its_registration():
    # ClusterControlManager.registerBroker -> ReplicationControlManager.handleBrokerShutdown(isCleanShutdown=false)
    # with ELR: generateLeaderAndIsrUpdates(brokerWithUncleanShutdown) over the partitions with it in the ISR and
    # in the ELR: it leaves both and is no acceptable leader.
    img = image(leader=NO_LEADER, isr=0, elr=0b01, lke=(0,), regs=(FENCED, UP))
    (change,) = C.broker_shutdown(model(), img, 0, clean=False)
    assert (change.leader, change.elr, change.last_known_elr) == (None, 0, None)
    # A clean shutdown is handled as a fencing: it is in no ISR, so it stays in the ELR.
    assert C.broker_shutdown(model(), img, 0, clean=True) == []


def test_registration_records_by_release():
    # 4.0+ without ELR: handleBrokerShutdown as handleBrokerFenced (brokerToRemove) for the ISRs the broker is in;
    # 3.7 to 3.9: handleBrokerUncleanShutdown writes nothing below metadata.version 4.0-IV0.
    img = image(leader=1, isr=0b11, regs=(FENCED, UP))
    (change,) = C.broker_shutdown(model(kafka="4.0"), img, 0, clean=False)
    assert (change.isr, change.elr) == (0b10, None)
    assert C.broker_shutdown(model(kafka="3.9"), img, 0, clean=False) == []


# ---- handleAssignReplicasToDirs: ELR from 4.3 ---------------------------------------------------------------------

def test_an_assignment_before_4_3_clears_the_elr():
    # handleAssignReplicasToDirs' PartitionChangeBuilder had no ELR flag before apache/kafka#20716 (4.3.0):
    # maybeUpdateRecordElr clears the ELR of the partition it changes.
    img = image(leader=1, isr=0b10, elr=0b01, dirs=(UNASSIGNED, 0))
    records, error, failed = C.assign_replicas_to_dirs(model(kafka="4.2"), img, 0, 0, ((0, 0, 1),))
    assert error is None and not failed and (records[0].dirs, records[0].elr) == ((0, 0), 0)
    records, _, _ = C.assign_replicas_to_dirs(model(kafka="4.3"), img, 0, 0, ((0, 0, 1),))
    assert (records[0].dirs, records[0].elr) == ((0, 0), None)


# ---- the clean shutdown files ----------------------------------------------------------------------------------

STOPPED_CLEANLY = ["CreateTopic(partition=0)", "BrokerReplay(broker=0)", "BrokerReplay(broker=1)"]


def _shutdown_model(kafka="4.4"):
    return build_model(preset_config("kraft-controlled-shutdown", max_dir_failures=1, max_fixes=1,
                                     options={"max_controlled_shutdowns": 1, "kafka": kafka}))


def _stopped(m, extra=()):
    """Broker 1 (a follower) shuts down cleanly: a controlled shutdown granted, then BrokerShutdown."""
    s = run_labels(m, STOPPED_CLEANLY + ["BrokerBeginControlledShutdown(broker=1)",
                                        "BrokerHeartbeatShutdownNow(broker=1)", "BrokerShutdown(broker=1)",
                                        *extra])
    return s


def test_a_shutdown_writes_the_clean_shutdown_files_and_the_restart_reads_them():
    # LogManager.shutdown(brokerEpoch) writes the file with the broker epoch in every live dir whose logs loaded;
    # readBrokerEpochFromCleanShutdownFiles gives it back at start-up; registerBroker: clean iff it is the
    # stored registration's epoch.
    m = _shutdown_model()
    s = _stopped(m)
    b, reg = s.brokers[1], s.controller.registrations[1]
    assert (b.clean_epoch, b.clean_marks) == (reg.epoch, 0b11)
    s = run_labels(m, ["BrokerRestart(broker=1)"], s)
    assert (s.brokers[1].clean_epoch, s.brokers[1].clean_marks) == (reg.epoch, 0)
    assert m.hooks.clean_shutdown(m, s, 1)


def test_a_failed_or_replaced_dir_makes_the_restart_unclean_and_a_removed_one_does_not():
    # readBrokerEpochFromCleanShutdownFiles: liveLogDirs.size < logDirs.size -> empty; a new disk holds no file;
    # a dir removed from log.dirs is not among the logDirs.
    m = _shutdown_model()
    failed = _stopped(m, ["DirFail(broker=1, dir=0)", "BrokerRestart(broker=1)"])
    assert not m.hooks.clean_shutdown(m, failed, 1)
    replaced = _stopped(m, ["DirFail(broker=1, dir=0)", "ReplaceDisk(broker=1, dir=0)", "BrokerRestart(broker=1)"])
    assert not m.hooks.clean_shutdown(m, replaced, 1)
    removed = _stopped(m, ["DirFail(broker=1, dir=0)", "RemoveDirFromConfig(broker=1, dir=0)",
                           "BrokerRestart(broker=1)"])
    assert m.hooks.clean_shutdown(m, removed, 1)


def test_a_crash_leaves_no_clean_shutdown_file():
    # A crash writes no file (LogManager.shutdown never runs): the next registration is an unclean shutdown.
    m = model(min_isr=1)
    s = run_labels(m, ["CreateTopic(partition=0)", "BrokerCrash(broker=1)", "ControllerFenceBroker(broker=1)",
                       "BrokerRestart(broker=1)"])
    assert s.brokers[1].clean_epoch == -1 and not m.hooks.clean_shutdown(m, s, 1)


def test_without_elr_the_clean_shutdown_fields_stay_constant():
    m = build_model(preset_config("kraft-controlled-shutdown", options={"max_controlled_shutdowns": 1,
                                                                         "kafka": "3.9"}))
    assert "kraft-elr" not in m.feature_names
    s = _stopped(m)
    assert (s.brokers[1].clean_epoch, s.brokers[1].clean_marks) == (-1, 0)


# ---- the data path: Partition.maybeIncrementLeaderHW (3.7+) -------------------------------------------------------

def test_the_leader_raises_no_high_watermark_below_min_isr_in_kraft_only():
    # Partition.maybeIncrementLeaderHW: "if (isUnderMinIsr) return false" (3.7.0 to 4.4.0, ELR or not).
    m = model(kafka="3.9", min_isr=2, records=1)
    s = m.init_states()[0]
    leader = s.brokers[0]._replace(hosted=(H_LEADER,), logs=((0,),), epoch=(0,), isr=(0b01,), copies=(1,))
    s = s._replace(brokers=(leader,) + s.brokers[1:])
    assert advance_hw(m, s, 0, 0).brokers[0].hw == (0,)
    assert advance_hw(model(kafka="3.9", min_isr=1, records=1), s, 0, 0).brokers[0].hw == (1,)


# ---- the release option -----------------------------------------------------------------------------------------

def test_release_values_and_defaults():
    assert release.parse("4.4") == (4, 4, 0) and release.parse("3.9") == (3, 9, 2)
    assert release.parse("4.1.0") == (4, 1, 0)
    assert release.parse("4.5") is None and release.parse("2.8.1") is None and release.parse(3.9) == (3, 9, 2)
    defaults = {r: release.elr_on(ModelConfig(variant="kraft", options={"kafka": r})) for r in release.RELEASES}
    assert defaults == {"3.7": False, "3.8": False, "3.9": False, "4.0": False, "4.1": True, "4.2": True,
                        "4.3": True, "4.4": True}
    assert release.elr_on(ModelConfig(variant="kraft")) and release.NEWEST == "4.4"


def test_elr_is_refused_where_the_release_cannot_have_it():
    with pytest.raises(ConfigError, match="needs Kafka 4.0"):
        model(kafka="3.9", elr=True)
    with pytest.raises(ConfigError, match="mv_upgrade"):
        build_model(preset_config("kraft-mv-upgrade", options={"mv_upgrade": True, "kafka": "4.4", "elr": True}))


def test_a_full_version_implies_the_switches_fixed_after_it():
    assert implied((3, 7, 0)) == ("KAFKA-16234", "KAFKA-17190", "KAFKA-16886", "KAFKA-16757", "KAFKA-15649",
                                  "KAFKA-16297", "KAFKA-16082", "KAFKA-19522")
    assert implied((3, 8, 0)) == ("KAFKA-17190", "KAFKA-19522") and implied((3, 9, 2)) == ("KAFKA-19522",)
    assert implied((4, 1, 0)) == () and affected("KAFKA-17190") == "3.7.0 to 3.7.1, 3.8.0"
    m = model(kafka="3.7.0")
    assert "KAFKA-16234" in C.bugs(m) and C.bugs(model(kafka="3.9")) == ("KAFKA-19522",)


def test_kafka_19522_is_a_switch_no_longer_listed_as_not_expressed():
    assert BUGS["KAFKA-19522"].feature == "kraft-elr" and "KAFKA-19522" not in NOT_EXPRESSED
    assert "KAFKA-19522" not in not_expressed()


# ---- KAFKA-19522's scenario ---------------------------------------------------------------------------------------

def _replay_19522(**options):
    scenario = load_scenario(str(SCENARIO_19522))
    m = build_model(preset_config(scenario.model["preset"], brokers=1, rf=1, options=options or None))
    result, _, failed = replay(m, scenario, list(m.invariants))
    return result, failed


def test_kafka_19522_scenario_holds_without_the_switch_and_violates_with_it():
    result, failed = _replay_19522()
    assert result.result == "ok" and not result.violations and failed == []
    result, _ = _replay_19522(bugs=["KAFKA-19522"])
    assert [v.invariant.id for v in result.violations] == ["kraft_leader_passes_leader_acceptor"]
    assert len(result.violations[0].trace) - 1 == 5     # the registration, step 5


# ---- finding 1 at 4.4 against the real cluster ----------------------------------------------------------------------

FINDING_1 = REPO / "scenarios" / "kraft-finding-1-acked-record-lost.json"


def _finding_1_batches(kafka):
    """The scenario's replay at a release: per step, the batch it appended (a tuple of records) or None."""
    scenario = load_scenario(str(FINDING_1))
    params = dict(scenario.model)
    preset = params.pop("preset")
    params["options"] = {**(params.get("options") or {}), "kafka": kafka}
    m = build_model(preset_config(preset, **params), preset=preset)
    _, trace, _ = replay(m, scenario, list(m.invariants))
    states = [s for _, s in trace]
    return [after.controller.log[-1] if len(after.controller.log) > len(before.controller.log) else None
            for before, after in zip(states, states[1:])]


def _fields(record):
    return {k: v for k, v in record._asdict().items() if v is not None and k != "kind"}


def test_finding_1_at_4_4_writes_the_records_a_real_4_4_0_cluster_wrote():
    """`jbodcheck reproduce scenarios/kraft-finding-1-acked-record-lost.json --kafka 4.4.0` (ELR on, the default of a
    new cluster) read these records from the real cluster's metadata log, in this order: the fencing moves broker 0
    from the ISR to the ELR (isr=[], leader=-1, eligibleLeaderReplicas=[0], lastKnownElr=[0]); the registration after
    its unclean shutdown empties the ELR (eligibleLeaderReplicas=[], before the RegisterBrokerRecord); the unfencing
    heartbeat elects it as the last known leader (isr=[0], leader=0, leaderRecoveryState=1, lastKnownElr=[]). The
    real cluster is the referee: the model writes the same fields at the same steps."""
    batches = _finding_1_batches("4.4")
    fence, register, unfence = batches[6], batches[8], batches[10]     # steps 7, 9, 11
    assert [_fields(r) for r in fence] == [
        dict(partition=0, leader=NO_LEADER, isr=0, elr=0b1, last_known_elr=(0,)),
        dict(broker=0, fenced=True)]
    assert [type(r).__name__ for r in register] == ["PartitionChange", "RegisterBroker"]
    assert _fields(register[0]) == dict(partition=0, elr=0)
    assert [_fields(r) for r in unfence] == [
        dict(broker=0, fenced=False),
        dict(partition=0, leader=0, isr=0b1, last_known_elr=(), recovering=True)]
    # 3.9: the ISR keeps its last member (the real 3.9.2 cluster showed ISR [0], no leader, after the fencing), the
    # registration writes no partition record, and the unfencing elects broker 0 from the ISR, cleanly.
    batches = _finding_1_batches("3.9")
    assert [_fields(r) for r in batches[6]] == [dict(partition=0, leader=NO_LEADER), dict(broker=0, fenced=True)]
    assert [type(r).__name__ for r in batches[8]] == ["RegisterBroker"]
    assert [_fields(r) for r in batches[10]] == [dict(broker=0, fenced=False), dict(partition=0, leader=0)]


# ---- finding 3 with ELR: a leader outside an empty ISR (docs/kraft.md, "Future replicas") ----------------------------

FINDING_3_ELR = REPO / "scenarios" / "kraft-finding-3-elr-leader-outside-empty-isr.json"


def _finding_3_elr(kafka="4.4", extra=(), **bounds):
    steps = load_scenario(str(FINDING_3_ELR)).steps
    m = build_model(preset_config("kraft-future", options={"kafka": kafka}, **bounds), preset="kraft-future")
    return m, run_labels(m, list(steps) + list(extra))


@pytest.mark.parametrize("kafka, cleared", [("4.1", {}), ("4.4", {"last_known_elr": ()})])
def test_finding_3_with_elr_the_offline_dir_update_empties_the_isr_under_the_new_leader(kafka, cleared):
    """handleAssignReplicasToDirs at 4.3.1/4.4.0 (4.1.2 alike: only the assignment's own build lacks the ELR flag,
    and it elects from the ISR): the assignment's change elects broker 0 by the registration before it (dir 1,
    online) and sets its dir to offline dir 0; the 'offline-dir-assignment' generateLeaderAndIsrUpdates is built
    from that same registration (no leader, ISR [0]: the event's records are replayed after it), so it removes
    broker 0 from the ISR into the ELR and, finding no leader to move, leaves the leadership alone. (Before 4.3 the
    assignment's build, without ELR, neither set the last known leader at step 15 nor clears it here.)"""
    _m, s = _finding_3_elr(kafka)
    elected, shrunk = s.controller.log[-1]
    assert _fields(elected) == dict(partition=0, leader=0, dirs=(0,), **cleared)
    assert _fields(shrunk) == dict(partition=0, isr=0, elr=0b1)
    part = s.controller.partitions[0]
    assert (part.leader, part.isr, part.elr) == (0, 0, 0b1)


def test_finding_3_with_elr_a_fencing_leaves_the_leader_and_an_unclean_registration_removes_it():
    """BrokersToIsrs indexes a partition under its ISR members (and NO_LEADER when leaderless), so a leader outside
    the ISR is under no broker: handleBrokerFenced (partitionsWithBrokerInIsr) writes no partition record and the
    fenced broker stays leader. The registration after the unclean shutdown (4.0+, handleBrokerShutdown over
    partitionsWithBrokerInElr) takes it out of the ELR and the leadership."""
    _m, s = _finding_3_elr(extra=["BrokerCrash(broker=0)", "ControllerFenceBroker(broker=0)"],
                           max_crashes=2, max_faults=3)
    assert [type(r).__name__ for r in s.controller.log[-1]] == ["BrokerChange"]
    assert s.controller.registrations[0].fenced and s.controller.partitions[0].leader == 0
    _m, s = _finding_3_elr(extra=["BrokerCrash(broker=0)", "ControllerFenceBroker(broker=0)",
                                  "BrokerRestart(broker=0)", "BrokerRegister(broker=0)"],
                           max_crashes=2, max_restarts=2, max_faults=4)
    part = s.controller.partitions[0]
    assert (part.leader, part.isr, part.elr, part.last_known_elr) == (NO_LEADER, 0, 0, (0,))


# ---- the CLI ----------------------------------------------------------------------------------------------------

def test_kafka_is_refused_with_a_zookeeper_variant_and_named_in_the_bounds(capsys):
    code, out, err = in_process(capsys, "explore", "--preset", "tiny", "--kafka", "4.4")
    assert code == 2 and err.strip().endswith("--kafka applies to --variant kraft")
    code, out, err = in_process(capsys, "explore", "--preset", "kraft-tiny-faults", "--kafka", "5.0")
    assert code == 2 and "--kafka 5.0" in err
    code, out, err = in_process(capsys, "explore", "--preset", "kraft-future", "--kafka", "3.9")
    assert code == 1 and "kafka=3.9, elr=off" in out
    code, out, err = in_process(capsys, "explore", "--preset", "kraft-future")
    assert code == 1 and "kafka=4.4, elr=on" in out


# ---- planted ELR bugs the claimed properties catch ----------------------------------------------------------------

def _violations(m, invariant, **limits):
    return bfs(m, list(m.select([invariant])), SearchOptions(**limits))


def test_a_planted_elr_bug_is_caught_by_the_elr_promise(monkeypatch):
    # Planted: the ELR keeps a broker that left an ISR still at min ISR (maybePopulateTargetElr without its
    # "targetIsr.size() >= minISR -> clear" branch). The leader then commits with the ISR at min ISR, and the lagging
    # broker, elected from that ELR once the leader is fenced, lacks the record: kraft_elr_leader_holds_committed.
    cfg = dict(max_dir_failures=0, max_restarts=0, options={"kafka": "4.4"})
    m = build_model(preset_config("kraft-tiny", **cfg))
    assert bfs(m, list(m.select(["kraft_elr_leader_holds_committed"])), SearchOptions()).result == "ok"
    monkeypatch.setattr(C, "min_isr", lambda m, image, p: len(image.partitions[p].replicas) + 1)
    planted = build_model(preset_config("kraft-tiny", **cfg))
    result = _violations(planted, "kraft_elr_leader_holds_committed")
    assert [v.invariant.id for v in result.violations] == ["kraft_elr_leader_holds_committed"]


# Two brokers, min ISR 2, two crashes and a restart, no record: broker 0 is the last known leader, out of the ELR
# after its unclean restart, while broker 1 (fenced) is still in it.
TWO_CRASHES = dict(variant="kraft", brokers=2, dirs=2, partitions=1, rf=2, min_isr=2, max_records=0, consumer=False,
                   max_dir_failures=0, max_saturations=0, max_crashes=2, max_restarts=1, max_fixes=0,
                   max_failovers=0, max_faults=2, options={"kafka": "4.4"})


def test_a_planted_unclean_election_is_caught(monkeypatch):
    # Planted: canElectLastKnownLeader without its "targetElr.isEmpty()" check (the builder is shown no ELR): the
    # last known leader is elected uncleanly while the ELR still holds a replica:
    # kraft_unclean_election_only_as_last_known_leader.
    m = build_model(ModelConfig(**TWO_CRASHES))
    invariant = "kraft_unclean_election_only_as_last_known_leader"
    assert bfs(m, list(m.select([invariant])), SearchOptions()).result == "ok"
    real = C.partition_change

    def planted(m, image, p, **how):
        part = image.partitions[p]
        if part.elr and part.last_known_elr:
            image = image._replace(partitions=image.partitions[:p] + (part._replace(elr=0),) + image.partitions[p + 1:])
        return real(m, image, p, **how)
    monkeypatch.setattr(C, "partition_change", planted)
    result = _violations(build_model(ModelConfig(**TWO_CRASHES)), invariant)
    assert [v.invariant.id for v in result.violations] == [invariant]


# ---- --kafka 3.9 is the model without the release option -------------------------------------------------------

# Counts of the findings branch at 705d43f (before the release option: its KRaft model is 3.9's), measured with
# `python -m explorer explore --preset kraft-tiny-faults ARGS --workers 1` there; `--kafka 3.9` must give them
# exactly (every 4.x behaviour and ELR off). kraft-tiny itself (781,830 distinct, 2,449,174 generated, depth 33)
# is in docs/kraft.md, "Counts".
BEFORE_THE_RELEASE_OPTION = [
    (dict(max_faults=1, max_fixes=0), (8_600, 20_027, 22)),
    (dict(max_records=1, brokers=1, rf=1, max_faults=1), (203, 306, 13)),
]


@pytest.mark.parametrize("params,counts", BEFORE_THE_RELEASE_OPTION, ids=["no-record", "rf1-record"])
def test_kafka_3_9_gives_the_counts_of_the_model_before_the_release_option(params, counts):
    m = build_model(preset_config("kraft-tiny-faults", **params, options={"kafka": "3.9"}))
    result = bfs(m, list(m.invariants), SearchOptions())
    assert result.result == "ok"
    assert (result.distinct_states, result.states_generated, result.depth) == counts


def test_kraft_tiny_at_the_default_release_names_it_and_elr_in_its_bounds(capsys):
    # kraft-tiny's own bounds take about 15 minutes with one worker; without faults the bounds line is the same line
    code, out, err = in_process(capsys, "explore", "--preset", "kraft-tiny", "--max-faults", "0")
    assert code == 0
    (line,) = [x for x in out.splitlines() if x.startswith("No violation within:")]
    assert "kafka=4.4, elr=on" in line


# ---- kraft_elr_well_formed on hand-made partition states ---------------------------------------------------------

def _with_partition(m, **how):
    """A reachable state whose controller image holds ``image(**how)``'s partition and registrations."""
    from support.helpers import init, run
    created = run(m, init(m), ("CreateTopic", 0))
    made = image(**how)
    return created._replace(controller=created.controller._replace(partitions=made.partitions,
                                                                     registrations=made.registrations))


def _elr_shares_the_isr(m):
    return (_with_partition(m, leader=0, isr=0b01, elr=0b01),)


def _elr_at_min_isr(m):
    return (_with_partition(m, leader=0, isr=0b11, elr=0b10),)


def _two_last_known(m):
    return (_with_partition(m, leader=NO_LEADER, isr=0, elr=0, lke=(0, 1)),)


def _leader_outside_isr(m):
    return (_with_partition(m, leader=1, isr=0b01),)


# The ELR properties' breaking cases (tests/zk/test_invariants.py's coverage table reads this); the transition
# properties are broken by the planted bugs above (kraft_elr_leader_holds_committed,
# kraft_unclean_election_only_as_last_known_leader).
BROKEN_HERE = {
    "kraft_elr_well_formed": [_elr_shares_the_isr, _elr_at_min_isr, _two_last_known, _leader_outside_isr],
    "kraft_elr_leader_holds_committed": [],
    "kraft_unclean_election_only_as_last_known_leader": [],
}


@pytest.mark.parametrize("make", BROKEN_HERE["kraft_elr_well_formed"])
def test_elr_well_formed_breaks_on_hand_made_input(make):
    from invariants.kraft.elr import kraft_elr_well_formed as check
    m = model()
    message = check(m, *make(m))
    assert isinstance(message, str) and message.strip()
    assert check(m, _with_partition(m)) is None
