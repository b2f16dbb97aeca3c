"""Deprecated: 0.3.x's model.registry, moved to model.spec.rule in 0.4.0; this name goes in 0.6.0
(model/moved.py, docs/extending.md)."""
from model.moved import moved

__getattr__, __all__ = moved(__name__, 'model.spec.rule', gone={
    'RULES': "rules belong to a model value (model.rules) built from its design's features",
    'rule': 'a feature declares its rules (@FEATURE.rule, model/spec/feature.py)',
    'rule_by_name': 'model.rule(name) on a model value',
})
