"""The metadata log's records and their replay: the one function that turns a prefix of the log into an image
(the controller's view and each broker's), as MetadataDelta/MetadataImage do in Kafka.

Log dir ids are per broker: dir d's k-th disk (0: the one the cluster started with, k: after k replacements, each
formatted with a new directory.id) has id ``dir_id(d, k)``, so dir d of a broker never replaced has id d; the
reserved ids of ``DirectoryId`` are negative.
The log is a tuple of batches, one per controller event (the records it wrote atomically); a broker epoch and
a broker's applied offset count batches. A record is a NamedTuple whose first field is its kind. ``PartitionChange`` and ``BrokerChange`` carry only
what changed (None: unchanged), as PartitionChangeRecord and BrokerRegistrationChangeRecord do.
"""
from __future__ import annotations

from typing import NamedTuple

from model.storage.state import NO_LEADER, replace_at

# DirectoryId's reserved ids (org.apache.kafka.common.DirectoryId).
UNASSIGNED, MIGRATING, LOST = -1, -2, -3
RESERVED = (UNASSIGNED, MIGRATING, LOST)
DIR_ID_NAMES = {UNASSIGNED: "UNASSIGNED", MIGRATING: "MIGRATING", LOST: "LOST"}

# A replaced disk's new directory.id (the storage tool writes one: docs/kraft.md, "State"): dir d's k-th disk has id
# d + k * DISK_STRIDE (a broker has at most 8 dirs: model/storage/config.py), read as ``dir d`` and, once replaced,
# ``dir d'``, ``dir d''``, ...
DISK_STRIDE = 100


def dir_id(d: int, disk: int = 0) -> int:
    """The directory id of dir ``d``'s ``disk``-th disk (0: never replaced)."""
    return d + disk * DISK_STRIDE


def dir_slot(dir_id_: int) -> int:
    """The dir (index in the broker's log.dirs) whose disk has this (non-reserved) id."""
    return dir_id_ % DISK_STRIDE


def dir_disk(dir_id_: int) -> int:
    """Which disk of its dir a (non-reserved) id names: 0 the first, k after k replacements."""
    return dir_id_ // DISK_STRIDE


K_REGISTER, K_BROKER_CHANGE, K_PARTITION, K_PARTITION_CHANGE, K_FEATURE_LEVEL, K_REMOVE_TOPIC = 0, 1, 2, 3, 4, 5

# The feature option of a cluster that starts at a metadata.version before 3.7-IV2 (model/kraft/migration.py).
MV_UPGRADE_OPTION = "mv_upgrade"


class RegisterBroker(NamedTuple):
    """RegisterBrokerRecord: a new incarnation, fenced, with the dirs it registered (LogDirs)."""
    kind: int
    broker: int
    dirs: tuple
    __repr__ = tuple.__repr__


class BrokerChange(NamedTuple):
    """BrokerRegistrationChangeRecord: fenced (True/False), LogDirs and InControlledShutdown, each None when
    unchanged (only the feature kraft-shutdown writes InControlledShutdown: model/kraft/shutdown.py)."""
    kind: int
    broker: int
    fenced: bool | None
    dirs: tuple | None
    in_controlled_shutdown: bool | None = None
    __repr__ = tuple.__repr__


class PartitionRecord(NamedTuple):
    """PartitionRecord: a new partition (its replicas are the configured assignment), leader epoch and partition
    epoch 0, and Directories parallel to the replicas."""
    kind: int
    partition: int
    leader: int
    isr: int
    dirs: tuple
    topic: int = 1         # the topic id (TopicRecord's): 1 for the first topic of the partition, 2 if re-created
    replicas: tuple = ()   # Replicas, in assignment order
    # EligibleLeaderReplicas (a bitmask) and LastKnownElr (a list of broker ids), None when not written: a new
    # partition's are empty, and Kafka writes these tagged fields only when they are not (createTopic,
    # PartitionRegistration.toRecord; model/kraft/elr.py). Seen on 4.4.0 with ELR on: the PartitionRecord has neither.
    elr: int | None = None
    last_known_elr: tuple | None = None
    __repr__ = tuple.__repr__


class RemoveTopic(NamedTuple):
    """RemoveTopicRecord: the partition's topic is deleted (one partition a topic)."""
    kind: int
    partition: int
    __repr__ = tuple.__repr__


class PartitionChange(NamedTuple):
    """PartitionChangeRecord: leader, ISR and Directories, each None when unchanged. Replaying it bumps the
    partition epoch, and the leader epoch when it names a leader (PartitionRegistration.merge)."""
    kind: int
    partition: int
    leader: int | None
    isr: int | None
    dirs: tuple | None
    replicas: tuple | None = None   # Replicas, AddingReplicas, RemovingReplicas (reassignment)
    adding: tuple | None = None
    removing: tuple | None = None
    # EligibleLeaderReplicas (a bitmask) and LastKnownElr (a list of broker ids, as Kafka keeps it: with
    # useLastKnownLeaderInBalancedRecovery it holds the last known leader alone, -1 included), each None when
    # unchanged; recovering: True for LeaderRecoveryState RECOVERING, written by an unclean election (the last
    # known leader's included) and only by one (model/kraft/elr.py), else None (unchanged: Kafka's -1).
    elr: int | None = None
    last_known_elr: tuple | None = None
    recovering: bool | None = None
    __repr__ = tuple.__repr__


class FeatureLevel(NamedTuple):
    """FeatureLevelRecord for metadata.version: ``jbod`` says whether the level supports directory assignment
    (3.7-IV2 or later, MetadataVersion.isDirectoryAssignmentSupported). Only a cluster that starts before 3.7-IV2
    has these records (model/kraft/migration.py); the model's log otherwise leaves the bootstrap level out."""
    kind: int
    jbod: bool
    __repr__ = tuple.__repr__


class Registration(NamedTuple):
    """BrokerRegistration: its broker epoch (the offset of its RegisterBrokerRecord), fenced, online dir ids, and
    inControlledShutdown (False for a new registration; set only by the feature kraft-shutdown)."""
    epoch: int
    fenced: bool
    dirs: tuple
    in_controlled_shutdown: bool = False
    __repr__ = tuple.__repr__


class PartitionState(NamedTuple):
    """PartitionRegistration (replicas: the configured assignment). The first three fields keep the names the
    shared invariants read (invariants/storage/durability.py: leader, leader_epoch, isr)."""
    leader: int
    leader_epoch: int      # -1: the partition does not exist yet
    isr: int               # bitmask of brokers
    partition_epoch: int
    dirs: tuple            # per replica, in assignment order: a dir id of that broker or a reserved id
    topic: int = 0         # the topic id: 0 before the first creation; a deleted topic's id stays (the next is +1)
    replicas: tuple = ()   # Replicas, in assignment order (Directories is parallel to it)
    adding: tuple = ()     # AddingReplicas and RemovingReplicas while a reassignment is in progress
    removing: tuple = ()
    elr: int = 0           # EligibleLeaderReplicas, a bitmask of brokers (KIP-966; model/kraft/elr.py)
    last_known_elr: tuple = ()  # LastKnownElr, broker ids (the last known leader alone, or empty)
    __repr__ = tuple.__repr__


NO_PARTITION = PartitionState(NO_LEADER, -1, 0, -1, ())


class Image(NamedTuple):
    """What replaying a prefix of the log gives: per broker its Registration or None, per partition its state,
    and whether the metadata.version supports directory assignment (JBOD; true unless a FeatureLevel record says
    otherwise)."""
    registrations: tuple
    partitions: tuple
    jbod: bool = True
    __repr__ = tuple.__repr__


def empty_image(brokers: int, partitions: int) -> Image:
    return Image((None,) * brokers, (NO_PARTITION,) * partitions)


def replay(image: Image, offset: int, record) -> Image:
    """The image after one record at ``offset`` (ClusterControlManager.replay, ReplicationControlManager.replay)."""
    kind = record.kind
    if kind == K_REGISTER:
        reg = Registration(offset, True, record.dirs)
        return image._replace(registrations=replace_at(image.registrations, record.broker, reg))
    if kind == K_BROKER_CHANGE:
        reg = image.registrations[record.broker]
        if record.fenced is not None:
            reg = reg._replace(fenced=record.fenced)
        if record.dirs is not None:
            reg = reg._replace(dirs=record.dirs)
        if record.in_controlled_shutdown is not None:
            reg = reg._replace(in_controlled_shutdown=record.in_controlled_shutdown)
        return image._replace(registrations=replace_at(image.registrations, record.broker, reg))
    if kind == K_FEATURE_LEVEL:
        return image._replace(jbod=record.jbod)
    p = record.partition
    if kind == K_REMOVE_TOPIC:
        part = NO_PARTITION._replace(topic=image.partitions[p].topic)
    elif kind == K_PARTITION:
        part = PartitionState(record.leader, 0, record.isr, 0, record.dirs, record.topic, record.replicas,
                              elr=record.elr or 0, last_known_elr=record.last_known_elr or ())
    else:
        part = image.partitions[p]
        leader, epoch = part.leader, part.leader_epoch
        if record.leader is not None:
            leader, epoch = record.leader, epoch + 1
        part = part._replace(leader=leader, leader_epoch=epoch, isr=part.isr if record.isr is None else record.isr,
                             partition_epoch=part.partition_epoch + 1,
                             dirs=part.dirs if record.dirs is None else record.dirs,
                             replicas=part.replicas if record.replicas is None else record.replicas,
                             adding=part.adding if record.adding is None else record.adding,
                             removing=part.removing if record.removing is None else record.removing,
                             elr=part.elr if record.elr is None else record.elr,
                             last_known_elr=part.last_known_elr if record.last_known_elr is None
                             else record.last_known_elr)
    return image._replace(partitions=replace_at(image.partitions, p, part))


def replay_batch(image: Image, offset: int, batch: tuple) -> Image:
    """The image after one batch (the records of one controller event, which Kafka writes atomically and a
    broker's MetadataLoader publishes as one delta at most) at batch offset ``offset``: its records in order."""
    for record in batch:
        image = replay(image, offset, record)
    return image


def image_of(m, log: tuple) -> Image:
    """The image of a log prefix, a tuple of batches (remembered by the model: brokers replay the same prefixes)."""
    return m.cached(_image_of, bind=True)(log)


def _image_of(m, log: tuple) -> Image:
    image = empty_image(m.cfg.brokers, m.cfg.partitions)
    for offset, batch in enumerate(log):
        image = replay_batch(image, offset, batch)
    return image


def is_online(dir_id: int, registered: tuple, empty_is_online: bool = True) -> bool:
    """DirectoryId.isOnline: UNASSIGNED and MIGRATING are online, LOST is not; a broker that registered no dir
    counts every dir online (the fix of KAFKA-16162; ``empty_is_online=False``: before it); else the dir must be
    registered."""
    if dir_id in (UNASSIGNED, MIGRATING):
        return True
    if dir_id == LOST:
        return False
    return (empty_is_online and not registered) or dir_id in registered


def default_dir(registration: Registration | None) -> int:
    """ClusterControlManager.defaultDir: by the number of registered dirs, 0 -> MIGRATING, 1 -> that dir,
    2 or more -> UNASSIGNED; an unregistered broker -> UNASSIGNED."""
    if registration is None or len(registration.dirs) >= 2:
        return UNASSIGNED
    return registration.dirs[0] if registration.dirs else MIGRATING


def dir_name(dir_id_: int) -> str:
    """A dir id by name: ``dir d`` (of the broker the record or the position names), ``dir d'`` for the disk that
    replaced it (``dir d''`` the next), or a reserved id's name."""
    if dir_id_ in DIR_ID_NAMES:
        return DIR_ID_NAMES[dir_id_]
    return f"dir {dir_slot(dir_id_)}" + "'" * dir_disk(dir_id_)
