"""Rules: every transition of the model is a named pure function (guard and effect).

Rules belong to features (model/spec/feature.py); a model (model/spec/model.py) enumerates the rules of the features its
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

# Weak fairness (explorer/liveness.py): the protocol's own steps (a broker handling its inbox, the controller handling
# a response or an event, a follower fetching) are weakly fair by default; the environment's (faults, restarts,
# repairs) and the clients' are not. Admin-like controller rules declare fair=False themselves.
UNFAIR_KINDS = ("environment", "client")


def fair_by_kind(kind: str) -> bool:
    return kind not in UNFAIR_KINDS


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
    # Weakly fair per action instance (rule + arguments): taken if continuously enabled (liveness checking only).
    fair: bool = attrs.field(kw_only=True, default=attrs.Factory(lambda self: fair_by_kind(self.kind), takes_self=True))
    # The state components the rule reads (guard and effect) and writes, as patterns (model/spec/footprint.py); None:
    # everything (an undeclared rule is dependent on every action: partial-order reduction never separates it).
    reads: tuple[str, ...] | None = attrs.field(kw_only=True, default=None)
    writes: tuple[str, ...] | None = attrs.field(kw_only=True, default=None)
    guard_reads: tuple[str, ...] | None = attrs.field(kw_only=True, default=None)   # None: ``reads``
    # Never enabled in a quiescent state (its guard needs a message, response, notification or broker change in
    # flight): partial-order reduction's quiescence condition (explorer/por.py; checked by tests/kernel/test_footprints.py).
    needs_message: bool = attrs.field(kw_only=True, default=False)
    # The BUDGET_FIELDS entry an environment event spends (model/storage/common.py budget_left): once used up, the action
    # is disabled for good (budgets only grow), so partial-order reduction may ignore it.
    spends: int | None = attrs.field(kw_only=True, default=None)
    # The footprint of the action when enabled at a state, tighter than the static one: (model, state, *args) ->
    # (reads, writes) patterns (model/spec/footprint.py; numbered brokers allowed, e.g. ``broker[1].hw``).
    footprint_at: Callable | None = attrs.field(kw_only=True, default=None)
    # The queues among ``writes`` that the effect only appends to, with a suffix that does not depend on the
    # queue's content (the controller's sends): the effect memo (model/spec/effect_memo.py) leaves them out of its key.
    appends: tuple[str, ...] | None = attrs.field(kw_only=True, default=None)

    def label(self, args: tuple) -> str:
        return f"{self.name}(" + ", ".join(f"{k}={v}" for k, v in zip(self.params, args)) + ")"
