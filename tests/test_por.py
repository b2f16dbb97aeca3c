"""Partial-order reduction (explorer/por.py): the stubborn sets' conditions, and the same verdicts, violated
invariants and quiescent states with and without --por."""
from __future__ import annotations

import pytest

from explorer.por import Reduction, reduction_for
from explorer.core import rebuild_trace
from explorer.search import SearchOptions, explore
from model import Model
from model.presets import preset_config


def _enabled_mask(model, state) -> int:
    return sum(1 << pos for pos, (_, guard, _, args) in enumerate(model._space) if guard(model, state, *args) is None)


def test_ample_sets_satisfy_c0_c1_c2_on_sampled_states():
    from tests.test_footprints import sample_states

    model = Model(preset_config("tiny", eager_metadata=False), invariants=["offline_broker_serves_nothing"])
    reduction = Reduction(model, model.invariants)
    dependent = reduction.footprints.dependent
    for state in sample_states(model, bfs=150, walks=4):
        enabled = _enabled_mask(model, state)
        ample = reduction.ample_mask(enabled) if enabled else None
        if ample is None:
            continue
        assert ample and ample & ~enabled == 0 and ample != enabled          # C0: a proper, non-empty subset
        assert ample & reduction.visible == 0                                # C2: invisible
        for a in range(len(dependent)):
            if ample >> a & 1:
                assert dependent[a] & enabled & ~ample == 0                  # C1: no enabled dependent outside


def test_the_stubborn_set_closure_on_a_hand_made_dependency():
    model = Model(preset_config("tiny"), invariants=["offline_broker_serves_nothing"])
    reduction = Reduction(model, model.invariants)
    fp = reduction.footprints
    # actions 0, 1, 2: 0 and 2 dependent, 1 independent of both; 3 disabled, enabled only by 2
    fp.dependent = [0b101, 0b010, 0b101, 0b1000] + [0] * (len(fp.dependent) - 4)
    fp.enablers = [0, 0, 0, 0b100] + [0] * (len(fp.enablers) - 4)
    reduction.visible, reduction._ample = 0, {}
    assert reduction.ample_mask(0b111) == 0b010                              # the smallest: {1}
    reduction.visible, reduction._ample = 0b010, {}
    assert reduction.ample_mask(0b111) == 0b101                              # 1 visible: {0, 2}
    reduction.visible, reduction._ample = 0b111, {}
    assert reduction.ample_mask(0b111) is None                               # all visible: full expansion
    fp.dependent[1] = 0b1010                                                 # 1 depends on the disabled 3,
    reduction.visible, reduction._ample = 0b101, {}                          # which 2 enables: {1, 2} is
    assert reduction.ample_mask(0b111) is None                               # visible, so full


def test_por_is_off_with_a_reason_where_it_is_unsound_or_useless():
    model = Model(preset_config("tiny"))
    assert reduction_for(model, model.invariants, SearchOptions(por=True, max_depth=5))[1].startswith("--max-depth")
    assert reduction_for(model, model.invariants, SearchOptions(por=True, workers=2))[1].startswith("--workers")
    assert "every action is visible" in reduction_for(model, model.invariants, SearchOptions(por=True))[1]
    assert reduction_for(model, model.invariants, SearchOptions(por=False)) == (None, None)


@pytest.mark.parametrize("preset,overrides,invariants", [
    ("tiny", {"variant": "legacy"}, None),
    ("tiny", {"variant": "legacy", "eager_metadata": False}, ["offline_broker_serves_nothing",
                                                               "no_serving_from_offline_dir"]),
    ("reassignment-race", {}, ["offline_broker_serves_nothing"]),
])
@pytest.mark.parametrize("engine", ["bfs", "dfs"])
def test_same_verdict_and_violations_with_and_without_por(preset, overrides, invariants, engine):
    results = {}
    for por in (False, True):
        model = Model(preset_config(preset, **overrides), invariants=invariants)
        results[por] = explore(engine, model, model.invariants,
                               SearchOptions(por=por, all_violations=True, max_states=1500))
        for v in results[por].violations:                    # every counterexample is a real trace
            replayed = rebuild_trace(model, [a for a, _ in v.trace[1:]])   # raises if a step is not enabled
            assert model.fingerprint(replayed[-1][1]) == model.fingerprint(v.trace[-1][1])
    full, reduced = results[False], results[True]
    assert reduced.por["used"] or reduced.por["note"]
    assert reduced.result == full.result
    assert {v.invariant.id for v in reduced.violations} == {v.invariant.id for v in full.violations}
    if not reduced.por["used"] or reduced.por["reduced_states"] == 0:
        assert (reduced.distinct_states, reduced.states_generated) == (full.distinct_states, full.states_generated)
