"""BFS on worker processes: ``--workers N`` (N > 1), with the results of the one-process BFS.

The design (Stern & Dill's hash-partitioned parallel BFS, level-synchronous):

- Worker ``w`` owns the fingerprints with ``fp % N == w``: it keeps them (its share of the visited set, a
  sorted uint64 array) and decides which of the level's candidates with such a fingerprint is new.
- The parent process coordinates and routes messages; it keeps the parent links of every state (4-byte parent
  index, 2-byte action id, explorer/visited.py) and rebuilds traces from them.
- Every transition of a level has a *key*, ``position of its source in the frontier * len(action_space) +
  ordinal among the source's successors``: the order in which the one-process BFS handles it. A level runs in
  three exchanges:

  1. *expand*: each worker expands the frontier states it holds, in key order: it counts coverage, checks
     transition invariants, fingerprints the successors and sends each successor's (fingerprint, key) to the
     fingerprint's owner (only the first occurrence per fingerprint within the worker: its smallest key).
  2. *dedup*: each owner drops what it has visited, keeps per fingerprint the smallest key (the transition by
     which the one-process BFS finds the state first) and tells each worker which of its candidates won.
  3. *adopt*: each worker keeps the states of its winning candidates (the state objects never travel to the
     owner of their fingerprint), checks state and quiescent invariants on them in key order and reports their
     keys and action ids. The parent ranks all the level's new keys: a state's rank is its position in the
     next frontier and its index in the parent table, exactly as in the one-process BFS.

  A worker thus expands the states it generated. When the next frontier is uneven across workers by more
  than 2% (always after the first level, where one worker holds the initial state), the parent has the fuller
  workers send states, spread over their key range, to the emptier ones (``model.spec.codec``): a few percent
  of the states move, where sending every state to its fingerprint's owner would move (N-1)/N of them.

- Violations come back with their keys; the parent takes them in key order as the one-process BFS meets them.
  When the search must stop inside a level (a violation, ``--max-states``), the parent computes the key at
  which the one-process BFS would have stopped and asks the workers for their counts up to that key, so
  distinct states, generated transitions, depth, coverage and the violations (with shortest traces) are the
  same for every number of workers.
- ``--max-states``: a level is expanded in batches of frontier positions (keys are increasing from batch to
  batch), each sized at the rate of new states seen so far to reach the bound, so the workers stop within a
  batch of the stopping key instead of expanding the whole level; the counts are still the one-process BFS's.
- SIGINT and SIGTERM are the parent's (the workers ignore both): it stops the workers and returns the last
  complete level's counts with result ``"interrupted"``. A worker that dies (SIGKILL, the OOM killer) ends the
  search with a one-line ``WorkerError`` naming it and its signal or exit code.
- ``--max-memory``: the parent measures itself and the workers (proportional set size) a few times a second
  while it waits; on reaching the limit it stops the workers and reports the last complete level, ``bounded``.

Workers are forked (the model, the selected invariants and plugins are inherited, nothing is pickled to start
them). Messages go through the parent: no worker-to-worker pipes, so no deadlock between two senders.
"""
from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import time
import traceback
from array import array
from bisect import bisect_right

import numpy as np

from model.spec.codec import decode_states, encode_states
from model.spec.engine import Checker, SearchResult, TransitionCounts, fingerprint_of, rebuild_trace
from model.spec.model import Model

from .checkpoint import LevelMark, frontier_blocks, restore
from .core import INTERRUPTS, Run, gc_paused, interrupt_signal, interruptible
from .visited import U64, ActionIndex, FingerprintSet, ParentTable, peak_rss

__all__ = ["WorkerError", "decode_states", "encode_states", "parallel_bfs"]
_TICK_S = 1.0                  # a worker reports its progress at most this often while it expands


class WorkerError(RuntimeError):
    """A worker process failed (an exception in the model or an invariant, or the process died)."""


class _MemoryStop(Exception):
    pass


class _Abandoned(Exception):
    """A worker drops the expansion under way: the parent asked for a checkpoint (it is stopping)."""


# ---- the worker ----------------------------------------------------------------------------------------------

class _Worker:
    def __init__(self, wid: int, n: int, conn, model: Model, invariants: list, resume=None, keep_level=False):
        self.wid, self.n, self.conn, self.model = wid, n, conn, model
        self.checker = Checker(model, invariants)
        self.actions = ActionIndex(model)
        self.adtype = np.uint16 if self.actions.typecode == "H" else np.uint32
        self.S = len(model.action_space)
        self.visited = FingerprintSet()
        self.counts = TransitionCounts(model)
        self.fingerprint = fingerprint_of(model)
        # Checkpoints (``dump``): the start of the level under way: its depth, frontier, and the fingerprints
        # added to the visited share since (taken out again for the boundary's visited set).
        self.keep_level, self.level, self.level_frontier, self.level_new = keep_level, None, None, []
        if resume is None:
            init = model.init_states()[0]
            fp = self.fingerprint(init)
            if fp % n == wid:                            # the owner of the initial state's fingerprint
                self.visited.merge(np.array([fp], dtype=U64))
            self.frontier: list = [(0, init)] if wid == 0 else []   # (position, state), by position
        else:                                            # a checkpoint: this worker's fingerprints, a frontier slice
            fingerprints, states = resume
            self.visited.fps = fingerprints[fingerprints % U64(n) == U64(wid)]
            lo, hi = wid * len(states) // n, (wid + 1) * len(states) // n
            self.frontier = list(zip(range(lo, hi), states[lo:hi]))
        self.adopted: list = []                          # the next frontier's states held here, by key

    def serve(self) -> None:
        handlers = {"expand": self.expand, "dedup": self.dedup, "adopt": self.adopt, "place": self.place,
                    "take": self.take, "cut": self.cut, "dump": self.dump}
        while True:
            msg = self.conn.recv()
            if msg[0] == "stop":
                self.conn.send(("bye", peak_rss()))
                return
            try:
                handlers[msg[0]](*msg[1:])
            except _Abandoned:
                pass

    # 1. expand the frontier states held here whose position is below ``upto`` (a batch of the level; the whole
    #    level without --max-states), in key order; candidates' fingerprints go to their owners
    def expand(self, failed, upto: int, first: bool, depth: int) -> None:
        n, S, model, conn = self.n, self.S, self.model, self.conn
        checker = self.checker
        checker.failed = set(failed)
        check_transition = checker.check_transition if checker.transition_invs else None
        aid = self.actions.ids
        fingerprint = self.fingerprint
        if first:                                   # the level's transitions, in key order, over its batches
            self.keys, self.rules, self.settled = array("Q"), array("H"), array("H")
            if self.keep_level:
                self.level, self.level_frontier, self.level_new = depth, list(self.frontier), []
        keys, rules, settled = self.keys, self.rules, self.settled
        batch = bisect_right(self.frontier, upto - 1, key=lambda f: f[0])
        local: set[int] = set()
        c_fps = [[] for _ in range(n)]
        c_keys = [[] for _ in range(n)]
        c_aids = [[] for _ in range(n)]
        c_states = [[] for _ in range(n)]
        violations = []
        next_tick = time.monotonic() + _TICK_S
        for count, (pos, state) in enumerate(self.frontier[:batch]):
            key = pos * S
            for action, after in model.successors(state):
                keys.append(key)
                rules.append(action.rule)
                settled.append(len(action.settled))
                if check_transition is not None:
                    for inv, msg in check_transition(state, action, after):
                        checker.failed.add(inv.id)    # this worker's later keys are larger: its first suffices
                        violations.append((key, inv.id, msg, aid[(action.rule, action.args)]))
                fp = fingerprint(after)
                if fp not in local:
                    local.add(fp)
                    d = fp % n
                    c_fps[d].append(fp)
                    c_keys[d].append(key)
                    c_aids[d].append(aid[(action.rule, action.args)])
                    c_states[d].append(after)
                key += 1
            if count & 63 == 63 and time.monotonic() >= next_tick:
                next_tick = time.monotonic() + _TICK_S
                conn.send(("tick", len(keys)))
                if self.keep_level and conn.poll():     # the parent stops: it wants a checkpoint, not this level
                    raise _Abandoned
        del self.frontier[:batch]
        del local
        self.candidates = (c_keys, c_aids, c_states)
        fps = [np.array(f, dtype=U64) for f in c_fps]
        del c_fps
        self.mine = (fps[self.wid], np.array(c_keys[self.wid], dtype=U64))
        out = [None if d == self.wid else (fps[d], np.array(c_keys[d], dtype=U64)) for d in range(n)]
        conn.send(("expanded", out, self._counts(len(keys)), violations))

    def _counts(self, upto: int) -> tuple[int, list]:
        """Transitions and coverage of this level's first ``upto`` transitions (in key order)."""
        return self.counts.count_arrays(np.frombuffer(self.rules, dtype=np.uint16)[:upto],
                                        np.frombuffer(self.settled, dtype=np.uint16)[:upto])

    # 2. as owner: drop visited candidates, keep the smallest key per fingerprint, tell the senders who won
    def dedup(self, incoming) -> None:
        n = self.n
        parts = [self.mine if g == self.wid else incoming[g] for g in range(n)]
        self.mine = None
        sizes = [len(p[0]) for p in parts]
        fps = np.concatenate([p[0] for p in parts])
        keys = np.concatenate([p[1] for p in parts])
        src = np.repeat(np.arange(n), sizes)
        idx = np.concatenate([np.arange(s, dtype=np.int64) for s in sizes])
        fresh = ~self.visited.contains(fps)
        fps, keys, src, idx = fps[fresh], keys[fresh], src[fresh], idx[fresh]
        order = np.argsort(keys, kind="stable")
        new_fps, first = np.unique(fps[order], return_index=True)   # first occurrence: the smallest key
        win = order[first]
        self.visited.merge(new_fps)
        if self.keep_level:
            self.level_new.append(new_fps)
        win = win[np.lexsort((idx[win], src[win]))]                 # by sender, then by the sender's order
        bounds = np.searchsorted(src[win], np.arange(n + 1))
        replies = [idx[win[bounds[g]:bounds[g + 1]]] for g in range(n)]
        self.my_winners = replies[self.wid]
        self.conn.send(("deduped", [None if g == self.wid else replies[g] for g in range(n)]))

    # 3. keep the candidates that won (new states), in key order; state and quiescent invariants
    def adopt(self, replies) -> None:
        c_keys, c_aids, c_states = self.candidates
        self.candidates = None
        keys, aids, states = [], [], []
        for o in range(self.n):
            idx = (self.my_winners if o == self.wid else replies[o]).tolist()
            k, a, s = c_keys[o], c_aids[o], c_states[o]
            keys.extend([k[i] for i in idx])
            aids.extend([a[i] for i in idx])
            states.extend([s[i] for i in idx])
        del c_keys, c_aids, c_states
        keys = np.array(keys, dtype=U64)
        order = np.argsort(keys, kind="stable")
        keys, aids = keys[order], np.array(aids, dtype=self.adtype)[order]
        states = [states[i] for i in order.tolist()]
        violations = []
        checker = self.checker
        if checker.state_invs or checker.quiescent_invs:
            for key, a, state in zip(keys.tolist(), aids.tolist(), states):
                for inv, msg in checker.check_state(state):
                    checker.failed.add(inv.id)
                    violations.append((key, inv.id, msg, a))
        self.adopted.extend(states)                 # a later batch's keys are all larger
        self.conn.send(("adopted", keys, aids, violations, self.visited.nbytes))

    # 4. the new states' positions in the next frontier; give some to other workers to balance the load
    def place(self, positions, give) -> None:
        frontier = list(zip(positions.tolist(), self.adopted))
        self.adopted = []
        out = [None] * self.n
        for dest, count in give:
            # Every (len/count)-th state: what stays and what goes both spread over the key range.
            pick = set(((np.arange(count, dtype=np.int64) * len(frontier)) // count).tolist())
            gone = [frontier[i] for i in sorted(pick)]
            frontier = [f for i, f in enumerate(frontier) if i not in pick]
            out[dest] = (np.array([p for p, _ in gone], dtype=np.int64), encode_states([s for _, s in gone]))
        self.frontier = frontier
        self.conn.send(("placed", out))

    def take(self, incoming) -> None:
        for got in incoming:
            if got is not None:
                positions, blob = got
                self.frontier.extend(zip(positions.tolist(), decode_states(blob)))
        self.frontier.sort(key=lambda f: f[0])
        self.conn.send(("taken",))

    # a checkpoint: this worker's share of the boundary of level ``depth`` (the parent's last level start)
    def dump(self, depth: int, seq: int) -> None:
        frontier, fps = self.frontier, self.visited.fps
        if self.level == depth:                     # the level is under way here: its start, as it was
            frontier = self.level_frontier
            if self.level_new:
                fps = np.delete(fps, np.searchsorted(fps, np.sort(np.concatenate(self.level_new))))
        blocks = frontier_blocks([s for _, s in frontier], [p for p, _ in frontier])
        self.conn.send(("dumped", seq, fps, blocks))

    # the search stops inside this level: counts up to the stopping transition
    def cut(self, key: int) -> None:
        self.conn.send(("cut", *self._counts(bisect_right(self.keys, key))))


def _worker_main(wid: int, n: int, conn, close: list, model: Model, invariants: list, resume, keep_level) -> None:
    # Ctrl-C (to the whole process group), SIGTERM and SIGHUP (a closed terminal, to the whole group) are the
    # parent's to handle: it stops the workers (SIGKILL when they do not answer). A worker whose parent is gone
    # sees its pipe close and exits.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    for c in close:
        c.close()
    import gc

    gc.disable()
    gc.freeze()
    try:
        _Worker(wid, n, conn, model, invariants, resume, keep_level).serve()
    except (EOFError, BrokenPipeError):
        pass                                        # the parent is gone
    except BaseException:                           # noqa: BLE001 - reported to the parent, which raises
        try:
            conn.send(("error", traceback.format_exc()))
        except Exception:  # noqa: BLE001
            pass
    finally:
        sys.stdout.flush()
        os._exit(0)


# ---- the parent ---------------------------------------------------------------------------------------------

class _Pool:
    def __init__(self, n: int, model: Model, invariants: list, resume=None, keep_level: bool = False):
        ctx = multiprocessing.get_context("fork")
        pipes = [ctx.Pipe(duplex=True) for _ in range(n)]
        self.conns = [p[0] for p in pipes]
        self.procs = []
        for wid in range(n):
            close = [p[0] for p in pipes] + [p[1] for i, p in enumerate(pipes) if i != wid]
            proc = ctx.Process(target=_worker_main, name=f"jbodcheck-bfs-{wid}", daemon=True,
                               args=(wid, n, pipes[wid][1], close, model, invariants, resume, keep_level))
            proc.start()
            self.procs.append(proc)
        for p in pipes:
            p[1].close()
        self.ticks = [0] * n
        self.dumps = 0

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.procs]

    def died(self, wid: int) -> WorkerError:
        """The error for a worker whose pipe closed: one line naming it and how it ended."""
        proc = self.procs[wid]
        proc.join(timeout=1)
        code = proc.exitcode
        if code is None:
            how = "closed its pipe"
        elif code < 0:
            try:
                how = f"was killed by signal {-code} ({signal.Signals(-code).name})"
            except ValueError:
                how = f"was killed by signal {-code}"
        else:
            how = f"exited with code {code}"
        return WorkerError(f"BFS worker {wid} (pid {proc.pid}) {how} during the search")

    def send(self, wid: int, msg) -> None:
        try:
            self.conns[wid].send(msg)
        except OSError:                              # BrokenPipeError: the worker is gone
            raise self.died(wid) from None

    def broadcast(self, msg) -> None:
        for wid in range(len(self.conns)):
            self.send(wid, msg)

    def gather(self, tag: str, on_wait, accept=None) -> list:
        """Each worker's next ``tag`` message; ``on_wait`` runs after every wake-up (progress, memory).
        ``accept``: other messages (and ``tag`` messages it refuses) are dropped, not an error."""
        n = len(self.conns)
        out: list = [None] * n
        pending = {c: i for i, c in enumerate(self.conns)}
        while pending:
            for c in multiprocessing.connection.wait(list(pending), timeout=0.2):
                i = pending[c]
                try:
                    msg = c.recv()
                except (EOFError, OSError):
                    raise self.died(i) from None
                if msg[0] == "tick":
                    self.ticks[i] = msg[1]
                elif msg[0] == "error":
                    raise WorkerError(f"BFS worker {i} failed:\n{msg[1]}")
                elif accept is None or (msg[0] == tag and accept(msg)):
                    assert msg[0] == tag, (msg[0], tag)
                    out[i] = msg
                    del pending[c]
            on_wait()
        return out

    def dump(self, depth: int) -> list:
        """Every worker's share of the boundary of level ``depth``: (fingerprints, frontier blocks). Works
        at any point of a level: what the workers were doing is dropped (the search is stopping) or done."""
        self.dumps += 1
        seq = self.dumps
        self.broadcast(("dump", depth, seq))
        return [m[2:] for m in self.gather("dumped", lambda: None, accept=lambda m: m[1] == seq)]

    def close(self, graceful: bool) -> list[int]:
        """Stop the workers; returns their peak RSS (bytes) when they could report it."""
        peaks = []
        if graceful:
            try:
                self.broadcast(("stop",))
                peaks = [m[1] for m in self.gather("bye", lambda: None)]
            except (WorkerError, OSError):
                graceful = False
        for p in self.procs:
            if graceful:
                p.join(timeout=5)
            if p.is_alive():
                p.kill()                             # workers ignore SIGTERM (it is the parent's to handle)
            p.join(timeout=5)
        for c in self.conns:
            c.close()
        return peaks


def parallel_bfs(model: Model, invariants: list, options) -> SearchResult:
    n = options.workers
    run = Run(model, invariants, options, "bfs")
    actions = ActionIndex(model)
    table = ParentTable(actions)
    S = len(model.action_space)
    init = model.init_states()[0]
    stats = {"worker_visited_bytes": 8}

    def finish(distinct: int, depth: int, bounded: bool, peaks=(), signum: int | None = None) -> SearchResult:
        result = run.result(distinct, depth, bounded, signum)
        result.workers = n
        result.memory = {"visited_bytes": table.nbytes + stats["worker_visited_bytes"], "visited_states": distinct}
        if peaks:
            result.memory["worker_peak_rss"] = list(peaks)
        return result

    max_depth, max_states = options.max_depth, options.max_states
    checkpoints, resume = options.checkpoint, None
    depth, base, frontier_size = 0, 0, 1      # base: table index of the frontier's first state
    if options.resume is None:
        if run.record(run.checker.check_state(init), lambda: [(None, init)]):
            return finish(1, 0, False)
        if (max_depth is not None and max_depth <= 0) or (max_states is not None and max_states <= 1):
            return finish(1, 0, True)
    else:                                     # the workers take their shares when they start
        table = restore(run, options.resume, actions)
        depth, frontier_size = options.resume.depth, options.resume.frontier_size
        base = len(table) - frontier_size
        resume = (options.resume.fingerprints, options.resume.states)
    if run.memory.exceeded(force=True):
        run.note = run.memory.note(len(table), depth)
        return finish(len(table), depth, True)

    order_of = {inv.id: i for i, inv in enumerate(run.checker.transition_invs + run.checker.state_invs
                                                  + run.checker.quiescent_invs)}
    by_id = {inv.id: inv for inv in invariants}
    pool = None
    graceful = False
    gen_before = run.generated
    mark = None                               # with checkpoints: the LevelMark of the level under way
    level_info = {"depth": 1}
    rate = [0, 0]                             # new states, frontier positions expanded (--max-states batches)

    def on_wait() -> None:
        run.generated = gen_before + sum(pool.ticks)
        run.progress(lambda: f"depth {level_info['depth']}  distinct {len(table):,}  frontier {frontier_size:,}",
                     lambda: {"depth": level_info["depth"], "distinct": len(table), "frontier": frontier_size})
        if run.memory.exceeded():
            raise _MemoryStop

    def save_checkpoint(stopping: bool) -> None:
        """Write the boundary of the level under way; when the search is stopping, a worker that cannot
        answer costs the checkpoint (a warning), not the partial result."""
        if checkpoints is None or mark is None or pool is None:
            return
        level = mark

        def snapshot():
            parts = pool.dump(level.depth)
            fingerprints = np.sort(np.concatenate([fps for fps, _ in parts]))
            return level.snapshot(run, table, fingerprints, [b for _, blocks in parts for b in blocks], n)

        try:
            checkpoints.save(snapshot)
        except WorkerError as e:
            if not stopping:
                raise
            checkpoints.warn(f"no checkpoint written: {str(e).splitlines()[0]}")

    try:
        with interruptible(), gc_paused():
            pool = _Pool(n, model, invariants, resume, checkpoints is not None)
            del resume
            run.memory.pids, run.memory.used = pool.pids, 0     # a new measure: no growth rate across the change
            while frontier_size:
                if checkpoints is not None:
                    mark = LevelMark.of(run, depth, len(table), frontier_size)
                    if checkpoints.due():
                        save_checkpoint(False)
                if max_depth is not None and depth >= max_depth:
                    save_checkpoint(True)
                    graceful = True
                    return finish(len(table), depth, True, pool.close(True))
                level_info["depth"] = depth + 1
                gen_before = run.generated
                pool.ticks = [0] * n
                # A level runs as one batch of frontier positions; with --max-states, as batches sized to reach
                # the bound, so that the search stops within a batch of where the one-process BFS stops.
                lo, found_keys, found_aids, mine = 0, [], [], [[] for _ in range(n)]
                while lo < frontier_size:
                    need = None if max_states is None else max_states - len(table) - sum(map(len, found_keys))
                    hi = frontier_size if need is None else min(frontier_size, lo + _batch(need, *rate))
                    pool.broadcast(("expand", tuple(run.checker.failed), hi, lo == 0, depth))
                    r1 = pool.gather("expanded", on_wait)
                    for o in range(n):
                        pool.send(o, ("dedup", [r1[g][1][o] for g in range(n)]))
                    r2 = pool.gather("deduped", on_wait)
                    for g in range(n):
                        pool.send(g, ("adopt", [r2[o][1][g] for o in range(n)]))
                    r3 = pool.gather("adopted", on_wait)
                    stats["worker_visited_bytes"] = sum(r[4] for r in r3)
                    batch_keys = np.concatenate([r[1] for r in r3])
                    order = np.argsort(batch_keys, kind="stable")
                    found_keys.append(batch_keys[order])           # a later batch's keys are all larger
                    found_aids.append(np.concatenate([r[2] for r in r3])[order])
                    for o in range(n):
                        mine[o].append(r3[o][1])
                    rate[0] += len(batch_keys)
                    rate[1] += hi - lo
                    lo = hi

                    # where the one-process BFS would stop in this batch, if it would
                    stop_ms = int(found_keys[-1][need - 1]) if need is not None and len(found_keys[-1]) >= need \
                        else None
                    violations = [v for r in r1 for v in r[3]] + [v for r in r3 for v in r[3]]
                    violations.sort(key=lambda v: (v[0], order_of[v[1]]))
                    stop_v = _record(run, model, table, actions, by_id, violations, base, S, stop_ms)
                    stop = stop_v if stop_v is not None else stop_ms
                    if stop is not None:
                        sorted_keys, sorted_aids = np.concatenate(found_keys), np.concatenate(found_aids)
                        m = int(np.searchsorted(sorted_keys, stop, side="right"))
                        table.extend(base + sorted_keys[:m] // S, sorted_aids[:m])
                        pool.broadcast(("cut", stop))
                        counts = pool.gather("cut", lambda: None)
                        run.generated = gen_before
                        for c in counts:
                            run.add(c[1], c[2])
                        if stop_v is None:
                            save_checkpoint(True)
                        graceful = True
                        return finish(len(table), depth + 1, stop_v is None, pool.close(True))
                run.generated = gen_before                          # this level is complete: its counts
                for r in r1:                                        # (the last batch's: the whole level's)
                    run.add(*r[2])
                gen_before, pool.ticks = run.generated, [0] * n
                sorted_keys, sorted_aids = np.concatenate(found_keys), np.concatenate(found_aids)
                new_base = len(table)
                table.extend(base + sorted_keys // S, sorted_aids)
                base, frontier_size = new_base, len(sorted_keys)
                if frontier_size:
                    depth += 1
                    # the next frontier: every new state's rank by key is its position and its table index
                    held = [np.concatenate(k) for k in mine]
                    seg = [len(k) for k in held]
                    all_keys = np.concatenate(held)
                    order = np.argsort(all_keys, kind="stable")
                    ranks = np.empty(len(order), dtype=np.int64)
                    ranks[order] = np.arange(len(order), dtype=np.int64)
                    cuts = np.cumsum([0] + seg)
                    gives = _balance(seg)
                    for w in range(n):
                        pool.send(w, ("place", ranks[cuts[w]:cuts[w + 1]], gives[w]))
                    r5 = pool.gather("placed", on_wait)
                    if any(g for g in gives):
                        for w in range(n):
                            pool.send(w, ("take", [r5[g][1][w] for g in range(n)]))
                        pool.gather("taken", on_wait)
            graceful = True
            return finish(len(table), depth, False, pool.close(True))
    except _MemoryStop:
        run.generated = gen_before
        run.note = run.memory.note(len(table), depth)
        save_checkpoint(True)
        return finish(len(table), depth, True)
    except INTERRUPTS as e:
        # The last complete level's counts (a level's coverage is added when it completes).
        run.generated = gen_before
        save_checkpoint(True)
        return finish(len(table), depth, True, signum=interrupt_signal(e))
    finally:
        if not graceful and pool is not None:
            pool.close(False)


_BATCH_MIN = 16   # frontier positions: with --max-states, the smallest batch of a level


def _batch(need: int, new: int, expanded: int) -> int:
    """With --max-states: how many frontier positions to expand next to find about ``need`` new states, at the
    rate seen so far (``new`` states from ``expanded`` positions), with 10% to spare."""
    per_position = new / expanded if expanded else 1.0
    return max(_BATCH_MIN, int(need * 1.1 / max(per_position, 1e-3)) + 1)


def _balance(sizes: list[int]) -> list[list[tuple[int, int]]]:
    """Per worker, the (destination, count) transfers that even out the next frontier, when it is uneven by
    more than 2% (moving a state costs about a quarter of expanding it)."""
    n, total = len(sizes), sum(sizes)
    target = [total // n + (1 if w < total % n else 0) for w in range(n)]
    if max(abs(s - t) for s, t in zip(sizes, target)) <= max(8, total // 50):
        return [[] for _ in range(n)]
    surplus = [(w, s - t) for w, (s, t) in enumerate(zip(sizes, target)) if s > t]
    deficit = [[w, t - s] for w, (s, t) in enumerate(zip(sizes, target)) if s < t]
    gives: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    for w, extra in surplus:
        for d in deficit:
            if extra == 0:
                break
            k = min(extra, d[1])
            if k:
                gives[w].append((d[0], k))
                d[1] -= k
                extra -= k
    return gives


def _record(run: Run, model: Model, table: ParentTable, actions: ActionIndex, by_id: dict, violations: list,
            base: int, S: int, limit: int | None) -> int | None:
    """Record the level's violations in the order the one-process BFS meets them (up to key ``limit``);
    returns the key of the transition at which the search stops, if it does."""
    i = 0
    while i < len(violations):
        key = violations[i][0]
        if limit is not None and key > limit:
            return None
        j = i
        while j < len(violations) and violations[j][0] == key:
            j += 1
        group = violations[i:j]
        i = j
        found = [(by_id[v[1]], v[2]) for v in group if v[1] not in run.checker.failed]
        if not found:
            continue
        source, aid = base + key // S, group[0][3]

        def trace(source=source, aid=aid):
            return rebuild_trace(model, table.path(source) + [actions.action(aid)])

        if run.record(found, trace):
            return key
    return None
