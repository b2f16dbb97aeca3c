"""Deprecated: 0.3.x's invariants.registry, moved to model.spec.invariant in 0.4.0; this name goes in 0.6.0
(model/moved.py, docs/extending.md)."""
from model.moved import moved

__getattr__, __all__ = moved(__name__, 'model.spec.invariant', gone={
    'INVARIANTS': "a model value's invariants (model.invariants), its design's claims (explorer/catalog.py)",
    'select': 'explorer.catalog.select_invariants(ids)',
})
