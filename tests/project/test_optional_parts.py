"""The base install without its optional parts (z3, Hypothesis, pyspark: pyproject.toml's extras): every command
that does not need one works, and the one that does says in one line what to install (exit 2).

Absence is simulated: a fresh interpreter whose import system refuses the three packages, as if not installed.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from support.helpers import REPO

BLOCKED = ("z3", "hypothesis", "pyspark")

# Run `python -m explorer ARGS` with an import blocker in front of every finder (and in forked workers).
_RUNNER = """
import runpy, sys

class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in {blocked!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, Blocker())
sys.argv = ["jbodcheck", *sys.argv[1:]]
runpy.run_module("explorer", run_name="__main__", alter_sys=True)
"""


def run_without(*args, blocked=BLOCKED):
    env = {k: v for k, v in os.environ.items() if k != "JBODCHECK_PLUGINS"}
    env["PYTHONPATH"] = str(REPO)
    return subprocess.run([sys.executable, "-c", _RUNNER.format(blocked=tuple(blocked)), *args],
                          capture_output=True, text=True, cwd=REPO, env=env, timeout=300)


def test_the_blocker_blocks():
    p = subprocess.run([sys.executable, "-c", _RUNNER.format(blocked=BLOCKED).replace(
        "runpy.run_module", "import z3 #"), "x"], capture_output=True, text=True)
    assert p.returncode == 1 and "No module named 'z3'" in p.stderr


@pytest.mark.parametrize("args", [("--help",), ("--version",), ("rules",), ("presets",), ("invariants",),
                                  ("fuzz", "--help"), ("explore", "--help")])
def test_commands_that_need_nothing_optional_work(args):
    p = run_without(*args)
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr
    assert p.stdout.strip()


def test_the_help_lists_every_command():
    out = run_without("--help").stdout
    for command in ("explore", "replay", "fuzz", "prove", "compare", "view"):
        assert command in out


def test_explore_works_without_the_optional_parts():
    p = run_without("explore", "--preset", "tiny", "--max-states", "100", "--workers", "1")
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr
    assert "states" in p.stdout


def test_replay_works_without_the_optional_parts():
    p = run_without("replay", str(REPO / "scenarios" / "kip112-1-dir-failure-at-bootstrap.json"))
    assert p.returncode in (0, 1), p.stderr
    assert "Traceback" not in p.stderr


@pytest.mark.parametrize("args, package, extra", [
    (("prove",), "z3-solver", "prove"),
    (("prove", "--help"), "z3-solver", "prove"),     # its options are declared in its module
    (("prove", "--bmc", "2"), "z3-solver", "prove"),
    (("fuzz", "--preset", "tiny", "--examples", "1", "-q"), "hypothesis", "fuzz"),
    (("explore", "--preset", "tiny", "--engine", "spark", "-q"), "pyspark", "spark"),
])
def test_a_command_that_needs_a_missing_part_says_what_to_install(args, package, extra):
    p = run_without(*args)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert "Traceback" not in p.stderr
    lines = [line for line in p.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, p.stderr
    assert package in lines[0] and f"pip install 'jbodcheck[{extra}]'" in lines[0], lines[0]
