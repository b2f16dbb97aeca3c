"""Invariants that the other designs claim (docs/model.md, section 12), readable on the core state of every
design, so that `jbodcheck compare` (explorer/compare.py) checks every design against them.

- ``refusal_only_for_a_lost_copy`` (KIP-112's draft, scenarios 1 and 3: the controller asks for the creation of
  every replica not yet created, so a replica is refused only when its log is out of reach);
- ``no_recreate_over_offline_copy`` (KIP-112: "new replicas will only be created on good log directory", and a
  replica whose log is on a bad dir is offline, not re-created);
- ``offline_replicas_are_known`` (KIP-18: a dir's partitions are restarted by the controller; KIP-112: the
  controller learns the offline replicas from LeaderAndIsr responses);
- ``dir_failure_spares_other_dirs`` (KIP-112's goal: a broker keeps serving the replicas on its good dirs when a
  dir fails; the availability that the broker before KIP-112, which stops on any dir failure, does not have).
"""
from __future__ import annotations

import attrs

from model.storage.broker import live_copy_dir
from model.storage.state import GOOD, H_FOLLOWER, H_LEADER, H_NONE, H_OFFLINE, OFFLINE, REMOVED

from model.spec.invariant import invariant


def offline_dir_mask(broker) -> int:
    return sum(1 << d for d, status in enumerate(broker.dirs) if status == OFFLINE)


@invariant(
    "refusal_only_for_a_lost_copy", kind="quiescent", symmetric=True,
    statement="When no message is in flight, a running broker holds a partition offline only if a copy of its log "
              "is on one of its offline dirs, or it has no good dir to create it on: a replica it never created (or "
              "whose disk was replaced) is not refused for good.",
    reference="KIP-112 draft (created list), scenarios 1, 3 and 4; LogManager.getOrCreateLog",
)
def refusal_only_for_a_lost_copy(model, state):
    for b, broker in enumerate(state.brokers):
        if not broker.up or GOOD not in broker.dirs:
            continue
        bad = offline_dir_mask(broker)
        for p, hosted in enumerate(broker.hosted):
            if hosted == H_OFFLINE and not broker.copies[p] & bad:
                return (f"broker {b} holds partition {p} offline though no copy of its log is on an offline dir and "
                        f"it has a good dir: the replica is never created")
    return None


@invariant(
    "no_recreate_over_offline_copy", kind="transition", symmetric=True,
    reads=("broker[*].copies", "broker[*].dirs"),
    statement="A broker never creates a new log for a partition while a copy of that partition's log is on one of "
              "its offline dirs (a deleted topic's copy is not the partition's).",
    reference="KIP-112 (a replica on a bad log directory is offline: it is not re-created); KIP-112 draft, "
              "Changes in Operational Procedures 1 (kafka-log-dirs.sh after the disk is fixed)",
)
def no_recreate_over_offline_copy(model, state, action, after):
    for b, (before_b, after_b) in enumerate(zip(state.brokers, after.brokers)):
        if before_b is after_b or before_b.copies == after_b.copies:
            continue
        bad = offline_dir_mask(before_b)
        for p, (old, new) in enumerate(zip(before_b.copies, after_b.copies)):
            if new & ~old & ~_renamed_future(before_b, after_b, p) and old & ~_stray(before_b, p) & bad:
                return (f"broker {b} created a new log of partition {p} while its copy on offline dir(s) "
                        f"{[d for d in range(len(before_b.dirs)) if old & bad >> d & 1]} is out of reach")
    return None


def _stray(broker, p: int) -> int:
    """The dirs (a mask) whose copy of p belongs to a deleted topic (KRaft's kraft-deletion feature: the model's
    stand-in for the topic id in each log's partition.metadata; 0 on a model without it): not the partition's copy,
    so a log of a re-created topic beside it is no re-creation (LogManager.isStrayKraftReplica drops it at the next
    start, and it is no duplicate of the new log)."""
    stray = getattr(broker, "stray", None)
    return 0 if stray is None else stray[p]


def _renamed_future(before, after, p: int) -> int:
    """The dir (as a mask) of the partition's -future log if the step promoted it (renamed it into the current
    log): not a creation (KRaft's kraft-future feature; 0 on a model without future logs)."""
    future = getattr(before, "future", None)
    if future is None or future[p] < 0 or after.future[p] == future[p]:
        return 0
    return 1 << future[p]


def lost_log(broker, p: int) -> bool:
    """The broker's log of p is out of reach: a copy on an offline dir, none on a live one."""
    live = sum(1 << d for d, status in enumerate(broker.dirs) if status not in (OFFLINE, REMOVED))
    return bool(broker.copies[p] & offline_dir_mask(broker)) and not broker.copies[p] & live


@invariant(
    "offline_replicas_are_known", kind="quiescent", symmetric=True,
    statement="When no message or znode is pending, every replica that a running broker cannot serve because its "
              "log is out of reach (marked offline, or dropped with its only copy on an offline dir) is known to "
              "the controller (its offline replicas) or has been restarted (served again from a good dir).",
    reference="KIP-18 (the controller restarts the partitions a broker writes under /restart_partitions); KIP-112 "
              "scenario 2 (the controller learns the offline replicas from LeaderAndIsr responses)",
)
def offline_replicas_are_known(model, state):
    c = state.controller
    for b, broker in enumerate(state.brokers):
        if not broker.up or not c.live >> b & 1:
            continue
        for p, hosted in enumerate(broker.hosted):
            if (c.offline[b] >> p & 1 or c.partitions[p].leader_epoch < 0 or b not in c.assigned[p]
                    or c.deletion[p]):
                continue
            if hosted == H_OFFLINE or (hosted == H_NONE and lost_log(broker, p)):
                return f"broker {b} cannot serve partition {p} (its log is out of reach), but the controller does not know it"
    return None


@invariant(
    "dir_failure_spares_other_dirs", kind="transition", symmetric=True,
    reads=("broker[*].up", "broker[*].dirs", "broker[*].hosted", "broker[*].copies"),
    statement="When a log dir of a running broker fails, the broker keeps running and keeps serving (as leader or "
              "follower) every replica it served from another dir: a disk failure costs only that disk's replicas.",
    reference="KIP-112, Goals (serve replicas on good log directories even if some log directories have failed) "
              "and Motivation, problem 1 (before it, a broker shuts down if any disk fails)",
)
def dir_failure_spares_other_dirs(model, state, action, after):
    for b, (before_b, after_b) in enumerate(zip(state.brokers, after.brokers)):
        if before_b is after_b or not before_b.up or before_b.dirs == after_b.dirs:
            continue
        failed = [d for d, (old, new) in enumerate(zip(before_b.dirs, after_b.dirs))
                  if new == OFFLINE and old not in (OFFLINE, REMOVED)]
        for d in failed:
            for p, hosted in enumerate(before_b.hosted):
                if hosted not in (H_LEADER, H_FOLLOWER):
                    continue
                home = live_copy_dir(before_b, p)
                if home in failed:
                    continue
                if not after_b.up:
                    return (f"broker {b} stopped when its dir {d} failed: partition {p}, served from its good dir "
                            f"{home}, is no longer served")
                if after_b.hosted[p] not in (H_LEADER, H_FOLLOWER):
                    return (f"broker {b}'s dir {d} failed and it stopped serving partition {p}, whose log is on its "
                            f"good dir {home}")
    return None


def claimed_by(inv, *feature_names: str):
    """The invariant as a design claims it: checked on the models that include one of the claiming features and
    vacuous on the others, so that checking every built-in invariant (``explorer.catalog.select_invariants()``) on another design
    does not judge that design by a claim it does not make; `jbodcheck compare` judges every design by every
    claim with the unguarded checks (PORTABLE). A ``leads_to`` property's premise is guarded too (no instance on
    the other designs)."""
    raw, claiming = inv.check, frozenset(feature_names)

    def check(model, *args):
        if claiming.isdisjoint(model.feature_names):
            return None
        return raw(model, *args)

    check.__name__ = raw.__name__
    check.__module__ = raw.__module__
    if getattr(inv, "p", None) is None:
        return attrs.evolve(inv, check=check)
    premise, goal = inv.p, inv.q

    def p(model, state):   # a liveness property: no premise (no instance) on the other designs
        return 0 if claiming.isdisjoint(model.feature_names) else premise(model, state)

    def q(model, state):
        return 0 if claiming.isdisjoint(model.feature_names) else goal(model, state)

    q.__name__, q.__module__ = goal.__name__, goal.__module__
    return attrs.evolve(inv, check=q, q=q, p=p)


PORTABLE = (refusal_only_for_a_lost_copy.invariant, no_recreate_over_offline_copy.invariant,
            offline_replicas_are_known.invariant, dir_failure_spares_other_dirs.invariant)
