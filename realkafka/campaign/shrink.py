"""Shrinking a disagreement: drop driven steps of a generated trace, one at a time from the last, while the real
cluster still leaves the model on the rebuilt behaviour (each try is a run on a fresh cluster, so the tries are
bounded). The cluster's own steps between the driven ones are rebuilt by the model (generate.rebuild), so every
try is a behaviour of the model. Reordering steps is not tried."""
from __future__ import annotations

from typing import Callable

from .generate import Behaviour, driven_steps, rebuild


def shrink(model, steps, actions, disagrees: Callable[[list], bool], budget: int,
           behaviour=Behaviour) -> tuple[list, int]:
    """(the smallest trace found that still disagrees, the runs it took); ``disagrees(trace)`` runs one."""
    driven = driven_steps(model, steps, actions)
    runs = 0
    changed = True
    while changed and runs < budget:
        changed = False
        for i in reversed(range(len(driven))):
            if runs >= budget:
                break
            fewer = driven[:i] + driven[i + 1:]
            trace = rebuild(model, fewer, behaviour)
            if trace is None:
                continue
            runs += 1
            if disagrees(trace):
                driven, steps, changed = fewer, trace, True
                break
    return steps, runs


__all__ = ["shrink"]
