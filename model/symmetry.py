"""Symmetry reduction: the log dirs of a broker are interchangeable.

No rule names a dir except through its status and the logs it holds, with one exception: LogManager picks
the lowest-numbered of the equally loaded good dirs for a new log. That choice is symmetric in the orbit
sense whenever the tied dirs hold nothing that tells them apart, which is the case when a configuration has
one partition, or two dirs and at most two partitions (docs/model.md, "Symmetry"): a new log is created only
for a partition with no live copy, so two tied good dirs are then both empty. Brokers are not
interchangeable: the assignment order decides elections.

The reduced search dedups states by the fingerprint of a canonical representative: each broker's dirs
sorted by (status, the partitions they hold). It explores the concrete state it met first, so traces stay
real paths.
"""
from __future__ import annotations

from itertools import permutations

from .memo import by_value
from .state import Broker, State, digest, fingerprint_of


def dir_symmetry_sound(cfg) -> bool:
    # With KIP-928's disk space a dir also has its units in use and its reserved file, which the canonical
    # form does not permute: no reduction then.
    return cfg.dirs > 1 and not cfg.saturation and (cfg.partitions == 1 or (cfg.dirs == 2 and cfg.partitions <= 2))


def _canonical_broker(broker: Broker) -> Broker:
    dirs, copies = broker.dirs, broker.copies
    if len(dirs) == 2:
        # The common case without building columns: swap when dir 1's column sorts before dir 0's.
        c0 = (dirs[0], tuple(c & 1 for c in copies))
        c1 = (dirs[1], tuple(c >> 1 & 1 for c in copies))
        if c1 < c0:
            return broker._replace(dirs=(dirs[1], dirs[0]), copies=tuple((c & 1) << 1 | (c >> 1 & 1) for c in copies))
        return broker
    order = sorted(range(len(dirs)), key=lambda d: (dirs[d], tuple(c >> d & 1 for c in copies)))
    if order == list(range(len(dirs))):
        return broker
    return permute_dirs(broker, order)


def permute_dirs(broker: Broker, order) -> Broker:
    """The broker with new dir i being old dir order[i]."""
    dirs = tuple(broker.dirs[d] for d in order)
    copies = tuple(sum((c >> d & 1) << i for i, d in enumerate(order)) for c in broker.copies)
    return broker._replace(dirs=dirs, copies=copies)


canonical_broker = by_value(_canonical_broker, 1 << 16)


def canonical(state: State) -> State:
    brokers = tuple(canonical_broker(b) for b in state.brokers)
    return state._replace(brokers=brokers)


# A broker's digest up to dir symmetry, remembered by the concrete broker's value.
canonical_digest = by_value(lambda broker: digest(_canonical_broker(broker)), 1 << 18)


def canonical_fingerprint(state: State) -> int:
    """The fingerprint of canonical(state)."""
    return fingerprint_of(canonical_digest, state)


def orbit(state: State) -> set:
    """Every state reachable from this one by permuting each broker's dirs (for checks on small models)."""
    per_broker = [
        {permute_dirs(b, order) for order in permutations(range(len(b.dirs)))} for b in state.brokers
    ]
    out = [()]
    for options in per_broker:
        out = [prefix + (b,) for prefix in out for b in options]
    return {state._replace(brokers=brokers) for brokers in out}
