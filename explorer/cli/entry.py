"""The `jbodcheck` command's entry point (pyproject.toml; `python -m explorer`): the signal handler first
(explorer/signals.py), then the CLI's imports, so that Ctrl-C or SIGTERM while they load is one line and
128 + the signal, never a traceback."""
from __future__ import annotations

import signal
import sys

from explorer.signals import INTERRUPTS, SIGNALS, held, install, interrupt_signal, test_point


def main(argv=None) -> None:
    install()
    try:
        with held():
            test_point("imports")
            from .app import main as cli_main

        cli_main(argv)      # maps every outcome to its exit code (sys.exit); a signal before it took over lands here
    except INTERRUPTS as e:
        sig = interrupt_signal(e)
        sys.stderr.write(f"jbodcheck: interrupted by signal {sig} while starting: the search had not started\n")
        sys.exit(128 + sig)
    finally:
        # The exit code is decided: a signal from here on (a second Ctrl-C) must not kill the exiting process,
        # which Python's finalization would otherwise let it do (it restores the default handlers).
        for sig in SIGNALS:
            signal.signal(sig, signal.SIG_IGN)
