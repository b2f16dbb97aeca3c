"""What can be seen of a KRaft cluster, in one shape for both sides: the model's projection of a state
(projection.py) and the real cluster's observation (observed.py) are each a ``View``, so that every comparison
(compare.py) and every violation check (checks.py) is written once, over this shape.

Names are Kafka's: a model partition ``p`` is the real topic ``t{p}`` with one partition (the model's partitions are
one topic each), so its topic-partition is ``t{p}-0``; a dir is its index in the broker's ``log.dirs``; a
``Directories`` entry is a dir index, one of ``DirectoryId``'s reserved names, or the old id of a replaced disk
(``replaced_dir``: a replaced disk gets a new directory.id, which takes the dir's index).
"""
from __future__ import annotations

from dataclasses import dataclass, field

ONLINE, OFFLINE, ABSENT = "online", "offline", "absent"   # a configured dir's status; absent: not in log.dirs
UNASSIGNED, MIGRATING, LOST = "UNASSIGNED", "MIGRATING", "LOST"
RESERVED = (UNASSIGNED, MIGRATING, LOST)


def topic_of(p: int) -> str:
    """The real topic standing for model partition p (one partition)."""
    return f"t{p}"


def partition_of(topic: str) -> int:
    return int(topic[1:])


def tp(topic: str) -> str:
    """The topic-partition as Kafka names it."""
    return f"{topic}-0"


def dir_text(entry) -> str:
    return entry if isinstance(entry, str) else f"dir {entry}"


def dirs_text(entries) -> str:
    """Directories entries as the model's traces write a list of dir ids: ``[dir 0, UNASSIGNED]``."""
    return "[" + ", ".join(dir_text(e) for e in entries) + "]"


def replaced_dir(broker: int, d: int) -> str:
    """The id of a disk that broker's dir d no longer has (its disk was replaced: Kafka's new disk has a new
    directory.id): the name the harness gives it (realkafka/cluster/observer.py ``_learn_replaced_ids``)."""
    return f"dir {d} of broker {broker}{REPLACED}"


REPLACED = " before its replacement"


def is_replaced_dir(entry) -> bool:
    """Whether a Directories entry is a replaced disk's old id by its name (``replaced_dir``)."""
    return isinstance(entry, str) and entry.startswith("dir ") and entry.endswith(REPLACED)


def foreign_dir(broker: int, d: int) -> str:
    """Another broker's dir (a Directories entry or a record naming a dir of a broker other than its own): the
    model traces' name of the dir, with its broker."""
    return f"dir {d} of broker {broker}"


@dataclass(frozen=True)
class LogView:
    """A broker's replica of one topic-partition: the live dir holding its log (None: none), the dir of its
    ``-future`` log (None: none), its log end offset (None: not observed)."""
    dir: int | None
    future_dir: int | None = None
    log_end: int | None = None


@dataclass(frozen=True)
class BrokerView:
    up: bool
    dirs: tuple[str, ...]                       # per configured dir index: ONLINE, OFFLINE or ABSENT
    # topic -> its replica's logs; None when not observed (a real broker that is down cannot be asked)
    logs: dict | None = None
    # topic -> the failed dirs whose contents still hold the topic-partition's directory (its copy out of reach);
    # None when not observed
    on_failed_dirs: dict | None = None


@dataclass(frozen=True)
class RegistrationView:
    """The controller's BrokerRegistration: fenced, the dirs it lists as online (LogDirs), in controlled shutdown."""
    fenced: bool
    dirs: frozenset
    in_controlled_shutdown: bool = False


@dataclass(frozen=True)
class PartitionView:
    """The controller's PartitionRegistration of ``{topic}-0``: replicas in assignment order, the leader (-1:
    none), the ISR, Directories parallel to the replicas, and ELR / last known ELR (None: not kept: a model run
    without ELR, or a release whose client does not show them)."""
    replicas: tuple
    leader: int
    isr: frozenset
    directories: tuple
    adding: tuple = ()
    removing: tuple = ()
    elr: frozenset | None = None
    last_known_elr: frozenset | None = None

    def directory(self, broker: int):
        return self.directories[self.replicas.index(broker)]


@dataclass(frozen=True)
class DataView:
    """The client's side of a topic: the offsets the producer was told are safe (acks=all), and, when a consumer
    read the topic from offset 0 at this point, how many records it got (None: no read here)."""
    acked: frozenset = frozenset()
    read: int | None = None           # the model: what the serving leader would give (its HW), None without one
    # the real side only: offsets whose producer gave up without knowing the outcome (a timeout): the record may be
    # committed, which the model counts as acknowledged; the views compare the others
    unsure: frozenset = frozenset()


@dataclass(frozen=True)
class View:
    brokers: tuple                    # BrokerView per broker id
    registrations: tuple              # RegistrationView or None per broker id
    partitions: dict                  # topic -> PartitionView (existing topics only)
    data: dict = field(default_factory=dict)   # topic -> DataView
    # The dirs the environment failed (DirFail steps so far), per broker: a dir offline that is not here went
    # offline by itself.
    faulted: frozenset = frozenset()  # {(broker, dir)}
    # Nothing of the control plane is pending (the model's quiescence at this step; the real cluster's is not
    # observable, so its view takes the step's): the checks that hold only at quiescence read it.
    quiet: bool = False
    # The brokers whose AssignReplicasToDirs requests go on without end (the model: its own steps cycle through
    # them; the real cluster: the controller keeps receiving them, or the broker keeps logging the controller's
    # error, once nothing is left to assign).
    retrying: frozenset = frozenset()
    # metadata.version is at or after 3.7-IV2 (directory assignment, JBOD); None: not known. Before it every
    # Directories entry is MIGRATING by Kafka's design, which the Directories checks then do not flag.
    jbod: bool | None = None
