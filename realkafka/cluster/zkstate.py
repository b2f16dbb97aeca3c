"""What the harness observes of a ZooKeeper-mode cluster's controller state: the znodes Kafka's controller reads and
writes (KafkaZkClient, ZkData.scala), read with kazoo, as immutable values (docs/realkafka.md, "ZooKeeper mode").

- ``/controller``: the elected controller's broker id; ``/controller_epoch``: its epoch;
- ``/brokers/ids/<id>``: a live broker's registration (ephemeral; its creation zxid is the broker epoch, as
  KafkaZkClient.getAllBrokerAndEpochsInCluster reads it);
- ``/brokers/topics/<t>``: the assignment; ``/brokers/topics/<t>/partitions/<p>/state``: leader, ISR, leader epoch
  and the epoch of the controller that wrote it (LeaderIsrAndControllerEpoch);
- ``/log_dir_event_notification/log_dir_event_<n>``: a broker's log dir failure not yet handled by the controller
  (LogDirEventNotificationHandler deletes each once handled);
- ``/admin/reassign_partitions``, ``/admin/delete_topics/<t>``: pending reassignments and deletions.
"""
from __future__ import annotations

import json

import attrs

from .observation import brokers_summary


@attrs.frozen
class ZkRegistration:
    broker: int
    epoch: int                     # the ephemeral znode's czxid: Kafka's broker epoch in ZooKeeper mode
    fenced: bool = False           # ZooKeeper mode fences nobody: a registered broker is live (KRaft's field, False)
    in_controlled_shutdown: bool = False
    dirs: tuple = ()               # a ZooKeeper-mode registration names no dirs


@attrs.frozen
class ZkPartitionState:
    topic: str
    partition: int
    replicas: tuple                # the assignment (/brokers/topics/<t>)
    isr: tuple
    leader: int                    # -1: no leader
    leader_epoch: int
    controller_epoch: int          # the epoch of the controller that wrote the state


@attrs.frozen
class ZkControllerState:
    up: bool                       # the ZooKeeper server's process is alive
    held: bool                     # (never: the harness holds no ZooKeeper-mode controller)
    controller: int                # the broker elected controller (/controller), -1: none
    controller_epoch: int          # /controller_epoch, 0: none yet
    registrations: dict            # broker -> ZkRegistration (/brokers/ids)
    partitions: dict               # (topic, partition) -> ZkPartitionState
    log_dir_events: tuple          # brokers of the pending /log_dir_event_notification znodes, in their order
    reassigning: tuple             # (topic, partition) named by /admin/reassign_partitions
    deleting: tuple                # topics named by /admin/delete_topics


@attrs.frozen
class ZkObservation:
    brokers: dict                  # id -> BrokerObservation
    controller: ZkControllerState
    topics: dict                   # describeTopics: (topic, partition) -> {"leader", "isr", "replicas", ...}
    records: tuple = ()            # ZooKeeper mode has no metadata log

    def summary(self) -> str:
        parts = brokers_summary(self.brokers)
        c = self.controller
        parts.append(f"zookeeper {'up' if c.up else 'down'}, controller {c.controller} epoch {c.controller_epoch}, "
                     f"registered {sorted(c.registrations)}")
        if c.log_dir_events:
            parts.append(f"log dir events from {list(c.log_dir_events)}")
        for (t, p) in sorted(c.partitions):
            x = c.partitions[(t, p)]
            parts.append(f"{t}-{p} leader {x.leader} epoch {x.leader_epoch} isr {list(x.isr)}")
        return "; ".join(parts)


def _json(data: bytes | None) -> dict:
    if not data:
        return {}
    try:
        value = json.loads(data.decode())
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _children(zk, path: str) -> list[str]:
    from kazoo.exceptions import NoNodeError

    try:
        return sorted(zk.get_children(path))
    except NoNodeError:
        return []


def _get(zk, path: str):
    """(data, stat), or (None, None) where the znode does not exist."""
    from kazoo.exceptions import NoNodeError

    try:
        return zk.get(path)
    except NoNodeError:
        return None, None


def read_controller_state(zk, *, up: bool) -> ZkControllerState:
    """The controller state as the znodes hold it now (each znode read once; a znode that goes away between the
    listing and the read is left out, as if listed after)."""
    controller = _json(_get(zk, "/controller")[0]).get("brokerid", -1)
    epoch_data = _get(zk, "/controller_epoch")[0]
    controller_epoch = int(epoch_data.decode()) if epoch_data and epoch_data.strip().isdigit() else 0
    registrations = {}
    for name in _children(zk, "/brokers/ids"):
        data, stat = _get(zk, f"/brokers/ids/{name}")
        if stat is not None and name.isdigit():
            registrations[int(name)] = ZkRegistration(broker=int(name), epoch=stat.czxid)
    partitions = {}
    for topic in _children(zk, "/brokers/topics"):
        assignment = _json(_get(zk, f"/brokers/topics/{topic}")[0]).get("partitions") or {}
        for p, replicas in assignment.items():
            state = _json(_get(zk, f"/brokers/topics/{topic}/partitions/{p}/state")[0])
            partitions[(topic, int(p))] = ZkPartitionState(
                topic=topic, partition=int(p), replicas=tuple(int(r) for r in replicas),
                isr=tuple(int(r) for r in state.get("isr") or ()), leader=int(state.get("leader", -1)),
                leader_epoch=int(state.get("leader_epoch", -1)),
                controller_epoch=int(state.get("controller_epoch", -1)))
    events = []
    for name in _children(zk, "/log_dir_event_notification"):
        broker = _json(_get(zk, f"/log_dir_event_notification/{name}")[0]).get("broker")
        if broker is not None:
            events.append(int(broker))
    reassigning = tuple(sorted((p["topic"], int(p["partition"])) for p in
                               _json(_get(zk, "/admin/reassign_partitions")[0]).get("partitions") or ()))
    return ZkControllerState(up=up, held=False, controller=int(controller), controller_epoch=controller_epoch,
                             registrations=registrations, partitions=partitions, log_dir_events=tuple(events),
                             reassigning=reassigning, deleting=tuple(_children(zk, "/admin/delete_topics")))
