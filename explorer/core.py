"""Running a search in this process: what the local engines (BFS on one or several workers, DFS, random walks,
liveness) share beyond the kernel's engine machinery (model/spec/engine.py: ``Checker``, ``TransitionCounts``,
``rebuild_trace``, ``SearchResult``, ``Violation``).

- ``Run``: an engine run's counters, violations, progress, memory guard and result.
- ``MemoryGuard``: --max-memory.
- ``gc_paused``: the cyclic garbage collector off during a search.
- ``interruptible``: SIGINT and SIGTERM during a search end it with a partial result (``"interrupted"``).
"""
from __future__ import annotations

import contextlib
import gc
import time
from typing import Callable

from model.spec.engine import Checker, SearchResult, TransitionCounts, Violation, result_status, stops_search
from model.spec.invariant import Invariant
from model.spec.model import Model

# SIGINT and SIGTERM during a search (explorer/signals.py): the first one raises one of INTERRUPTS (or, on Spark,
# sets a flag), a second one is ignored.
from .signals import INTERRUPTS, SearchInterrupted, interrupt_signal, interruptible  # noqa: F401 (the searches' names)
from .visited import format_size, process_memory


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
        assert self.limit is not None, "a note is only written when --max-memory stopped the search"
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
        self.por_report: Callable[[], dict | None] | None = None   # what the result says of partial-order reduction

    def record(self, found, trace_fn) -> bool:
        """Record violations; returns True when the search should stop."""
        if not found:
            return False
        trace = trace_fn()
        for inv, msg in found:
            self.checker.failed.add(inv.id)
            self.violations.append(Violation(inv, msg, trace))
        return stops_search(self.checker.failed, self.checker.selected, self.options.all_violations)

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
        return SearchResult(engine=self.engine, result=result_status(self.violations, bounded, signum),
                            distinct_states=distinct, states_generated=self.generated, depth=depth,
                            elapsed_s=round(time.monotonic() - self.start, 3), coverage=self.coverage_dict(),
                            violations=self.violations, note=self.note, signal=signum,
                            por=None if self.por_report is None else self.por_report())
