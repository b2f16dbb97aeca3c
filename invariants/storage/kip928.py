"""KIP-928's saturated dirs, topic deletion (KIP-112 scenario 8) and partition reassignment (scenario 7)."""
from __future__ import annotations

from model.storage.broker import live_copy_dir, served_replicas
from model.storage.state import (
    D_DONE, HOSTED_NAMES, LIVE_DIR, R_DELETION_SUCCESSFUL, RA_DONE, SATURATED, bits,
)

from invariants.storage.durability import lapsed
from model.spec.invariant import invariant
from invariants.storage.safety import per_broker


@invariant(
    "no_serving_from_saturated_dir", kind="state", symmetric=True,
    reads=("broker[*]",),
    statement="A broker never leads or follows a replica whose log is on a saturated dir.",
    reference="KIP-928 Goal state (fetchers are removed for a saturated dir; its replicas are impaired)",
)
@per_broker
def no_serving_from_saturated_dir(broker):
    for p, h, d in served_replicas(broker):
        if d >= 0 and broker.dirs[d] == SATURATED:
            return f"is {HOSTED_NAMES[h]} of partition {p}, whose log is on saturated dir {d}"
    return None


@invariant(
    "saturated_dir_can_free_space", kind="state", symmetric=True,
    reads=("broker[*]",),
    statement="On a running broker, a saturated dir that holds data always has a free unit, so that retention "
              "can roll a new segment and delete the old ones.",
    reference="KIP-928 Goal state (the reserved space-of-last-resort file, deleted when a dir saturates)",
)
def saturated_dir_can_free_space(model, state):
    capacity = model.cfg.dir_capacity
    for b, broker in enumerate(state.brokers):
        if not broker.up or SATURATED not in broker.dirs:
            continue
        for d, status in enumerate(broker.dirs):
            if status != SATURATED or broker.used[d] < capacity:
                continue
            held = [p for p, n in enumerate(broker.segs) if n and live_copy_dir(broker, p) == d]
            if held:
                return (f"broker {b}'s saturated dir {d} is full ({broker.used[d]} of {capacity} units) and holds "
                        f"partition {held[0]}'s segments: retention cannot roll a segment to delete them")
    return None


@invariant(
    "deleted_replica_holds_no_data", kind="state", symmetric=True,
    reads=("broker[*]", "controller"),
    statement="A replica the controller counts as deleted (ReplicaDeletionSuccessful, or its topic's deletion "
              "complete) holds no copy of the partition on a good or saturated dir.",
    reference="KIP-112 scenario 8 (topic deletion should delete all replicas); KIP-928 Goal deletion",
)
def deleted_replica_holds_no_data(model, state):
    c = state.controller
    for p, deletion in enumerate(c.deletion):
        if not deletion:
            continue
        for i, b in enumerate(model.assignments[p]):
            if deletion != D_DONE and c.replicas[p][i] != R_DELETION_SUCCESSFUL:
                continue
            broker = state.brokers[b]
            for d, status in enumerate(broker.dirs):
                if LIVE_DIR[status] and broker.copies[p] >> d & 1:
                    what = "its topic's deletion is complete" if deletion == D_DONE else "its deletion succeeded"
                    return f"broker {b} still holds partition {p} on dir {d} although {what}"
    return None


@invariant(
    "reassignment_keeps_an_in_sync_copy", kind="transition", symmetric=True,
    reads=("controller", "broker[*]"),
    statement="When a partition reassignment completes (its old replicas are removed), some replica that stays "
              "assigned and is in the ISR holds every acknowledged record of the partition in its log.",
    reference="KIP-112 scenario 7 (partition reassignment); onPartitionReassignment (wait for the target replicas to "
              "join the ISR before removing the old ones)",
)
def reassignment_keeps_an_in_sync_copy(model, state, action, after):
    before_c, after_c = state.controller, after.controller
    if before_c.reassigning is after_c.reassigning:
        return None
    for p, (old, new) in enumerate(zip(before_c.reassigning, after_c.reassigning)):
        if old == RA_DONE or new != RA_DONE or not after.acked[p] or lapsed(after, p):
            continue
        committed, isr = after.committed[p], after_c.partitions[p].isr
        keepers = [b for b in after_c.assigned[p] if isr >> b & 1]
        for b in keepers:
            log = after.brokers[b].logs[p]
            if all(o < len(log) and log[o] == committed[o] for o in bits(after.acked[p])):
                break
        else:
            return (f"partition {p}'s reassignment completed, but none of its in-sync replicas {keepers} holds every "
                    f"acknowledged record (offsets {bits(after.acked[p])})")
    return None
