"""docs/reference/ is generated from the code (explorer/reference/): the committed pages must be what the code
generates now, and the generator must say so when one is not."""
from __future__ import annotations

import re

from explorer.catalog import claimed_invariants, features
from explorer.reference.pages import PAGES, stale_pages

from support.helpers import REPO

REFERENCE = REPO / "docs" / "reference"


def test_the_committed_reference_pages_are_what_the_code_generates():
    stale = stale_pages(REFERENCE)
    assert not stale, f"stale: {', '.join(stale)}: run python3 -m explorer.reference and commit docs/reference/"


def test_a_changed_or_missing_page_is_stale(tmp_path):
    for name, generate in PAGES.items():
        (tmp_path / name).write_text(generate())
    assert stale_pages(tmp_path) == []
    (tmp_path / "rules.md").write_text((tmp_path / "rules.md").read_text().replace("DirFail", "DirFails", 1))
    (tmp_path / "cli.md").unlink()
    assert stale_pages(tmp_path) == ["rules.md", "cli.md"]


def test_every_rule_and_invariant_has_its_entry():
    rules = (REFERENCE / "rules.md").read_text()
    declared = [(f.name, r.name) for f in features() for r in [*f.rules, *f.replaces.values()]]
    headings = re.findall(r"^#### `(\w+)\(", rules, re.M)
    assert headings == [name for _, name in declared]
    invariants = (REFERENCE / "invariants.md").read_text()
    assert re.findall(r"^## (\w+)$", invariants, re.M) == [i.id for _, i in claimed_invariants()]


def test_the_specifications_link_to_the_generated_reference():
    for doc, section in (("model.md", "## 7. Rules"), ("model.md", "## 9. Invariants"), ("kraft.md", "## Rules"),
                         ("kraft.md", "## Properties"), ("cli.md", "## MODEL options")):
        text = (REPO / "docs" / doc).read_text()
        after = text[text.index(f"\n{section}\n") + len(section) + 2:].lstrip("\n").splitlines()[0]
        assert "reference/" in after, f"docs/{doc} {section!r} opens without its link to docs/reference/"
