"""Deprecated: 0.3.x's invariants.kip928, moved to invariants.storage.kip928 in 0.4.0; this name goes in 0.6.0
(model/moved.py, docs/extending.md)."""
from model.moved import moved

__getattr__, __all__ = moved(__name__, 'invariants.storage.kip928')
