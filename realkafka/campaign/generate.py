"""Traces generated from the model for a conformance campaign (model -> real): random walks over the rules the
harness can drive, weighted toward the rules driven least so far, each step followed by the cluster's own steps as
the planner takes them (plan.settle, every AssignReplicasToDirs held; after an acceptance of a -future dir, half the
time the controller's answer too, until the next driven step), so that each trace is a behaviour of the model that
plan.py can plan. Nothing here is a rule of its own: the walk reads each rule's guard and effect."""
from __future__ import annotations

import random
from collections import Counter

from realkafka.driver.mapping import ANSWER, ASSIGN, DRIVEN, Hold, handler
from realkafka.driver.plan import cluster_steps, settle

ORDERED_STEPS = ("ControllerAssignReplicasToDirs",)   # released by the trace, not driven: the planner orders them
# How often a walk whose ControllerAssignReplicasToDirs accepts a -future dir keeps the -future log unswapped over its
# next driven step (the window findings 4 and 8 rest on; the planner holds the controller's answer there).
ANSWER_HOLD = 0.5


def drivable(model, cluster_has=lambda capability: True) -> list[tuple]:
    """(rule, args) of every action the harness can make happen: the driven rules (whose harness capability the
    cluster kind declares, ``cluster_has``: realkafka/cluster/roles.py) and the assignments the planner releases."""
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

    def take(self, rule, args, hold_answer: bool = False) -> None:
        """The driven step and the cluster's own steps after it; with ``hold_answer`` (an acceptance of broker b's
        AssignReplicasToDirs) the controller's answers to b are held over these own steps, so that a -future log
        it accepted is not swapped before the next driven step."""
        _, self.state = self.model.step(self.state, rule.name, args)
        self.steps.append((rule.name, tuple(args)))
        holds = self.holds | {Hold(ANSWER, args[0])} if hold_answer else self.holds
        self.state, _, _ = settle(self.model, self.state, holds, self.own, self.steps)

    def accepts_a_move(self, rule, args) -> bool:
        """After this ControllerAssignReplicasToDirs(b) the cluster's own steps move a promotion of b on
        (PromoteFutureReplica(b, p): the swap of an accepted -future log, or its promotion queued again): what
        holding the controller's answer keeps back (plan.py's answer windows)."""
        if rule.name not in ORDERED_STEPS or "PromoteFutureReplica" not in self.model.rule_index:
            return False
        _, after = self.model.step(self.state, rule.name, args)
        taken: list = []
        settle(self.model, after, self.holds, self.own, taken)
        return any(name == "PromoteFutureReplica" and a[0] == args[0] for name, a in taken)


def pick(rng: random.Random, enabled: list[tuple], counts: Counter) -> tuple:
    """One of the ``enabled`` (rule, args): the rule with weight 1 / (1 + how often it was taken, ``counts``), then
    its arguments uniformly (a rule with many argument tuples, a dir failure on any broker's any dir, weighs no
    more than one with a single tuple)."""
    by_rule: dict = {}
    for rule, args in enabled:
        by_rule.setdefault(rule.name, []).append((rule, args))
    names = sorted(by_rule)
    name = rng.choices(names, weights=[1.0 / (1 + counts[n]) for n in names])[0]
    return rng.choice(by_rule[name])


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
        rule, args = pick(rng, enabled, counts)
        counts[rule.name] += 1
        b.take(rule, args, hold_answer=b.accepts_a_move(rule, args) and rng.random() < ANSWER_HOLD)
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


__all__ = ["Behaviour", "drivable", "pick", "walk", "rebuild", "driven_steps", "labels"]
