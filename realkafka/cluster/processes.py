"""The JVMs the harness starts, and the guarantee that none outlives it (docs/realkafka.md, "Hygiene").

Every JVM runs in a process group of its own (so that a signal reaches the JVM and nothing else, and Ctrl-C in a
terminal does not reach it before the harness has decided what to do) and with ``PR_SET_PDEATHSIG`` = SIGKILL
(Linux: the kernel kills it when the Python thread that started it ends, even by SIGKILL). Maven and javac
(``run``) run under a guard, a shell in the same new group, that the kernel sends SIGTERM instead and that then
SIGKILLs the whole group: Maven's JVM and whatever it started, which PR_SET_PDEATHSIG alone (not inherited by
a child's children) would leave. On top of that:

- ``Cluster.stop()`` (also from ``__exit__``, on an exception or KeyboardInterrupt) kills its processes and removes
  its temporary directory;
- an ``atexit`` hook kills every process still registered and removes every registered directory;
- SIGTERM and SIGHUP: where nobody handles one (its handler is SIG_DFL, which would end Python without atexit),
  the harness installs, while a cluster runs, a handler that raises KeyboardInterrupt, so that the cluster's
  ``with`` block unwinds; where the CLI installed explorer/signals.py's handler, that handler raises (or defers to the
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


def _child_setup(death_signal: int):
    parent = os.getpid()

    def setup() -> None:
        if _libc is not None:
            _libc.prctl(PR_SET_PDEATHSIG, death_signal, 0, 0, 0)
        if os.getppid() != parent:     # the harness died before the line above: nobody would send the signal
            os._exit(1)
    return setup


def spawn(argv: list[str], *, cwd: Path, stdout, stderr, stdin=subprocess.DEVNULL, env=None, text: bool = False,
          death_signal: int = signal.SIGKILL) -> subprocess.Popen:
    """Start a process in a new process group, registered for the clean-up."""
    proc = subprocess.Popen(argv, cwd=cwd, stdin=stdin, stdout=stdout, stderr=stderr, env=env, text=text,
                            start_new_session=True, preexec_fn=_child_setup(death_signal))
    with _lock:
        _live[proc.pid] = proc
    return proc


# The guard of ``run``: it starts the tool in the background, waits for it and exits with its code; on SIGTERM
# (from the kernel, PR_SET_PDEATHSIG, when the harness ends) it SIGKILLs its process group, the tool's too.
GUARD = ["/bin/sh", "-c", 'trap "kill -9 0" TERM; "$@" & wait $!', "jbodcheck-guard"]


def run(argv: list[str], *, cwd: Path) -> subprocess.CompletedProcess:
    """Run a tool (Maven, javac) to its end, its output captured as text, such that neither it nor anything it
    started outlives the harness: an exception here (Ctrl-C) kills its group at once; a SIGKILLed harness, through
    the guard; and what it left running when it ended is killed too."""
    proc = spawn([*GUARD, *argv], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                 death_signal=signal.SIGTERM)
    try:
        out, err = proc.communicate()
    finally:
        kill(proc)              # (the group: a daemon the tool left behind)
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


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


TERMINATING = (signal.SIGTERM, signal.SIGHUP)
_replaced: set = set()


def cluster_started() -> None:
    """While a cluster runs, an unhandled SIGTERM or SIGHUP unwinds like Ctrl-C (main thread only)."""
    global _term_installed, _clusters
    with _lock:
        _clusters += 1
    if threading.current_thread() is threading.main_thread():
        for sig in TERMINATING:
            if signal.getsignal(sig) == signal.SIG_DFL:
                signal.signal(sig, _raise_interrupt)
                _replaced.add(sig)
                _term_installed = True


def cluster_stopped() -> None:
    global _term_installed, _clusters
    with _lock:
        _clusters = max(0, _clusters - 1)
        last = _clusters == 0
    if last and _term_installed and threading.current_thread() is threading.main_thread():
        for sig in _replaced:
            if signal.getsignal(sig) is _raise_interrupt:
                signal.signal(sig, signal.SIG_DFL)
        _replaced.clear()
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
