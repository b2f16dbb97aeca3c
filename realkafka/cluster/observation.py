"""What the harness observes of a real cluster, as immutable values (docs/realkafka.md, "Observation").

Dirs are named by (broker, dir index), never by path or id: ``DirNames`` maps every ``directory.id`` (from the
dirs' meta.properties) onto its dir, and Kafka's reserved ids onto "UNASSIGNED", "MIGRATING" and "LOST"
(org.apache.kafka.common.DirectoryId). The controller's image is rebuilt from its metadata log, record by record,
as Kafka's own image code merges them (PartitionRegistration.merge, ClusterControlManager's replay).
"""
from __future__ import annotations

import base64
from typing import Any, NamedTuple, Union

import attrs

# DirectoryId: MIGRATING = Uuid(0, 0), UNASSIGNED = Uuid(0, 1), LOST = Uuid(0, 2) (3.7.0 to 4.4.0).
RESERVED = {base64.urlsafe_b64encode((0).to_bytes(8, "big") + n.to_bytes(8, "big")).decode().rstrip("="): name
            for n, name in ((0, "MIGRATING"), (1, "UNASSIGNED"), (2, "LOST"))}
NO_LEADER_CHANGE = -2
DirRef = Union[int, str]      # a dir index on the partition's replica, or UNASSIGNED / MIGRATING / LOST / an unknown id


class DirNames:
    """directory.id -> (broker, dir index)."""

    def __init__(self, ids: dict[str, tuple[int, int]]):
        self.ids = dict(ids)

    def of(self, uuid: str) -> tuple[int, int] | str:
        if uuid in RESERVED:
            return RESERVED[uuid]
        return self.ids.get(uuid, uuid)

    def index(self, uuid: str, broker: int | None = None) -> DirRef | tuple[int, int]:
        """The dir's index; (broker, index) when it is a dir of a broker other than ``broker`` (a Directories
        entry that names another broker's dir); the reserved name; or the id itself when no dir has it."""
        named = self.of(uuid)
        if isinstance(named, tuple):
            return named[1] if broker is None or named[0] == broker else named
        return named


class MetadataRecord(NamedTuple):
    """One record of the controller's metadata log, as Kafka's MetadataRecordSerde decodes it: its offset, its
    type (RegisterBrokerRecord, PartitionChangeRecord, ...) and its fields as Kafka's JSON converter writes them
    (camelCase: partitionId, topicId, isr, leader, directories, eligibleLeaderReplicas, lastKnownElr, ...)."""

    offset: int
    type: str
    data: dict


@attrs.frozen
class Dir:
    index: int
    path: str
    id: str                        # directory.id
    exists: bool                   # a directory at its path (False: failed by the harness, a file in its place)
    online: bool | None            # describeLogDirs: no error; None when the broker could not be asked
    configured: bool = True        # in the broker's log.dirs (False: removed from its config, remove_dir)


@attrs.frozen
class Replica:
    dir: int | None                # the dir holding the replica's log (None: no log on any dir)
    future_dir: int | None         # the dir holding its "-future" log (an AlterReplicaLogDirs move), if any
    log_end_offset: int | None     # from the log's segments on disk (None: no log, or its dir failed)
    records: tuple                 # ((offset, value bytes), ...) of the log on disk


@attrs.frozen
class BrokerObservation:
    id: int
    up: bool                       # its process is alive
    dirs: tuple                    # Dir per index
    replicas: dict                 # (topic, partition) -> Replica, from the dirs on disk (and describeLogDirs)
    described: bool                # describeLogDirs answered for this broker (dir online-ness known)


@attrs.frozen
class Registration:
    broker: int
    epoch: int
    fenced: bool
    in_controlled_shutdown: bool
    dirs: tuple                    # its LogDirs as dir indexes (order of the record)
    incarnation: str


@attrs.frozen
class PartitionImage:
    topic: str
    partition: int
    topic_id: str
    replicas: tuple
    isr: tuple
    leader: int                    # -1: no leader
    leader_epoch: int
    partition_epoch: int
    directories: tuple             # per replica: dir index, or "UNASSIGNED" / "MIGRATING" / "LOST" (or (broker, index)
                                   # when it names another broker's dir, or an id no dir has)
    elr: tuple
    last_known_elr: tuple
    adding: tuple
    removing: tuple
    leader_recovery_state: int


@attrs.frozen
class ControllerImage:
    up: bool                       # its process is alive
    held: bool                     # stopped by hold_controller()
    registrations: dict            # broker -> Registration (unregistered brokers absent)
    partitions: dict               # (topic, partition) -> PartitionImage
    features: dict                 # FeatureLevelRecord: name -> level
    last_offset: int               # the last record's offset (-1: none)


@attrs.frozen
class ClusterObservation:
    brokers: dict                  # id -> BrokerObservation
    controller: ControllerImage
    records: tuple                 # MetadataRecord..., NoOpRecords left out
    topics: dict                   # describeTopics: (topic, partition) -> {"leader", "isr", "replicas", "elr", "lastKnownElr"}

    def records_after(self, offset: int) -> tuple:
        return tuple(r for r in self.records if r.offset > offset)

    def summary(self) -> str:
        """One line: each broker's process and dirs, each registration and partition in the controller."""
        parts = brokers_summary(self.brokers)
        c = self.controller
        parts.append("controller " + ("held" if c.held else "up" if c.up else "down"))
        for b in sorted(c.registrations):
            r = c.registrations[b]
            flags = "fenced" if r.fenced else "unfenced"
            if r.in_controlled_shutdown:
                flags += ",shutting-down"
            parts.append(f"reg {b} epoch {r.epoch} {flags} dirs {list(r.dirs)}")
        for (t, p) in sorted(c.partitions):
            x = c.partitions[(t, p)]
            parts.append(f"{t}-{p} leader {x.leader} epoch {x.leader_epoch} isr {list(x.isr)} "
                         f"dirs {list(x.directories)}" + (f" elr {list(x.elr)}" if x.elr else ""))
        return "; ".join(parts)


def brokers_summary(brokers: dict) -> list[str]:
    """Each broker's process and dirs (+ online, x offline, ? not known), a part of a summary line."""
    parts = []
    for b in sorted(brokers):
        o = brokers[b]
        dirs = "".join("?" if d.online is None else ("+" if d.online else "x") for d in o.dirs)
        parts.append(f"broker {b} {'up' if o.up else 'down'} dirs {dirs}")
    return parts


def _ints(xs) -> tuple:
    return tuple(int(x) for x in xs or ())


class ImageBuilder:
    """Replays decoded metadata records into the controller's image (registrations and partitions)."""

    def __init__(self, names: DirNames):
        self.names = names
        self.regs: dict[int, dict[str, Any]] = {}
        self.parts: dict[tuple[str, int], dict[str, Any]] = {}
        self.topic_names: dict[str, str] = {}
        self.features: dict[str, int] = {}
        self.last_offset = -1

    def replay(self, record: MetadataRecord) -> None:
        self.last_offset = max(self.last_offset, record.offset)
        handler = getattr(self, "_" + record.type, None)
        if handler is not None:
            handler(record.data)

    def _RegisterBrokerRecord(self, d):
        self.regs[d["brokerId"]] = {"epoch": d["brokerEpoch"], "fenced": d.get("fenced", True),
                                    "in_controlled_shutdown": d.get("inControlledShutdown", False),
                                    "dirs": list(d.get("logDirs") or ()), "incarnation": d.get("incarnationId", "")}

    def _BrokerRegistrationChangeRecord(self, d):
        r = self.regs.get(d["brokerId"])
        if r is None or r["epoch"] != d["brokerEpoch"]:
            return                         # ClusterControlManager ignores a change for another registration
        fenced = d.get("fenced", 0)        # BrokerRegistrationFencingChange: FENCE 1, NONE 0, UNFENCE -1
        if fenced == 1:
            r["fenced"] = True
        elif fenced == -1:
            r["fenced"] = False
        if d.get("inControlledShutdown", 0) == 1:
            r["in_controlled_shutdown"] = True
        if d.get("logDirs"):               # null or empty: no change (ClusterControlManager.replay)
            r["dirs"] = list(d["logDirs"])

    def _FenceBrokerRecord(self, d):
        r = self.regs.get(d["id"])
        if r is not None and r["epoch"] == d["epoch"]:
            r["fenced"] = True

    def _UnfenceBrokerRecord(self, d):
        r = self.regs.get(d["id"])
        if r is not None and r["epoch"] == d["epoch"]:
            r["fenced"] = False

    def _UnregisterBrokerRecord(self, d):
        r = self.regs.get(d["brokerId"])
        if r is not None and r["epoch"] == d["brokerEpoch"]:
            del self.regs[d["brokerId"]]

    def _TopicRecord(self, d):
        self.topic_names[d["topicId"]] = d["name"]

    def _RemoveTopicRecord(self, d):
        name = self.topic_names.pop(d["topicId"], None)
        for key in [k for k in self.parts if k[0] == name]:
            del self.parts[key]

    def _FeatureLevelRecord(self, d):
        self.features[d["name"]] = d["featureLevel"]

    def _PartitionRecord(self, d):
        topic = self.topic_names.get(d["topicId"], d["topicId"])
        replicas = list(d["replicas"])
        dirs = list(d.get("directories") or ()) or [next(k for k, v in RESERVED.items() if v == "MIGRATING")] * len(replicas)
        self.parts[(topic, d["partitionId"])] = {
            "topic_id": d["topicId"], "replicas": replicas, "isr": list(d["isr"]), "leader": d["leader"],
            "leader_epoch": d["leaderEpoch"], "partition_epoch": d["partitionEpoch"], "directories": dirs,
            "elr": list(d.get("eligibleLeaderReplicas") or ()), "last_known_elr": list(d.get("lastKnownElr") or ()),
            "adding": list(d.get("addingReplicas") or ()), "removing": list(d.get("removingReplicas") or ()),
            "leader_recovery_state": d.get("leaderRecoveryState", 0)}

    def _PartitionChangeRecord(self, d):
        """PartitionRegistration.merge: a field absent (null) keeps its value; a leader other than
        NO_LEADER_CHANGE (-2) bumps the leader epoch; every record bumps the partition epoch."""
        topic = self.topic_names.get(d["topicId"], d["topicId"])
        p = self.parts.get((topic, d["partitionId"]))
        if p is None:
            return
        for field, key in (("replicas", "replicas"), ("isr", "isr"), ("addingReplicas", "adding"),
                           ("removingReplicas", "removing"), ("eligibleLeaderReplicas", "elr"),
                           ("lastKnownElr", "last_known_elr"), ("directories", "directories")):
            if d.get(field) is not None:
                p[key] = list(d[field])
        if d.get("leader", NO_LEADER_CHANGE) != NO_LEADER_CHANGE:
            p["leader"] = d["leader"]
            p["leader_epoch"] += 1
        if d.get("leaderRecoveryState", -1) != -1:
            p["leader_recovery_state"] = d["leaderRecoveryState"]
        p["partition_epoch"] += 1

    def _ClearElrRecord(self, d):
        """4.x: clears ELR and last-known ELR of one topic, or of every topic when the name is empty."""
        name = d.get("topicName") or None
        for (t, _), p in self.parts.items():
            if name is None or t == name:
                p["elr"], p["last_known_elr"] = [], []

    def image(self, *, up: bool, held: bool) -> ControllerImage:
        regs = {b: Registration(broker=b, epoch=r["epoch"], fenced=bool(r["fenced"]),
                                in_controlled_shutdown=bool(r["in_controlled_shutdown"]),
                                dirs=tuple(self.names.index(u, b) for u in r["dirs"]), incarnation=r["incarnation"])
                for b, r in self.regs.items()}
        parts = {key: PartitionImage(
            topic=key[0], partition=key[1], topic_id=p["topic_id"], replicas=_ints(p["replicas"]), isr=_ints(p["isr"]),
            leader=p["leader"], leader_epoch=p["leader_epoch"], partition_epoch=p["partition_epoch"],
            directories=tuple(self.names.index(u, b) for u, b in zip(p["directories"], p["replicas"])), elr=_ints(p["elr"]),
            last_known_elr=_ints(p["last_known_elr"]), adding=_ints(p["adding"]), removing=_ints(p["removing"]),
            leader_recovery_state=p["leader_recovery_state"]) for key, p in self.parts.items()}
        return ControllerImage(up=up, held=held, registrations=regs, partitions=parts, features=dict(self.features),
                               last_offset=self.last_offset)
