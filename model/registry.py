"""Rules: every transition of the model is a named pure function (guard and effect).

Rules belong to features (model/feature.py); a model (model/model.py) enumerates the rules of the features its
configuration includes. Every engine (BFS, DFS, simulation, Hypothesis, Spark, replay) enumerates those; none
has a copy.
"""
from __future__ import annotations

from typing import Callable

import attrs

# guard(model, state, *args) -> None when enabled, else a short reason why not.
Guard = Callable[..., "str | None"]
# effect(model, state, *args) -> the next state (only called when the guard returned None).
Effect = Callable[..., object]
# domain(model) -> every argument tuple the rule can take in this configuration.
Domain = Callable[[object], list]


@attrs.frozen
class Rule:
    name: str
    params: tuple[str, ...]
    domain: Domain
    guard: Guard
    effect: Effect
    reference: str
    doc: str
    kind: str  # "environment", "controller", "broker" or "client"

    def label(self, args: tuple) -> str:
        return f"{self.name}(" + ", ".join(f"{k}={v}" for k, v in zip(self.params, args)) + ")"
