"""Search engines over the model's rule registry: BFS (shortest traces), DFS and random simulation.

Every engine checks the same invariants the same way (``Checker``) and counts per-rule coverage the same
way: one firing per generated transition, plus one BrokerUpdateMetadata firing per eagerly applied
UpdateMetadata.
"""
from __future__ import annotations

import random
import time
from typing import Callable

import attrs

from invariants import Invariant
from model import Action, Model, State, fingerprint, is_quiescent

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


@attrs.define
class SearchOptions:
    max_depth: int | None = None
    max_states: int | None = None
    seed: int = 0
    all_violations: bool = False
    walks: int = 1000            # random simulation: number of walks
    walk_depth: int = 60         # random simulation: steps per walk when --max-depth is not given
    progress: Callable[[str], None] | None = None   # receives a progress line every few seconds


class Checker:
    """Evaluates the selected invariants; remembers which already failed (each is reported once)."""

    def __init__(self, model: Model, invariants: list[Invariant]):
        self.model = model
        self.state_invs = [i for i in invariants if i.kind == "state"]
        self.quiescent_invs = [i for i in invariants if i.kind == "quiescent"]
        self.transition_invs = [i for i in invariants if i.kind == "transition"]
        self.failed: set[str] = set()

    def check_state(self, state: State) -> list[tuple[Invariant, str]]:
        found = []
        for inv in self.state_invs:
            if inv.id not in self.failed:
                msg = inv.check(self.model, state)
                if msg is not None:
                    found.append((inv, msg))
        if self.quiescent_invs and is_quiescent(state):
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
                            round(time.monotonic() - self.start, 3), coverage, self.violations)


def rebuild_trace(model: Model, actions: list[Action]) -> list:
    """Re-derive the concrete states of a path from the initial state (the visited set keeps no states)."""
    state = model.init_states()[0]
    trace = [(None, state)]
    for action in actions:
        name = model.rules[action.rule].name
        action, state = model.step(state, name, action.args)
        trace.append((action, state))
    return trace


def bfs(model: Model, invariants: list[Invariant], options: SearchOptions) -> SearchResult:
    run = _Run(model, invariants, options, "bfs")
    init = model.init_states()[0]
    init_fp = fingerprint(init)
    parents: dict[int, tuple] = {init_fp: None}   # fingerprint -> (parent fingerprint, action)

    def path_to(fp: int) -> list[Action]:
        actions = []
        while parents[fp] is not None:
            fp, action = parents[fp]
            actions.append(action)
        return actions[::-1]

    if run.record(run.checker.check_state(init), lambda: [(None, init)]):
        return run.result(1, 0, False)
    frontier = [(init, init_fp)]
    depth, bounded = 0, False
    max_depth, max_states = options.max_depth, options.max_states
    while frontier:
        if max_depth is not None and depth >= max_depth:
            bounded = True
            break
        next_frontier = []
        for state, fp in frontier:
            for action, after in model.successors(state):
                run.count(action)
                found = run.checker.check_transition(state, action, after)
                after_fp = fingerprint(after)
                new = after_fp not in parents
                if new:
                    parents[after_fp] = (fp, action)
                    next_frontier.append((after, after_fp))
                    found += run.checker.check_state(after)
                if found and run.record(found, lambda: rebuild_trace(model, path_to(fp) + [action])):
                    return run.result(len(parents), depth + 1, False)
                if max_states is not None and len(parents) >= max_states:
                    return run.result(len(parents), depth + 1, True)
            run.progress(lambda: f"depth {depth + 1}  distinct {len(parents):,}  frontier {len(next_frontier):,}")
        frontier = next_frontier
        if frontier:
            depth += 1
    return run.result(len(parents), depth, bounded)


def dfs(model: Model, invariants: list[Invariant], options: SearchOptions) -> SearchResult:
    """Depth-first search. Without --max-depth it visits exactly BFS's states; with it, a state met again on a
    shorter path is explored again, so every state within the bound is reached."""
    run = _Run(model, invariants, options, "dfs")
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
        run.progress(lambda: f"depth {len(stack)}  distinct {len(seen):,}")
    return run.result(len(seen), deepest, bounded)


def simulate(model: Model, invariants: list[Invariant], options: SearchOptions) -> SearchResult:
    """Random walks from the initial state, each up to --max-depth steps (or a default), seeded."""
    run = _Run(model, invariants, options, "random")
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
        run.progress(lambda: f"walk {walk + 1}/{options.walks}  distinct {len(seen):,}")
    return run.result(len(seen), deepest, True)


def explore(engine: str, model: Model, invariants: list[Invariant], options: SearchOptions) -> SearchResult:
    return {"bfs": bfs, "dfs": dfs, "random": simulate}[engine](model, invariants, options)
