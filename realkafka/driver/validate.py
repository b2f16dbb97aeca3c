"""Trace validation: a real run is judged by whether what it showed is a behaviour of the model, not by whether the
cluster chose the planned interleaving (docs/reproduce.md, "Judging a run").

The harness cannot force the real cluster's internal order (replays, loads, heartbeats, queued requests), so the
driver keeps the *candidates*: the model states consistent with everything observed so far. At each step:

1. the cluster may have taken its own steps since the last observation, so the candidates are first extended by
   every state the cluster's own steps reach from them (``Tracker.drive``);
2. a driven step (a fault, an Admin call, a client) is applied to each of those where the model enables it;
   a step Kafka refused keeps those where the model disables it; none left: the run left the model;
3. the reachable graph (``reach``) is built from there through the cluster's own steps (mapping.py's awaited
   rules, in any order, except those a hold in force stops) and the *timed* rules a hold brings about (a follower
   whose fetches are held is shrunk out of the ISR after replica.lag.time.max.ms; a broker whose heartbeats are
   held is fenced after broker.session.timeout.ms);
4. each observation that was seen twice in a row (a view read across a moving cluster can mix two moments)
   narrows the candidates to the states reachable from the previous ones whose projection shows what the real
   cluster shows (compare.py's ``differences`` is empty). Nothing reachable shows it, and the real view stays so
   until the cluster is quiet: a disagreement, with the closest candidates and the steps that could have led on.

Everything here reads the model's own rules (model.step and each rule's guard), the planner's holds and the one
projection (projection.py): nothing is written twice.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from .compare import differences
from .reach import MAX_REACHABLE, Graph, TooManyCandidates, reach
from .mapping import HEARTBEAT, handler
from .projection import project

def timed_steps(model, holds) -> list[tuple]:
    """(rule, args) of the steps time brings about: LeaderShrinkIsr of any lagging follower (a leader shrinks a
    follower that did not catch up within replica.lag.time.max.ms: one whose fetches are held, and also one whose
    replica went offline or whose broker crashed, which fetches nothing; the rule's guard asks that it lags), and
    ControllerExpireSession of a broker whose heartbeats are held (where the model has the rule)."""
    out = [(rule, args) for _, rule, args in model.action_space if rule.name == "LeaderShrinkIsr"]
    for hold in sorted(holds):
        if hold.api == HEARTBEAT and "ControllerExpireSession" in model.rule_index:
            out.append((model.rule("ControllerExpireSession"), (hold.broker,)))
    return out


def held_by(holds):
    """A ``blocked`` test for reach(): the step's hold (mapping.py's ``held_by``) is in force."""
    def blocked(rule, args) -> bool:
        h = handler(rule.name)
        return h.held_by is not None and h.held_by(*args) in holds
    return blocked


@dataclass
class Disagreement:
    """Where the real cluster left the model: what it showed that no candidate shows."""
    step: int
    says: str                        # in a line
    closest: list                    # the differences between the real view and the closest candidate's
    enabled: list                    # the own steps enabled in the last candidates (what could have led on)
    candidates: int                  # how many candidates the last consistent observation left


class Tracker:
    """The candidates of one run (see the module's note)."""

    def __init__(self, model, own, initial):
        self.model, self.own = model, own
        self.states: frozenset = frozenset(initial)
        self.graph: Graph | None = None
        self._views: dict = {}
        self.proven: Counter = Counter()   # rule -> narrowings whose every explanation took a step of it

    # ---- projections, cached per (state, faulted) ------------------------------------------------------------------
    def view(self, state, faulted):
        key = (state, faulted)
        got = self._views.get(key)
        if got is None:
            if len(self._views) > 4 * MAX_REACHABLE:
                self._views.clear()
            got = self._views[key] = project(self.model, state, faulted)
        return got

    def matching(self, states, real, faulted, parts=None) -> list:
        kw = {} if parts is None else {"parts": parts}
        return [s for s in states if not differences(self.view(s, faulted), real, **kw)]

    # ---- a step ------------------------------------------------------------------------------------------------------
    def extended(self) -> set:
        """The candidates and every state the cluster's own steps reach from them (what it may have done since the
        last observation)."""
        return self.graph.forward(self.states) if self.graph is not None else set(self.states)

    def drive(self, rule: str, args: tuple, refused: bool = False, maybe: bool = False) -> str | None:
        """Apply a driven step to the (extended) candidates (``refused``: Kafka refused it: keep the states where
        the model disables it; ``maybe``: its outcome is unknown: keep the states with it and without it); None,
        or why no candidate is left."""
        before = self.extended()
        r = self.model.rule(rule)
        if maybe:
            self.states = frozenset(before | {self.model.step(s, rule, args)[1] for s in before
                                              if r.guard(self.model, s, *args) is None})
            return None
        if refused:
            kept = {s for s in before if r.guard(self.model, s, *args) is not None}
            self.states = frozenset(kept)
            return None if kept else (f"Kafka refused {r.label(args)}, which the model allows in every state "
                                      f"consistent with the run so far ({len(before)})")
        after = {self.model.step(s, rule, args)[1] for s in before if r.guard(self.model, s, *args) is None}
        if not after:
            reasons = sorted({r.guard(self.model, s, *args) for s in before})
            self.states = frozenset(before)
            return (f"the cluster did {r.label(args)}, which no model state consistent with the run so far allows "
                    f"({len(before)} state(s); the model says: {reasons[0]})")
        self.states = frozenset(after)
        return None

    def open(self, holds) -> Graph:
        """The graph of this step: from the candidates through the cluster's own steps and the timed ones."""
        steps = [(rule, args) for _, _, rule, args in self.own] + timed_steps(self.model, holds)
        self.graph = reach(self.model, self.states, steps, held_by(holds))
        return self.graph

    def narrow(self, real, faulted, parts=None) -> list:
        """The states reachable from the candidates that show ``real``; the candidates become them (unchanged when
        none does: the caller decides whether that is a disagreement)."""
        found = self.matching(self.graph.forward(self.states), real, faulted, parts)
        if found:
            self.proven.update(self.graph.necessary(self.states, found))
            self.states = frozenset(found)
        return found

    def settled(self, states, real=None, faulted=frozenset()) -> bool:
        """By the model, a cluster in one of ``states`` makes no observable move before the next driven step: every
        state its own steps (and the timed ones) reach from them shows ``real`` too (without ``real``: none of them
        has a step left)."""
        if real is None:
            return all(not self.graph.edges.get(s) for s in states)
        return all(not differences(self.view(s, faulted), real) for s in self.graph.forward(states))

    def disagreement(self, step: int, real, faulted) -> Disagreement:
        """Why the real view shows no candidate: the closest reachable state's differences, the steps enabled."""
        reachable = self.graph.forward(self.states)
        scored = sorted(((len(d), d) for d in (differences(self.view(s, faulted), real) for s in reachable)),
                        key=lambda x: x[0])
        closest = scored[0][1] if scored else []
        enabled = sorted({label for s in self.states for label, _ in self.graph.edges.get(s, ())})
        return Disagreement(step, f"no model state reachable from the {len(self.states)} candidate(s) shows what "
                            f"the real cluster shows ({len(reachable)} reachable)", closest, enabled,
                            len(self.states))


__all__ = ["Tracker", "Disagreement", "Graph", "reach", "held_by", "timed_steps", "TooManyCandidates",
           "MAX_REACHABLE"]
