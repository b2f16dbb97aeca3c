"""An exact --max-states on Spark: which states of the level that passes the bound are kept.

A level is one job, so the driver learns that a level passes ``--max-states`` only after it ran. It then keeps
the ``remaining`` new states of that level with the smallest fingerprints: each partition sends its smallest
``remaining`` new fingerprints (its new states are those of its visited set after the level that were not in
it before), the driver takes the ``remaining``-th smallest of them all as a cap, and the level is run again
with that cap and without expansion (spark_explore/engine.py). Runs in the executors: numpy and pickle only.
"""
from __future__ import annotations

import pickle

import numpy as np


class SmallestNew:
    """Per partition, the ``limit`` smallest fingerprints that the later of two visited sets adds to the
    earlier one: the partition holds the ``V`` records of two consecutive levels (or of level 0 alone)."""

    def __init__(self, limit: int):
        self.limit = limit

    def __call__(self, records):
        visited = sorted((pickle.loads(r[1])[0] for r in records if r[0] == "V"), key=len)
        if not visited:
            return []
        new = visited[-1] if len(visited) == 1 else np.setdiff1d(visited[-1], visited[0], assume_unique=True)
        return [int(fp) for fp in new[:self.limit]]


def cap_for(smallest: list[int], remaining: int) -> int | None:
    """The largest fingerprint to keep so that exactly ``remaining`` new states are kept; None: keep them all."""
    if len(smallest) <= remaining:
        return None
    return sorted(smallest)[remaining - 1]
