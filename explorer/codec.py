"""The state codec's old home: it is part of the kernel now (model/spec/codec.py)."""
from model.spec.codec import INTERNED, PROTOCOL, Interner, decode_states, encode_states  # noqa: F401
