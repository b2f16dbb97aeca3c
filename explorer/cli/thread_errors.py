"""A thread that raises (a plugin's, most likely: jbodcheck's own threads catch what they raise) is a failure of
the run, exit 3 with one line naming the plugin and the error; Python would print the thread's traceback and let
the run exit 0 (docs/extending.md, "What a plugin may not do")."""
from __future__ import annotations

import sys
import threading

_errors: list[str] = []
_previous = None
_before: set = set()           # the threads that ran before the command (a caller's: not the command's to wait for)


FILE_PLUGIN = "jbodcheck_plugin_"       # the module name of a plugin given as a file (invariants/plugins.py)


def _plugin_of(tb) -> str | None:
    """How the user named the plugin whose code is in the traceback (its innermost frame), else None; a plugin
    still being imported (its thread started at import) by its file."""
    plugins = getattr(sys.modules.get("invariants.plugins"), "LOADED", {})
    files = {getattr(module, "__file__", None): name for name, module in plugins.items()}
    found = None
    while tb is not None:
        code_file = tb.tb_frame.f_code.co_filename
        if code_file in files:
            found = files[code_file]
        elif str(tb.tb_frame.f_globals.get("__name__", "")).startswith(FILE_PLUGIN):
            found = code_file
        tb = tb.tb_next
    return found


def _hook(args) -> None:
    if args.exc_type is SystemExit:          # as Python's own hook: a thread's sys.exit() ends it quietly
        return
    error = " ".join(str(args.exc_value).split())
    what = f"{args.exc_type.__name__}: {error}" if error else args.exc_type.__name__
    thread = args.thread.name if args.thread is not None else "a thread"
    plugin = _plugin_of(args.exc_traceback)
    _errors.append(f"plugin {plugin!r} started a thread ({thread}) that raised {what}" if plugin else
                   f"a thread ({thread}) raised {what}")


def watch() -> None:
    """Record the exceptions of threads from now on (instead of printing their tracebacks)."""
    global _previous
    _errors.clear()
    _before.clear()
    _before.update(threading.enumerate())
    if threading.excepthook is not _hook:
        _previous = threading.excepthook
        threading.excepthook = _hook


def finish() -> str | None:
    """Wait for the command's threads that Python would wait for at exit (not daemons), stop recording, and
    return the first recorded error's line, or None."""
    global _previous
    for thread in threading.enumerate():
        if thread is not threading.current_thread() and not thread.daemon and thread not in _before:
            thread.join()
    if threading.excepthook is _hook and _previous is not None:
        threading.excepthook = _previous
        _previous = None
    return _errors[0] if _errors else None
