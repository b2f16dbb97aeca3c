"""The HTML page of a real counterexample in a real browser: headless Chromium (Debian's `chromium`) loads
`explore --preset small --variant legacy --html` and dumps the DOM after the page's script ran; the URL fragment
steps (`#step=N`), presses keys (`press=ArrowRight,...`) and clicks buttons (`click=prev,...`) on load. Skipped
when no Chromium binary is installed (`apt-get install -y chromium`)."""
from __future__ import annotations

import os
import shutil
import subprocess
from html.parser import HTMLParser

import pytest

from support.cli import cli
from explorer.catalog import build_model

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome", "chrome")
                 if shutil.which(n)), None)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium binary found (apt-get install -y chromium)")

INVARIANT = "no_recreate_with_bad_dir"
STEPS = 4


@pytest.fixture(scope="module")
def legacy_page(tmp_path_factory):
    path = tmp_path_factory.mktemp("html") / "legacy.html"
    p = cli("explore", "--preset", "small", "--variant", "legacy", "-q", "--html", path)
    assert p.returncode == 1, p.stderr
    return path


def _chromium(tmp_path, *args, timeout=120):
    profile = tmp_path / "profile"
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
           f"--user-data-dir={profile}", "--virtual-time-budget=5000", *map(str, args)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


class _Dom(HTMLParser):
    """The violation sections, their step panels and step rows, as the browser left them."""

    def __init__(self):
        super().__init__()
        self.sections, self.panels, self.rows, self.body = [], [], [], {}
        self.text = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        if tag == "body":
            self.body = a
        elif tag == "section" and "violation" in classes:
            self.sections.append(a)
        elif tag == "article" and "step" in classes:
            self.panels.append(a)
        elif tag == "li" and "row" in classes:
            self.rows.append(a)

    def handle_data(self, data):
        self.text.append(data)


def _dom(tmp_path, page, fragment: str = "") -> _Dom:
    url = page.resolve().as_uri() + (f"#{fragment}" if fragment else "")
    p = _chromium(tmp_path, "--dump-dom", url)
    assert p.returncode == 0, p.stderr[-2000:]
    dom = _Dom()
    dom.feed(p.stdout)
    assert dom.body.get("data-ready") == "1", "the page's script did not run"
    return dom


def _shown(dom: _Dom) -> list[int]:
    return [int(a["data-step"]) for a in dom.panels if "hidden" not in a]


def _current_row(dom: _Dom) -> list[int]:
    return [int(a["data-step"]) for a in dom.rows if "current" in (a.get("class") or "").split()]


def test_every_step_is_present_and_the_invariant_is_named(tmp_path, legacy_page):
    dom = _dom(tmp_path, legacy_page)
    assert [int(a["data-step"]) for a in dom.panels] == list(range(STEPS + 1))
    assert [int(a["data-step"]) for a in dom.rows] == list(range(STEPS + 1))
    text = " ".join(dom.text)
    assert INVARIANT in text and "Coverage" in text
    assert len(dom.sections) == 1 and dom.sections[0]["data-current"] == "0"
    assert _shown(dom) == [0] and _current_row(dom) == [0]


@pytest.mark.parametrize("fragment, expected", [
    ("step=2", 2),
    (f"step={STEPS}", STEPS),
    ("step=99", STEPS),                                  # clamped
    ("press=ArrowRight,ArrowRight,ArrowRight", 3),      # the arrow keys
    ("step=3&press=ArrowLeft,ArrowLeft", 1),
    ("press=End,ArrowLeft", STEPS - 1),
    ("click=next,next,last,prev", STEPS - 1),           # the buttons
    ("step=2&click=first", 0),
])
def test_stepping(tmp_path, legacy_page, fragment, expected):
    dom = _dom(tmp_path, legacy_page, fragment)
    assert dom.sections[0]["data-current"] == str(expected)
    assert _shown(dom) == [expected]
    assert _current_row(dom) == [expected]


def test_screenshot(tmp_path, legacy_page):
    shot = tmp_path / "legacy-trace.png"
    url = legacy_page.resolve().as_uri() + f"#step={STEPS}"
    p = _chromium(tmp_path, f"--screenshot={shot}", "--window-size=1400,1250", "--hide-scrollbars", url)
    assert p.returncode == 0, p.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
    keep = os.environ.get("JBODCHECK_SCREENSHOT")      # e.g. docs/img/legacy-trace.png, to refresh the README's
    if keep:
        shutil.copyfile(shot, keep)


def test_a_long_trace_steps_to_its_end(tmp_path):
    """A 30-to-40-step trace (a random path on a cluster with loose bounds, shown as a counterexample) renders
    and steps like the short one."""
    import random

    from model.spec.engine import SearchResult, Violation, rebuild_trace
    from explorer.fuzz import LOOSE_BOUNDS
    from explorer.reports.html import page, references
    from explorer.reports.report import report_dict
    from explorer.catalog import preset_config

    model = build_model(preset_config("small", variant="legacy", **{**LOOSE_BOUNDS, "max_faults": 8, "max_crashes": 4,
                                                               "max_restarts": 4, "max_failovers": 3, "max_fixes": 3,
                                                               "max_records": 2}), preset="small")
    rng, state, actions = random.Random(15), model.init_states()[0], []
    while len(actions) < 40 and (successors := list(model.successors(state))):
        action, state = successors[rng.randrange(len(successors))]
        actions.append(action)
    assert len(actions) >= 30
    result = SearchResult("random", "violation", 1, 1, len(actions), 0.0, {},
                          [Violation(model.invariants[0], "a long trace", rebuild_trace(model, actions))])
    path = tmp_path / "long.html"
    path.write_text(page(report_dict(model, result), references(model)))
    dom = _dom(tmp_path, path, "step=20&press=End,ArrowLeft,ArrowRight")
    assert len(dom.panels) == len(actions) + 1
    assert dom.sections[0]["data-current"] == str(len(actions))
    assert _shown(dom) == [len(actions)]
