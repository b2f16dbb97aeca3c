"""Memoisation by object identity, for the explorer's hot path.

A successor shares most of its brokers (and often the controller) with its parent: the very same objects.
Remembering a function's result by ``id`` skips recomputing it for them. Each entry keeps its argument alive, so
its id is not reused while it is cached; the cache is cleared when it reaches its limit.
"""
from __future__ import annotations


def by_identity(fn, limit: int):
    """fn(obj), remembered for the last (up to) ``limit`` distinct objects by their identity."""
    memo: dict = {}

    def cached(obj):
        entry = memo.get(id(obj))
        if entry is not None and entry[0] is obj:
            return entry[1]
        if len(memo) >= limit:
            memo.clear()
        value = fn(obj)
        memo[id(obj)] = (obj, value)
        return value

    cached.__name__, cached.__doc__ = fn.__name__, fn.__doc__
    return cached
