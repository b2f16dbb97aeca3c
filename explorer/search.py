"""Search engines over the model's rule registry: BFS (shortest traces), DFS and random simulation.

Every engine checks the same invariants the same way (``Checker``) and counts per-rule coverage the same
way: one firing per generated transition, plus one BrokerUpdateMetadata firing per eagerly applied
UpdateMetadata.

BFS keeps its visited set as bare fingerprints plus parent links (explorer/visited.py); with
``SearchOptions.workers`` > 1 it runs on worker processes (explorer/parallel.py) with identical results.
"""
from __future__ import annotations

import contextlib
import gc
import random
import time
from typing import Callable

import attrs
import numpy as np

from invariants import Invariant
from invariants.safety import first_broker_failure
from model import Action, Model, State, fingerprint
from model.memo import by_value

from .visited import ActionIndex, FingerprintSet, ParentTable, format_size, process_memory

ENGINES = ("bfs", "dfs", "random")


@attrs.define
class Violation:
    invariant: Invariant
    message: str
    trace: list  # [(Action | None, State)], starting at an initial state


@attrs.define
class SearchResult:
    engine: str
    result: str                 # "ok", "violation" or "bounded"
    distinct_states: int
    states_generated: int
    depth: int
    elapsed_s: float
    coverage: dict
    violations: list
    # Keyword-only extensions (positional construction by other engines is unchanged):
    workers: int = attrs.field(default=1, kw_only=True)             # BFS worker processes used
    note: str | None = attrs.field(default=None, kw_only=True)      # why a search stopped early (--max-memory)
    memory: dict = attrs.field(factory=dict, kw_only=True)          # BFS: visited-set bytes, memory figures


@attrs.define
class SearchOptions:
    max_depth: int | None = None
    max_states: int | None = None
    seed: int = 0
    all_violations: bool = False
    walks: int = 1000            # random simulation: number of walks
    walk_depth: int = 60         # random simulation: steps per walk when --max-depth is not given
    progress: Callable[[str], None] | None = None   # receives a progress line every few seconds
    workers: int = 1             # BFS: worker processes (1: in this process)
    max_memory: int | None = None  # bytes: stop with result "bounded" before memory use exceeds this


class MemoryGuard:
    """--max-memory: measures the memory in use at most every ``interval`` seconds; ``exceeded()`` says
    whether it reached the limit or would reach it before the next measurement (at the growth rate since
    the last one, with a factor of two to spare). Without workers the measure is this process's resident
    set size; with workers (``pids``) the sum of the processes' proportional set sizes."""

    def __init__(self, limit: int | None, interval: float = 0.2):
        self.limit, self.interval = limit, interval
        self.pids: list[int] = []
        self.next_check = 0.0
        self.used = 0

    def measure(self) -> int:
        if not self.pids:
            return process_memory("self")
        return process_memory("self", True) + sum(process_memory(pid, True) for pid in self.pids)

    def exceeded(self, force: bool = False) -> bool:
        if self.limit is None:
            return False
        now = time.monotonic()
        if not force and now < self.next_check:
            return False
        self.next_check = now + self.interval
        previous, self.used = self.used, self.measure()
        growth = max(0, self.used - previous) if previous else 0
        return self.used + 2 * growth >= self.limit

    def note(self, distinct: int, depth: int) -> str:
        who = "the search and its workers" if self.pids else "the search"
        return (f"stopped at --max-memory {format_size(self.limit)}: {who} used {format_size(self.used)} after "
                f"{distinct:,} distinct states (depth {depth}); the result is bounded, not exhaustive")


@contextlib.contextmanager
def gc_paused():
    """Pause Python's cyclic garbage collector (states are acyclic tuples; its full scans of the engines' big
    containers cost about a quarter of BFS's time) and restore it afterwards."""
    enabled = gc.isenabled()
    gc.disable()
    gc.freeze()
    try:
        yield
    finally:
        # Everything allocated meanwhile sits in the youngest generation: freezing it too, then unfreezing all,
        # moves it to the oldest at once, so the first collection after the search does not scan it.
        gc.freeze()
        gc.unfreeze()
        if enabled:
            gc.enable()


class Checker:
    """Evaluates the selected invariants; remembers which already failed (each is reported once)."""

    def __init__(self, model: Model, invariants: list[Invariant]):
        self.model = model
        self.state_invs = [i for i in invariants if i.kind == "state"]
        self.quiescent_invs = [i for i in invariants if i.kind == "quiescent"]
        self.transition_invs = [i for i in invariants if i.kind == "transition"]
        self.failed: set[str] = set()
        # Per-broker state invariants (invariants/safety.py per_broker) are evaluated together, once per distinct
        # broker: each broker's results as a tuple (slot k: the k-th such invariant), or None when all pass.
        per_broker = [i for i in self.state_invs if hasattr(i.check, "broker_check")]
        checks = [i.check.broker_check for i in per_broker]
        self.broker_slot = {i.id: k for k, i in enumerate(per_broker)}

        def broker_results(broker):
            results = tuple(check(broker) for check in checks)
            return None if all(r is None for r in results) else results

        self.broker_results = by_value(broker_results, 1 << 16)

    def check_state(self, state: State) -> list[tuple[Invariant, str]]:
        found = []
        per_broker = None
        for inv in self.state_invs:
            if inv.id not in self.failed:
                slot = self.broker_slot.get(inv.id)
                if slot is None:
                    msg = inv.check(self.model, state)
                else:
                    if per_broker is None:
                        per_broker = list(map(self.broker_results, state.brokers))
                    msg = first_broker_failure(None if r is None else r[slot] for r in per_broker)
                if msg is not None:
                    found.append((inv, msg))
        if self.quiescent_invs and self.model.is_quiescent(state):
            for inv in self.quiescent_invs:
                if inv.id not in self.failed:
                    msg = inv.check(self.model, state)
                    if msg is not None:
                        found.append((inv, msg))
        return found

    def check_transition(self, state: State, action: Action, after: State) -> list[tuple[Invariant, str]]:
        found = []
        for inv in self.transition_invs:
            if inv.id not in self.failed:
                msg = inv.check(self.model, state, action, after)
                if msg is not None:
                    found.append((inv, msg))
        return found


class _Run:
    """What every engine shares: counters, coverage, violations, progress and bounds."""

    def __init__(self, model: Model, invariants: list[Invariant], options: SearchOptions, engine: str):
        self.model, self.options, self.engine = model, options, engine
        self.checker = Checker(model, invariants)
        self.coverage = [0] * len(model.rules)
        self.um_rule = model.rule_index["BrokerUpdateMetadata"]
        self.generated = 0
        self.violations: list[Violation] = []
        self.start = time.monotonic()
        self.next_progress = self.start + 3.0
        self.memory = MemoryGuard(options.max_memory)
        self.note: str | None = None

    def count(self, action: Action) -> None:
        self.generated += 1
        self.coverage[action.rule] += 1
        if action.settled:
            self.coverage[self.um_rule] += len(action.settled)

    def record(self, found, trace_fn) -> bool:
        """Record violations; returns True when the search should stop."""
        if not found:
            return False
        trace = trace_fn()
        for inv, msg in found:
            self.checker.failed.add(inv.id)
            self.violations.append(Violation(inv, msg, trace))
        if not self.options.all_violations:
            return True
        remaining = (len(self.checker.state_invs) + len(self.checker.quiescent_invs)
                     + len(self.checker.transition_invs))
        return len(self.checker.failed) >= remaining

    def progress(self, text_fn) -> None:
        if self.options.progress is None:
            return
        now = time.monotonic()
        if now >= self.next_progress:
            self.next_progress = now + 3.0
            elapsed = now - self.start
            self.options.progress(f"{text_fn()}  generated {self.generated:,}  {elapsed:.0f}s")

    def result(self, distinct: int, depth: int, bounded: bool) -> SearchResult:
        status = "violation" if self.violations else ("bounded" if bounded else "ok")
        coverage = {r.name: n for r, n in zip(self.model.rules, self.coverage)}
        return SearchResult(self.engine, status, distinct, self.generated, depth,
                            round(time.monotonic() - self.start, 3), coverage, self.violations, note=self.note)


def fingerprint_of(model: Model) -> Callable[[State], int]:
    """The model's fingerprint function: of a canonical representative when symmetry reduction is on."""
    return getattr(model, "fingerprint", fingerprint)


def rebuild_trace(model: Model, actions: list[Action]) -> list:
    """Re-derive the concrete states of a path from the initial state (the visited set keeps no states)."""
    state = model.init_states()[0]
    trace = [(None, state)]
    for action in actions:
        name = model.rules[action.rule].name
        action, state = model.step(state, name, action.args)
        trace.append((action, state))
    return trace


BFS_CHUNK = 512   # frontier states expanded between two batched look-ups in the visited set


def bfs(model: Model, invariants: list[Invariant], options: SearchOptions) -> SearchResult:
    """Breadth-first search: shortest traces. ``options.workers`` > 1 runs it on worker processes."""
    if options.workers > 1:
        from .parallel import parallel_bfs

        return parallel_bfs(model, invariants, options)
    return serial_bfs(model, invariants, options)


def serial_bfs(model: Model, invariants: list[Invariant], options: SearchOptions) -> SearchResult:
    """BFS in this process. The visited set holds fingerprints only (a sorted array of the earlier levels and
    a set of the current level's); the frontier is expanded in chunks whose successors are looked up in the
    array at once, then handled one by one in order, so counts and stopping points are those of a plain
    one-transition-at-a-time BFS."""
    run = _Run(model, invariants, options, "bfs")
    actions = ActionIndex(model)
    table = ParentTable(actions)                  # per state: parent index, action id
    visited = FingerprintSet()
    fingerprint = fingerprint_of(model)
    init = model.init_states()[0]
    visited.add_unsorted([fingerprint(init)])

    def finish(distinct: int, depth: int, bounded: bool) -> SearchResult:
        result = run.result(distinct, depth, bounded)
        result.memory = {"visited_bytes": visited.nbytes + table.nbytes, "visited_states": distinct}
        return result

    if run.record(run.checker.check_state(init), lambda: [(None, init)]):
        return finish(1, 0, False)
    frontier = [(init, 0)]                        # (state, index in the table)
    depth, bounded = 0, False
    max_depth, max_states = options.max_depth, options.max_states
    check_transition, check_state, record, count = (run.checker.check_transition, run.checker.check_state,
                                                    run.record, run.count)
    aid = actions.ids
    with gc_paused():
        while frontier:
            if max_depth is not None and depth >= max_depth:
                bounded = True
                break
            if run.memory.exceeded(force=True):
                run.note = run.memory.note(len(table), depth)
                return finish(len(table), depth, True)
            level: set[int] = set()               # fingerprints first found in this level
            next_frontier = []
            for at in range(0, len(frontier), BFS_CHUNK):
                steps, fps = [], []
                for state, index in frontier[at:at + BFS_CHUNK]:
                    for action, after in model.successors(state):
                        steps.append((state, index, action, after))
                        fps.append(fingerprint(after))
                seen = visited.contains(np.array(fps, dtype=np.uint64)).tolist()
                for (state, index, action, after), fp, old in zip(steps, fps, seen):
                    count(action)
                    found = check_transition(state, action, after)
                    if not old and fp not in level:
                        level.add(fp)
                        next_frontier.append((after, table.append(index, aid[(action.rule, action.args)])))
                        found += check_state(after)
                    if found and record(found, lambda: rebuild_trace(model, table.path(index) + [action])):
                        return finish(len(table), depth + 1, False)
                    if max_states is not None and len(table) >= max_states:
                        return finish(len(table), depth + 1, True)
                if run.memory.exceeded():
                    run.note = run.memory.note(len(table), depth + 1)
                    return finish(len(table), depth + 1, True)
                run.progress(lambda: f"depth {depth + 1}  distinct {len(table):,}  frontier {len(next_frontier):,}")
            visited.add_unsorted(level)
            del level
            frontier = next_frontier
            if frontier:
                depth += 1
    return finish(len(table), depth, bounded)


def dfs(model: Model, invariants: list[Invariant], options: SearchOptions) -> SearchResult:
    """Depth-first search. Without --max-depth it visits exactly BFS's states; with it, a state met again on a
    shorter path is explored again, so every state within the bound is reached."""
    run = _Run(model, invariants, options, "dfs")
    fingerprint = fingerprint_of(model)
    init = model.init_states()[0]
    seen: dict[int, int] = {fingerprint(init): 0}   # fingerprint -> smallest depth seen
    if run.record(run.checker.check_state(init), lambda: [(None, init)]):
        return run.result(1, 0, False)
    max_depth, max_states = options.max_depth, options.max_states
    if max_depth is not None and max_depth <= 0:
        return run.result(1, 0, True)
    stack = [(init, iter(model.successors(init)))]
    path: list[Action] = []
    deepest, bounded = 0, False
    while stack:
        state, successors = stack[-1]
        step = next(successors, None)
        if step is None:
            stack.pop()
            if path:
                path.pop()
            continue
        action, after = step
        run.count(action)
        depth = len(stack)
        found = run.checker.check_transition(state, action, after)
        after_fp = fingerprint(after)
        previous = seen.get(after_fp)
        new = previous is None
        if new:
            found += run.checker.check_state(after)
        if found and run.record(found, lambda: rebuild_trace(model, path + [action])):
            return run.result(len(seen), max(deepest, depth), False)
        if new or (max_depth is not None and previous > depth):
            seen[after_fp] = depth
            deepest = max(deepest, depth)
            if max_states is not None and len(seen) >= max_states:
                return run.result(len(seen), deepest, True)
            if max_depth is not None and depth >= max_depth:
                bounded = True
            else:
                stack.append((after, iter(model.successors(after))))
                path.append(action)
        if run.memory.exceeded():
            run.note = run.memory.note(len(seen), deepest)
            return run.result(len(seen), deepest, True)
        run.progress(lambda: f"depth {len(stack)}  distinct {len(seen):,}")
    return run.result(len(seen), deepest, bounded)


def simulate(model: Model, invariants: list[Invariant], options: SearchOptions) -> SearchResult:
    """Random walks from the initial state, each up to --max-depth steps (or a default), seeded."""
    run = _Run(model, invariants, options, "random")
    fingerprint = fingerprint_of(model)
    rng = random.Random(options.seed)
    init = model.init_states()[0]
    seen = {fingerprint(init)}
    if run.record(run.checker.check_state(init), lambda: [(None, init)]):
        return run.result(1, 0, False)
    walk_depth = options.max_depth if options.max_depth is not None else options.walk_depth
    deepest = 0
    for walk in range(options.walks):
        state, path = init, []
        for depth in range(1, walk_depth + 1):
            successors = list(model.successors(state))
            if not successors:
                break
            for action, _ in successors:
                run.count(action)
            action, after = successors[rng.randrange(len(successors))]
            found = run.checker.check_transition(state, action, after) + run.checker.check_state(after)
            path.append(action)
            seen.add(fingerprint(after))
            deepest = max(deepest, depth)
            if found and run.record(found, lambda: rebuild_trace(model, list(path))):
                return run.result(len(seen), deepest, False)
            if options.max_states is not None and len(seen) >= options.max_states:
                return run.result(len(seen), deepest, True)
            state = after
        if run.memory.exceeded():
            run.note = run.memory.note(len(seen), deepest)
            return run.result(len(seen), deepest, True)
        run.progress(lambda: f"walk {walk + 1}/{options.walks}  distinct {len(seen):,}")
    return run.result(len(seen), deepest, True)


def explore(engine: str, model: Model, invariants: list[Invariant], options: SearchOptions) -> SearchResult:
    with gc_paused():
        return {"bfs": bfs, "dfs": dfs, "random": simulate}[engine](model, invariants, options)
