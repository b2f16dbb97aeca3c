"""`jbodcheck reproduce` of a ZooKeeper-mode scenario without a cluster (docs/reproduce-zk.md): the mapping of
every rule of ``--variant kip112``, the projection against a scripted cluster that follows the model (and one that
leaves it), and the refusals. The real run of kip112-2 on Kafka 3.9.2 is in the thorough profile (the long_run marker)."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import types

import pytest

from explorer.scenario import load_scenario, parse_step
from support.helpers import REPO, SCENARIOS
from realkafka.cluster.observation import BrokerObservation, Dir, Replica
from realkafka.cluster.zkstate import ZkControllerState, ZkObservation, ZkPartitionState, ZkRegistration
from realkafka.driver.mapping import AWAITED, DRIVEN, NOT_REPRODUCIBLE
from realkafka.driver.zk.mapping import RULES, handler
from realkafka.driver.zk.view import differences, project
from invariants.storage.durability import serving_leader
from model.storage.broker import live_copy_dir
from model.storage.state import LIVE_DIR, REMOVED, bits

KIP112_2 = SCENARIOS / "kip112-2-leader-dir-failure-at-runtime.json"


def _model_of(base):
    from explorer.cli.model_value import command_model

    base = dict(base)
    return command_model(base.pop("preset", None), {}, base=base, quiet=True)


def _model(path):
    from explorer.cli.model_value import command_model

    base = dict(load_scenario(str(path)).model)
    return command_model(base.pop("preset", None), {}, base=base, quiet=True)


# ---- the mapping -------------------------------------------------------------------------------------------------

def _kip112_rules() -> set:
    """Every rule of the kip112 design, those of features a configuration leaves out too (`rules` lists them)."""
    out = subprocess.run([sys.executable, "-m", "explorer", "rules", "--variant", "kip112", "--json"],
                         cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return {r["name"] for r in json.loads(out.stdout)}


def test_every_kip112_rule_has_a_zookeeper_mode_mapping():
    names = _kip112_rules()
    assert len(names) >= 27
    assert names - set(RULES) == set(), "rules without a mapping onto a ZooKeeper-mode cluster"
    assert set(RULES) - names == set(), "mapping entries for no rule of the kip112 design"


def test_every_handler_says_how_and_acts_where_it_drives():
    for name, h in RULES.items():
        assert h.how in (DRIVEN, AWAITED, NOT_REPRODUCIBLE), name
        assert h.says and (h.act is not None) == (h.how == DRIVEN), name
        assert not h.timed or h.how == AWAITED, name


def test_the_zookeeper_mode_mapping_table_in_the_docs_matches_the_code():
    doc = (REPO / "docs" / "reproduce-zk.md").read_text()
    for name, h in RULES.items():
        assert f"| `{name}` | {h.how} |" in doc, name


RESULT = ("matched", "differs", "refused")


def test_the_results_table_names_every_zookeeper_mode_scenario_with_its_command_and_result():
    """docs/reproduce-zk.md's results: every ZooKeeper-mode scenario file (every one but kraft-*) has a row of its
    own, by its exact name, with the command that ran it and what came of it; a row's "N steps" are its file's."""
    doc = (REPO / "docs" / "reproduce-zk.md").read_text().split("## Results", 1)[1].split("\n## ", 1)[0]
    named = {}
    for row in (line for line in doc.splitlines() if line.startswith("| `")):
        cells = [c.strip() for c in row.strip("|").split(" | ")]
        files = re.findall(r"`([\w.-]+\.json)`", cells[0])
        assert len(files) == 1, row
        named[files[0]] = cells
        assert f"reproduce scenarios/{files[0]} --kafka 3.9.2" in cells[2], row
        assert cells[3].split(",")[0].split(" ")[0].rstrip(":") in RESULT, row
        counts = [int(n) for n in re.findall(r"(\d+) steps", cells[0])]
        assert counts in ([], [len(load_scenario(str(SCENARIOS / files[0])).steps)]), row
    assert set(named) == {p.name for p in SCENARIOS.glob("*.json") if not p.name.startswith("kraft-")}


def test_the_projection_of_kip112_2_moves_leadership_off_the_failed_dir():
    m = _model(KIP112_2)
    state = m.init_states()[0]
    views = []
    for n, text in enumerate(load_scenario(str(KIP112_2)).steps, start=1):
        rule, args = parse_step(m, text, n)
        state = m.step(state, rule, args)[1]
        views.append(project(m, state))
    before, after = views[10], views[-1]          # after the first Consume; at the end
    assert before.partitions["t0"] == (0, frozenset({0, 1, 2})) and before.brokers[0].logs["t0"] == (0, 1)
    assert after.partitions["t0"] == (1, frozenset({1, 2})) and after.brokers[0].dirs[0] == "offline"
    assert "t0" not in after.brokers[0].logs and after.acked["t0"] == frozenset({0, 1}) and after.read["t0"] == 2
    assert differences(after, after) == []
    assert differences(before, after) != []


# ---- a scripted cluster that follows the model ------------------------------------------------------------------

def _observation(m, s) -> ZkObservation:
    brokers = {}
    for i, b in enumerate(s.brokers):
        dirs = tuple(Dir(d, f"/dir-{d}", "", LIVE_DIR[st], LIVE_DIR[st] if b.up else None, configured=st != REMOVED)
                     for d, st in enumerate(b.dirs))
        replicas = {}
        for p in range(m.cfg.partitions):
            d = live_copy_dir(b, p)
            if d >= 0:
                replicas[(f"t{p}", 0)] = Replica(d, None, len(b.logs[p]), ())
        brokers[i] = BrokerObservation(i, b.up, dirs, replicas, b.up)
    parts = {(f"t{p}", 0): ZkPartitionState(f"t{p}", 0, tuple(m.assignments[p]), tuple(bits(x.isr)), x.leader,
                                            x.leader_epoch, 1)
             for p, x in enumerate(s.controller.partitions) if x.leader_epoch >= 0}
    regs = {i: ZkRegistration(i, 1) for i in range(len(s.brokers)) if s.controller.live >> i & 1}
    return ZkObservation(brokers=brokers, controller=ZkControllerState(True, False, 0, 1, regs, parts, (), (), ()),
                         topics={})


def fake_cluster_module(model, *, stuck_on=None, dies_on=None):
    """A realkafka.cluster whose ZkCluster runs the model: a driven act steps it, then the cluster's own steps
    (the awaited, untimed rules) run in action order until none is enabled. ``stuck_on``: after that driven rule
    the cluster takes no step of its own (a controller that never handles the log dir event). ``dies_on``: after
    that driven rule a broker has died by a signal not the harness's (Cluster.dead says so)."""
    mod = types.ModuleType("realkafka.cluster")

    class HarnessError(Exception):
        pass

    class ProbeError(Exception):
        pass

    class ClusterSpec:
        def __init__(self, **kw):
            self.__dict__.update(kw)

    made = []

    class ZkCluster:
        capabilities = frozenset({"replace_dir", "remove_dir", "delete_topic", "move_controller"})   # (roles.py)

        def __init__(self, spec, log=None):
            self.spec, self.root, self.stopped = spec, None, False
            self.state = model.init_states()[0]
            self.own = [(r, a) for _, r, a in model.action_space
                        if handler(r.name).how == AWAITED and not handler(r.name).timed]
            self.stuck = self.died = False
            made.append(self)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.stopped = True

        def _do(self, rule, args):
            assert model.rule(rule).guard(model, self.state, *args) is None, (rule, args)
            self.state = model.step(self.state, rule, args)[1]
            self.stuck = self.stuck or rule == stuck_on
            self.died = self.died or rule == dies_on
            while not self.stuck:
                step = next(((r, a) for r, a in self.own if r.guard(model, self.state, *a) is None
                             and model.step(self.state, r.name, a)[1] != self.state), None)
                if step is None:
                    break
                self.state = model.step(self.state, step[0].name, step[1])[1]

        def create_topic(self, topic, assignment, configs=None, wait=True):
            self._do("CreateTopic", (int(topic[1:]),))

        def fail_dir(self, b, d, wait=True):
            self._do("DirFail", (b, d))

        def crash(self, b):
            self._do("BrokerCrash", (b,))

        def restart(self, b, wait=None):
            self._do("BrokerRestart", (b,))

        def replace_dir(self, b, d):
            self._do("ReplaceDisk", (b, d))

        def remove_dir(self, b, d):
            self._do("RemoveDirFromConfig", (b, d))

        def move_controller(self):
            self._do("ControllerFailover", ())

        def delete_topic(self, topic, wait=True):
            p = int(topic[1:])
            if model.rule("DeleteTopic").guard(model, self.state, p) is not None:
                raise ProbeError("UNKNOWN_TOPIC_OR_PARTITION")
            self._do("DeleteTopic", (p,))

        def reassign(self, topic, partition, replicas):
            p = int(topic[1:])
            if model.rule("ReassignPartition").guard(model, self.state, p) is not None:
                raise ProbeError("INVALID_REPLICA_ASSIGNMENT")
            self._do("ReassignPartition", (p,))

        def produce(self, topic, partition, value):
            p = int(topic[1:])
            leader = serving_leader(self.state, p)
            before = len(self.state.brokers[leader].logs[p])
            self._do("Produce", (leader, p))
            return types.SimpleNamespace(offset=before, error=None)

        def consume(self, topic, partition):
            p = int(topic[1:])
            hw = self.state.brokers[serving_leader(self.state, p)].hw[p]
            return types.SimpleNamespace(records=tuple((i, b"r") for i in range(hw)))

        def observe(self, light=False, topics=None):
            return _observation(model, self.state)

        def dead(self):
            return ["broker 1 was ended by signal SIGKILL, not by jbodcheck"] if self.died else []

    mod.ZkCluster, mod.ClusterSpec, mod.HarnessError, mod.ProbeError = ZkCluster, ClusterSpec, HarnessError, ProbeError
    mod.fetch = lambda release, log=None: None
    return mod, made


@pytest.fixture(autouse=True)
def fast_polls(monkeypatch):
    import realkafka.driver.zk.run as run

    monkeypatch.setattr(run, "POLL", 0.01)


def _main(args) -> int:
    from explorer.cli.app import main

    with pytest.raises(SystemExit) as e:
        main(args)
    return e.value.code


def test_reproduce_kip112_2_on_a_scripted_cluster_matches_and_prints_both_views(monkeypatch, tmp_path, capsys):
    mod, made = fake_cluster_module(_model(KIP112_2))
    monkeypatch.setitem(sys.modules, "realkafka.cluster", mod)
    report = tmp_path / "r.json"
    assert _main(["reproduce", str(KIP112_2), "--kafka", "3.9.2", "--json", str(report)]) == 0
    out = capsys.readouterr().out
    assert "model (the scenario's path)" in out and "| real" in out
    assert "t0-0: leader 1, ISR [1, 2]; acked [0, 1]; readable 2 | t0-0: leader 1, ISR [1, 2]; acked [0, 1]; " \
           "readable 2" in " ".join(out.split())
    assert "Verdict: matched" in out
    data = json.loads(report.read_text())
    assert data["mode"] == "zookeeper" and data["exit_code"] == 0 and len(data["steps"]) == 6
    assert data["kafka"] == "3.9.2" and data["result"] == "matched"
    assert data["steps"][3]["action"] == "DirFail(broker=0, dir=0)" and data["steps"][3]["conforms"]
    assert made[0].stopped


def test_a_read_of_one_topic_is_not_compared_at_a_later_read_of_another(monkeypatch, capsys):
    """LogDirFailureTest's leader case reads t1-0, later loses t1-0's leader, then reads t0-0: only that last read
    is compared then."""
    scenario = SCENARIOS / "log-dir-failure-test-leader.json"
    mod, made = fake_cluster_module(_model(scenario))
    monkeypatch.setitem(sys.modules, "realkafka.cluster", mod)
    assert _main(["reproduce", str(scenario), "--kafka", "3.9.2"]) == 0, capsys.readouterr().out[-3000:]
    assert "Verdict: matched" in capsys.readouterr().out


def test_a_cluster_that_never_handles_the_log_dir_event_left_the_model_exit_1(monkeypatch, capsys):
    mod, made = fake_cluster_module(_model(KIP112_2), stuck_on="DirFail")
    monkeypatch.setitem(sys.modules, "realkafka.cluster", mod)
    assert _main(["reproduce", str(KIP112_2), "--kafka", "3.9.2", "--step-timeout", "1"]) == 1
    out = capsys.readouterr().out
    assert "Verdict: differs" in out and "step 12 DirFail(broker=0, dir=0)" in out
    assert made[0].stopped


def test_a_broker_killed_from_outside_is_a_harness_failure_exit_3(monkeypatch, capsys):
    mod, made = fake_cluster_module(_model(KIP112_2), dies_on="DirFail")
    monkeypatch.setitem(sys.modules, "realkafka.cluster", mod)
    assert _main(["reproduce", str(KIP112_2), "--kafka", "3.9.2"]) == 3
    assert "broker 1 was ended by signal SIGKILL, not by jbodcheck" in capsys.readouterr().err.strip().splitlines()[-1]
    assert made[0].stopped


def test_zookeeper_mode_scenarios_are_refused_where_no_real_cluster_can_judge_them(capsys):
    assert _main(["reproduce", str(KIP112_2), "--kafka", "4.0.2"]) == 2
    assert "no ZooKeeper mode" in capsys.readouterr().err
    for name in ("kip112-draft-1-topic-gets-created.json", "kip46-1-broker-dies-and-its-replica-moves.json"):
        assert _main(["reproduce", str(SCENARIOS / name), "--kafka", "3.9.2"]) == 2
        assert "never shipped" in capsys.readouterr().err


# ---- the real run (thorough profile) ----------------------------------------------------------------------------

@pytest.mark.skipif(any(shutil.which(t) is None for t in ("java", "javac", "mvn")),
                    reason="the real-cluster harness needs java, javac and mvn")
@pytest.mark.long_run
def test_kip112_2_reproduces_on_a_real_zookeeper_mode_cluster_of_3_9_2(tmp_path):
    report = tmp_path / "r.json"
    p = subprocess.run([sys.executable, "-m", "explorer", "reproduce", str(KIP112_2), "--kafka", "3.9.2", "--json",
                        str(report)], cwd=REPO, capture_output=True, text=True, timeout=900,
                       env={**os.environ, "PYTHONPATH": str(REPO)})
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:]
    data = json.loads(report.read_text())
    assert data["result"] == "matched" and all(s["conforms"] and not s["differences"] for s in data["steps"])
    root = next(line.rsplit(", ", 1)[1].rstrip(")") for line in p.stderr.splitlines() if "starting (Kafka" in line)
    assert not os.path.exists(root)
    assert not subprocess.run(["pgrep", "-f", root], capture_output=True).stdout


# ---- a conform campaign on ZooKeeper-mode clusters (realkafka/campaign/zk.py) ------------------------------

CAMPAIGN_MODEL = {"preset": "tiny", "rf": 1, "deletion": True, "reassignment": True,
                  "reassignment_procedure": "kafka-2.7", "max_faults": 3}


def _campaign(mod, model, tmp_path, mode="model", traces=4, timeout=30.0):
    from realkafka.campaign.campaign import run_campaign
    from realkafka.campaign.zk import ENGINE

    return run_campaign(releases=["3.9.2"], model_of=lambda r: model, traces=traces, seed=3, length=5,
                        start_cluster=lambda m, planned: mod.ZkCluster(mod.ClusterSpec()), out=tmp_path,
                        step_timeout=timeout, mode=mode, faults=4, engine=ENGINE,
                        cluster_has=lambda capability: capability in mod.ZkCluster.capabilities)


@pytest.mark.parametrize("mode", ["model", "real"])
def test_a_zookeeper_mode_campaign_on_a_cluster_that_follows_the_model_conforms(tmp_path, mode):
    model = _model_of(CAMPAIGN_MODEL)
    mod, made = fake_cluster_module(model)
    campaign = _campaign(mod, model, tmp_path, mode, timeout=30.0 if mode == "model" else 4.0)
    assert {t.outcome for t in campaign.traces} <= {"matched", "conforms"}, [t.says for t in campaign.traces]
    assert len(campaign.traces) == 4 and all(c.stopped for c in made)
    driven = {rule for rule, by in campaign.rules.items() if by["3.9.2"]["driven"]}
    assert "CreateTopic" in driven and len(driven) >= 4
    if mode == "model":
        assert any(by["3.9.2"]["observed_agreed"] for by in campaign.rules.values())


def test_a_zookeeper_mode_campaign_on_a_cluster_that_leaves_the_model_disagrees_with_a_scenario(tmp_path):
    model = _model_of(CAMPAIGN_MODEL)
    mod, _ = fake_cluster_module(model, stuck_on="CreateTopic")
    campaign = _campaign(mod, model, tmp_path, traces=4, timeout=1.0)
    # a trace whose cluster gets stuck where the model goes on disagrees, with its scenario; none is a harness failure
    disagreeing = [t for t in campaign.traces if t.outcome == "disagrees"]
    assert disagreeing, [(t.steps, t.says) for t in campaign.traces]
    assert all(json.loads(open(t.scenario).read())["steps"] for t in disagreeing)
    assert {t.outcome for t in campaign.traces} <= {"disagrees", "matched", "conforms"}


def test_conform_refuses_a_design_kafka_never_shipped_and_kafka_1_0s_reassignment(capsys):
    assert _main(["conform", "--kafka", "3.9.2", "--preset", "kip46-heal"]) == 2
    assert "never shipped" in capsys.readouterr().err
    assert _main(["conform", "--kafka", "3.9.2", "--preset", "reassignment"]) == 2
    assert "kafka-2.7" in capsys.readouterr().err
    assert _main(["conform", "--kafka", "4.1.0", "--preset", "tiny"]) == 2
    assert _main(["conform", "--kafka", "3.9.2", "--preset", "tiny", "--model", "saturation=true"]) == 2
    assert _main(["conform", "--kafka", "3.9.2", "--preset", "tiny", "--model", "nonsense"]) == 2


@pytest.mark.parametrize("base, says", [
    ({"preset": "kip46-heal"}, "KIP-46"), ({"preset": "kip18-lost-update"}, "KIP-18"),
    ({"preset": "tiny", "variant": "kip112-draft"}, "KIP-112's draft"), ({"preset": "saturation"}, "KIP-928"),
    ({"preset": "tiny"}, None), ({"preset": "kraft-tiny"}, None),
])
def test_explore_says_a_never_shipped_designs_verdict_cannot_be_judged_on_a_real_kafka(base, says):
    from explorer.reports.report import real_kafka_note

    note = real_kafka_note(_model_of(base).cfg)
    assert (note is None) if says is None else (says in note and "no real Kafka can judge" in note)


# ---- a broker's registration is seen (conform's disagreements 1 to 4 of 2026-12-07, seed 103) ------------------

ZK_CAMPAIGN_MODEL = {"preset": "tiny", "brokers": 3, "deletion": True, "reassignment": True,
                     "reassignment_procedure": "kafka-2.7", "max_faults": 3}


def _steps(model, labels):
    return [parse_step(model, label, n) for n, label in enumerate(labels, start=1)]


def test_a_crashed_brokers_failure_is_taken_only_once_its_registration_is_gone():
    """Trace 29's start: with no topic, nothing but the /brokers/ids znode shows the controller's BrokerChange
    handling; a cluster whose crashed broker stays registered (its ZooKeeper session not expired) has not taken
    ControllerBrokerFailure, so the run must not go on to restart it (a new JVM would find its old znode and exit)."""
    from realkafka.driver.zk.run import ZkDriver

    model = _model_of(ZK_CAMPAIGN_MODEL)
    steps = _steps(model, ["BrokerCrash(broker=0)", "ControllerBrokerFailure(broker=0)", "BrokerRestart(broker=0)",
                           "ControllerBrokerStartup(broker=0)"])
    mod, _ = fake_cluster_module(model, stuck_on="BrokerCrash")
    result = ZkDriver(mod.ZkCluster(None), model, steps, timeout=0.3).run()
    assert len(result.steps) == 1 and not result.steps[0].valid
    assert "by its own steps (ControllerBrokerFailure(broker=0)): it did not take them" in result.left_model
    followed = ZkDriver(fake_cluster_module(model)[0].ZkCluster(None), model, steps, timeout=5).run()
    assert followed.matched and len(followed.steps) == 2


def test_a_restarted_broker_counts_live_only_once_it_registered():
    """Trace 11's class: a running JVM that has not yet registered is not a broker the controller counts live."""
    model = _model_of(ZK_CAMPAIGN_MODEL)
    state = model.init_states()[0]
    for rule, args in _steps(model, ["BrokerCrash(broker=0)", "ControllerBrokerFailure(broker=0)",
                                     "BrokerRestart(broker=0)"]):
        state = model.step(state, rule, args)[1]
    before = project(model, state)
    rule, args = _steps(model, ["ControllerBrokerStartup(broker=0)"])[0]
    after = project(model, model.step(state, rule, args)[1])
    assert before.brokers[0].up and not before.brokers[0].registered and after.brokers[0].registered
    assert differences(after, before) == ["broker 0: not registered (no /brokers/ids znode) (model: the controller "
                                          "counts it live)"]


def test_the_campaign_table_counts_a_zookeeper_mode_report_against_zookeeper_modes_rules_and_presets(tmp_path, capsys):
    import importlib.util

    spec = importlib.util.spec_from_file_location("conform_table", REPO / "benchmarks" / "conform_table.py")
    table = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(table)
    report = {"preset": "tiny", "kafka": ["3.9.2"], "mode": "both", "controller": "zookeeper", "seed": 7,
              "settings": {}, "outcomes": {"matched": 1, "conforms": 0, "disagrees": 0, "refused": 0, "harness": 0},
              "traces": [{"kind": "model", "kafka": "3.9.2", "outcome": "matched", "elapsed_s": 5.0}],
              "rules": {"DirFail": {"3.9.2": {"driven": 12, "driven_agreed": 12}},
                        "ControllerLogDirEvent": {"3.9.2": {"observed": 3, "observed_agreed": 3}}}}
    path = tmp_path / "r.json"
    path.write_text(json.dumps(report))
    table.main([str(path)])
    out = capsys.readouterr().out
    assert "| tiny (ZooKeeper mode, seed 7) | 3.9.2 | both | 1 | 1 |" in out
    assert "| `DirFail` | driven | 12 (12) | 0 (0) |  |" in out
    assert "| `ControllerLogDirEvent` | awaited | 0 (0) | 3 (3) | not yet often enough" in out
    assert "3.9.2: agreed (10 or more)" in out and "\n| tiny | " in out and "kraft-tiny" not in out


def test_a_random_fault_run_restarts_a_crashed_broker_only_once_its_registration_is_gone():
    """The random-fault run of seed 106's traces 6 and 10: it restarted a crashed broker the model would restart
    only after the controller's ControllerBrokerFailure, still to come (its session not expired), and the new JVM
    exited. It now acts only where a state showing the cluster's view enables it, after the cluster's own steps."""
    import random

    from realkafka.campaign.zk import ZkChaos

    model = _model_of(ZK_CAMPAIGN_MODEL)
    mod, _ = fake_cluster_module(model)

    class SlowSession(mod.ZkCluster):
        """The crashed broker's registration stays for a few observations (its ZooKeeper session expiring)."""
        pending = 0

        def crash(self, b):
            self.stuck, self.pending = True, 6
            super().crash(b)

        def observe(self, light=False, topics=None):
            if self.pending:
                self.pending -= 1
                if not self.pending:
                    self.stuck = False
                    self._do("ControllerBrokerFailure", (0,))
            return super().observe(light, topics)

    chaos = ZkChaos(model, SlowSession(None), random.Random(1), step_timeout=5.0, gap=(0.0, 0.0))
    chaos.actions = [(r, a) for r, a in chaos.actions if (r.name, a) in {("BrokerCrash", (0,)), ("BrokerRestart", (0,))}]
    chaos.run(2)
    assert chaos.done == ["CreateTopic(partition=0)", "BrokerCrash(broker=0)", "BrokerRestart(broker=0)"]
