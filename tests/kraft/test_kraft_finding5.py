"""KRaft finding "unfencing heartbeat with a failed dir" (docs/kraft.md, "Findings"): its scenario replays to the
violation with no bug switch; the heartbeat's one event elects the broker and handles its offline dir, both from
the image before the event; and nothing after it moves the leader off the failed dir."""
from __future__ import annotations

from explorer.scenario import load_scenario, parse_step
from support.helpers import SCENARIOS
from invariants.kraft.safety import kraft_leadership_as_leader_acceptor_allows
from model.kraft.metadata import K_BROKER_CHANGE, K_PARTITION_CHANGE
from support.scenarios import replay_as_the_cli

# file: {invariant: the step (1-based) whose state breaks it}; tests/kraft/test_kraft_findings.py counts these as replayed
FINDING2_SCENARIOS = {"kraft-finding-5-unfenced-leader-on-failed-dir.json": {"leader_is_live_isr_member": 12}}
SCENARIO = next(iter(FINDING2_SCENARIOS))
HEARTBEAT = 10  # the step BrokerHeartbeat(broker=0)


def _states():
    model, _result, _failed = replay_as_the_cli(SCENARIO)
    steps = load_scenario(str(SCENARIOS / SCENARIO)).steps
    assert steps[HEARTBEAT - 1] == "BrokerHeartbeat(broker=0)"
    state = model.init_states()[0]
    states = [state]
    for i, text in enumerate(steps, 1):
        _, state = model.step(state, *parse_step(model, text, i))
        states.append(state)
    return model, states


def test_the_scenario_replays_to_its_violation_without_a_bug_switch():
    model, result, failed = replay_as_the_cli(SCENARIO)
    assert model.option("bugs") == ()
    assert (model.cfg.brokers, model.cfg.rf) == (1, 1)
    assert failed == []
    assert {v.invariant.id: len(v.trace) - 1 for v in result.violations} == FINDING2_SCENARIOS[SCENARIO]


def test_the_unfencing_heartbeat_elects_the_broker_and_handles_the_dir_from_the_same_image():
    _model, states = _states()
    before, after = states[HEARTBEAT - 1].controller, states[HEARTBEAT].controller
    assert before.partitions[0].leader == -1 and before.partitions[0].dirs == (0,)  # the assignment was written
    assert before.registrations[0].fenced and before.registrations[0].dirs == (0, 1)
    unfence, elect, drop_dir = after.log[-1]  # one batch: handleDirectoriesOffline wrote no partition change
    assert (unfence.kind, unfence.fenced) == (K_BROKER_CHANGE, False)
    assert (elect.kind, elect.leader) == (K_PARTITION_CHANGE, 0)
    assert (drop_dir.kind, drop_dir.dirs) == (K_BROKER_CHANGE, (1,))
    assert after.partitions[0].leader == 0 and after.registrations[0].dirs == (1,)


def test_the_leader_stays_on_the_failed_dir_at_quiescence():
    model, states = _states()
    final = states[-1]
    assert model.is_quiescent(final)
    assert final.controller.partitions[0].leader == 0 and final.controller.partitions[0].dirs == (0,)
    assert kraft_leadership_as_leader_acceptor_allows(model, final)  # LeaderAcceptor would refuse broker 0 now
    assert not any(model.label(a).startswith(("BrokerHeartbeat", "BrokerReplay", "BrokerSendAssignments"))
                   for a, _next in model.successors(final))
