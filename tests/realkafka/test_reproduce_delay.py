"""A held AssignReplicasToDirs delayed rather than refused, and the controller's answer held after it handled one (plan.delays, docs/reproduce.md "The model run the cluster
follows"): where the trace handles a request while the broker has queued a newer entry of one of its partitions
(finding 3), a refusal would have the broker send the newer entry in its place; the planner marks the hold
delayed from the step that sends the request to the step that handles it, and the driver asks the gate for it."""
from __future__ import annotations

import pytest

from support.helpers import SCENARIOS
from realkafka.driver import plan as plan_mod
from realkafka.driver.mapping import ANSWER, ASSIGN, DELAYED, Hold
from realkafka.driver.plan import describe_holds, plan
from realkafka.driver.run import Driver, HarnessCannot
from support.reproduce_fake import ModelCluster
from support.reproduction import scenario_model

FINDING_3 = SCENARIOS / "kraft-finding-3-assignment-elects-by-the-old-dir.json"


def test_finding_3s_assignment_in_flight_is_delayed_from_its_send_to_its_handling():
    model, steps = scenario_model(FINDING_3)
    p = plan(model, steps)
    assert p.delays == ((0, 5, 11),)
    marked = [s.number for s in p.steps if Hold(DELAYED, 0) in s.holds_after]
    assert marked == list(range(5, 11))
    assert Hold(DELAYED, 0) in p.steps[5].holds_during and Hold(DELAYED, 0) not in p.steps[11].holds_during
    assert Hold(ASSIGN, 0) not in p.steps[11].holds_during       # released for the step, as before
    assert describe_holds(p.steps[6].holds_after) == "broker 0's AssignReplicasToDirs delayed, not refused"
    assert p.forced


def test_a_delay_changes_no_model_state_and_no_plan_without_a_queued_newer_entry(monkeypatch):
    model, steps = scenario_model(FINDING_3)
    delayed = plan(model, steps)
    monkeypatch.setattr(plan_mod, "delays", lambda model, planned: [])
    refused = plan(model, steps)
    assert [s.state for s in delayed.steps] == [s.state for s in refused.steps]
    assert [s.view for s in delayed.steps] == [s.view for s in refused.steps]
    monkeypatch.undo()
    for name in ("kraft-finding-1-acked-record-lost.json", "kraft-finding-5-unfenced-leader-on-failed-dir.json",
                 "kraft-finding-6-added-replica-dir-fails.json"):
        model, steps = scenario_model(SCENARIOS / name)
        assert plan(model, steps).delays == (), name


def test_the_driver_asks_the_gate_to_delay_where_the_plan_says_and_to_refuse_elsewhere():
    model, steps = scenario_model(FINDING_3)
    p = plan(model, steps)
    with ModelCluster(model, dir_failure_timeout=p.dir_failure_timeout) as cluster:
        run = Driver(cluster, model, p, timeout=3.0, still=0.3, poll=0.01).run()
        calls = list(cluster.gate_calls)
    assert run.disagreement is None and run.conforms
    assigns = [delay for api, broker, delay in calls if api == ASSIGN and broker == 0]
    assert assigns[0] is False and True in assigns
    first_delay = assigns.index(True)
    assert False in assigns[first_delay:], "held again refusing after the delayed request was handled"
    assert "leader_on_failed_dir" in run.real_shown()


FINDING_8 = SCENARIOS / "kraft-finding-8-partition-leaderless-with-its-data.json"


def test_finding_8s_accepted_move_is_kept_unswapped_by_holding_the_controllers_answer():
    """The move's target dir fails after the controller accepted it and before the swap: without the answer held,
    the planned cluster swaps at once and the trace's violation does not come (the plan was not forced); with the
    answers to broker 0 held from the acceptance (step 10) up to its next handled request (step 16), it is."""
    model, steps = scenario_model(FINDING_8)
    p = plan(model, steps)
    assert p.answers == ((0, 10, 16),) and p.forced
    held = [s.number for s in p.steps if Hold(ANSWER, 0) in s.holds_after]
    assert held == list(range(10, 16))
    assert not any(label.startswith("PromoteFutureReplica") for s in p.steps[10:16] for label in s.own)
    assert "the controller's answers to broker 0's AssignReplicasToDirs" in describe_holds(p.steps[11].holds_after)


def test_the_driver_holds_the_answers_where_the_plan_says():
    """The scripted cluster holds what the model holds (its answer hold stops the swap, not the next request, which
    a real broker does not send before the answer): the run stays a behaviour of the model."""
    model, steps = scenario_model(FINDING_8)
    p = plan(model, steps)
    assert Hold(ANSWER, 0) in p.steps[10].holds_during and Hold(ANSWER, 0) not in p.steps[16].holds_during
    with ModelCluster(model, dir_failure_timeout=p.dir_failure_timeout) as cluster:
        run = Driver(cluster, model, p, timeout=2.0, still=0.1, poll=0.005).run()
        calls = list(cluster.gate_calls)
        assert not any(api == ANSWER for api, _ in cluster.holds)      # released at step 16
    assert (ANSWER, 0, False) in calls
    assert run.disagreement is None and run.conforms


def test_a_plan_that_holds_answers_needs_the_harnesss_answer_proxy():
    model, steps = scenario_model(FINDING_8)
    p = plan(model, steps)

    class NoProxy(ModelCluster):
        capabilities = ModelCluster.capabilities - {"hold_answers"}

    with NoProxy(model) as cluster, pytest.raises(HarnessCannot, match="hold_answers"):
        Driver(cluster, model, p, timeout=3.0, still=0.3, poll=0.01).run()


def test_a_campaign_walk_keeps_an_accepted_move_unswapped_and_the_planner_holds_the_answer_there():
    """generate.walk holds the controller's answer after an acceptance that moves a promotion on (half the time):
    the trace then drives a step before the swap, and the planner holds the answer over it (seed 44 of kraft-future
    does: the acceptance at step 7, the crash at step 10, let go at step 11)."""
    import random
    from collections import Counter
    from types import SimpleNamespace

    from explorer.cli.reproduce import _kraft_model
    from realkafka.campaign.generate import drivable, labels, walk

    _, _, model, _ = _kraft_model(SimpleNamespace(model={"preset": "kraft-future"}), "3.9.2")
    steps = walk(model, random.Random(44), 6, Counter(), drivable(model))
    p = plan(model, steps)
    assert p.answers == ((0, 7, 11),) and p.forced
    window = labels(model, steps)[6:10]
    assert window[0] == "ControllerAssignReplicasToDirs(broker=0)" and "BrokerCrash(broker=0)" in window
    assert not any(s.startswith("PromoteFutureReplica") for s in window)


def test_a_future_log_on_a_failed_dir_of_a_down_broker_is_out_of_reach_in_the_view_as_on_the_cluster():
    """The walk above on 3.9.2 left the model at its DirFail of the crashed broker's dir 1: the harness reads no
    -future log in a failed dir (observed.py: only on an online dir), where the projection showed the model's. A
    -future log on a dir that is not live is out of reach on both sides now."""
    import random
    from collections import Counter
    from types import SimpleNamespace

    from explorer.cli.reproduce import _kraft_model
    from realkafka.campaign.generate import drivable, walk
    from realkafka.driver.projection import project

    _, _, model, _ = _kraft_model(SimpleNamespace(model={"preset": "kraft-future"}), "3.9.2")
    steps = walk(model, random.Random(44), 6, Counter(), drivable(model))
    state = model.init_states()[0]
    for name, args in steps[:steps.index(("DirFail", (0, 1))) + 1]:
        _, state = model.step(state, name, args)
    assert not state.brokers[0].up and state.brokers[0].future[0] == 1
    view = project(model, state).brokers[0]
    assert view.dirs[1] == "offline" and view.logs["t0"].future_dir is None
