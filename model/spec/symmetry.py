"""Symmetry reduction: the log dirs of a broker are interchangeable.

No rule of the KIP-112 core names a dir except through its status and the logs it holds, with one exception:
LogManager picks the lowest-numbered of the equally loaded good dirs for a new log. That choice is symmetric
in the orbit sense whenever the tied dirs hold nothing that tells them apart, which is the case when a
configuration has one partition, or two dirs and at most two partitions (docs/model.md, "Symmetry"): a new log
is created only for a partition with no live copy, so two tied good dirs are then both empty. Each feature
says whether the reduction stays sound with it (``Feature.dir_symmetry``), and each invariant whether its
verdict is the same on a whole orbit (``Invariant.symmetric``); the model uses the reduction only when all do.
Brokers are not interchangeable: the assignment order decides elections.

Which broker fields a dir permutation moves, and how, is read from the declared schema
(model/storage/state.py ``BROKER_SCHEMA``: per-dir tuples, dir bitmasks, per-partition dir bitmasks). The reduced
search dedups states by the fingerprint of a canonical representative: each broker's dirs sorted by the
column of values they hold in those fields, in declaration order (status first, then the partitions they
hold). It explores the concrete state it met first, so traces stay real paths.
"""
from __future__ import annotations

from itertools import permutations

from model.storage.state import BROKER_SCHEMA, Broker, State, component_fingerprint, digest

_PER_DIR = tuple(i for i, f in enumerate(BROKER_SCHEMA) if f.dirs == "per-dir")
_DIR_MASK = tuple(i for i, f in enumerate(BROKER_SCHEMA) if f.dirs == "dir-mask")
_PARTITION_MASKS = tuple(i for i, f in enumerate(BROKER_SCHEMA) if f.dirs == "partition-dir-masks")


def _permute_mask(mask: int, order) -> int:
    return sum((mask >> d & 1) << i for i, d in enumerate(order))


def permute_dirs(broker: Broker, order) -> Broker:
    """The broker with new dir i being old dir order[i], in every dir-indexed field."""
    values = list(broker)
    for i in _PER_DIR:
        values[i] = tuple(broker[i][d] for d in order)
    for i in _DIR_MASK:
        values[i] = _permute_mask(broker[i], order)
    for i in _PARTITION_MASKS:
        values[i] = tuple(_permute_mask(m, order) for m in broker[i])
    return Broker._make(values)


def _column(broker: Broker, d: int) -> tuple:
    """What dir d holds, in declaration order of the dir-indexed fields."""
    out = []
    for i, f in enumerate(BROKER_SCHEMA):
        if f.dirs == "per-dir":
            out.append(broker[i][d])
        elif f.dirs == "dir-mask":
            out.append(broker[i] >> d & 1)
        elif f.dirs == "partition-dir-masks":
            out.append(tuple(m >> d & 1 for m in broker[i]))
    return tuple(out)


def canonical_broker(broker: Broker) -> Broker:
    n = len(broker.dirs)
    order = sorted(range(n), key=lambda d: _column(broker, d))
    if order == list(range(n)):
        return broker
    return permute_dirs(broker, order)


def canonical(state: State) -> State:
    return state._replace(brokers=tuple(canonical_broker(b) for b in state.brokers))


def canonical_fingerprint(state: State) -> int:
    """The fingerprint of canonical(state), uncached (a model's search uses its own cached form)."""
    return component_fingerprint(lambda broker: digest(canonical_broker(broker)), digest, state)


def orbit(state: State) -> set:
    """Every state reachable from this one by permuting each broker's dirs (for checks on small models)."""
    per_broker = [
        {permute_dirs(b, order) for order in permutations(range(len(b.dirs)))} for b in state.brokers
    ]
    out = [()]
    for options in per_broker:
        out = [prefix + (b,) for prefix in out for b in options]
    return {state._replace(brokers=brokers) for brokers in out}


class DirSymmetry:
    """A model's dir symmetry: its canonical form and the fingerprint up to it, with the model's own caches."""

    def __init__(self, model):
        self.canonical_broker = model.cached(canonical_broker)
        # A broker's digest up to dir symmetry, remembered by the concrete broker's value.
        self.canonical_digest = model.cached(lambda broker: digest(canonical_broker(broker)), limit=1 << 18)

    def canonical(self, state: State) -> State:
        return state._replace(brokers=tuple(self.canonical_broker(b) for b in state.brokers))

    def fingerprint_with(self, other_digest):
        """The fingerprint of canonical(state), the other components digested by ``other_digest``."""
        canonical_digest = self.canonical_digest
        return lambda state: component_fingerprint(canonical_digest, other_digest, state)
