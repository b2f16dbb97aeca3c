"""Deprecated: 0.3.x's model.broker, moved to model.storage.broker in 0.4.0; this name goes in 0.6.0
(model/moved.py, docs/extending.md)."""
from model.moved import moved

__getattr__, __all__ = moved(__name__, 'model.storage.broker', elsewhere={
    'handle_leader_and_isr': 'model.zk.requests',
    'handle_update_metadata': 'model.zk.requests',
    'handle_stop_replica': 'model.zk.requests',
    'handle_stop_replica_delete': 'model.zk.requests',
}, gone={
    'may_create_log': "it is a hook of the design's features: model.hooks.may_create_log",
    'crashed': "a crash is the model's: model.crashed(member) (model/spec/model.py)",
})
