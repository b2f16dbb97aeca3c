"""A finding's neighbourhood as conform traces (`jbodcheck conform --around SCENARIO.json`, docs/conform.md "Around
a finding"): each trace is the scenario's made steps (the ones the harness drives or orders by a hold) with one
mutation, one step dropped, two adjacent steps swapped, or a fault the model enables there inserted; the cluster's
own steps are then re-derived by the walks' Behaviour (generate.py ``rebuild``). A mutation whose made steps the
model does not allow, or whose behaviour is the unmutated one's or an earlier mutation's, is skipped."""
from __future__ import annotations

import random

from realkafka.driver.mapping import DRIVEN, ORDERED, handler

from .generate import Behaviour, rebuild

FAULTS = ("DirFail", "BrokerCrash", "BrokerRestart")


def made_steps(steps) -> list[tuple]:
    """The steps of a scenario ((rule name, args) each) the harness makes happen (driven, or ordered by a hold), in
    order: what a mutation changes (the rest are the cluster's own, re-derived)."""
    out = []
    for name, args in steps:
        try:
            how = handler(name).how
        except KeyError:
            continue
        if how in (DRIVEN, ORDERED):
            out.append((name, tuple(args)))
    return out


def dropped(made: list, i: int) -> list:
    return made[:i] + made[i + 1:]


def swapped(made: list, i: int) -> list:
    return made[:i] + [made[i + 1], made[i]] + made[i + 2:]


def with_fault(made: list, i: int, fault: tuple) -> list:
    return made[:i] + [fault] + made[i:]


def _say(model, step) -> str:
    return model.rule(step[0]).label(step[1])


def mutations(model, made: list, actions: list, behaviour=Behaviour) -> list[tuple[str, list]]:
    """Every candidate mutation of ``made`` in a fixed order: (what it is, in a line; its made steps). A fault
    inserted before step i is one of ``actions`` (the harness's) among FAULTS enabled after the steps before i."""
    out = [(f"{_say(model, made[i])} dropped", dropped(made, i)) for i in range(len(made))]
    out += [(f"{_say(model, made[i])} and {_say(model, made[i + 1])} swapped", swapped(made, i))
            for i in range(len(made) - 1) if made[i] != made[i + 1]]
    b = behaviour(model)
    for i in range(len(made) + 1):
        if i:
            rule, args = model.rule(made[i - 1][0]), made[i - 1][1]
            if not b.enabled(rule, args):
                break     # a prefix the model does not allow: no fault after it either
            b.take(rule, args)
        for rule, args in actions:
            if rule.name in FAULTS and b.enabled(rule, args):
                where = f"before {_say(model, made[i])}" if i < len(made) else "at the end"
                out.append((f"{rule.label(args)} inserted {where}", with_fault(made, i, (rule.name, tuple(args)))))
    return out


class Neighbourhood:
    """The mutations of one scenario's made steps on one model, in the order ``rng`` shuffles them (once, at the
    first trace asked for): ``next()`` gives (what it is, its behaviour's steps) or None when none is left."""

    def __init__(self, model, name: str, made: list, actions: list, behaviour=Behaviour):
        self.model, self.name, self.made, self.actions, self.behaviour = model, name, made, actions, behaviour
        self.order: list | None = None
        self.seen: set = set()

    def next(self, rng: random.Random):
        if self.order is None:
            self.order = mutations(self.model, self.made, self.actions, self.behaviour)
            rng.shuffle(self.order)
            whole = rebuild(self.model, self.made, self.behaviour)
            if whole is not None:
                self.seen.add(tuple(whole))
        while self.order:
            what, made = self.order.pop(0)
            steps = rebuild(self.model, made, self.behaviour)
            if steps is None or tuple(steps) in self.seen:
                continue
            self.seen.add(tuple(steps))
            return f"{self.name}: {what}", steps
        return None


def around_jobs(hoods: list):
    """A source of mutated traces over ``hoods`` (Neighbourhoods of one release), taken in turn: ``take(rng)`` gives
    the next (what, steps), or None when every neighbourhood is exhausted."""
    turn = [0]

    def take(rng: random.Random):
        for _ in range(len(hoods)):
            hood = hoods[turn[0] % len(hoods)]
            turn[0] += 1
            found = hood.next(rng)
            if found is not None:
                return found
        return None
    return take


__all__ = ["FAULTS", "made_steps", "dropped", "swapped", "with_fault", "mutations", "Neighbourhood", "around_jobs"]
