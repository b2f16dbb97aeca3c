"""Memoisation by value, for the explorer's hot path.

States are built from a few components (the brokers, the controller) that recur across very many states:
medium's first 200,000 states hold about 16,000 distinct brokers and 330 distinct controllers. Remembering a
function of a component by its value computes it once per distinct component. The key is the component
itself (Python's tuple hash, in this process only: nothing stored or sent depends on it; a component the
cache holds as its very key, as a successor's unchanged brokers often are, is matched by identity without a
deep comparison).

Sound because the model never puts equal values of different types in the same field (``True`` where ``1`` is
kept, say), which would compare equal here but encode differently; tests/kernel/test_memo.py checks this on sampled
reachable states of every preset. The cache is cleared when it reaches its limit.
"""
from __future__ import annotations


_MISSING = object()


def by_value(fn, limit: int):
    """fn(value), remembered for the last (up to) ``limit`` distinct values."""
    memo: dict = {}

    def cached(value):
        result = memo.get(value, _MISSING)
        if result is _MISSING:
            if len(memo) >= limit:
                memo.clear()
            result = memo[value] = fn(value)
        return result

    cached.__name__ = getattr(fn, "__name__", "cached")
    cached.__doc__ = fn.__doc__
    cached.cache = memo
    return cached


def by_args(fn, limit: int):
    """fn(*args), remembered by the argument tuple for the last (up to) ``limit`` distinct tuples."""
    memo: dict = {}

    def cached(*args):
        result = memo.get(args, _MISSING)
        if result is _MISSING:
            if len(memo) >= limit:
                memo.clear()
            result = memo[args] = fn(*args)
        return result

    cached.__name__ = getattr(fn, "__name__", "cached")
    cached.__doc__ = fn.__doc__
    cached.cache = memo
    return cached
