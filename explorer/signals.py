"""SIGINT, SIGTERM and SIGHUP: the first one stops the command cleanly, a second one is ignored (docs/cli.md, exit
codes). SIGHUP (a closed terminal, a dropped ssh session) is handled as SIGTERM, and exits 128 + 1 = 129; where it
is ignored when the command starts (``nohup``), it stays ignored.

One handler takes both signals; what it does depends on the moment (the *mode*):

- ``raise`` (start-up, and a local engine's search): the first signal raises ``KeyboardInterrupt`` (SIGINT) or
  ``SearchInterrupted`` (SIGTERM) where the main thread is; the engine catches it and returns its partial
  result, or, before any search started, ``main`` prints one line.
- ``flag`` (the Spark engine's search): the handler only records the signal and sets ``stopping``; the engine
  looks at it at safe points (never inside a py4j call: an exception raised there leaves py4j's connection out
  of step, and the next call reads a stale answer) and cancels its Spark jobs from another thread.
- ``defer`` (after a search: writing the summary, the report, the next table row): recorded only; the command
  finishes what it writes and exits with 128 + the signal.

A signal received once stays received: later signals (a second Ctrl-C while the report is written) change
nothing. ``install`` sets this up for the whole command (the CLI's entry point, before the heavy imports);
without it (a library caller), ``interruptible`` installs the handler for one search and restores the previous
handlers afterwards.

``JBODCHECK_TEST_SIGNAL`` (tests only) sends a signal to this process at a named point (``test_point``):
``POINT[#N]:SIGNAL[+SECONDS][*TIMES]``, e.g. ``level-start#3:15`` (SIGTERM when the third level starts) or
``search-start:2+0.5*2`` (two SIGINTs, the first 0.5 s after the search starts, 50 ms apart).
"""
from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
RAISE, FLAG, DEFER = "raise", "flag", "defer"


class SearchInterrupted(BaseException):
    """Raised by the handler for SIGTERM (a BaseException, like KeyboardInterrupt, so that no ``except
    Exception`` in the model or an invariant swallows it)."""

    def __init__(self, signum: int):
        super().__init__(f"stopped by signal {signum}")
        self.signum = signum


INTERRUPTS = (KeyboardInterrupt, SearchInterrupted)


def interrupt_signal(error: BaseException) -> int:
    """The signal number behind a caught interrupt: 2 for KeyboardInterrupt (SIGINT), else the handler's."""
    return getattr(error, "signum", signal.SIGINT)


def interrupt(signum: int) -> BaseException:
    """The exception that stands for signal ``signum``."""
    return KeyboardInterrupt() if signum == signal.SIGINT else SearchInterrupted(signum)


class _State:
    mode = RAISE
    installed = False          # install() ran: the handler stays for the whole process
    received: int | None = None
    depth = 0                  # nested interruptible() blocks
    previous: dict = {}        # the handlers install() replaced
    taken: tuple = SIGNALS     # the signals install() took (not SIGHUP under nohup)


_state = _State()
stopping = threading.Event()   # set by the first signal (for threads that act on it: the Spark job canceller)


def _handler(signum, _frame) -> None:
    # invariants.plugins tells a user's Ctrl-C from a plugin's own KeyboardInterrupt by counting SIGINTs. It may be
    # half imported when the signal comes (then no plugin code runs yet, and there is nothing to count).
    note_sigint = getattr(sys.modules.get("invariants.plugins"), "note_sigint", None)
    if note_sigint is not None and signum == signal.SIGINT:
        note_sigint()
    if _state.received is not None:
        return                 # already stopping: the first signal decides, the report is under way
    _state.received = signum
    stopping.set()
    if _state.mode == RAISE:
        raise interrupt(signum)


def _on_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def install() -> bool:
    """For the whole command (the CLI): SIGINT, SIGTERM and SIGHUP go to this module's handler, in mode ``raise``.
    Returns False when they already do (explorer/entry.py installed it before the imports)."""
    if not _on_main_thread() or _ours():
        return False
    _state.taken = _takeable()
    _state.previous = {sig: signal.signal(sig, _handler) for sig in _state.taken}
    _state.installed = True
    _state.mode = RAISE
    _state.depth = 0
    _reset()                   # a new command (tests run several in one process)
    return True


def uninstall() -> None:
    """Give the signals back to the handlers ``install`` found (a caller of the CLI in its own process)."""
    if _on_main_thread() and _state.installed:
        for sig, handler in _state.previous.items():
            signal.signal(sig, handler)
        _state.installed = False
        _state.mode = RAISE


def _takeable() -> tuple:
    """SIGNALS but an ignored SIGHUP (``nohup``: the user asked the command to outlive the terminal)."""
    return tuple(sig for sig in SIGNALS if sig != signal.SIGHUP or signal.getsignal(sig) != signal.SIG_IGN)


def _ours() -> bool:
    return _state.installed and all(signal.getsignal(sig) is _handler for sig in _state.taken)


def reclaim() -> None:
    """Take SIGINT back after a library set its own handler (a new SparkContext sets one that calls the JVM from
    inside the handler)."""
    if _on_main_thread() and (_state.installed or _state.depth):
        signal.signal(signal.SIGINT, _handler)   # (a library caller's previous handler comes back at the end)


def received() -> int | None:
    """The first signal received (since ``install``, or since the current search began), else None."""
    return _state.received


def raise_if_received() -> None:
    """At a safe point: raise the interrupt for the signal received, if any."""
    if _state.received is not None:
        raise interrupt(_state.received)


def _reset() -> None:
    _state.received = None
    stopping.clear()


@contextlib.contextmanager
def interruptible(raising: bool = True):
    """A search: with ``raising``, the first signal raises at once (the engine catches it); else it only sets
    ``stopping`` (mode ``flag``, the Spark engine). Afterwards, under ``install``, signals are deferred: the
    command writes its outputs and exits with 128 + the signal; without ``install``, the previous handlers come
    back. Only the main thread may set handlers: elsewhere this does nothing."""
    if not _on_main_thread():
        yield
        return
    mode = RAISE if raising else FLAG
    previous_mode = _state.mode
    previous = None
    if not _ours() and _state.depth == 0:
        _reset()               # a library caller: each search starts afresh
        previous = {sig: signal.signal(sig, _handler) for sig in _takeable()}
    _state.mode = mode
    _state.depth += 1
    try:
        if raising:
            raise_if_received()    # a signal that came before the search (a deferred one): stop at once
        yield
    finally:
        _state.depth -= 1
        _state.mode = DEFER if previous is None and _state.depth == 0 else previous_mode
        if previous is not None:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


@contextlib.contextmanager
def held():
    """Signals are only recorded inside (the CLI's imports: an exception raised inside a C extension's set-up,
    z3's for one, leaves a half-built object whose destructor prints a traceback at exit); the first one is
    raised at the end."""
    previous_mode = _state.mode
    _state.mode = FLAG
    try:
        yield
    finally:
        _state.mode = previous_mode
    raise_if_received()


# ---- test hooks -------------------------------------------------------------------------------------------------

TEST_ENV = "JBODCHECK_TEST_SIGNAL"
_counts: dict[str, int] = {}


def _parse(spec: str):
    point, _, rest = spec.partition(":")
    name, _, nth = point.partition("#")
    rest, _, times = rest.partition("*")
    sig, _, delay = rest.partition("+")
    return name, int(nth or 1), int(sig), float(delay or 0), int(times or 1)


def test_point(name: str) -> None:
    """Tests only (``JBODCHECK_TEST_SIGNAL``): send the signal asked for when this point is reached."""
    spec = os.environ.get(TEST_ENV)
    if not spec:
        return
    point, nth, sig, delay, times = _parse(spec)
    if point != name:
        return
    _counts[name] = _counts.get(name, 0) + 1
    if _counts[name] != nth:
        return
    pid = os.getpid()
    if delay == 0 and times == 1:
        os.kill(pid, sig)      # the handler runs before the next statement: a deterministic moment
        return

    def send():
        time.sleep(delay)
        for i in range(times):
            if i:
                time.sleep(0.05)
            os.kill(pid, sig)

    threading.Thread(target=send, name="jbodcheck-test-signal", daemon=True).start()


def exit_code(code: int) -> int:
    """The command's exit code given the signals received: 128 + the signal when one came (after the outputs
    were written) and the command would otherwise have said 0 or 1; its own code otherwise (a failure's 2 or 3
    keeps its one line)."""
    sig = _state.received
    if sig is None or code not in (0, 1):
        return code
    import sys

    sys.stderr.write(f"jbodcheck: interrupted by signal {sig} after the search had ended: its outputs are "
                     f"complete\n")
    return 128 + sig
