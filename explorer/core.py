"""The engine core: what every search engine shares (BFS on one or several workers, DFS, random walks, the Spark
engine, Hypothesis fuzzing and replay).

- ``Checker``: evaluates the selected invariants the same way everywhere (per-broker state invariants together,
  once per distinct broker; each invariant reported once: the ``failed`` set).
- ``TransitionCounts``: generated transitions and per-rule coverage: one firing per transition for its rule,
  plus one ``BrokerUpdateMetadata`` firing per eagerly applied UpdateMetadata (``action.settled``).
- ``rebuild_trace``: the concrete states of a path, re-derived from the initial state by its actions.
- ``collision_probability``: the chance that two distinct states share a 64-bit fingerprint.
- ``SearchResult`` and ``Violation``: what an engine returns.
- ``Run``: an engine run's counters, violations, progress, memory guard and result.
- ``interruptible``: SIGINT and SIGTERM during a search end it with a partial result (``"interrupted"``).

Nothing here imports pyspark or the CLI: the Spark executors import this module.
"""
from __future__ import annotations

import contextlib
import gc
import time
from typing import Callable

import attrs
import numpy as np

from invariants import Invariant
from invariants.storage.safety import first_broker_failure
from model import Action, Model, State, fingerprint
from model.spec.memo import by_value

from .visited import format_size, process_memory

UPDATE_METADATA_RULE = "BrokerUpdateMetadata"   # what an eagerly applied UpdateMetadata counts as
FINGERPRINT_BITS = 64


def collision_probability(states: int) -> float:
    """The chance that two of n distinct states share a 64-bit fingerprint: about n^2 / 2^65 (as TLC reports)."""
    return states * max(states - 1, 0) / 2.0 ** (FINGERPRINT_BITS + 1)


# ---- results ----------------------------------------------------------------------------------------------------

@attrs.define
class Violation:
    invariant: Invariant
    message: str
    trace: list  # [(Action | None, State)], starting at an initial state


@attrs.define
class SearchResult:
    engine: str
    result: str                 # "ok", "violation", "bounded" or "interrupted"
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
    signal: int | None = attrs.field(default=None, kw_only=True)    # "interrupted": the signal (2 SIGINT, 15 SIGTERM)
    por: dict | None = attrs.field(default=None, kw_only=True)       # partial-order reduction: used, note, figures
    # The search's own limits (--max-depth, --max-states, walks, examples...; explorer/bounds.py search_limits).
    limits: dict = attrs.field(factory=dict, kw_only=True)
    # Liveness: lassos that need a step the configuration leaves out (explorer/liveness.py): not violations.
    inconclusive: list = attrs.field(factory=list, kw_only=True)
    # The chance that two distinct states shared a fingerprint (so that one went unexplored): n^2 / 2^65.
    collision_probability: float = attrs.field(
        default=attrs.Factory(lambda self: collision_probability(self.distinct_states), takes_self=True),
        kw_only=True)


# ---- interrupts -------------------------------------------------------------------------------------------------

# SIGINT and SIGTERM during a search (explorer/signals.py): the first one raises one of INTERRUPTS (or, on Spark,
# sets a flag), a second one is ignored.
from .signals import INTERRUPTS, SearchInterrupted, interrupt_signal, interruptible  # noqa: E402,F401


# ---- counting ---------------------------------------------------------------------------------------------------

def update_metadata_rule(model: Model) -> int:
    """The rule index an eagerly applied UpdateMetadata is counted under."""
    return model.rule_index[UPDATE_METADATA_RULE]


class TransitionCounts:
    """Generated transitions and per-rule coverage, counted the same way by every engine."""

    def __init__(self, model: Model):
        self.rules = model.rules
        self.coverage = [0] * len(model.rules)
        self.um_rule = update_metadata_rule(model)
        self.generated = 0

    def count(self, action: Action) -> None:
        """One generated transition: its rule fired, and BrokerUpdateMetadata once per settled UpdateMetadata."""
        self.generated += 1
        self.coverage[action.rule] += 1
        if action.settled:
            self.coverage[self.um_rule] += len(action.settled)

    def count_arrays(self, rules, settled) -> tuple[int, list]:
        """The (transitions, coverage) of transitions given as arrays of rule indices (uint16) and settled
        UpdateMetadata counts, as ``count`` would count them (not added to this object's totals)."""
        rules = np.asarray(rules)
        coverage = np.bincount(rules, minlength=len(self.coverage)).astype(np.int64)
        coverage[self.um_rule] += int(np.asarray(settled).sum(dtype=np.int64))
        return len(rules), coverage.tolist()

    def add(self, generated: int, coverage) -> None:
        """Add transitions counted elsewhere (a worker, an executor)."""
        self.generated += generated
        for i, k in enumerate(coverage):
            self.coverage[i] += k

    def coverage_dict(self) -> dict:
        return {r.name: n for r, n in zip(self.rules, self.coverage)}


# ---- invariants -------------------------------------------------------------------------------------------------

class Checker:
    """Evaluates the selected invariants; remembers which already failed (each is reported once)."""

    def __init__(self, model: Model, invariants: list[Invariant]):
        self.model = model
        self.is_quiescent = model.is_quiescent
        self.state_invs = [i for i in invariants if i.kind == "state"]
        self.quiescent_invs = [i for i in invariants if i.kind == "quiescent"]
        self.transition_invs = [i for i in invariants if i.kind == "transition"]
        self.failed: set[str] = set()
        # Per-broker state invariants (invariants/storage/safety.py per_broker) are evaluated together, once per distinct
        # broker: each broker's results as a tuple (slot k: the k-th such invariant), or None when all pass.
        per_broker = [i for i in self.state_invs if hasattr(i.check, "broker_check")]
        checks = [i.check.broker_check for i in per_broker]
        self.broker_slot = {i.id: k for k, i in enumerate(per_broker)}

        def broker_results(broker):
            results = tuple(check(broker) for check in checks)
            return None if all(r is None for r in results) else results

        self.broker_results = by_value(broker_results, 1 << 16)

    @property
    def selected(self) -> int:
        return len(self.state_invs) + len(self.quiescent_invs) + len(self.transition_invs)

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
        if self.quiescent_invs and self.is_quiescent(state):
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


# ---- paths and fingerprints -------------------------------------------------------------------------------------

def fingerprint_of(model: Model) -> Callable[[State], int]:
    """The model's fingerprint function: of a canonical representative when symmetry reduction is on."""
    return getattr(model, "fingerprint", fingerprint)


def rebuild_trace(model: Model, actions: list[Action]) -> list:
    """Re-derive the concrete states of a path from the initial state (the visited sets keep no states)."""
    state = model.init_states()[0]
    trace = [(None, state)]
    for action in actions:
        name = model.rules[action.rule].name
        action, state = model.step(state, name, action.args)
        trace.append((action, state))
    return trace


# ---- an engine run ----------------------------------------------------------------------------------------------

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


class Run(TransitionCounts):
    """What every local engine shares: counters and coverage, violations, progress, bounds and the result."""

    def __init__(self, model: Model, invariants: list[Invariant], options, engine: str):
        super().__init__(model)
        self.model, self.options, self.engine = model, options, engine
        self.checker = Checker(model, invariants)
        self.violations: list[Violation] = []
        self.start = time.monotonic()
        self.progress_interval = getattr(options, "progress_interval", 3.0)
        self.progress_figures = getattr(options, "progress_figures", None)
        self.next_progress = self.start + self.progress_interval
        self.memory = MemoryGuard(options.max_memory)
        self.note: str | None = None
        self.por_report: Callable[[], dict] | None = None   # what the result says of partial-order reduction

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
        return len(self.checker.failed) >= self.checker.selected

    def out_of_memory(self, distinct: int, depth: int) -> SearchResult | None:
        """--max-memory: the bounded result (with its note) when the limit is reached, else None."""
        if not self.memory.exceeded():
            return None
        self.note = self.memory.note(distinct, depth)
        return self.result(distinct, depth, True)

    def checkpoint(self, distinct: int, depth: int, text_fn, figures_fn=None) -> SearchResult | None:
        """Between two steps of DFS or two random walks: stop at --max-memory, else report progress."""
        stopped = self.out_of_memory(distinct, depth)
        if stopped is None:
            self.progress(text_fn, figures_fn)
        return stopped

    def interrupted(self, distinct: int, depth: int, error: BaseException) -> SearchResult:
        """The partial result of a search stopped by SIGINT or SIGTERM (``error``: the caught interrupt)."""
        return self.result(distinct, depth, True, interrupt_signal(error))

    def progress(self, text_fn, figures_fn=None) -> None:
        """Every ``options.progress_interval`` seconds (3 by default): a text line to ``options.progress`` and,
        when ``options.progress_figures`` is set, the figures as a dict: ``engine``, ``elapsed_s``,
        ``generated``, ``memory_bytes``, ``max_states`` and the engine's own (``figures_fn()``: ``depth``,
        ``distinct``, ``frontier`` for BFS). Only the clock is read between two reports."""
        if self.options.progress is None and self.progress_figures is None:
            return
        now = time.monotonic()
        if now >= self.next_progress:
            self.next_progress = now + self.progress_interval
            elapsed = now - self.start
            if self.options.progress is not None:
                self.options.progress(f"{text_fn()}  generated {self.generated:,}  {elapsed:.0f}s")
            if self.progress_figures is not None:
                figures = {"engine": self.engine, "elapsed_s": elapsed, "generated": self.generated,
                           "max_states": self.options.max_states}
                try:
                    figures["memory_bytes"] = self.memory.measure()
                except OSError:
                    pass
                if figures_fn is not None:
                    figures.update(figures_fn())
                self.progress_figures(figures)

    def result(self, distinct: int, depth: int, bounded: bool, signum: int | None = None) -> SearchResult:
        """The result; ``signum``: the search was stopped by that signal (result "interrupted")."""
        if signum is not None:
            status = "interrupted"
        else:
            status = "violation" if self.violations else ("bounded" if bounded else "ok")
        return SearchResult(self.engine, status, distinct, self.generated, depth,
                            round(time.monotonic() - self.start, 3), self.coverage_dict(), self.violations,
                            note=self.note, signal=signum,
                            por=None if self.por_report is None else self.por_report())
