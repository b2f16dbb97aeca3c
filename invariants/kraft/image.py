"""Structural properties of the KRaft controller's image, the explicit side of `jbodcheck prove --variant kraft`
(proofs/kraft_properties.py states them in z3; proofs/kraft_conformance.py checks both agree on every reachable
state of a configuration). No feature claims them yet: explore does not check them (docs/proofs.md, "KRaft")."""
from __future__ import annotations

from model.kraft.metadata import LOST
from model.spec.invariant import invariant
from model.storage.state import NO_LEADER, bits


def _existing(state):
    return [(p, part) for p, part in enumerate(state.controller.partitions) if part.leader_epoch >= 0]


@invariant(
    "kraft_isr_within_replicas", kind="state", symmetric=True, reads=("controller",),
    statement="Every ISR member is a replica of an existing partition, and an existing partition's ISR is not "
              "empty.",
    reference="PartitionChangeBuilder.build (no ELR: an ISR that would be empty keeps its last member)",
)
def kraft_isr_within_replicas(model, state):
    for p, part in enumerate(state.controller.partitions):
        outside = [b for b in bits(part.isr) if b not in part.replicas]
        if outside:
            return f"partition {p}'s ISR has broker(s) {outside} outside its replicas {list(part.replicas)}"
        if part.leader_epoch >= 0 and not part.isr:
            return f"partition {p} exists with an empty ISR"
    return None


@invariant(
    "kraft_leader_in_isr_or_none", kind="state", symmetric=True, reads=("controller",),
    statement="A partition's leader, when it has one, is a member of its ISR.",
    reference="PartitionChangeBuilder.build (electLeader picks from the target ISR)",
)
def kraft_leader_in_isr_or_none(model, state):
    for p, part in enumerate(state.controller.partitions):
        if part.leader != NO_LEADER and not (part.leader_epoch >= 0 and part.isr >> part.leader & 1):
            return f"broker {part.leader} leads partition {p} but is not in its ISR {bits(part.isr)}"
    return None


@invariant(
    "kraft_directories_never_lost", kind="state", symmetric=True, reads=("controller",),
    statement="No replica's Directories entry is LOST.",
    reference="ClusterControlManager.defaultDir; ReplicationControlManager.handleAssignReplicasToDirs",
)
def kraft_directories_never_lost(model, state):
    for p, part in _existing(state):
        if LOST in part.dirs:
            return f"partition {p}'s Directories {part.dirs} has LOST"
    return None


@invariant(
    "kraft_epochs_monotone", kind="transition", symmetric=True, reads=("controller",),
    statement="Leader and partition epochs never decrease, and every change of leader raises the leader epoch.",
    reference="PartitionRegistration.merge",
)
def kraft_epochs_monotone(model, state, action, after):
    for p, (old, new) in enumerate(zip(state.controller.partitions, after.controller.partitions)):
        if new.leader_epoch < old.leader_epoch or new.partition_epoch < old.partition_epoch:
            return (f"partition {p}'s epochs went from {old.leader_epoch}/{old.partition_epoch} to "
                    f"{new.leader_epoch}/{new.partition_epoch}")
        if new.leader != old.leader and new.leader_epoch <= old.leader_epoch:
            return (f"partition {p}'s leader changed from {old.leader} to {new.leader} at leader epoch "
                    f"{old.leader_epoch}")
    return None
