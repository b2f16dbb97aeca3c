"""The command line run as a user runs it, and its one-line refusal (../shared/CONTRACT.md)."""
from __future__ import annotations

import os
import subprocess
import sys

from support.helpers import REPO


def cli(*args, cwd=REPO, timeout=240):
    """Run `python -m explorer ARGS` in a fresh interpreter."""
    env = {k: v for k, v in os.environ.items() if k != "JBODCHECK_PLUGINS"}
    return subprocess.run([sys.executable, "-m", "explorer", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=timeout)


def assert_bad_input(proc, *words):
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got {proc.stderr!r}"
    for w in words:
        assert w in lines[0], (w, lines[0])
    return lines[0]
