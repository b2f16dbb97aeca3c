"""jbodcheck prove (docs/proofs.md): the z3 proofs for any cluster size, the refinement check that ties the z3
model to the explicit model, and bounded model checking against BFS."""
from __future__ import annotations

import json
import re
import subprocess
import sys
import time

import pytest
import z3

from model import Feature, Model
from model.designs import KIP112
from model.presets import preset_config
from model.state import H_NONE, with_broker
from proofs import induction
from proofs.bmc import bmc
from proofs.properties import PROPERTIES, invariant_parts
from proofs.refinement import Refinement, abstract, check_model, describe, witness_values
from proofs.system import RULE_TO_ACTION
from profiles import THOROUGH

from helpers import REPO

FLAGSHIP = ("no_recreate_with_bad_dir", "create_only_on_good_dir")


def jbodcheck(*args, timeout=240):
    return subprocess.run([sys.executable, "-m", "explorer", *map(str, args)], capture_output=True, text=True,
                          cwd=REPO, timeout=timeout)


def bfs_counterexample(preset: str) -> dict:
    """The explicit search's first violation under legacy (its JSON report)."""
    run = jbodcheck("explore", "--preset", preset, "--variant", "legacy", "-q", "--json", "-")
    assert run.returncode == 1, run.stderr
    return json.loads(run.stdout)


def replay_labels(m, labels):
    """The explicit model's transitions along a trace's action labels (``Rule(k=v, ...) + UpdateMetadata ...``)."""
    state = m.init_states()[0]
    steps = []
    for label in labels:
        name, args = re.match(r"(\w+)\(([^)]*)\)", label).groups()
        values = tuple(int(v.split("=")[1]) for v in args.split(", ") if v)
        action, after = m.step(state, name, values)
        steps.append((state, action, after))
        state = after
    return steps


# ---- induction ---------------------------------------------------------------------------------------------
def test_every_property_is_proved_under_kip112_in_under_a_minute():
    start = time.monotonic()
    results = [induction.prove(pid, "kip112") for pid in PROPERTIES]
    assert time.monotonic() - start < 60
    assert set(FLAGSHIP) <= set(PROPERTIES)
    for r in results:
        assert r["result"] == "proved", induction.render(r)
        assert [c["action"] for c in r["checks"]][0] == "initiation"
        assert all(c["result"] == "proved" for c in r["checks"])


def test_legacy_fails_only_at_broker_leader_and_isr_with_a_cti_like_the_bfs_counterexamples_last_step():
    r = induction.prove("no_recreate_with_bad_dir", "legacy")
    assert r["result"] == "not proved"
    failing = [c for c in r["checks"] if c["result"] != "proved"]
    assert [c["action"] for c in failing] == ["BrokerLeaderAndIsr"]
    cti = failing[0]["cti"]
    assert failing[0]["broken"] == ["no_recreate_with_bad_dir"]
    broker = int(re.search(r"broker=(\d+)", cti["action"]).group(1))
    pre = cti["pre"]["brokers"][broker]
    post = cti["post"]["brokers"][broker]
    # The broker has an offline dir, handles an isNewReplica=false entry for a partition it holds no log of,
    # and creates the log on a good dir: the explicit counterexample's step 4.
    assert "offline" in pre["dirs"]
    handled = re.findall(r"p(\d+) isNew=(\w+)", cti["action"])
    created = [p for p, new in handled if new == "false"
               and set(post["partitions"][int(p)]["log_on_dirs"]) - set(pre["partitions"][int(p)]["log_on_dirs"])]
    assert created
    p = int(created[0])
    assert pre["partitions"][p]["log_on_dirs"] == []
    new_dir = (set(post["partitions"][p]["log_on_dirs"]) - set(pre["partitions"][p]["log_on_dirs"])).pop()
    assert pre["dirs"][new_dir] == "good"
    # The other properties still hold under legacy (the variant differs only in may_create_log).
    for pid in PROPERTIES:
        if pid != "no_recreate_with_bad_dir":
            assert induction.prove(pid, "legacy")["result"] == "proved"


def _holds(ref: Refinement, formula, pairs) -> bool:
    return z3.is_true(z3.simplify(ref._substitute(formula, pairs)))


def test_the_explicit_counterexamples_last_step_is_a_cti_of_the_same_invariant():
    """Its pre-state satisfies the inductive invariant (it is reachable), and its step breaks the property in
    the z3 vocabulary: the CTI the prover prints is this kind of step, not an artefact of the abstraction."""
    report = bfs_counterexample("small")
    labels = [t["action"] for t in report["violations"][0]["trace"][1:]]
    assert len(labels) == 4 and labels[-1].startswith("BrokerLeaderAndIsr")
    m = Model(preset_config("small", variant="legacy"))
    state, action, after = replay_labels(m, labels)[-1]
    ref = Refinement(m)
    assert ref.check_transition(state, action, after) is None      # the legacy z3 relation allows it
    prop = PROPERTIES["no_recreate_with_bad_dir"]
    pre_pairs = ref._pairs(ref.s, abstract(m, state))
    for name, f in invariant_parts(prop):
        assert _holds(ref, f(ref.u, ref.s), pre_pairs), name
    from proofs.system import ACTION_BY_NAME
    act = ACTION_BY_NAME["BrokerLeaderAndIsr"]
    w = ref._witness_vars[act.name]
    args = (ref.u.brokers[action.args[0]],)
    formula = ref._substitute(prop.formula(ref.u, ref.s, ref.t, act.name, w, args),
                              ref._witness_pairs(act, witness_values(m, state, "BrokerLeaderAndIsr", action.args)))
    pairs = pre_pairs + ref._pairs(ref.t, abstract(m, after))
    assert z3.is_false(z3.simplify(ref._substitute(formula, pairs)))


def test_cli_prove_exit_codes_output_and_json(tmp_path):
    ok = jbodcheck("prove", "--json", tmp_path / "ok.json")
    assert ok.returncode == 0, ok.stderr
    assert "Result: all proved" in ok.stdout
    report = json.loads((tmp_path / "ok.json").read_text())
    assert {"schema", "tool", "command", "mode", "variant", "result", "properties", "elapsed_s"} <= set(report)
    assert report["mode"] == "induction" and report["result"] == "proved"
    assert {p["id"] for p in report["properties"]} == set(PROPERTIES)
    for p in report["properties"]:
        assert {"id", "kind", "statement", "invariant", "result", "checks"} <= set(p)

    bad = jbodcheck("prove", "--variant", "legacy", "--json", "-")
    assert bad.returncode == 1
    assert "BrokerLeaderAndIsr               NOT PROVED" in bad.stderr
    assert "pre-state:" in bad.stderr and "post-state (what changed):" in bad.stderr
    report = json.loads(bad.stdout)
    assert report["result"] == "not proved"
    cti = [c for p in report["properties"] for c in p["checks"] if c["result"] == "cti"]
    assert len(cti) == 1 and {"pre", "action", "post", "universe"} <= set(cti[0]["cti"])

    for args in (("--variant", "nope"), ("--property", "nope"), ("--bmc", "-1"), ("--bmc", 3, "--preset", "nope")):
        run = jbodcheck("prove", *args)
        assert run.returncode == 2, (args, run.stdout, run.stderr)
        assert run.stderr.startswith("jbodcheck: error:") and "Traceback" not in run.stderr


# ---- refinement: the z3 model over-approximates the explicit one ---------------------------------------------
CORE_RULES = {"CreateTopic", "DirFail", "BrokerCrash", "BrokerRestart", "ReplaceDisk", "RemoveDirFromConfig",
              "ControllerFailover", "ControllerBrokerStartup", "ControllerBrokerFailure", "ControllerLogDirEvent",
              "ControllerLeaderAndIsrResponse", "BrokerLeaderAndIsr", "BrokerStopReplica"}


@pytest.mark.parametrize("preset, max_states", [("tiny", 20_000 if THOROUGH else 8_000),
                                                ("medium", 3_000)])
def test_every_explicit_transition_satisfies_the_z3_relation_of_its_action(preset, max_states):
    m = Model(preset_config(preset))
    report = check_model(m, max_states)
    assert report.initial_failures == ()
    assert report.offences == (), "\n".join(describe(o) for o in report.offences)
    assert report.states == max_states
    assert report.transitions > 2 * max_states
    assert CORE_RULES <= set(report.rules), CORE_RULES - set(report.rules)
    assert set(report.rules) <= set(RULE_TO_ACTION)


def test_legacy_transitions_satisfy_the_legacy_relation():
    report = check_model(Model(preset_config("tiny", variant="legacy")), 2_000)
    assert report.offences == () and report.initial_failures == ()


def test_a_broker_that_creates_logs_the_z3_model_forbids_is_reported():
    """A design feature whose may_create_log always says yes (the legacy broker, disguised as kip112): the
    refinement check against the kip112 z3 model reports the offending BrokerLeaderAndIsr."""
    always = Feature("always-create", "a broken broker", hooks={"may_create_log": lambda broker, is_new: True})
    m = Model(preset_config("tiny"), design=KIP112.extended(always))
    assert m.cfg.variant == "kip112"
    report = check_model(m, 20_000, max_offences=1)
    assert len(report.offences) == 1
    off = report.offences[0]
    assert off.label.startswith("BrokerLeaderAndIsr(broker=")
    assert off.failed == ("each named partition as 6.1 says",)
    b = int(re.search(r"broker=(\d+)", off.label).group(1))
    assert any(status == 2 for (bb, _), status in off.pre["dir"].items() if bb == b)  # an offline dir
    assert any(v and not off.pre["copy"][k] for k, v in off.post["copy"].items() if k[0] == b)  # a new log
    assert "copy(b%d,p0,d" % b in describe(off)


def _stop_replica_forgets(m, s, broker):
    """A changed BrokerStopReplica: the replicas it names are forgotten (hosted none), not stopped."""
    b = s.brokers[broker]
    named = b.inbox[0].body
    hosted = tuple(H_NONE if p in named else h for p, h in enumerate(b.hosted))
    return with_broker(s, broker, b._replace(hosted=hosted, inbox=b.inbox[1:]))


def test_a_changed_rule_replacing_broker_stop_replica_is_reported():
    from model.rules import CORE
    forgets = Feature("stop-forgets", "a changed StopReplica")
    original = CORE.rules[[r.name for r in CORE.rules].index("BrokerStopReplica")]
    forgets.rule("BrokerStopReplica", params=("broker",), domain=original.domain, guard=original.guard,
                 kind="broker", reference="test", replaces="BrokerStopReplica")(_stop_replica_forgets)
    m = Model(preset_config("tiny"), design=KIP112.extended(forgets))
    report = check_model(m, 20_000, max_offences=1)
    assert report.offences, "the changed rule went unnoticed"
    off = report.offences[0]
    assert off.label.startswith("BrokerStopReplica(") and off.failed == ("led or followed replicas named stop",)


def test_a_rule_without_an_abstract_action_is_reported():
    extra = Feature("extra", "a rule the z3 model does not know")
    extra.rule("Nothing", params=(), domain=lambda m: [()], guard=lambda m, s: None, kind="environment",
               reference="test")(lambda m, s: s)
    report = check_model(Model(preset_config("tiny"), design=KIP112.extended(extra)), 10, max_offences=1)
    assert report.offences and "has no abstract action" in report.offences[0].failed[0]


# ---- bounded model checking against BFS ------------------------------------------------------------------------
@pytest.mark.parametrize("preset", ["tiny", "small"])
def test_bmc_finds_the_first_violation_at_the_depth_bfs_does(preset):
    report = bfs_counterexample(preset)
    bfs_depth = len(report["violations"][0]["trace"]) - 1
    assert report["violations"][0]["invariant"] == "no_recreate_with_bad_dir"
    cfg = preset_config(preset)
    r = bmc("no_recreate_with_bad_dir", "legacy", cfg.brokers, cfg.dirs, cfg.partitions, bfs_depth + 1)
    assert r["result"] == "violation"
    assert r["first_violation_depth"] == bfs_depth == 4
    assert r["trace"][-1]["action"].startswith("BrokerLeaderAndIsr(")


def test_bmc_finds_no_violation_under_kip112_and_the_cli_reports_depths(tmp_path):
    for pid in FLAGSHIP:
        assert bmc(pid, "kip112", 2, 2, 1, 5)["result"] == "no violation"
    run = jbodcheck("prove", "--bmc", 5, "--variant", "legacy", "--property", "no_recreate_with_bad_dir",
                    "--json", tmp_path / "bmc.json")
    assert run.returncode == 1 and "VIOLATION at depth 4" in run.stdout
    report = json.loads((tmp_path / "bmc.json").read_text())
    assert report["mode"] == "bmc" and report["properties"][0]["first_violation_depth"] == 4
    run = jbodcheck("prove", "--bmc", 4, "--property", "create_only_on_good_dir")
    assert run.returncode == 0 and "no violation up to depth 4" in run.stdout
