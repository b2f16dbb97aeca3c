"""Deprecated: 0.3.x's model.rules, moved to model.zk.rules in 0.4.0; this name goes in 0.6.0
(model/moved.py, docs/extending.md)."""
from model.moved import moved

__getattr__, __all__ = moved(__name__, 'model.zk.rules', elsewhere={
    'dir_fail': 'model.storage.faults',
    'broker_crash': 'model.storage.faults',
    'broker_restart': 'model.storage.faults',
    'replace_disk': 'model.storage.faults',
    'remove_dir_from_config': 'model.storage.faults',
})
