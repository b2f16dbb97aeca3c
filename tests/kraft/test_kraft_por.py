"""Partial-order reduction on KRaft mode (docs/kraft.md, "Departures": footprints): storage's hooks declare the
controller mode's own footprints (model/storage/mode.py), the footprint checker finds no undeclared read or write
on KRaft's reachable states and catches a planted one, and ``--por`` keeps every verdict and violated invariant."""
from __future__ import annotations

import pytest

from explorer.catalog import build_model, preset_config
from explorer.por import reduction_for
from explorer.search import SearchOptions, explore
from model.kraft import rules as kraft_rules
from model.spec.engine import rebuild_trace
from model.spec.footprint import Components, FootprintError, Footprints

from support.footprints import footprint_violations, sample_states
from support.helpers import config_ids, kraft_configs
from support.profiles import THOROUGH

# (preset, overrides): exhausted in seconds; with the bug switch one fault is enough for a violation (the
# KAFKA-16234 scenario's path); the data path without faults. The presets themselves under the thorough profile.
CONFIGS = kraft_configs(THOROUGH)



@pytest.fixture(scope="module")
def kraft_states():
    out = {}
    for preset in ("kraft-tiny-faults", "kraft-tiny"):
        model = build_model(preset_config(preset))
        out[preset] = sample_states(model, bfs=300, walks=20, depth=40)
    return out


# ---- the hooks' footprints are the mode's --------------------------------------------------------------------------

def _action(model, name, args):
    return next(pos for pos, (_, r, a) in enumerate(model.action_space) if r.name == name and a == args)


def test_storage_rules_get_each_modes_hook_footprints():
    zk, kraft = build_model(preset_config("tiny")), build_model(preset_config("kraft-tiny"))
    zfp, kfp = Footprints(zk), Footprints(kraft)
    zc, kc = zfp.components, kfp.components
    fail = _action(zk, "DirFail", (1, 0))
    assert "notifications" in zc.describe(zfp.writes[fail])
    fail = _action(kraft, "DirFail", (1, 0))
    assert "broker[1].failed" in kc.describe(kfp.writes[fail])
    assert not any(n.startswith("broker[0]") for n in kc.describe(kfp.writes[fail]))
    restart = _action(zk, "BrokerRestart", (0,))
    assert "controller.live" in zc.describe(zfp.reads[restart])
    restart = _action(kraft, "BrokerRestart", (0,))
    assert "controller.registrations" in kc.describe(kfp.reads[restart])
    assert "controller.log" not in kc.describe(kfp.writes[restart])
    shrink = _action(kraft, "LeaderShrinkIsr", (0, 1))
    assert {"controller.log", "controller.partitions"} <= set(kc.describe(kfp.writes[shrink]))
    assert {"controller.log", "broker[0].applied", "broker[1].applied"} <= set(kc.describe(kfp.reads[shrink]))


def test_a_hook_reference_is_checked_against_the_model():
    model = build_model(preset_config("kraft-tiny-faults"))
    comps = Components.of(model)
    with pytest.raises(FootprintError, match="no hook 'nothing'"):
        comps.mask(("@nothing.reads",))
    with pytest.raises(FootprintError, match="no parameter 'broker'"):    # dir_event's pattern names its broker
        comps.mask(("@dir_event.writes",), ("partition",), (0,))
    hooks = dict(comps.hooks)
    hooks["restart_blocked", "reads"] = ("controller.live",)           # ZooKeeper's field: not in KRaft's state
    other = Components(comps.schema, comps.members, comps.ext_names, hooks)
    with pytest.raises(FootprintError, match="no field 'live'"):
        other.mask(("@restart_blocked.reads",), ("broker",), (0,))
    assert Components(comps.schema, comps.members, comps.ext_names).mask(("@dir_event.reads",)) == comps.all


# ---- the checker on KRaft's states ---------------------------------------------------------------------------------

@pytest.mark.parametrize("preset", ["kraft-tiny-faults", "kraft-tiny"])
@pytest.mark.long_run(ids=["kraft-tiny-faults"])
def test_kraft_rules_stay_within_their_declared_footprints(preset, kraft_states):
    model = build_model(preset_config(preset))
    assert footprint_violations(model, kraft_states[preset]) == []


@pytest.mark.parametrize("hook,declaration,preset,expected", [
    # BrokerRestart's guard asks restart_blocked, which reads the registrations.
    ("restart_blocked", {"reads": (), "writes": ()}, "kraft-tiny-faults", "BrokerRestart: guard reads outside guard_reads"),
    # An AlterPartition appends a PartitionChange to the metadata log.
    ("isr_written", {"reads": ("controller",), "writes": ("controller.partitions",)}, "kraft-tiny",
     "writes controller.log, not declared"),
    # The leader's own image (its applied offset) decides whether the controller accepts its AlterPartition.
    ("isr_writer", {"reads": ("controller.partitions", "broker[*].up", "broker[*].hosted", "broker[*].epoch"),
                    "writes": ()}, "kraft-tiny", "reads outside"),
])
def test_the_checker_catches_a_kraft_hook_declaring_too_little(hook, declaration, preset, expected, kraft_states,
                                                               monkeypatch):
    monkeypatch.setattr(getattr(kraft_rules, hook), "footprint", declaration)
    model = build_model(preset_config(preset))
    found = footprint_violations(model, kraft_states[preset])
    assert any(expected in problem for problem in found), found


# ---- --por keeps the verdicts --------------------------------------------------------------------------------------

def test_por_is_used_on_kraft_unless_the_quiescence_condition_leaves_no_stubborn_set():
    model = build_model(preset_config("kraft-tiny-faults"))
    without_quiescent = [i for i in model.invariants if i.kind != "quiescent"]
    reduction, note = reduction_for(model, without_quiescent, SearchOptions(por=True))
    assert note is None and reduction is not None and not reduction.quiescence
    # kraft-core's quiescent invariants need C2q, and every action that needs a message is visible to its
    # transition invariants: POR says it is off rather than reduce unsoundly (docs/kraft.md, "Departures").
    reduction, note = reduction_for(model, model.invariants, SearchOptions(por=True))
    assert reduction is None and "POR is off" in note


@pytest.mark.parametrize("preset,overrides", CONFIGS, ids=config_ids(CONFIGS))
def test_same_verdict_and_violated_invariants_with_and_without_por(preset, overrides):
    results = {}
    for por_on in (False, True):
        model = build_model(preset_config(preset, **overrides))
        # Without kraft-core's quiescent invariants: with them POR is off (the test above).
        invariants = [i for i in model.invariants if i.kind != "quiescent"]
        results[por_on] = explore("bfs", model, invariants, SearchOptions(por=por_on, all_violations=True))
        for v in results[por_on].violations:                  # every counterexample is a real trace
            replayed = rebuild_trace(model, [a for a, _ in v.trace[1:]])
            assert model.fingerprint(replayed[-1][1]) == model.fingerprint(v.trace[-1][1])
    full, reduced = results[False], results[True]
    assert reduced.por["used"]
    assert full.result in ("ok", "violation") and reduced.result == full.result
    assert {v.invariant.id for v in reduced.violations} == {v.invariant.id for v in full.violations}
    assert reduced.distinct_states <= full.distinct_states
