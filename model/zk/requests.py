"""How a broker handles the ZooKeeper-mode controller's requests, each a function of the broker alone:
LeaderAndIsr (ReplicaManager.becomeLeaderOrFollower, with LogManager's create-or-refuse decision from
model/storage/broker.py), UpdateMetadata (the metadata cache) and StopReplica, with or without delete; and the
guards on a broker's oldest request and on a response waiting for the controller."""
from __future__ import annotations

from model.storage import broker as B
from model.storage.state import (
    E_NONE, E_STALE, E_STORAGE, H_FOLLOWER, H_LEADER, H_NONE, H_OFFLINE, H_SATURATED, H_STOPPED,
    LEADER_DURING_DELETE, MESSAGE_NAMES, SATURATED, SERVING, Broker, PartitionMeta, replace_at,
)


def handle_leader_and_isr(may_create_log, broker_id: int, broker: Broker, entries) -> tuple[Broker, tuple]:
    """ReplicaManager.becomeLeaderOrFollower for one request; returns the broker and its response.
    ``may_create_log(broker, is_new)`` is the design's choice of whether a missing log may be created
    (model/zk/designs.py). A new leader caches the request's ISR and keeps its HW if it already led (else starts
    at 0, to be advanced); a follower keeps neither."""
    hosted, epoch = list(broker.hosted), list(broker.epoch)
    hw, isr = list(broker.hw), list(broker.isr)
    current = broker  # its copies, logs and segs as LogManager leaves them
    response = []
    for e in entries:
        p = e.partition
        if hosted[p] in (H_OFFLINE, H_SATURATED):
            response.append((p, E_STORAGE))
            continue
        if hosted[p] != H_NONE and e.leader_epoch <= epoch[p]:
            response.append((p, E_STALE))  # the leader epoch is not newer: the request is ignored for it
            continue
        found = B.live_copy_dir(current, p)
        if found >= 0 and broker.dirs[found] == SATURATED:
            hosted[p] = H_SATURATED  # KIP-928: a replica on a saturated dir is not served
            hw[p] = isr[p] = 0
            response.append((p, E_STORAGE))
            continue
        if found < 0:
            current, found = B.get_or_create_log(current, p, may_create_log(current, e.is_new))
            if found < 0:
                hosted[p] = H_OFFLINE  # KafkaStorageException: the partition is marked offline
                hw[p] = isr[p] = 0
                response.append((p, E_STORAGE))
                continue
        if e.leader == broker_id:
            hw[p] = hw[p] if hosted[p] == H_LEADER else 0
            isr[p] = e.isr
            hosted[p] = H_LEADER
        else:
            hosted[p] = H_FOLLOWER
            hw[p] = isr[p] = 0
        epoch[p] = e.leader_epoch
        response.append((p, E_NONE))
    new = current._replace(hosted=tuple(hosted), epoch=tuple(epoch), hw=tuple(hw), isr=tuple(isr))
    return new, tuple(response)


def handle_update_metadata(broker: Broker, entries) -> Broker:
    """The metadata cache takes the request's values for the partitions it names; the request is consumed."""
    meta = list(broker.meta)
    for e in entries:
        # A partition being deleted comes with leader LeaderDuringDelete: the cache drops it.
        meta[e.partition] = None if e.leader == LEADER_DURING_DELETE else PartitionMeta(e.leader, e.isr, e.offline)
    return broker._replace(meta=tuple(meta), inbox=broker.inbox[1:])


def handle_stop_replica(broker: Broker, partitions) -> Broker:
    """StopReplica(delete=false): the replica stops leading or fetching; an offline partition stays offline."""
    hosted, hw, isr = broker.hosted, broker.hw, broker.isr
    for p in partitions:
        if SERVING[hosted[p]]:
            hosted = replace_at(hosted, p, H_STOPPED)
            hw, isr = replace_at(hw, p, 0), replace_at(isr, p, 0)
    return broker._replace(hosted=hosted, hw=hw, isr=isr)


def handle_stop_replica_delete(broker: Broker, partitions) -> tuple[Broker, tuple]:
    """ReplicaManager.stopReplicas with delete=true: a partition marked offline answers KAFKA_STORAGE_ERROR
    (its log is out of reach); any other (led, followed, stopped, saturated or not hosted) stops and its log
    is deleted from the live dirs (model/storage/broker.py delete_log), answering NONE. Returns the broker and
    its response."""
    response = []
    for p in partitions:
        if broker.hosted[p] == H_OFFLINE:
            response.append((p, E_STORAGE))
            continue
        broker = B.delete_log(broker, p)
        response.append((p, E_NONE))
    return broker._replace(inbox=broker.inbox[1:]), tuple(response)


def oldest_request_is(kind: int, name: str | None = None):
    """The guard of a broker handling its oldest request, which must be of this kind."""
    name = name or MESSAGE_NAMES[kind]

    def guard(m, s, broker):
        inbox = s.brokers[broker].inbox
        if not inbox:
            return f"broker {broker} has no request waiting"
        if inbox[0].kind != kind:
            return f"broker {broker}'s oldest request is not {name}"
        return None
    return guard


def waiting_response(channel: str, name: str):
    """The guard of the controller handling a broker's oldest response in this channel (a Broker field)."""
    def guard(m, s, broker):
        if not getattr(s.brokers[broker], channel):
            return f"no {name} response from broker {broker} is waiting"
        return None
    return guard
