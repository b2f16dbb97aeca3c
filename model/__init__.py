"""jbodcheck's model of Kafka's JBOD disk-failure protocols, in layers (docs/architecture.md):

- ``model.spec``: the kernel: rules, features, designs, the state schema, the invariant type, the model value,
  footprints, memos, symmetry. It knows nothing of Kafka.
- ``model.storage``: what every controller mode shares on a broker: log dirs, the LogManager's create-or-refuse
  decision, hosted replicas, crashes and restarts, the environment's faults, the data path, KIP-928 saturation.
- ``model.zk``: the ZooKeeper-mode controller and the designs over it (KIP-112, its draft, KIP-18, KIP-46).
- ``model.kraft``: the KRaft controller and its brokers (KIP-858; docs/kraft.md).

The designs, bound to the invariants they claim, and the presets are in ``explorer.catalog``
(``build_model(cfg)``). This package re-exports the names a user of the model needs."""
from model.moved import install as _install_moved_modules
from model.spec.errors import ConfigError
from model.spec.feature import Design, Feature, Flag, Option, StateField
from model.spec.model import Action, ActionDisabled, Model
from model.spec.rule import Rule
from model.storage.state import State, fingerprint
from model.zk.config import BOUNDS, ModelConfig
# The ZooKeeper-mode designs' names; explorer.catalog.VARIANTS has every design's, KRaft's (``kraft``) included.
from model.zk.designs import VARIANTS

_install_moved_modules()   # 0.3.x's module paths, until 0.6.0 (model/moved.py)

__all__ = [
    "Action", "ActionDisabled", "BOUNDS", "ConfigError", "Design", "Feature", "Flag", "Model", "ModelConfig", "Option",
    "Rule", "State", "StateField", "VARIANTS", "fingerprint",
]
