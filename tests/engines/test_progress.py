"""Progress (issue #17): the figures the engines report, the estimate of the remaining work, and which display a
command gets (none with -q, plain lines off a terminal, a live rich display on one)."""
from __future__ import annotations

import io

from explorer.reports.progress import LiveProgress, PlainProgress, estimate, progress_for
from explorer.search import SearchOptions, explore
from explorer.visited import format_size
from explorer.catalog import preset_config
from explorer.catalog import build_model


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_engines_report_figures_when_asked():
    model = build_model(preset_config("tiny"), symmetry=True)
    for engine, keys in (("bfs", {"depth", "distinct", "frontier"}), ("dfs", {"depth", "distinct"}),
                         ("random", {"depth", "distinct", "walk", "walks"})):
        lines, figures = [], []
        options = SearchOptions(progress=lines.append, progress_figures=figures.append, progress_interval=0.0,
                                max_states=3000, walks=20)
        explore(engine, model, list(model.invariants), options)
        assert figures and len(figures) == len(lines), engine
        for f in figures:
            assert keys | {"engine", "elapsed_s", "generated", "max_states"} <= set(f), (engine, f)
            assert f["engine"] == engine and f["max_states"] == 3000
        assert [f["distinct"] for f in figures] == sorted(f["distinct"] for f in figures)


def test_plain_progress_is_unchanged_without_figures():
    model = build_model(preset_config("tiny"), symmetry=True)
    lines = []
    explore("bfs", model, list(model.invariants), SearchOptions(progress=lines.append, progress_interval=0.0,
                                                                max_states=2000))
    assert lines and all(line.startswith("depth ") and "distinct" in line and "generated" in line for line in lines)


def test_estimate():
    # --max-states: the states left at the current rate.
    assert estimate({"distinct": 500, "max_states": 1500}, {}, 100.0) == \
        "estimate: 1,000 states to --max-states, about 10s at the current rate"
    # A frontier shrinking by 0.8 then 0.5 per level: the slower factor, a geometric series.
    levels = {1: 10, 2: 100, 3: 80, 4: 40}
    text = estimate({"depth": 5, "frontier": 20, "distinct": 250}, levels, 10.0)
    assert text.startswith("estimate: about 80 more states, 8s") and "x0.80" in text
    # Still growing: no number is made up.
    assert estimate({"depth": 4, "frontier": 300}, {1: 10, 2: 50, 3: 200}, 10.0).startswith("no estimate")
    # Too few levels yet.
    assert estimate({"depth": 2, "frontier": 5}, {1: 3}, 10.0) is None


def test_which_display():
    assert progress_for("bfs", quiet=True) is None
    assert isinstance(progress_for("bfs", quiet=False, stream=io.StringIO()), PlainProgress)
    live = progress_for("bfs", quiet=False, stream=_Tty())
    assert isinstance(live, LiveProgress) and live.interval < PlainProgress.interval


def test_live_display_renders_the_figures():
    stream = _Tty()
    live = LiveProgress("bfs", stream)
    live.console.width = 120
    with live:
        for depth, frontier in ((1, 10), (2, 100), (3, 80), (4, 40), (5, 20)):
            live.figures({"engine": "bfs", "elapsed_s": float(depth), "generated": 1000 * depth,
                          "distinct": 100 * depth, "depth": depth, "frontier": frontier, "memory_bytes": 64 << 20,
                          "max_states": None})
        live.console.print(live._render({"engine": "bfs", "elapsed_s": 6.0, "generated": 6000, "distinct": 600,
                                         "depth": 5, "frontier": 20, "memory_bytes": 64 << 20}))
    out = stream.getvalue()
    for needle in ("[bfs]", "600 distinct states", "6,000 generated", "depth 5, frontier 20", format_size(64 << 20),
                   "remaining", "estimate: about"):
        assert needle in out, (needle, out[-800:])
