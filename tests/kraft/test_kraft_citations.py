"""Every Kafka method docs/kraft.md and the KRaft rules cite names the releases it was read at (issue 39's
acceptance): each is a row of docs/kraft.md's "Code read, by release", whose row says how its text compares across
the releases 3.7.0 to 4.3.1 and what changed since 3.9.2; a row whose text changed between 3.9.2 and 4.3.1 says
what changed, and each change it numbers is one of "What changed from 3.9 to 4.4"."""
from __future__ import annotations

import re

import pytest

from explorer.catalog import PRESETS, build_model, preset_config

from support.helpers import REPO

KRAFT_MD = (REPO / "docs" / "kraft.md").read_text(encoding="utf-8")
CITATION = re.compile(r"\b([A-Z][A-Za-z0-9]+)\.([a-z][A-Za-z0-9]+)\b")
# Names of the form Class.method that are not Kafka's: jbodcheck's own, Java's, and the builder's variables.
NOT_KAFKA = {"Bug.feature", "Feature.formats", "Model.step", "List.of", "P.elr", "P.isr", "P.leader"}
KRAFT_PRESETS = [name for name, (_, params) in PRESETS.items() if params.get("variant") == "kraft"]
RELEASES_READ = "3.7.0 3.7.2 3.8.1 3.9.2 4.0.2 4.1.2 4.2.1 4.3.1".split()


def _section(title: str) -> str:
    start = KRAFT_MD.index(f"\n## {title}")
    end = KRAFT_MD.index("\n## ", start + 4)
    return KRAFT_MD[start:end]


CODE_READ = _section("Code read, by release")
ROWS = {m[1]: m for m in re.finditer(r"^\| `([A-Za-z0-9]+\.[A-Za-z0-9]+)` \| ([^|]+) \| ([^|]+) \| ([^|]+) \|$",
                                       CODE_READ, re.M)}


def _cited(text: str) -> set[str]:
    return {f"{c}.{m}" for c, m in CITATION.findall(text)} - NOT_KAFKA


def test_the_table_names_the_releases_it_compares():
    assert " ".join(RELEASES_READ) in CODE_READ and "4.4.0" in CODE_READ
    assert len(ROWS) > 90


def test_every_method_docs_kraft_cites_is_read_by_release():
    elsewhere = KRAFT_MD.replace(CODE_READ, "")
    missing = sorted(c for c in _cited(elsewhere) if c not in ROWS)
    assert missing == [], f"cited in docs/kraft.md without a row in 'Code read, by release': {missing}"


def _kraft_references() -> set[str]:
    refs = set()
    for name in KRAFT_PRESETS:
        for rule in build_model(preset_config(name)).rules:
            if getattr(rule.effect, "__module__", "").startswith("model.kraft"):
                refs.add(rule.reference or "")
    return refs


def test_every_method_a_kraft_rule_cites_is_read_by_release():
    missing = sorted({c for ref in _kraft_references() for c in _cited(ref)} - set(ROWS))
    assert missing == [], f"cited by a KRaft rule without a row in 'Code read, by release': {missing}"


CHANGES = {int(n) for n in re.findall(r"^\| (\d+) \| ", _section("What changed from 3.9 to 4.4"), re.M)}


@pytest.mark.parametrize("method", sorted(ROWS))
def test_each_row_says_how_the_text_compares_and_what_changed(method):
    _, path, letters, note = ROWS[method].groups()
    letters = letters.split()
    assert len(letters) == len(RELEASES_READ) and all(re.fullmatch(r"[A-Z]|-", x) for x in letters), method
    assert re.fullmatch(r"\S+\.(java|scala):\d+( \(3\.9\.2\))?", path.strip()) and note.strip(), method
    if letters[3] != letters[7]:            # 3.9.2 against 4.3.1
        assert not note.strip().startswith("same text"), method
    for n in re.findall(r"(?<![\w/])#(\d+)", note):     # not a pull request (apache/kafka#N)
        assert int(n) in CHANGES, f"{method}: change #{n} is not in 'What changed from 3.9 to 4.4'"
