"""The modules of 0.3.x that moved in 0.4.0 (the layers: model/spec, model/storage, model/zk, invariants/storage,
explorer/reports) keep working under their old names for plugins written against 0.3.x, with a warning naming the
new path, until REMOVED_IN (docs/extending.md, "The plugin API's modules"). Each old module is a few lines
(model/state.py, ...) that call ``moved``: its names are looked up, when first read, in the new module, then in
the modules where single names went, and a name that no longer exists says why."""
from __future__ import annotations

import importlib
import warnings

DEPRECATED_IN, REMOVED_IN = "0.4.0", "0.6.0"


class MovedModuleWarning(DeprecationWarning):
    """A module of 0.3.x imported under its old name (the CLI prints it as one line: explorer/cli/options.py)."""


def moved(old: str, new: str, elsewhere: dict | None = None, gone: dict | None = None) -> tuple:
    """Warn that ``old`` moved to ``new`` (at the importer's line) and return the old module's ``__getattr__``,
    which reads its names from ``new``, and its ``__all__`` (``from old import *`` as before); ``elsewhere``: name
    -> the module it moved to instead; ``gone``: name -> what replaces it (an AttributeError says so)."""
    warnings.warn(f"{old} is deprecated since {DEPRECATED_IN} and will be removed in {REMOVED_IN}: import {new} "
                  f"instead", MovedModuleWarning, stacklevel=3)
    elsewhere, gone = elsewhere or {}, gone or {}

    def __getattr__(name: str):
        if name in gone:
            raise AttributeError(f"{old}.{name} no longer exists since {DEPRECATED_IN}: {gone[name]}")
        module = importlib.import_module(elsewhere.get(name, new))
        try:
            return getattr(module, name)
        except AttributeError:
            raise AttributeError(f"module {old} (now {new}) has no attribute {name!r}") from None

    public = [n for n in vars(importlib.import_module(new)) if not n.startswith("_")]
    return __getattr__, [*public, *(n for n in elsewhere if n not in public)]
