"""Deprecated: 0.3.x's model.data, moved to model.storage.data in 0.4.0; this name goes in 0.6.0
(model/moved.py, docs/extending.md)."""
from model.moved import moved

__getattr__, __all__ = moved(__name__, 'model.storage.data')
