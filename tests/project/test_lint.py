"""The linter and the type checker run in .ci/run before the tests (pyproject.toml's [tool.ruff], [tool.mypy]); the
linter's rule set passes on the tree and finds a planted defect."""
from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from support.helpers import REPO

ruff = shutil.which("ruff") or shutil.which("ruff", path=str(Path(sys.executable).parent))
needs_ruff = pytest.mark.skipif(ruff is None, reason="ruff is not installed (pip install -e '.[test]')")


def run_ruff(*args, cwd=REPO) -> subprocess.CompletedProcess:
    return subprocess.run([ruff, "check", "--no-cache", *args], cwd=cwd, capture_output=True, text=True, timeout=120)


@needs_ruff
def test_the_tree_passes_the_linter():
    p = run_ruff(".")
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-1000:]


@needs_ruff
def test_the_linter_finds_an_undefined_name_and_an_unused_import(tmp_path):
    (tmp_path / "planted.py").write_text("import os\n\n\ndef f():\n    return undefined_name\n")
    p = run_ruff("--config", str(REPO / "pyproject.toml"), "planted.py", cwd=tmp_path)
    assert p.returncode == 1 and "F821" in p.stdout and "F401" in p.stdout, p.stdout


def test_ci_lints_and_type_checks_before_the_tests():
    commands = [line.strip() for line in (REPO / ".ci" / "run").read_text().splitlines()
                if line.strip() and not line.lstrip().startswith("#")]
    tests = commands.index("python3 -m pytest -q -n 2 --dist loadfile")
    assert commands.index("ruff check .") < tests and commands.index("mypy") < tests
    # The fast loop (the kernel, the engines and the CLI on small models; docs/testing.md) after the linter, the
    # type checker and the import layers, before the whole suite.
    (fast,) = [i for i, c in enumerate(commands) if c.startswith("python3 -m pytest ") and "tests/kernel" in c]
    assert "tests/engines/" in commands[fast] and "tests/cli/" in commands[fast] and "not long_run" in commands[fast]
    assert max(commands.index("ruff check ."), commands.index("mypy"), commands.index("lint-imports --no-cache")) < fast
    assert fast < tests
    assert commands.index("pip install -e '.[test]'") < commands.index("ruff check .")
    test_extra = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]["test"]
    assert any(d.startswith("ruff") for d in test_extra) and any(d.startswith("mypy") for d in test_extra)


def test_every_per_file_ignore_says_why():
    text = (REPO / "pyproject.toml").read_text()
    block = text[text.index("\n[tool.ruff.lint.per-file-ignores]\n"):text.index("\n[tool.mypy]\n")]
    entries = [line for line in block.splitlines() if line.startswith('"')]
    assert entries and all("#" in line for line in entries), entries
    for line in entries:
        assert (REPO / line.split('"')[1]).exists(), line
