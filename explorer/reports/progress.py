"""Progress on stderr (explore, fuzz): plain lines every 3 seconds when stderr is not a terminal (as before),
a live display (rich) on a terminal, nothing with -q.

The engines report through ``SearchOptions.progress`` (a text line) and ``SearchOptions.progress_figures``
(a dict: ``engine``, ``elapsed_s``, ``generated``, ``memory_bytes``, ``max_states``, and the engine's ``depth``,
``distinct``, ``frontier``, ``walk``/``walks``; explorer/core.py ``Run.progress``), at most every
``progress_interval`` seconds: the hot loops only read the clock.

The estimate of the remaining work is labelled as one. With ``--max-states`` it is the states left at the
current rate. For BFS without it, from the frontier: once the last completed levels shrink by a steady factor
r < 1, the levels still to come hold about ``frontier * r / (1 - r)`` states (a geometric series); while the
frontier grows no estimate is made (it would be a guess).
"""
from __future__ import annotations

import sys

import click

from explorer.visited import format_size


class PlainProgress:
    """Lines prefixed with the engine, as jbodcheck always printed them."""

    interval = 3.0

    def __init__(self, prefix: str):
        self.prefix = prefix

    def line(self, text: str) -> None:
        click.echo(f"[{self.prefix}] {text}", err=True)

    figures = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def estimate(figures: dict, levels: dict[int, int], rate: float) -> str | None:
    """The remaining work, in words, or None when no estimate can be made."""
    distinct = figures.get("distinct")
    max_states = figures.get("max_states")
    if max_states and distinct is not None and rate > 0:
        left = max(0, max_states - distinct)
        return f"estimate: {left:,} states to --max-states, about {_duration(left / rate)} at the current rate"
    if figures.get("walks") and figures.get("walk"):
        done = figures["walk"] / figures["walks"]
        if done > 0:
            return f"estimate: {_duration(figures['elapsed_s'] * (1 - done) / done)} for the remaining walks"
    depth = figures.get("depth")
    if depth is None or "frontier" not in figures:
        return None
    done = sorted(d for d in levels if d < depth)
    if len(done) < 3:
        return None
    a, b, c = (levels[d] for d in done[-3:])
    if not a or not b:
        return None
    r1, r2 = b / a, c / b
    if r2 >= 0.95 or r1 >= 1.0:
        return f"no estimate: the frontier still grows (x{r2:.2f} per level)"
    r = max(r1, r2)                       # the slower shrink: an estimate on the long side
    left = int(figures["frontier"] * r / (1 - r))
    if rate <= 0:
        return None
    return (f"estimate: about {left:,} more states, {_duration(left / rate)} (the frontier shrinks x{r:.2f} "
            f"per level)")


def _duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 90:
        return f"{seconds}s"
    if seconds < 5400:
        return f"{seconds // 60}m {seconds % 60:02d}s"
    return f"{seconds // 3600}h {seconds % 3600 // 60:02d}m"


class LiveProgress:
    """A live panel on the terminal (rich): states, states/s, depth, frontier, memory, an estimate."""

    interval = 1.0

    def __init__(self, prefix: str, stream=None):
        from rich.console import Console

        self.prefix = prefix
        self.console = Console(file=stream or sys.stderr)
        self.live = None
        self.levels: dict[int, int] = {}
        self.last_line = ""
        self.last = None                  # (elapsed, distinct) of the previous report

    def __enter__(self):
        from rich.live import Live

        self.live = Live(self._render({}), console=self.console, transient=True, auto_refresh=False)
        self.live.__enter__()
        return self

    def __exit__(self, *exc):
        if self.live is not None:
            self.live.__exit__(*exc)
            self.live = None
        return False

    def line(self, text: str) -> None:
        self.last_line = text
        if self.live is not None and not self._has_figures:
            self.live.update(self._render({"line": text}), refresh=True)

    _has_figures = False

    def figures(self, figures: dict) -> None:
        self._has_figures = True
        depth, frontier = figures.get("depth"), figures.get("frontier")
        if depth is not None and frontier is not None:
            self.levels[depth] = max(self.levels.get(depth, 0), frontier)
        if self.live is not None:
            self.live.update(self._render(figures), refresh=True)

    def _render(self, figures: dict):
        from rich.table import Table
        from rich.text import Text

        table = Table.grid(padding=(0, 2))
        add = table.add_row
        table.add_row = lambda *cells: add(*(Text(c) for c in cells))   # no rich markup in the values
        table.add_column(style="bold cyan", justify="right", no_wrap=True)
        table.add_column()
        if "line" in figures or not figures:
            table.add_row(f"[{self.prefix}]", figures.get("line", "starting..."))
            return table
        elapsed = figures.get("elapsed_s", 0.0)
        distinct = figures.get("distinct", 0)
        rate = distinct / elapsed if elapsed > 0 else 0.0
        if self.last is not None and elapsed > self.last[0]:
            recent = (distinct - self.last[1]) / (elapsed - self.last[0])
            rate = recent if recent > 0 else rate
        self.last = (elapsed, distinct)
        table.add_row(f"[{self.prefix}]", f"{distinct:,} distinct states, {figures.get('generated', 0):,} generated")
        table.add_row("rate", f"{rate:,.0f} distinct states/s")
        where = f"depth {figures.get('depth', '-')}"
        if "frontier" in figures:
            where += f", frontier {figures['frontier']:,}"
        if "walk" in figures:
            where += f", walk {figures['walk']:,} of {figures['walks']:,}"
        table.add_row("search", where)
        if "memory_bytes" in figures:
            table.add_row("memory", format_size(figures["memory_bytes"]))
        table.add_row("elapsed", _duration(elapsed))
        guess = estimate(figures, self.levels, rate)
        if guess:
            table.add_row("remaining", guess)
        return table


def progress_for(prefix: str, quiet: bool, stream=None):
    """The progress reporter of a command: None with -q, a live display on a terminal, else plain lines."""
    if quiet:
        return None
    stream = stream or sys.stderr
    isatty = getattr(stream, "isatty", None)
    if isatty is not None and isatty():
        return LiveProgress(prefix, stream)
    return PlainProgress(prefix)
