"""What runs inside Spark's Python workers: one fused pass per partition per level, and path look-ups.

This module imports only the model, invariants.plugins, numpy and the standard library (never pyspark or the
CLI), so an executor needs nothing but Python, the model's packages and their few dependencies (docs/spark.md).

Records of a level's RDD (``out``), all partitioned by fingerprint:

- ``("V", blob)``: the partition's visited set, one record per partition: three numpy arrays sorted by
  fingerprint (fingerprint uint64, parent fingerprint uint64, action uint32), pickled together.
- ``("C", dest, blob)``: a block of candidate states for the next level, owned by partition ``dest``:
  fingerprints, parents, actions (numpy) and the states themselves (``encode_states``).

The shuffle turns each ``("C", dest, blob)`` into ``(dest, blob)`` in partition ``dest``; the next level's pass
reads its partition's ``V`` record and those blocks, and skips the ``C`` records its input still carries.
"""
from __future__ import annotations

import gc
import pickle
import resource
import time

import numpy as np

from invariants.plugins import Plugins
from model import Model
from model.state import State

U64 = np.uint64
U32 = np.uint32
NO_ACTION = 0xFFFFFFFF       # the initial state's action
CHUNK = 32768                # at most this many states per candidate block (bounds record sizes)
_PROTOCOL = 5
_EMPTY = (np.empty(0, U64), np.empty(0, U64), np.empty(0, U32))


def route(dest: int) -> int:
    """The partition function of the one partitioner: keys are already partition numbers (fp % partitions).

    Spark compares partitioners by this function's identity, so every shuffle and union that uses it agrees
    on where a fingerprint lives, and the visited set is never reshuffled."""
    return dest


def owner(fp: int, partitions: int) -> int:
    """The partition that owns a fingerprint."""
    return fp % partitions


def outgoing(record):
    """The previous level's candidate blocks, keyed by their owning partition (input of the shuffle)."""
    if record[0] == "C":
        return ((record[1], record[2]),)
    return ()


# ------------------------------------------------------------------------------------------------------
# A block of states: every value of a State field (and every element of a tuple-of-tuples field, such as the
# brokers) is stored once per block and referred to by index. Successors share most of their parts with
# their parent and with each other, so this is far smaller and faster than pickling the NamedTuples one by
# one (Python's pickle spends microseconds per NamedTuple). Only the State type's fields are used.
# ------------------------------------------------------------------------------------------------------

_tuple_new = tuple.__new__


def encode_states(states: list) -> bytes:
    if not states:
        return pickle.dumps((State, [], []), _PROTOCOL)
    width = len(states[0])
    tables = [dict() for _ in range(width)]
    by_id = [dict() for _ in range(width)]  # identity first: shared parts skip hashing (states are alive)
    rows = []

    def intern(i: int, v) -> int:
        table, ids = tables[i], by_id[i]
        k = ids.get(id(v))
        if k is None:
            k = table.get(v)
            if k is None:
                k = table[v] = len(table)
            ids[id(v)] = k
        return k

    for s in states:
        row = []
        for i, v in enumerate(s):
            if type(v) is tuple and v and isinstance(v[0], tuple):
                row.append(tuple(intern(i, e) for e in v))
            else:
                row.append(intern(i, v))
        rows.append(row)
    return pickle.dumps((type(states[0]), [list(t) for t in tables], rows), _PROTOCOL)


def decode_states(blob: bytes, which=None) -> list:
    """The states of a block (only those at the positions in ``which`` when given, in that order)."""
    cls, tables, rows = pickle.loads(blob)
    if which is not None:
        rows = [rows[i] for i in which]
    out = []
    for row in rows:
        values = []
        for table, r in zip(tables, row):
            values.append(tuple([table[k] for k in r]) if type(r) is tuple else table[r])
        out.append(_tuple_new(cls, values))
    return out


def pack_block(fps, parents, actions, states) -> bytes:
    return pickle.dumps((np.array(fps, dtype=U64), np.array(parents, dtype=U64), np.array(actions, dtype=U32),
                         encode_states(states)), _PROTOCOL)


def merge_sorted(old, new):
    """Merge two sorted, disjoint (fingerprint, parent, action) array triples into one (O(n))."""
    of, op, oa = old
    nf, np_, na = new
    if len(nf) == 0:
        return old
    if len(of) == 0:
        return new
    at = np.searchsorted(of, nf) + np.arange(len(nf))
    n = len(of) + len(nf)
    is_new = np.zeros(n, dtype=bool)
    is_new[at] = True
    rest = ~is_new
    out = []
    for a, b, dtype in ((of, nf, U64), (op, np_, U64), (oa, na, U32)):
        m = np.empty(n, dtype=dtype)
        m[at] = b
        m[rest] = a
        out.append(m)
    return tuple(out)


_MODELS: dict = {}


def model_for(model_key: tuple, features=(), invariants=()):
    """The model of a (configuration, symmetry, plugin feature names) key, built with those features and checked
    with the driver's invariants, and its action numbering (a pure function of the key). With symmetry the
    model fingerprints a canonical representative (model/symmetry.py), as on the driver."""
    entry = _MODELS.get(model_key)
    if entry is None:
        cfg, symmetry, _ = model_key
        model = Model(cfg, symmetry=symmetry, plugins=Plugins(features=tuple(features)), invariants=list(invariants))
        assert model.symmetry == symmetry, "the executor's model must reduce as the driver's does"
        index = {(ri, args): i for i, (ri, _rule, args) in enumerate(model.action_space)}
        entry = _MODELS[model_key] = (model, index)
    return entry


def _keep_min(best: dict, record: tuple) -> None:
    """Per invariant, the violation with the smallest (depth, target, parent, action): deterministic."""
    pos = record[4]
    current = best.get(pos)
    if current is None or record[:4] < current[:4]:
        best[pos] = record


class LevelPass:
    """The fused pass of one level on one partition.

    Reads the partition's visited set and the candidate blocks routed to it; keeps, per new fingerprint, the
    candidate with the smallest (parent, action); drops those already visited; merges the new ones into the
    visited set; checks the state (and, when quiescent, quiescent) invariants on each new state; expands it
    with ``Model.successors``, checking the transition invariants on every transition; fingerprints each
    successor (``Model.fingerprint``: up to symmetry where the model uses it) and routes it to its owner in
    blocks. Reports its counts through an accumulator keyed by (level, partition), so a retried task
    overwrites rather than adds.
    """

    def __init__(self, model_key, features, invariants, failed, level, partitions, expand, stats):
        self.model_key, self.features = model_key, features
        self.invariants = list(invariants)   # Invariant objects: checks travel by reference, plugins by value
        self.failed = frozenset(failed)
        self.level = level
        self.partitions = partitions
        self.expand = expand
        self.stats = stats                   # a pyspark accumulator of {(level, partition): stats}

    def __call__(self, index, records):
        started = time.perf_counter()
        gc_was_enabled = gc.isenabled()
        gc.disable()   # states are acyclic tuples: the cyclic collector only costs time here
        try:
            yield from self._run(index, records, started)
        finally:
            gc.freeze()   # what this worker keeps (the model, fingerprint memos) is never scanned again
            if gc_was_enabled:
                gc.enable()

    def _run(self, index, records, started):
        model, action_index = model_for(self.model_key, self.features, self.invariants)
        fingerprint = model.fingerprint
        visited_blob, incoming = None, []
        for record in records:
            tag = record[0]
            if tag == "V":
                visited_blob = record[1]
            elif tag != "C":           # "C": the previous level's outgoing blocks, already shuffled
                incoming.append(record[1])
        visited = pickle.loads(visited_blob) if visited_blob is not None else _EMPTY
        new_fps, new_parents, new_actions, new_states = self._select_new(visited[0], incoming)
        del incoming
        visited = merge_sorted(visited, (new_fps, new_parents, new_actions))
        visited_size = len(visited[0])
        yield ("V", pickle.dumps(visited, _PROTOCOL))
        del visited

        work_started = time.perf_counter()
        depth, partitions, failed = self.level, self.partitions, self.failed
        state_invs = [(k, i) for k, i in enumerate(self.invariants) if i.kind == "state" and i.id not in failed]
        quiescent_invs = [(k, i) for k, i in enumerate(self.invariants)
                          if i.kind == "quiescent" and i.id not in failed]
        transition_invs = [(k, i) for k, i in enumerate(self.invariants)
                           if i.kind == "transition" and i.id not in failed]
        coverage = [0] * len(model.rules)
        um_rule = model.rule_index["BrokerUpdateMetadata"]
        best: dict = {}
        generated = emitted = 0
        seen: set = set()
        out = [([], [], [], []) for _ in range(partitions)]
        for k, state in enumerate(new_states):
            fp = int(new_fps[k])
            if state_invs or quiescent_invs:
                checks = state_invs + quiescent_invs if quiescent_invs and model.is_quiescent(state) else state_invs
                for pos, inv in checks:
                    msg = inv.check(model, state)
                    if msg is not None:
                        _keep_min(best, (depth, fp, int(new_parents[k]), int(new_actions[k]), pos, msg))
            if not self.expand:
                continue
            for action, after in model.successors(state):
                generated += 1
                coverage[action.rule] += 1
                if action.settled:
                    coverage[um_rule] += len(action.settled)
                ai = action_index[(action.rule, action.args)]
                after_fp = fingerprint(after)
                for pos, inv in transition_invs:
                    msg = inv.check(model, state, action, after)
                    if msg is not None:
                        _keep_min(best, (depth + 1, after_fp, fp, ai, pos, msg))
                if after_fp in seen:   # first seen = smallest (parent, action) here: states go in fp order
                    continue
                seen.add(after_fp)
                dest = after_fp % partitions
                block = out[dest]
                block[0].append(after_fp)
                block[1].append(fp)
                block[2].append(ai)
                block[3].append(after)
                if len(block[0]) >= CHUNK:
                    emitted += len(block[0])
                    yield ("C", dest, pack_block(*block))
                    out[dest] = ([], [], [], [])
        del new_states, seen
        for dest, block in enumerate(out):
            if block[0]:
                emitted += len(block[0])
                yield ("C", dest, pack_block(*block))
        finished = time.perf_counter()
        self.stats.add({(self.level, index): {
            "new": int(len(new_fps)), "generated": generated, "emitted": emitted, "coverage": coverage,
            "violations": sorted(best.values()), "visited": visited_size,
            "seconds": finished - started, "work_seconds": finished - work_started,
            "worker_peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        }})

    @staticmethod
    def _select_new(visited_fps, incoming):
        """The new states among the incoming candidates, sorted by fingerprint, one per fingerprint."""
        if not incoming:
            return np.empty(0, U64), np.empty(0, U64), np.empty(0, U32), []
        blocks = [pickle.loads(b) for b in incoming]
        fps = np.concatenate([b[0] for b in blocks])
        parents = np.concatenate([b[1] for b in blocks])
        actions = np.concatenate([b[2] for b in blocks])
        sizes = [len(b[0]) for b in blocks]
        block_of = np.repeat(np.arange(len(blocks)), sizes)
        position = np.concatenate([np.arange(n) for n in sizes])
        order = np.lexsort((actions, parents, fps))        # by fingerprint, then parent, then action
        sorted_fps = fps[order]
        first = np.ones(len(order), dtype=bool)
        np.not_equal(sorted_fps[1:], sorted_fps[:-1], out=first[1:])
        chosen = order[first]
        if len(visited_fps):
            at = np.searchsorted(visited_fps, fps[chosen])
            at[at == len(visited_fps)] = 0
            chosen = chosen[visited_fps[at] != fps[chosen]]
        states = [None] * len(chosen)
        chosen_block = block_of[chosen]
        for b in np.unique(chosen_block):
            slots = np.nonzero(chosen_block == b)[0]
            for slot, state in zip(slots, decode_states(blocks[b][3], position[chosen[slots]].tolist())):
                states[slot] = state
        return fps[chosen], parents[chosen], actions[chosen], states


class Lookup:
    """The (parent fingerprint, action) of one fingerprint, read from its partition's visited set."""

    def __init__(self, fp: int):
        self.fp = fp

    def __call__(self, records):
        for record in records:
            if record[0] == "V":
                fps, parents, actions = pickle.loads(record[1])
                at = int(np.searchsorted(fps, U64(self.fp)))
                if at < len(fps) and int(fps[at]) == self.fp:
                    return [(int(parents[at]), int(actions[at]))]
        return []


class StatsParam:
    """pyspark's AccumulatorParam protocol (zero, addInPlace) for {(level, partition): stats}: the same key
    again (a retried or recomputed task) overwrites instead of adding."""

    def zero(self, value):
        return {}

    def addInPlace(self, value1, value2):
        value1.update(value2)
        return value1
