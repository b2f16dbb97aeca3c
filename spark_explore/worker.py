"""What runs inside Spark's Python workers: one fused pass per partition per level, and path look-ups.

This module imports only the kernel's engine machinery and state codec (model/spec/engine.py,
model/spec/codec.py), numpy and the standard library (never pyspark, the explorer or the CLI): the model is
rebuilt by a picklable function its caller gives (``rebuild``), so an executor
needs nothing but Python, the packages that spark_explore/package.py ships and their few dependencies
(docs/spark.md). Invariants are checked by the engine core's ``Checker`` and transitions counted by its
``TransitionCounts``, as in every other engine.

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

from model.spec.codec import PROTOCOL as _PROTOCOL, decode_states, encode_states
from model.spec.engine import Checker, TransitionCounts

U64 = np.uint64
U32 = np.uint32
NO_ACTION = 0xFFFFFFFF       # the initial state's action
CHUNK = 32768                # at most this many states per candidate block (bounds record sizes)
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
_CHECKERS: dict = {}


def checker_for(model, model_key: tuple, invariants: list) -> Checker:
    """The engine core's Checker for the model of a key and a selection of invariants, kept across levels (its
    per-member results are memoised by value, and members recur from level to level)."""
    key = (model_key, tuple(inv.id for inv in invariants))
    checker = _CHECKERS.get(key)
    if checker is None:
        checker = _CHECKERS[key] = Checker(model, invariants)
    return checker


def model_for(model_key: tuple, rebuild):
    """The model of a (configuration, symmetry, plugin feature names) key, built by ``rebuild()`` (the driver's
    model: with its features, checked with its invariants), and its action numbering (a pure function of the
    key). With symmetry the model fingerprints a canonical representative (model/spec/symmetry.py), as on the
    driver."""
    entry = _MODELS.get(model_key)
    if entry is None:
        _cfg, symmetry, _ = model_key
        model = rebuild()
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

    def __init__(self, model_key, rebuild, invariants, failed, level, partitions, expand, stats, cap=None):
        self.model_key, self.rebuild = model_key, rebuild
        self.cap = cap                       # keep only new states with a fingerprint <= cap (exact --max-states)
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
        model, action_index = model_for(self.model_key, self.rebuild)
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
        if self.cap is not None:
            new_fps, new_parents, new_actions, new_states = _at_most(self.cap, new_fps, new_parents, new_actions,
                                                                     new_states)
        visited = merge_sorted(visited, (new_fps, new_parents, new_actions))
        visited_size = len(visited[0])
        yield ("V", pickle.dumps(visited, _PROTOCOL))
        del visited

        work_started = time.perf_counter()
        depth, partitions = self.level, self.partitions
        checker = checker_for(model, self.model_key, self.invariants)
        checker.failed = set(self.failed)
        pos_of = {inv.id: k for k, inv in enumerate(self.invariants)}
        check_state = checker.check_state if checker.state_invs or checker.quiescent_invs else None
        check_transition = checker.check_transition if checker.transition_invs else None
        counts = TransitionCounts(model)
        count = counts.count
        best: dict = {}
        emitted = 0
        seen: set = set()
        out = [([], [], [], []) for _ in range(partitions)]
        for k, state in enumerate(new_states):
            fp = int(new_fps[k])
            if check_state is not None:
                for inv, msg in check_state(state):
                    _keep_min(best, (depth, fp, int(new_parents[k]), int(new_actions[k]), pos_of[inv.id], msg))
            if not self.expand:
                continue
            for action, after in model.successors(state):
                count(action)
                ai = action_index[(action.rule, action.args)]
                after_fp = fingerprint(after)
                if check_transition is not None:
                    for inv, msg in check_transition(state, action, after):
                        _keep_min(best, (depth + 1, after_fp, fp, ai, pos_of[inv.id], msg))
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
            "new": int(len(new_fps)), "generated": counts.generated, "emitted": emitted,
            "coverage": counts.coverage,
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


def _at_most(cap: int, fps, parents, actions, states):
    """The new states whose fingerprint is at most ``cap`` (``fps`` is sorted)."""
    n = int(np.searchsorted(fps, U64(cap), side="right"))
    return fps[:n], parents[:n], actions[:n], states[:n]


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
