"""What every search engine shares, below all of them (BFS on one or several workers, DFS, random walks,
liveness, the Spark engine, Hypothesis fuzzing and replay, the proofs' conformance check):

- ``Checker``: evaluates the selected invariants the same way everywhere (per-member state invariants together,
  once per distinct member; each invariant reported once: the ``failed`` set).
- ``TransitionCounts``: generated transitions and per-rule coverage: one firing per transition for its rule,
  plus one firing of the model's eager rule (``Model.eager_rule``) per step applied eagerly after it
  (``Action.settled``).
- ``rebuild_trace``: the concrete states of a path, re-derived from the initial state by its actions.
- ``fingerprint_of``: the fingerprint function a model's search dedups by.
- ``collision_probability``: the chance that two distinct states share a 64-bit fingerprint.
- ``SearchResult`` and ``Violation``: what an engine returns.

Generic over the model: it knows rules, actions, states and invariants, nothing of what they describe.
"""
from __future__ import annotations

from typing import Callable

import attrs
import numpy as np

from model.spec.invariant import Invariant
from model.spec.memo import by_value
from model.spec.model import Action, Model

FINGERPRINT_BITS = 64


def collision_probability(states: int) -> float:
    """The chance that two of n distinct states share a 64-bit fingerprint: about n^2 / 2^65 (as TLC reports)."""
    return states * max(states - 1, 0) / 2.0 ** (FINGERPRINT_BITS + 1)


# ---- results ----------------------------------------------------------------------------------------------------

@attrs.define
class Violation:
    invariant: Invariant
    message: str
    trace: list  # [(Action | None, State)], starting at an initial state


@attrs.define
class SearchResult:
    """What a search returns; every engine builds it by keyword."""
    engine: str
    result: str                 # "ok", "violation", "bounded" or "interrupted"
    distinct_states: int
    states_generated: int
    depth: int
    elapsed_s: float
    coverage: dict
    violations: list
    workers: int = attrs.field(default=1, kw_only=True)             # BFS worker processes used
    note: str | None = attrs.field(default=None, kw_only=True)      # why a search stopped early (--max-memory)
    memory: dict = attrs.field(factory=dict, kw_only=True)          # BFS: visited-set bytes, memory figures
    signal: int | None = attrs.field(default=None, kw_only=True)    # "interrupted": the signal (2 SIGINT, 15 SIGTERM)
    por: dict | None = attrs.field(default=None, kw_only=True)       # partial-order reduction: used, note, figures
    # The search's own limits (--max-depth, --max-states, walks, examples...; explorer/reports/bounds.py search_limits).
    limits: dict = attrs.field(factory=dict, kw_only=True)
    # Liveness: lassos that need a step the configuration leaves out (explorer/liveness.py): not violations.
    inconclusive: list = attrs.field(factory=list, kw_only=True)
    # The chance that two distinct states shared a fingerprint (so that one went unexplored): n^2 / 2^65.
    collision_probability: float = attrs.field(
        default=attrs.Factory(lambda self: collision_probability(self.distinct_states), takes_self=True),
        kw_only=True)


def result_status(violations: list, bounded: bool, signum: int | None = None) -> str:
    """A search's result: "interrupted" when a signal stopped it, else "violation", "bounded" or "ok"."""
    if signum is not None:
        return "interrupted"
    return "violation" if violations else ("bounded" if bounded else "ok")


def stops_search(failed, selected: int, all_violations: bool) -> bool:
    """After violations of the invariants in ``failed``: whether the search stops (at the first one, or with
    ``all_violations`` once every one of the ``selected`` invariants failed)."""
    return bool(failed) and (not all_violations or len(failed) >= selected)


# ---- counting ---------------------------------------------------------------------------------------------------

class TransitionCounts:
    """Generated transitions and per-rule coverage, counted the same way by every engine."""

    def __init__(self, model: Model):
        self.rules = model.rules
        self.coverage = [0] * len(model.rules)
        self.eager_rule = model.eager_rule
        self.generated = 0

    def count(self, action: Action) -> None:
        """One generated transition: its rule fired, and the eager rule once per step settled after it."""
        self.generated += 1
        self.coverage[action.rule] += 1
        if action.settled:
            self.coverage[self.eager_rule] += len(action.settled)

    def count_arrays(self, rules, settled) -> tuple[int, list]:
        """The (transitions, coverage) of transitions given as arrays of rule indices (uint16) and counts of
        eagerly settled steps, as ``count`` would count them (not added to this object's totals)."""
        rules = np.asarray(rules)
        coverage = np.bincount(rules, minlength=len(self.coverage)).astype(np.int64)
        extra = int(np.asarray(settled).sum(dtype=np.int64))
        if extra:
            coverage[self.eager_rule] += extra
        return len(rules), coverage.tolist()

    def add(self, generated: int, coverage) -> None:
        """Add transitions counted elsewhere (a worker, an executor)."""
        self.generated += generated
        for i, k in enumerate(coverage):
            self.coverage[i] += k

    def coverage_dict(self) -> dict:
        return {r.name: n for r, n in zip(self.rules, self.coverage)}


# ---- invariants -------------------------------------------------------------------------------------------------

def member_check_of(check) -> tuple | None:
    """A per-member state invariant's declaration: (members, member_check, combine), or None.

    A check lifted from a check of one member of the state (``check.member_check(member) -> None | text``)
    declares the members (``check.members(state)``: an iterable, e.g. a field of tuples) and how the members'
    results make its message (``check.combine(results) -> None | text``). The Checker then evaluates all the
    checks over the same ``members`` function together, once per distinct member."""
    member_check = getattr(check, "member_check", None)
    if member_check is None:
        return None
    return check.members, member_check, check.combine


class _MemberGroup:
    """The per-member checks over one ``members`` function, evaluated together once per distinct member: each
    member's results as a tuple (slot k: the k-th check), or None when all pass."""

    def __init__(self, members, checks: list):
        self.members = members

        def results(member):
            found = tuple(check(member) for check in checks)
            return None if all(r is None for r in found) else found

        self.results = by_value(results, 1 << 16)


class Checker:
    """Evaluates the selected invariants; remembers which already failed (each is reported once)."""

    def __init__(self, model: Model, invariants: list[Invariant]):
        self.model = model
        self.is_quiescent = model.is_quiescent
        self.state_invs = [i for i in invariants if i.kind == "state"]
        self.quiescent_invs = [i for i in invariants if i.kind == "quiescent"]
        self.transition_invs = [i for i in invariants if i.kind == "transition"]
        self.failed: set[str] = set()
        # Per-member state invariants: invariant id -> (group index, slot in the group's results, combine).
        groups: dict = {}
        self.member_slot: dict[str, tuple] = {}
        for inv in self.state_invs:
            declared = member_check_of(inv.check)
            if declared is not None:
                members, check, combine = declared
                checks = groups.setdefault(members, [])
                self.member_slot[inv.id] = (list(groups).index(members), len(checks), combine)
                checks.append(check)
        self.groups = [_MemberGroup(members, checks) for members, checks in groups.items()]

    @property
    def selected(self) -> int:
        return len(self.state_invs) + len(self.quiescent_invs) + len(self.transition_invs)

    def check_state(self, state) -> list[tuple[Invariant, str]]:
        found = []
        per_member = None
        for inv in self.state_invs:
            if inv.id not in self.failed:
                slot = self.member_slot.get(inv.id)
                if slot is None:
                    msg = inv.check(self.model, state)
                else:
                    if per_member is None:
                        per_member = [list(map(g.results, g.members(state))) for g in self.groups]
                    group, k, combine = slot
                    msg = combine(None if r is None else r[k] for r in per_member[group])
                if msg is not None:
                    found.append((inv, msg))
        if self.quiescent_invs and self.is_quiescent(state):
            for inv in self.quiescent_invs:
                if inv.id not in self.failed:
                    msg = inv.check(self.model, state)
                    if msg is not None:
                        found.append((inv, msg))
        return found

    def check_transition(self, state, action: Action, after) -> list[tuple[Invariant, str]]:
        found = []
        for inv in self.transition_invs:
            if inv.id not in self.failed:
                msg = inv.check(self.model, state, action, after)
                if msg is not None:
                    found.append((inv, msg))
        return found


# ---- paths and fingerprints -------------------------------------------------------------------------------------

def fingerprint_of(model: Model) -> Callable:
    """The model's fingerprint function: of a canonical representative when symmetry reduction is on."""
    return model.fingerprint


def rebuild_trace(model: Model, actions: list[Action]) -> list:
    """Re-derive the concrete states of a path from the initial state (the visited sets keep no states)."""
    state = model.init_states()[0]
    trace = [(None, state)]
    for action in actions:
        name = model.rules[action.rule].name
        action, state = model.step(state, name, action.args)
        trace.append((action, state))
    return trace
