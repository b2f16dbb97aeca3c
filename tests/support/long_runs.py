"""The long runs as the source marks them: ``@pytest.mark.long_run`` on a test function, or
``@pytest.mark.long_run(ids=[...])`` for some of its parametrizations (tests/conftest.py skips them outside the
thorough profile). Read from the source, without collecting the suite, for tests/docs/test_docs.py's check of
docs/testing.md's "Long runs" table."""
from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def _is_long_run(node: ast.expr) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "long_run"


def marked_long_runs(tests: Path = TESTS) -> set[str]:
    """Every long run, as its node id under tests/ (``kraft/test_kraft.py::test_x`` or ``...::test_x[id]``). A
    ``long_run`` anywhere but a module-level test's decorator is an error: this reading would miss it."""
    found: set[str] = set()
    for path in sorted(tests.rglob("test_*.py")):
        tree = ast.parse(path.read_text())
        where = path.relative_to(tests).as_posix()
        read = set()
        for fn in tree.body:
            if not isinstance(fn, ast.FunctionDef):
                continue
            for dec in fn.decorator_list:
                mark = dec.func if isinstance(dec, ast.Call) else dec
                if not _is_long_run(mark):
                    continue
                read.add(id(mark))
                ids = [kw.value for kw in getattr(dec, "keywords", ()) if kw.arg == "ids"]
                if ids:
                    found |= {f"{where}::{fn.name}[{i}]" for i in ast.literal_eval(ids[0])}
                else:
                    found.add(f"{where}::{fn.name}")
        stray = [n.lineno for n in ast.walk(tree) if _is_long_run(n) and id(n) not in read]
        if stray:
            raise ValueError(f"{where}, line {stray[0]}: long_run where only a test's decorator is read")
    return found
