"""Checkpoints of the BFS engines: ``explore --checkpoint PATH`` writes one, ``--resume PATH`` continues from it
(docs/cli.md, "Checkpoint and resume").

A checkpoint is the search at the start of a BFS level (a *level boundary*): the visited fingerprints, the
parent links of every distinct state (explorer/visited.py ``ParentTable``: parent index and action id), the
frontier's states in BFS order, the depth, the transition counts and per-rule coverage, the invariants already
violated and their violations (as action ids: the traces are replayed on resume). Every engine counts exactly
from a level boundary, so a resumed search ends with the same counts, depth, coverage and violations (with the
same traces) as one that never stopped, on any number of workers. A search stopped inside a level (an
interrupt, --max-states, --max-memory) writes the boundary of that level: the level is expanded again.

It also records the model configuration (``identity``) and the jbodcheck version: resuming under anything else
is refused (``CheckpointError``, exit 2, one line naming the difference).

The file: ``MAGIC``, the header's length (8 bytes, little-endian), the header (JSON: format, identity, the
search's figures, the sections' encodings, lengths and SHA-256), the header's SHA-256 (32 bytes), then the
sections. It is written atomically (explorer/outputs.py). Reading checks the magic, every length and checksum
and the arrays' consistency before anything is used; a compressed section is inflated only up to the size its
contents can have (``_inflate``); the header's figures are checked against the data they describe (the depth
against the parent links, the transitions against the coverage and the states found, the invariants failed
against the violations: a header edited with its checksum recomputed is refused, not resumed with wrong
figures); the frontier's states are unpickled with a restricted unpickler that builds only the model's state
types.
"""
from __future__ import annotations

import hashlib
import io
import json
import pickle
import struct
import sys
import time
import zlib
from array import array

import attrs
import numpy as np

from model.spec.codec import decode_states, encode_states
from model.spec.engine import Violation, rebuild_trace
from model.spec.model import Model

from . import __version__
from .core import Run
from .errors import OutputError
from .outputs import write_bytes
from .visited import NO_PARENT, ActionIndex, ParentTable

FORMAT = 1
MAGIC = b"JBODCHECK-CHECKPOINT\n"
MAX_HEADER = 64 << 20          # bytes: a header is a few KB (violations' action ids at most)
FRONTIER_CHUNK = 1 << 16       # frontier states per encoded block
# A frontier section inflates to at most this (its states are a few hundred bytes each, a single state's block
# about 1.4 KB: a zlib bomb is refused before it is inflated in full).
FRONTIER_BYTES = (1 << 20, 16 << 10)     # (bytes, bytes per frontier state)
DEFAULT_EVERY_S = 300.0
_LENGTH = struct.Struct("<Q")
_DIGEST = 32


class CheckpointError(Exception):
    """A checkpoint that cannot be used: not a checkpoint, corrupt or truncated, or of another configuration or
    version. One line; the CLI exits 2."""


# ---- what a checkpoint holds ------------------------------------------------------------------------------

@attrs.define
class Snapshot:
    """The search at a level boundary."""
    depth: int                  # the frontier's depth
    generated: int              # transitions generated before this level
    coverage: list              # per rule (the model's rule order), before this level
    failed: list                # ids of the invariants already violated
    violations: list            # [(invariant id, message, [action ids of the trace])]
    parents: np.ndarray         # uint32, per distinct state in discovery order (0: the initial state)
    actions: np.ndarray         # uint16 or uint32 action ids, same order
    fingerprints: np.ndarray    # uint64, sorted: the visited set (the frontier included)
    frontier: list              # [(positions: int64 array, codec block of the states at those positions)]
    frontier_size: int          # the frontier is the last frontier_size states of the parent links
    elapsed_s: float            # the search's time up to this boundary
    workers: int = 1            # of the run that wrote it (information only)
    states: list | None = None  # read from a file: the frontier's states in BFS order (the blocks decoded)
    # read from a file whose state types this process has not built yet (a model's record types exist once the
    # model is built: model/spec/schema.py record_type): the blocks, decoded by check_fits
    encoded: tuple | None = None

    @property
    def distinct(self) -> int:
        return len(self.parents)


def _decode_frontier(blocks: list, size: int) -> list:
    """The states of the frontier ``blocks`` in BFS order (position 0 first)."""
    out: list = [None] * size
    for positions, block in blocks:
        states = decode_states(block, loads=_restricted_loads)
        if len(states) != len(positions):
            raise ValueError("a frontier block's states and positions disagree")
        for p, state in zip(positions.tolist(), states):
            out[p] = state
    return out


@attrs.define
class LevelMark:
    """A run's figures at the start of a level: what a checkpoint of that level's boundary records."""
    depth: int
    distinct: int
    frontier_size: int
    generated: int
    coverage: list
    violations: int
    failed: frozenset
    elapsed_s: float

    @classmethod
    def of(cls, run: Run, depth: int, distinct: int, frontier_size: int) -> "LevelMark":
        return cls(depth, distinct, frontier_size, run.generated, list(run.coverage), len(run.violations),
                   frozenset(run.checker.failed), time.monotonic() - run.start)

    def snapshot(self, run: Run, table: ParentTable, fingerprints: np.ndarray, frontier: list,
                 workers: int) -> Snapshot:
        """The snapshot of this boundary: ``table`` and ``run`` may have gone further (their first entries
        are taken), ``fingerprints`` and ``frontier`` must be the boundary's."""
        actions = table.actions
        dtype = np.uint16 if table.action.typecode == "H" else np.uint32
        violations = [(v.invariant.id, v.message, [actions.id(a) for a, _ in v.trace[1:]])
                      for v in run.violations[:self.violations]]
        return Snapshot(self.depth, self.generated, list(self.coverage), sorted(self.failed), violations,
                        np.frombuffer(table.parent, dtype=np.uint32, count=self.distinct).copy(),
                        np.frombuffer(table.action, dtype=dtype, count=self.distinct).copy(),
                        fingerprints, frontier, self.frontier_size, round(self.elapsed_s, 3), workers)


def frontier_blocks(states: list, positions=None) -> list:
    """The frontier part ``states`` (at ``positions``, default 0, 1, ...) as encoded blocks."""
    positions = np.arange(len(states), dtype=np.int64) if positions is None else np.asarray(positions, np.int64)
    return [(positions[i:i + FRONTIER_CHUNK], encode_states(states[i:i + FRONTIER_CHUNK]))
            for i in range(0, len(states), FRONTIER_CHUNK)]


def restore(run: Run, snapshot: Snapshot, actions: ActionIndex) -> ParentTable:
    """Set ``run``'s counts, violations and clock to the snapshot's; returns its parent links."""
    run.generated = snapshot.generated
    run.coverage = list(snapshot.coverage)
    run.checker.failed = set(snapshot.failed)
    by_id = {i.id: i for i in run.checker.state_invs + run.checker.quiescent_invs + run.checker.transition_invs}
    run.violations = [Violation(by_id[inv], message, rebuild_trace(run.model, [actions.action(a) for a in aids]))
                      for inv, message, aids in snapshot.violations]
    run.start -= snapshot.elapsed_s
    table = ParentTable(actions)
    table.parent = array("I", snapshot.parents.astype(np.uint32).tobytes())
    table.action = array(actions.typecode, snapshot.actions.astype(
        np.uint16 if actions.typecode == "H" else np.uint32).tobytes())
    return table


# ---- the configuration a checkpoint belongs to ---------------------------------------------------------------

def identity(model: Model, all_violations: bool, por: bool = False) -> dict:
    """Everything that decides a search's states and results, JSON-ready (the worker count and the bounds
    --max-depth and --max-states do not: a checkpoint is a level boundary, the same for all of them)."""
    init = model.init_states()[0]
    return {
        "jbodcheck": __version__,
        "model": model.cfg.as_dict(),
        "design": model.design.name,
        "features": [f.name for f in model.features],
        "symmetry": model.symmetry,
        "invariants": [i.id for i in model.invariants],
        "all_violations": all_violations,
        "por": por,
        "rules": [r.name for r in model.rules],
        "actions": len(model.action_space),
        "initial fingerprint": f"{model.fingerprint(init):016x}",
    }


_LABELS = {"design": "the design", "features": "the features", "symmetry": "symmetry reduction",
           "invariants": "the invariants checked", "all_violations": "--all-violations", "por": "--por",
           "rules": "the rules", "actions": "the number of actions",
           "initial fingerprint": "the initial state's fingerprint"}


def check_identity(path: str, theirs: dict, ours: dict) -> None:
    """Refuse a checkpoint of another version or configuration: CheckpointError naming the first difference."""
    ours = json.loads(json.dumps(ours))
    if theirs.get("jbodcheck") != ours["jbodcheck"]:
        raise CheckpointError(f"{path} was written by jbodcheck {_show(theirs.get('jbodcheck'))}, this is "
                              f"jbodcheck {ours['jbodcheck']}: resume it with that version")
    differences = [(f"--{k.replace('_', '-')}" if k != "options" else "--option", theirs_v, v)
                   for k, v in ours["model"].items()
                   if (theirs_v := (theirs.get("model") or {}).get(k, "(absent)")) != v]
    differences += [(_LABELS.get(k, k), theirs.get(k, "(absent)"), v)
                    for k, v in ours.items() if k not in ("jbodcheck", "model") and theirs.get(k) != v]
    if differences:
        what, there, here = differences[0]
        raise CheckpointError(f"{path} is a checkpoint of another configuration: {what} is {_show(there)} there, "
                              f"{_show(here)} here (resume with the options that wrote it)")


def check_bounds(path: str, snapshot: Snapshot, max_depth: int | None, max_states: int | None) -> None:
    """A resumed search honours --max-depth and --max-states as totals: refuse a checkpoint already past them."""
    if max_depth is not None and snapshot.depth > max_depth:
        raise CheckpointError(f"{path} is at depth {snapshot.depth}, beyond --max-depth {max_depth}")
    if max_states is not None and snapshot.distinct >= max_states:
        raise CheckpointError(f"{path} already holds {snapshot.distinct:,} distinct states, not fewer than "
                              f"--max-states {max_states:,}")


def _show(value) -> str:
    text = json.dumps(value) if not isinstance(value, str) else value
    return text if len(text) <= 80 else text[:77] + "..."


# ---- the file --------------------------------------------------------------------------------------------------

def _sections(snapshot: Snapshot) -> list[tuple[str, str, str, bytes]]:
    """(name, dtype, codec, bytes) of the arrays: parent indices as differences (small, they compress)."""
    parents = snapshot.parents.astype(np.int64)
    parent_steps = np.diff(parents, prepend=np.int64(0)).astype("<i8") if len(parents) else parents
    blocks = snapshot.frontier or frontier_blocks(snapshot.states or [])      # a snapshot read from a file
    frontier = pickle.dumps([(p.astype("<i8").tobytes(), block) for p, block in blocks], 5)
    return [
        ("fingerprints", "<u8", "raw", snapshot.fingerprints.astype("<u8").tobytes()),
        ("parents", "<i8", "delta-zlib", zlib.compress(parent_steps.tobytes(), 1)),
        ("actions", snapshot.actions.dtype.newbyteorder("<").str, "zlib",
         zlib.compress(snapshot.actions.astype(snapshot.actions.dtype.newbyteorder("<")).tobytes(), 1)),
        ("frontier", "pickle", "zlib", zlib.compress(frontier, 1)),
    ]


def write(path: str, ident: dict, snapshot: Snapshot) -> None:
    """Write the checkpoint atomically; OutputError (one line) when it cannot be written."""
    sections = _sections(snapshot)
    header = json.dumps({
        "format": FORMAT,
        "identity": ident,
        "search": {"depth": snapshot.depth, "distinct": snapshot.distinct, "frontier": snapshot.frontier_size,
                   "generated": snapshot.generated, "coverage": snapshot.coverage, "failed": snapshot.failed,
                   "violations": [{"invariant": i, "message": m, "actions": a} for i, m, a in snapshot.violations],
                   "elapsed_s": snapshot.elapsed_s, "workers": snapshot.workers},
        "sections": [{"name": n, "dtype": d, "codec": c, "bytes": len(b), "sha256": hashlib.sha256(b).hexdigest()}
                     for n, d, c, b in sections],
    }).encode("utf-8")
    write_bytes(path, [MAGIC, _LENGTH.pack(len(header)), header, hashlib.sha256(header).digest(),
                       *(b for *_, b in sections)], "the checkpoint")


@attrs.define
class Checkpoint:
    identity: dict
    snapshot: Snapshot


def read(path: str) -> Checkpoint:
    """Read and check a checkpoint; CheckpointError (one line) for anything but a whole, consistent one."""
    try:
        with open(path, "rb") as f:
            return _read(path, f)
    except OSError as e:
        raise CheckpointError(f"cannot read the checkpoint {path}: {e.strerror or e}") from None


def _corrupt(path: str, why: str) -> CheckpointError:
    return CheckpointError(f"{path} is a damaged checkpoint ({why}): it cannot be resumed")


def _read(path: str, f) -> Checkpoint:
    if f.read(len(MAGIC)) != MAGIC:
        raise CheckpointError(f"{path} is not a jbodcheck checkpoint")
    raw = f.read(_LENGTH.size)
    if len(raw) < _LENGTH.size:
        raise _corrupt(path, "truncated")
    (length,) = _LENGTH.unpack(raw)
    if length > MAX_HEADER:
        raise _corrupt(path, "its header length is implausible")
    header_bytes, digest = f.read(length), f.read(_DIGEST)
    if len(header_bytes) < length or len(digest) < _DIGEST:
        raise _corrupt(path, "truncated")
    if hashlib.sha256(header_bytes).digest() != digest:
        raise _corrupt(path, "its header's checksum does not match")
    try:
        header = json.loads(header_bytes.decode("utf-8"))
    except (ValueError, RecursionError):
        raise _corrupt(path, "its header is not JSON") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        fmt = header.get("format") if isinstance(header, dict) else None
        raise CheckpointError(f"{path} is a checkpoint in format {_show(fmt)}; this jbodcheck "
                              f"({__version__}) reads format {FORMAT}")
    try:
        sections = {}
        for s in header["sections"]:
            data = f.read(s["bytes"])
            if len(data) < s["bytes"]:
                raise _corrupt(path, "truncated")
            if hashlib.sha256(data).hexdigest() != s["sha256"]:
                raise _corrupt(path, f"the checksum of its {s['name']} does not match")
            sections[s["name"]] = (s, data)
        if f.read(1):
            raise _corrupt(path, "bytes after its last section")
        return Checkpoint(header["identity"], _snapshot(header["search"], sections))
    except CheckpointError:
        raise
    except Exception as e:  # noqa: BLE001 - any inconsistency in a file that passed its checksums
        raise _corrupt(path, f"{type(e).__name__}: {' '.join(str(e).split())[:120]}") from None


def _inflate(data: bytes, limit: int, name: str) -> bytes:
    """The zlib stream ``data`` inflated, refused (ValueError) as soon as it would exceed ``limit`` bytes."""
    inflater = zlib.decompressobj()
    out = inflater.decompress(data, limit + 1)
    if len(out) > limit or inflater.unconsumed_tail:
        raise ValueError(f"its {name} inflate to more than the {limit:,} bytes they can hold")
    out += inflater.flush()
    if not inflater.eof or len(out) > limit:
        raise ValueError(f"its {name} are not a whole zlib stream of at most {limit:,} bytes")
    return out


def _array(sections: dict, name: str, count: int | None = None) -> np.ndarray:
    """A section's array; a compressed one holds ``count`` values (the raw fingerprints' count), no more."""
    s, data = sections[name]
    if s["codec"] not in ("raw", "zlib", "delta-zlib") or s["dtype"] not in ("<u8", "<i8", "<u2", "<u4"):
        raise ValueError(f"unknown encoding of {name}")
    if s["codec"] != "raw":
        data = _inflate(data, (count or 0) * np.dtype(s["dtype"]).itemsize, name)
    values = np.frombuffer(data, dtype=s["dtype"])
    return np.cumsum(values) if s["codec"] == "delta-zlib" else values


def _depth_of(parents: np.ndarray, i: int) -> int:
    """How many parent links lead from state ``i`` to the initial state (its BFS depth)."""
    depth = 0
    while i > 0:
        i = int(parents[i])
        depth += 1
    return depth


def _check_figures(search: dict, parents: np.ndarray, size: int, violations: list) -> None:
    """The header's figures against the data they describe (ValueError naming the first that disagrees): the
    frontier is the last ``size`` states, all at ``depth`` (the state before it one level up); every state but
    the initial one was generated by a transition; the invariants failed are those of the violations, each found
    within ``depth`` steps; no count is negative, the time is a time."""
    depth, n = int(search["depth"]), len(parents)
    first = n - size
    if depth < 0 or _depth_of(parents, first) != depth or _depth_of(parents, n - 1) != depth \
            or (first > 0 and _depth_of(parents, first - 1) != depth - 1):
        raise ValueError(f"its depth {depth} is not the depth of its frontier's states")
    if int(search["generated"]) < n - 1:
        raise ValueError(f"it counts {int(search['generated']):,} transitions for {n:,} states")
    if any(int(c) < 0 for c in search["coverage"]):
        raise ValueError("a negative coverage count")
    if {i for i, *_ in violations} != {str(i) for i in search["failed"]}:
        raise ValueError("the invariants it says failed are not those of its violations")
    if any(len(aids) > depth for *_, aids in violations):
        raise ValueError(f"a violation's trace longer than its depth {depth}")
    elapsed = float(search["elapsed_s"])
    if not (elapsed >= 0 and elapsed != float("inf")) or int(search.get("workers", 1)) < 1:
        raise ValueError("an impossible time or worker count")


def _snapshot(search: dict, sections: dict) -> Snapshot:
    fps = _array(sections, "fingerprints").astype(np.uint64)
    n = len(fps)
    parents = _array(sections, "parents", n)
    actions = _array(sections, "actions", n)
    distinct, size = int(search["distinct"]), int(search["frontier"])
    if not (n == distinct == len(parents) == len(actions) and 0 < size <= n):
        raise ValueError("the arrays' lengths disagree")
    limit = FRONTIER_BYTES[0] + FRONTIER_BYTES[1] * size
    frontier_raw = _restricted_loads(_inflate(sections["frontier"][1], limit, "frontier's states"))
    frontier = [(np.frombuffer(p, dtype="<i8").astype(np.int64), block) for p, block in frontier_raw]
    if n and (parents[0] != NO_PARENT or (n > 1 and (parents[1:] < 0).any())
              or (parents[1:] >= np.arange(1, n)).any()):
        raise ValueError("a parent link points forward")
    if (np.diff(fps) == 0).any() or (len(fps) > 1 and (fps[1:] < fps[:-1]).any()):
        raise ValueError("the fingerprints are not a sorted set")
    positions = np.sort(np.concatenate([p for p, _ in frontier])) if frontier else np.empty(0, np.int64)
    if not np.array_equal(positions, np.arange(size)):
        raise ValueError("the frontier's positions are not 0..n-1")
    violations = [(str(v["invariant"]), str(v["message"]), [int(a) for a in v["actions"]])
                  for v in search["violations"]]
    _check_figures(search, parents, size, violations)
    return Snapshot(int(search["depth"]), int(search["generated"]), [int(c) for c in search["coverage"]],
                    [str(i) for i in search["failed"]], violations, parents.astype(np.uint32),
                    actions.astype(np.uint32 if actions.dtype.itemsize == 4 else np.uint16), fps, [], size,
                    float(search["elapsed_s"]), int(search.get("workers", 1)), *_decoded_or_deferred(frontier, size))


def _decoded_or_deferred(frontier: list, size: int) -> tuple:
    """(states, None), or (None, the blocks) when the states are of a record type not built yet in this process
    (a KRaft model's, before the model is built): check_fits decodes them then."""
    try:
        return _decode_frontier(frontier, size), None
    except _UnbuiltType:
        return None, (frontier, size)


def check_fits(path: str, snapshot: Snapshot, model: Model) -> None:
    """After the identity check: every action id, coverage entry, violation and frontier state fits this model
    (a file that passed its checksums but was not written for it is refused before the search)."""
    space = len(model.action_space)
    init = model.init_states()[0]
    invariants = {i.id for i in model.invariants}
    if (len(snapshot.actions) and int(snapshot.actions.max()) >= space) or len(snapshot.coverage) != len(model.rules) \
            or any(a >= space for *_, aids in snapshot.violations for a in aids):
        raise _corrupt(path, "an action id outside the model's actions")
    if any(i not in invariants for i, *_ in snapshot.violations) or not set(snapshot.failed) <= invariants:
        raise _corrupt(path, "a violation of an invariant this run does not check")
    _check_counts(path, snapshot, model)
    if snapshot.encoded is not None:
        try:
            snapshot.states = _decode_frontier(*snapshot.encoded)
        except Exception as e:  # noqa: BLE001 - as read's: a file that passed its checksums but is not this model's
            raise _corrupt(path, f"{type(e).__name__}: {' '.join(str(e).split())[:120]}") from None
        snapshot.encoded = None
    if any(type(s) is not type(init) or len(s) != len(init) for s in snapshot.states or ()):
        raise _corrupt(path, "a frontier entry that is not a state of this model")


def _check_counts(path: str, snapshot: Snapshot, model: Model) -> None:
    """The transitions and the coverage against this model's rules: every transition counts once for its rule (the
    eager rule's count adds the steps it settled), and each state found (but the initial one) was found by a
    transition of the rule of its action."""
    coverage = np.asarray(snapshot.coverage, dtype=np.int64)
    eager = model.eager_rule
    own = int(coverage.sum() - (coverage[eager] if eager is not None else 0))
    if eager is None and own != snapshot.generated or eager is not None and \
            not own <= snapshot.generated <= int(coverage.sum()):
        raise _corrupt(path, f"its {snapshot.generated:,} transitions are not its coverage's {int(coverage.sum()):,}")
    rule_of = np.fromiter((ri for ri, _, _ in model.action_space), dtype=np.int64, count=len(model.action_space))
    found = np.bincount(rule_of[snapshot.actions[1:].astype(np.int64)], minlength=len(coverage))
    if (found > coverage).any():
        name = model.rules[int(np.argmax(found > coverage))].name
        raise _corrupt(path, f"its coverage of {name} is smaller than the states {name} found")


_SAFE_BUILTINS = {"frozenset", "set", "tuple", "list", "dict", "int", "float", "str", "bytes", "bool", "complex"}
# numpy arrays (the frontier blocks' index columns, model/spec/codec.py): data only, no code runs
_SAFE_NUMPY = {("numpy", "dtype"), ("numpy", "ndarray"), ("numpy._core.numeric", "_frombuffer"),
               ("numpy.core.numeric", "_frombuffer"), ("numpy._core.multiarray", "_reconstruct"),
               ("numpy.core.multiarray", "_reconstruct")}


class _UnbuiltType(pickle.UnpicklingError):
    """A record type of model/spec/schema.py that no model built in this process has (yet)."""


class _RestrictedUnpickler(pickle.Unpickler):
    """Builds only plain data and the model's (or a loaded plugin's) tuple types: a checkpoint holds states."""

    def find_class(self, module, name):
        if (module == "builtins" and name in _SAFE_BUILTINS) or (module, name) in _SAFE_NUMPY:
            return super().find_class(module, name)
        if module == "model" or module.startswith("model.") or module in _plugin_modules():
            cls = getattr(sys.modules.get(module), name, None)
            if isinstance(cls, type) and issubclass(cls, tuple):
                return cls
            if cls is None and module == "model.spec.schema":
                raise _UnbuiltType(f"a checkpoint holds no {module}.{name}")
        raise pickle.UnpicklingError(f"a checkpoint holds no {module}.{name}")


def _plugin_modules() -> set[str]:
    from invariants.plugins import LOADED

    return {m.__name__ for m in LOADED.values()}


def _restricted_loads(data: bytes):
    return _RestrictedUnpickler(io.BytesIO(data)).load()


# ---- during a search -------------------------------------------------------------------------------------------

class Checkpointer:
    """Writes checkpoints for an engine: at the first level boundary ``every`` seconds after the last one, and
    when the search stops early. A failed write is a warning (``warn``): the search goes on."""

    def __init__(self, path: str, every: float, ident: dict, warn=None):
        self.path, self.every, self.identity = path, every, ident
        self.warn = warn or (lambda line: print(f"jbodcheck: warning: {line}", file=sys.stderr))
        self.next_due = time.monotonic() + every
        self.written: tuple[int, int] | None = None    # the last checkpoint's (depth, distinct states)

    def due(self) -> bool:
        return time.monotonic() >= self.next_due

    def save(self, snapshot_fn) -> None:
        """Write the snapshot ``snapshot_fn()`` returns (a function: it is built only here)."""
        try:
            snapshot = snapshot_fn()
            write(self.path, self.identity, snapshot)
            self.written = (snapshot.depth, snapshot.distinct)
        except OutputError as e:
            self.warn(f"{e} (the search goes on without it)")
        self.next_due = time.monotonic() + self.every
