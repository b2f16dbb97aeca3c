"""Invariants: named safety properties, each with a statement and the KIP step it checks.

kinds:
- ``state``: checked on every reachable state: ``check(model, state) -> None | message``.
- ``transition``: checked on every step: ``check(model, state, action, next_state) -> None | message``.
- ``quiescent``: checked on states with no message in flight (``model.is_quiescent``): like ``state``.

Liveness kinds (``Liveness``, declared with ``@liveness``; checked by explorer/liveness.py only, never by the safety
engines, and not part of a model's default selection):
- ``eventually``: ``check(model, state) -> bool`` is the goal: every fair behaviour from the initial state reaches
  a goal state.
- ``leads_to``: P ~> Q per instance: ``p(model, state)`` and ``q(model, state)`` return the *instances* (an int
  bitmask, e.g. bit p for partition p; a bool is instance 0) where P and Q hold; a state where instance i
  satisfies P is followed on every fair behaviour by a state where i satisfies Q. ``check`` is ``q``.

``symmetric``: the invariant's verdict is the same on every state of a dir-symmetry orbit (permuting a broker's
log dirs), so the symmetry reduction cannot hide a violation of it (docs/model.md, section 10). A user's
invariant is not symmetric unless it says so; a search that checks one runs without the reduction.

There is no process-wide list: ``@invariant`` attaches the ``Invariant`` to its check function
(``check.invariant``); features claim the built-in ones (model/spec/feature.py) and plugins are scanned for them
(``invariants_in``).
"""
from __future__ import annotations

from types import ModuleType
from typing import Callable

import attrs

SAFETY_KINDS = ("state", "transition", "quiescent")
LIVENESS_KINDS = ("eventually", "leads_to")
KINDS = SAFETY_KINDS + LIVENESS_KINDS


@attrs.frozen
class Invariant:
    id: str
    kind: str
    statement: str
    reference: str
    check: Callable[..., "str | None"]
    symmetric: bool = False
    # The state components a state invariant's check reads (model/spec/footprint.py patterns; None: undeclared, which
    # makes every action visible to partial-order reduction). The built-in invariants declare theirs.
    reads: tuple[str, ...] | None = attrs.field(kw_only=True, default=None)


@attrs.frozen
class Liveness(Invariant):
    """A liveness property: ``check`` (= ``q``) is the goal; ``p`` the premise of ``leads_to`` (None for
    ``eventually``, whose premise is the initial state). Both return an int bitmask of instances or a bool."""
    p: Callable | None = None
    q: Callable | None = None


def is_liveness(inv: Invariant) -> bool:
    return inv.kind in LIVENESS_KINDS


def invariant(id: str, *, kind: str, statement: str, reference: str, symmetric: bool = False, reads=None):
    if kind not in SAFETY_KINDS:
        raise ValueError(f"invariant kind must be one of {SAFETY_KINDS}, not {kind!r} (liveness: @liveness)")

    def declare(check):
        check.invariant = Invariant(id, kind, statement, reference, check, symmetric,
                                    reads=None if reads is None else tuple(reads))
        return check

    return declare


def liveness(id: str, *, kind: str, statement: str, reference: str, symmetric: bool = False, p=None):
    """Declare the decorated ``q(model, state)`` as a liveness property: ``kind="eventually"`` (q is the goal) or
    ``kind="leads_to"`` with ``p=`` the premise (both return an int bitmask of instances, or a bool)."""
    if kind not in LIVENESS_KINDS:
        raise ValueError(f"liveness kind must be one of {LIVENESS_KINDS}, not {kind!r}")
    if (kind == "leads_to") != (p is not None):
        raise ValueError("a leads_to property needs p=..., an eventually property takes none")

    def declare(q):
        q.invariant = Liveness(id, kind, statement, reference, q, symmetric, p=p, q=q)
        return q

    return declare


def invariants_in(module: ModuleType) -> list[Invariant]:
    """The invariants a module declares with ``@invariant``, in the order it defines them."""
    found = []
    for value in list(vars(module).values()):
        inv = getattr(value, "invariant", None)
        if isinstance(inv, Invariant) and inv.check is value and inv not in found:
            found.append(inv)
    return found
