"""What Eligible Leader Replicas (KIP-966) promise, claimed by the feature ``kraft-elr`` (model/kraft/elr.py;
docs/kraft.md, "Eligible Leader Replicas"): an ELR member elected holds every committed record, an unclean
election happens only as the documented last-known-leader one, and the partition records keep the shape
PartitionChangeBuilder gives them."""
from __future__ import annotations

from model.kraft.controller import leader_acceptor, min_isr
from model.kraft.metadata import K_PARTITION_CHANGE, Image, replay
from model.spec.invariant import invariant
from model.storage.broker import live_copy_dir
from model.storage.state import NO_LEADER, bits


def _elections(state, after):
    """(partition state before the record, the record) for every PartitionChangeRecord the step wrote that names a
    new leader, in log order."""
    old, new = state.controller.log, after.controller.log
    image = Image(state.controller.registrations, state.controller.partitions)
    for offset in range(len(old), len(new)):
        for record in new[offset]:
            before = image.partitions[getattr(record, "partition", 0)]
            image = replay(image, offset, record)
            if record.kind == K_PARTITION_CHANGE and record.leader is not None and record.leader != NO_LEADER:
                yield offset, before, record


@invariant(
    "kraft_elr_leader_holds_committed", kind="transition", symmetric=True,
    reads=("controller", "committed", "broker[*].copies", "broker[*].dirs", "broker[*].logs"),
    statement="A broker elected from the ELR (outside the ISR and in the ELR before the record, elected cleanly: the "
              "target ISR is empty) holds every committed record of the partition, on a live dir, when the record "
              "electing it is written.",
    reference="KIP-966 (ELR members are safe leaders: the high watermark does not advance while the ISR is below "
              "min ISR); PartitionChangeBuilder.isValidNewLeader, tryElection; Partition.maybeIncrementLeaderHW",
)
def kraft_elr_leader_holds_committed(model, state, action, after):
    if len(after.controller.log) == len(state.controller.log):
        return None
    for offset, before, record in _elections(state, after):
        leader, p = record.leader, record.partition
        if record.recovering or before.isr >> leader & 1 or not before.elr >> leader & 1:
            continue  # not an election from the ELR (a broker outside the ISR, in the ELR, elected cleanly)
        committed = state.committed[p]
        broker = state.brokers[leader]
        d = live_copy_dir(broker, p)
        if committed and (d < 0 or broker.logs[p][:len(committed)] != committed):
            where = f"its log on dir {d} is {list(broker.logs[p])}" if d >= 0 else "it has no copy on a live dir"
            return (f"a record of metadata batch {offset} elects broker {leader} from the ELR {bits(before.elr)} of "
                    f"partition {p}, but {where}, not the committed {list(committed)}")
    return None


@invariant(
    "kraft_unclean_election_only_as_last_known_leader", kind="transition", symmetric=True, reads=("controller",),
    statement="A record that elects uncleanly (LeaderRecoveryState RECOVERING; unclean.leader.election.enable is "
              "off) elects the partition's last known leader, leaves it the ISR alone and the ELR empty, and is "
              "written only when no ISR or ELR member passes LeaderAcceptor: the third step of KIP-966's election "
              "order (ISR, then ELR, then the last known leader), no other.",
    reference="PartitionChangeBuilder.electAnyLeader, canElectLastKnownLeader, tryElection, maybeUpdateRecordElr; "
              "Kafka's ops docs, 'Eligible Leader Replicas'",
)
def kraft_unclean_election_only_as_last_known_leader(model, state, action, after):
    if len(after.controller.log) == len(state.controller.log):
        return None
    old, new = state.controller.log, after.controller.log
    image = Image(state.controller.registrations, state.controller.partitions)
    for offset in range(len(old), len(new)):
        for record in new[offset]:
            before_image = image
            image = replay(image, offset, record)
            if record.kind != K_PARTITION_CHANGE or not record.recovering:
                continue
            p, leader = record.partition, record.leader
            before, now = before_image.partitions[p], image.partitions[p]
            clean = [b for b in bits(before.isr | before.elr) if leader_acceptor(model, before_image, p, b)]
            if before.last_known_elr != (leader,) or now.isr != 1 << leader or now.elr or clean:
                return (f"a record of metadata batch {offset} elects broker {leader} uncleanly for partition {p}: "
                        f"last known leader {list(before.last_known_elr)}, ISR {bits(before.isr)} and ELR "
                        f"{bits(before.elr)} before it (acceptable: {clean}), ISR {bits(now.isr)} and ELR "
                        f"{bits(now.elr)} after it")
    return None


@invariant(
    "kraft_elr_well_formed", kind="state", symmetric=True, reads=("controller",),
    statement="Every existing partition's ELR is disjoint from its ISR, within its replicas, and empty while the "
              "ISR has at least min ISR members; its LastKnownElr names at most one broker; a leader is in the ISR.",
    reference="PartitionChangeBuilder.maybePopulateTargetElr, maybeUpdateRecordElr, maybeUpdateLastKnownLeader "
              "(useLastKnownLeaderInBalancedRecovery), tryElection",
)
def kraft_elr_well_formed(model, state):
    image = Image(state.controller.registrations, state.controller.partitions)
    for p, part in enumerate(image.partitions):
        if part.leader_epoch < 0:
            continue
        if part.elr & part.isr:
            return f"partition {p}'s ELR {bits(part.elr)} and ISR {bits(part.isr)} share broker(s)"
        outside = [b for b in bits(part.elr) if b not in part.replicas]
        if outside:
            return f"partition {p}'s ELR has broker(s) {outside} outside its replicas {list(part.replicas)}"
        if part.elr and bin(part.isr).count("1") >= min_isr(model, image, p):
            return f"partition {p}'s ELR {bits(part.elr)} is not empty with ISR {bits(part.isr)} at min ISR"
        if len(part.last_known_elr) > 1:
            return f"partition {p}'s LastKnownElr {list(part.last_known_elr)} has more than one broker"
        if part.leader != NO_LEADER and not part.isr >> part.leader & 1:
            return f"broker {part.leader} leads partition {p} outside its ISR {bits(part.isr)}"
    return None
