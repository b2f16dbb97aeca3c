"""Exit codes (docs/cli.md): 0 no violation (exhaustive or bounded), 1 a property violated, 2 bad input, 3 the
checker itself failed (explorer/errors.py JbodcheckFailure), 128 + N when signal N interrupted the search."""
from __future__ import annotations

import click

EXIT_OK, EXIT_VIOLATION, EXIT_BAD_INPUT, EXIT_FAILURE = 0, 1, 2, 3


class BadInput(click.ClickException):
    exit_code = EXIT_BAD_INPUT


def exit_code(result) -> int:
    """1 for a violation, else 0; 128 + N when signal N interrupted the search (after the summary and report
    are out)."""
    sig = getattr(result, "signal", None)
    if sig:
        click.echo(f"jbodcheck: interrupted by signal {sig}: the result is partial", err=True)
        return 128 + int(sig)
    return EXIT_VIOLATION if result.violations else EXIT_OK


def os_error_line(error: OSError) -> str:
    """An error the system reported, as the system words it: its cause and the path(s) it names ("No space left
    on device: /path"); Python's own text when it has no cause."""
    if not error.strerror:
        return " ".join(str(error).split()) or type(error).__name__
    paths = [str(p) for p in (error.filename, error.filename2) if p is not None]
    return error.strerror + (f": {' -> '.join(paths)}" if paths else "")


def worker_error_line(error: BaseException) -> str:
    """A BFS worker's failure in one line: what happened, and the worker's exception (its traceback's last
    line) if it sent one."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    if not lines:
        return type(error).__name__
    head = lines[0].rstrip(":")
    return head if len(lines) == 1 else f"{head}: {lines[-1]}"
