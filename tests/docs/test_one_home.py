"""Each finding is told once (issue 49): its report in docs/findings/ is the only home of its traces.

A trace is a finding page's marker (tests/support/findings.py) that names 6 steps or more. A doc retells it when its
mentions of those steps' rules (`Name(`), read in order and with the other rules left out, hold the marker's names
one after another. The docs read are the top-level *.md and docs/**/*.md, but for docs/findings/ (findings may share
a mechanism, finding 8 is finding 3's in reverse) and docs/reference/ (generated from the rule registry).
A ```console block is left out: it shows what a command prints, checked by tests/docs/test_docs.py, not a telling.
"""

from __future__ import annotations

import re
from pathlib import Path

from support.findings import markers
from support.helpers import REPO

MIN_STEPS = 6
CONSOLE = re.compile(r"^```console\n.*?^```", re.M | re.S)


def traces(findings: Path) -> list[tuple[str, int, list[str]]]:
    """(page, line, rule names in order) of every marker of 6 steps or more on a finding page."""
    out = []
    for page in sorted(findings.glob("finding-*.md")):
        for name, line, fields, _after in markers(page):
            names = [label.strip().split("(")[0] for label in fields.get("names", "").split(";") if label.strip()]
            if len(names) >= MIN_STEPS:
                out.append((name, line, names))
    return out


def retells(text: str, names: list[str]) -> bool:
    mention = re.compile(r"\b(" + "|".join(sorted(set(names), key=len, reverse=True)) + r")\(")
    said = [m.group(1) for m in mention.finditer(CONSOLE.sub("", text))]
    return any(said[i : i + len(names)] == names for i in range(len(said) - len(names) + 1))


def other_docs(repo: Path) -> list[Path]:
    docs = sorted(repo.glob("*.md")) + sorted((repo / "docs").rglob("*.md"))
    return [p for p in docs if not {"findings", "reference"} & set(p.relative_to(repo).parts[:-1])]


def retellings(traces_: list[tuple[str, int, list[str]]], docs: list[Path]) -> list[tuple[str, int, str]]:
    texts = {doc: doc.read_text(encoding="utf-8") for doc in docs}
    return [
        (page, line, doc.name) for page, line, names in traces_ for doc, text in texts.items() if retells(text, names)
    ]


TRACES = traces(REPO / "docs" / "findings")


def test_no_other_doc_retells_a_finding_reports_trace():
    assert len({page for page, _line, _names in TRACES}) >= 6, TRACES  # findings 6 and 7 name 4 steps
    docs = other_docs(REPO)
    assert REPO / "README.md" in docs and REPO / "docs" / "kraft.md" in docs
    assert retellings(TRACES, docs) == [], "told in full outside docs/findings/: link to the report instead"


def test_a_planted_retelling_is_found(tmp_path):
    page, line, names = next(t for t in TRACES if t[0].startswith("finding-5-"))
    assert "ControllerFailover" not in names  # a rule outside the trace, mentioned between its steps
    steps = "\n".join(
        f"{k}. `{name}(0)`: what it does (unlike `ControllerFailover()`)." for k, name in enumerate(names, 1)
    )
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "retold.md").write_text(f"# A retelling\n\nThe trace, step by step:\n\n{steps}\n")
    (tmp_path / "docs" / "linked.md").write_text("# A link\n\nFinding 5: [its report](findings/finding-5.md).\n")
    (tmp_path / "docs" / "output.md").write_text(f"# Output\n\n```console\n{steps}\n```\n")
    swapped = names[:]
    swapped[1], swapped[2] = swapped[2], swapped[1]
    (tmp_path / "docs" / "reordered.md").write_text("\n".join(f"`{name}(0)`" for name in swapped))
    found = retellings([(page, line, names)], other_docs(tmp_path))
    assert found == [(page, line, "retold.md")], found
