"""KRaft mode's safety properties: no re-creation of a log over a failed dir's copy, and every elected leader
passes LeaderAcceptor."""
from __future__ import annotations

from model.kraft.controller import leader_acceptor
from model.kraft.metadata import K_PARTITION, K_PARTITION_CHANGE, Image, replay
from model.spec.invariant import invariant
from model.storage.state import NO_LEADER, OFFLINE, bits


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
