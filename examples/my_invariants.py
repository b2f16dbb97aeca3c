"""An example plugin: two invariants of your own, checked by every jbodcheck engine.

    jbodcheck explore --preset small --plugin examples.my_invariants
    jbodcheck fuzz --brokers 5 --dirs 3 --partitions 6 --plugin examples/my_invariants.py
    JBODCHECK_PLUGINS=examples.my_invariants python -m pytest -m "invariants or stateful"

See docs/extending.md. A check returns None when the property holds and a one-line message otherwise.
"""
from __future__ import annotations

from invariants import invariant
from model.storage.state import H_NONE, LIVE_DIR, bits


@invariant(
    "replicas_only_on_assigned_brokers", kind="state",
    statement="A broker holds a log of a partition, or hosts it, only if the partition's assignment lists it "
              "as a replica.",
    reference="KIP-112 (the controller sends LeaderAndIsr only to a partition's assigned replicas); "
              "ReplicaManager.becomeLeaderOrFollower",
)
def replicas_only_on_assigned_brokers(model, state):
    for b, broker in enumerate(state.brokers):
        for p in range(model.cfg.partitions):
            if b in model.assignments[p]:
                continue
            if broker.copies[p]:
                return f"broker {b} holds a log of partition {p} on dir(s) {bits(broker.copies[p])} " \
                       f"but is not one of its replicas {list(model.assignments[p])}"
            if broker.hosted[p] != H_NONE:
                return f"broker {b} hosts partition {p} but is not one of its replicas {list(model.assignments[p])}"
    return None


@invariant(
    "at_most_one_live_copy", kind="state",
    statement="A broker holds at most one copy of a partition's log on its live (good or saturated) log dirs.",
    reference="KIP-112 (a replica lives in exactly one log dir); LogManager.loadLogs (duplicate log directories)",
)
def at_most_one_live_copy(model, state):
    for b, broker in enumerate(state.brokers):
        for p, mask in enumerate(broker.copies):
            live = [d for d in bits(mask) if LIVE_DIR[broker.dirs[d]]]
            if len(live) > 1:
                return f"broker {b} has {len(live)} copies of partition {p} on live dirs {live}"
    return None
