"""`jbodcheck reproduce` without a cluster (docs/reproduce.md): the mapping of every KRaft rule, the projection, the
comparison, the violation checks and the plan, and the driver's loop on a cluster that behaves as the model does
(tests/reproduce_fake.py). The runs on real clusters are tests/test_reproduce_real.py (opt-in)."""
from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from explorer.catalog import build_model, configure
from explorer.scenario import load_scenario, parse_step
from helpers import REPO, SCENARIOS
from realkafka.driver import checks as C
from realkafka.driver.compare import differences
from realkafka.driver.mapping import AWAITED, DRIVEN, NOT_REPRODUCIBLE, ORDERED, RULES, Hold
from realkafka.driver.observed import view_of
from realkafka.driver.plan import PlanError, plan
from realkafka.driver.projection import project
from realkafka.driver.run import Driver
from realkafka.driver.view import LogView, View
from reproduce_fake import ModelCluster, fake_harness, observation

def kraft_rules() -> list[dict]:
    """Every rule of the KRaft design, those of features a configuration leaves out too (`rules` lists them)."""
    out = subprocess.run([sys.executable, "-m", "explorer", "rules", "--variant", "kraft", "--json"],
                         cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def scenario_model(path, bugs=(), data=True, kafka=None):
    """The model a reproduction runs: the scenario's, its bug switches, the data path on where allowed (at the
    default release, or ``kafka``)."""
    sc = load_scenario(str(path))
    base = dict(sc.model)
    preset = base.pop("preset", None)
    if bugs:
        base["options"] = {**base.get("options", {}), "bugs": tuple(bugs)}
    if kafka:
        base["options"] = {**base.get("options", {}), "kafka": kafka}
    try:
        cfg = configure(preset, {**base, "max_records": max(1, base.get("max_records", 0) or 0)} if data else base, {})
    except Exception:
        cfg = configure(preset, base, {})
    model = build_model(cfg, preset=preset)
    return model, [parse_step(model, t, i) for i, t in enumerate(sc.steps, start=1)]


def trace_history(model, steps):
    state, faulted = model.init_states()[0], set()
    history = [project(model, state)]
    for name, args in steps:
        _, state = model.step(state, name, args)
        if name == "DirFail":
            faulted.add(args)
        history.append(project(model, state, faulted))
    return history


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
    assert "differs from the model" in capsys.readouterr().out
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
    assert "KRaft scenarios" in capsys.readouterr().err
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


SIGINT_RUNNER = """
import sys, time
sys.path[:0] = [{repo!r}, {tests!r}]
from explorer.catalog import build_model
from explorer.cli.reproduce import _kraft_model
from explorer.scenario import load_scenario
from reproduce_fake import fake_harness

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


def test_sigint_during_a_reproduction_stops_the_cluster_writes_the_report_and_exits_130(tmp_path):
    """A real SIGINT (Ctrl-C) to `jbodcheck reproduce` while a step runs: the cluster's ``with`` ends it (its
    directory gone), the report says "interrupted", exit 130."""
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
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        raise AssertionError(f"no exit 60 s after SIGINT: {err[-3000:]}") from None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err[-2000:]
    assert not Path(root).exists() and not list(tmp.iterdir())
    data = json.loads(report.read_text())
    assert data["result"] == "interrupted" and data["exit_code"] == 130
    assert "interrupted by signal 2" in out.lower()


def test_reproduce_plan_only_needs_no_cluster():
    out = subprocess.run([sys.executable, "-m", "explorer", "reproduce",
                          str(SCENARIOS / "kraft-finding-5-unfenced-leader-on-failed-dir.json"), "--kafka", "3.9.2",
                          "--plan-only"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "heartbeats held: broker 0's from step 4 to step 10" in out.stdout
    assert "violation leader_on_failed_dir" in out.stdout


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
