"""Memoisation by value (model/spec/memo.py): it computes once per distinct value, and it is sound because equal
components of reachable states always encode alike (no ``True`` where ``1`` is kept)."""
from __future__ import annotations

import pytest

from model.spec.memo import by_value

from support.helpers import bfs_states, init, model_of, walk_states


def encoding_clashes(states) -> list:
    """Pairs of equal brokers, controllers or tuples of the other fields (among the given states') whose
    encodings (repr) differ."""
    seen: dict = {}
    clashes = []
    for state in states:
        for component in (*state.brokers, state.controller, state[2:]):
            text = repr(component)
            first = seen.setdefault(component, text)
            if first != text:
                clashes.append((first, text))
    return clashes


def sample_states(model, breadth: int = 4000, walks: int = 150, depth: int = 40, seed: int = 7):
    """The first ``breadth`` states of a BFS, then the states of seeded random walks (deep states)."""
    return list(bfs_states(model, model.fingerprint, breadth).values()) + walk_states(model, walks, depth, seed)


@pytest.mark.parametrize("preset", ["tiny", "small", "medium", "saturation", "deletion", "reassignment-race"])
def test_equal_components_of_reachable_states_encode_alike(preset):
    states = sample_states(model_of(preset))
    assert len(states) > 4000
    assert encoding_clashes(states) == []


def test_the_encoding_check_catches_a_bool_kept_as_an_int():
    state = init(model_of("tiny"))
    broker = state.brokers[0]
    odd = state._replace(brokers=(broker._replace(up=1),) + state.brokers[1:])
    assert broker == broker._replace(up=1)
    assert encoding_clashes([state, odd]) == [(repr(broker), repr(broker._replace(up=1)))]


def test_by_value_computes_once_per_distinct_value_and_remembers_none():
    calls = []

    def fn(value):
        calls.append(value)
        return None if value[0] == 0 else value[0] * 2

    cached = by_value(fn, 10)
    assert [cached((1, 2)), cached((1, 2)), cached(tuple([1, 2])), cached((0,)), cached((0,))] == [2, 2, 2, None, None]
    assert calls == [(1, 2), (0,)]


def test_by_value_starts_afresh_at_its_limit():
    calls = []
    cached = by_value(lambda v: calls.append(v) or v, 2)
    for v in (1, 2, 3, 1):
        cached(v)
    assert calls == [1, 2, 3, 1] and len(cached.cache) == 2
