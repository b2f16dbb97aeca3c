"""Console blocks of the docs (a command and what it prints) compared with what the command prints now."""
from __future__ import annotations

import re

from support.helpers import REPO


def console_blocks(section: str, doc: str = "README.md") -> list[str]:
    """The ```console blocks of a section (## heading) of a document of the repository."""
    text = (REPO / doc).read_text()
    start = text.index(f"## {section}\n")
    end = text.index("\n## ", start + 1)
    return re.findall(r"```console\n(.*?)```", text[start:end], re.S)


def matches_with_trims(shown: list[str], printed: list[str]) -> None:
    """Every shown line is the printed line at its place; `[... N lines trimmed ...]` stands for N printed lines;
    the Result line may end in a trimmed tail. Printed lines after the Result line (time, coverage) are not
    shown."""
    i = 0
    for line in shown:
        trimmed = re.fullmatch(r"\s*\[\.\.\. (\d+) lines? trimmed \.\.\.\]", line)
        if trimmed:
            i += int(trimmed.group(1))
            continue
        assert i < len(printed), f"the doc shows more than the CLI prints: {line!r}"
        if line.startswith("Result: ") and "[... " in line:
            head = line[:line.index("[... ")]
            assert printed[i].startswith(head), (line, printed[i])
        else:
            assert line == printed[i], f"the doc shows {line!r} where the CLI prints {printed[i]!r}"
        i += 1
    assert printed[i - 1].startswith("Result: "), "the block ends at the Result line"
