"""The generated pages of docs/reference/, by file name."""
from __future__ import annotations

from pathlib import Path

from .cli import cli_markdown
from .rules import invariants_markdown, rules_markdown

PAGES = {"rules.md": rules_markdown, "invariants.md": invariants_markdown, "cli.md": cli_markdown}


def stale_pages(folder: Path) -> list[str]:
    """The pages whose file in ``folder`` is missing or differs from what the code generates now."""
    return [name for name, generate in PAGES.items()
            if not (folder / name).exists() or (folder / name).read_text() != generate()]
