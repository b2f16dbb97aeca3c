"""The invariant registry: named safety properties, each with a statement and the KIP step it checks.

kinds:
- ``state``: checked on every reachable state: ``check(model, state) -> None | message``.
- ``transition``: checked on every step: ``check(model, state, action, next_state) -> None | message``.
- ``quiescent``: checked on states with no message in flight (``model.is_quiescent``): like ``state``.
"""
from __future__ import annotations

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


INVARIANTS: list[Invariant] = []


def invariant(id: str, *, kind: str, statement: str, reference: str):
    if kind not in KINDS:
        raise ValueError(f"invariant kind must be one of {KINDS}, not {kind!r}")

    def register(check):
        if any(i.id == id for i in INVARIANTS):
            raise ValueError(f"invariant {id!r} is registered twice")
        INVARIANTS.append(Invariant(id, kind, statement, reference, check))
        return check

    return register


def select(ids=None) -> list[Invariant]:
    """The invariants named by ids (all when ids is empty); an unknown id raises KeyError."""
    if not ids:
        return list(INVARIANTS)
    known = {i.id: i for i in INVARIANTS}
    unknown = [i for i in ids if i not in known]
    if unknown:
        raise KeyError(", ".join(unknown))
    return [known[i] for i in ids]
