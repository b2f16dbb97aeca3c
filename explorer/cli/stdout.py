"""A standard output whose reader went away (``jbodcheck presets | head -c 10``): the command stops writing, quietly,
and exits with 141, 128 + SIGPIPE, the code a shell shows for a command that a closed pipe stopped (docs/cli.md,
exit codes). Never 1, which means a violation, and never 0, which would read as "no violation" for a search whose
summary was cut.

click turns a write to a closed pipe (EPIPE) into exit 1 inside its own ``main``: the command group raises
``StdoutClosed`` instead, which is no OSError, so it reaches explorer/cli/app.py ``main``.
"""
from __future__ import annotations

import contextlib
import os
import select
import sys

import click

EXIT_STDOUT_CLOSED = 141     # 128 + SIGPIPE (13)


class StdoutClosed(Exception):
    """The standard output's reader closed it."""


def stdout_is_closed() -> bool:
    """Whether the standard output is a pipe with no reader left (poll says POLLERR for such a write end); a
    BrokenPipeError from anything else (a child's pipe) is not this."""
    try:
        fd = sys.__stdout__.fileno()
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        return any(events & select.POLLERR for _, events in poller.poll(0))
    except (AttributeError, OSError, ValueError):
        return False


def silence_stdout() -> None:
    """Point the standard output at /dev/null: what is still buffered, and Python's flush at exit, go nowhere
    instead of raising BrokenPipeError again (Python's documentation, "Note on SIGPIPE")."""
    with contextlib.suppress(OSError, AttributeError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.__stdout__.fileno())
        os.close(devnull)


class ClosedPipeGroup(click.Group):
    """A command group whose commands' (and --help's, --version's) writes to a closed standard output raise
    StdoutClosed rather than reach click's EPIPE handling."""

    def make_context(self, *args, **kwargs):
        with _closed_stdout_raises():
            return super().make_context(*args, **kwargs)

    def invoke(self, ctx):
        with _closed_stdout_raises():
            return super().invoke(ctx)


@contextlib.contextmanager
def _closed_stdout_raises():
    try:
        yield
    except BrokenPipeError as e:
        if stdout_is_closed():
            raise StdoutClosed() from None
        raise e
