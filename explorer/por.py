"""Partial-order reduction for safety (``--por``): at a state, explore a stubborn set of enabled actions
instead of all of them (docs/performance.md, "Partial-order reduction").

- Independence: two actions are dependent when one writes a state component the other reads (its guard's
  reads included) or writes, by the rules' declared footprints (model/spec/footprint.py: checked by
  tests/kernel/test_footprints.py); an enabled action with ``footprint_at`` uses the footprint it computes at the
  state. Undeclared rules are dependent on everything. Dead actions (``spends``: budget used up) are ignored.
- C0, C1 (strong stubborn sets, Valmari): from one enabled seed action, close the set under "an enabled member
  brings every action dependent on it; a disabled member brings every action that writes what its guard reads"
  (a necessary enabling set). The enabled members form the ample set; the smallest over all seeds that passes
  C2 and C2q is taken, remembered by (enabled actions, dead actions, footprints computed at the state).
- C2 (visibility): no enabled member is visible to a transition invariant (one that writes what it reads); for
  each state invariant, some enabled member writes nothing it reads. What an invariant reads is its own
  declaration (``@invariant(..., reads=...)``, component patterns of model/spec/footprint.py; checked by
  tests/kernel/test_footprints.py); a transition invariant's reads are those, before and after, whose change it can
  report (an action that writes none of them passes it). An invariant without ``reads`` sees every action.
- C2q (quiescence), when a quiescent invariant is checked: some enabled member needs a message
  (``needs_message``), so every quiescent state is reached and quiescent invariants need nothing more. Without
  one, state and transition invariants rest on C0 to C3 alone (docs/performance.md, "Why it is sound").
- C3 (cycle proviso), applied by the engine: BFS expands a state fully when one of its reduced successors is
  already visited at a level not deeper than the state's own (every cycle of the reduced graph then holds a
  fully expanded state); DFS when one is on the stack.

Counterexamples are real traces of the model (every step is an enabled action), not necessarily the shortest.
"""
from __future__ import annotations

import numpy as np

from model.spec.model import Action
from model.spec.footprint import Footprints


def _bits(mask: int):
    while mask:
        yield (mask & -mask).bit_length() - 1
        mask &= mask - 1


class Reduction:
    """The stubborn sets of one model checked with the given invariants."""

    def __init__(self, model, invariants):
        self.model = model
        self.footprints = fp = Footprints(model)
        comps = fp.components
        n = len(model.action_space)
        self.all = (1 << n) - 1
        # C2 for transition invariants: no enabled member may be visible (one that writes what it reads). For a
        # state invariant: some enabled member writes nothing it reads (``hidden_from``: invariant id -> the
        # components it reads). Quiescent invariants: the quiescence condition (C2q).
        self.visible = 0
        # C2q only when some quiescent invariant is checked (the state and transition invariants' argument does not
        # use it): else every quiescent state need not be reached.
        self.quiescence = any(inv.kind == "quiescent" for inv in invariants)
        self.hidden_from: dict[str, int] = {}
        self.blocked_by: dict[str, int] = {}       # invariant id -> how many actions it sees (statically)
        for inv in invariants:
            if inv.kind == "quiescent":
                continue
            if inv.reads is None:
                vis = self.all                      # an invariant without declared reads sees every action
                self.visible = self.all
            else:
                mask = comps.mask(inv.reads)
                vis = sum(1 << i for i in range(n) if fp.writes[i] & mask)
                if inv.kind == "transition":
                    self.visible |= vis
                else:
                    self.hidden_from[inv.id] = mask
            self.blocked_by[inv.id] = bin(vis).count("1")
        self._space = model._space
        self._ample: dict[tuple, int | None] = {}
        self.reduced_states = 0                      # states expanded with a proper subset (after C3)

    def _context(self, state, enabled: int) -> tuple:
        """What the stubborn set depends on besides the enabled actions: the dead actions (budget used up: never
        enabled again) and the footprints of the enabled actions that compute theirs at the state."""
        model, fp = self.model, self.footprints
        budget_left = model.hooks.budget_left      # declared by the feature whose rules spend (``Rule.spends``)
        dead = 0
        for pos, index in fp.spends:
            if budget_left(model, state, index) is not None:
                dead |= 1 << pos
        dynamic = tuple((pos,) + fp.at(model, state, pos) for pos in fp.dynamic if enabled >> pos & 1)
        return dead, dynamic

    def candidates(self, enabled: int, dead: int = 0, dynamic: tuple = ()):
        """Per enabled seed: (the enabled part of its stubborn set, the footprints' writes at the state)."""
        fp = self.footprints
        live = self.all & ~dead
        writes = {}
        dependent = {}
        for pos, r, w in dynamic:                   # an enabled action's footprint at the state
            writes[pos] = w
            dependent[pos] = fp.dependent_on(pos, r, w)
        for seed in _bits(enabled):
            stubborn, work = 1 << seed, [seed]
            while work:
                x = work.pop()
                if enabled >> x & 1:
                    grow = dependent[x] if x in dependent else fp.dependent[x]
                else:
                    grow = fp.enablers[x]
                grow &= live & ~stubborn
                stubborn |= grow
                work.extend(_bits(grow))
            yield stubborn & enabled, writes

    def ample_mask(self, enabled: int, dead: int = 0, dynamic: tuple = ()) -> int | None:
        """The smallest stubborn set's enabled actions (a bitmask) passing C2 and C2q, or None: expand fully."""
        key = (enabled, dead, dynamic)
        if key in self._ample:
            return self._ample[key]
        best = None
        for ample, writes in self.candidates(enabled, dead, dynamic):
            if ample == enabled or not self._invisible_enough(ample, writes):
                continue
            if best is None or bin(ample).count("1") < bin(best).count("1"):
                best = ample
        self._ample[key] = best
        return best

    def why_full(self, state) -> str | None:
        """None when the state has a proper stubborn set; else why not: "closure" (every seed's set holds every
        enabled action), "visibility" (a proper set fails C2 or C2q) or "nothing enabled"."""
        enabled = self.enabled(state)
        if not enabled:
            return "nothing enabled"
        if self.ample_mask(enabled, *self._context(state, enabled)) is not None:
            return None
        proper = [a for a, _ in self.candidates(enabled, *self._context(state, enabled)) if a != enabled]
        return "visibility" if proper else "closure"

    def _invisible_enough(self, ample: int, writes: dict) -> bool:
        """C2: no enabled member visible to a transition invariant; for each state invariant, an enabled member
        that writes nothing it reads. C2q: an enabled member that is never enabled in a quiescent state."""
        if ample & self.visible or (self.quiescence and not ample & self.footprints.needs_message):
            return False
        fp = self.footprints
        for mask in self.hidden_from.values():
            if not any(not writes.get(pos, fp.writes[pos]) & mask for pos in _bits(ample)):
                return False
        return True

    def enabled(self, state) -> int:
        model = self.model
        return sum(1 << pos for pos, (_, guard, _, args) in enumerate(self._space) if guard(model, state, *args) is None)

    def successors(self, state):
        """(the successors of a stubborn set, a function giving the others) or (all successors, None)."""
        model = self.model
        eager = model.eager is not None        # the rule applied eagerly, if any (KRaft mode has none)
        enabled = self.enabled(state)
        ample = self.ample_mask(enabled, *self._context(state, enabled)) if enabled else None

        def fire(mask):
            out = []
            for pos in _bits(mask):
                ri, _, effect, args = self._space[pos]
                after = effect(model, state, *args)
                if eager:
                    after, settled = model.settle(after)
                    out.append((Action(ri, args, settled), after))
                else:
                    out.append((Action(ri, args), after))
            return out

        if ample is None:
            return fire(enabled), None
        return fire(ample), lambda: fire(enabled & ~ample)


def reduction_note(model, options) -> str | None:
    """None when partial-order reduction can be used for this search, else why not (one line)."""
    if getattr(options, "max_depth", None) is not None:
        return "--max-depth: a reduced graph may reach a state only deeper than the bound, so POR is off"
    if getattr(options, "workers", 1) > 1:
        return ("--workers > 1: the cycle proviso needs the whole visited set, which the workers share out, "
                "so POR is off")
    return None


def bfs_expander(reduction: Reduction, fingerprint, visited):
    """BFS's successor function under POR. ``visited`` holds every state of the levels up to the one being
    expanded (C3: a reduced successor found there closes a possible cycle: the state is expanded fully)."""
    def expand(state):
        succ, rest = reduction.successors(state)
        if rest is not None:
            if visited.contains(np.array([fingerprint(after) for _, after in succ], dtype=np.uint64)).any():
                return succ + rest()
            reduction.reduced_states += 1
        return succ
    return expand


def dfs_expander(reduction: Reduction, fingerprint, on_stack: set):
    """DFS's successor function under POR (C3: a reduced successor on the stack: expand fully)."""
    def expand(state):
        succ, rest = reduction.successors(state)
        if rest is not None:
            if any(fingerprint(after) in on_stack for _, after in succ):
                return succ + rest()
            reduction.reduced_states += 1
        return succ
    return expand


def reduction_for(model, invariants, options) -> tuple[Reduction | None, str | None]:
    """(the reduction to use, None) when ``options.por`` asks for it and it is sound here, else (None, why not;
    None when not asked for)."""
    if not getattr(options, "por", False):
        return None, None
    note = reduction_note(model, options)
    if note is not None:
        return None, note
    reduction = Reduction(model, invariants)
    if reduction.visible == reduction.all:
        worst = sorted(reduction.blocked_by, key=lambda i: -reduction.blocked_by[i])[:3]
        return None, (f"every action is visible to the selected invariants (most: {', '.join(worst)}), so no "
                      f"state can be reduced: POR is off")
    if reduction.quiescence and not reduction.footprints.needs_message & ~reduction.visible:
        return None, ("every action that needs a message is visible to the selected transition invariants, so no "
                      "stubborn set passes C2 and the quiescence condition: POR is off")
    return reduction, None


def report(reduction: Reduction | None, note: str | None) -> dict | None:
    """What a report says of POR: None when not asked for; else used or not, why not, and how many states were
    expanded reduced."""
    if reduction is None and note is None:
        return None
    if reduction is None:
        return {"used": False, "note": note}
    return {"used": True, "note": None, "reduced_states": reduction.reduced_states,
            "visible_actions": bin(reduction.visible).count("1"),
            "actions": len(reduction.model.action_space), "visible_by_invariant": reduction.blocked_by}
