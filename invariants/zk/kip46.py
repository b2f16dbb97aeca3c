"""The invariant KIP-46's self-healing claims (docs/model.md, section 13.3): it reads the design's own znodes
(model/zk/design_kip46.py), so it is checked on the kip46 design only (n/a in `jbodcheck compare` for the others)."""
from __future__ import annotations

from model.storage.state import D_NONE

from model.spec.invariant import invariant, liveness


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


# ---- liveness (docs/model.md, sections 9.1 and 13.3) ---------------------------------------------------------

def _existing(state, p: int) -> bool:
    c = state.controller
    return c.partitions[p].leader_epoch >= 0 and c.deletion[p] == D_NONE


def _within_premise(model, state) -> bool:
    """KIP-46's premise, at this state: at most RF-1 brokers are down and at least RF are up (so that RF replicas
    of a partition have somewhere to be)."""
    up = sum(1 for broker in state.brokers if broker.up)
    rf = model.cfg.rf
    return model.cfg.brokers - up <= rf - 1 and up >= rf


def replica_on_a_down_broker(model, state) -> int:
    """P of replication_restored: partitions that exist (a leadership record, not being deleted) with a broker of
    their (ZooKeeper) assignment that is down."""
    c = state.controller
    return sum(1 << p for p in range(model.cfg.partitions)
               if _existing(state, p) and any(not state.brokers[b].up for b in c.assigned[p]))


@liveness(
    "replication_restored", kind="leads_to", symmetric=True, p=replica_on_a_down_broker,
    statement="A partition with a replica of its assignment on a broker that is down eventually has every replica "
              "of its assignment on a running broker (its replication factor is restored: the broker is back, or "
              "the replica moved), or its topic is deleted, or KIP-46's premise fails (RF or more brokers are "
              "down, or fewer than RF are up). Restarts are unfair, so a down broker may be down for good: a "
              "violation is a fair behaviour in which, from the premise state on, at most RF-1 brokers are down "
              "and at least RF up at every state, and the partition keeps a replica on a down broker for ever.",
    reference="KIP-46, Motivation (\"Automatic rebalancing upon failure is important to preserve redundancy\"), "
              "Part 1 (failure_interval), Workflow 1-6",
)
def replication_restored_or_premise_gone(model, state) -> int:
    p_mask = replica_on_a_down_broker(model, state)
    if p_mask and not _within_premise(model, state):
        return (1 << model.cfg.partitions) - 1
    return sum(1 << p for p in range(model.cfg.partitions) if not p_mask >> p & 1)
