"""Two candidate fixes together (docs/fixes.md, "Together, and with the KRaft features"): no violation emerges from
the composition. Every pair of fixes the configuration takes is explored exhaustively (BFS, every violated
invariant with its shortest trace), and each violation's steps, replayed with one of the two fixes alone, violate
the same invariant there: the pair breaks nothing that neither fix breaks alone along the same steps.

The ci profile runs the pairs of kraft-core's fixes on two configurations of seconds; the thorough profile adds the
pairs with a fix of a feature (kraft-future's, kraft-reassignment's) on those features' configurations (minutes).
Each fix with the KRaft features: tests/kraft/test_fixes.py (every recommended fix with every pair of features)."""
from __future__ import annotations

import itertools

import pytest

from explorer.catalog import build_model, preset_config
from explorer.search import SearchOptions, bfs
from model import ActionDisabled
from model.kraft.fixes import FIXES, FIXES_OPTION
from model.spec.engine import Checker

from support.profiles import profile_name

# (preset, parameters over it, whether a pair needs a fix of the configuration's feature, thorough only)
CONFIGS = (
    ("kraft-tiny-faults", {"brokers": 1, "rf": 1, "max_records": 1}, False, False),
    ("kraft-session-expiry", {"brokers": 1, "rf": 1}, False, False),
    ("kraft-future", {}, True, True),
    ("kraft-reassignment-move", {}, True, True),
)


def _model(preset: str, params: dict, fixes: tuple):
    options = {FIXES_OPTION: list(fixes)} if fixes else {}
    return build_model(preset_config(preset, **params, **({"options": options} if options else {})))


def _pairs():
    for preset, params, feature_fix, thorough in CONFIGS:
        if thorough and profile_name() != "thorough":
            continue
        included = {f.name for f in _model(preset, params, ()).features}
        fixes = [f for f in FIXES if FIXES[f].feature is None or FIXES[f].feature in included]
        for a, b in itertools.combinations(fixes, 2):
            if not feature_fix or FIXES[a].feature or FIXES[b].feature:
                yield preset, params, a, b


PAIRS = list(_pairs())


def violates_along(model, steps: list, invariant_id: str) -> bool:
    """Whether the steps (rule name, args), taken from the initial state as far as they are enabled, break the
    invariant."""
    checker = Checker(model, [i for i in model.invariants if i.id == invariant_id])
    state = model.init_states()[0]
    if checker.check_state(state):
        return True
    for name, args in steps:
        try:
            action, after = model.step(state, name, args)
        except ActionDisabled:
            return False
        if checker.check_transition(state, action, after) or checker.check_state(after):
            return True
        state = after
    return False


@pytest.mark.parametrize("preset,params,a,b", PAIRS, ids=[f"{p}{'-' if q else ''}{'-'.join(map(str, q.values()))}:"
                                                          f"{a}+{b}" for p, q, a, b in PAIRS])
def test_two_fixes_together_break_nothing_that_neither_breaks_alone(preset, params, a, b):
    model = _model(preset, params, (a, b))
    result = bfs(model, list(model.invariants), SearchOptions(all_violations=True))
    assert result.result in ("ok", "violation"), result.note
    for v in result.violations:
        steps = [(model.rules[action.rule].name, action.args) for action, _ in v.trace[1:]]
        alone = [f for f in (a, b) if violates_along(_model(preset, params, (f,)), steps, v.invariant.id)]
        assert alone, (f"{a} + {b} on {preset} {params}: {v.invariant.id} in {len(steps)} steps, which neither fix "
                       f"alone breaks along them: {steps}")


def test_the_check_notices_a_violation_that_only_the_pair_has():
    """A planted emergent violation: the trace of finding 1's loss without a fix, checked against two fixes that
    each remove it, is found by neither (the check is not vacuous)."""
    preset, params = "kraft-tiny-faults", {"brokers": 1, "rf": 1, "max_records": 1}
    model = _model(preset, params, ())
    result = bfs(model, list(model.invariants), SearchOptions(all_violations=True))
    loss = next(v for v in result.violations if v.invariant.id == "no_acked_record_lost")
    steps = [(model.rules[action.rule].name, action.args) for action, _ in loss.trace[1:]]
    assert violates_along(model, steps, "no_acked_record_lost")
    assert not violates_along(_model(preset, params, ("assign-lost-at-start-up",)), steps, "no_acked_record_lost")
    assert not violates_along(_model(preset, params, ("gate2-strict",)), steps, "no_acked_record_lost")
