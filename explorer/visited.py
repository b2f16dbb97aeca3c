"""Compact BFS bookkeeping: the visited set as bare 64-bit fingerprints, parent links as two small integers.

Per distinct state the explorer keeps 8 bytes of fingerprint (a sorted numpy ``uint64`` array, merged once per
BFS level), a 4-byte parent index and a 2-byte action id (``array.array``, indexed by the order in which BFS
discovered the states: index 0 is the initial state). A trace is re-derived by following the parent indices
back to the initial state and replaying the actions with the model (``search.rebuild_trace``). Only the
current frontier is kept as state objects.

Also here: the action numbering shared by the engines, memory measurement and ``--max-memory`` sizes.
"""
from __future__ import annotations

import os
import re
import resource
import sys
from array import array

import numpy as np

from model.spec.model import Action, Model

U64 = np.uint64
NO_PARENT = 0xFFFFFFFF


class FingerprintSet:
    """A set of 64-bit fingerprints as one sorted numpy array: batched look-ups, one merge per level."""

    def __init__(self):
        self.fps = np.empty(0, dtype=U64)

    def __len__(self) -> int:
        return len(self.fps)

    @property
    def nbytes(self) -> int:
        return self.fps.nbytes

    def contains(self, query: np.ndarray) -> np.ndarray:
        """A boolean array: which of ``query`` (uint64) are in the set."""
        fps = self.fps
        if len(fps) == 0 or len(query) == 0:
            return np.zeros(len(query), dtype=bool)
        at = np.searchsorted(fps, query)
        at[at == len(fps)] = 0
        return fps[at] == query

    def merge(self, new: np.ndarray) -> None:
        """Add fingerprints that are not in the set yet (``new``: uint64, sorted, no duplicates): O(n + m log n)."""
        if len(new) == 0:
            return
        old = self.fps
        if len(old) == 0:
            self.fps = np.array(new, dtype=U64)
            return
        at = np.searchsorted(old, new) + np.arange(len(new))
        merged = np.empty(len(old) + len(new), dtype=U64)
        is_new = np.zeros(len(merged), dtype=bool)
        is_new[at] = True
        merged[at] = new
        merged[~is_new] = old
        self.fps = merged

    def add_unsorted(self, values) -> None:
        """Add fingerprints (any iterable of ints, none in the set yet, no duplicates)."""
        arr = np.fromiter(values, dtype=U64)
        arr.sort()
        self.merge(arr)


class ActionIndex:
    """Numbers the model's actions: id = position in ``model.action_space``."""

    def __init__(self, model: Model):
        self.space = model.action_space
        self.ids = {(ri, args): i for i, (ri, _rule, args) in enumerate(self.space)}
        self.typecode = "H" if len(self.space) < 0xFFFF else "I"

    def id(self, action: Action) -> int:
        return self.ids[(action.rule, action.args)]

    def action(self, aid: int) -> Action:
        ri, _rule, args = self.space[aid]
        # mypy reads Action's `__repr__ = tuple.__repr__` (model/spec/model.py) as one more field
        return Action(ri, args)  # type: ignore[call-arg]


class ParentTable:
    """Per state, in discovery order: the index of its BFS parent and the id of the action that reached it."""

    def __init__(self, actions: ActionIndex):
        self.actions = actions
        self.parent = array("I", [NO_PARENT])     # index 0: the initial state
        self.action = array(actions.typecode, [0])

    def __len__(self) -> int:
        return len(self.parent)

    def append(self, parent: int, aid: int) -> int:
        self.parent.append(parent)
        self.action.append(aid)
        return len(self.parent) - 1

    def extend(self, parents: np.ndarray, aids: np.ndarray) -> None:
        if len(self.parent) + len(parents) >= NO_PARENT:
            raise OverflowError("more than 4,294,967,294 distinct states: beyond the parent table's 32-bit indices")
        self.parent.frombytes(np.ascontiguousarray(parents, dtype=np.uint32).tobytes())
        dtype = np.uint16 if self.action.typecode == "H" else np.uint32
        self.action.frombytes(np.ascontiguousarray(aids, dtype=dtype).tobytes())

    def path(self, index: int) -> list[Action]:
        """The actions from the initial state to state ``index``."""
        out = []
        while self.parent[index] != NO_PARENT:
            out.append(self.actions.action(self.action[index]))
            index = self.parent[index]
        return out[::-1]

    @property
    def nbytes(self) -> int:
        """Allocated bytes of the two arrays (including array.array's over-allocation)."""
        return sys.getsizeof(self.parent) + sys.getsizeof(self.action)


# ---- memory ---------------------------------------------------------------------------------------------------

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(i?b)?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_size(text: str) -> int:
    """``512M``, ``2G``, ``1.5g``, ``300MB``, ``4096`` (bytes) -> bytes (K, M, G, T are powers of 1024).
    Raises ValueError for anything else, zero included."""
    m = _SIZE.match(text or "")
    if m is None:
        raise ValueError(text)
    number = float(m.group(1)) * _UNITS[m.group(2).lower()]
    if not 0 < number < 1 << 63:    # also inf: a number of thousands of digits
        raise ValueError(text)
    value = int(number)
    if value <= 0:
        raise ValueError(text)
    return value


def format_size(n: int) -> str:
    return f"{n / (1 << 20):,.0f} MB"


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def process_memory(pid: int | str = "self", proportional: bool = False) -> int:
    """Bytes of memory a process uses: its resident set size, or with ``proportional`` its proportional set
    size (pages shared with the processes it forked or was forked from are divided among them, so a sum over
    a parent and its workers counts each page once). Falls back to the resident size, or to the peak so far
    where /proc is missing."""
    if proportional:
        try:
            with open(f"/proc/{pid}/smaps_rollup", "rb") as f:
                for line in f:
                    if line.startswith(b"Pss:"):
                        return int(line.split()[1]) * 1024
        except OSError:
            pass
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE
    except OSError:
        pass
    return peak_rss() if pid == "self" else 0


def peak_rss() -> int:
    """This process's peak resident set size in bytes."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024
