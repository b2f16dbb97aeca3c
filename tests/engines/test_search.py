"""The search engines: exhaustiveness, BFS/DFS agreement, shortest traces, bounds, seeded random walks."""
from __future__ import annotations

import concurrent.futures

import pytest

from explorer.search import SearchOptions, explore
from model import fingerprint
from explorer.catalog import preset_config
from explorer.catalog import build_model, select_invariants

ALL = select_invariants()


def run(engine, preset="tiny", invs=None, **options):
    overrides = {k: options.pop(k) for k in ("variant", "max_faults") if k in options}
    model = build_model(preset_config(preset, **overrides))
    return model, explore(engine, model, ALL if invs is None else select_invariants(invs), SearchOptions(**options))


@pytest.fixture(scope="module")
def tiny_bfs():
    return run("bfs")[1]


@pytest.fixture(scope="module")
def small_legacy_bfs():
    return run("bfs", "small", variant="legacy")


# ---- exhaustive search ---------------------------------------------------------------------------------------

@pytest.mark.slow
def test_bfs_exhausts_tiny_and_every_rule_fires(tiny_bfs):
    r = tiny_bfs
    assert r.result == "ok" and r.violations == []
    assert r.engine == "bfs"
    model = build_model(preset_config("tiny"))
    configured = {rule.name for _, rule, _ in model.action_space}
    never = [name for name, n in r.coverage.items() if n == 0 and name in configured]
    assert not never, f"rules that never fired: {never}"
    assert set(r.coverage) == {rule.name for rule in model.rules}
    # tiny leaves the features out: their rules have no action in its configuration, and so never fire.
    assert {"Write", "DeleteTopic", "ReassignPartition"}.isdisjoint(configured)
    assert all(r.coverage[name] == 0 for name in set(r.coverage) - configured)
    # Coverage counts one firing per generated transition, plus eagerly applied UpdateMetadata.
    assert sum(r.coverage.values()) >= r.states_generated >= r.distinct_states - 1
    assert r.depth > 0


@pytest.mark.slow
def test_dfs_visits_exactly_the_states_bfs_visits_on_tiny(tiny_bfs):
    dfs = run("dfs")[1]
    assert dfs.result == "ok"
    assert (dfs.distinct_states, dfs.states_generated) == (tiny_bfs.distinct_states, tiny_bfs.states_generated)
    assert dfs.coverage == tiny_bfs.coverage
    assert dfs.depth >= tiny_bfs.depth  # BFS depth is the eccentricity; a DFS path can only be longer


def _exhaust(engine, preset, **model):
    r = explore(engine, build_model(preset_config(preset, **model)), ALL, SearchOptions())
    return r.result, r.distinct_states, r.states_generated, r.coverage


@pytest.mark.slow
def test_bfs_and_dfs_agree_on_small_without_records_and_find_nothing():
    # KIP-112's 3-broker cluster, protocol only and one fault, side by side in two processes. small with its
    # record has millions of states (docs/performance.md); the data path is compared on tiny above.
    with concurrent.futures.ProcessPoolExecutor(max_workers=2) as pool:
        bfs_future = pool.submit(_exhaust, "bfs", "small", max_records=0, max_faults=1)
        dfs_future = pool.submit(_exhaust, "dfs", "small", max_records=0, max_faults=1)
        bfs, dfs = bfs_future.result(), dfs_future.result()
    assert bfs[0] == dfs[0] == "ok"
    assert bfs[1] == dfs[1] > 1000, "distinct_states"
    assert bfs[2] == dfs[2], "states_generated"
    assert bfs[3] == dfs[3], "coverage"


@pytest.mark.parametrize("depth", [1, 2, 3, 6])
def test_bounded_bfs_and_dfs_reach_the_same_states(depth):
    """With --max-depth N both engines visit every state within N steps (DFS re-explores shorter paths)."""
    bfs = run("bfs", max_depth=depth)[1]
    dfs = run("dfs", max_depth=depth)[1]
    assert bfs.result == dfs.result == "bounded"
    assert bfs.distinct_states == dfs.distinct_states
    assert bfs.depth == dfs.depth == depth


@pytest.mark.slow
def test_bounded_search_grows_with_the_bound(tiny_bfs):
    sizes = [run("bfs", max_depth=d)[1].distinct_states for d in range(0, 5)]
    assert sizes[0] == 1  # only the initial state
    assert sizes == sorted(sizes) and len(set(sizes)) == len(sizes)
    assert sizes[-1] < tiny_bfs.distinct_states


def test_bounds_beyond_the_state_space_are_not_bounds():
    """A depth past the deepest state and a state limit above the state count do not stop the search (tiny with
    one fault: 2,121 states)."""
    whole = run("bfs", max_faults=1)[1]
    assert whole.result == "ok"
    r = run("bfs", max_faults=1, max_depth=whole.depth + 5, max_states=whole.distinct_states + 1)[1]
    assert r.result == "ok"
    assert (r.distinct_states, r.states_generated) == (whole.distinct_states, whole.states_generated)


def test_dfs_honours_max_depth_zero():
    bfs = run("bfs", max_depth=0)[1]
    dfs = run("dfs", max_depth=0)[1]
    assert bfs.distinct_states == 1 and bfs.depth == 0
    assert (dfs.distinct_states, dfs.depth) == (bfs.distinct_states, bfs.depth)


# ---- the legacy variant's violation, shortest trace -------------------------------------------------------------

def test_bfs_finds_the_legacy_recreate_on_small(small_legacy_bfs):
    model, r = small_legacy_bfs
    assert r.result == "violation"
    assert [v.invariant.id for v in r.violations] == ["no_recreate_with_bad_dir"]
    v = r.violations[0]
    assert isinstance(v.message, str) and v.message
    assert v.trace[0][0] is None and v.trace[0][1] == model.init_states()[0]
    assert len(v.trace) - 1 == r.depth


def test_legacy_trace_is_shortest(small_legacy_bfs):
    _, r = small_legacy_bfs
    steps = len(r.violations[0].trace) - 1
    assert steps >= 1
    shorter = run("bfs", "small", variant="legacy", max_depth=steps - 1)[1]
    assert shorter.result == "bounded" and shorter.violations == []
    exact = run("bfs", "small", variant="legacy", max_depth=steps)[1]
    assert exact.result == "violation"
    assert len(exact.violations[0].trace) - 1 == steps


def test_legacy_trace_replays_step_by_step(small_legacy_bfs):
    model, r = small_legacy_bfs
    v = r.violations[0]
    state = model.init_states()[0]
    for i, (action, recorded) in enumerate(v.trace[1:], start=1):
        name = model.rules[action.rule].name
        previous = state
        replayed_action, state = model.step(state, name, action.args)  # raises ActionDisabled if not enabled
        assert replayed_action == action
        assert state == recorded and fingerprint(state) == fingerprint(recorded), f"step {i} differs"
    # The invariant fails on the last step, and on no earlier one.
    assert v.invariant.kind == "transition"
    assert v.invariant.check(model, previous, action, state) == v.message
    s = model.init_states()[0]
    for action, after in v.trace[1:-1]:
        assert v.invariant.check(model, s, action, after) is None
        s = after


def test_dfs_and_random_traces_replay_too():
    for engine, options in (("dfs", {}), ("random", dict(seed=1, walks=300))):
        model, r = run(engine, variant="legacy", **options)
        assert r.result == "violation", engine
        v = r.violations[0]
        assert v.invariant.id == "no_recreate_with_bad_dir"
        state = model.init_states()[0]
        for action, recorded in v.trace[1:]:
            previous = state
            _, state = model.step(state, model.rules[action.rule].name, action.args)
            assert state == recorded
        assert isinstance(v.invariant.check(model, previous, v.trace[-1][0], state), str)


@pytest.mark.slow
def test_kip112_does_not_recreate_on_tiny(tiny_bfs):
    """The same search that finds the legacy violation finds none under kip112 (tiny is exhaustive)."""
    assert tiny_bfs.result == "ok"
    legacy = run("bfs", variant="legacy")[1]
    assert legacy.result == "violation"


# ---- bounds ----------------------------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("engine", ["bfs", "dfs", "random"])
def test_max_states_gives_bounded(engine, tiny_bfs):
    limit = 50
    r = run(engine, max_states=limit, seed=0)[1]
    assert r.result == "bounded"
    assert r.distinct_states == limit < tiny_bfs.distinct_states


# ---- random simulation --------------------------------------------------------------------------------------------

def _summary(r):
    return (r.result, r.distinct_states, r.states_generated, r.depth, r.coverage,
            [(v.invariant.id, v.message, [(a, fingerprint(s)) for a, s in v.trace]) for v in r.violations])


@pytest.mark.parametrize("variant", ["kip112", "legacy"])
def test_random_engine_is_deterministic_for_a_seed(variant):
    a = run("random", variant=variant, seed=7, walks=60)[1]
    b = run("random", variant=variant, seed=7, walks=60)[1]
    assert _summary(a) == _summary(b)


def test_random_engine_depends_on_the_seed():
    results = {_summary(run("random", seed=seed, walks=20)[1])[1:3] for seed in range(4)}
    assert len(results) > 1


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_engine_finds_the_legacy_violation_on_tiny(seed):
    r = run("random", variant="legacy", seed=seed, walks=500)[1]
    assert r.result == "violation"
    assert r.violations[0].invariant.id == "no_recreate_with_bad_dir"


def test_random_engine_without_violation_is_bounded():
    r = run("random", seed=3, walks=30, max_depth=15)[1]
    assert r.result == "bounded"  # random walks never prove anything
    assert r.depth <= 15
    assert r.violations == []


# ---- invariant selection -------------------------------------------------------------------------------------------

# What the legacy broker breaks on tiny: the flag, and (through a re-created empty leader) the data.
LEGACY_BREAKS = {"no_recreate_with_bad_dir", "no_acked_record_lost", "consumer_sees_no_loss_or_duplicate",
                 "reads_below_hw_are_committed"}


@pytest.mark.long_run
def test_selected_invariants_only_are_reported():
    others = [i.id for i in ALL if i.id not in LEGACY_BREAKS]
    _, r = run("bfs", variant="legacy", invs=others, all_violations=True)
    assert r.result == "ok" and r.violations == []
    _, r = run("bfs", variant="legacy", invs=["no_recreate_with_bad_dir"], all_violations=True, max_depth=6)
    assert [v.invariant.id for v in r.violations] == ["no_recreate_with_bad_dir"]


@pytest.mark.long_run
def test_all_violations_reports_each_invariant_once():
    _, r = run("bfs", variant="legacy", all_violations=True)
    ids = [v.invariant.id for v in r.violations]
    assert "no_recreate_with_bad_dir" in ids
    assert len(ids) == len(set(ids))
    first = run("bfs", variant="legacy")[1]
    assert first.distinct_states <= r.distinct_states  # it kept searching after the first violation
