"""``python3 -m explorer.reference``: write the generated reference pages into docs/reference/; ``--check``: write
nothing, name each page that differs from what the code generates now, and exit 1 if one does."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .pages import PAGES, stale_pages

DOCS = Path(__file__).resolve().parents[2] / "docs" / "reference"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m explorer.reference", description=__doc__)
    parser.add_argument("--check", action="store_true", help="exit 1 if a committed page is stale; write nothing")
    args = parser.parse_args(argv)
    if args.check:
        stale = stale_pages(DOCS)
        for name in stale:
            print(f"docs/reference/{name} is stale: run python3 -m explorer.reference", file=sys.stderr)
        return 1 if stale else 0
    DOCS.mkdir(parents=True, exist_ok=True)
    for name, generate in PAGES.items():
        (DOCS / name).write_text(generate())
        print(f"wrote docs/reference/{name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
