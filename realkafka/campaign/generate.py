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


class Behaviour:
    """A behaviour of the model being built: driven steps, each followed by the cluster's own steps (the whole is
    the trace: (rule name, args) each)."""

    def __init__(self, model):
        self.model = model
        self.holds = frozenset(Hold(ASSIGN, b) for b in range(model.cfg.brokers))
        self.own = cluster_steps(model, [])
        self.steps: list[tuple] = []
        self.state, _, _ = settle(model, model.init_states()[0], self.holds, self.own, self.steps)

    def enabled(self, rule, args) -> bool:
        return rule.guard(self.model, self.state, *args) is None

    def take(self, rule, args) -> None:
        _, self.state = self.model.step(self.state, rule.name, args)
        self.steps.append((rule.name, tuple(args)))
        self.state, _, _ = settle(self.model, self.state, self.holds, self.own, self.steps)


def walk(model, rng: random.Random, length: int, counts: Counter, actions: list[tuple],
         behaviour=Behaviour) -> list[tuple]:
    """One trace with at most ``length`` driven steps, chosen among the enabled ones with weight 1 / (1 + how often
    the rule was driven so far, ``counts``, which the walk updates), and the cluster's own steps between them (the
    scenario replays the whole behaviour): (rule name, args) each. ``behaviour``: how the cluster's own steps
    follow a driven one (a class like Behaviour: the ZooKeeper-mode one is realkafka/campaign/zk.py ZkBehaviour)."""
    b = behaviour(model)
    for _ in range(length):
        enabled = [(rule, args) for rule, args in actions if b.enabled(rule, args)]
        if not enabled:
            break
        rule, args = rng.choices(enabled, weights=[1.0 / (1 + counts[r.name]) for r, _ in enabled])[0]
        counts[rule.name] += 1
        b.take(rule, args)
    return b.steps


def rebuild(model, driven: list[tuple], behaviour=Behaviour) -> list[tuple] | None:
    """The behaviour with these driven steps ((rule name, args) each), the cluster's own steps between them; None
    when one of them is not enabled where it comes."""
    b = behaviour(model)
    for name, args in driven:
        rule = model.rule(name)
        if not b.enabled(rule, args):
            return None
        b.take(rule, args)
    return b.steps


def driven_steps(model, steps, actions) -> list[tuple]:
    """The steps of a trace that were driven (among ``actions``), in order."""
    names = {rule.name for rule, _ in actions}
    return [(name, tuple(args)) for name, args in steps if name in names]


def labels(model, steps) -> list[str]:
    """The steps as a scenario file writes them."""
    return [model.rule(name).label(args) for name, args in steps]


__all__ = ["Behaviour", "drivable", "walk", "rebuild", "driven_steps", "labels"]
