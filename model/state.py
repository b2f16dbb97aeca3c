"""Deprecated: 0.3.x's model.state, moved to model.storage.state in 0.4.0; this name goes in 0.6.0
(model/moved.py, docs/extending.md)."""
from model.moved import moved

__getattr__, __all__ = moved(__name__, 'model.storage.state', elsewhere={
    'fingerprint_of': 'model.spec.engine',
}, gone={
    'component_digest': "the fingerprint is the model's (model.spec.engine.fingerprint_of)",
    'is_quiescent': 'model.is_quiescent(state) on a model value',
})
