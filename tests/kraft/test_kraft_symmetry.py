"""Dir symmetry in KRaft mode (model/kraft/symmetry.py, model/spec/symmetry.py ``permute_index_refs``): permuting a
broker's dirs renames its dir ids in the controller's record and its assignment queues; the permuted states'
successors are the permutations' (orbit by orbit), the invariants agree on them, the canonical form is a member of
the orbit and idempotent, and the reduced search finds the same verdicts as the full one. A rename that forgets a
reference is caught."""
from __future__ import annotations

import pytest

from explorer.catalog import build_model, preset_config
from explorer.search import SearchOptions, explore
from model.kraft import symmetry as kraft_symmetry
from model.spec.symmetry import IndexSymmetry

from support.helpers import bfs_states, config_ids, kraft_configs, walk_states
from support.profiles import THOROUGH

SYMMETRIC = {"dir_symmetry": True}   # KRaft's dir symmetry is opt-in (model/kraft/symmetry.py)
CONFIGS = kraft_configs(THOROUGH)



def _states(model, bfs=150, walks=10):
    return list(bfs_states(model, model.fingerprint, bfs).values()) + walk_states(model, walks, 40, 0)


def symmetry_problems(model, states) -> list[str]:
    """Where a permuted state's successors are not the permuted successors (orbit by orbit), a state invariant
    tells a state from its permutation, or the canonical form is not an idempotent member of the orbit."""
    sym = IndexSymmetry(model.schema, model)
    fp = model.fingerprint                                   # plain: the model is built without symmetry

    def orbit(t):
        return frozenset(fp(x) for x in sym.orbit(t))

    problems = set()
    for s in states:
        successors = {orbit(t) for _, t in model.successors(s)}
        verdicts = [inv.check(model, s) is None for inv in model.invariants if inv.kind == "state"]
        for permuted in sym.orbit(s):
            if {orbit(t) for _, t in model.successors(permuted)} != successors:
                problems.add("a permuted state's successors are not the permuted successors")
            if [inv.check(model, permuted) is None for inv in model.invariants if inv.kind == "state"] != verdicts:
                problems.add("a state invariant tells a state from its permutation")
        canonical = sym.canonical(s)
        if fp(canonical) not in {fp(x) for x in sym.orbit(s)}:
            problems.add("the canonical form is not in the orbit")
        if fp(sym.canonical(canonical)) != fp(canonical):
            problems.add("the canonical form is not idempotent")
    return sorted(problems)


# Dir symmetry is sound only without repairs (a replaced disk's new id tells its dir apart: model/kraft/symmetry.py).
NO_REPAIR = {"max_fixes": 0}


@pytest.mark.parametrize("preset", ["kraft-tiny-faults", "kraft-tiny", "kraft-small"])
def test_dir_permutations_are_symmetries_of_the_kraft_model(preset):
    model = build_model(preset_config(preset, **NO_REPAIR, options=SYMMETRIC))
    assert symmetry_problems(model, _states(model)) == []


def test_with_a_replaced_disk_the_dirs_are_not_interchangeable_so_kraft_refuses_dir_symmetry():
    # The permutation test finds the tie-break's asymmetry once a disk can be replaced: a restarted broker's new
    # log lands on the lowest-index good dir, which is the replaced disk (its new id unregistered) in one state and
    # the old disk in its permutation.
    model = build_model(preset_config("kraft-tiny-faults", options=SYMMETRIC))
    assert "a permuted state's successors are not the permuted successors" in symmetry_problems(model, _states(model))
    built = build_model(preset_config("kraft-tiny-faults", options=SYMMETRIC), symmetry=True)
    assert not built.symmetry and "replaced disk" in built.symmetry_note


def test_a_rename_that_forgets_the_assignment_queue_is_caught(monkeypatch):
    def forgetful(m, s, orders):
        renamed = kraft_symmetry.permute_index_refs(m, s, orders)
        return renamed._replace(brokers=s.brokers)            # the queues keep the old dir ids
    model = build_model(preset_config("kraft-tiny-faults", **NO_REPAIR, options=SYMMETRIC))
    monkeypatch.setattr(model.hooks, "permute_index_refs", forgetful)
    assert "a permuted state's successors are not the permuted successors" in symmetry_problems(model,
                                                                                                _states(model))


def test_symmetry_is_used_on_kraft_where_sound():
    assert not build_model(preset_config("kraft-tiny-faults"), symmetry=True).symmetry   # opt-in
    assert build_model(preset_config("kraft-tiny-faults", **NO_REPAIR, options=SYMMETRIC), symmetry=True).symmetry
    assert build_model(preset_config("kraft-small", options=SYMMETRIC), symmetry=True).symmetry
    model = build_model(preset_config("kraft-small", max_dir_failures=2, options=SYMMETRIC), symmetry=True)
    assert not model.symmetry and "handleDirectoriesOffline" in model.symmetry_note
    model = build_model(preset_config("kraft-tiny-faults", dirs=1, options=SYMMETRIC), symmetry=True)
    assert not model.symmetry and "one log dir" in model.symmetry_note


@pytest.mark.parametrize("preset,overrides", CONFIGS, ids=config_ids(CONFIGS))
def test_same_verdict_and_violated_invariants_with_and_without_symmetry(preset, overrides):
    results = {}
    for symmetric in (False, True):
        options = {**overrides.get("options", {}), **SYMMETRIC}
        model = build_model(preset_config(preset, **{**overrides, **NO_REPAIR, "options": options}),
                            symmetry=symmetric)
        assert model.symmetry == symmetric
        results[symmetric] = explore("bfs", model, model.invariants, SearchOptions(all_violations=True))
    full, reduced = results[False], results[True]
    assert full.result in ("ok", "violation") and reduced.result == full.result
    assert {v.invariant.id for v in reduced.violations} == {v.invariant.id for v in full.violations}
    assert reduced.distinct_states <= full.distinct_states
    if overrides.get("max_faults", 2) > 0:          # without a fault a new log always lands on dir 0: no orbit to fold
        assert reduced.distinct_states < full.distinct_states
