"""How KRaft mode's state reads in every output (text trace, replay, JSON report, ITF, HTML view, serve, DOT
tooltips): records, registrations, partition images and AssignmentsManager entries by Kafka's names and fields,
dir ids by name (docs/kraft.md, "State"; docs/cli.md, "The trace format").

The KRaft fields' views (model/spec/schema.py ``Show``) name formatters that the KRaft features declare
(``Feature.formats``: kraft-core declares ``FORMATS``; kraft-future, kraft-shutdown and kraft-deletion theirs,
beside their fields). A formatter turns a model value into JSON-ready data. A record, an image or an entry becomes
an object whose ``"type"`` (``TYPE``) is Kafka's name for it (``PartitionChangeRecord``, ``BrokerRegistration``,
``Assignment``, ...) and whose other keys are Kafka's field names; the reports write such an object
``Type(field=value, ...)`` (explorer/reports/render.py; a type in ``TEXT_FORMS`` has a text form of its own), show
a step's appended batches rather than the whole log, and the fields of an image that changed. Formatters run only
for traces and views, never in a search.

The forms are data. ``FORMS`` gives, per record or image NamedTuple of model/kraft/metadata.py, Kafka's name and
its fields in the order of Kafka's schema (or ``toString``), each a pair (Kafka's field name, the NamedTuple's
field name, or a ``Derived`` value: one Kafka writes that the model's record leaves implicit, read from the log
around the record). ``VALUES`` says how a NamedTuple field's value reads, by the field's name (one meaning per
name across the records and images). A field the NamedTuple carries as None (the "unchanged" of
PartitionChangeRecord and BrokerRegistrationChangeRecord) is left out. A new field renders with one entry in its
record's form, plus one in ``VALUES`` if its name is new; a field without an entry still shows, under its own name
and as a plain value, and tests/kraft/test_kraft_render.py fails until it has one.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple

from model.kraft.disks import dir_ids_view
from model.kraft.metadata import (
    BrokerChange, FeatureLevel, PartitionChange, PartitionRecord, PartitionState, RegisterBroker, Registration,
    RemoveTopic, dir_name, empty_image, replay,
)
from model.storage.state import (
    H_FOLLOWER, H_LEADER, H_NONE, H_OFFLINE, H_SATURATED, H_STOPPED, NO_LEADER, bits,
)

TYPE = "type"   # the key of an object's Kafka name


def plain(value):
    """Tuples as lists (JSON-ready), the rest as it is."""
    if isinstance(value, tuple):
        return [plain(v) for v in value]
    return value


def topic_id(topic: int) -> str | None:
    """A topic id by name: ``t1`` for a partition's first topic, ``t2`` once re-created; None before the first
    (the model's topic ids count a partition's topics: docs/kraft.md, "Topic deletion")."""
    return f"t{topic}" if topic > 0 else None


def dir_names(dirs) -> list[str]:
    """Dir ids by name: ``dir 0`` (of the broker the position or the record names), ``dir 0'`` (the disk that replaced
    it), ``UNASSIGNED``, ``MIGRATING``, ``LOST``."""
    return [dir_name(d) for d in dirs]


def leader(broker: int) -> int | None:
    return None if broker == NO_LEADER else broker


def metadata_version(jbod: bool) -> str:
    """FeatureLevelRecord's level of metadata.version: 3.7-IV2 (directory assignment) or the model's "before
    3.7-IV2", which names no one version (docs/kraft.md, "The metadata.version upgrade")."""
    return "3.7-IV2" if jbod else "before 3.7-IV2"


# How a record's or image's field reads, by its NamedTuple field name.
VALUES: dict[str, Callable[[Any], Any]] = {
    "broker": plain, "partition": plain, "fenced": plain, "in_controlled_shutdown": plain, "epoch": plain,
    "leader_epoch": plain, "partition_epoch": plain,
    "leader": leader,
    "isr": bits, "elr": bits,          # bitmasks of brokers
    "last_known_elr": list,            # broker ids (the last known leader, -1 included: Kafka's LastKnownElr)
    "recovering": lambda recovering: 1,  # LeaderRecoveryState RECOVERING (1); None (unchanged) is left out
    "dirs": dir_names,
    "replicas": list, "adding": list, "removing": list,
    "topic": topic_id,
    "jbod": metadata_version,
}


class Derived(NamedTuple):
    """A field Kafka writes that the model's record leaves implicit: ``of(record, offset, image)``, with the
    record's batch offset and the image of the log before the record (None when the record is shown alone: then
    the field is left out)."""
    what: str
    of: Callable


def _constant(value) -> Derived:
    return Derived(f"always {value}", lambda record, offset, image: value)


OFFSET = Derived("the batch's offset (a broker epoch is the offset of its registration)",
                 lambda record, offset, image: offset)
TOPIC_ID = Derived("the partition's topic id in the image before the record",
                   lambda record, offset, image: None if image is None else
                   topic_id(image.partitions[record.partition].topic))
BROKER_EPOCH = Derived("the broker's epoch in the image before the record",
                       lambda record, offset, image: None if image is None or
                       image.registrations[record.broker] is None else image.registrations[record.broker].epoch)

# Per record or image type: Kafka's name and its fields, in the order of Kafka's schema (records: the
# common/metadata/*.json of kafka-metadata) or toString (BrokerRegistration, PartitionRegistration).
FORMS: dict[type, tuple[str, tuple]] = {
    RegisterBroker: ("RegisterBrokerRecord", (
        ("brokerId", "broker"), ("brokerEpoch", OFFSET), ("logDirs", "dirs"))),
    BrokerChange: ("BrokerRegistrationChangeRecord", (
        ("brokerId", "broker"), ("brokerEpoch", BROKER_EPOCH), ("fenced", "fenced"),
        ("inControlledShutdown", "in_controlled_shutdown"), ("logDirs", "dirs"))),
    PartitionRecord: ("PartitionRecord", (
        ("partitionId", "partition"), ("topicId", "topic"), ("replicas", "replicas"), ("isr", "isr"),
        ("leader", "leader"), ("directories", "dirs"), ("eligibleLeaderReplicas", "elr"),
        ("lastKnownElr", "last_known_elr"))),
    PartitionChange: ("PartitionChangeRecord", (
        ("partitionId", "partition"), ("topicId", TOPIC_ID), ("isr", "isr"), ("leader", "leader"),
        ("replicas", "replicas"), ("removingReplicas", "removing"), ("addingReplicas", "adding"),
        ("leaderRecoveryState", "recovering"), ("directories", "dirs"), ("eligibleLeaderReplicas", "elr"),
        ("lastKnownElr", "last_known_elr"))),
    FeatureLevel: ("FeatureLevelRecord", (
        ("name", _constant("metadata.version")), ("featureLevel", "jbod"))),
    # Kafka's record names the topic only; the model deletes one partition's topic (its topics have one partition
    # each once deleted: docs/kraft.md, "Topic deletion"), so the partition is shown too.
    RemoveTopic: ("RemoveTopicRecord", (("topicId", TOPIC_ID), ("partitionId", "partition"))),
    Registration: ("BrokerRegistration", (
        ("epoch", "epoch"), ("fenced", "fenced"), ("inControlledShutdown", "in_controlled_shutdown"),
        ("directories", "dirs"))),
    # Kafka keeps the topic id in the TopicImage above the partition; the model keeps it in the partition's state.
    PartitionState: ("PartitionRegistration", (
        ("topicId", "topic"), ("replicas", "replicas"), ("directories", "dirs"), ("isr", "isr"),
        ("removingReplicas", "removing"), ("addingReplicas", "adding"), ("elr", "elr"),
        ("lastKnownElr", "last_known_elr"), ("leader", "leader"),
        ("leaderEpoch", "leader_epoch"), ("partitionEpoch", "partition_epoch"))),
}
HIDDEN = ("kind",)   # a record's kind: its type says it


def form(value, offset: int | None = None, image=None) -> dict:
    """A record or image (a NamedTuple of ``FORMS``) as an object: ``{"type": Kafka's name, field: value, ...}``.
    ``offset`` and ``image``: the record's batch offset and the image before it, for the ``Derived`` fields."""
    name, fields = FORMS[type(value)]
    out: dict = {TYPE: name}
    named = set(HIDDEN)
    for kafka_name, source in fields:
        if isinstance(source, Derived):
            derived = source.of(value, offset, image)
            if derived is not None:
                out[kafka_name] = derived
            continue
        named.add(source)
        raw = getattr(value, source)
        if raw is not None:
            out[kafka_name] = VALUES.get(source, plain)(raw)
    for field in value._fields:        # a field no form names yet: under its own name (a test asks for its entry)
        raw = getattr(value, field)
        if field not in named and raw is not None:
            out[field] = VALUES.get(field, plain)(raw)
    return out


def unnamed_fields(cls: type) -> list[str]:
    """The fields of a NamedTuple of ``FORMS`` that its form does not name (tests/kraft/test_kraft_render.py)."""
    named = {source for _, source in FORMS[cls][1] if isinstance(source, str)} | set(HIDDEN)
    return [f for f in cls._fields if f not in named]


# ---- the formatters of the KRaft fields (Feature.formats) ------------------------------------------------------

def metadata_log(m, log: tuple) -> list[dict]:
    """The metadata log: per batch ``{"type": "Batch", "offset": n, "records": [record, ...]}``, each record read
    against the image of the log before it (its derived fields)."""
    image = empty_image(m.cfg.brokers, m.cfg.partitions)
    out = []
    for offset, batch in enumerate(log):
        records = []
        for record in batch:
            records.append(form(record, offset, image))
            image = replay(image, offset, record)
        out.append({TYPE: "Batch", "offset": offset, "records": records})
    return out


def registrations(m, value: tuple) -> dict:
    """Per broker id: its BrokerRegistration, or None (never registered)."""
    return {str(b): None if r is None else form(r) for b, r in enumerate(value)}


def partition_registration(m, part: PartitionState) -> dict | None:
    """A partition's PartitionRegistration, or None while it does not exist (before its creation, after its topic's
    deletion)."""
    return None if part.leader_epoch < 0 else form(part)


# An AssignmentsManager entry (the queue's and the request's in flight): its tuple's positions.
ENTRY_PARTITION, ENTRY_DIR, ENTRY_TOPIC = 0, 1, 2


def assignment(entry: tuple) -> dict:
    """An entry as Kafka's ``Assignment``: its TopicIdPartition (``topicId:partitionId``, as
    ``TopicIdPartition.toString``) and directoryId."""
    topic = topic_id(entry[ENTRY_TOPIC]) or "none"
    return {TYPE: "Assignment", "topicIdPartition": f"{topic}:{entry[ENTRY_PARTITION]}",
            "directoryId": dir_name(entry[ENTRY_DIR])}


def assignments(m, entries: tuple) -> list[dict]:
    return [assignment(e) for e in entries]


# The broker's hold on a partition as ReplicaManager's HostedPartition (None, Offline, Online), with the replica's
# role (model/kraft/replica_manager.py).
HOSTED = {H_NONE: "HostedPartition.None", H_OFFLINE: "HostedPartition.Offline",
          H_STOPPED: "HostedPartition.Online (no log)", H_FOLLOWER: "HostedPartition.Online (follower)",
          H_LEADER: "HostedPartition.Online (leader)", H_SATURATED: "HostedPartition.Online (saturated dir)"}


def hosted(m, value: int) -> str:
    return HOSTED[value]


def optional_dir(m, value: int) -> int | None:
    """A dir of the broker, or None (-1)."""
    return None if value < 0 else value


def topic_of(m, value: int) -> str | None:
    return topic_id(value)


FORMATS = {
    "kraft_log": metadata_log,
    "kraft_registrations": registrations,
    "kraft_partition": partition_registration,
    "kraft_assignments": assignments,
    "kraft_dir_ids": dir_ids_view,
    "hosted": hosted,                  # in place of the reports' own (ZooKeeper mode's words)
}


def batch_text(batch: dict, show: Callable) -> str:
    return f"batch {batch.get('offset')}: {show(batch.get('records'))}"


# Types whose text is not Type(field=value, ...): type -> (object, show) -> text.
TEXT_FORMS: dict[str, Callable] = {"Batch": batch_text}
