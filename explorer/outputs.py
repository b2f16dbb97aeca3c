"""Output files (--json, --html, --itf, --save-scenario, --save-lasso, --dot, compare's --markdown and
--scenarios DIR, failure scenarios, BFS checkpoints): checked before any search without truncating anything
(``check_writable``, ``check_directory``: the temporary file the write will use is created in the target's
directory and removed at once, since ``os.access`` says yes to root in a directory such as ``/proc`` where no
file can be created), then written atomically (a temporary file in the same directory, renamed over the
target), so a file at the target is always a whole result of a finished run, or what was there before.
Several files asked for as one PATH (every counterexample) go to ``numbered_path``. ``check_distinct``
refuses outputs that name one file, or a command's input.

Targets that are not regular files (``/dev/stdout``, a FIFO, ``/dev/full``) cannot be renamed over: they are
written directly, and never read (a device such as ``/dev/zero`` never ends; ``/dev/stdout`` on a pipe blocks).
A device is checked with a write of zero bytes, so one that refuses every write (``/dev/full``: no space left)
is refused before the run; a FIFO is not opened before the write (its reader would see the end of its input).
"""
from __future__ import annotations

import json
import os
import stat
import tempfile

from .errors import OutputError


def check_writable(path: str | None, what: str, dash_is_stdout: bool = True) -> None:
    """Raise OutputError (the caller maps it to bad input) if ``path`` cannot be written; leaves nothing behind
    (the probe file it creates is removed)."""
    if path is None or (dash_is_stdout and path == "-"):
        return
    path = os.fspath(path)
    if path == "" or path.endswith(os.sep):
        raise OutputError(f"cannot write {what} to {path!r}: not a file name")
    if _special(path):
        if not os.access(path, os.W_OK):
            raise OutputError(f"cannot write {what} to {path}: permission denied")
        refused = _device_refuses(path)
        if refused:
            raise OutputError(f"cannot write {what} to {path}: {refused}")
        return                              # a device, FIFO or pipe: written directly
    target = os.path.realpath(path)
    if os.path.isdir(target):
        raise OutputError(f"cannot write {what} to {path}: it is a directory")
    if os.path.exists(target):
        if not os.access(target, os.W_OK):
            raise OutputError(f"cannot write {what} to {path}: permission denied")
    directory = os.path.dirname(target) or "."
    if not os.path.isdir(directory):
        shown = os.path.dirname(path) or "."
        if os.path.exists(directory):
            raise OutputError(f"cannot write {what} to {path}: {shown} is not a directory")
        raise OutputError(f"cannot write {what} to {path}: no such directory {shown}")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise OutputError(f"cannot write {what} to {path}: its directory is not writable")
    refused = _cannot_create_in(directory, os.path.basename(target))
    if refused:
        raise OutputError(f"cannot write {what} to {path}: {refused}")


def _cannot_create_in(directory: str, name: str) -> str | None:
    """Why the temporary file of an atomic write (``write_bytes``) cannot be created in ``directory``, or None:
    it is created there, then removed."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=directory)
    except OSError as e:
        return f"no file can be created in {directory} ({e.strerror or e})"
    os.close(fd)
    try:
        os.unlink(tmp)
    except OSError:
        pass
    return None


def check_directory(path: str, what: str) -> None:
    """Raise OutputError if files cannot be written into the directory ``path``: it must be a writable
    directory, or not exist yet in a writable directory (it is created at the first write, not here)."""
    path = os.fspath(path)
    if path == "":
        raise OutputError(f"cannot write {what} to {path!r}: not a directory name")
    target = os.path.realpath(path)
    if os.path.exists(target):
        if not os.path.isdir(target):
            raise OutputError(f"cannot write {what} to {path}: it is not a directory")
        if not os.access(target, os.W_OK | os.X_OK):
            raise OutputError(f"cannot write {what} to {path}: the directory is not writable")
        refused = _cannot_create_in(target, "probe")
        if refused:
            raise OutputError(f"cannot write {what} to {path}: {refused}")
        return
    parent = os.path.dirname(target.rstrip(os.sep)) or "."
    if not os.path.isdir(parent):
        shown = os.path.dirname(path.rstrip(os.sep)) or "."
        raise OutputError(f"cannot write {what} to {path}: no such directory {shown}")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError(f"cannot write {what} to {path}: its parent directory is not writable")
    refused = _cannot_create_in(parent, "probe")
    if refused:
        raise OutputError(f"cannot write {what} to {path}: {refused}")


def _file_identity(path: str):
    """What tells one file from another: (device, inode) of an existing file, else its real path; None for a
    device, FIFO or socket (``/dev/stdout`` may take several outputs: they are written one after the other)."""
    try:
        st = os.stat(path)
    except OSError:
        return os.path.realpath(path)
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
        return None
    return st.st_dev, st.st_ino


def check_distinct(outputs: dict, inputs: dict | None = None) -> None:
    """Raise OutputError when two outputs name one file, or an output names an input (the input would be
    overwritten). ``outputs``: {the option (``--json``): path or None}; ``inputs``: {what the file is (``the
    scenario``): path or None}; ``-`` (stdout) is no file."""
    seen: dict = {}
    for name, path in (inputs or {}).items():
        if path not in (None, "-") and (key := _file_identity(os.fspath(path))) is not None:
            seen.setdefault(key, (name, True))
    for name, path in outputs.items():
        if path in (None, "-") or (key := _file_identity(os.fspath(path))) is None:
            continue
        if key in seen:
            other, is_input = seen[key]
            if is_input:
                raise OutputError(f"{name} {path} is {other} this command reads: it would be overwritten "
                                  f"(give {name} another path)")
            raise OutputError(f"{other} and {name} both name {path}: each output needs its own path")
        seen[key] = (name, False)


def numbered_path(path: str, n: int) -> str:
    """Where the n-th (from 1) of several files asked for as ``path`` goes: ``path`` itself for the first, then
    ``-N`` before the extension (``trace.itf.json``, ``trace-2.itf.json``; ``s.json``, ``s-2.json``; ``out``,
    ``out-2``). A device or FIFO (``/dev/stdout``) takes them all, one after the other."""
    path = os.fspath(path)
    if n == 1:
        return path
    if _special(path):
        return path
    directory, name = os.path.split(path)
    stem, dot, ext = (name, "", "") if name.startswith(".") else name.partition(".")
    return os.path.join(directory, f"{stem}-{n}{dot}{ext}")


def _special(path: str) -> bool:
    """An existing target that is neither a regular file nor a directory (a device, a FIFO, ``/dev/stdout`` on a
    pipe, whose real path names no file): written directly, it cannot be renamed over."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def is_regular_file(path: str) -> bool:
    """``path`` is a regular file (or a link to one): a file that may be read back before it is rewritten."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def _device_refuses(path: str) -> str | None:
    """Why the device at ``path`` refuses writes (a write of zero bytes fails: ``/dev/full``), or None. A FIFO
    or a socket is not opened: a FIFO's reader would see the end of its input when the probe closes it."""
    try:
        mode = os.stat(path).st_mode
    except OSError as e:
        return e.strerror or str(e)
    if not (stat.S_ISCHR(mode) or stat.S_ISBLK(mode)):
        return None
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError as e:
        return e.strerror or str(e)
    try:
        os.write(fd, b"")
    except OSError as e:
        return e.strerror or str(e)
    finally:
        os.close(fd)
    return None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_text(path: str, text: str, what: str) -> None:
    """Write ``text`` to ``path`` atomically; OutputError (one line) on failure, the target left untouched."""
    write_bytes(path, [text.encode("utf-8")], what)


def write_bytes(path: str, chunks, what: str) -> None:
    """Write the byte strings ``chunks`` (an iterable, written one after the other) to ``path`` atomically;
    OutputError (one line) on failure, the target left untouched."""
    path = os.fspath(path)
    target = os.path.realpath(path)
    try:
        if _special(path):
            with open(path, "wb") as f:
                for chunk in chunks:
                    f.write(chunk)
            return
        directory = os.path.dirname(target) or "."
        mode = (stat.S_IMODE(os.stat(target).st_mode) if os.path.exists(target) else 0o666 & ~_umask())
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.", suffix=".tmp", dir=directory)
        try:
            with os.fdopen(fd, "wb") as f:
                for chunk in chunks:
                    f.write(chunk)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, mode)
            os.replace(tmp, target)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except OSError as e:
        raise OutputError(f"cannot write {what} to {path}: {e.strerror or e}") from None


def write_json(path: str, data, what: str) -> None:
    write_text(path, json.dumps(data, indent=2) + "\n", what)
