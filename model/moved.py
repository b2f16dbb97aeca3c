"""The modules of 0.3.x that moved in 0.4.0 (the layers: model/spec, model/storage, model/zk, invariants/storage,
explorer/reports) keep working under their old names for plugins written against 0.3.x, with a warning naming the
new path, until REMOVED_IN (docs/extending.md, "The plugin API's modules"). They are no files: ``MOVED`` lists
each old module, and an import finder (``install``, called by the packages model and invariants; explorer's own
finder defers to it) makes it when it is first imported: its names are looked up, when first read, in the new
module, then in the modules where single names went, and a name that no longer exists says why."""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings
from typing import NamedTuple

DEPRECATED_IN, REMOVED_IN = "0.4.0", "0.6.0"


class MovedModuleWarning(DeprecationWarning):
    """A module of 0.3.x imported under its old name (the CLI prints it as one line: explorer/cli/options.py)."""


class Moved(NamedTuple):
    new: str                          # the module it moved to
    elsewhere: dict = {}              # name -> the module it moved to instead
    gone: dict = {}                   # name -> what replaces it (an AttributeError says so)


MOVED: dict[str, Moved] = {
    'explorer.render': Moved('explorer.reports.render'),
    'explorer.report': Moved('explorer.reports.report'),
    'invariants.durability': Moved('invariants.storage.durability'),
    'invariants.kip928': Moved('invariants.storage.kip928'),
    'invariants.registry': Moved('model.spec.invariant',
        gone={
            'INVARIANTS': "a model value's invariants (model.invariants), its design's claims (explorer/catalog.py)",
            'select': 'explorer.catalog.select_invariants(ids)',
        },
    ),
    'invariants.safety': Moved('invariants.storage.safety'),
    'model.broker': Moved('model.storage.broker',
        elsewhere={
            'handle_leader_and_isr': 'model.zk.requests',
            'handle_update_metadata': 'model.zk.requests',
            'handle_stop_replica': 'model.zk.requests',
            'handle_stop_replica_delete': 'model.zk.requests',
        },
        gone={
            'may_create_log': "it is a hook of the design's features: model.hooks.may_create_log",
            'crashed': "a crash is the model's: model.crashed(member) (model/spec/model.py)",
        },
    ),
    'model.config': Moved('model.storage.config',
        elsewhere={
            'ModelConfig': 'model.zk.config',
            'BOUNDS': 'model.zk.config',
            'VARIANTS': 'model.zk.designs',
        },
    ),
    'model.controller': Moved('model.zk.controller'),
    'model.data': Moved('model.storage.data'),
    'model.deletion': Moved('model.zk.deletion'),
    'model.memo': Moved('model.spec.memo'),
    'model.model': Moved('model.spec.model'),
    'model.presets': Moved('explorer.catalog'),
    'model.reassignment': Moved('model.zk.reassignment'),
    'model.registry': Moved('model.spec.rule',
        gone={
            'RULES': "rules belong to a model value (model.rules) built from its design's features",
            'rule': 'a feature declares its rules (@FEATURE.rule, model/spec/feature.py)',
            'rule_by_name': 'model.rule(name) on a model value',
        },
    ),
    'model.rules': Moved('model.zk.rules',
        elsewhere={
            'dir_fail': 'model.storage.faults',
            'broker_crash': 'model.storage.faults',
            'broker_restart': 'model.storage.faults',
            'replace_disk': 'model.storage.faults',
            'remove_dir_from_config': 'model.storage.faults',
        },
    ),
    'model.rules_data': Moved('model.storage.rules_data'),
    'model.rules_deletion': Moved('model.zk.rules_deletion'),
    'model.rules_reassignment': Moved('model.zk.rules_reassignment'),
    'model.rules_space': Moved('model.storage.rules_space'),
    'model.state': Moved('model.storage.state',
        elsewhere={
            'fingerprint_of': 'model.spec.engine',
        },
        gone={
            'component_digest': "the fingerprint is the model's (model.spec.engine.fingerprint_of)",
            'is_quiescent': 'model.is_quiescent(state) on a model value',
        },
    ),
    'model.symmetry': Moved('model.spec.symmetry',
        gone={
            'dir_symmetry_sound': "the dir symmetry is the model's (model.symmetry, model/spec/symmetry.py DirSymmetry)",
            'permute_dirs': "the dir symmetry is the model's (model.symmetry, model/spec/symmetry.py DirSymmetry)",
            'canonical_broker': "the dir symmetry is the model's (model.symmetry, model/spec/symmetry.py DirSymmetry)",
            'canonical': "the dir symmetry is the model's (model.symmetry, model/spec/symmetry.py DirSymmetry)",
            'canonical_digest': "the dir symmetry is the model's (model.symmetry, model/spec/symmetry.py DirSymmetry)",
            'canonical_fingerprint': "the dir symmetry is the model's (model.symmetry, model/spec/symmetry.py DirSymmetry)",
            'orbit': "the dir symmetry is the model's (model.symmetry, model/spec/symmetry.py DirSymmetry)",
        },
    ),
}


def moved(old: str, new: str, elsewhere: dict | None = None, gone: dict | None = None) -> tuple:
    """Warn that ``old`` moved to ``new`` (at the importer's line) and return the old module's ``__getattr__``,
    which reads its names from ``new``, and its ``__all__`` (``from old import *`` as before)."""
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


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds an old module of ``MOVED`` (after every other finder: a real module of that name wins) and makes it."""

    def find_spec(self, fullname, path, target=None):
        if fullname not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self, origin=__file__)

    def create_module(self, spec):
        return None

    def exec_module(self, module) -> None:
        old = module.__name__
        m = MOVED[old]
        module.__doc__ = (f"Deprecated: 0.3.x's {old}, moved to {m.new} in {DEPRECATED_IN}; this name goes in "
                          f"{REMOVED_IN} (model/moved.py, docs/extending.md).")
        # called here, moved()'s warning names this frame's caller past importlib's own: the importer's line
        module.__getattr__, module.__all__ = moved(old, m.new, m.elsewhere, m.gone)


FINDER = _MovedModules()


def install() -> None:
    """Make the old modules importable (once per interpreter)."""
    if FINDER not in sys.meta_path:
        sys.meta_path.append(FINDER)
