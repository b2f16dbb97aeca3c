"""The invariant KIP-46's self-healing claims (docs/model.md, section 13.3): it reads the design's own znodes
(model/design_kip46.py), so it is checked on the kip46 design only (n/a in `jbodcheck compare` for the others)."""
from __future__ import annotations

from .registry import invariant


def _healing(model, state, broker: int, p: int) -> bool:
    """The replica of p on the broker is covered: its failure is recorded, a task for it is queued, or a
    self-healing reassignment of p that moves it off the broker is in progress."""
    return bool(model.ext(state, "failed_brokers") >> broker & 1
                or (p, broker) in model.ext(state, "heal_tasks")
                or any(q == p and broker not in target for q, _, target in model.ext(state, "heal_moves")))


@invariant(
    "dead_broker_is_scheduled_for_healing", kind="quiescent", symmetric=True,
    statement="When no message is in flight, every broker that the controller counts dead and that holds an "
              "assigned replica of an existing partition (not being deleted) is in /admin/failed_brokers, or a "
              "self-healing task for that replica is queued, or a self-healing reassignment moving it off the broker "
              "is in progress: a broker failure is never forgotten.",
    reference="KIP-46, Motivation (transfer replicas from the failed node), Part 1 (explicit notification; the list "
              "of dead nodes persisted to survive controller handoffs), Workflow 1-6",
)
def dead_broker_is_scheduled_for_healing(model, state):
    c = state.controller
    for b in range(model.cfg.brokers):
        if c.live >> b & 1:
            continue
        for p, part in enumerate(c.partitions):
            if part.leader_epoch < 0 or c.deletion[p] or b not in c.assigned[p]:
                continue
            if not _healing(model, state, b, p):
                return (f"broker {b} is dead (for the controller) and holds a replica of partition {p}, but nothing "
                        f"will move it: /admin/failed_brokers has no entry for it and no self-healing task covers it")
    return None
