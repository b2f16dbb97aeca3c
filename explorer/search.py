"""Search engines over the model's rule registry: BFS (shortest traces), DFS and random simulation.

Every engine checks the same invariants the same way and counts per-rule coverage the same way, through the
kernel's engine machinery (model/spec/engine.py: ``Checker``, ``TransitionCounts``, ``rebuild_trace``,
``SearchResult``); this module re-exports those names for the code that imports them from here.

BFS keeps its visited set as bare fingerprints plus parent links (explorer/visited.py); with
``SearchOptions.workers`` > 1 it runs on worker processes (explorer/parallel.py) with identical results.
Every engine stops at exactly ``max_states`` distinct states, and SIGINT or SIGTERM during a search ends it
with a partial result: ``"interrupted"``, the counts so far and the signal (``SearchResult.signal``).
"""
from __future__ import annotations

import random
from typing import Any, Callable

import attrs
import numpy as np

from model.spec.engine import (Checker, SearchResult, Violation, collision_probability, fingerprint_of,
                               rebuild_trace)
from model.spec.invariant import Invariant
from model.spec.model import Action, Model

from .checkpoint import LevelMark, frontier_blocks, restore
from .core import INTERRUPTS, MemoryGuard, Run, SearchInterrupted, gc_paused, interrupt_signal, interruptible
from .por import bfs_expander, dfs_expander, reduction_for, reduction_note, report as por_report
from .visited import ActionIndex, FingerprintSet, ParentTable

__all__ = ["ENGINES", "Checker", "MemoryGuard", "SearchInterrupted", "SearchOptions", "SearchResult", "Violation",
           "bfs", "collision_probability", "dfs", "explore", "fingerprint_of", "gc_paused", "interruptible",
           "rebuild_trace", "serial_bfs", "simulate"]

ENGINES = ("bfs", "dfs", "random")
_Run = Run   # the former private name (explorer/parallel.py used it)


@attrs.define
class SearchOptions:
    max_depth: int | None = None
    max_states: int | None = None  # stop at exactly this many distinct states (the initial state counts)
    seed: int = 0
    all_violations: bool = False
    walks: int = 1000            # random simulation: number of walks
    walk_depth: int = 60         # random simulation: steps per walk when --max-depth is not given
    progress: Callable[[str], None] | None = None   # receives a progress line every few seconds
    # Receives the progress figures as a dict (explorer/core.py Run.progress), for a live display.
    progress_figures: Callable[[dict], None] | None = None
    progress_interval: float = 3.0   # seconds between two progress reports
    workers: int = 1             # BFS: worker processes (1: in this process)
    max_memory: int | None = None  # bytes: stop with result "bounded" before memory use exceeds this
    por: bool = False            # partial-order reduction (explorer/por.py) where sound: BFS on one worker, DFS
    # BFS: writes checkpoints (explorer/checkpoint.py Checkpointer); resume: the checkpoint's Snapshot to continue
    checkpoint: Any = None
    resume: Any = None


BFS_CHUNK = 512   # frontier states expanded between two batched look-ups in the visited set


def bfs(model: Model, invariants: list[Invariant], options: SearchOptions) -> SearchResult:
    """Breadth-first search: shortest traces. ``options.workers`` > 1 runs it on worker processes."""
    if options.workers > 1:
        from .parallel import parallel_bfs

        result = parallel_bfs(model, invariants, options)
        if options.por:
            result.por = por_report(None, reduction_note(model, options))
        return result
    return serial_bfs(model, invariants, options)


def serial_bfs(model: Model, invariants: list[Invariant], options: SearchOptions) -> SearchResult:
    """BFS in this process. The visited set holds fingerprints only (a sorted array of the earlier levels and
    a set of the current level's); the frontier is expanded in chunks whose successors are looked up in the
    array at once, then handled one by one in order, so counts and stopping points are those of a plain
    one-transition-at-a-time BFS. With ``options.checkpoint``, the start of a level is kept (``LevelMark``, the
    visited array of that moment) for the checkpoints; ``options.resume`` starts from a checkpoint's level."""
    run = Run(model, invariants, options, "bfs")
    actions = ActionIndex(model)
    table = ParentTable(actions)                  # per state: parent index, action id
    visited = FingerprintSet()
    fingerprint = fingerprint_of(model)
    init = model.init_states()[0]
    reduction, por_note = reduction_for(model, invariants, options)
    expand = model.successors if reduction is None else bfs_expander(reduction, fingerprint, visited)
    run.por_report = lambda: por_report(reduction, por_note)
    checkpoints = options.checkpoint
    mark: tuple | None = None   # with checkpoints: (LevelMark, visited array, frontier) at the current level's start

    def save_checkpoint() -> None:
        assert mark is not None, "a checkpoint is saved from a level's start"
        level, fps, level_frontier = mark
        checkpoints.save(lambda: level.snapshot(run, table, fps, frontier_blocks([s for s, _ in level_frontier]), 1))

    def finish(distinct: int, depth: int, bounded: bool, signum: int | None = None) -> SearchResult:
        if checkpoints is not None and mark is not None and (bounded or signum is not None):
            save_checkpoint()
        result = run.result(distinct, depth, bounded, signum)
        result.memory = {"visited_bytes": visited.nbytes + table.nbytes, "visited_states": distinct}
        return result

    max_depth, max_states = options.max_depth, options.max_states
    if options.resume is None:
        visited.add_unsorted([fingerprint(init)])
        if run.record(run.checker.check_state(init), lambda: [(None, init)]):
            return finish(1, 0, False)
        if max_states is not None and len(table) >= max_states:
            return finish(len(table), 0, True)
        frontier = [(init, 0)]                    # (state, index in the table)
        depth = 0
    else:
        snapshot = options.resume
        table = restore(run, snapshot, actions)
        visited.fps = snapshot.fingerprints
        base = len(table) - snapshot.frontier_size
        frontier = [(state, base + i) for i, state in enumerate(snapshot.states)]
        depth = snapshot.depth
        del snapshot
    next_frontier: list = []
    bounded = False
    check_transition, check_state, record, count = (run.checker.check_transition, run.checker.check_state,
                                                    run.record, run.count)
    aid = actions.ids
    try:
        with interruptible(), gc_paused():
            while frontier:
                if checkpoints is not None:
                    # one assignment (an interrupt sees the old mark or the new); merging the level's fingerprints
                    # makes a new array, so this one stays the boundary's
                    mark = (LevelMark.of(run, depth, len(table), len(frontier)), visited.fps, frontier)
                    if checkpoints.due():
                        save_checkpoint()
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
                        for action, after in expand(state):
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
                    run.progress(lambda: f"depth {depth + 1}  distinct {len(table):,}  frontier {len(next_frontier):,}",
                                 lambda: {"depth": depth + 1, "distinct": len(table), "frontier": len(next_frontier)})
                visited.add_unsorted(level)
                del level
                frontier = next_frontier
                if frontier:
                    depth += 1
    except INTERRUPTS as e:
        return finish(len(table), depth + 1 if next_frontier else depth, True, interrupt_signal(e))
    return finish(len(table), depth, bounded)


def dfs(model: Model, invariants: list[Invariant], options: SearchOptions) -> SearchResult:
    """Depth-first search. Without --max-depth it visits exactly BFS's states; with it, a state met again on a
    shorter path is explored again, so every state within the bound is reached."""
    run = Run(model, invariants, options, "dfs")
    fingerprint = fingerprint_of(model)
    init = model.init_states()[0]
    seen: dict[int, int] = {fingerprint(init): 0}   # fingerprint -> smallest depth seen
    reduction, por_note = reduction_for(model, invariants, options)
    on_stack: set[int] = {fingerprint(init)}
    expand = model.successors if reduction is None else dfs_expander(reduction, fingerprint, on_stack)
    run.por_report = lambda: por_report(reduction, por_note)
    if run.record(run.checker.check_state(init), lambda: [(None, init)]):
        return run.result(1, 0, False)
    max_depth, max_states = options.max_depth, options.max_states
    if (max_depth is not None and max_depth <= 0) or (max_states is not None and max_states <= 1):
        return run.result(1, 0, True)
    stack = [(init, iter(expand(init)), fingerprint(init))]
    path: list[Action] = []
    deepest, bounded = 0, False
    try:
        with interruptible():
            while stack:
                state, successors, _ = stack[-1]
                step = next(successors, None)
                if step is None:
                    on_stack.discard(stack.pop()[2])
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
                if new or (max_depth is not None and previous is not None and previous > depth):
                    seen[after_fp] = depth
                    deepest = max(deepest, depth)
                    if max_states is not None and len(seen) >= max_states:
                        return run.result(len(seen), deepest, True)
                    if max_depth is not None and depth >= max_depth:
                        bounded = True
                    else:
                        stack.append((after, iter(expand(after)), after_fp))
                        on_stack.add(after_fp)
                        path.append(action)
                if (stopped := run.checkpoint(len(seen), deepest, lambda: f"depth {len(stack)}  distinct {len(seen):,}",
                                              lambda: {"depth": len(stack), "distinct": len(seen)})) is not None:
                    return stopped
    except INTERRUPTS as e:
        return run.interrupted(len(seen), deepest, e)
    return run.result(len(seen), deepest, bounded)


def simulate(model: Model, invariants: list[Invariant], options: SearchOptions) -> SearchResult:
    """Random walks from the initial state, each up to --max-depth steps (or a default), seeded."""
    run = Run(model, invariants, options, "random")
    fingerprint = fingerprint_of(model)
    rng = random.Random(options.seed)
    init = model.init_states()[0]
    seen = {fingerprint(init)}
    if run.record(run.checker.check_state(init), lambda: [(None, init)]):
        return run.result(1, 0, False)
    if options.max_states is not None and options.max_states <= 1:
        return run.result(1, 0, True)
    walk_depth = options.max_depth if options.max_depth is not None else options.walk_depth
    deepest = 0
    try:
        with interruptible():
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
                if (stopped := run.checkpoint(len(seen), deepest, lambda: f"walk {walk + 1}/{options.walks}  distinct {len(seen):,}",
                                              lambda: {"depth": deepest, "distinct": len(seen), "walk": walk + 1,
                                                       "walks": options.walks})) is not None:
                    return stopped
    except INTERRUPTS as e:
        return run.interrupted(len(seen), deepest, e)
    return run.result(len(seen), deepest, True)


def explore(engine: str, model: Model, invariants: list[Invariant], options: SearchOptions) -> SearchResult:
    with gc_paused():
        return {"bfs": bfs, "dfs": dfs, "random": simulate}[engine](model, invariants, options)
