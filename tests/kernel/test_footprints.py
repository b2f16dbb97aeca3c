"""Every rule's declared read and write sets (model/spec/footprint.py) against its behaviour on sampled reachable
states: the first states of a BFS and the states of seeded random walks, for every design and feature."""
from __future__ import annotations

import pytest

from explorer.catalog import features as catalog
from model.spec.footprint import (Components, FootprintError, Footprints, check_declaration, read_violations,
                                  transition_read_violations)
from explorer.catalog import preset_config
from model.storage.state import B_FAILOVERS

from support.footprints import FOOTPRINT_CONFIGS as CONFIGS, footprint_violations, sample_states, with_declaration
from support.profiles import THOROUGH
from explorer.catalog import build_model


# How many states each declaration is checked on: the first of a BFS, then random walks (docs/testing.md).
SAMPLING = dict(bfs=400, walks=30) if THOROUGH else dict(bfs=50, walks=3)
# kip46-heal: a self-healing reassignment runs only after a failure, its timer and a task (deep in a walk), and
# ControllerBrokerStartup's read of ext.heal_moves shows only while one runs: more and deeper walks.
SAMPLING_FOR = {} if THOROUGH else {"kip46-heal": dict(bfs=50, walks=15, depth=40)}


@pytest.mark.parametrize("preset,overrides", CONFIGS, ids=[f"{p}-{'-'.join(map(str, o.values())) or 'default'}"
                                                          for p, o in CONFIGS])
def test_rules_stay_within_their_declared_footprints(preset, overrides):
    model = build_model(preset_config(preset, **overrides))
    assert footprint_violations(model, sample_states(model, **SAMPLING_FOR.get(preset, SAMPLING))) == []


def test_every_built_in_rule_declares_its_footprint():
    undeclared = sorted({r.name for f in catalog() for r in list(f.rules) + list(f.replaces.values())
                         if r.reads is None or r.writes is None})
    assert undeclared == []


@pytest.fixture(scope="module")
def tiny_states():
    return sample_states(build_model(preset_config("tiny")), bfs=400, walks=4)


@pytest.mark.parametrize("name,declaration,expected", [
    ("BrokerCrash", {"writes": ("budget",)}, "BrokerCrash: writes broker[0].up, not declared"),
    ("BrokerLeaderAndIsr", {"reads": ("broker[broker]",)}, "BrokerLeaderAndIsr: effect reads outside reads"),
    ("ControllerBrokerStartup", {"reads": ("controller",)}, "ControllerBrokerStartup: effect reads outside reads"),
    ("DirFail", {"guard_reads": ("broker[broker].dirs",)}, "DirFail: guard reads outside guard_reads"),
    ("DirFail", {"needs_message": True}, "DirFail: needs_message, but enabled in a quiescent state"),
    ("BrokerCrash", {"spends": B_FAILOVERS}, "BrokerCrash: enabled with the budget it spends used up"),
    ("ReplicaFetch", {"footprint_at": lambda m, s, broker, partition: (
        ("broker[*]", "controller", "committed", "acked"), (f"broker[{broker}].logs", "committed", "acked"))},
     "ReplicaFetch: writes broker[0].hw, not in footprint_at"),
    ("LeaderShrinkIsr", {"footprint_at": lambda m, s, partition, follower: (
        ("controller.partitions", f"broker[{1 - follower}].isr"), ("broker[*]", "controller", "committed", "acked"))},
     "LeaderShrinkIsr: guard reads outside reads (footprint_at)"),
    ("BrokerLeaderAndIsr", {"appends": ("broker[broker].inbox",)},
     "BrokerLeaderAndIsr: appends: rewrites broker[0].inbox instead of appending to it"),
    ("DirFail", {"appends": ("broker[*].inbox",)}, "DirFail: appends names components outside its writes"),
])
def test_the_checker_catches_a_wrong_declaration(name, declaration, expected, tiny_states):
    model = with_declaration(build_model(preset_config("tiny")), name, **declaration)
    problems = footprint_violations(model, tiny_states, rules=(name,))
    assert any(p.startswith(expected) for p in problems), problems


def test_an_undeclared_rule_reads_and_writes_everything():
    model = with_declaration(build_model(preset_config("tiny")), "Consume", reads=None, writes=None)
    fp = Footprints(model)
    consume = [i for i, (_, r, _) in enumerate(model.action_space) if r.name == "Consume"]
    assert consume and all(fp.writes[i] == fp.components.all for i in consume)
    assert all(fp.dependent[i] == (1 << len(model.action_space)) - 1 for i in consume)


def test_parameterised_patterns_resolve_per_action():
    model = build_model(preset_config("tiny"))
    c = Components(model.schema, 2, ("created",))
    assert c.describe(c.mask(("broker[broker].inbox",), ("broker",), (1,))) == ["broker[1].inbox"]
    assert c.describe(c.mask(("broker[*].up", "ext.created", "wiped"))) == [
        "broker[0].up", "broker[1].up", "wiped", "ext.created"]
    for bad in ("broker[dir].inbox", "broker[broker].nothing", "controller.nothing", "histories"):
        with pytest.raises(FootprintError):
            check_declaration((bad,), ("broker",), (), model.schema)
    for bad in ("broker[dir].inbox", "broker[", "a.b.c"):     # form and parameters, before a schema is composed
        with pytest.raises(FootprintError):
            check_declaration((bad,), ("broker",))


# (preset, overrides) where each built-in state invariant with declared reads has something to look at.
INVARIANT_CONFIGS = [("tiny", {}), ("tiny", {"variant": "legacy"}), ("saturation", {}), ("deletion", {}), ("kip46-heal", {})]


@pytest.mark.parametrize("preset,overrides", INVARIANT_CONFIGS, ids=[p + "-" + "-".join(o.values()) for p, o in
                                                                     INVARIANT_CONFIGS])
def test_state_invariants_read_only_what_they_declare(preset, overrides):
    model = build_model(preset_config(preset, **overrides))
    states = sample_states(model, **SAMPLING)
    checked = [inv for inv in model.invariants if inv.kind == "state" and inv.reads is not None]
    assert checked
    assert {inv.id: read_violations(model, inv.check, inv.reads, states, donors_per_state=3)
            for inv in checked} == {inv.id: [] for inv in checked}


@pytest.mark.parametrize("inv_id,too_narrow", [
    ("no_acked_record_lost", ("broker[*].up", "broker[*].hosted", "broker[*].epoch", "controller.partitions",
                              "controller.deletion", "committed", "acked", "wiped")),       # not the logs
    ("offline_broker_serves_nothing", ("broker[*].hosted",)),                               # not up
])
def test_the_read_checker_catches_a_too_narrow_invariant_declaration(inv_id, too_narrow):
    model = build_model(preset_config("tiny", variant="legacy"))
    check = next(inv.check for inv in model.invariants if inv.id == inv_id)
    assert read_violations(model, check, too_narrow, sample_states(model, bfs=300, walks=20, depth=40),
                           donors_per_state=4)


@pytest.mark.parametrize("preset,overrides", INVARIANT_CONFIGS, ids=[p + "-" + "-".join(o.values()) for p, o in
                                                                     INVARIANT_CONFIGS])
def test_transition_invariants_compare_only_what_they_declare(preset, overrides):
    """Partial-order reduction takes a transition invariant's reads as all it compares (an action that writes
    none of them passes it): swapping everything else, before and after the step, never changes its verdict."""
    model = build_model(preset_config(preset, **overrides))
    states = sample_states(model, **SAMPLING)
    checked = [inv for inv in model.invariants if inv.kind == "transition" and inv.reads is not None]
    assert checked
    assert {inv.id: transition_read_violations(model, inv.check, inv.reads, states[:60])
            for inv in checked} == {inv.id: [] for inv in checked}


def test_a_transition_invariant_reading_outside_its_declaration_is_caught():
    model = build_model(preset_config("tiny"))

    def broker_zero_stays_up(model, state, action, after):
        return "broker 0 went down" if state.brokers[0].up and not after.brokers[0].up else None

    states = sample_states(model, **SAMPLING)
    assert transition_read_violations(model, broker_zero_stays_up, ("controller",), states[:60], donors_per_state=4)
    assert transition_read_violations(model, broker_zero_stays_up, ("broker[*].up",), states[:60]) == []
