"""The examples of docs/cli.md marked runnable are run, and what they show is what the CLI does now.

A runnable example is a ```console block right after a line `<!-- runnable -->`. Its first `$ jbodcheck ...`
line is run (as `python -m explorer ...` from the repository); the block's `Result: RESULT. N distinct states,
M generated, depth D` line, the line under it (what the verdict covers) when shown, and the exit code shown after
`$ echo $?` must match the run's. Mark only examples that take seconds.
"""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys

import pytest

from support.helpers import REPO

DOC = REPO / "docs" / "cli.md"
MARK = "<!-- runnable -->"
RESULT = re.compile(r"^Result: (\w+)\. ([\d,]+) distinct states, ([\d,]+) generated, depth (\d+)", re.M)


def runnable_blocks(text: str) -> list[tuple[int, str]]:
    """(line number of the marker, the block's body) for every marked console block."""
    blocks = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.strip() != MARK:
            continue
        assert i + 1 < len(lines) and lines[i + 1].startswith("```console"), f"line {i + 1}: {MARK} before no console block"
        end = next(j for j in range(i + 2, len(lines)) if lines[j].startswith("```"))
        blocks.append((i + 1, "\n".join(lines[i + 2:end])))
    return blocks


def expected(body: str) -> tuple[list[str], tuple, int]:
    command = next(line[2:] for line in body.splitlines() if line.startswith("$ jbodcheck "))
    found = RESULT.search(body)
    assert found, "a runnable example shows its Result line"
    lines = body.splitlines()
    echo = lines.index("$ echo $?")
    return shlex.split(command)[1:], found.groups(), int(lines[echo + 1])


def test_the_marker_is_used():
    assert len(runnable_blocks(DOC.read_text())) >= 2


@pytest.mark.parametrize("line, body", runnable_blocks(DOC.read_text()), ids=lambda v: str(v)[:12])
def test_a_runnable_example_shows_what_the_cli_does(line, body):
    args, (result, distinct, generated, depth), code = expected(body)
    env = {k: v for k, v in os.environ.items() if k != "JBODCHECK_PLUGINS"}
    p = subprocess.run([sys.executable, "-m", "explorer", *args], capture_output=True, text=True, cwd=REPO, env=env,
                       timeout=120)
    assert p.returncode == code, (line, p.returncode, p.stderr[-500:])
    got = RESULT.search(p.stdout)
    assert got, p.stdout[-1000:]
    assert got.groups() == (result, distinct, generated, depth), f"docs/cli.md line {line}: the example shows " \
        f"{(result, distinct, generated, depth)}, the CLI gives {got.groups()}"
    shown = body.split(RESULT.search(body).group(0), 1)[1].splitlines()[1:2]
    if shown and shown[0] != "...":     # the line under Result: what the verdict covers (its bounds)
        assert shown[0] == p.stdout.split(got.group(0), 1)[1].splitlines()[1], f"docs/cli.md line {line}"


def test_the_bugs_example_is_what_jbodcheck_bugs_prints():
    """docs/cli.md's `jbodcheck bugs` example, regenerated from the real output (issue 41: it listed KAFKA-16157 as
    not expressed long after its switch existed): every line it shows is a line of the output, in order; a line
    ending in `...` is the beginning of one, and a line `...` stands for any number of lines."""
    text = DOC.read_text()
    start = text.index("```console\n$ jbodcheck bugs\n")
    shown = text[start:text.index("```\n", start + 10)].splitlines()[2:]
    env = {k: v for k, v in os.environ.items() if k != "JBODCHECK_PLUGINS"}
    p = subprocess.run([sys.executable, "-m", "explorer", "bugs"], capture_output=True, text=True, cwd=REPO, env=env,
                       timeout=120)
    assert p.returncode == 0, p.stderr[-500:]
    real = p.stdout.splitlines()
    at, skipping = 0, False
    for line in shown:
        if line == "...":
            skipping = True
            continue
        fits = (lambda r: r.startswith(line[:-3])) if line.endswith("...") else (lambda r: r == line)
        while at < len(real) and not fits(real[at]):
            assert skipping, f"docs/cli.md's `jbodcheck bugs` shows {line!r} where the output has {real[at]!r}"
            at += 1
        assert at < len(real), f"docs/cli.md's `jbodcheck bugs` shows {line!r}, which the output does not have"
        at, skipping = at + 1, False


def test_every_long_run_is_listed_in_the_testing_guide_with_its_last_result():
    from support.long_runs import marked_long_runs

    text = (REPO / "docs" / "testing.md").read_text()
    rows = {line.split("|")[1].strip().strip("`"): line for line in text.splitlines()
            if line.startswith("| `") and "/test_" in line.split("|")[1]}
    marked = marked_long_runs()
    assert len(marked) >= 50, "the long runs are read from their markers"
    for test in sorted(marked):
        row = rows.get(test)
        assert row is not None, f"docs/testing.md, 'Long runs', lists no row for {test} (marked long_run)"
        assert row.rstrip(" |").split("|")[-1].strip(), f"{test}: no last result"
    listed = set(rows) - marked
    assert not listed, f"docs/testing.md lists long runs not marked long_run: {sorted(listed)}"


def test_the_long_runs_reading_finds_a_marker_it_cannot_read(tmp_path):
    from support.long_runs import marked_long_runs

    (tmp_path / "test_a.py").write_text("import pytest\n\n\n@pytest.mark.long_run(ids=['x'])\ndef test_a(x):\n"
                                        "    pass\n\n\nLONG = pytest.mark.long_run\n")
    with pytest.raises(ValueError, match="test_a.py, line 9"):
        marked_long_runs(tmp_path)
    (tmp_path / "test_a.py").write_text("import pytest\n\n\n@pytest.mark.long_run(ids=['x'])\ndef test_a(x):\n"
                                        "    pass\n")
    assert marked_long_runs(tmp_path) == {"test_a.py::test_a[x]"}
