"""KRaft mode's features explored two by two (combinations are where models break): each pair builds, both
features' rules are in the model, a bounded breadth-first search runs without a checker failure, and every
violation it reports is a real trace (replayed with the model's own steps)."""
from __future__ import annotations


import pytest

from explorer.catalog import build_model
from explorer.search import SearchOptions, bfs
from model.spec.engine import rebuild_trace
from support.kraft_pairs import PAIRS, TURN_ON, pair_config

# kraft-saturation brings hooks, no rule: its rules are storage's KIP-928 feature's; kraft-elr replaces kraft-core's.
RULES_OF = {"kraft-saturation": "saturation"}
REPLACED = {"kraft-elr": {"BrokerRestart", "ReplaceDisk", "BrokerRegister"}}


@pytest.mark.parametrize("a,b", PAIRS, ids=[f"{a}+{b}" for a, b in PAIRS])
def test_two_kraft_features_explore_together(a, b):
    _explore_together(build_model(pair_config(a, b)), a, b)


# Reassignment with the data path (issue 45; deletion stays without records): with each other feature.
DATA_PAIRS = [other for other in TURN_ON if other not in ("kraft-reassignment", "kraft-deletion")]


@pytest.mark.parametrize("other", DATA_PAIRS)
@pytest.mark.long_run
def test_reassignment_with_records_explores_with_each_other_feature(other):
    model = build_model(pair_config("kraft-reassignment", other, max_records=1))
    fired = _explore_together(model, "kraft-reassignment", other, max_states=30_000)
    assert "ReplicaFetch" in fired and "ReplicaCatchUp" not in fired


def _explore_together(model, a: str, b: str, max_states: int = 8_000) -> set:
    assert model.has_feature(a) and model.has_feature(b)
    result = bfs(model, list(model.invariants), SearchOptions(all_violations=True, max_states=max_states))
    assert result.result in ("ok", "violation", "bounded"), result.note
    fired = {name for name, n in result.coverage.items() if n}
    for name in (a, b):   # each feature's own rules take part (at least one fires within the bound)
        feature = next(f for f in model.features if f.name == RULES_OF.get(name, name))
        assert fired & ({r.name for r in feature.rules} | REPLACED.get(name, set())), f"no rule of {name} fired"
    for v in result.violations:
        replayed = rebuild_trace(model, [action for action, _ in v.trace[1:]])
        assert model.fingerprint(replayed[-1][1]) == model.fingerprint(v.trace[-1][1])
    return fired
