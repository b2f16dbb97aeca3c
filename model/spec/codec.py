"""Compact blocks of states, for the engines that move states between processes: the multi-process BFS (load
balancing, explorer/parallel.py), the Spark engine (candidate blocks, spark_explore/worker.py) and checkpoints.

A block is stored column by column: per field of the State tuple, a table of its distinct values and a numpy
array of indices into it, one per state (a field that is a tuple of tuples, such as a tuple of per-member
records, is stored element by element: a table of distinct elements and a states x elements index array).
Successors share most parts with their parent and with each other, so a block is a fraction of the size of a
pickled list of states; encoding and decoding run mostly in C (``map``, ``zip``, numpy) rather than one Python
step per field and state.

**Interning.** Every component that goes through the codec (an element of such a field, a field value) is
mapped to one canonical object per value in this process: the first one it encoded or decoded. So the states
decoded in a worker share their components with each other and with the states it generated, and the model's
memo caches (``Model.cached``, model/spec/memo.py), which are keyed by value, find them by identity instead of comparing
a fresh copy field by field. Each table is bounded (cleared when full, like the memos). Sound for the same
reason as the memos: the model never puts equal values of different types in one field (tests/kernel/test_memo.py).

Generic over the State's fields; imports nothing but the standard library and numpy.
"""
from __future__ import annotations

import pickle
from functools import partial
from itertools import chain

import numpy as np

PROTOCOL = 5                 # the same on every Python the engines run on (3.8+)
INTERN_LIMIT = 1 << 17       # canonical components kept per field (and per kind: whole values, elements)
_tuple_new = tuple.__new__
_FLAT = -1                   # a column of whole values (else: the width of a column of tuples, element-wise)


class Interner:
    """This process's one copy of each component (its canonical object), per (field, kind), and its encoding;
    bounded (cleared when full, like the memos).

    A canonical object is recognised by identity (the tables keep their objects alive, so an id in them cannot be
    reused); another object by value (its hash: as the memos do), and it is encoded (pickled) only the first time
    its value is met. A received encoding already seen is not decoded again. Two encodings of one value (pickle's
    sharing of sub-objects can give two) lead to the same canonical object."""

    def __init__(self, limit: int = INTERN_LIMIT):
        self.limit = limit
        self.tables: dict = {}   # key -> (canonical object by value, encoding by its id, canonical object by encoding)

    def _tables(self, key, incoming: int) -> tuple[dict, dict, dict]:
        tables = self.tables.get(key)
        if tables is None or len(tables[2]) + incoming > self.limit:
            tables = self.tables[key] = ({}, {}, {})
        return tables

    def encode(self, key, values) -> list[bytes]:
        """The encoding of each of ``values``."""
        by_value, blob_of, by_blob = self._tables(key, len(values))
        blobs = list(map(blob_of.get, map(id, values)))
        if None in blobs:
            setdefault = by_value.setdefault
            for k, v in enumerate(values):
                if blobs[k] is None:
                    c = setdefault(v, v)
                    blob = blob_of.get(id(c))
                    if blob is None:
                        blob = blob_of[id(c)] = pickle.dumps(c, PROTOCOL)
                        by_blob[blob] = c
                    blobs[k] = blob
        return blobs

    def decode(self, key, blobs, loads=pickle.loads) -> list:
        """The canonical object of each encoding (``loads``: the unpickling function)."""
        by_value, blob_of, by_blob = self._tables(key, len(blobs))
        found = list(map(by_blob.get, blobs))
        if None in found:
            setdefault = by_value.setdefault
            for k, blob in enumerate(blobs):
                if found[k] is None:
                    v = loads(blob)
                    c = found[k] = by_blob[blob] = setdefault(v, v)
                    blob_of.setdefault(id(c), blob)
        return found


INTERNED = Interner()         # this process's (a forked BFS worker starts with a copy of its parent's)


def _nested_width(column: tuple) -> int:
    """The common length of a column whose values are all non-empty tuples of tuples (per-member records);
    _FLAT otherwise."""
    first = column[0]
    if type(first) is not tuple or not first or not isinstance(first[0], tuple):
        return _FLAT
    width = len(first)
    if set(map(type, column)) != {tuple} or set(map(len, column)) != {width}:
        return _FLAT
    if not all(issubclass(t, tuple) for t in set(map(type, chain.from_iterable(column)))):
        return _FLAT
    return width


def _index(key, values) -> tuple[list, np.ndarray]:
    """A table of the distinct values' encodings and each value's index in it."""
    ids = list(map(id, values))
    distinct = dict(zip(ids, values))     # by identity first: each object is looked up once (the states are alive)
    blobs = INTERNED.encode(key, list(distinct.values()))
    table = list(dict.fromkeys(blobs))                   # equal encodings share one slot
    slot_of = dict(zip(table, range(len(table))))
    index_of_id = dict(zip(distinct, map(slot_of.__getitem__, blobs)))
    index = np.fromiter(map(index_of_id.__getitem__, ids), dtype=np.uint32, count=len(ids))
    return table, index


def encode_states(states: list) -> bytes:
    """One block holding ``states`` (all of one NamedTuple type)."""
    if not states:
        return pickle.dumps((None, 0, []), PROTOCOL)
    columns = []
    for i, column in enumerate(zip(*states)):
        width = _nested_width(column)
        values = column if width == _FLAT else list(chain.from_iterable(column))
        table, index = _index((i, width == _FLAT), values)
        columns.append((width, table, index))
    return pickle.dumps((type(states[0]), len(states), columns), PROTOCOL)


def decode_states(blob: bytes, which=None, loads=pickle.loads) -> list:
    """The states of a block (only those at the positions in ``which`` when given, in that order); ``loads``:
    the unpickling function, of the block and of each component (explorer/checkpoint.py passes a restricted one)."""
    cls, n, columns = loads(blob)
    if not n:
        return []
    which = None if which is None else np.asarray(which, dtype=np.int64)
    fields = []
    for i, (width, table, index) in enumerate(columns):
        table = INTERNED.decode((i, width == _FLAT), table, loads)
        if width != _FLAT:
            index = index.reshape(n, width)
        if which is not None:
            index = index[which]
        values = list(map(table.__getitem__, index.ravel().tolist()))
        fields.append(values if width == _FLAT else list(zip(*[iter(values)] * width)))
    return list(map(partial(_tuple_new, cls), zip(*fields)))
