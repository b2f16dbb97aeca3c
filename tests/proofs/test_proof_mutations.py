"""The mutation corpus of the proof pipeline (docs/proofs.md, section 8): planted bugs in a rule, in a z3 action,
in a property's encoding, in both models together, in the controller's isNewReplica flag, deep in the state
space, and vacuous relations. Each is applied in this process (a design feature, or monkeypatching the z3
model's tables) and must be caught by `jbodcheck prove` (induction, its vacuity check) or by the conformance
check (proofs/conformance.py, on a prefix of tiny: the whole of tiny is tests/proofs/test_proofs.py's job)."""
from __future__ import annotations

import pytest
import z3
from click.testing import CliRunner

from model import Feature, Model
from explorer.catalog import KIP112
from explorer.catalog import preset_config
from model.storage.state import H_NONE, with_broker
from proofs import conformance, induction, system, vacuity
from explorer.cli.prove import prove_command
from proofs.properties import LEMMAS, PROPERTIES
from invariants.zk.designs import no_recreate_over_offline_copy
from explorer.catalog import build_model

PREFIX = 3_000     # states of tiny, breadth-first, for the mutants caught near the initial state


def explicit_mutant(symmetry: bool = False, **hooks) -> Model:
    return build_model(preset_config("tiny"), symmetry=symmetry,
                       design=KIP112.extended(Feature("mutant", "a planted bug", hooks=hooks)))


def forward_offences(m: Model, max_states=PREFIX):
    return conformance.check(m, "tiny", reverse=False, properties=False, max_states=max_states,
                             stop_early=True, beyond=0).forward_offences


def relation_with(name: str, extra):
    """The action's relation with one more conjunct (label, (u, s, t, w, args) -> formula)."""
    original = system.RELATIONS[name]

    def mutated(u, s, t, w, may, *args):
        label, formula = extra
        return original(u, s, t, w, may, *args) + [(label, formula(u, s, t, w, args))]
    return mutated


def relation_without(name: str, label: str):
    original = system.RELATIONS[name]

    def mutated(u, s, t, w, may, *args):
        conjuncts = original(u, s, t, w, may, *args)
        assert label in [lab for lab, _ in conjuncts]
        return [(lab, f) for lab, f in conjuncts if lab != label]
    return mutated


def not_proved(prop_id: str, variant: str = "kip112") -> list:
    r = induction.prove(prop_id, variant)
    return [c["action"] for c in r["checks"] if c["result"] != "proved"]


# ---- 1-4: the explicit model changes, the z3 model does not: the forward conformance check --------------------
# The z3 controller actions that send LeaderAndIsr: a drift of the controller's isNewReplica shows at one of them
# (which one first depends only on the breadth-first order, so the tests name the conjunct, not the action).
CONTROLLER_SENDS_LEADER_AND_ISR = ("ControllerFailover", "ControllerBrokerStartup", "ControllerBrokerFailure",
                                   "ControllerLogDirEvent", "ControllerLeaderAndIsrResponse")


def test_m01_rule_broker_always_creates_a_missing_log():
    offences = forward_offences(explicit_mutant(may_create_log=lambda broker, is_new: True))
    assert offences and offences[0].label.startswith("BrokerLeaderAndIsr(")
    assert offences[0].failed == ("each named partition as 6.1 says",)


def test_m02_controller_always_sends_is_new_replica_true():
    offences = forward_offences(explicit_mutant(is_new_replica=lambda step, b, p, is_new: True))
    assert offences and offences[0].action in CONTROLLER_SENDS_LEADER_AND_ISR
    assert offences[0].failed == ("isNewReplica=true only for a partition getting its first record",)


def test_m03_deep_controller_sends_is_new_replica_true_from_leader_epoch_3():
    """Deep in tiny (the whole preset is searched): the controller's later isNewReplica=true entry, and the
    re-creation it asks for."""
    m = explicit_mutant(is_new_replica=lambda step, b, p, is_new: is_new or step.partitions[p].leader_epoch >= 3)
    offences = forward_offences(m, None)
    assert offences and offences[0].action in CONTROLLER_SENDS_LEADER_AND_ISR
    assert offences[0].failed == ("isNewReplica=true only for a partition getting its first record",)


def _stop_replica_forgets(m, s, broker):
    b = s.brokers[broker]
    named = b.inbox[0].body
    hosted = tuple(H_NONE if p in named else h for p, h in enumerate(b.hosted))
    return with_broker(s, broker, b._replace(hosted=hosted, inbox=b.inbox[1:]))


def test_m04_rule_stop_replica_forgets_the_replica():
    from model.zk.rules import CORE
    forgets = Feature("stop-forgets", "a changed StopReplica")
    original = CORE.rules[[r.name for r in CORE.rules].index("BrokerStopReplica")]
    forgets.rule("BrokerStopReplica", params=("broker",), domain=original.domain, guard=original.guard,
                 kind="broker", reference="test", replaces="BrokerStopReplica")(_stop_replica_forgets)
    offences = forward_offences(build_model(preset_config("tiny"), design=KIP112.extended(forgets)))
    assert offences and offences[0].failed == ("led or followed replicas named stop",)


# ---- 5-9: the z3 model changes ------------------------------------------------------------------------------
def test_m05_z3_action_contradictory_makes_prove_fail_not_say_all_proved(monkeypatch):
    monkeypatch.setitem(system.RELATIONS, "BrokerLeaderAndIsr",
                        relation_with("BrokerLeaderAndIsr", ("planted: false", lambda *_: z3.BoolVal(False))))
    # Induction alone is fooled: every consecution check about the action holds vacuously.
    assert induction.prove("no_recreate_with_bad_dir", "legacy")["result"] == "proved"
    # Its own, and the response to it, which only it can make possible.
    assert vacuity.check("legacy")["never_enabled"] == ["ControllerLeaderAndIsrResponse", "BrokerLeaderAndIsr"]
    run = CliRunner().invoke(prove_command, ["--variant", "legacy", "--property", "create_only_on_good_dir",
                                             "--conformance-max-states", "100"],
                             standalone_mode=False)      # as jbodcheck runs it: the return value is the exit code
    assert run.return_value == 1, run.output
    assert "BrokerLeaderAndIsr               NEVER ENABLED" in run.output
    verdict = run.output.splitlines()[-1]
    assert "action BrokerLeaderAndIsr never enabled (vacuous)" in verdict
    assert "the explicit model does NOT conform to the z3 model (forward BrokerLeaderAndIsr" in verdict
    assert forward_offences(build_model(preset_config("tiny")))   # and the explicit transitions no longer refine


def test_m06_z3_initial_condition_contradictory(monkeypatch):
    original = system.initial
    contradictory = lambda u, s: original(u, s) + [("planted: false", z3.BoolVal(False))]  # noqa: E731
    for module in (system, vacuity, conformance, induction):
        monkeypatch.setattr(module, "initial", contradictory)
    assert set(vacuity.check("kip112")["never_enabled"]) == {a.name for a in system.ACTIONS}
    report = conformance.check(build_model(preset_config("tiny")), reverse=False, properties=False, max_states=10,
                               beyond=0)
    assert report.initial_failures == (("planted: false",),)


def test_m07_z3_broker_ignores_may_create_log(monkeypatch):
    monkeypatch.setitem(system.VARIANTS, "kip112", system.may_create_legacy)
    assert not_proved("no_recreate_with_bad_dir") == ["BrokerLeaderAndIsr"]


def test_m08_z3_controller_may_send_is_new_replica_true_any_time(monkeypatch):
    """The abstraction the old z3 controller had: no_recreate_over_offline_copy is then not provable (CTI)."""
    for name in CONTROLLER_SENDS_LEADER_AND_ISR:
        monkeypatch.setitem(system.RELATIONS, name, relation_without(
            name, "isNewReplica=true only for a partition getting its first record"))
    assert not_proved("no_recreate_over_offline_copy") != []


def test_m09_z3_log_dir_event_may_keep_notifications_an_undocumented_over_approximation(monkeypatch):
    """Looser than the explicit model, and harmless to every property: only the reverse check sees it."""
    monkeypatch.setitem(system.RELATIONS, "ControllerLogDirEvent",
                        relation_without("ControllerLogDirEvent", "notifications deleted"))
    for pid in PROPERTIES:
        assert induction.prove(pid, "kip112")["result"] == "proved"
    report = conformance.check(build_model(preset_config("tiny")), properties=False, max_states=PREFIX, beyond=0)
    assert report.forward_offences == ()
    assert report.reverse_unmatched and report.reverse_unmatched[0][0] == "ControllerLogDirEvent"


def test_m10_z3_dir_fail_needs_a_down_broker_too_strict(monkeypatch):
    monkeypatch.setitem(system.RELATIONS, "DirFail", relation_with(
        "DirFail", ("planted: b is down", lambda u, s, t, w, args: z3.Not(s.up(args[0])))))
    offences = forward_offences(build_model(preset_config("tiny")))
    assert offences and offences[0].action == "DirFail" and "planted: b is down" in offences[0].failed


# ---- 11-13: a property's encoding, and both models drifting together ---------------------------------------------
def _weakened(monkeypatch, prop_id: str):
    monkeypatch.setitem(PROPERTIES, prop_id, PROPERTIES[prop_id]._replace(
        formula=lambda *args: z3.BoolVal(True)))


def test_m11_property_encoding_weakened_to_true(monkeypatch):
    _weakened(monkeypatch, "no_recreate_with_bad_dir")
    assert induction.prove("no_recreate_with_bad_dir", "legacy")["result"] == "proved"     # prove is fooled
    report = conformance.check(build_model(preset_config("tiny", variant="legacy")), "tiny", reverse=False,
                               max_states=PREFIX, beyond=0)
    assert {d[0] for d in report.property_disagreements} == {"no_recreate_with_bad_dir"}


def test_m12_rule_and_z3_drift_together_caught_by_prove(monkeypatch):
    """The broker creates any missing log, and the z3 broker was changed the same way: the two still refine
    each other, so conformance passes; the property is then not provable."""
    monkeypatch.setitem(system.VARIANTS, "kip112", system.may_create_legacy)
    m = explicit_mutant(may_create_log=lambda broker, is_new: True)
    assert forward_offences(m) == ()
    assert not_proved("no_recreate_with_bad_dir") == ["BrokerLeaderAndIsr"]


@pytest.mark.long_run
def test_m13_rule_z3_and_property_drift_together_caught_by_the_property_agreement(monkeypatch):
    """The same, with the z3 property weakened to match: prove says proved, conformance's forward and reverse
    directions pass; the z3 property no longer agrees with its explicit invariant."""
    monkeypatch.setitem(system.VARIANTS, "kip112", system.may_create_legacy)
    _weakened(monkeypatch, "no_recreate_with_bad_dir")
    m = explicit_mutant(may_create_log=lambda broker, is_new: True)
    assert induction.prove("no_recreate_with_bad_dir", "kip112")["result"] == "proved"
    report = conformance.check(m, "tiny", max_states=PREFIX, beyond=0)
    assert report.forward_offences == () and report.reverse_unmatched == ()
    assert {d[0] for d in report.property_disagreements} == {"no_recreate_with_bad_dir"}


# ---- 14-16: encodings that agree with their statements on every reachable state (issue 41) ----------------------
def _live_copy_as_any_copy(u, s, b, p):
    return u.exists([u.D], lambda d: s.copy(b, p, d))


def test_m14_serving_property_and_its_lemma_weakened_to_a_copy_on_any_dir(monkeypatch):
    """no_serving_from_offline_dir and hosted_replicas_have_a_live_copy say "a copy on a live dir"; encoded as "a
    copy on any dir" both are still proved, and they agree with their statements on every reachable state (the
    protocol never serves a replica whose only copies are on offline dirs): only the states beyond the reachable
    ones tell them apart."""
    serving = PROPERTIES["no_serving_from_offline_dir"]
    monkeypatch.setitem(PROPERTIES, serving.id, serving._replace(formula=lambda u, s: u.forall(
        [u.B, u.P], lambda b, p: z3.Implies(system.serving(s.hosted(b, p)), _live_copy_as_any_copy(u, s, b, p)))))
    lemma = LEMMAS["hosted_replicas_have_a_live_copy"]
    monkeypatch.setitem(LEMMAS, lemma.id, lemma._replace(formula=lambda u, s: u.forall([u.B, u.P], lambda b, p: z3.Implies(
        z3.Or(*(s.hosted(b, p) == h for h in (system.H_LEADER, system.H_FOLLOWER, system.H_STOPPED))),
        _live_copy_as_any_copy(u, s, b, p)))))
    assert induction.prove(serving.id, "kip112")["result"] == "proved"       # prove is fooled
    # (the relations are untouched, so the reverse direction has nothing to say: left out, for time)
    report = conformance.check(build_model(preset_config("tiny")), "tiny", reverse=False, max_states=PREFIX)
    assert report.forward_offences == ()
    assert report.property_disagreements == ()     # so is every state of the prefix (and of the whole of tiny)
    assert not report.ok and not report.beyond.ok
    caught = {ident for ident, _, explicit_holds, z3_holds in report.beyond.disagreements}
    assert caught == {serving.id, lemma.id}
    assert all(explicit_holds is False and z3_holds is True
               for _, _, explicit_holds, z3_holds in report.beyond.disagreements)


@pytest.mark.parametrize("variant", ["kip112", "kip112-no-isnew-check"])
@pytest.mark.long_run(ids=["kip112-no-isnew-check"])
def test_m15_recreation_over_an_offline_copy_encoded_as_true(monkeypatch, variant):
    """The z3 no_recreate_over_offline_copy weakened to true: tiny's reachable states tell nothing under kip112
    (the explicit model never re-creates there); the states beyond them do, under both variants."""
    _weakened(monkeypatch, "no_recreate_over_offline_copy")
    report = conformance.check(build_model(preset_config("tiny", variant=variant)), "tiny", reverse=False,
                               max_states=PREFIX)
    assert {ident for ident, *_ in report.beyond.disagreements} == {"no_recreate_over_offline_copy"}
    assert not report.ok


def test_m16_the_explicit_side_is_the_invariant_itself_whichever_design_claims_it():
    """kip112 does not claim no_recreate_over_offline_copy (kip112-draft-created and kraft-core do): its claimed
    wrapper holds on a kip112 model whatever happens; the conformance check evaluates the invariant itself, so a
    re-creation over an offline copy in the explicit model is reported as the explicit model's."""
    from explorer.catalog import builtin_invariants
    from proofs import explicit

    m = explicit_mutant(symmetry=True, may_create_log=lambda broker, is_new: True)
    state, action, after = _a_recreation_over_an_offline_copy(m)
    claimed = next(i for i in builtin_invariants() if i.id == "no_recreate_over_offline_copy")
    assert claimed.check(m, state, action, after) is None                     # the blind spot
    assert explicit.PROPERTIES["no_recreate_over_offline_copy"].check(m, state, action, after)
    report = conformance.check(m, "tiny", reverse=False, max_states=PREFIX, beyond=0)
    assert "no_recreate_over_offline_copy" in report.explicit_violations
    assert "the explicit model itself breaks no_recreate_over_offline_copy" in "\n".join(conformance.render(report))


def _a_recreation_over_an_offline_copy(m):
    for state, succ in conformance.transitions(m, PREFIX):
        for action, after in succ:
            if no_recreate_over_offline_copy(m, state, action, after):
                return state, action, after
    raise AssertionError("no re-creation over an offline copy in the prefix")


def test_m17_bmc_runs_the_vacuity_check_too(monkeypatch):
    """A contradictory z3 action: BMC alone finds "no violation up to depth 5"; prove --bmc says it is vacuous."""
    monkeypatch.setitem(system.RELATIONS, "BrokerLeaderAndIsr",
                        relation_with("BrokerLeaderAndIsr", ("planted: false", lambda *_: z3.BoolVal(False))))
    from proofs.bmc import bmc
    assert bmc("no_recreate_with_bad_dir", "legacy", 2, 2, 1, 5)["result"] == "no violation"   # fooled
    run = CliRunner().invoke(prove_command, ["--bmc", "5", "--variant", "legacy", "--property",
                                             "no_recreate_with_bad_dir", "--no-conformance"], standalone_mode=False)
    assert run.return_value == 1, run.output
    assert "BrokerLeaderAndIsr               NEVER ENABLED" in run.output
    assert "action BrokerLeaderAndIsr never enabled (vacuous)" in run.output.splitlines()[-1]
