"""The JVMs the harness starts, and the guarantee that none outlives it (docs/realkafka.md, "Hygiene").

Every JVM runs in a process group of its own (so that a signal reaches the JVM and nothing else, and Ctrl-C in a
terminal does not reach it before the harness has decided what to do) and with ``PR_SET_PDEATHSIG`` = SIGKILL
(Linux: the kernel kills it when the Python thread that started it ends, even by SIGKILL). On top of that:

- ``Cluster.stop()`` (also from ``__exit__``, on an exception or KeyboardInterrupt) kills its processes and removes
  its temporary directory;
- an ``atexit`` hook kills every process still registered and removes every registered directory;
- SIGTERM: where nobody handles it (its handler is SIG_DFL, which would end Python without atexit), the harness
  installs, while a cluster runs, a handler that raises KeyboardInterrupt, so that the cluster's ``with`` block
  unwinds; where the CLI installed explorer/signals.py's handler, that handler raises (or defers to the
  command's end), and the same unwinding or atexit cleans up.
"""
from __future__ import annotations

import atexit
import ctypes
import os
import shutil
import signal
import subprocess
import threading
from pathlib import Path

_lock = threading.Lock()
_live: dict[int, subprocess.Popen] = {}
_dirs: set[Path] = set()
_term_installed = False
_clusters = 0
PR_SET_PDEATHSIG = 1

try:
    _libc = ctypes.CDLL(None, use_errno=True)
except OSError:               # not Linux: the other guarantees remain
    _libc = None


def _child_setup() -> None:
    if _libc is not None:
        _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def spawn(argv: list[str], *, cwd: Path, stdout, stderr, stdin=subprocess.DEVNULL, env=None) -> subprocess.Popen:
    """Start a process in a new process group, registered for the clean-up."""
    proc = subprocess.Popen(argv, cwd=cwd, stdin=stdin, stdout=stdout, stderr=stderr, env=env,
                            start_new_session=True, preexec_fn=_child_setup)
    with _lock:
        _live[proc.pid] = proc
    return proc


def signal_group(proc: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def kill(proc: subprocess.Popen, timeout: float = 30) -> None:
    """SIGKILL the process's group (a stopped process dies too) and reap it."""
    signal_group(proc, signal.SIGKILL)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        pass
    forget(proc)


def forget(proc: subprocess.Popen) -> None:
    with _lock:
        _live.pop(proc.pid, None)


def register_dir(path: Path) -> None:
    with _lock:
        _dirs.add(path)


def remove_dir(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
    with _lock:
        _dirs.discard(path)


def forget_dir(path: Path) -> None:
    """Keep the directory (``keep``): no longer removed at exit."""
    with _lock:
        _dirs.discard(path)


def live() -> list[subprocess.Popen]:
    with _lock:
        return [p for p in _live.values() if p.poll() is None]


def _raise_interrupt(signum, _frame):
    raise KeyboardInterrupt(f"signal {signum}")


def cluster_started() -> None:
    """While a cluster runs, an unhandled SIGTERM unwinds like Ctrl-C (main thread only)."""
    global _term_installed, _clusters
    with _lock:
        _clusters += 1
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _raise_interrupt)
        _term_installed = True


def cluster_stopped() -> None:
    global _term_installed, _clusters
    with _lock:
        _clusters = max(0, _clusters - 1)
        last = _clusters == 0
    if last and _term_installed and threading.current_thread() is threading.main_thread():
        if signal.getsignal(signal.SIGTERM) is _raise_interrupt:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
        _term_installed = False


@atexit.register
def clean_up() -> None:
    """Kill every registered process, remove every registered directory (also what a cluster left after an
    interrupted stop)."""
    with _lock:
        procs, dirs = list(_live.values()), list(_dirs)
    for proc in procs:
        signal_group(proc, signal.SIGKILL)
    for proc in procs:
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass
        forget(proc)
    for path in dirs:
        remove_dir(path)
