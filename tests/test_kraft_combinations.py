"""KRaft mode's features explored two by two (combinations are where models break): each pair builds, both
features' rules are in the model, a bounded breadth-first search runs without a checker failure, and every
violation it reports is a real trace (replayed with the model's own steps)."""
from __future__ import annotations

import itertools

import pytest

from explorer.catalog import build_model, preset_config
from explorer.search import SearchOptions, bfs
from model.spec.engine import rebuild_trace

# feature -> how a configuration turns it on (kraft-tiny-faults' cluster: no record, which deletion needs;
# reassignment with records has its own pairs below; mv-upgrade needs one dir per broker, so it has its own preset
# and is left out here).
TURN_ON = {
    "kraft-deletion": dict(deletion=True),
    "kraft-reassignment": dict(reassignment=True, rf=1),   # a broker outside the assignment to add
    "kraft-future": dict(options={"alter_log_dirs": 1}),
    "kraft-sessions": dict(options={"max_lost_heartbeats": 1, "max_session_expiries": 1}),
    "kraft-shutdown": dict(options={"max_controlled_shutdowns": 1}),
    "kraft-saturation": dict(saturation=True, saturation_recovery="restart", dir_capacity=2, max_saturations=1),
    # ELR is on at the default release (4.4); min ISR 2 makes a broker that leaves the ISR join the ELR (with min
    # ISR 1 it fills only when the ISR empties). The other pairs turn it off: each pair is two features.
    "kraft-elr": dict(min_isr=2),
}
# kraft-future with saturation is refused (a -future log takes no space: tests/test_kraft_future.py).
REFUSED = {("kraft-future", "kraft-saturation")}
PAIRS = [pair for pair in itertools.combinations(TURN_ON, 2) if pair not in REFUSED]
# kraft-saturation brings hooks, no rule: its rules are storage's KIP-928 feature's; kraft-elr replaces kraft-core's.
RULES_OF = {"kraft-saturation": "saturation"}
REPLACED = {"kraft-elr": {"BrokerRestart", "ReplaceDisk", "BrokerRegister"}}


def _config(a: str, b: str, **extra):
    params = {**TURN_ON[a], **TURN_ON[b], **extra}
    params["options"] = {**TURN_ON[a].get("options", {}), **TURN_ON[b].get("options", {})}
    if "kraft-elr" not in (a, b):
        params["options"]["elr"] = False
    elif params.get("rf") == 1:   # min ISR is at most RF: with RF 1 the fencing empties the ISR into the ELR
        params.pop("min_isr")
    return preset_config("kraft-tiny-faults", max_faults=1, **params)


@pytest.mark.parametrize("a,b", PAIRS, ids=[f"{a}+{b}" for a, b in PAIRS])
def test_two_kraft_features_explore_together(a, b):
    _explore_together(build_model(_config(a, b)), a, b)


# Reassignment with the data path (issue 45; deletion stays without records): with each other feature.
DATA_PAIRS = [other for other in TURN_ON if other not in ("kraft-reassignment", "kraft-deletion")]


@pytest.mark.parametrize("other", DATA_PAIRS)
def test_reassignment_with_records_explores_with_each_other_feature(other):
    model = build_model(_config("kraft-reassignment", other, max_records=1))
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
