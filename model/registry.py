"""The rule registry: every transition of the model, each a named pure function (guard and effect).

Every engine (BFS, DFS, simulation, Hypothesis, Spark, replay) enumerates these rules; none has a copy.
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
    kind: str  # "environment", "controller" or "broker"

    def label(self, args: tuple) -> str:
        return f"{self.name}(" + ", ".join(f"{k}={_show(v)}" for k, v in zip(self.params, args)) + ")"


def _show(value) -> str:
    return str(value)


RULES: list[Rule] = []


def rule(name: str, *, params: tuple[str, ...], domain: Domain, guard: Guard, reference: str, kind: str):
    """Register the decorated effect function as a rule; its docstring is the rule's description."""

    def register(effect: Effect) -> Effect:
        doc = " ".join((effect.__doc__ or "").split())
        RULES.append(Rule(name, params, domain, guard, effect, reference, doc, kind))
        return effect

    return register


def rule_by_name(name: str) -> Rule:
    for r in RULES:
        if r.name == name:
            return r
    raise KeyError(name)
