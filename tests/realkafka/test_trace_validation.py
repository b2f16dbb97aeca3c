"""Trace validation (realkafka/driver/validate.py): a real run is judged by whether what it showed is a behaviour of
the model. Planted with the scripted cluster (tests/support/reproduce_fake.py): a run that leaves the model while the
scenario's checks still fire is never `reproduced`; a node that dies unasked is a harness failure (exit 3); a view
that is another path of the model is not a disagreement."""
from __future__ import annotations

import dataclasses
import json
import sys

import pytest

from support.helpers import SCENARIOS
from realkafka.driver import checks as C
from realkafka.driver.mapping import DRIVEN, handler
from realkafka.driver.plan import cluster_steps, plan, unjudged, why_unforced
from realkafka.driver.report import verdict
from realkafka.driver.run import Driver, NodeDied
from realkafka.driver.validate import Tracker
from support.reproduce_fake import ModelCluster, fake_harness
from support.reproduction import scenario_model, trace_history

FINDING_1 = SCENARIOS / "kraft-finding-1-replica-recreated-over-failed-dir.json"


def _after_restart(calls) -> bool:
    return any(name == "BrokerRestart" for name, _ in calls)


def _broker_1_registers_one_dir(view, calls):
    """An observation no model state of this scenario has: broker 1, which no step touches, lists dir 0 only."""
    if not _after_restart(calls):
        return view
    regs = list(view.registrations)
    regs[1] = dataclasses.replace(regs[1], dirs=frozenset({0}))
    return dataclasses.replace(view, registrations=tuple(regs))


def _drive(model, steps, **kw):
    p = plan(model, steps)
    with ModelCluster(model, dir_failure_timeout=p.dir_failure_timeout, **kw) as cluster:
        run = Driver(cluster, model, p, timeout=3.0, still=0.3, poll=0.01).run()
    return p, run


def test_the_planned_run_of_every_reproducible_scenario_is_a_behaviour_the_tracker_accepts():
    """The planner's own run (its cluster steps in one order) is among the candidates at every step: the tracker
    never calls the model's own run a disagreement."""
    for name in ("kraft-finding-1-acked-record-lost.json", "kraft-finding-5-unfenced-leader-on-failed-dir.json",
                 "kraft-finding-6-added-replica-dir-fails.json"):
        model, steps = scenario_model(SCENARIOS / name)
        p = plan(model, steps)
        tracker = Tracker(model, cluster_steps(model, steps), model.init_states())
        for s in p.steps:
            if s.rule is not None and s.taken and handler(s.rule).how == DRIVEN:
                assert tracker.drive(s.rule, s.args) is None
            tracker.open(s.holds_during & s.holds_after)
            assert s.state in tracker.narrow(s.view, s.view.faulted), (name, s.number)


def test_a_run_that_leaves_the_model_is_a_disagreement_and_never_reproduced():
    model, steps = scenario_model(FINDING_1)
    p, run = _drive(model, steps, warp=_broker_1_registers_one_dir)
    assert run.disagreement is not None and not run.conforms
    left = next(s for s in run.steps if s.number == run.disagreement.step)
    assert left.text == "BrokerRestart(broker=0)"
    assert "broker 1's registration lists dirs {0}, the model expects {0, 1}" in run.disagreement.closest
    assert run.steps[-1].number == run.disagreement.step, "the run stops where it left the model"
    # the scenario's check fires on the real side all the same: the old judgement called this reproduced
    assert set(run.real_shown()) == set(p.target)
    text, ok, violation = verdict(p, run, "4.4.0")
    assert not ok and violation["reproduced"] is False and violation["conforms"] is False
    assert "left the model at step 6" in text and "reproduces nothing" in text


def test_a_cluster_that_takes_another_path_of_the_model_is_no_disagreement():
    """A view the planned run does not have but another interleaving of the model does (broker 1 has not yet
    replayed the topic's creation, held for a moment): the tracker keeps it, the run goes on."""
    model, steps = scenario_model(FINDING_1)
    p = plan(model, steps)
    tracker = Tracker(model, cluster_steps(model, steps), model.init_states())
    tracker.open(p.steps[0].holds_after)
    assert tracker.narrow(p.steps[0].view, frozenset())
    assert tracker.drive("CreateTopic", (0,)) is None
    graph = tracker.open(p.steps[1].holds_during & p.steps[1].holds_after)
    others = [v for v in (tracker.view(s, frozenset()) for s in graph.edges) if v != p.steps[1].view]
    assert others, "the cluster's own steps have other interleavings here"
    another = others[0]
    assert tracker.narrow(another, frozenset())
    # and a view no state shows is not accepted
    regs = list(another.registrations)
    regs[1] = dataclasses.replace(regs[1], dirs=frozenset({0}))
    assert not tracker.narrow(dataclasses.replace(another, registrations=tuple(regs)), frozenset())


def test_a_driven_step_the_model_does_not_allow_is_a_disagreement():
    model, steps = scenario_model(FINDING_1)
    tracker = Tracker(model, cluster_steps(model, steps), model.init_states())
    tracker.open(frozenset())
    why = tracker.drive("BrokerRestart", (0,))      # broker 0 is running: the model cannot restart it
    assert why is not None and "BrokerRestart(broker=0)" in why


def _main(args) -> int:
    from explorer.cli.app import main

    with pytest.raises(SystemExit) as e:
        main(args)
    return e.value.code


def _fake_harness(monkeypatch, **kw):
    module, made, made_for = fake_harness(lambda path: scenario_model(path)[0], **kw)
    monkeypatch.setitem(sys.modules, "realkafka.cluster", module)
    return made, made_for


def test_reproduce_says_reproduced_only_for_a_run_that_stayed_in_the_model(monkeypatch, tmp_path, capsys):
    made, made_for = _fake_harness(monkeypatch, warp=_broker_1_registers_one_dir)
    made_for.append(FINDING_1)
    report = tmp_path / "r.json"
    assert _main(["reproduce", str(FINDING_1), "--kafka", "4.4.0", "--step-timeout", "2",
                  "--json", str(report)]) == 1
    data = json.loads(report.read_text())
    assert data["result"] == "differs" and data["violation"]["reproduced"] is False
    assert data["disagreement"]["step"] == 6
    assert "LEFT THE MODEL" in capsys.readouterr().out


def test_a_node_that_dies_unasked_is_a_harness_failure_exit_3(monkeypatch, capsys):
    line = "broker 1 was ended by signal SIGKILL, not by jbodcheck; its last log lines (server.log): x | y"
    made, made_for = _fake_harness(monkeypatch, dead=lambda calls: [line] if _after_restart(calls) else [])
    made_for.append(FINDING_1)
    assert _main(["reproduce", str(FINDING_1), "--kafka", "4.4.0", "--step-timeout", "2"]) == 3
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "ended without jbodcheck ending it" in err and "broker 1 was ended by signal SIGKILL" in err
    assert made[0].stopped


def test_the_driver_asks_for_dead_nodes_at_every_observation():
    model, steps = scenario_model(FINDING_1)
    p = plan(model, steps)
    with ModelCluster(model, dead=lambda calls: ["the controller exited with code 1"] if calls else []) as cluster:
        with pytest.raises(NodeDied, match="the controller exited"):
            Driver(cluster, model, p, timeout=3.0, still=0.3, poll=0.01).run()


def test_a_scenario_whose_timing_cannot_be_forced_is_refused_at_once(capsys):
    name = SCENARIOS / "kraft-finding-4-stale-future-log-promoted-at-start-up.json"
    model, steps = scenario_model(name)
    why = why_unforced(model, steps, plan(model, steps))
    assert why is not None and why.startswith("step ")
    assert _main(["reproduce", str(name), "--kafka", "4.4.0"]) == 2
    err = capsys.readouterr().err
    assert "cannot be reproduced by this harness" in err and len(err.strip().splitlines()) == 1
    assert _main(["reproduce", str(name), "--kafka", "4.4.0", "--plan-only"]) == 0


def test_a_property_no_check_judges_makes_the_run_refuse(capsys):
    name = SCENARIOS / "kraft-finding-3-elr-leader-outside-empty-isr.json"
    model, steps = scenario_model(name, kafka="4.4")
    assert "kraft_elr_well_formed" in unjudged(model, steps)
    assert _main(["reproduce", str(name), "--kafka", "4.4.0"]) == 2
    assert "kraft_elr_well_formed (step 17), which no real-cluster check shows on its trace" in capsys.readouterr().err


def test_finding_8s_property_has_a_real_cluster_check():
    name = SCENARIOS / "kraft-finding-8-partition-leaderless-with-its-data.json"
    model, steps = scenario_model(name, kafka="3.9")
    assert not unjudged(model, steps)
    history = trace_history(model, steps)
    shown = set()
    for i in range(1, len(history) + 1):
        shown |= set(C.judge(history[:i]))
    assert "leaderless_with_live_isr_copy" in shown
    assert not C.judge(history[:2])


def _after_the_topic_is_created():
    """Finding 1's model, plan, and a tracker whose graph is the cluster's own steps after CreateTopic."""
    model, steps = scenario_model(FINDING_1)
    p = plan(model, steps)
    tracker = Tracker(model, cluster_steps(model, steps), model.init_states())
    tracker.open(p.steps[0].holds_after)
    assert tracker.drive("CreateTopic", (0,)) is None
    graph = tracker.open(p.steps[1].holds_during & p.steps[1].holds_after)
    return model, steps, p, tracker, graph


def test_a_view_whose_candidates_have_no_step_left_is_settled():
    """The wait accepts another path after 3 s only when, by the model, the cluster cannot move again."""
    model, steps, p, tracker, graph = _after_the_topic_is_created()
    terminal = [s for s, succ in graph.edges.items() if not succ]
    moving = [s for s, succ in graph.edges.items() if succ]
    assert terminal and moving
    assert tracker.settled(terminal) and not tracker.settled(moving[:1])


def test_migrating_is_flagged_only_after_the_metadata_version_upgrade():
    """Before 3.7-IV2 every Directories entry is MIGRATING by Kafka's design (the view's jbod is False): the
    Directories checks stay silent there and fire where finding 7 keeps MIGRATING after the upgrade."""
    name = SCENARIOS / "kraft-finding-7-migrating-kept-after-the-mv-upgrade.json"
    model, steps = scenario_model(name, kafka="3.9", data=False)
    history = trace_history(model, steps)
    assert history[1].jbod is False and history[-1].jbod is True
    before = [i for i in range(1, len(history)) if history[i].jbod is False]
    for i in before:
        assert "directories_name_wrong_dir" not in C.judge(history[:i + 1])
    shown = [i for i in range(len(history)) if "directories_name_wrong_dir" in C.judge(history[:i + 1])]
    assert shown and min(shown) == len(history) - 1 == 12
    assert unjudged(model, steps) == {}


def test_settled_reads_the_views_the_model_can_still_reach():
    """Own steps that change nothing observable (a heartbeat's internal effects) do not keep a wait open."""
    model, steps, p, tracker, graph = _after_the_topic_is_created()
    end = p.steps[1].view
    found = tracker.matching(graph.edges, end, frozenset())
    assert tracker.settled(found, end, frozenset())
    first = tracker.view(next(iter(graph.starts)), frozenset())
    if first != end:
        assert not tracker.settled(list(graph.starts), first, frozenset())


def test_a_produce_kafka_refuses_before_any_append_is_a_refusal_the_tracker_judges():
    """NOT_ENOUGH_REPLICAS: the leader appended nothing, so the states consistent with it are those where the model
    refuses Produce too (a campaign took the refused record for an appended one: 'ends at offset 0, the model
    expects 1'). A timeout is no refusal: the record may have been appended."""
    import types

    from realkafka.driver.run import Refused, Unknown

    model, steps = scenario_model(FINDING_1)
    p = plan(model, steps)
    answers = iter(["NotEnoughReplicasException: the ISR is below min.insync.replicas",
                    "TimeoutException: expired"])
    cluster = types.SimpleNamespace(produce=lambda *a, **k: types.SimpleNamespace(offset=None, error=next(answers)))
    driver = Driver(cluster, model, p)
    with pytest.raises(Refused, match="NotEnoughReplicasException"):
        driver.produce(0)
    with pytest.raises(Unknown, match="TimeoutException"):
        driver.produce(0)      # a timeout: appended or not, nobody knows
    assert driver.acked() == {"t0": frozenset()}
    tracker = Tracker(model, cluster_steps(model, steps), model.init_states())
    tracker.open(frozenset())
    assert tracker.drive("CreateTopic", (0,)) is None
    tracker.open(frozenset())
    before = tracker.extended()
    assert tracker.drive("Produce", (0, 0), maybe=True) is None
    assert before <= tracker.states and len(tracker.states) > len(before)


def test_a_failed_dirs_copy_of_an_earlier_topic_of_the_same_name_is_no_copy_of_todays(tmp_path):
    """KAFKA-16157's scenario re-creates a deleted topic: the failed dir still holds the old t0-0 (its
    partition.metadata names the old topic id), which is no copy of the new t0-0 (every release left the model
    there before: 'broker 0's failed dirs holding t0-0 are {0}, the model expects {}')."""
    import types

    from realkafka.driver.run import failed_copies

    aside = tmp_path / "dir-0.failed" / "t0-0"
    aside.mkdir(parents=True)
    (aside / "partition.metadata").write_text("version: 0\ntopic_id: OLDoldOLDoldOLDoldOLDold\n")
    cluster = types.SimpleNamespace(dir_path=lambda b, d: tmp_path / f"dir-{d}")
    assert failed_copies(cluster, {(0, 0)}, {"t0": "NEWnewNEWnewNEWnewNEWnew"}) == {0: {0: frozenset()}}
    assert failed_copies(cluster, {(0, 0)}, {"t0": "OLDoldOLDoldOLDoldOLDold"}) == {0: {0: frozenset({"t0"})}}
    assert failed_copies(cluster, {(0, 0)}, {}) == {0: {0: frozenset({"t0"})}}, "a deleted topic's copy stays"


def test_a_leader_shrinks_a_follower_that_cannot_fetch_without_any_hold():
    """A follower whose replica went offline (or whose broker crashed) fetches nothing, and its leader shrinks it
    out of the ISR after replica.lag.time.max.ms: a step time brings about with no hold in force (a campaign at
    4.4.0 left the model there before: 'ISR {0}, the model expects {0, 1}', its record acknowledged)."""
    from realkafka.driver.validate import timed_steps

    model, _ = scenario_model(FINDING_1)
    steps = timed_steps(model, frozenset())
    assert {(rule.name, args) for rule, args in steps} >= {("LeaderShrinkIsr", (0, 0)), ("LeaderShrinkIsr", (0, 1))}


def test_a_deferred_produce_is_taken_when_its_record_is_sent():
    """The planned run acknowledges broker 0's record only after later steps, so the driver sends it then; the
    tracker takes the Produce at the sending step too (until a campaign showed it, it took it where planned, and a
    cluster that had not been sent the record yet showed a log no candidate had: docs/conform.md, disagreement 6)."""
    model, steps = scenario_model(SCENARIOS / "kraft-conform-deferred-produce-on-another-path.json")
    p, run = _drive(model, steps)
    deferred = [s for s in run.steps if s.unobserved and "is sent with step" in s.unobserved]
    assert deferred, "the planned run defers the record"
    assert run.disagreement is None, run.disagreement


def test_a_record_whose_producer_gave_up_is_not_compared_as_unacknowledged():
    """A producer that timed out does not know whether its record was committed; the model, where the record was
    appended and replicated, counts it acknowledged. The views compare the offsets whose outcome is known (a 4.4.0
    random-fault run's record, sent while a follower was down, timed out and was committed after its restart:
    docs/conform.md, disagreement 8)."""
    from realkafka.driver.compare import differences
    from realkafka.driver.run import _settle_slot
    from realkafka.driver.view import DataView

    model, steps = scenario_model(SCENARIOS / "kraft-finding-1-rf1-acked-record-lost.json")
    p = plan(model, steps)
    expected = next(s.view for s in p.steps if any(d.acked for d in s.view.data.values()))
    topic = next(t for t, d in expected.data.items() if d.acked)
    offsets = expected.data[topic].acked
    gave_up = dataclasses.replace(expected, data={**expected.data, topic: DataView(frozenset(), None, offsets)})
    told_nothing = dataclasses.replace(expected, data={**expected.data, topic: DataView(frozenset(), None)})
    assert not [d for d in differences(expected, gave_up) if "acknowledged" in d]
    assert [d for d in differences(expected, told_nothing) if "acknowledged" in d]

    timed_out, refused = [None, False, False, False], [None, False, False, False]
    _settle_slot(timed_out, dataclasses.make_dataclass("R", ["offset", "error"])(None, "TimeoutException: expired"))
    _settle_slot(refused, dataclasses.make_dataclass("R", ["offset", "error"])(None, "NotEnoughReplicasException: x"))
    assert timed_out[1:] == [True, False, True] and refused[1:] == [True, False, False]
