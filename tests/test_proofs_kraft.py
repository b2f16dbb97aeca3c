"""jbodcheck prove --variant kraft (docs/proofs.md, "KRaft"): the z3 model of the KRaft controller, its proofs for
every cluster size, the counterexamples to induction of the properties it does not prove, planted bugs the
proofs and the conformance check notice, and the conformance check against the explicit model."""
from __future__ import annotations

import json

import pytest

from explorer.catalog import build_model
from model import ModelConfig
from model.kraft.metadata import LOST, UNASSIGNED
from model.storage.state import NO_LEADER
from proofs import kraft_conformance, kraft_induction, kraft_reverse
from proofs.kraft_properties import PROPERTIES
from profiles import THOROUGH

from helpers import in_process, run_labels

PROVED = ("kraft_isr_within_replicas", "kraft_directories_never_lost", "kraft_epochs_monotone")
NOT_PROVED = ("kraft_leader_passes_leader_acceptor", "kraft_leader_in_isr_or_none")
# kraft-tiny-faults' cluster (2 brokers x 2 dirs, 1 partition, RF 2, no record) with one fault and no repair.
CORE = dict(variant="kraft", brokers=2, dirs=2, partitions=1, rf=2, max_dir_failures=1, max_saturations=0,
            max_crashes=1, max_restarts=1, max_fixes=0, max_failovers=0, max_records=0, consumer=False,
            max_faults=1, options={"kafka": "3.9"})  # the z3 model follows Kafka 3.9's controller (no ELR)


def model(**overrides):
    return build_model(ModelConfig(**{**CORE, **overrides}))


def failing_actions(result) -> set:
    return {c["action"] for c in result["checks"] if c["result"] != "proved"}


@pytest.mark.parametrize("prop", PROVED)
def test_each_proved_property_is_inductive_for_every_cluster_size(prop):
    result = kraft_induction.prove(prop)
    assert result["result"] == "proved", kraft_induction.render(result)
    assert {c["action"] for c in result["checks"]} >= {"initiation", "BrokerHeartbeat", "AlterPartition"}


def test_the_leader_properties_are_not_proved_and_their_ctis_name_the_steps_that_break_the_lemmas():
    # The result, not a wish: a leaderless partition whose ISR member becomes acceptable after an
    # AssignReplicasToDirs (no election then), and an AlterPartition that adds a fenced broker to a shared ISR.
    for prop in NOT_PROVED:
        result = kraft_induction.prove(prop)
        assert result["result"] == "not proved"
        assert failing_actions(result) == {"ControllerAssignReplicasToDirs", "AlterPartition"}, prop
        text = "\n".join(kraft_induction.render(result))
        assert "pre-state:" in text and "action: AlterPartition(partition=0)" in text


@pytest.mark.parametrize("mutation, prop, action", [
    ("alter-isr-any-broker", "kraft_isr_within_replicas", "AlterPartition"),
    ("create-dir-lost", "kraft_directories_never_lost", "CreateTopic"),
    ("leader-epoch-kept", "kraft_epochs_monotone", "BrokerHeartbeat"),
])
def test_a_bug_planted_in_the_z3_relation_breaks_the_proof_at_its_action(mutation, prop, action):
    result = kraft_induction.prove(prop, mutation=mutation)
    assert result["result"] == "not proved"
    assert action in failing_actions(result)


def test_every_explicit_transition_conforms_and_every_property_agrees_with_its_invariant():
    fired, compared, disabled = set(), set(), set()
    for m in (model(), model(max_records=1, consumer=True, max_faults=0)):
        result = kraft_conformance.check(m)
        assert result["offences"] == [] and result["result"] == "ok"
        assert result["states"] > 0 and result["abstract_triples"] > 0
        fired |= set(result["actions_fired"])
        compared |= set(result["reverse"]["compared"])
        disabled |= set(result["reverse"]["disabled_checked"])
    # Every z3 action stood for some explicit step across the two configurations, and the reverse direction
    # compared every action it pins with explicit steps.
    assert fired == set(kraft_conformance.ACTION_BY_NAME)
    assert compared == set(kraft_reverse.PINS)
    # ... and found every action but AlterPartition (nothing to pin there) disabled somewhere, as z3 had it.
    assert disabled == set(kraft_reverse.PINS) - {"AlterPartition"}


def test_a_z3_alter_partition_that_may_also_write_nothing_is_noticed_by_the_reverse_check_only():
    m = model(max_records=1, consumer=True, max_faults=0)
    mutation = "alter-isr-may-skip"
    for prop in PROVED:
        assert kraft_induction.prove(prop, mutation=mutation)["result"] == "proved"
    assert kraft_conformance.check(m, mutation=mutation, reverse=False)["offences"] == []
    result = kraft_conformance.check(m, mutation=mutation, max_offences=1)
    offence = result["offences"][0]
    assert offence["check"] == "reverse" and offence["action"] == "AlterPartition"
    # The successor no explicit ISR change has: the image left as it was.
    assert offence["post"] == kraft_reverse.view(offence["pre"])


@pytest.mark.parametrize("replicas", [(0, 1), (1, 0)])
def test_the_reverse_check_pins_an_election_to_the_first_valid_broker_in_replicas_order(replicas, monkeypatch):
    # A hand-made pre-state: a leaderless partition whose two ISR members both pass LeaderAcceptor once broker 0's
    # heartbeat unfences it; the z3 election may pick either, Kafka the first in Replicas order.
    pre = (((True, True, True, True, (0, 1)), (True, True, True, False, (0, 1))),
           ((True, replicas, 0b11, NO_LEADER, (UNASSIGNED, UNASSIGNED), 1, 1),))
    heartbeat = kraft_conformance.ACTION_BY_NAME["BrokerHeartbeat"]
    pin = kraft_reverse.heartbeat_pin(True, 0)
    posts = kraft_reverse.Reverse(model()).successors(heartbeat, (0,), pre, pin)
    assert [post[1][0][3] for post in posts] == [replicas[0]]
    monkeypatch.setattr(kraft_reverse.Reverse, "_election_pins", lambda self, witnesses, pre: [])
    posts = kraft_reverse.Reverse(model()).successors(heartbeat, (0,), pre, pin)
    assert sorted(post[1][0][3] for post in posts) == [0, 1]


def test_a_bug_planted_in_the_z3_heartbeat_is_an_explicit_transition_it_does_not_allow():
    result = kraft_conformance.check(model(), mutation="offline-keeps-isr", max_offences=1, reverse=False)
    assert result["result"] == "offences"
    offence = result["offences"][0]
    assert offence["check"] == "forward" and offence["rule"] == "BrokerHeartbeat"


def _reached(m, steps):
    return run_labels(m, steps)


@pytest.mark.parametrize("prop, broken", [
    ("kraft_isr_within_replicas", lambda p: p._replace(isr=0)),
    ("kraft_leader_in_isr_or_none", lambda p: p._replace(isr=1 << (1 - p.leader))),
    ("kraft_directories_never_lost", lambda p: p._replace(dirs=(LOST,) + p.dirs[1:])),
])
def test_each_state_property_and_its_invariant_both_break_on_a_hand_made_state(prop, broken):
    m = model()
    s = _reached(m, ["CreateTopic(partition=0)"])
    check = kraft_conformance.Check(m)
    for state, holds in ((s, True), (s._replace(controller=s.controller._replace(
            partitions=(broken(s.controller.partitions[0]),))), False)):
        key = kraft_conformance.abstract(m, state)
        assert (kraft_conformance.EXPLICIT[prop](m, state) is None) is holds
        assert check.state_property(PROPERTIES[prop], key) is holds


def test_cli_prove_kraft_exit_codes_and_json(capsys):
    code, out, err = in_process(capsys, "prove", "--variant", "kraft", "--property", "kraft_isr_within_replicas",
                                "--json", "-")
    assert code == 0, err
    report = json.loads(out)
    assert report["variant"] == "kraft" and report["result"] == "proved"
    assert [p["id"] for p in report["properties"]] == ["kraft_isr_within_replicas"]
    code, _, err = in_process(capsys, "prove", "--variant", "kraft", "--property", "kraft_leader_in_isr_or_none")
    assert code == 1 and "NOT PROVED: counterexample to induction" in err + _
    for bad in (["--property", "nope"], ["--bmc", "3"]):
        code, _, err = in_process(capsys, "prove", "--variant", "kraft", *bad)
        assert code == 2 and len(err.strip().splitlines()) == 1, err


@pytest.mark.skipif(not THOROUGH, reason="kraft-tiny-faults' whole space: the thorough profile (docs/testing.md)")
def test_every_transition_of_the_two_fault_configuration_conforms():
    result = kraft_conformance.check(model(max_faults=2, max_fixes=1))
    assert result["offences"] == [] and result["result"] == "ok"
    # No record here, so no ISR change: the reverse direction compares every other action it pins.
    assert set(result["reverse"]["compared"]) == set(kraft_reverse.PINS) - {"AlterPartition"}


def test_the_leaderless_lemma_fails_on_a_reachable_explicit_state_as_its_cti_says():
    # docs/proofs.md 9.2: 1 broker x 2 dirs, RF 1; a dir failure, a crash, the failed dir removed from the
    # configuration, a restart: the assignment to the remaining dir leaves the partition leaderless although its
    # only ISR member passes LeaderAcceptor (the election read the old Directories entry).
    m = model(brokers=1, rf=1, max_fixes=1, max_faults=3)
    s = run_labels(m, ["CreateTopic(partition=0)", "BrokerReplay(broker=0)", "DirFail(broker=0, dir=0)",
                       "BrokerSendAssignments(broker=0)", "ControllerAssignReplicasToDirs(broker=0)",
                       "BrokerCrash(broker=0)", "RemoveDirFromConfig(broker=0, dir=0)",
                       "ControllerFenceBroker(broker=0)", "BrokerRestart(broker=0)", "BrokerRegister(broker=0)",
                       "BrokerLoad(broker=0)", "BrokerHeartbeat(broker=0)", "BrokerSendAssignments(broker=0)",
                       "ControllerAssignReplicasToDirs(broker=0)"])
    part = s.controller.partitions[0]
    assert part.leader == -1 and part.isr == 1 and part.dirs == (1,)
    key = kraft_conformance.abstract(m, s)
    check = kraft_conformance.Check(m)
    assert not check.lemma("leaderless_unacceptable", key)
    assert all(check.state_property(PROPERTIES[p], key) for p in PROPERTIES if PROPERTIES[p].kind == "state")
