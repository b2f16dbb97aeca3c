"""jbodcheck's model of Kafka's JBOD disk-failure protocols (KIP-112 and its variants)."""
from .config import BOUNDS, VARIANTS, ConfigError, ModelConfig
from .model import Action, ActionDisabled, Model
from .registry import RULES, Rule
from .state import State, fingerprint, is_quiescent

__all__ = [
    "Action", "ActionDisabled", "BOUNDS", "ConfigError", "Model", "ModelConfig", "RULES", "Rule", "State", "VARIANTS",
    "fingerprint", "is_quiescent",
]
