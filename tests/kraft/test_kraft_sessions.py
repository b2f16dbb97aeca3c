"""KRaft broker sessions and controller failover (the feature kraft-sessions, docs/kraft.md "Sessions and
failover"): each rule's effect on a state, kraft-tiny-faults' model without the feature, the bug switch KAFKA-15649
(its lasso scenario breaks dir_failure_acknowledged_or_broker_stops with the switch and not without), and the
presets' coverage."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from explorer.catalog import build_model, preset_config
from explorer.liveness import check_liveness, cycle_is_fair, lasso_breaks
from explorer.scenario import load_scenario, replay
from explorer.search import SearchOptions, bfs
from invariants.kraft.sessions import dir_failure_acknowledged_or_broker_stops
from model.kraft.bugs import BUGS
from model.spec.errors import ConfigError
from model.storage.state import B_FAILOVERS, H_LEADER, H_OFFLINE

from support.helpers import enabled_labels, run_labels

REPO = Path(__file__).resolve().parents[2]
SCENARIO = REPO / "scenarios" / "kraft-kafka-15649-unacknowledged-failure-keeps-the-leader.json"
LIVENESS = dir_failure_acknowledged_or_broker_stops.invariant
SESSION_RULES = {"BrokerHeartbeatAnswerLost", "ControllerExpireSession", "BrokerDirFailureTimeout",
                 "ControllerFailover"}
BUG = ["KAFKA-15649"]


def _model(bugs=(), **options):
    opts = {"max_lost_heartbeats": 1, "max_session_expiries": 1, **options}
    if bugs:
        opts["bugs"] = list(bugs)
    return build_model(preset_config("kraft-heartbeat", options=opts))




# Broker 0 leads partition 0 with its log on dir 0 (the metadata names it); broker 1 follows.
LEADING = ["CreateTopic(partition=0)", "BrokerReplay(broker=0)", "BrokerSendAssignments(broker=0)",
           "ControllerAssignReplicasToDirs(broker=0)", "BrokerReplay(broker=0)", "BrokerReplay(broker=1)",
           "BrokerReplay(broker=1)"]


def test_kraft_tiny_has_no_session_rule_and_no_session_field():
    m = build_model(preset_config("kraft-tiny-faults"))
    assert "kraft-sessions" not in m.feature_names
    assert not SESSION_RULES & {r.name for r in m.rules} and not m.ext_fields
    assert next(r for r in m.rules if r.name == "BrokerHeartbeat").fair
    assert SESSION_RULES <= set(m.absent_rules)


def test_the_feature_makes_heartbeats_unfair_and_takes_its_options():
    m = _model()
    assert "kraft-sessions" in m.feature_names and {f.name for f in m.ext_fields} == {"lost_heartbeats",
                                                                                      "session_expiries"}
    assert not next(r for r in m.rules if r.name == "BrokerHeartbeat").fair
    assert next(r for r in m.rules if r.name == "BrokerDirFailureTimeout").fair
    with pytest.raises(ConfigError, match="max_lost_heartbeats"):
        _model(max_lost_heartbeats=-1)


def test_a_lost_answer_is_handled_by_the_controller_and_not_learnt_by_the_broker():
    m = _model()
    s = run_labels(m, LEADING + ["DirFail(broker=0, dir=0)"])
    lost = run_labels(m, LEADING + ["DirFail(broker=0, dir=0)", "BrokerHeartbeatAnswerLost(broker=0)"])
    assert lost.controller.partitions[0].leader == 1 and lost.controller.registrations[0].dirs == (1,)
    assert lost.brokers[0].acked_dirs == 0 and m.ext(lost, "lost_heartbeats") == 1
    # The broker keeps reporting: its next heartbeat is handled again, writes nothing and is acknowledged.
    _a, again = m.step(lost, "BrokerHeartbeat", (0,))
    assert again.controller.log == lost.controller.log and again.brokers[0].acked_dirs == 0b01
    # The bound: one lost answer.
    assert "BrokerHeartbeatAnswerLost(broker=0)" not in enabled_labels(m, run_labels(m, LEADING + [
        "DirFail(broker=0, dir=0)", "BrokerHeartbeatAnswerLost(broker=0)"]))
    assert "BrokerHeartbeatAnswerLost(broker=0)" in enabled_labels(m, s)


def test_an_expired_session_fences_a_running_broker_whose_next_heartbeat_unfences_it():
    m = _model()
    s = run_labels(m, LEADING + ["ControllerExpireSession(broker=0)"])
    reg = s.controller.registrations[0]
    assert s.brokers[0].up and reg.fenced and s.controller.partitions[0].leader == 1
    assert s.controller.partitions[0].isr == 0b10
    s = run_labels(m, LEADING + ["ControllerExpireSession(broker=0)", "BrokerReplay(broker=0)"])
    _a, after = m.step(s, "BrokerHeartbeat", (0,))
    again = after.controller.registrations[0]
    assert not again.fenced and again.epoch == reg.epoch, "the same session: no new registration"
    assert "ControllerExpireSession(broker=1)" not in enabled_labels(m, after), "the bound: one expiry"


def test_the_dir_failure_timeout_stops_a_broker_with_an_unacknowledged_failure_only_from_3_8():
    m = _model()
    s = run_labels(m, LEADING + ["DirFail(broker=0, dir=0)"])
    assert s.brokers[0].hosted[0] == H_OFFLINE and "BrokerDirFailureTimeout(broker=0)" in enabled_labels(m, s)
    _a, down = m.step(s, "BrokerDirFailureTimeout", (0,))
    assert not down.brokers[0].up and down.budget == s.budget, "no crash budget spent"
    _a, acked = m.step(s, "BrokerHeartbeat", (0,))
    assert "BrokerDirFailureTimeout(broker=0)" not in enabled_labels(m, acked)
    old = _model(BUG)
    assert not next(r for r in old.rules if r.name == "BrokerDirFailureTimeout").domain(old)


def test_a_failover_requeues_the_requests_in_flight():
    m = _model()
    s = run_labels(m, ["CreateTopic(partition=0)", "BrokerReplay(broker=0)", "BrokerSendAssignments(broker=0)"])
    assert s.brokers[0].inflight == ((0, 0, 1),) and "ControllerFailover()" in enabled_labels(m, s)
    _a, after = m.step(s, "ControllerFailover", ())
    assert after.brokers[0].inflight == () and after.brokers[0].queue == ((0, 0, 1),)
    assert after.controller == s.controller and after.budget[B_FAILOVERS] == 1
    assert "ControllerFailover()" not in enabled_labels(m, m.init_states()[0]), "nothing in flight: left out"


def test_kafka_15649_is_registered_with_its_scenario():
    bug = BUGS["KAFKA-15649"]
    assert bug.fixed == "3.8.0" and (REPO / "scenarios" / bug.scenario) == SCENARIO


def _replayed(bugs):
    m = build_model(preset_config("kraft-heartbeat", options={"max_lost_heartbeats": 1, "bugs": list(bugs)}),
                    invariants=[LIVENESS.id])
    scenario = load_scenario(str(SCENARIO))
    return m, scenario, replay(m, scenario, list(m.invariants))


def test_the_15649_lasso_breaks_the_property_with_the_switch():
    m, scenario, (result, trace, failed) = _replayed(BUG)
    assert not failed and result.result == "violation"
    assert [v.invariant.id for v in result.violations] == [LIVENESS.id]
    last = trace[-1][1]
    assert last.controller.partitions[0].leader == 0 and not last.controller.registrations[0].fenced
    assert last.brokers[0].hosted[0] == H_OFFLINE and last.brokers[1].hosted[0] != H_LEADER
    assert cycle_is_fair(m, trace, scenario.loop_start)


def test_the_15649_lasso_is_not_a_fair_behaviour_without_the_switch():
    m, scenario, (result, trace, failed) = _replayed(())
    assert not failed and result.result == "ok"
    assert not cycle_is_fair(m, trace, scenario.loop_start)
    assert lasso_breaks(m, LIVENESS, trace, scenario.loop_start) is None


def test_replay_exit_codes_of_the_15649_scenario():
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    base = [sys.executable, "-m", "explorer", "replay", str(SCENARIO), "--invariant", LIVENESS.id,
            "--option", "max_lost_heartbeats=1"]
    fixed = subprocess.run(base, capture_output=True, text=True, cwd=REPO, env=env, timeout=300)
    broken = subprocess.run(base + ["--option", 'bugs=["KAFKA-15649"]'], capture_output=True, text=True, cwd=REPO,
                            env=env, timeout=300)
    assert fixed.returncode == 0, fixed.stderr
    assert broken.returncode == 1 and "VIOLATION of dir_failure_acknowledged_or_broker_stops" in broken.stdout


@pytest.mark.parametrize("bugs, verdict", [((), "ok"), (BUG, "violation")])
def test_liveness_search_on_a_small_configuration(bugs, verdict):
    cfg = preset_config("kraft-heartbeat", max_failovers=0, max_restarts=0,
                        options={"max_lost_heartbeats": 0, **({"bugs": list(bugs)} if bugs else {})})
    m = build_model(cfg)
    result = check_liveness(m, [LIVENESS])
    assert result.result == verdict
    if bugs:
        v = result.violations[0]
        assert v.stutters and cycle_is_fair(m, v.trace, v.loop_start)
        assert lasso_breaks(m, LIVENESS, v.trace, v.loop_start) is not None, "replay's check agrees"


def _fired(result) -> set:
    return {name for name, n in result.coverage.items() if n}


@pytest.mark.slow
@pytest.mark.long_run
def test_kraft_heartbeat_fires_every_rule_and_finds_the_recreation_without_a_crash():
    m = build_model(preset_config("kraft-heartbeat"))
    result = bfs(m, list(m.invariants), SearchOptions(all_violations=True))
    assert _fired(result) == {r.name for r in m.rules if r.domain(m)}
    assert {"BrokerHeartbeatAnswerLost", "BrokerDirFailureTimeout", "ControllerFailover"} <= _fired(result)
    assert {v.invariant.id for v in result.violations} == {"no_recreate_over_offline_copy"}
    assert [m.rules[a.rule].name for a, _ in result.violations[0].trace[1:]] == [
        "CreateTopic", "BrokerReplay", "DirFail", "BrokerDirFailureTimeout", "ControllerFenceBroker",
        "BrokerRestart", "BrokerLoad"]


def _written(before, after, ext_names) -> set:
    """The components a step changed, as footprint names (broker[i].field, controller, budget, ext.name)."""
    out = set()
    for i, (b, a) in enumerate(zip(before.brokers, after.brokers)):
        out |= {f"broker[{i}].{f}" for f in b._fields if getattr(b, f) != getattr(a, f)}
    out |= {f for f in before._fields if f not in ("brokers", "ext") and getattr(before, f) != getattr(after, f)}
    out |= {f"ext.{n}" for n, x, y in zip(ext_names, before.ext, after.ext) if x != y}
    return out


def _declared(pattern: str, params: tuple, args: tuple) -> str:
    for name, value in zip(params, args):
        pattern = pattern.replace(f"[{name}]", f"[{value}]")
    return pattern


def _covers(declared: set, component: str) -> bool:
    head = component.split(".")[0]
    group = component.split("[")[0]
    return any(d in (component, head, "*") or d == f"{group}[*].{component.split('.', 1)[-1]}"
               or (d.startswith(group + "[") and "." not in d and component.startswith(d + "."))
               for d in declared)


@pytest.mark.parametrize("preset", ["kraft-heartbeat", "kraft-session-expiry"])
def test_the_session_rules_write_only_what_they_declare(preset):
    from support.helpers import bfs_states, walk_states

    m = build_model(preset_config(preset))
    states = list(bfs_states(m, m.fingerprint, 300).values()) + walk_states(m, 20, 40, seed=1)
    ext_names = [f.name for f in m.ext_fields]
    fired = set()
    for s in states:
        for action, after in m.successors(s):
            rule = m.rules[action.rule]
            if rule.name not in SESSION_RULES:
                continue
            fired.add(rule.name)
            declared = {_declared(p, rule.params, action.args) for p in rule.writes}
            assert all(_covers(declared, c) for c in _written(s, after, ext_names)), (rule.name, declared)
    assert fired == {r.name for r in m.rules if r.name in SESSION_RULES and r.domain(m)}
