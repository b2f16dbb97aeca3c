"""Rules' declared footprints checked on sampled reachable states (model/spec/footprint.py): the sampler, the
checker told how the storage layer's budgets are spent, and a rule given another declaration."""
from __future__ import annotations

import attrs

from model import Model
from model.spec.footprint import footprint_violations as kernel_footprint_violations
from support.helpers import bfs_states, walk_states
from support.profiles import THOROUGH

# (preset, overrides): every design, and every feature's rules on (medium under the thorough profile only).
FOOTPRINT_CONFIGS = [
    ("tiny", {}), ("tiny", {"variant": "legacy"}), ("tiny", {"eager_metadata": False}),
    ("tiny", {"variant": "kip112-draft", "deletion": True}), ("kip18-lost-update", {}), ("saturation", {}),
    ("deletion", {}), ("reassignment-race", {}), ("kip46-heal", {}), ("tiny", {"variant": "kip46"}),
    ("tiny", {"variant": "pre-kip112", "assignment_policy": "live-brokers"}),
] + ([("medium", {})] if THOROUGH else [])


def footprint_violations(model, states, **options):
    """The kernel's checker, told how the storage layer's event budgets are spent (they must only grow)."""
    return kernel_footprint_violations(model, states, budgets=lambda state: state.budget, **options)


def sample_states(model: Model, bfs: int = 120, walks: int = 6, depth: int = 30, seed: int = 0) -> list:
    """The first ``bfs`` states of a BFS, then the distinct states of seeded random walks (deeper states)."""
    states = bfs_states(model, model.fingerprint, bfs)
    for state in walk_states(model, walks, depth, seed):
        states.setdefault(model.fingerprint(state), state)
    return list(states.values())


def with_declaration(model: Model, name: str, **declaration) -> Model:
    model.action_space = tuple((ri, attrs.evolve(r, **declaration) if r.name == name else r, args)
                               for ri, r, args in model.action_space)
    return model
