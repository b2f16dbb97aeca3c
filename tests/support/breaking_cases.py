"""The invariants a test module breaks on hand-made states, read from its ``BROKEN_HERE`` (a tuple of invariant ids,
or a dict keyed by them) without importing it: tests/zk/test_invariants.py checks that every registered invariant
has a breaking case somewhere, and no test module imports another."""
from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def broken_in(name: str) -> set[str]:
    """The invariant ids of ``BROKEN_HERE`` in the test module ``name`` (a file name, unique under tests/)."""
    (path,) = TESTS.rglob(name)
    tree = ast.parse(path.read_text())
    strings = {t.id: node.value.value for node in tree.body if isinstance(node, ast.Assign)
               for t in node.targets if isinstance(t, ast.Name)
               and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)}
    (value,) = [node.value for node in tree.body if isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "BROKEN_HERE" for t in node.targets)]
    keys = value.keys if isinstance(value, ast.Dict) else value.elts
    ids = set()
    for key in keys:
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            ids.add(key.value)
        elif isinstance(key, ast.Name) and key.id in strings:
            ids.add(strings[key.id])
        else:
            raise ValueError(f"{path.name}: BROKEN_HERE names an invariant by {ast.unparse(key)}, not a string")
    return ids
