"""Deprecated: 0.3.x's model.symmetry, moved to model.spec.symmetry in 0.4.0; this name goes in 0.6.0
(model/moved.py, docs/extending.md)."""
from model.moved import moved

__getattr__, __all__ = moved(__name__, 'model.spec.symmetry', gone={
    'dir_symmetry_sound': "the dir symmetry is the model's (model.symmetry, model/spec/symmetry.py DirSymmetry)",
    'permute_dirs': "the dir symmetry is the model's (model.symmetry, model/spec/symmetry.py DirSymmetry)",
    'canonical_broker': "the dir symmetry is the model's (model.symmetry, model/spec/symmetry.py DirSymmetry)",
    'canonical': "the dir symmetry is the model's (model.symmetry, model/spec/symmetry.py DirSymmetry)",
    'canonical_digest': "the dir symmetry is the model's (model.symmetry, model/spec/symmetry.py DirSymmetry)",
    'canonical_fingerprint': "the dir symmetry is the model's (model.symmetry, model/spec/symmetry.py DirSymmetry)",
    'orbit': "the dir symmetry is the model's (model.symmetry, model/spec/symmetry.py DirSymmetry)",
})
