"""KRaft mode's liveness properties (the facts file's "Liveness" list, as far as the model can express them),
checked under weak fairness of the protocol's own steps by ``jbodcheck explore --liveness`` (explorer/liveness.py),
declared as ZooKeeper mode's (invariants/zk/progress.py): each is P ~> Q per instance, ``p`` and ``q`` return a
bitmask of instances (a partition p is bit p; a broker b is bit b; a replica (p, b) is bit p * brokers + b).

Every Q is "P no longer holds": the goal reached, or the premise ended by a step (often an unfair one: a crash,
a disk failure). Each property thus says that the protocol, by its own fair steps, does not leave P holding
for ever. Not expressed: "a failure is acknowledged, or the broker stops" with the 3.8+ shutdown on an
unacknowledged failure (the timeout is not modelled: the property here is "acknowledged, or the broker is down").
"""
from __future__ import annotations

from model.kraft.controller import exists, leader_acceptor
from model.kraft.disks import id_of
from model.kraft.metadata import Image
from model.spec.invariant import liveness
from model.storage.broker import live_copy_dir
from model.storage.state import H_FOLLOWER, H_LEADER, NO_LEADER, bits


def _image(state) -> Image:
    return Image(state.controller.registrations, state.controller.partitions)


def _replica_bit(model, p: int, b: int) -> int:
    return 1 << (p * model.cfg.brokers + b)


def _all(model, per: int) -> int:
    return (1 << per) - 1


def leaderless_with_acceptable_isr_member(model, state) -> int:
    """P of kraft_leader_eventually: partitions that exist, have no leader in the controller's image, and have an
    ISR member that LeaderAcceptor accepts on that image."""
    image, mask = _image(state), 0
    for p in range(model.cfg.partitions):
        part = image.partitions[p]
        if exists(image, p) and part.leader == NO_LEADER and any(
                leader_acceptor(model, image, p, b) for b in bits(part.isr)):
            mask |= 1 << p
    return mask


@liveness(
    "kraft_leader_eventually", kind="leads_to", p=leaderless_with_acceptable_isr_member,
    statement="A partition without a leader that has an ISR member LeaderAcceptor accepts (registered, unfenced, "
              "its Directories entry online) eventually has a leader (or no longer has such a member).",
    reference="KRaft JBOD facts, Liveness; PartitionChangeBuilder.electLeader (every partition change with no "
              "leader in the target ISR elects), ReplicationControlManager.handleBrokerUnfenced",
)
def kraft_leader_or_no_acceptable_member(model, state) -> int:
    return _all(model, model.cfg.partitions) & ~leaderless_with_acceptable_isr_member(model, state)


def assignments_pending(model, state) -> int:
    """P of kraft_assignments_drain: running brokers with an assignment queued or in flight."""
    return sum(1 << b for b, broker in enumerate(state.brokers) if broker.up and (broker.queue or broker.inflight))


@liveness(
    "kraft_assignments_drain", kind="leads_to", symmetric=True, p=assignments_pending,
    statement="A running broker's queued or in-flight AssignReplicasToDirs entries are eventually all answered (or "
              "the broker goes down: the queue is in memory).",
    reference="KRaft JBOD facts, Liveness (queued assignments drain); AssignmentsManager (one request in flight, "
              "retried), ReplicationControlManager.handleAssignReplicasToDirs",
)
def kraft_assignments_drained_or_down(model, state) -> int:
    return _all(model, model.cfg.brokers) & ~assignments_pending(model, state)


def replica_dir_unrecorded(model, state) -> int:
    """P of kraft_replica_dir_recorded: replicas (p, b) that a running broker serves (leads or follows) from a
    live dir d while the controller's Directories entry for b is not d."""
    mask = 0
    for p in range(model.cfg.partitions):
        part = state.controller.partitions[p]
        if part.leader_epoch < 0:
            continue
        for i, b in enumerate(part.replicas):
            broker = state.brokers[b]
            if not broker.up or broker.hosted[p] not in (H_LEADER, H_FOLLOWER):
                continue
            d = live_copy_dir(broker, p)
            if d >= 0 and part.dirs[i] != id_of(broker, d):
                mask |= _replica_bit(model, p, b)
    return mask


@liveness(
    "kraft_replica_dir_recorded", kind="leads_to", p=replica_dir_unrecorded,
    statement="A replica a running broker serves from a live dir eventually has that dir as its Directories entry "
              "in the metadata (or is no longer served from it).",
    reference="KRaft JBOD facts, Liveness (every replica's dir is eventually recorded); ReplicaManager.applyDelta, "
              "AssignmentsManager.onAssignment, ReplicationControlManager.handleAssignReplicasToDirs",
)
def kraft_replica_dir_recorded_or_gone(model, state) -> int:
    return _all(model, model.cfg.partitions * model.cfg.brokers) & ~replica_dir_unrecorded(model, state)


def led_from_failed_dir(model, state) -> int:
    """P of kraft_leadership_leaves_failed_dir: partitions whose leader in the controller's image runs with no
    copy of the partition on a live dir (its dir failed) while another ISR member is acceptable (LeaderAcceptor
    with the leader removed)."""
    image, mask = _image(state), 0
    for p in range(model.cfg.partitions):
        part = image.partitions[p]
        leader = part.leader
        if not exists(image, p) or leader == NO_LEADER:
            continue
        broker = state.brokers[leader]
        if broker.up and broker.copies[p] and live_copy_dir(broker, p) < 0 and any(
                leader_acceptor(model, image, p, b, remove=leader) for b in bits(part.isr & ~(1 << leader))):
            mask |= 1 << p
    return mask


@liveness(
    "kraft_leadership_leaves_failed_dir", kind="leads_to", p=led_from_failed_dir,
    statement="A partition led by a running broker whose copy is on a failed dir, while another ISR member is "
              "acceptable, eventually has its leadership moved (or its premise ends).",
    reference="KRaft JBOD facts, Liveness (a failed dir's partitions move to a live ISR member); "
              "ReplicationControlManager.handleDirectoriesOffline, handleAssignReplicasToDirs",
)
def kraft_leadership_moved_or_premise_gone(model, state) -> int:
    return _all(model, model.cfg.partitions) & ~led_from_failed_dir(model, state)
