"""KRaft mode's safety properties: no re-creation of a log over a failed dir's copy, every elected leader passes
LeaderAcceptor, and (with the metadata.version upgrade) leadership at quiescence is what LeaderAcceptor allows."""
from __future__ import annotations

from model.kraft.bugs import bugs
from model.kraft.metadata import K_PARTITION, K_PARTITION_CHANGE, LOST, MIGRATING, UNASSIGNED, Image, replay
from model.spec.invariant import invariant
from model.storage.state import NO_LEADER, bits


def acceptable_leader(model, image: Image, p: int, b: int, switches: tuple | None = None) -> bool:
    """LeaderAcceptor as docs/kraft.md states it, written here apart from the model's ``leader_acceptor``
    (model/kraft/controller.py), which the elections run: a bug there is then seen by this invariant, not shared
    by it. b is registered, active (not fenced, not in controlled shutdown: a broker the same event unfenced is
    active in the image at the record that elects it), a replica, and its Directories entry is online for its
    registration (DirectoryId.isOnline): UNASSIGNED and MIGRATING are, LOST is not, a dir is if registered, or if
    the broker registered none (KAFKA-16162's fix; not with that bug switch on, as the elections then have it).
    ``switches``: the bug switches (the model's by default; () for Kafka's fixed code)."""
    reg = image.registrations[b]
    if reg is None or reg.fenced or reg.in_controlled_shutdown:
        return False
    part = image.partitions[p]
    if b not in part.replicas:
        return False
    entry = part.dirs[part.replicas.index(b)]
    if entry in (UNASSIGNED, MIGRATING):
        return True
    if entry == LOST:
        return False
    if not reg.dirs:
        return "KAFKA-16162" not in (bugs(model) if switches is None else switches)
    return entry in reg.dirs


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
            if not acceptable_leader(model, image, record.partition, leader):
                return (f"a record of metadata batch {offset} makes broker {leader} leader of partition "
                        f"{record.partition}, which LeaderAcceptor refuses: registration "
                        f"{image.registrations[leader]}, Directories {image.partitions[record.partition].dirs}")
    return None


@invariant(
    "kraft_leadership_as_leader_acceptor_allows", kind="state", symmetric=True,
    reads=("controller", "broker[*].queue", "broker[*].inflight"),
    statement="With no assignment queued or in flight, every partition's leader passes LeaderAcceptor, and a "
              "partition without a leader has no ISR member that passes it (LeaderAcceptor as Kafka's fixed code "
              "has it, whatever bug switches the model re-introduces).",
    reference="ReplicationControlManager.LeaderAcceptor; DirectoryId.isOnline (KAFKA-16162); "
              "ClusterControlManager.registerBroker (KAFKA-16757); the facts' liveness property 'a partition with "
              "an acceptable ISR member gets a leader', checked at quiescence",
)
def kraft_leadership_as_leader_acceptor_allows(model, state):
    # Its own premise, not the model's quiescence: kraft-core's quiescence also waits for every broker's
    # unfencing heartbeat, which ends KAFKA-16757's fenced leadership (docs/kraft.md, "Bug switches").
    if any(b.queue or b.inflight for b in state.brokers):
        return None
    image = Image(state.controller.registrations, state.controller.partitions)
    for p, part in enumerate(image.partitions):
        if part.leader_epoch < 0:
            continue
        if part.leader != NO_LEADER:
            if not acceptable_leader(model, image, p, part.leader, switches=()):
                return (f"broker {part.leader} leads partition {p} but LeaderAcceptor refuses it: registration "
                        f"{image.registrations[part.leader]}, Directories {part.dirs}")
            continue
        acceptable = [b for b in bits(part.isr) if acceptable_leader(model, image, p, b, switches=())]
        if acceptable:
            return (f"partition {p} has no leader although its ISR member(s) {acceptable} pass LeaderAcceptor: "
                    f"registrations {[image.registrations[b] for b in acceptable]}, Directories {part.dirs}")
    return None
