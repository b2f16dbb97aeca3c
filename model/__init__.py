"""jbodcheck's model of Kafka's JBOD disk-failure protocols (KIP-112 and the designs around it).

A model is a value: ``Model(cfg)`` assembles the features of a design (model/feature.py, model/designs.py) for
one configuration."""
from .config import BOUNDS, VARIANTS, ConfigError, ModelConfig
from .feature import Design, Feature, Flag, Option, StateField
from .model import Action, ActionDisabled, Model
from .registry import Rule
from .state import State, fingerprint

__all__ = [
    "Action", "ActionDisabled", "BOUNDS", "ConfigError", "Design", "Feature", "Flag", "Model", "ModelConfig", "Option",
    "Rule", "State", "StateField", "VARIANTS", "fingerprint",
]
