"""Traces generated from the model for a conformance campaign (model -> real): random walks over the rules the
harness can drive, weighted toward the rules driven least so far, each step followed by the cluster's own steps as
the planner takes them (plan.settle, every AssignReplicasToDirs held), so that each trace is a behaviour of the
model that plan.py can plan. Nothing here is a rule of its own: the walk reads each rule's guard and effect."""
from __future__ import annotations

import random
from collections import Counter

from realkafka.driver.mapping import ASSIGN, DRIVEN, Hold, handler
from realkafka.driver.plan import cluster_steps, settle

ORDERED_STEPS = ("ControllerAssignReplicasToDirs",)   # released by the trace, not driven: the planner orders them


def drivable(model, cluster_has=lambda method: True) -> list[tuple]:
    """(rule, args) of every action the harness can make happen: the driven rules (whose harness method exists,
    ``cluster_has``) and the assignments the planner releases."""
    out = []
    for _, rule, args in model.action_space:
        try:
            h = handler(rule.name)
        except KeyError:
            continue
        if (h.how == DRIVEN and (h.needs is None or cluster_has(h.needs))) or rule.name in ORDERED_STEPS:
            out.append((rule, args))
    return out


def walk(model, rng: random.Random, length: int, counts: Counter, actions: list[tuple]) -> list[tuple]:
    """One trace with at most ``length`` driven steps, chosen among the enabled ones with weight 1 / (1 + how often
    the rule was driven so far, ``counts``, which the walk updates), and the cluster's own steps between them (the
    scenario replays the whole behaviour): (rule name, args) each."""
    holds = frozenset(Hold(ASSIGN, b) for b in range(model.cfg.brokers))
    own = cluster_steps(model, [])
    steps: list[tuple] = []
    state, _, _ = settle(model, model.init_states()[0], holds, own, steps)
    for _ in range(length):
        enabled = [(rule, args) for rule, args in actions if rule.guard(model, state, *args) is None]
        if not enabled:
            break
        rule, args = rng.choices(enabled, weights=[1.0 / (1 + counts[r.name]) for r, _ in enabled])[0]
        _, state = model.step(state, rule.name, args)
        counts[rule.name] += 1
        steps.append((rule.name, tuple(args)))
        state, _, _ = settle(model, state, holds, own, steps)
    return steps


def labels(model, steps) -> list[str]:
    """The steps as a scenario file writes them."""
    return [model.rule(name).label(args) for name, args in steps]


__all__ = ["drivable", "walk", "labels"]
