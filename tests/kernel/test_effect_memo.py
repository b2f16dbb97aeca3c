"""Effects remembered by the components they read (model/spec/effect_memo.py): the memoised successors are the
effects' own (and eager metadata settles only the queues a step wrote to), on every design and feature, and an
effect that breaks its declaration is run directly."""
from __future__ import annotations

import pytest

from model import Model
from model.spec.effect_memo import MemoisedEffect
from explorer.catalog import preset_config

from support.footprints import FOOTPRINT_CONFIGS as CONFIGS, sample_states, with_declaration
from explorer.catalog import build_model


def _memos(model: Model) -> list[MemoisedEffect]:
    return [effect for _, _, effect, _ in model._space if isinstance(effect, MemoisedEffect)]


def _successors_twice(model: Model, states) -> list:
    """Every state's successors, twice over the states (the second pass meets the components again: hits)."""
    return [list(model.successors(s)) for s in states] + [list(model.successors(s)) for s in states]


@pytest.mark.parametrize("preset,overrides", CONFIGS, ids=[f"{p}-{'-'.join(map(str, o.values())) or 'default'}"
                                                          for p, o in CONFIGS])
def test_memoised_successors_are_the_effects_own(preset, overrides):
    cfg = preset_config(preset, **overrides)
    direct, memoised = build_model(cfg, memo_effects=False), build_model(cfg)
    states = sample_states(direct, bfs=60, walks=4)
    assert _successors_twice(memoised, states) == _successors_twice(direct, states)
    # Model.step runs the rule's own effect and settles every broker's queue (successors only those the step
    # wrote to: Model._settles).
    for state in states:
        succ = list(memoised.successors(state))
        assert [memoised.step(state, memoised.rules[a.rule].name, a.args) for a, _ in succ] == succ
    memos = _memos(memoised)
    assert memos and sum(m.hits for m in memos) > 0          # the memo was used, not only filled
    assert not any(m.direct for m in memos if m.lookups < 2048)   # no declaration was found broken


def _with_rule(model: Model, name: str, **changes) -> Model:
    """A model whose rule ``name`` has other declarations (its memoised effects rebuilt)."""
    from model.spec.effect_memo import memoised_effects
    from model.spec.footprint import Components

    with_declaration(model, name, **changes)
    effects = memoised_effects(model, Components.of(model))
    model._space = tuple((ri, r.guard, e, args) for (ri, r, args), e in zip(model.action_space, effects))
    return model


@pytest.mark.parametrize("name,changes", [
    ("ControllerLogDirEvent", {"writes": ("controller",)}),                      # writes inboxes it does not declare
    ("ControllerFailover", {"appends": ("broker[*].inbox",)}),                   # empties the inboxes: not an append
])
def test_an_effect_that_breaks_its_declaration_is_run_directly(name, changes):
    cfg = preset_config("tiny")
    states = sample_states(build_model(cfg, memo_effects=False), bfs=300, walks=4)
    broken = _with_rule(build_model(cfg), name, **changes)
    assert _successors_twice(broken, states) == _successors_twice(build_model(cfg, memo_effects=False), states)
    memo = [e for (_, r, _), (_, _, e, _) in zip(broken.action_space, broken._space) if r.name == name]
    assert memo and all(isinstance(e, MemoisedEffect) for e in memo)
    assert any(e.direct for e in memo)


def test_the_brokers_and_clients_effects_are_not_memoised():
    model = build_model(preset_config("tiny"))
    kinds = {r.kind for (_, r, _), (_, _, e, _) in zip(model.action_space, model._space) if isinstance(e, MemoisedEffect)}
    assert kinds == {"controller", "environment"}


def test_the_eager_rule_is_declared_and_its_firings_are_the_rules_own():
    """kip112-core declares BrokerUpdateMetadata as the rule applied eagerly (Feature.eager): the model exposes its
    index (None without eager metadata), and a step's settled brokers are exactly the brokers at which applying
    that rule's effect, in order, gives the step's next state."""
    eager = build_model(preset_config("tiny"))
    assert eager.eager_rule == eager.rule_index["BrokerUpdateMetadata"]
    assert build_model(preset_config("tiny", eager_metadata=False)).eager_rule is None
    lazy = build_model(preset_config("tiny", eager_metadata=False))
    checked = 0
    for state in sample_states(eager, bfs=300, walks=0):
        for action, after in eager.successors(state):
            rule = eager.rules[action.rule]
            expected = lazy.step(state, rule.name, action.args)[1]
            for b in action.settled:
                expected = lazy.step(expected, "BrokerUpdateMetadata", (b,))[1]
            assert expected == after and not any(
                x.inbox and eager.eager.ready(x) for x in after.brokers)
            checked += bool(action.settled)
    assert checked, "some step settles an UpdateMetadata"
