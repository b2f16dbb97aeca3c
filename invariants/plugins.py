"""Users' own invariants and features: plugin modules that the CLI, the Hypothesis machine and the tests add to
the model they check.

A plugin is an ordinary Python module (or a ``.py`` file) that declares invariants::

    from invariants import invariant

    @invariant("my_invariant", kind="state", statement="...", reference="...")
    def my_invariant(model, state):
        return None  # or a one-line message when the property is broken

Its invariants are those it declares with ``@invariant`` (``invariants_in``); a module-level ``FEATURES`` list
adds whole features (model/spec/feature.py: rules, state fields, options, presets, invariants). ``load_plugins``
returns them as ``Plugins``, which the CLI (``--plugin MODULE``), the Hypothesis state machine
(explorer/fuzz.py) and the pytest suite give to ``Model(..., plugins=...)``. An invariant is not symmetric
under dir symmetry unless it says so (``symmetric=True``); a search that checks one runs without the reduction.
The environment variable ``JBODCHECK_PLUGINS`` (comma-separated modules or files) does the same as
``--plugin`` for the CLI, the Hypothesis machine and the test suite (tests/conftest.py). See
docs/extending.md.
"""
from __future__ import annotations

import importlib
import importlib.util
import os
import signal
import sys
import threading
from pathlib import Path
from types import ModuleType

import attrs

from model.spec.invariant import Invariant, invariants_in

ENV_VAR = "JBODCHECK_PLUGINS"

# Plugin name (as given) -> its module, in load order.
LOADED: dict[str, ModuleType] = {}


class PluginError(ImportError):
    """A plugin module that cannot be imported (bad input: exit code 2)."""


class PluginAbort(Exception):
    """A plugin's own code raised SystemExit or KeyboardInterrupt (``sys.exit()`` at import, say): the checker
    failed (exit code 3), it must not end the run as if it had passed or been interrupted."""


class DuplicateInvariant(PluginError):
    """A plugin declares an invariant id that a built-in invariant or another plugin already has (bad input)."""


# SIGINTs this process received since install_sigint_counter: a KeyboardInterrupt raised in plugin code while
# none arrived is the plugin's own (``raise KeyboardInterrupt``), not the user's Ctrl-C.
_sigints = 0


def note_sigint() -> None:
    """One more SIGINT received (called by whichever handler takes SIGINT: this module's, or the CLI's)."""
    global _sigints
    _sigints += 1


def _counting_sigint(signum, frame):
    note_sigint()
    raise KeyboardInterrupt


def install_sigint_counter() -> None:
    """Count SIGINTs (still raising KeyboardInterrupt, as Python's default handler does): only in the main
    thread and where the default handler is in place (not over someone else's handler, nor SIG_IGN)."""
    if (threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGINT) is signal.default_int_handler):
        signal.signal(signal.SIGINT, _counting_sigint)


def sigints_received() -> int:
    return _sigints


def env_plugins(environ=None) -> list[str]:
    """The plugin modules named by JBODCHECK_PLUGINS (comma-separated; blanks ignored)."""
    value = (os.environ if environ is None else environ).get(ENV_VAR, "")
    return [name.strip() for name in value.split(",") if name.strip()]


def _is_file(name: str) -> bool:
    return name.endswith(".py") or os.sep in name or "/" in name


def _import(name: str) -> ModuleType:
    if _is_file(name):
        path = Path(name).expanduser().resolve()
        if not path.is_file():
            raise PluginError(f"cannot import plugin {name!r}: no such file")
        module_name = "jbodcheck_plugin_" + path.stem
        existing = sys.modules.get(module_name)
        if existing is not None and getattr(existing, "__file__", None) == str(path):
            return existing
        spec = importlib.util.spec_from_file_location(module_name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[module_name]
            raise
        return module
    # Like `python -m`, let a module in the working directory be found even from the console script.
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.append(cwd)
    return importlib.import_module(name)


@attrs.frozen
class Plugins:
    """What plugin modules add to a model: features, and invariants no feature of theirs claims."""
    modules: tuple = ()
    features: tuple = ()
    invariants: tuple[Invariant, ...] = ()

    @classmethod
    def of(cls, modules) -> "Plugins":
        features = tuple(f for m in modules for f in getattr(m, "FEATURES", ()))
        claimed = {id(i) for f in features for i in f.invariants}
        invariants = tuple(i for m in modules for i in invariants_in(m) if id(i) not in claimed)
        return cls(tuple(modules), features, invariants)


def load_plugins(names=(), *, env: bool = False, builtin=()) -> Plugins:
    """Import each named plugin module (a dotted module name or a path to a ``.py`` file), once.

    With ``env=True`` the modules named by JBODCHECK_PLUGINS are loaded first. Raises PluginError with a
    one-line message when a module cannot be imported (or fails while declaring its invariants).
    ``builtin``: (feature name, Invariant) pairs whose ids a plugin must not take (explorer/catalog.py passes the
    built-in designs' claims).
    """
    wanted = (env_plugins() if env else []) + [n.strip() for n in names if n and n.strip()]
    modules = []
    install_sigint_counter()
    for name in wanted:
        module = LOADED.get(name)
        if module is None:
            source = f" (from {ENV_VAR})" if name not in names else ""
            sigints = sigints_received()
            try:
                module = _import(name)
            except PluginError:
                raise
            except (SystemExit, KeyboardInterrupt) as e:
                if isinstance(e, KeyboardInterrupt) and sigints_received() != sigints:
                    raise                       # the user's Ctrl-C while the plugin was importing
                code = f"({e.code!r})" if isinstance(e, SystemExit) else ""
                raise PluginAbort(f"plugin {name!r}{source} raised {type(e).__name__}{code} while being imported: "
                                  f"a plugin must declare invariants, not end the run") from None
            except Exception as e:  # ImportError, SyntaxError, an error in a declaration, ...
                detail = " ".join(str(e).split()) or type(e).__name__
                raise PluginError(f"cannot import plugin {name!r}{source}: {type(e).__name__}: {detail}") from None
            LOADED[name] = module
        modules.append(module)
    plugins = Plugins.of(modules)
    _refuse_duplicate_ids(plugins, wanted, builtin)
    return plugins


def _refuse_duplicate_ids(plugins: Plugins, names: list[str], builtin) -> None:
    """An invariant id names one invariant: a plugin's that repeats a built-in one's (of any design or feature)
    or another plugin's would mix the two in reports, scenarios and --invariant. (A plugin that imports a
    built-in invariant's function declares nothing new: the same object is not a second invariant.)"""
    owner = {i.id: (f"the built-in invariant of feature {feature}", i) for feature, i in builtin}
    by_module = {id(m): n for n, m in zip(names, plugins.modules)}
    declared = [(i, m) for m in plugins.modules for i in invariants_in(m)]
    declared += [(i, m) for m in plugins.modules for f in getattr(m, "FEATURES", ()) for i in f.invariants]
    for inv, module in declared:
        here = f"plugin {by_module.get(id(module), module.__name__)!r}"
        taken, first = owner.get(inv.id, (None, None))
        if taken is not None and first is not inv and taken != here:
            raise DuplicateInvariant(f"{here} declares invariant {inv.id!r}, which {taken} already has: "
                                     f"rename it (an invariant id names one invariant)")
        owner.setdefault(inv.id, (here, inv))
