"""jbodcheck's invariants: named safety properties over the model's states and steps.

The built-in ones are claimed by the model's features (model/feature.py): safety.py by the KIP-112 core,
durability.py by the data path, kip928.py by saturation, replica deletion and reassignment."""
from .plugins import ENV_VAR as PLUGINS_ENV_VAR, Plugins, PluginError, load_plugins
from .registry import KINDS, LIVENESS_KINDS, SAFETY_KINDS, Invariant, Liveness, invariant, invariants_in, is_liveness, liveness

__all__ = ["KINDS", "LIVENESS_KINDS", "SAFETY_KINDS", "Invariant", "Liveness", "is_liveness", "liveness", "PLUGINS_ENV_VAR", "PluginError", "Plugins", "builtin", "invariant",
           "invariants_in", "load_plugins", "select"]


def builtin() -> list[Invariant]:
    """Every built-in invariant, as the features of the built-in designs claim them, in order (what
    `jbodcheck invariants` lists). A view computed from the feature values, not a registry: a model checks the
    invariants of its own features (``Model.invariants``)."""
    from model.designs import catalog

    return [i for feature in catalog() for i in feature.invariants]


def select(ids=None, extra=()) -> list[Invariant]:
    """The built-in invariants (and ``extra`` ones) named by ids, all the safety ones when ids is empty (liveness
    properties only when named: the engines that take this list check safety); an unknown id raises KeyError."""
    known = builtin() + list(extra)
    if not ids:
        return [i for i in known if i.kind in SAFETY_KINDS]
    by_id = {i.id: i for i in known}
    unknown = [i for i in ids if i not in by_id]
    if unknown:
        raise KeyError(", ".join(unknown))
    return [by_id[i] for i in ids]
