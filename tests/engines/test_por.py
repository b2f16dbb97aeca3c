"""Partial-order reduction (explorer/por.py): the stubborn sets' conditions; on a small synthetic model where it
reduces, the same verdict, violated invariants and quiescent states with and without --por, replayable
counterexamples, and unsound choices (a dependent pair taken as independent, visibility or the quiescence
condition ignored) caught by that comparison; on presets, the same verdicts."""
from __future__ import annotations

import pytest

from explorer import por
from model.spec.engine import rebuild_trace
from explorer.por import Reduction, reduction_for
from explorer.search import SearchOptions, explore
from invariants import Invariant, invariant
from model import Feature, Model, ModelConfig, StateField
from model.zk.designs import KIP112_CREATE
from model.spec.feature import Design
from explorer.catalog import preset_config
from model.zk.rules import CORE
from explorer.catalog import build_model

# ---- a synthetic design: request/serve processes over extension fields, the core's rules all disabled ----------
# Processes 0 and 1 are asked together and race: the first served records itself in ``first`` (their Serve steps
# are dependent); processes 2 and 3 are independent of everything else. A Serve needs a request in flight
# (``pending``: the state is not quiescent).
PROCESSES = 4
SYNTHETIC = Feature(
    "por-synthetic", "Request/serve processes: two race to be served first, two are independent",
    state_fields=tuple(StateField(f"pending{i}", 0, "A request in flight.", pending=True) for i in range(PROCESSES))
    + tuple(StateField(f"done{i}", 0, "Served.") for i in range(PROCESSES))
    + (StateField("first", 0, "1 + the first of processes 0 and 1 served."),
       StateField("asked", 0, "Processes 0 and 1 were asked (once)."),))
SYNTHETIC.rule("CreateTopic", params=("partition",), domain=lambda m: [], guard=lambda m, s, p: "no topics",
               kind="controller", reference="test", replaces="CreateTopic", reads=(), writes=())(lambda m, s, p: s)


def _add_request(name: str, processes: tuple[int, ...], guard, reads: tuple[str, ...], writes: tuple[str, ...] = ()):
    def request(m, s):
        """Put requests in flight."""
        return m.with_ext(s, **{f"pending{i}": 1 for i in processes}, **{w[4:]: 1 for w in writes})

    SYNTHETIC.rule(name, params=(), domain=lambda m: [()], kind="client", reference="test", guard=guard,
                   reads=reads, writes=tuple(f"ext.pending{i}" for i in processes) + writes)(request)


def _add_serve(i: int) -> None:
    shared = ("ext.first",) if i < 2 else ()

    def serve(m, s):
        """Serve the request (processes 0 and 1: the first served records itself)."""
        first = (m.ext(s, "first") or i + 1) if i < 2 else m.ext(s, "first")
        return m.with_ext(s, **{f"pending{i}": 0, f"done{i}": 1, "first": first})

    SYNTHETIC.rule(f"Serve{i}", params=(), domain=lambda m: [()], kind="broker", reference="test", needs_message=True,
                   guard=lambda m, s: None if m.ext(s, f"pending{i}") else "nothing pending",
                   reads=(f"ext.pending{i}",) + shared, writes=(f"ext.pending{i}", f"ext.done{i}") + shared)(serve)


_add_request("RequestPair", (0, 1), lambda m, s: "asked already" if m.ext(s, "asked") else None, ("ext.asked",),
             ("ext.asked",))
for _i in range(PROCESSES):
    if _i >= 2:
        _add_request(f"Request{_i}", (_i,), lambda m, s, i=_i: "done or pending" if m.ext(s, f"done{i}") or
                     m.ext(s, f"pending{i}") else None, (f"ext.pending{_i}", f"ext.done{_i}"))
    _add_serve(_i)


@invariant("one_never_first", kind="state", statement="Process 0 is served before process 1.", reference="test",
           reads=("ext.first",))
def one_never_first(m, s):
    return "process 1 was served before process 0" if m.ext(s, "first") == 2 else None


@invariant("never_two_and_three_pending", kind="state", statement="Processes 2 and 3 never wait together.",
           reference="test", reads=("ext.pending2", "ext.pending3"))
def never_two_and_three_pending(m, s):
    return "processes 2 and 3 both wait" if m.ext(s, "pending2") and m.ext(s, "pending3") else None


@invariant("never_two_done_quietly", kind="quiescent", statement="No quiescent state has 0 and 1 served, 2 not.",
           reference="test")
def never_two_done_quietly(m, s):
    return "0 and 1 served, 2 not" if m.ext(s, "done0") and m.ext(s, "done1") and not m.ext(s, "done2") else None


@invariant("first_is_a_process", kind="state", statement="first names a process.", reference="test",
           reads=("ext.first",))
def first_is_a_process(m, s):
    return None if m.ext(s, "first") <= PROCESSES else f"first is {m.ext(s, 'first')}"


SYNTHETIC.add_invariants(one_never_first, never_two_and_three_pending, never_two_done_quietly, first_is_a_process)
SYNTHETIC_DESIGN = Design("por-synthetic", "the core (nothing enabled) and the synthetic processes",
                          (CORE, KIP112_CREATE, SYNTHETIC))
ALL_SYNTHETIC = ["one_never_first", "never_two_and_three_pending", "never_two_done_quietly", "first_is_a_process"]


def synthetic_model(invariants=ALL_SYNTHETIC) -> Model:
    cfg = ModelConfig(brokers=2, rf=2, max_faults=0, max_restarts=0, max_fixes=0, consumer=False, eager_metadata=False)
    return build_model(cfg, design=SYNTHETIC_DESIGN, invariants=invariants)


def _explore(model, engine: str, por_on: bool):
    """The result and the quiescent states visited (recorded by a quiescent check that never fails)."""
    quiescent = set()
    recorder = Invariant("record_quiescent", "quiescent", "", "", lambda m, s: quiescent.add(s))
    result = explore(engine, model, list(model.invariants) + [recorder],
                     SearchOptions(por=por_on, all_violations=True))
    return result, quiescent


def differences(model, engine: str) -> list[str]:
    """How the run with --por differs from the one without: verdict, violated invariants, quiescent states; and
    counterexamples that do not replay. Empty: POR kept everything the comparison looks at."""
    (full, full_quiet), (reduced, reduced_quiet) = (_explore(model, engine, on) for on in (False, True))
    out = []
    if reduced.result != full.result:
        out.append(f"verdict {reduced.result} != {full.result}")
    ids = {v.invariant.id for v in reduced.violations}, {v.invariant.id for v in full.violations}
    if ids[0] != ids[1]:
        out.append(f"violated {sorted(ids[0])} != {sorted(ids[1])}")
    if reduced_quiet != full_quiet:
        out.append(f"{len(full_quiet - reduced_quiet)} quiescent states missed")
    for v in reduced.violations:
        replayed = rebuild_trace(model, [a for a, _ in v.trace[1:]])      # raises if a step is not enabled
        if replayed[-1][1] != v.trace[-1][1] or v.invariant.check(model, replayed[-1][1]) is None:
            out.append(f"{v.invariant.id}'s counterexample does not replay")
    return out


NARROW = ["one_never_first", "never_two_done_quietly", "first_is_a_process"]


@pytest.mark.parametrize("engine", ["bfs", "dfs"])
@pytest.mark.parametrize("invariants,violated", [   # all: never_two_and_three_pending sees every Serve2/3
    (NARROW, {"one_never_first", "never_two_done_quietly"}),
    (ALL_SYNTHETIC, {"one_never_first", "never_two_and_three_pending", "never_two_done_quietly"}),
], ids=["narrow", "all"])
def test_por_reduces_the_synthetic_model_and_keeps_verdicts_violations_and_quiescent_states(engine, invariants,
                                                                                            violated):
    model = synthetic_model(invariants)
    full, _ = _explore(model, engine, False)
    reduced, _ = _explore(model, engine, True)
    assert reduced.por["used"]
    if invariants is NARROW:
        assert reduced.por["reduced_states"] > 0
        assert reduced.distinct_states < full.distinct_states and reduced.states_generated < full.states_generated
    assert {v.invariant.id for v in full.violations} == violated
    assert differences(model, engine) == []


class _IndependentServes(por.Footprints):
    """Unsound: Serve0 and Serve1 (which both write ``first``) taken as independent."""
    def __init__(self, model):
        super().__init__(model)
        serves = [i for i, (_, r, _) in enumerate(model.action_space) if r.name in ("Serve0", "Serve1")]
        for a, b in (serves, serves[::-1]):
            self.dependent[a] &= ~(1 << b)


class _NoVisibility(por.Reduction):
    """Unsound: state invariants' reads ignored (C2)."""
    def __init__(self, model, invariants):
        super().__init__(model, invariants)
        self.hidden_from = {}


class _NoQuiescenceCondition(por.Reduction):
    """Unsound: a stubborn set need not hold an action that needs a message (C2q)."""
    def __init__(self, model, invariants):
        super().__init__(model, invariants)
        self.footprints.needs_message = self.all


@pytest.mark.parametrize("name,target,mutant,invariants,expected", [
    ("dependent pair as independent", "Footprints", _IndependentServes, ["never_two_done_quietly"], "quiescent"),
    ("visibility ignored", "Reduction", _NoVisibility, ["never_two_and_three_pending"], "violated"),
    ("quiescence condition ignored", "Reduction", _NoQuiescenceCondition, ["never_two_done_quietly"], "quiescent"),
])
def test_an_unsound_choice_is_caught(name, target, mutant, invariants, expected, monkeypatch):
    model = synthetic_model(invariants)
    assert differences(model, "bfs") == []
    monkeypatch.setattr(por, target, mutant)
    found = differences(model, "bfs")
    assert any(expected in d for d in found), (name, found)


def _enabled_mask(model, state) -> int:
    return sum(1 << pos for pos, (_, guard, _, args) in enumerate(model._space) if guard(model, state, *args) is None)


def test_ample_sets_satisfy_c0_c1_c2_on_the_synthetic_model():
    from support.footprints import sample_states

    model = synthetic_model(NARROW)
    reduction = Reduction(model, model.invariants)
    fp = reduction.footprints
    proper = 0
    for state in sample_states(model, bfs=200, walks=0):
        enabled = _enabled_mask(model, state)
        dead, dynamic = reduction._context(state, enabled)
        ample = reduction.ample_mask(enabled, dead, dynamic) if enabled else None
        if ample is None:
            continue
        proper += 1
        assert ample and ample & ~enabled == 0 and ample != enabled          # C0: a proper, non-empty subset
        assert ample & fp.needs_message                                      # C2q
        for mask in reduction.hidden_from.values():                          # C2: one invisible member each
            assert any(not fp.writes[a] & mask for a in range(len(fp.writes)) if ample >> a & 1)
        for a in range(len(fp.dependent)):
            if ample >> a & 1:
                assert fp.dependent[a] & enabled & ~ample & ~dead == 0      # C1: no enabled dependent outside
    assert proper > 0


def test_the_stubborn_set_closure_on_a_hand_made_dependency():
    model = build_model(preset_config("tiny"), invariants=["offline_broker_serves_nothing"])
    reduction = Reduction(model, model.invariants)
    fp = reduction.footprints
    # actions 0, 1, 2: 0 and 2 dependent, 1 independent of both; 3 disabled, enabled only by 2
    fp.dependent = [0b101, 0b010, 0b101, 0b1000] + [0] * (len(fp.dependent) - 4)
    fp.enablers = [0, 0, 0, 0b100] + [0] * (len(fp.enablers) - 4)
    fp.needs_message, reduction.hidden_from = 0b111, {}
    reduction.visible, reduction._ample = 0, {}
    assert reduction.ample_mask(0b111) == 0b010                              # the smallest: {1}
    reduction.visible, reduction._ample = 0b010, {}
    assert reduction.ample_mask(0b111) == 0b101                              # 1 visible: {0, 2}
    fp.needs_message, reduction._ample, reduction.quiescence = 0b010, {}, True   # a quiescent invariant checked:
    assert reduction.ample_mask(0b111) is None                               # C2q: {0, 2} needs no message
    reduction.quiescence, reduction._ample = False, {}                       # none: C2q not needed, {0, 2}
    assert reduction.ample_mask(0b111) == 0b101
    reduction.quiescence = True
    fp.needs_message, reduction.visible, reduction._ample = 0b111, 0b111, {}
    assert reduction.ample_mask(0b111) is None                               # all visible: full expansion
    fp.dependent[1] = 0b1010                                                 # 1 depends on the disabled 3,
    reduction.visible, reduction._ample = 0b101, {}                          # which 2 enables: {1, 2} is
    assert reduction.ample_mask(0b111) is None                               # visible, so full
    assert reduction.ample_mask(0b111, dead=0b1000) == 0b010                 # unless 3 is dead: {1}


def test_por_is_off_with_a_reason_where_it_is_unsound_or_useless():
    model = build_model(preset_config("tiny"), invariants=["offline_broker_serves_nothing"])
    assert reduction_for(model, model.invariants, SearchOptions(por=True, max_depth=5))[1].startswith("--max-depth")
    assert reduction_for(model, model.invariants, SearchOptions(por=True, workers=2))[1].startswith("--workers")
    undeclared = Invariant("undeclared", "state", "", "", lambda m, s: None)
    assert "every action is visible" in reduction_for(model, [undeclared], SearchOptions(por=True))[1]
    assert "every action that needs a message is visible" in reduction_for(
        build_model(preset_config("tiny")), build_model(preset_config("tiny")).invariants, SearchOptions(por=True))[1]
    assert reduction_for(model, model.invariants, SearchOptions(por=False)) == (None, None)


@pytest.mark.parametrize("preset,overrides,invariants", [
    ("tiny", {"variant": "legacy"}, None),
    ("tiny", {"variant": "legacy", "eager_metadata": False}, ["offline_broker_serves_nothing",
                                                               "no_serving_from_offline_dir"]),
    ("reassignment-race", {}, ["offline_broker_serves_nothing"]),
])
def test_same_verdict_and_violations_with_and_without_por_on_presets(preset, overrides, invariants):
    results = {}
    for por_on in (False, True):
        model = build_model(preset_config(preset, **overrides), invariants=invariants)
        results[por_on] = explore("bfs", model, model.invariants,
                                  SearchOptions(por=por_on, all_violations=True, max_states=1500))
        for v in results[por_on].violations:                  # every counterexample is a real trace
            replayed = rebuild_trace(model, [a for a, _ in v.trace[1:]])
            assert model.fingerprint(replayed[-1][1]) == model.fingerprint(v.trace[-1][1])
    full, reduced = results[False], results[True]
    assert reduced.por["used"] or reduced.por["note"]
    assert reduced.result == full.result
    assert {v.invariant.id for v in reduced.violations} == {v.invariant.id for v in full.violations}
    if not reduced.por["used"] or reduced.por["reduced_states"] == 0:
        assert (reduced.distinct_states, reduced.states_generated) == (full.distinct_states, full.states_generated)


def test_why_a_state_is_not_reduced():
    narrow, every = (Reduction(synthetic_model(inv), synthetic_model(inv).invariants) for inv in (NARROW, ALL_SYNTHETIC))
    model = synthetic_model()
    state = model.step(model.init_states()[0], "Request2", ())[1]           # Serve2 alone would do
    assert narrow.why_full(state) is None
    assert every.why_full(state) == "visibility"                             # ... but it writes pending2
    assert every.why_full(model.init_states()[0]) == "visibility"           # C2q: no Serve enabled
    race = model.step(state, "RequestPair", ())[1]
    for name in ("Serve2", "Request3", "Serve3"):
        race = model.step(race, name, ())[1]
    assert narrow.why_full(race) == "closure"                                # only Serve0 and Serve1 left
