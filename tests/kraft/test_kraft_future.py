"""kraft-future (model/kraft/future.py): intra-broker moves on KRaft, their bug switches KAFKA-16297 and
KAFKA-16082, and the invariants the feature claims."""
from __future__ import annotations

import pytest

from explorer.catalog import build_model, preset_config
from explorer.search import SearchOptions, bfs
from model.kraft.future import NO_FETCHER, P_ACCEPTED, P_NONE, P_QUEUED
from model.spec.errors import ConfigError
from model.storage.state import GOOD, OFFLINE

SCENARIO_16297 = "kraft-kafka-16297-aborted-promotion-not-reverted.json"
SCENARIO_16082 = "kraft-kafka-16082-stale-future-log-takes-a-dir-offline.json"
FEATURE_RULES = {"AlterReplicaLogDirs", "AlterLogDirsFetch", "PromoteFutureReplica"}


def _model(**options):
    base = {"alter_log_dirs": 1}
    base.update(options)
    return build_model(preset_config("kraft-future", options=base))


def _run(model, steps):
    s = model.init_states()[0]
    for text in steps:
        name, _, args = text.partition("(")
        values = tuple(int(a.split("=")[1]) for a in args.rstrip(")").split(",") if a)
        _, s = model.step(s, name, values)
    return s


ACCEPTED_STEPS = ["CreateTopic(p=0)", "BrokerReplay(b=0)", "BrokerSendAssignments(b=0)",
                  "ControllerAssignReplicasToDirs(b=0)", "BrokerReplay(b=0)", "AlterReplicaLogDirs(b=0,p=0,d=1)",
                  "AlterLogDirsFetch(b=0,p=0)", "PromoteFutureReplica(b=0,p=0)", "BrokerSendAssignments(b=0)",
                  "ControllerAssignReplicasToDirs(b=0)"]


# ---- the feature is off unless asked for -------------------------------------------------------------------------

def test_kraft_tiny_does_not_include_the_feature():
    model = build_model(preset_config("kraft-tiny-faults"))
    assert "kraft-future" not in model.feature_names
    assert FEATURE_RULES <= set(model.absent_rules)


def test_the_preset_and_a_bug_switch_turn_the_feature_on():
    assert "kraft-future" in build_model(preset_config("kraft-future")).feature_names
    switched = build_model(preset_config("kraft-future", options={"bugs": "KAFKA-16297"}))
    assert "kraft-future" in switched.feature_names and switched.option("alter_log_dirs") == 1


def test_a_bad_bound_is_refused():
    with pytest.raises(ConfigError, match="alter_log_dirs"):
        _model(alter_log_dirs=-1)


def test_saturation_stays_refused_with_kraft_future():
    with pytest.raises(ConfigError, match="--saturation with kraft-future"):
        build_model(preset_config("kraft-future", saturation=True, saturation_recovery="restart"))


def test_the_cli_refuses_saturation_with_the_preset_as_bad_input(capsys):
    from explorer.cli import main

    with pytest.raises(SystemExit) as e:
        main(["explore", "--preset", "kraft-future", "--saturation", "--saturation-recovery", "restart"])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "--saturation with kraft-future" in err and "Traceback" not in err


# ---- the promotion, step by step ---------------------------------------------------------------------------------

def test_the_promotion_goes_queued_accepted_effective():
    model = _model()
    s = _run(model, ACCEPTED_STEPS[:7])
    b = s.brokers[0]
    assert b.future == (1,) and b.mover == (P_NONE,) and b.flog == ((),)
    s = _run_from(model, s, ["PromoteFutureReplica(b=0,p=0)"])
    assert s.brokers[0].mover == (P_QUEUED,) and s.brokers[0].queue == ((0, 1, 1),)
    s = _run_from(model, s, ["BrokerSendAssignments(b=0)", "ControllerAssignReplicasToDirs(b=0)"])
    assert s.brokers[0].mover == (P_ACCEPTED,) and s.controller.partitions[0].dirs == (1,)
    s = _run_from(model, s, ["PromoteFutureReplica(b=0,p=0)"])
    b = s.brokers[0]
    assert b.copies == (0b10,) and b.future == (-1,) and b.mover == (NO_FETCHER,)


def _run_from(model, s, steps):
    for text in steps:
        name, _, args = text.partition("(")
        values = tuple(int(a.split("=")[1]) for a in args.rstrip(")").split(",") if a)
        _, s = model.step(s, name, values)
    return s


def test_replaying_the_own_promotion_record_restarts_the_promotion_and_queues_the_current_dir():
    model = _model()
    s = _run_from(model, _run(model, ACCEPTED_STEPS), ["BrokerReplay(b=0)"])
    assert s.brokers[0].mover == (P_NONE,) and s.brokers[0].queue == ((0, 0, 1),)


def test_cancelling_an_accepted_promotion_queues_the_current_dir_back():
    model = _model(alter_log_dirs=2)
    s = _run_from(model, _run(model, ACCEPTED_STEPS), ["AlterReplicaLogDirs(b=0,p=0,d=0)"])
    b = s.brokers[0]
    assert b.queue == ((0, 0, 1),) and b.future == (-1,) and b.mover == (NO_FETCHER,)


def test_with_kafka_16297_an_accepted_promotion_is_not_reverted_on_a_dir_failure():
    fixed, buggy = _model(), _model(bugs=("KAFKA-16297",))
    after = [_run_from(m, _run(m, ACCEPTED_STEPS), ["DirFail(b=0,d=0)"]).brokers[0] for m in (fixed, buggy)]
    assert after[0].queue == ((0, 0, 1),) and after[1].queue == ()


def test_at_start_up_a_future_log_in_the_named_dir_replaces_the_current_log():
    model = _model()
    s = _run_from(model, _run(model, ACCEPTED_STEPS), ["BrokerCrash(b=0)", "ControllerFenceBroker(b=0)",
                                                      "BrokerRestart(b=0)", "BrokerLoad(b=0)"])
    b = s.brokers[0]
    assert b.copies == (0b10,) and b.future == (-1,) and b.dirs == (GOOD, GOOD)


def test_a_future_log_promoted_at_start_up_lacks_what_was_appended_after_its_acceptance():
    """KAFKA-16082's fix promotes the future log the metadata names; a record appended (and acknowledged, min ISR 1)
    after the promotion was accepted is only in the current log, on the failed dir (docs/kraft.md)."""
    model = build_model(preset_config("kraft-future", max_records=1))
    s = _run_from(model, _run(model, ACCEPTED_STEPS), ["Produce(b=0,p=0)", "BrokerCrash(b=0)", "DirFail(b=0,d=0)",
                                                      "ControllerFenceBroker(b=0)", "BrokerRestart(b=0)",
                                                      "BrokerRegister(b=0)", "BrokerLoad(b=0)", "BrokerHeartbeat(b=0)"])
    assert s.acked == (1,) and s.brokers[0].copies == (0b11,) and s.brokers[0].logs == ((),)
    _, s = model.step(s, "BrokerReplay", (0,))
    lost = next(i for i in model.invariants if i.id == "no_acked_record_lost")
    assert lost.check(model, s)


# ---- the bug switches' scenarios ----------------------------------------------------------------------------------

def _replay(name, **options):
    from explorer.scenario import load_scenario, replay
    from support.helpers import SCENARIOS

    scenario = load_scenario(str(SCENARIOS / name))
    model = build_model(preset_config(scenario.model["preset"], options=options or None))
    result, _, failed = replay(model, scenario, list(model.invariants))
    return result, failed


def test_kafka_16297_scenario_holds_without_the_switch():
    result, failed = _replay(SCENARIO_16297)
    assert result.result == "ok" and not result.violations and failed == []


def test_kafka_16297_scenario_leaves_the_metadata_naming_the_future_dir_with_the_switch():
    result, _ = _replay(SCENARIO_16297, bugs=("KAFKA-16297",))
    # The metadata names the future dir (dir 1, online) for a log on failed dir 0: kraft-core's quiescent checks see
    # the same state from their side (a leader that is not live, a replica not shown offline).
    assert {v.invariant.id for v in result.violations} == {
        "kraft_directories_name_the_log_dir", "leader_is_live_isr_member", "metadata_shows_offline_replicas"}
    assert {len(v.trace) for v in result.violations} == {15}  # the scenario's last step


def test_kafka_16082_scenario_holds_without_the_switch():
    result, failed = _replay(SCENARIO_16082)
    assert result.result == "ok" and not result.violations and failed == []


def test_kafka_16082_scenario_recreates_the_log_with_the_switch():
    result, _ = _replay(SCENARIO_16082, bugs=("KAFKA-16082",))
    assert [(v.invariant.id, len(v.trace) - 1) for v in result.violations] == [("no_recreate_over_offline_copy", 16)]


CASCADE = ["PromoteFutureReplica(b=0,p=0)", "BrokerSendAssignments(b=0)", "ControllerAssignReplicasToDirs(b=0)",
           "PromoteFutureReplica(b=0,p=0)"]


def test_with_kafka_16082_the_resumed_future_log_takes_the_healthy_dir_offline():
    from explorer.scenario import load_scenario, parse_step
    from support.helpers import SCENARIOS

    model = _model(bugs=("KAFKA-16082",))
    s = model.init_states()[0]
    for number, text in enumerate(load_scenario(str(SCENARIOS / SCENARIO_16082)).steps, start=1):
        _, s = model.step(s, *parse_step(model, text, number))
    assert s.brokers[0].future == (1,) and s.brokers[0].copies == (0b11,)   # a new log beside the stale future log
    cascade = next(i for i in model.invariants if i.id == "no_dir_failure_cascade")
    for text in CASCADE:
        before = s
        action, s = model.step(s, *_parsed(text))
        message = cascade.check(model, before, action, s)
    assert message and s.brokers[0].dirs == (OFFLINE, OFFLINE)


def test_without_kafka_16082_no_future_log_is_left_to_promote():
    from explorer.scenario import load_scenario, parse_step
    from support.helpers import SCENARIOS

    model = _model()
    s = model.init_states()[0]
    for number, text in enumerate(load_scenario(str(SCENARIOS / SCENARIO_16082)).steps, start=1):
        _, s = model.step(s, *parse_step(model, text, number))
    assert s.brokers[0].future == (-1,) and s.brokers[0].copies == (0b11,)   # dir 0's copy stays on its disk
    assert model.rules[model.rule_index["PromoteFutureReplica"]].guard(model, s, 0, 0) is not None


def _parsed(text):
    name, _, args = text.partition("(")
    return name, tuple(int(a.split("=")[1]) for a in args.rstrip(")").split(",") if a)


# ---- the claimed invariants break on hand-made input ----------------------------------------------------------------

def _named_dir_differs(model):
    s = _run(model, ACCEPTED_STEPS[:5])
    c = s.controller
    part = c.partitions[0]._replace(dirs=(1,))
    return (s._replace(controller=c._replace(partitions=(part,))),)


BROKEN_HERE = {
    "kraft_directories_name_the_log_dir": [_named_dir_differs],
}


def _invariant(model, id_):
    return next(i for i in model.invariants if i.id == id_)


@pytest.mark.parametrize("id_, make", [(i, mk) for i, makers in BROKEN_HERE.items() for mk in makers])
def test_invariant_breaks_on_hand_made_input(id_, make):
    model = _model()
    assert _invariant(model, id_).check(model, *make(model))


def test_invariants_hold_on_the_unbroken_input():
    model = _model()
    s = _run(model, ACCEPTED_STEPS[:5])
    assert _invariant(model, "kraft_directories_name_the_log_dir").check(model, s) is None


@pytest.mark.slow
def test_the_preset_exhausts_with_every_rule_of_its_configuration_fired():
    model = _model()
    result = bfs(model, list(model.invariants), SearchOptions(all_violations=True))
    fired = {name for name, n in result.coverage.items() if n}
    assert fired == {r.name for r in model.rules if r.domain(model)}
    assert FEATURE_RULES <= fired
    # Findings 1 to 3 and 8 of docs/kraft.md, and what kraft-core's quiescent checks see of them.
    assert {v.invariant.id for v in result.violations} == {
        "no_recreate_over_offline_copy", "kraft_directories_name_the_log_dir", "kraft_leader_passes_leader_acceptor",
        "leader_is_live_isr_member", "metadata_shows_offline_replicas", "kraft_directories_match_actual_dir",
        "no_leaderless_partition_with_live_isr_copy",
        # at 4.4 (ELR, the default): a leader outside an empty ISR, 17 steps (docs/kraft.md, finding 3 with ELR)
        "kraft_elr_well_formed"}


def test_the_feature_rules_stay_within_their_declared_footprints():
    """tests/kernel/test_footprints.py leaves KRaft out: storage's hooks declare ZooKeeper-shaped footprints
    (docs/kraft.md, "Departures"). Here those are widened to the whole controller record, and every rule,
    the feature's included, is checked on sampled states."""
    import attrs

    from support.footprints import footprint_violations, sample_states

    def kraft_shaped(declared):
        zk = ("notifications", "controller.live", "controller.partitions")
        return None if declared is None else tuple("controller" if d in zk else d for d in declared)

    model = _model()
    model.action_space = tuple(
        (ri, attrs.evolve(r, reads=kraft_shaped(r.reads), writes=kraft_shaped(r.writes),
                          guard_reads=kraft_shaped(r.guard_reads)), args) for ri, r, args in model.action_space)
    states = sample_states(model, bfs=400, walks=60, depth=40)
    fired = {model.rules[a.rule].name for s in states for a, _ in model.successors(s)}
    assert FEATURE_RULES <= fired
    assert footprint_violations(model, states) == []
