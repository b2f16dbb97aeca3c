"""Invariants: named safety properties, each with a statement and the KIP step it checks.

kinds:
- ``state``: checked on every reachable state: ``check(model, state) -> None | message``.
- ``transition``: checked on every step: ``check(model, state, action, next_state) -> None | message``.
- ``quiescent``: checked on states with no message in flight (``model.is_quiescent``): like ``state``.

``symmetric``: the invariant's verdict is the same on every state of a dir-symmetry orbit (permuting a broker's
log dirs), so the symmetry reduction cannot hide a violation of it (docs/model.md, section 10). A user's
invariant is not symmetric unless it says so; a search that checks one runs without the reduction.

There is no process-wide list: ``@invariant`` attaches the ``Invariant`` to its check function
(``check.invariant``); features claim the built-in ones (model/feature.py) and plugins are scanned for them
(``invariants_in``).
"""
from __future__ import annotations

from types import ModuleType
from typing import Callable

import attrs

KINDS = ("state", "transition", "quiescent")


@attrs.frozen
class Invariant:
    id: str
    kind: str
    statement: str
    reference: str
    check: Callable[..., "str | None"]
    symmetric: bool = False


def invariant(id: str, *, kind: str, statement: str, reference: str, symmetric: bool = False):
    if kind not in KINDS:
        raise ValueError(f"invariant kind must be one of {KINDS}, not {kind!r}")

    def declare(check):
        check.invariant = Invariant(id, kind, statement, reference, check, symmetric)
        return check

    return declare


def invariants_in(module: ModuleType) -> list[Invariant]:
    """The invariants a module declares with ``@invariant``, in the order it defines them."""
    found = []
    for value in list(vars(module).values()):
        inv = getattr(value, "invariant", None)
        if isinstance(inv, Invariant) and inv.check is value and inv not in found:
            found.append(inv)
    return found
