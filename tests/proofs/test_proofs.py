"""jbodcheck prove (docs/proofs.md): the z3 proofs for any cluster size, the refinement check that ties the z3
model to the explicit model, and bounded model checking against BFS."""
from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
import z3

from model import Feature
from explorer.catalog import KIP112
from explorer.catalog import preset_config
from proofs import conformance, induction
from proofs.bmc import bmc
from proofs.properties import LEMMAS, PROPERTIES, invariant_parts
from proofs.refinement import Refinement, abstract, check_model, witness_values
from proofs.system import RULE_TO_ACTION
from support.profiles import THOROUGH

from support.helpers import REPO
from explorer.catalog import build_model

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
ONE_STEP = {"no_recreate_with_bad_dir", "create_only_on_good_dir"}   # follow from the broker's own step
NEEDS_THE_PROTOCOL = {"no_recreate_over_offline_copy"}               # false without the controller lemmas
NO_CHECK_VARIANTS = ("legacy", "kip112-no-isnew-check")              # KIP-112 without the isNewReplica check


def test_every_property_is_proved_under_kip112_and_says_whether_it_needs_its_lemmas():
    results = {pid: induction.prove(pid, "kip112") for pid in PROPERTIES}
    assert set(FLAGSHIP) | NEEDS_THE_PROTOCOL <= set(PROPERTIES)
    for r in results.values():
        assert r["result"] == "proved", induction.render(r)
        assert [c["action"] for c in r["checks"]][0] == "initiation"
        assert all(c["result"] == "proved" for c in r["checks"])
    assert {pid for pid, r in results.items() if r["follows_from_one_step"]} == ONE_STEP
    assert "follows from one step" in induction.render(results["create_only_on_good_dir"])[-1]


def test_the_protocol_property_needs_each_controller_lemma():
    """no_recreate_over_offline_copy is not inductive without the lemmas about the controller's isNewReplica."""
    from proofs.properties import PROPERTIES as props
    prop = props["no_recreate_over_offline_copy"]
    for lemma in ("copies_only_of_partitions_with_a_record", "new_replica_request_only_without_a_copy"):
        weaker = prop._replace(lemmas=tuple(x for x in prop.lemmas if x != lemma))
        r = induction.prove(prop.id, "kip112", prop=weaker)
        assert r["result"] == "not proved", lemma


@pytest.mark.parametrize("variant", NO_CHECK_VARIANTS)
def test_without_the_check_the_two_recreation_properties_fail_at_broker_leader_and_isr(variant):
    r = induction.prove("no_recreate_with_bad_dir", variant)
    assert r["result"] == "not proved"
    failing = [c for c in r["checks"] if c["result"] != "proved"]
    assert [c["action"] for c in failing] == ["BrokerLeaderAndIsr"]
    cti = failing[0]["cti"]
    # the CTI is the model z3 picks: it breaks the property, and may break a lemma too (z3 versions differ)
    assert "no_recreate_with_bad_dir" in failing[0]["broken"]
    broker = int(re.search(r"broker=(\d+)", cti["action"]).group(1))
    pre = cti["pre"]["brokers"][broker]
    post = cti["post"]["brokers"][broker]
    # The broker has an offline dir, handles an isNewReplica=false entry for a partition it holds no log of on a
    # good dir (a copy on the offline dir, or none), and creates the log on a good dir: the explicit
    # counterexample's step 4. (Which of the two pre-states z3 picks depends on the solver's history.)
    assert "offline" in pre["dirs"]
    handled = re.findall(r"p(\d+) isNew=(\w+)", cti["action"])
    created = [p for p, new in handled if new == "false"
               and set(post["partitions"][int(p)]["log_on_dirs"]) - set(pre["partitions"][int(p)]["log_on_dirs"])]
    assert created
    p = int(created[0])
    assert all(pre["dirs"][d] != "good" for d in pre["partitions"][p]["log_on_dirs"])
    new_dir = (set(post["partitions"][p]["log_on_dirs"]) - set(pre["partitions"][p]["log_on_dirs"])).pop()
    assert pre["dirs"][new_dir] == "good"
    # The other properties but the second recreation one hold (the variants differ only in may_create_log).
    for pid in PROPERTIES:
        expected = "not proved" if pid in {"no_recreate_with_bad_dir", "no_recreate_over_offline_copy"} else "proved"
        assert induction.prove(pid, variant)["result"] == expected, pid


def _holds(ref: Refinement, formula, pairs) -> bool:
    return z3.is_true(z3.simplify(ref._substitute(formula, pairs)))


def test_the_explicit_counterexamples_last_step_is_a_cti_of_the_same_invariant():
    """Its pre-state satisfies the inductive invariant (it is reachable), and its step breaks the property in
    the z3 vocabulary: the CTI the prover prints is this kind of step, not an artefact of the abstraction."""
    report = bfs_counterexample("small")
    labels = [t["action"] for t in report["violations"][0]["trace"][1:]]
    assert len(labels) == 4 and labels[-1].startswith("BrokerLeaderAndIsr")
    m = build_model(preset_config("small", variant="legacy"))
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
    # The conformance check bounded to tiny's first 2,000 states here (its whole run is the next tests' job).
    ok = jbodcheck("prove", "--conformance-max-states", 2000, "--json", tmp_path / "ok.json")
    assert ok.returncode == 0, ok.stderr
    assert "Result: all proved; the explicit model conforms to the z3 model (tiny: 2,000 states, NOT all)" in ok.stdout
    assert "vacuity: every action enabled within 5 steps" in ok.stdout
    assert "the first 2,000 states, breadth-first: NOT all" in ok.stdout
    report = json.loads((tmp_path / "ok.json").read_text())
    assert {"schema", "tool", "command", "mode", "variant", "result", "properties", "elapsed_s",
            "vacuity", "conformance"} <= set(report)
    assert report["mode"] == "induction" and report["result"] == "proved"
    assert report["vacuity"]["never_enabled"] == []
    assert {p["id"] for p in report["properties"]} == set(PROPERTIES)
    for p in report["properties"]:
        assert {"id", "kind", "statement", "invariant", "result", "checks", "follows_from_one_step"} <= set(p)
    conf = report["conformance"]
    assert conf["checked"] and conf["result"] == "conforms" and conf["offences"] == []
    [tiny] = conf["configurations"]
    assert tiny["preset"] == "tiny" and tiny["states"] == 2000 and not tiny["whole"] and tiny["reverse"]
    assert tiny["configuration"]["model"]["brokers"] == 2 and tiny["beyond"]["ok"]

    off = jbodcheck("prove", "--property", "create_only_on_good_dir", "--no-conformance")
    assert off.returncode == 0, off.stderr
    assert ("Result: all proved; for the z3 model only: its conformance to the explicit model was not checked "
            "(--no-conformance)") in off.stdout

    for args in (("--variant", "nope"), ("--property", "nope"), ("--bmc", "-1"), ("--bmc", 3, "--preset", "nope")):
        run = jbodcheck("prove", *args)
        assert run.returncode == 2, (args, run.stdout, run.stderr)
        assert run.stderr.startswith("jbodcheck: error:") and "Traceback" not in run.stderr


def test_prove_says_a_variant_without_a_z3_model_has_none_rather_than_calling_it_unknown():
    # KRaft has its own z3 model since 0.4.0 (tests/proofs/test_proofs_kraft.py); kip18 has none.
    run = jbodcheck("prove", "--variant", "kip18")
    assert run.returncode == 2, run.stderr
    assert "--variant kip18 has no z3 model yet" in run.stderr and "unknown variant" not in run.stderr


@pytest.mark.parametrize("variant", NO_CHECK_VARIANTS)
@pytest.mark.long_run(ids=["legacy"])
def test_prove_without_the_check_fails_with_a_cti_and_a_real_bmc_path(variant):
    """The acceptance of issue 28: exit 1, a CTI for each recreation property and a path from the initial
    state to a violation (bounded model checking on tiny's size)."""
    bad = jbodcheck("prove", "--variant", variant, "--no-conformance", "--json", "-")
    assert bad.returncode == 1, bad.stderr
    assert "BrokerLeaderAndIsr               NOT PROVED" in bad.stderr
    assert "pre-state:" in bad.stderr and "post-state (what changed):" in bad.stderr
    assert "VIOLATION at depth 4" in bad.stderr and "VIOLATION at depth 8" in bad.stderr
    report = json.loads(bad.stdout)
    assert report["result"] == "not proved"
    failed = {p["id"]: p for p in report["properties"] if p["result"] != "proved"}
    assert set(failed) == {"no_recreate_with_bad_dir", "no_recreate_over_offline_copy"}
    for p in failed.values():
        ctis = [c for c in p["checks"] if c["result"] == "cti"]
        assert [c["action"] for c in ctis] == ["BrokerLeaderAndIsr"]
        assert {"pre", "action", "post", "universe"} <= set(ctis[0]["cti"])
        path = p["bmc"]
        assert path["result"] == "violation" and path["trace"][0]["action"] is None
        assert path["trace"][-1]["action"].startswith("BrokerLeaderAndIsr(")
        assert "isNew=false" in path["trace"][-1]["action"]


# ---- refinement: the z3 model over-approximates the explicit one ---------------------------------------------
TINY_WITHOUT_SYMMETRY = (87_862, 262_050)   # every reachable state of tiny; 63,335 up to the dir symmetry
MEDIUM_DISTINCT = (1_720_574, 6_378_929)   # up to the dir symmetry (README's counts); about 21 minutes
CORE_RULES = {"CreateTopic", "DirFail", "BrokerCrash", "BrokerRestart", "ReplaceDisk", "RemoveDirFromConfig",
              "ControllerFailover", "ControllerBrokerStartup", "ControllerBrokerFailure", "ControllerLogDirEvent",
              "ControllerLeaderAndIsrResponse", "BrokerLeaderAndIsr", "BrokerStopReplica"}


@pytest.mark.long_run
def test_every_transition_of_tiny_conforms_both_ways_and_every_property_agrees_with_its_invariant():
    """The whole of tiny, every state (no symmetry reduction): docs/proofs.md, section 5. A long run
    (the long_run marker): the default profile checks tiny's first 2,000 states through the CLI (above)."""
    report = conformance.check(build_model(preset_config("tiny")), "tiny")
    assert report.ok, "\n".join(conformance.render(report))
    assert (report.states, report.transitions) == TINY_WITHOUT_SYMMETRY
    assert report.explicit_violations == {}              # kip112 breaks none of the properties on tiny
    # every property and lemma compared beyond the reachable states, each with both verdicts among them
    assert set(report.beyond.compared) == set(PROPERTIES) | set(LEMMAS)
    assert all(0 < n < report.beyond.samples for n in report.beyond.explicit_failures.values())
    assert CORE_RULES <= set(report.rules), CORE_RULES - set(report.rules)
    assert set(report.rules) <= set(RULE_TO_ACTION)
    assert report.reverse_checked > report.abstract_states          # every abstract state was asked about
    assert report.property_checks > report.transitions              # every transition, every transition property


@pytest.mark.skipif(not THOROUGH, reason="the whole of medium: the thorough profile (docs/testing.md)")
def test_every_transition_of_medium_conforms_both_ways_up_to_the_dir_symmetry():
    report = conformance.check(build_model(preset_config("medium"), symmetry=True), "medium")
    assert report.ok, "\n".join(conformance.render(report))
    assert (report.states, report.transitions) == MEDIUM_DISTINCT


def test_legacy_transitions_satisfy_the_legacy_relation():
    report = check_model(build_model(preset_config("tiny", variant="legacy")), 2_000)
    assert report.offences == () and report.initial_failures == ()


def test_a_rule_without_an_abstract_action_is_reported():
    extra = Feature("extra", "a rule the z3 model does not know")
    extra.rule("Nothing", params=(), domain=lambda m: [()], guard=lambda m, s: None, kind="environment",
               reference="test")(lambda m, s: s)
    report = check_model(build_model(preset_config("tiny"), design=KIP112.extended(extra)), 10, max_offences=1)
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


@pytest.mark.long_run
def test_bmc_finds_no_violation_under_kip112_and_the_cli_reports_depths(tmp_path):
    for pid in FLAGSHIP:
        assert bmc(pid, "kip112", 2, 2, 1, 5)["result"] == "no violation"
    run = jbodcheck("prove", "--bmc", 5, "--variant", "legacy", "--property", "no_recreate_with_bad_dir",
                    "--conformance-max-states", 300, "--json", tmp_path / "bmc.json")
    assert run.returncode == 1 and "VIOLATION at depth 4" in run.stdout
    report = json.loads((tmp_path / "bmc.json").read_text())
    assert report["mode"] == "bmc" and report["properties"][0]["first_violation_depth"] == 4
    assert report["conformance"]["configurations"][0]["explicit_violations"]["no_recreate_with_bad_dir"]
    run = jbodcheck("prove", "--bmc", 4, "--property", "create_only_on_good_dir", "--no-conformance")
    assert run.returncode == 0 and "no violation up to depth 4" in run.stdout
    assert "vacuity: every action enabled" in run.stdout
