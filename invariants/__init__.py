"""jbodcheck's invariants: named properties over the model's states and steps, grouped as the model is:
``invariants.storage`` (log dirs, the LogManager, the data path, KIP-928) and ``invariants.zk`` (the ZooKeeper
controller and its designs). Each is defined with the kernel's type (model/spec/invariant.py); the catalog
(explorer/catalog.py) binds them to the features that claim them."""
from model.moved import install as _install_moved_modules
from model.spec.invariant import KINDS, LIVENESS_KINDS, SAFETY_KINDS, Invariant, Liveness, invariant, invariants_in, is_liveness, liveness

from .plugins import ENV_VAR as PLUGINS_ENV_VAR, Plugins, PluginError, load_plugins

_install_moved_modules()   # 0.3.x's module paths, until 0.6.0 (model/moved.py)

__all__ = ["KINDS", "LIVENESS_KINDS", "SAFETY_KINDS", "Invariant", "Liveness", "is_liveness", "liveness", "PLUGINS_ENV_VAR",
           "PluginError", "Plugins", "invariant", "invariants_in", "load_plugins"]
