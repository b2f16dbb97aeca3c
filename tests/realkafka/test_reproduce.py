"""`jbodcheck reproduce` without a cluster (docs/reproduce.md): the mapping of every KRaft rule, the projection, the
comparison, the violation checks and the plan, and the driver's loop on a cluster that behaves as the model does
(tests/support/reproduce_fake.py). The runs on real clusters are tests/realkafka/test_reproduce_real.py (opt-in)."""
from __future__ import annotations

import dataclasses
import json
import os
import re
import signal
import subprocess
import sys
import types
from pathlib import Path

import pytest

from explorer.catalog import build_model, configure
from explorer.scenario import load_scenario, parse_step
from support.helpers import REPO, SCENARIOS
from realkafka.driver import checks as C
from realkafka.driver.compare import differences
from realkafka.driver.mapping import AWAITED, DRIVEN, NOT_REPRODUCIBLE, ORDERED, RULES, Hold
from realkafka.driver.observed import view_of
from realkafka.driver.plan import PlanError, plan
from realkafka.driver.projection import project
from realkafka.driver.run import Driver
from realkafka.driver.view import LogView, View
from support.reproduce_fake import ModelCluster, fake_harness, observation
from support.reproduction import scenario_model, trace_history

def kraft_rules() -> list[dict]:
    """Every rule of the KRaft design, those of features a configuration leaves out too (`rules` lists them)."""
    out = subprocess.run([sys.executable, "-m", "explorer", "rules", "--variant", "kraft", "--json"],
                         cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


# ---- the mapping -------------------------------------------------------------------------------------------------

def test_every_kraft_rule_has_a_mapping():
    names = {r["name"] for r in kraft_rules()}
    assert len(names) >= 38
    assert names - set(RULES) == set(), "rules without a mapping onto a real cluster"
    assert set(RULES) - names == set(), "mapping entries for no rule of the KRaft model"


def test_every_handler_says_how_and_acts_where_it_drives():
    for name, h in RULES.items():
        assert h.how in (DRIVEN, AWAITED, ORDERED, NOT_REPRODUCIBLE), name
        assert h.says, name
        assert (h.act is not None) == (h.how == DRIVEN), name
        if h.held_by is not None:
            assert h.how in (AWAITED, ORDERED), name


def test_the_mapping_tables_in_the_docs_match_the_code():
    doc = (REPO / "docs" / "reproduce.md").read_text()
    for name, h in RULES.items():
        assert f"| `{name}` | {h.how} |" in doc, name


def test_the_results_table_names_every_kraft_scenario_with_its_number_of_steps():
    """docs/reproduce.md's results: every KRaft scenario file has a row saying what the harness did or could not
    do, and a row's "N steps" are its files' own (a view count is "views")."""
    doc = (REPO / "docs" / "reproduce.md").read_text().split("## Results", 1)[1].split("\n## ", 1)[0]
    named: set = set()
    for row in (line for line in doc.splitlines() if line.startswith("| ") and not line.startswith("| finding /")):
        what, files = row.split(" | ")[:2]
        files = re.findall(r"`(kraft-[\w.-]+\.json)`", files)
        named |= set(files)
        counts = [int(n) for n in re.findall(r"(\d+) steps", what)]
        if counts:
            assert len(counts) == len(files), row
            assert counts == [len(load_scenario(str(SCENARIOS / f)).steps) for f in files], row
    assert named == {p.name for p in SCENARIOS.glob("kraft-*.json")}


# ---- the projection and the checks -------------------------------------------------------------------------------

@pytest.mark.parametrize("scenario, bugs, check", [
    ("kraft-finding-1-replica-recreated-over-failed-dir.json", (), "replica_recreated_over_failed_dir"),
    ("kraft-finding-1-acked-record-lost.json", (), "acked_record_gone"),
    ("kraft-finding-1-rf1-acked-record-lost.json", (), "acked_record_gone"),
    ("kraft-finding-5-unfenced-leader-on-failed-dir.json", (), "leader_on_failed_dir"),
    ("kraft-finding-6-added-replica-stays-unassigned.json", (), "directories_name_wrong_dir"),
    ("kraft-finding-6-added-replica-dir-fails.json", (), "replica_recreated_over_failed_dir"),
    ("kraft-kafka-16234-offline-partition-recreated.json", ("KAFKA-16234",), "replica_recreated_over_failed_dir"),
])
def test_the_projection_of_a_finding_shows_its_violation_at_its_last_step(scenario, bugs, check):
    model, steps = scenario_model(SCENARIOS / scenario, bugs, data=False)
    history = trace_history(model, steps)
    assert check in C.judge(history), C.judge(history)
    assert not C.judge(history[:2]), "nothing is wrong right after the topic's creation"


def test_the_checks_stand_for_the_invariants_the_model_breaks():
    """Every model invariant a finding's replay breaks, that a check stands for, is shown by that check on the
    trace's projections (at some step)."""
    from explorer.scenario import replay

    covered = {inv: c.id for c in C.CHECKS.values() for inv in c.invariants}
    for name in ("kraft-finding-1-acked-record-lost.json", "kraft-finding-5-unfenced-leader-on-failed-dir.json",
                 "kraft-finding-6-added-replica-stays-unassigned.json"):
        model, steps = scenario_model(SCENARIOS / name, data=False)
        result, _, _ = replay(model, load_scenario(str(SCENARIOS / name)), list(model.invariants))
        broken = {v.invariant.id for v in result.violations} & set(covered)
        history = trace_history(model, steps)
        shown = set()
        for i in range(1, len(history) + 1):
            shown |= set(C.judge(history[:i]))
        assert broken and {covered[i] for i in broken} <= shown, (name, broken, shown)


def test_a_reassignment_scenario_runs_on_the_data_path_and_its_restarted_follower_rejoins_the_isr():
    """Issue 45: a real follower fetches and rejoins the ISR after its restart; the plan's model now does too."""
    from explorer.cli.reproduce import _kraft_model, _steps

    sc = load_scenario(str(SCENARIOS / "kraft-finding-6-added-replica-recreated-over-failed-dir.json"))
    _, _, model, _ = _kraft_model(sc, "4.4.0")
    assert model.cfg.max_records_of(0) == 1                       # the data path on, as for the other scenarios
    steps = _steps(sc, model)
    assert steps[10] == ("ReplicaFetch", (1, 0))                   # the scenario's ReplicaCatchUp(partition=0, broker=1)
    planned = plan(model, steps)
    assert planned.forced
    restart = next(p for p in planned.steps if p.rule == "BrokerRestart")
    assert restart.view.partitions["t0"].isr == frozenset({0, 1})
    assert "ReplicaFetch(broker=1, partition=0)" in restart.own


def _view(model):
    return project(model, model.init_states()[0])


def _with_log(view, broker, topic, log, failed=None):
    b = view.brokers[broker]
    logs = dict(b.logs)
    if log is None:
        logs.pop(topic, None)
    else:
        logs[topic] = log
    on_failed = dict(b.on_failed_dirs or {})
    if failed is not None:
        on_failed[topic] = frozenset(failed)
    brokers = list(view.brokers)
    brokers[broker] = dataclasses.replace(b, logs=logs, on_failed_dirs=on_failed)
    return dataclasses.replace(view, brokers=tuple(brokers))


def test_each_check_fails_on_a_planted_case_and_only_there():
    model, steps = scenario_model(SCENARIOS / "kraft-finding-6-added-replica-stays-unassigned.json", data=False)
    history = trace_history(model, steps)
    end = history[-1]
    assert C.CHECKS["directories_name_wrong_dir"]([end])
    assert not C.CHECKS["directories_name_wrong_dir"]([dataclasses.replace(end, quiet=False)]), "judged only quiet"
    # A log promoted from its -future dir is no creation; one that appears on a dir is.
    before = _with_log(end, 0, "t0", LogView(0, 1, 0))
    promoted = _with_log(_with_log(end, 0, "t0", LogView(1, None, 0)), 0, "t0", LogView(1, None, 0), failed={0})
    assert C.replica_recreated_over_failed_dir([before, promoted]) is None
    created = _with_log(before, 0, "t0", LogView(1, None, 0), failed={0})
    assert C.replica_recreated_over_failed_dir([_with_log(end, 0, "t0", LogView(0)), created])
    # A leader without a live log; a dir offline that no step failed.
    no_log = dataclasses.replace(_with_log(end, 0, "t0", None, failed={0}), quiet=True)
    assert "broker 0" in C.leader_on_failed_dir([no_log])
    dead = dataclasses.replace(end, brokers=(dataclasses.replace(end.brokers[0], dirs=("offline", "online")),
                                             *end.brokers[1:]))
    assert C.healthy_dir_offline([dead]) and not C.healthy_dir_offline([dataclasses.replace(dead, faulted={(0, 0)})])
    assert C.assignments_never_drain([dataclasses.replace(end, retrying=frozenset({0}))])


# ---- the comparison ----------------------------------------------------------------------------------------------

def test_a_planted_difference_is_named_in_kafkas_words():
    model, steps = scenario_model(SCENARIOS / "kraft-finding-1-replica-recreated-over-failed-dir.json")
    expected = plan(model, steps).steps[1].view      # after CreateTopic: both replicas' logs on dir 0
    assert differences(expected, expected) == []
    moved = _with_log(expected, 0, "t0", LogView(1, None, 0))
    part = expected.partitions["t0"]
    wrong = dataclasses.replace(moved, partitions={"t0": dataclasses.replace(
        part, leader=1, isr=frozenset({1}), directories=(0, "UNASSIGNED"))})
    diffs = differences(expected, wrong)
    assert "broker 0's replica of t0-0 is on dir 1, the model expects dir 0" in diffs
    assert "t0-0's leader is broker 1, the model expects broker 0" in diffs
    assert "t0-0's ISR is {1}, the model expects {0, 1}" in diffs
    assert "t0-0's Directories entry for broker 0 is dir 0, the model expects UNASSIGNED" in diffs


def test_epochs_elr_without_elr_in_the_model_and_unobserved_logs_are_not_compared():
    model, steps = scenario_model(SCENARIOS / "kraft-finding-1-replica-recreated-over-failed-dir.json", kafka="3.9")
    expected = plan(model, steps).steps[1].view
    part = expected.partitions["t0"]
    assert part.elr is None
    real = dataclasses.replace(expected, partitions={"t0": dataclasses.replace(part, elr=frozenset({1}))},
                               brokers=(dataclasses.replace(expected.brokers[0], logs=None), expected.brokers[1]))
    assert differences(expected, real) == []


def test_elr_is_compared_where_the_model_runs_with_it():
    model, steps = scenario_model(SCENARIOS / "kraft-finding-1-replica-recreated-over-failed-dir.json", kafka="4.4")
    expected = plan(model, steps).steps[1].view
    part = expected.partitions["t0"]
    assert part.elr == frozenset()
    real = dataclasses.replace(expected, partitions={"t0": dataclasses.replace(part, elr=frozenset({1}))})
    assert differences(expected, real) == ["t0-0's ELR is {1}, the model expects {}"]


def test_an_observation_reads_back_as_the_view_it_shows():
    model, steps = scenario_model(SCENARIOS / "kraft-finding-1-acked-record-lost.json")
    for step in plan(model, steps).steps:
        view = step.view
        acked = {t: d.acked for t, d in view.data.items()}
        aside = {}   # what the moved-aside dirs hold (the driver lists them: run.failed_copies)
        for b, broker in enumerate(view.brokers):
            for topic, dirs in broker.on_failed_dirs.items():
                for d in dirs:
                    if (b, d) in view.faulted:
                        aside.setdefault(b, {}).setdefault(d, set()).add(topic)
        real = view_of(observation(view), model.cfg.brokers, acked, {}, view.faulted, view.quiet,
                       failed_copies=aside)
        assert differences(view, real) == [], step.text


def test_directories_and_another_broker_s_dir_are_named_as_the_model_s_trace_names_them():
    model, steps = scenario_model(SCENARIOS / "kraft-finding-1-replica-recreated-over-failed-dir.json")
    expected = plan(model, steps).steps[1].view
    part = expected.partitions["t0"]
    real = view_of(observation(dataclasses.replace(expected, partitions={"t0": dataclasses.replace(
        part, replicas=(1, 0), directories=((0, 1), "UNASSIGNED"))})), model.cfg.brokers, {}, {})
    assert real.partitions["t0"].directories == ("dir 1 of broker 0", "UNASSIGNED")
    assert ("t0-0's Directories are [dir 1 of broker 0, UNASSIGNED], the model expects [UNASSIGNED, UNASSIGNED]"
            in differences(expected, real))


def test_a_step_s_metadata_records_read_as_the_model_s_trace_writes_them():
    """The records a step shows (Kafka's JSON converter's fields: int8 flags, "no change" values, dir uuids)
    in the model trace's form: Kafka's names, ``true``/``false``, lists as ``[0, 1]``, dirs by name."""
    from realkafka.cluster.observation import RESERVED, DirNames
    from realkafka.driver.report import step_lines
    from realkafka.driver.run import StepResult

    unassigned = next(u for u, name in RESERVED.items() if name == "UNASSIGNED")
    names = DirNames({"u-00": (0, 0), "u-01": (0, 1), "u-10": (1, 0)})
    driver = Driver(types.SimpleNamespace(names=names), None, None)
    kafka_json = [
        ("RegisterBrokerRecord", {"brokerId": 0, "brokerEpoch": 7, "fenced": True, "inControlledShutdown": False,
                                  "logDirs": ["u-01"], "incarnationId": "x"}),
        ("BrokerRegistrationChangeRecord", {"brokerId": 0, "brokerEpoch": 7, "fenced": -1,
                                            "inControlledShutdown": 0, "logDirs": []}),
        ("BrokerRegistrationChangeRecord", {"brokerId": 1, "brokerEpoch": 3, "fenced": 1, "inControlledShutdown": 1,
                                            "logDirs": []}),
        ("PartitionRecord", {"partitionId": 0, "topicId": "tid", "replicas": [0, 1], "isr": [0, 1], "leader": 0,
                             "directories": [unassigned, "u-10"], "leaderRecoveryState": 0}),
        ("PartitionChangeRecord", {"partitionId": 0, "topicId": "tid", "isr": [], "leader": -1, "replicas": None,
                                   "directories": None, "leaderRecoveryState": -1, "eligibleLeaderReplicas": [0],
                                   "lastKnownElr": [0]}),
        ("PartitionChangeRecord", {"partitionId": 0, "topicId": "tid", "isr": [0], "leader": -2,
                                   "replicas": [0, 1], "directories": ["u-01", "u-01"], "leaderRecoveryState": 1}),
    ]
    records = [{"offset": i, "type": kind, "data": driver._named(data)} for i, (kind, data) in enumerate(kafka_json)]
    model, steps = scenario_model(SCENARIOS / "kraft-finding-1-replica-recreated-over-failed-dir.json")
    view = plan(model, steps).steps[1].view
    step = StepResult(1, "CreateTopic(partition=0)", "driven", True, (), (), view, observed=view, records=records)
    lines = [line.split(": ", 1)[1] for line in step_lines(step, None, 7) if "metadata log" in line]
    assert lines == [
        "RegisterBrokerRecord(brokerId=0, brokerEpoch=7, fenced=true, logDirs=[dir 1], inControlledShutdown=false)",
        "BrokerRegistrationChangeRecord(brokerId=0, brokerEpoch=7, fenced=false)",
        "BrokerRegistrationChangeRecord(brokerId=1, brokerEpoch=3, fenced=true, inControlledShutdown=true)",
        "PartitionRecord(partitionId=0, leader=0, isr=[0, 1], replicas=[0, 1], directories=[UNASSIGNED, dir 0], "
        "leaderRecoveryState=0)",
        "PartitionChangeRecord(partitionId=0, leader=none, isr=[], eligibleLeaderReplicas=[0], lastKnownElr=[0])",
        "PartitionChangeRecord(partitionId=0, isr=[0], replicas=[0, 1], directories=[dir 1, dir 1 of broker 0], "
        "leaderRecoveryState=1)",
    ]


# ---- the plan ----------------------------------------------------------------------------------------------------

def test_finding_1_needs_only_the_assignment_held():
    model, steps = scenario_model(SCENARIOS / "kraft-finding-1-replica-recreated-over-failed-dir.json")
    p = plan(model, steps)
    assert p.forced and p.windows == () and p.fetch_holds == {}
    assert list(p.target) == ["replica_recreated_over_failed_dir"]
    assert all(Hold("AssignReplicasToDirs", 0) in s.holds_after for s in p.steps[:-1])


def test_finding_1_with_a_record_holds_the_lagging_followers_fetches():
    model, steps = scenario_model(SCENARIOS / "kraft-finding-1-acked-record-lost.json")
    p = plan(model, steps)
    assert p.forced and p.fetch_holds == {Hold("Fetch", 1, 0): None}
    assert {"acked_record_gone", "replica_recreated_over_failed_dir"} == set(p.target)


def test_finding_5_holds_the_heartbeat_until_after_the_assignment():
    model, steps = scenario_model(SCENARIOS / "kraft-finding-5-unfenced-leader-on-failed-dir.json")
    p = plan(model, steps)
    assert p.forced and p.windows == ((0, 4, 10),)
    assign = p.steps[9]
    assert assign.text == "ControllerAssignReplicasToDirs(broker=0)"
    assert Hold("AssignReplicasToDirs", 0) not in assign.holds_during
    assert Hold("BrokerHeartbeat", 0) in assign.holds_during and Hold("BrokerHeartbeat", 0) not in p.steps[10].holds_after


def test_finding_5_through_an_expired_session_keeps_the_broker_up_while_its_heartbeats_are_held():
    """3.8+ has BrokerDirFailureTimeout: with heartbeats held after a dir failure the model's broker would stop
    itself, a step the trace does not take. The plan leaves it out and says the cluster must not time out either;
    a trace that takes it keeps it."""
    model, steps = scenario_model(SCENARIOS / "kraft-finding-5-session-expiry-unfenced-leader-on-failed-dir.json")
    assert "BrokerDirFailureTimeout" in {rule.name for _, rule, _ in model.action_space}
    p = plan(model, steps)
    assert p.forced and p.windows == ((0, 3, 8),) and not p.dir_failure_timeout
    assert set(p.target) == {"leader_on_failed_dir", "leader_not_acceptable"}
    assert not any("BrokerDirFailureTimeout" in label for s in p.steps for label in s.own)
    timed = steps[:4] + [("BrokerDirFailureTimeout", (0,))]
    assert plan(model, timed).dir_failure_timeout


def test_a_liveness_bug_shows_once_every_hold_is_released():
    model, steps = scenario_model(SCENARIOS / "kraft-kafka-17190-assignment-of-a-deleted-topic-retried.json",
                                  ("KAFKA-17190",))
    p = plan(model, steps)
    assert p.forced and "assignments_never_drain" in p.target and p.steps[-1].view.retrying == {0}
    fixed, steps = scenario_model(SCENARIOS / "kraft-kafka-17190-assignment-of-a-deleted-topic-retried.json")
    assert plan(fixed, steps).target == {}


def test_a_rule_that_cannot_run_on_a_real_cluster_is_refused():
    model, _ = scenario_model(SCENARIOS / "kraft-finding-1-replica-recreated-over-failed-dir.json")
    with pytest.raises(PlanError, match="no mapping"):
        plan(model, [("NoSuchRule", ())])
    sessions, _ = scenario_model(SCENARIOS / "kraft-kafka-15649-unacknowledged-failure-keeps-the-leader.json")
    with pytest.raises(PlanError, match="BrokerHeartbeatAnswerLost is not reproducible"):
        plan(sessions, [("CreateTopic", (0,)), ("BrokerHeartbeatAnswerLost", (0,))])


def test_a_step_the_cluster_s_own_steps_leave_disabled_is_refused_in_one_sentence():
    # KAFKA-16162: the brokers replay the metadata.version upgrade and register their dirs at once, so the topic's
    # Directories name the dir and no AssignReplicasToDirs is sent
    model, steps = scenario_model(SCENARIOS / "kraft-kafka-16162-no-leader-after-the-mv-upgrade.json", kafka="3.9.2")
    with pytest.raises(PlanError) as e:
        plan(model, steps)
    assert str(e.value) == ("step 6 ControllerAssignReplicasToDirs(broker=0) cannot be driven on a real cluster: "
                            "after the cluster's own steps, broker 0 has no AssignReplicasToDirs request in flight")


# ---- the driver's loop on a cluster that behaves as the model does ----------------------------------------------

def _drive(model, steps, **kw):
    p = plan(model, steps)
    with ModelCluster(model, dir_failure_timeout=p.dir_failure_timeout, **kw) as cluster:
        run = Driver(cluster, model, p, timeout=3.0, still=0.3, poll=0.01).run()
    assert not cluster.root.exists()   # the fake's directory goes with it, as the real cluster's does
    return p, cluster, run


@pytest.mark.parametrize("scenario", ["kraft-finding-1-replica-recreated-over-failed-dir.json",
                                      "kraft-finding-1-acked-record-lost.json",
                                      "kraft-finding-5-unfenced-leader-on-failed-dir.json",
                                      "kraft-finding-5-session-expiry-unfenced-leader-on-failed-dir.json",
                                      "kraft-finding-6-added-replica-stays-unassigned.json",
                                      "kraft-kafka-17190-assignment-of-a-deleted-topic-retried.json"])
def test_a_cluster_that_behaves_as_the_model_matches_at_every_step(scenario):
    model, steps = scenario_model(SCENARIOS / scenario)
    p, _, run = _drive(model, steps)
    assert run.matched, [(s.number, s.differences) for s in run.steps if s.differences]
    assert set(run.real_shown()) == set(p.target)


def test_a_cluster_that_differs_is_reported_where_it_differs():
    model, steps = scenario_model(SCENARIOS / "kraft-finding-1-replica-recreated-over-failed-dir.json")
    _, _, run = _drive(model, steps, deviate=lambda name, args: name == "DirFail")
    first = next(s for s in run.steps if s.differences)
    assert first.text == "DirFail(broker=0, dir=0)"
    assert "broker 0's dir 0 is online, the model expects it offline" in first.differences
    assert "replica_recreated_over_failed_dir" not in run.real_shown()


# ---- the command -------------------------------------------------------------------------------------------------

def _fake_harness(monkeypatch, **kw):
    module, made, made_for = fake_harness(lambda path: scenario_model(path)[0], **kw)
    monkeypatch.setitem(sys.modules, "realkafka.cluster", module)
    return made, made_for


def _main(args) -> int:
    from explorer.cli.app import main

    with pytest.raises(SystemExit) as e:
        main(args)
    return e.value.code


def test_reproduce_exits_0_when_the_cluster_matches_and_the_violation_happens(monkeypatch, tmp_path, capsys):
    scenario = SCENARIOS / "kraft-finding-1-replica-recreated-over-failed-dir.json"
    made, made_for = _fake_harness(monkeypatch)
    made_for.append(scenario)
    report = tmp_path / "r.json"
    assert _main(["reproduce", str(scenario), "--kafka", "4.4", "--json", str(report)]) == 0
    out = capsys.readouterr().out
    assert "model expects:" in out and "real cluster:  the same" in out
    assert "The scenario's violation happened on the real cluster" in out
    data = json.loads(report.read_text())
    assert data["kafka"] == "4.4.0" and data["result"] == "matched" and data["exit_code"] == 0
    assert made[0].stopped and not made[0].root.exists()


def test_reproduce_exits_1_when_the_cluster_differs(monkeypatch, capsys):
    scenario = SCENARIOS / "kraft-finding-1-replica-recreated-over-failed-dir.json"
    made, made_for = _fake_harness(monkeypatch, deviate=lambda name, args: name == "BrokerRestart")
    made_for.append(scenario)
    assert _main(["reproduce", str(scenario), "--kafka", "4.4.0", "--step-timeout", "2"]) == 1
    out = capsys.readouterr().out
    assert "left the model at step" in out and "reproduces nothing" in out
    assert made[0].stopped


def test_reproduce_exits_3_when_the_harness_fails_and_2_on_bad_input(monkeypatch, capsys):
    scenario = SCENARIOS / "kraft-finding-1-replica-recreated-over-failed-dir.json"
    made, made_for = _fake_harness(monkeypatch, fail_on="observe")
    made_for.append(scenario)
    assert _main(["reproduce", str(scenario), "--kafka", "4.4.0"]) == 3
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1] == "jbodcheck: failure: the real cluster failed: observe failed"
    assert made[0].stopped
    assert _main(["reproduce", str(SCENARIOS / "log-dir-failure-test-leader.json"), "--kafka", "4.4.0"]) == 2
    assert "no ZooKeeper mode" in capsys.readouterr().err        # a ZooKeeper-mode scenario: 3.x only
    assert _main(["reproduce", str(scenario), "--kafka", "four"]) == 2
    assert _main(["reproduce", str(scenario), "--kafka", "3.1"]) == 2


def test_reproduce_on_ctrl_c_stops_the_cluster_and_exits_130(monkeypatch, tmp_path):
    scenario = SCENARIOS / "kraft-finding-1-replica-recreated-over-failed-dir.json"

    def interrupt(name, args):
        if name == "BrokerCrash":
            raise KeyboardInterrupt
        return False
    made, made_for = _fake_harness(monkeypatch, deviate=interrupt)
    made_for.append(scenario)
    report = tmp_path / "r.json"
    assert _main(["reproduce", str(scenario), "--kafka", "4.4.0", "--json", str(report)]) == 130
    assert made[0].stopped and not made[0].root.exists()
    assert json.loads(report.read_text())["result"] == "interrupted"


def test_reproduce_says_nothing_of_maven_when_nothing_is_fetched_and_its_help_knows_the_model_has_elr(
        monkeypatch, capsys):
    """The fetch says what it fetches (realkafka/cluster/release.py, only when it does): the command adds no
    "fetching ... from Maven Central" line of its own on every run (issue 46)."""
    scenario = SCENARIOS / "kraft-finding-1-replica-recreated-over-failed-dir.json"
    made, made_for = _fake_harness(monkeypatch)
    made_for.append(scenario)
    assert _main(["reproduce", str(scenario), "--kafka", "4.4.0"]) == 0
    assert "Maven" not in capsys.readouterr().err
    assert _main(["reproduce", "--help"]) == 0
    help_text = " ".join(capsys.readouterr().out.split())
    assert "has no ELR" not in help_text and "the model follows the same setting" in help_text


def test_a_harness_error_naming_a_log_of_the_removed_directory_says_keep(tmp_path):
    from realkafka.cluster import Cluster, ClusterSpec, HarnessError

    for keep in (False, True):
        cluster = Cluster(ClusterSpec(release="4.4.0", keep=keep))
        cluster.root = tmp_path / f"jbodcheck-kafka-{keep}"
        (cluster.root / "broker-0").mkdir(parents=True)
        log = cluster.root / "broker-0" / "server.log"
        error = HarnessError(f"broker 0 did not end within 30 s of SIGTERM (see {log})")
        cluster.__exit__(HarnessError, error, None)
        assert cluster.root.exists() == keep
        assert str(error) == (f"broker 0 did not end within 30 s of SIGTERM (see {log})" if keep else
                              "broker 0 did not end within 30 s of SIGTERM (its log broker-0/server.log is removed: "
                              "re-run with --keep to keep it)")


SIGINT_RUNNER = """
import sys, time
sys.path[:0] = [{repo!r}, {tests!r}]
from explorer.catalog import build_model
from explorer.cli.reproduce import _kraft_model
from explorer.scenario import load_scenario
from support.reproduce_fake import fake_harness

def crash(name, args):
    if name == "BrokerCrash":
        print("ROOT", made[0].root, file=sys.stderr, flush=True)     # the parent sends SIGINT now
        time.sleep(120)
    return False

module, made, made_for = fake_harness(lambda path: _kraft_model(load_scenario(str(path)), "4.4.0")[2],
                                      deviate=crash)
made_for.append({scenario!r})
sys.modules["realkafka.cluster"] = module
from explorer.cli.app import main
main(["reproduce", {scenario!r}, "--kafka", "4.4.0", "--json", {report!r}])
"""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGHUP], ids=["SIGINT", "SIGHUP"])
def test_sigint_during_a_reproduction_stops_the_cluster_writes_the_report_and_exits_130(tmp_path, sig):
    """A real SIGINT (Ctrl-C) to `jbodcheck reproduce` while a step runs: the cluster's ``with`` ends it (its
    directory gone), the report says "interrupted", exit 130. SIGHUP (a closed terminal) likewise, exit 129."""
    scenario = str(SCENARIOS / "kraft-finding-1-replica-recreated-over-failed-dir.json")
    report = tmp_path / "r.json"
    script = tmp_path / "runner.py"
    script.write_text(SIGINT_RUNNER.format(repo=str(REPO), tests=str(REPO / "tests"), scenario=scenario, report=str(report)))
    tmp = tmp_path / "tmp"     # the fake cluster's directory goes here, so a failed test leaves nothing elsewhere
    tmp.mkdir()
    proc = subprocess.Popen([sys.executable, str(script)], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "TMPDIR": str(tmp)})
    try:
        line = ""
        while not line.startswith("ROOT ") and proc.poll() is None:
            line = proc.stderr.readline()
        assert line.startswith("ROOT "), proc.stderr.read()[-2000:]
        root = line.split(" ", 1)[1].strip()
        assert Path(root).is_dir()
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        raise AssertionError(f"no exit 60 s after SIGINT: {err[-3000:]}") from None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 128 + sig, err[-2000:]
    assert not Path(root).exists() and not list(tmp.iterdir())
    data = json.loads(report.read_text())
    assert data["result"] == "interrupted" and data["exit_code"] == 128 + sig
    assert f"interrupted by signal {int(sig)}" in out.lower()


def test_reproduce_plan_only_needs_no_cluster():
    out = subprocess.run([sys.executable, "-m", "explorer", "reproduce",
                          str(SCENARIOS / "kraft-finding-5-unfenced-leader-on-failed-dir.json"), "--kafka", "3.9.2",
                          "--plan-only"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "heartbeats held: broker 0's from step 4 to step 10" in out.stdout
    assert "violation leader_on_failed_dir" in out.stdout



@pytest.mark.parametrize("scenario, release, written", [
    ("kraft-finding-8-partition-leaderless-with-its-data.json", "4.4.0", "Kafka 3.9, the release its model names"),
    ("kraft-finding-1-replica-recreated-over-failed-dir.json", "3.9.2",
     "the model's default release, Kafka 4.4 now: the file names none")])
def test_the_scenario_s_description_says_the_release_it_was_written_for_not_the_run_s(capsys, scenario, release,
                                                                                       written):
    assert _main(["reproduce", str(SCENARIOS / scenario), "--kafka", release, "--plan-only"]) == 0
    header = capsys.readouterr().out.splitlines()
    assert header[0] == f"Reproduce {SCENARIOS / scenario} on Kafka {release}"
    assert header[1].startswith(f"The scenario's own description (written for {written}; this run follows Kafka "
                                f"{release}, and the text's claims are the file's): KRaft finding ")

def test_a_liveness_scenario_no_check_judges_is_refused_not_called_reproduced():
    # KAFKA-15649's violation is a lasso (the controller times every heartbeat out for ever): a finite run on a
    # real cluster cannot show it, and "the scenario expects no violation" would misreport it
    out = subprocess.run([sys.executable, "-m", "explorer", "reproduce",
                          str(SCENARIOS / "kraft-kafka-15649-unacknowledged-failure-keeps-the-leader.json"),
                          "--kafka", "3.7.2", "--plan-only"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and "liveness one (the behaviour loops from step 12" in out.stderr


def test_the_model_follows_the_release_and_keeps_the_presets_options():
    from explorer.cli.reproduce import _kraft_model

    sc = load_scenario(str(SCENARIOS / "kraft-kafka-16886-assignment-of-a-removed-replica-retried.json"))
    _, _, old, bugs = _kraft_model(sc, "3.7.0")
    assert bugs == ("KAFKA-16234", "KAFKA-16886") and old.option("reassign_to") == "move"
    _, _, new, bugs = _kraft_model(sc, "3.7.2")
    assert bugs == () and new.option("reassign_to") == "move"
    sc = load_scenario(str(SCENARIOS / "kraft-finding-1-replica-recreated-over-failed-dir.json"))
    _, _, model, bugs = _kraft_model(sc, "4.4.0")
    assert bugs == () and model.cfg.max_records_of(0) == 1   # the data path on: followers fetch


def test_a_model_that_starts_before_directory_assignment_formats_its_cluster_there():
    """kraft-mv-upgrade's cluster is formatted at 3.6-IV2 (before 3.7-IV2), every other at the release's latest;
    the harness drives the upgrade (UpgradeMetadataVersion needs Cluster.upgrade_metadata_version)."""
    from types import SimpleNamespace

    from explorer.cli.reproduce import _kraft_model
    from realkafka.cluster import Cluster
    from realkafka.driver.session import format_at as _format_at

    mv = _kraft_model(SimpleNamespace(model={"preset": "kraft-mv-upgrade"}), "3.9.2")[2]
    tiny = _kraft_model(SimpleNamespace(model={"preset": "kraft-tiny"}), "3.9.2")[2]
    assert _format_at(mv) == {"metadata_version": "3.6-IV2"} and _format_at(tiny) == {}
    assert RULES["UpgradeMetadataVersion"].needs == "upgrade_metadata_version"
    assert "upgrade_metadata_version" in Cluster.capabilities
