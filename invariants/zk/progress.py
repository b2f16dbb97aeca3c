"""Built-in liveness properties (docs/model.md, section 9.1), checked under weak fairness of the protocol's own steps
by ``jbodcheck explore --liveness`` (explorer/liveness.py). Each is P ~> Q per instance: ``p`` and ``q`` return a
bitmask of instances (a partition p is bit p; a replica (p, b) is bit p * brokers + b).

Every Q includes "P no longer holds" where P can be ended by an unfair step (a crash, a disk failure): the property
then says that the protocol, by its own fair steps, does not leave P holding forever without reaching the goal.
"""
from __future__ import annotations

from model.storage.state import D_DONE, D_NONE, H_LEADER, NO_LEADER, P_NONEXISTENT, RA_IN_PROGRESS, RA_DONE

from model.spec.invariant import liveness
from invariants.storage.safety import on_good_dir, truly_offline_replicas


def _partitions(model) -> range:
    return range(model.cfg.partitions)


def live_isr_on_good_dir(model, state) -> int:
    """P of leader_eventually: partitions created, not being deleted, with an ISR member (of the controller's
    record) in the current assignment whose broker is up and holds the partition on a good dir."""
    c, mask = state.controller, 0
    for p in _partitions(model):
        part = c.partitions[p]
        if part.state == P_NONEXISTENT or c.deletion[p] != D_NONE:
            continue
        for b in c.assigned[p]:
            broker = state.brokers[b]
            if part.isr >> b & 1 and broker.up and on_good_dir(broker, p):
                mask |= 1 << p
                break
    return mask


def serving_leader(model, state, p: int) -> bool:
    """The controller's leader of p is up and leads p at the controller's leader epoch."""
    part = state.controller.partitions[p]
    leader = part.leader
    if leader == NO_LEADER or leader < 0:
        return False
    broker = state.brokers[leader]
    return broker.up and broker.hosted[p] == H_LEADER and broker.epoch[p] == part.leader_epoch


@liveness(
    "leader_eventually", kind="leads_to", symmetric=True, p=live_isr_on_good_dir,
    statement="A partition with an in-sync replica on a good dir of a running broker eventually has a leader that "
              "serves it at the controller's leader epoch (or loses every such replica, or its topic is deleted).",
    reference="KIP-112 scenario 2 (the controller elects a leader from the online replicas); "
              "PartitionStateMachine.electLeaderForPartitions",
)
def leader_or_no_candidate(model, state) -> int:
    p_mask = live_isr_on_good_dir(model, state)
    return sum(1 << p for p in _partitions(model) if not p_mask >> p & 1 or serving_leader(model, state, p))


def _instances(model, p: int, b: int) -> int:
    return 1 << (p * model.cfg.brokers + b)


def offline_replicas(model, state) -> int:
    """P of offline_replica_reported: replicas (p, b) of the current assignment of a partition with a leader record
    (``leader_epoch >= 0``, as metadata_shows_offline_replicas) whose topic is not being deleted, on a dead broker
    or without a copy on a good dir."""
    c, mask = state.controller, 0
    for p in _partitions(model):
        if c.partitions[p].leader_epoch < 0 or c.deletion[p] != D_NONE:
            continue
        offline = truly_offline_replicas(model, state, p)
        for b in range(model.cfg.brokers):
            if offline >> b & 1:
                mask |= _instances(model, p, b)
    return mask


@liveness(
    "offline_replica_reported", kind="leads_to", symmetric=True, p=offline_replicas,
    statement="A replica on an offline (or saturated) dir or on a dead broker is eventually listed in "
              "offline_replicas by the metadata of every running broker (or comes back, or its topic is deleted).",
    reference="KIP-112 scenario 5: offline_replicas in UpdateMetadataRequest and MetadataResponse",
)
def offline_replica_reported_or_back(model, state) -> int:
    p_mask, mask = offline_replicas(model, state), 0
    for p in _partitions(model):
        for b in range(model.cfg.brokers):
            bit = _instances(model, p, b)
            if not p_mask & bit or all(
                    br.meta[p] is not None and br.meta[p].offline >> b & 1 for br in state.brokers if br.up):
                mask |= bit
    return mask


def _brokers_up(state, brokers) -> bool:
    return all(state.brokers[b].up for b in brokers)


def deletion_pending(model, state) -> int:
    """P of deletion_completes: partitions whose topic's deletion was requested and is not complete, while every
    broker of the partition's assignment is up."""
    c = state.controller
    return sum(1 << p for p in _partitions(model)
               if c.deletion[p] not in (D_NONE, D_DONE) and _brokers_up(state, c.assigned[p]))


@liveness(
    "deletion_completes", kind="leads_to", symmetric=True, p=deletion_pending,
    statement="A requested topic deletion eventually completes while the brokers of its replicas stay up "
              "(the goal: the deletion is complete, or one of those brokers is down).",
    reference="KIP-112 scenario 8 (topic deletion); TopicDeletionManager.resumeDeletions",
)
def deletion_done_or_broker_down(model, state) -> int:
    c = state.controller
    return sum(1 << p for p in _partitions(model)
               if c.deletion[p] == D_DONE or not _brokers_up(state, c.assigned[p]))


def _reassignment_brokers(model, state, p: int) -> tuple:
    return tuple(dict.fromkeys(state.controller.assigned[p] + (model.targets[p] or ())))


def reassignment_pending(model, state) -> int:
    """P of reassignment_completes: partitions whose reassignment is in progress, while every broker of the old and
    the new assignment is up."""
    c = state.controller
    return sum(1 << p for p in _partitions(model)
               if c.reassigning[p] == RA_IN_PROGRESS and _brokers_up(state, _reassignment_brokers(model, state, p)))


@liveness(
    "reassignment_completes", kind="leads_to", symmetric=True, p=reassignment_pending,
    statement="A started partition reassignment eventually completes while the brokers of the old and new "
              "assignment stay up (the goal: the reassignment is complete, or one of them is down, or the topic is "
              "being deleted).",
    reference="KIP-112 scenario 7 (partition reassignment); KafkaController.onPartitionReassignment",
)
def reassignment_done_or_broker_down(model, state) -> int:
    c = state.controller
    return sum(1 << p for p in _partitions(model)
               if c.reassigning[p] == RA_DONE or c.deletion[p] != D_NONE
               or not _brokers_up(state, _reassignment_brokers(model, state, p)))
