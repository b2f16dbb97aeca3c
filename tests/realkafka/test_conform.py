"""`jbodcheck conform` (realkafka/campaign/): traces generated from the model, driven on clusters and judged by trace
validation, against the scripted cluster (tests/support/reproduce_fake.py): a cluster that behaves as the model conforms on
every trace; one that shows what no model state shows is a disagreement with its scenario file."""
from __future__ import annotations

import dataclasses
import json
import random
import sys
from collections import Counter
from types import SimpleNamespace

import pytest

from explorer.cli.reproduce import _kraft_model
from explorer.scenario import load_scenario, parse_step
from realkafka.campaign.campaign import run_campaign
from realkafka.campaign.generate import drivable, walk
from realkafka.driver.plan import plan
from support.reproduce_fake import ModelCluster, fake_harness


def _model(release="3.9.2", preset="kraft-tiny"):
    return _kraft_model(SimpleNamespace(model={"preset": preset}), release)[2]


def test_a_walk_is_a_behaviour_of_the_model_that_the_planner_plans():
    model = _model()
    counts = Counter()
    actions = drivable(model)
    assert {"CreateTopic", "DirFail", "BrokerCrash", "BrokerRestart", "Produce"} <= {r.name for r, _ in actions}
    rng = random.Random(7)
    for _ in range(5):
        steps = walk(model, rng, 6, counts, actions)
        assert steps
        plan(model, steps)               # raises PlanError when a step cannot be planned
    assert sum(counts.values()) >= 5


def test_the_walks_weigh_toward_rules_driven_least():
    model = _model()
    actions = drivable(model)
    counts = Counter({"Produce": 1000, "Consume": 1000})
    rng = random.Random(3)
    picked = Counter(name for _ in range(20) for name, _ in walk(model, rng, 4, Counter(counts), actions)[1:])
    assert picked["Produce"] + picked["Consume"] < sum(picked.values()) / 2


def _warp(view, calls):
    """What no model state shows: a broker whose registration lists no dir while it has two online."""
    if not any(name == "CreateTopic" for name, _ in calls):
        return view
    regs = list(view.registrations)
    if regs[1] is None:
        return view
    regs[1] = dataclasses.replace(regs[1], dirs=frozenset({7}))
    return dataclasses.replace(view, registrations=tuple(regs))


@pytest.mark.parametrize("warp, outcome", [(None, {"matched", "conforms", "refused"}), (_warp, {"disagrees"})])
def test_a_campaign_classifies_each_trace_and_counts_every_rule(tmp_path, warp, outcome):
    model = _model()
    campaign = run_campaign(releases=["3.9.2"], model_of=lambda r: model,
                            start_cluster=lambda m, p: ModelCluster(m, warp=warp, dir_failure_timeout=False),
                            traces=3, seed=1, length=4, out=tmp_path, step_timeout=2.0,
                            model_params=lambda r: {"preset": "kraft-tiny"})
    assert len(campaign.traces) == 3
    assert {t.outcome for t in campaign.traces} <= outcome
    assert campaign.rules["CreateTopic"]["3.9.2"]["driven"] >= 1
    if warp is not None:
        t = campaign.traces[0]
        assert t.scenario and json.loads(open(t.scenario).read())["steps"] == t.steps
        assert list(load_scenario(t.scenario).steps) == t.steps
    else:
        assert campaign.rules["CreateTopic"]["3.9.2"]["driven_agreed"] == campaign.rules["CreateTopic"]["3.9.2"]["driven"]


def made_specs(made) -> list:
    return [m.spec for m in made]


def _main(args) -> int:
    from explorer.cli.app import main

    with pytest.raises(SystemExit) as e:
        main(args)
    return e.value.code


def _conform_on_fake_clusters(monkeypatch, tmp_path, *args) -> tuple[dict, list]:
    """`jbodcheck conform --kafka 4.4 ARGS...` on scripted clusters: (the JSON report, the clusters made)."""
    from realkafka.cluster import KAFKA_TIMERS

    module, made, made_for = fake_harness(lambda _: _model("4.4.0"))
    made_for.append(None)
    module.KAFKA_TIMERS = KAFKA_TIMERS
    monkeypatch.setitem(sys.modules, "realkafka.cluster", module)
    report = tmp_path / "c.json"
    assert _main(["conform", "--kafka", "4.4", *args, "--seed", "5", "--out", str(tmp_path / "out"),
                  "--json", str(report), "--step-timeout", "2"]) == 0
    return json.loads(report.read_text()), made


def test_conform_on_the_command_line_reports_outcomes_and_rules(monkeypatch, tmp_path, capsys):
    data, made = _conform_on_fake_clusters(monkeypatch, tmp_path, "--traces", "2", "--length", "3", "--kafka-timers")
    assert data["settings"]["broker.session.timeout.ms"] == "9000"
    assert all(m_spec["settings"]["replica.lag.time.max.ms"] == "30000" for m_spec in made_specs(made))
    assert data["command"] == "conform" and data["kafka"] == ["4.4.0"] and len(data["traces"]) == 2
    assert data["result"] == "conforms" and data["exit_code"] == 0
    assert "CreateTopic" in data["rules"] and data["settings"]
    assert all(m.stopped for m in made)
    assert "Campaign: 2 trace(s) on Kafka 4.4.0" in capsys.readouterr().out


def test_kafka_defaults_runs_the_clusters_with_kafkas_balancing_and_dir_failure_timeout(monkeypatch, tmp_path):
    data, made = _conform_on_fake_clusters(monkeypatch, tmp_path, "--traces", "1", "--length", "2", "--kafka-defaults")
    for settings in [data["settings"]] + [m_spec["settings"] for m_spec in made_specs(made)]:
        assert settings["auto.leader.rebalance.enable"] == "true"
        assert "log.dir.failure.timeout.ms" not in settings
        assert settings["broker.session.timeout.ms"] == "9000"


def test_conform_refuses_bad_input_at_once(capsys):
    assert _main(["conform", "--kafka", "2.8"]) == 2
    assert _main(["conform", "--kafka", "3.9", "--traces", "0"]) == 2


@pytest.mark.parametrize("warp", [None, _warp])
def test_a_real_to_model_run_checks_every_observation_and_the_properties(tmp_path, warp):
    model = _model()
    campaign = run_campaign(releases=["3.9.2"], model_of=lambda r: model,
                            start_cluster=lambda m, p: ModelCluster(m, warp=warp, dir_failure_timeout=False),
                            traces=2, seed=4, length=3, out=tmp_path, step_timeout=2.0, mode="real", faults=3,
                            model_params=lambda r: {"preset": "kraft-tiny"})
    assert [t.kind for t in campaign.traces] == ["real", "real"]
    outcomes = {t.outcome for t in campaign.traces}
    assert outcomes == ({"conforms"} if warp is None else {"disagrees"}), [t.says for t in campaign.traces]
    assert all(t.steps and t.steps[0] == "CreateTopic(partition=0)" for t in campaign.traces)
    assert campaign.rules["CreateTopic"]["3.9.2"]["driven"] == 2
    if warp is None:       # the topic's creation is seen only once the brokers replayed its records
        assert campaign.rules["BrokerReplay"]["3.9.2"]["observed"] >= 2
        assert campaign.rules["BrokerReplay"]["3.9.2"]["observed_agreed"] >= 2


def test_an_observation_proves_the_rules_every_path_to_it_takes():
    from realkafka.driver.reach import Graph

    chain = Graph(frozenset("a"), {"a": (("X(b=0)", "b"),), "b": (("Y(b=0)", "c"),)})
    assert chain.necessary({"a"}, {"c"}) == ["X", "Y"] and chain.necessary({"a"}, {"b"}) == ["X"]
    two_ways = Graph(frozenset("a"), {"a": (("X(b=0)", "b"), ("Z(b=1)", "c")), "b": (("Y(b=0)", "c"),)})
    assert two_ways.necessary({"a"}, {"c"}) == []
    assert two_ways.necessary({"a"}, {"a", "c"}) == []      # a source shown again proves nothing moved


def test_a_disagreement_is_shrunk_to_the_driven_steps_that_still_disagree(tmp_path):
    """A cluster that leaves the model once a broker crashed: the shrunk trace keeps the crash and drops what does
    not matter; it is written beside the whole one, and every try is a behaviour of the model."""
    from realkafka.campaign.generate import driven_steps, rebuild

    def after_crash(view, calls):
        return _warp(view, calls) if any(name == "BrokerCrash" for name, _ in calls) else view

    model = _model()
    campaign = run_campaign(releases=["3.9.2"], model_of=lambda r: model,
                            start_cluster=lambda m, p: ModelCluster(m, warp=after_crash, dir_failure_timeout=False),
                            traces=2, seed=1, length=4, out=tmp_path, step_timeout=2.0, shrink_budget=4,
                            model_params=lambda r: {"preset": "kraft-tiny"})
    shrunk = [t for t in campaign.traces if t.outcome == "disagrees"]
    assert shrunk, [t.steps for t in campaign.traces]
    for t in shrunk:
        assert t.shrunk is not None and len(t.shrunk) <= len(t.steps) and 1 <= t.shrink_runs <= 4
        assert any(s.startswith("BrokerCrash") for s in t.shrunk)
        assert (tmp_path / (t.scenario.rsplit("/", 1)[1].replace(".json", "-shrunk.json"))).exists()
    assert rebuild(model, [("BrokerRestart", (0,))]) is None, "a driven step the model disables is no try"


def test_a_campaign_run_in_parallel_chooses_the_same_traces_and_counts_alike(tmp_path):
    model = _model()
    runs = []
    for parallel in (1, 2):
        runs.append(run_campaign(releases=["3.9.2"], model_of=lambda r: model,
                                 start_cluster=lambda m, p: ModelCluster(m, dir_failure_timeout=False),
                                 traces=3, seed=9, length=3, out=tmp_path / str(parallel), step_timeout=2.0,
                                 parallel=parallel, model_params=lambda r: {"preset": "kraft-tiny"}))
    one, two = runs
    assert [t.steps for t in one.traces] == [t.steps for t in two.traces]
    assert [t.number for t in two.traces] == [1, 2, 3]
    assert one.rules == two.rules


def test_conform_refuses_its_report_on_its_scenario_dir(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    assert _main(["conform", "--kafka", "3.9", "--out", str(out), "--json", str(out)]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_a_real_run_s_disagreement_says_how_a_broker_that_ended_by_itself_ended():
    from realkafka.campaign.chaos import ChaosRun

    model = _model()
    cluster = ModelCluster(model, warp=_warp, dir_failure_timeout=False)
    cluster.exits = lambda: ["broker 1 exited with code 1; its last error: ERROR [BrokerServer id=1] Fatal error"]
    done = ChaosRun(model, cluster, random.Random(2), still=0.5, quiet=1.0, poll=0.05).run(2, gap=(0.0, 0.1))
    assert done.disagreement is not None
    assert done.disagreement.says.endswith("; broker 1 exited with code 1; its last error: ERROR [BrokerServer "
                                           "id=1] Fatal error")


def test_a_disagreeing_trace_keeps_the_cluster_s_server_logs(tmp_path):
    from realkafka.campaign.campaign import keep_logs

    log = tmp_path / "broker-0.log"
    log.write_text("ERROR [BrokerServer id=0] Fatal error during broker startup\n")
    kept = keep_logs(SimpleNamespace(logs=lambda: {"broker-0": log}), tmp_path / "out" / "trace-0001-4.4.0-logs")
    assert (tmp_path / "out" / "trace-0001-4.4.0-logs" / "broker-0-server.log").read_text() == log.read_text()
    assert kept == str(tmp_path / "out" / "trace-0001-4.4.0-logs")
    assert keep_logs(SimpleNamespace(), tmp_path / "none") is None and not (tmp_path / "none").exists()


def test_both_modes_deal_each_release_both_kinds(tmp_path):
    model = _model()
    campaign = run_campaign(releases=["3.9.2", "4.4.0"], model_of=lambda r: model,
                            start_cluster=lambda m, p: ModelCluster(m, dir_failure_timeout=False), traces=4, seed=4,
                            length=2, out=tmp_path, step_timeout=2.0, mode="both", faults=1)
    assert [(t.kind, t.release) for t in campaign.traces] == [("model", "3.9.2"), ("real", "3.9.2"),
                                                              ("model", "4.4.0"), ("real", "4.4.0")]


def test_a_walk_weighs_rules_not_their_argument_tuples():
    from realkafka.campaign.generate import pick

    def rule(name):
        return SimpleNamespace(name=name)

    many, one = rule("DirFail"), rule("AlterReplicaLogDirs")
    enabled = [(many, (b, d)) for b in range(4) for d in range(4)] + [(one, (0, 0, 1))]
    picked = Counter(pick(random.Random(i), enabled, Counter())[0].name for i in range(400))
    assert 150 <= picked["AlterReplicaLogDirs"] <= 250, picked


def _interrupting_harness(monkeypatch, interrupt_at: int | None, runs: bool = True):
    """The scripted harness, patched in for the command: the cluster of the ``interrupt_at``-th trace started is a
    Ctrl-C; with ``runs`` False every cluster fails to start (a harness outcome at once: the traces are chosen and
    judged, none driven)."""
    from support.reproduce_fake import FakeHarnessError

    started = []

    def model_of(_):
        started.append(1)
        if len(started) == interrupt_at:
            raise KeyboardInterrupt
        if not runs:
            raise FakeHarnessError("the cluster did not start")
        return _model()

    from realkafka.cluster import KAFKA_TIMERS

    module, made, made_for = fake_harness(model_of)
    made_for.append(None)
    module.KAFKA_TIMERS = KAFKA_TIMERS
    monkeypatch.setitem(sys.modules, "realkafka.cluster", module)
    return made


def test_an_interrupted_campaign_resumes_with_the_traces_it_did_not_finish(monkeypatch, tmp_path, capsys):
    args = ["conform", "--kafka", "3.9", "--traces", "3", "--length", "2", "--seed", "3", "--mode", "model",
            "--step-timeout", "2", "--out", str(tmp_path / "out")]
    report = tmp_path / "c.json"
    made = _interrupting_harness(monkeypatch, interrupt_at=2)
    assert _main([*args, "--json", str(report)]) == 130
    first = json.loads(report.read_text())
    assert first["result"] == "interrupted" and [t["trace"] for t in first["traces"]] == [1]
    assert first["harness"]["formatted_copy"] is True and first["harness"]["class_sharing"] is True
    assert all(m.stopped for m in made) and all(m.spec["formatted_copy"] and m.spec["class_sharing"] for m in made)

    made = _interrupting_harness(monkeypatch, interrupt_at=None)
    assert _main(["conform", "--resume", str(report), "--seed", "3"]) == 0
    resumed = json.loads(report.read_text())
    assert resumed["result"] == "conforms" and resumed["resumed"] == 1 and len(made) == 2
    assert [t["trace"] for t in resumed["traces"]] == [1, 2, 3]
    assert resumed["traces"][0] == first["traces"][0]
    # the rules' tally counts the resumed traces' driven steps as well as the first run's: 3 walks of 2 (--length)
    tally = sum(c.get("driven", 0) for by in resumed["rules"].values() for c in by.values())
    assert tally == 3 * 2, (tally, [t["steps"] for t in resumed["traces"]])

    # the same campaign never interrupted chooses the same traces (its clusters fail at once: chosen, not driven)
    _interrupting_harness(monkeypatch, interrupt_at=None, runs=False)
    whole = tmp_path / "whole.json"
    assert _main([*args, "--json", str(whole)]) == 3
    assert [t["steps"] for t in json.loads(whole.read_text())["traces"]] == [t["steps"] for t in resumed["traces"]]


def test_a_report_that_cannot_be_resumed_is_refused_in_one_line(monkeypatch, tmp_path, capsys):
    report = tmp_path / "c.json"
    _interrupting_harness(monkeypatch, interrupt_at=3, runs=False)
    assert _main(["conform", "--kafka", "3.9", "--traces", "4", "--length", "2", "--seed", "1", "--mode", "model",
                  "--out", str(tmp_path / "out"), "--json", str(report)]) == 130
    data = json.loads(report.read_text())
    capsys.readouterr()

    def refused(args, text=None) -> str:
        path = tmp_path / "bad.json"
        path.write_text(json.dumps(text) if not isinstance(text, str) else text)
        assert _main(["conform", "--resume", str(path if text is not None else report), *args]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1, err
        return err[0]

    assert "--seed 1" in refused(["--seed", "2"])
    assert "--kafka" in refused(["--kafka", "4.4"])
    assert "not a jbodcheck conform report" in refused([], {"command": "explore"})
    assert "not an interrupted one" in refused([], {**data, "result": "conforms"})
    assert "lacks traces_planned" in refused([], {k: v for k, v in data.items() if k != "traces_planned"})
    assert "Expecting" in refused([], "{not json")
    edited = [{**t, "steps": ["Produce(broker=0, partition=0)"]} if t["trace"] == 2 else t for t in data["traces"]]
    assert "not the one its seed chooses now" in refused([], {**data, "traces": edited})
    assert "damaged" in refused([], {**data, "traces": [{"trace": 1}]})
    assert _main(["conform"]) == 2 and "--kafka" in capsys.readouterr().err


def test_a_spark_task_runs_its_trace_on_a_cluster_of_its_own_under_the_campaigns_tmp(monkeypatch, tmp_path):
    """The executor's side of `conform --spark` (explorer/cli/conform_spark.py), in this process: the task builds
    the campaign's parts from its parameters, runs the chosen trace, and its clusters' TMPDIR is the campaign's."""
    import tempfile

    from explorer.cli import conform_parts, conform_spark
    from realkafka.campaign.campaign import chosen
    from realkafka.campaign.generate import drivable

    model = _model()
    seen_tmp = []

    def start_cluster(m, p):
        seen_tmp.append(tempfile.gettempdir())
        return ModelCluster(m, dir_failure_timeout=False)

    monkeypatch.setattr(conform_parts, "campaign_parts", lambda preset, releases, **kw: (
        {"3.9.2": (model, {"preset": preset})}, start_cluster, lambda method: True))
    monkeypatch.setattr(conform_spark, "_built", {})
    monkeypatch.setenv("TMPDIR", tempfile.gettempdir())      # (the task sets it: put back after the test)
    job = chosen(["3.9.2"], {"3.9.2": model}, {"3.9.2": drivable(model)}, traces=1, seed=2, length=2, mode="model")[0]
    params = dict(preset="kraft-tiny", releases=["3.9.2"], kafka_timers=False, format_each=False,
                  no_class_sharing=False, step_timeout=2.0, shrink=0, faults=3, out=str(tmp_path / "out"), seed=2,
                  tmp=str(tmp_path / "tmp"))
    try:
        result, tally = conform_spark.run_task(params, job)
    finally:
        tempfile.tempdir = None
    assert result.number == 1 and result.outcome in ("matched", "conforms") and tally
    assert seen_tmp == [str(tmp_path / "tmp")]


def test_an_interrupt_cancels_the_traces_a_runner_has_in_flight(tmp_path):
    model = _model()
    cancelled = []

    class Runner:
        def __call__(self, job):
            raise KeyboardInterrupt

        def cancel(self):
            cancelled.append(1)

    for parallel in (1, 2):
        with pytest.raises(KeyboardInterrupt):
            run_campaign(releases=["3.9.2"], model_of=lambda r: model, start_cluster=None, traces=2, seed=1,
                         length=2, out=tmp_path, runner=Runner(), parallel=parallel)
    assert len(cancelled) == 2


# ---- --around: a finding's neighbourhood (realkafka/campaign/neighbours.py) ------------------------------------

FINDING_1 = "scenarios/kraft-finding-1-rf1-acked-record-lost.json"
FINDING_1_MODEL = {"preset": "kraft-tiny-faults", "brokers": 1, "rf": 1}


def _around(release="4.4.0"):
    """(the campaign's model for finding 1's scenario, its actions, its around argument for chosen())."""
    from explorer.cli.conform_parts import around_steps

    model = _kraft_model(SimpleNamespace(model=FINDING_1_MODEL), release)[2]
    return model, drivable(model), around_steps([FINDING_1], {release: (model, {})})


def test_the_mutation_kinds_drop_swap_and_insert_one_step():
    from realkafka.campaign.neighbours import dropped, swapped, with_fault

    made = ["a", "b", "c"]
    assert dropped(made, 1) == ["a", "c"] and swapped(made, 1) == ["a", "c", "b"]
    assert with_fault(made, 3, "f") == ["a", "b", "c", "f"] and with_fault(made, 0, "f") == ["f", "a", "b", "c"]
    assert made == ["a", "b", "c"]


def test_a_findings_mutations_are_behaviours_of_the_model_chosen_by_the_seed_never_the_trace_itself():
    from realkafka.campaign.campaign import chosen
    from realkafka.campaign.generate import rebuild
    from realkafka.campaign.neighbours import dropped, made_steps, swapped, with_fault

    model, actions, around = _around()
    made = around["4.4.0"][0][1]
    assert [n for n, _ in made] == ["CreateTopic", "Produce", "DirFail", "BrokerCrash", "BrokerRestart"]
    jobs = chosen(["4.4.0"], {"4.4.0": model}, {"4.4.0": actions}, traces=8, seed=7, length=4, mode="model",
                  around=around)
    mutated = [j for j in jobs if j.around]
    assert len(mutated) >= 3 and all(j.around for j in jobs[:len(mutated)])   # walks only once none is left
    whole = rebuild(model, made)
    one_off = ([dropped(made, i) for i in range(len(made))] + [swapped(made, i) for i in range(len(made) - 1)]
               + [with_fault(made, i, (r.name, tuple(a))) for i in range(len(made) + 1) for r, a in actions
                  if r.name in ("DirFail", "BrokerCrash", "BrokerRestart")])
    for job in mutated:
        assert job.around.startswith("kraft-finding-1-rf1-acked-record-lost.json: ")
        state = model.init_states()[0]
        for name, args in job.steps:              # every step enabled where it comes: a behaviour of the model
            assert model.rule(name).guard(model, state, *args) is None, (job.around, name, args)
            _, state = model.step(state, name, args)
        plan(model, job.steps)
        assert job.steps != whole and made_steps(job.steps) in one_off
    assert len({tuple(j.steps) for j in mutated}) == len(mutated)
    again = chosen(["4.4.0"], {"4.4.0": model}, {"4.4.0": actions}, traces=8, seed=7, length=4, mode="model",
                   around=around)
    assert [(j.around, j.steps) for j in again] == [(j.around, j.steps) for j in jobs]
    orders = {tuple(j.around for j in chosen(["4.4.0"], {"4.4.0": model}, {"4.4.0": actions}, traces=3, seed=s,
                                               length=4, mode="model", around=around)) for s in range(6)}
    assert len(orders) > 1                        # the seed, not the file's order, picks which come first


def _conform_around(monkeypatch, tmp_path, *args) -> tuple[int, dict | None]:
    from realkafka.cluster import KAFKA_TIMERS

    model = _kraft_model(SimpleNamespace(model=FINDING_1_MODEL), "4.4.0")[2]
    module, made, made_for = fake_harness(lambda _: model)
    made_for.append(None)
    module.KAFKA_TIMERS = KAFKA_TIMERS
    monkeypatch.setitem(sys.modules, "realkafka.cluster", module)
    report = tmp_path / "c.json"
    code = _main(["conform", "--kafka", "4.4", *args, "--seed", "5", "--out", str(tmp_path / "out"),
                  "--json", str(report), "--step-timeout", "2"])
    return code, json.loads(report.read_text()) if report.exists() else None


def test_conform_around_runs_the_mutations_where_the_walks_run(monkeypatch, tmp_path):
    code, data = _conform_around(monkeypatch, tmp_path, "--preset", "kraft-tiny-faults", "--model", "brokers=1",
                                 "--model", "rf=1", "--around", FINDING_1, "--mode", "model", "--traces", "2")
    assert code == 0 and data["around"] == [FINDING_1]
    assert all(t["around"] and t["kind"] == "model" for t in data["traces"])
    assert {t["outcome"] for t in data["traces"]} <= {"matched", "conforms"}


def test_conform_refuses_a_bad_around_in_one_line(monkeypatch, tmp_path, capsys):
    for args, says in ((["--around", FINDING_1], "brokers 1 (the campaign's 2)"),
                       (["--around", str(tmp_path / "none.json")], "cannot read scenario"),
                       (["--model", "brokers=1", "--model", "rf=1", "--around", FINDING_1, "--mode", "real"],
                        "--mode model or both")):
        code, _ = _conform_around(monkeypatch, tmp_path, "--preset", "kraft-tiny-faults", *args)
        err = capsys.readouterr().err
        assert code == 2 and says in err and len(err.strip().splitlines()) == 1, err


def test_an_interrupted_campaign_around_a_finding_resumes_with_the_same_mutations(monkeypatch, tmp_path):
    model = _kraft_model(SimpleNamespace(model=FINDING_1_MODEL), "3.9.2")[2]
    started = []

    def model_of(_):
        started.append(1)
        if len(started) == 2:
            raise KeyboardInterrupt
        return model

    from realkafka.cluster import KAFKA_TIMERS

    module, _, made_for = fake_harness(model_of)
    made_for.append(None)
    module.KAFKA_TIMERS = KAFKA_TIMERS
    monkeypatch.setitem(sys.modules, "realkafka.cluster", module)
    report = tmp_path / "c.json"
    args = ["conform", "--kafka", "3.9", "--preset", "kraft-tiny-faults", "--model", "brokers=1", "--model", "rf=1",
            "--around", FINDING_1, "--traces", "3", "--mode", "model", "--seed", "3", "--step-timeout", "2",
            "--out", str(tmp_path / "out"), "--json", str(report)]
    assert _main(args) == 130
    first = json.loads(report.read_text())
    assert first["around"] == [FINDING_1] and [t["trace"] for t in first["traces"]] == [1]
    assert _main(["conform", "--resume", str(report), "--around", "other.json"]) == 2
    assert _main(["conform", "--resume", str(report)]) == 0
    resumed = json.loads(report.read_text())
    assert [t["trace"] for t in resumed["traces"]] == [1, 2, 3] and all(t["around"] for t in resumed["traces"])
    assert resumed["traces"][0] == first["traces"][0]
