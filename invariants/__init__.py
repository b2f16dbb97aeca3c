"""jbodcheck's invariants: named safety properties over the model's states and steps."""
from . import safety as _safety  # noqa: F401  (registers the invariants)
from . import durability as _durability  # noqa: F401
from . import kip928 as _kip928  # noqa: F401
from .plugins import ENV_VAR as PLUGINS_ENV_VAR, PluginError, load_plugins
from .registry import INVARIANTS, KINDS, Invariant, invariant, select

__all__ = ["INVARIANTS", "KINDS", "Invariant", "PLUGINS_ENV_VAR", "PluginError", "invariant", "load_plugins", "select"]
