"""A path through the model, as the URL gives it: rule steps (``DirFail(broker=0, dir=1)``, the scenario files'
form, explorer/scenario.py) re-derived from the initial state. The server keeps no session; a bounded cache of
path prefixes spares re-deriving the states of a path that grows one step at a time.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import NamedTuple

from model import ActionDisabled, Model
from model.spec.invariant import SAFETY_KINDS

from model.spec.engine import Checker
from ..errors import failure_detail, is_failure
from ..scenario import ScenarioError, parse_step

MAX_STEPS = 1000            # far beyond any bound of the presets; a longer path is a wrong (or hostile) URL
CACHE_PATHS = 4096


class PathError(ValueError):
    """A path the model cannot walk: a malformed step, or one not enabled where it is taken (a 4xx). ``valid``:
    how many steps before the wrong one can be walked."""

    def __init__(self, message: str, valid: int = 0):
        super().__init__(message)
        self.valid = valid


class Node(NamedTuple):
    """The state after a path's last step, with what the step broke (transition and state invariants)."""
    action: object          # model Action, None for the initial state
    state: object
    found: tuple            # ((Invariant, message), ...) of this step


class Found(NamedTuple):
    """An invariant broken on the path: the first step that breaks it."""
    invariant: object
    message: str
    step: int


class Verdict(NamedTuple):
    invariant: object
    verdict: str            # "holds", "violated", "not checked" or "check raised" (a plugin's check failed)
    message: str            # the violation, or why it is not checked here


class Choice(NamedTuple):
    """One instance of a rule at a state: enabled (reason None) or the guard's reason it is not."""
    step: str               # the scenario-file step, e.g. DirFail(broker=0, dir=1)
    reason: str | None


class RuleChoices(NamedTuple):
    rule: object
    enabled: tuple          # Choice, ...
    disabled: tuple


class Walker:
    """The paths of one model (its rules and invariants as the CLI built them)."""

    def __init__(self, model: Model):
        self.model = model
        self.invariants = tuple(i for i in model.invariants if i.kind in SAFETY_KINDS)
        self._checker = Checker(model, list(self.invariants))     # its ``failed`` set stays empty
        self._cache: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    # ---- the path ------------------------------------------------------------------------------------------------
    def parse(self, steps) -> tuple[str, ...]:
        """The steps in their canonical form (``rule.label``); PathError for a malformed one."""
        steps = list(steps)
        if len(steps) > MAX_STEPS:
            raise PathError(f"the path has {len(steps)} steps, more than {MAX_STEPS}")
        out = []
        for number, text in enumerate(steps, start=1):
            try:
                name, args = parse_step(self.model, text, number)
            except ScenarioError as e:
                raise PathError(str(e), number - 1) from None
            out.append(self.model.rule(name).label(args))
        return tuple(out)

    def nodes(self, steps: tuple[str, ...]) -> list[Node]:
        """The nodes of the path (index 0: the initial state); PathError at the first step not enabled."""
        chain: list[Node] = []
        for i in range(len(steps) + 1):
            prefix = steps[:i]
            with self._lock:
                node = self._cache.get(prefix)
                if node is not None:
                    self._cache.move_to_end(prefix)
            if node is None:
                node = self._remember(prefix, self._initial() if i == 0 else self._extend(prefix, chain[-1].state, i))
            chain.append(node)
        return chain

    def _initial(self) -> Node:
        state = self.model.init_states()[0]
        return Node(None, state, tuple(self.check_state(state)))

    def _extend(self, prefix: tuple, state, number: int) -> Node:
        name, args = parse_step(self.model, prefix[-1], number)
        try:
            action, after = self.model.step(state, name, args)
        except ActionDisabled as e:
            raise PathError(f"step {number} {e}", number - 1) from None
        found = tuple(self.check_transition(state, action, after)) + tuple(self.check_state(after))
        return Node(action, after, found)

    def _remember(self, prefix: tuple, node: Node) -> Node:
        with self._lock:
            self._cache[prefix] = node
            while len(self._cache) > CACHE_PATHS:
                self._cache.popitem(last=False)
        return node

    # ---- invariants ----------------------------------------------------------------------------------------------
    def check_state(self, state):
        """Every invariant the state breaks (the engines' Checker; none is skipped for having failed before)."""
        return self._checker.check_state(state)

    def check_transition(self, state, action, after):
        return self._checker.check_transition(state, action, after)

    @staticmethod
    def broken(nodes: list[Node]) -> list[Found]:
        """Each invariant broken on the path, at the first step that breaks it (as a search reports it)."""
        seen, out = set(), []
        for i, node in enumerate(nodes):
            for inv, msg in node.found:
                if inv.id not in seen:
                    seen.add(inv.id)
                    out.append(Found(inv, msg, i))
        return out

    def verdicts(self, nodes: list[Node], at: int) -> list[Verdict]:
        """Every invariant's verdict on the state after step ``at`` (a transition invariant: on that step)."""
        node = nodes[at]
        found = {inv.id: msg for inv, msg in node.found}
        quiescent = self.model.is_quiescent(node.state)
        out = []
        for inv in self.invariants:
            if inv.id in found and is_failure(found[inv.id]):
                out.append(Verdict(inv, "check raised", failure_detail(found[inv.id])))
            elif inv.id in found:
                out.append(Verdict(inv, "violated", found[inv.id]))
            elif inv.kind == "transition" and at == 0:
                out.append(Verdict(inv, "not checked", "no step taken yet"))
            elif inv.kind == "quiescent" and not quiescent:
                out.append(Verdict(inv, "not checked", "messages are in flight: checked on quiescent states only"))
            else:
                out.append(Verdict(inv, "holds", ""))
        return out

    # ---- the actions of a state ----------------------------------------------------------------------------------
    def choices(self, state) -> list[RuleChoices]:
        """Every rule of the model with its instances at ``state``, enabled or with the guard's reason."""
        model = self.model
        out = []
        for rule in model.rules:
            enabled, disabled = [], []
            for args in rule.domain(model):
                reason = rule.guard(model, state, *args)
                (enabled if reason is None else disabled).append(Choice(rule.label(args), reason))
            out.append(RuleChoices(rule, tuple(enabled), tuple(disabled)))
        return out
