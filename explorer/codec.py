"""Compact blocks of states, for the engines that move states between processes: the multi-process BFS (load
balancing, explorer/parallel.py) and the Spark engine (candidate blocks, spark_explore/worker.py).

Each field value of the State tuple (and each element of a field that is a tuple of tuples, such as the
brokers) is stored once per block and referred to by index. Successors share most parts with their parent and
with each other, so a block is a fraction of the size of a pickled list of states, and it unpickles about five
times faster (no NamedTuple constructor calls for shared parts). Generic over the State's fields; imports
nothing but the standard library.
"""
from __future__ import annotations

import pickle

PROTOCOL = 5                 # the same on every Python the engines run on (3.8+)
_tuple_new = tuple.__new__


def encode_states(states: list) -> bytes:
    """One block holding ``states`` (all of one NamedTuple type)."""
    if not states:
        return pickle.dumps((None, [], []), PROTOCOL)
    width = len(states[0])
    tables = [{} for _ in range(width)]
    by_id = [{} for _ in range(width)]      # identity first: shared parts are not hashed again (states are alive)

    def intern(i: int, v) -> int:
        ids = by_id[i]
        k = ids.get(id(v))
        if k is None:
            table = tables[i]
            k = table.get(v)
            if k is None:
                k = table[v] = len(table)
            ids[id(v)] = k
        return k

    rows = []
    for s in states:
        row = []
        for i, v in enumerate(s):
            if type(v) is tuple and v and isinstance(v[0], tuple):
                row.append(tuple([intern(i, e) for e in v]))
            else:
                row.append(intern(i, v))
        rows.append(row)
    return pickle.dumps((type(states[0]), [list(t) for t in tables], rows), PROTOCOL)


def decode_states(blob: bytes, which=None, loads=pickle.loads) -> list:
    """The states of a block (only those at the positions in ``which`` when given, in that order); ``loads``:
    the unpickling function (explorer/checkpoint.py passes a restricted one)."""
    cls, tables, rows = loads(blob)
    if which is not None:
        rows = [rows[i] for i in which]
    out = []
    for row in rows:
        out.append(_tuple_new(cls, [tuple([table[k] for k in r]) if type(r) is tuple else table[r]
                                    for table, r in zip(tables, row)]))
    return out
