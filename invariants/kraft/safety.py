"""KRaft mode's safety properties: no re-creation of a log over a failed dir's copy, and every elected leader
passes LeaderAcceptor."""
from __future__ import annotations

from model.kraft.controller import leader_acceptor
from model.kraft.metadata import K_PARTITION, K_PARTITION_CHANGE, Image, replay
from model.spec.invariant import invariant
from model.storage.state import NO_LEADER, OFFLINE, bits


@invariant(
    "kraft_no_recreate_over_failed_dir", kind="transition", symmetric=True,
    reads=("broker[*].copies", "broker[*].dirs"),
    statement="A broker never creates a main log of a partition while it holds a copy of that partition on one of "
              "its configured log dirs that has failed.",
    reference="KIP-858 (a replica on a failed dir must not be re-created elsewhere); ReplicaManager.applyDelta, "
              "Partition.createLogInAssignedDirectoryId, LogManager.getOrCreateLog",
)
def kraft_no_recreate_over_failed_dir(model, state, action, after):
    for b, (before_b, after_b) in enumerate(zip(state.brokers, after.brokers)):
        if before_b is after_b or before_b.copies == after_b.copies:
            continue
        for p, (old, new) in enumerate(zip(before_b.copies, after_b.copies)):
            created = new & ~old
            if not created:
                continue
            failed = [d for d in bits(old) if before_b.dirs[d] == OFFLINE]
            if failed:
                return (f"broker {b} created partition {p}'s log on dir {bits(created)[0]} while its copy on failed "
                        f"dir {failed[0]} exists")
    return None


@invariant(
    "kraft_leader_passes_leader_acceptor", kind="transition", symmetric=True,
    reads=("controller",),
    statement="Every leader a metadata record names, as of that record's place in the log, is registered, active "
              "(or unfenced by the same event before it) and has its replica's Directories entry online for its "
              "registration (LeaderAcceptor).",
    reference="ReplicationControlManager.LeaderAcceptor, PartitionChangeBuilder.electLeader; KAFKA-19522",
)
def kraft_leader_passes_leader_acceptor(model, state, action, after):
    old, new = state.controller.log, after.controller.log
    if len(new) == len(old):
        return None
    image = Image(state.controller.registrations, state.controller.partitions)
    for offset in range(len(old), len(new)):
        for record in new[offset]:
            image = replay(image, offset, record)
            leader = getattr(record, "leader", None)
            if record.kind not in (K_PARTITION, K_PARTITION_CHANGE) or leader is None or leader == NO_LEADER:
                continue
            if not leader_acceptor(model, image, record.partition, leader):
                return (f"a record of metadata batch {offset} makes broker {leader} leader of partition "
                        f"{record.partition}, which LeaderAcceptor refuses: registration "
                        f"{image.registrations[leader]}, Directories {image.partitions[record.partition].dirs}")
    return None
