"""The directory ids of a KRaft broker's dirs (each dir's meta.properties ``directory.id``), and the replaced disk's
new one (docs/kraft.md, "State").

Kafka refuses a log dir without meta.properties ("No meta.properties found"), so an operator formats a new disk
with the storage tool (``kafka-storage format --ignore-formatted``), which writes a new ``directory.id``. The model
keeps, per dir, which disk it is (the broker field ``disks``: 0 the first, k after k replacements, so at most
``max_fixes``) and derives the id from it (model/kraft/metadata.py ``dir_id``). The broker reads a
``Directories`` entry through these ids: an id of a disk it no longer has names none of its dirs
(``LogManager.directoryIds``, ``onlineLogDirId``), while the controller keeps whatever ids the registration and
the records name until the broker registers again.
"""
from __future__ import annotations

from model.kraft.metadata import dir_disk, dir_id, dir_name, dir_slot
from model.spec.schema import Field, Show
from model.storage.broker import live_dirs
from model.storage.common import set_broker

FIELD = Field("disks", "brokers", lambda m: (0,) * m.cfg.dirs, index="per-index",
              show=Show("directory_ids", "kraft_dir_ids"),
              doc="per dir: which disk it is, 0 the first and k after k replacements (ReplaceDisk); its "
                  "directory.id is dir_id(dir, disk)")

# What reads a broker's dir ids (``id_of``, ``index_of``) beside the rest of the broker.
READS = ("broker[broker].disks",)


def id_of(broker, d: int) -> int:
    """The directory id of the broker's dir ``d`` (its current disk's)."""
    return dir_id(d, broker.disks[d])


def index_of(broker, dir_id_: int) -> int:
    """The broker's dir whose current disk has this id, or -1: a reserved id, or an id of a disk the broker no
    longer has (LogManager.directoryIds holds the ids of the disks it loaded)."""
    if dir_id_ < 0:
        return -1
    d = dir_slot(dir_id_)
    return d if d < len(broker.disks) and broker.disks[d] == dir_disk(dir_id_) else -1


def ids_of(broker, dirs) -> tuple:
    """The ids of these dirs of the broker, sorted (a LogDirs or OfflineLogDirs list: the model reads them as sets)."""
    return tuple(sorted(id_of(broker, d) for d in dirs))


def live_dir_ids(broker) -> tuple:
    """The ids of the dirs the broker can read and write now (a registration's LogDirs)."""
    return ids_of(broker, live_dirs(broker))


def failed_dir_ids(m, broker) -> tuple:
    """The ids of the dirs that failed since the broker started (a heartbeat's OfflineLogDirs)."""
    return ids_of(broker, (d for d in range(m.cfg.dirs) if broker.failed >> d & 1))


def new_disk(m, s, broker, dir):
    """The broker's dir ``dir`` is a new disk: its next id."""
    b = s.brokers[broker]
    return set_broker(s, broker, b._replace(disks=b.disks[:dir] + (b.disks[dir] + 1,) + b.disks[dir + 1:]))


def replace_disk_effect(effect):
    """Storage's ReplaceDisk, then the new disk's new directory id."""
    def replace(m, s, broker, dir):
        return new_disk(m, effect(m, s, broker, dir), broker, dir)
    replace.__doc__ = (effect.__doc__ or "") + (" The storage tool formats the new disk with a new directory.id: "
                                                "the registration and any Directories entry naming the old disk "
                                                "name a dir the broker no longer has.")
    return replace


def dir_ids_view(m, disks: tuple) -> list[str]:
    """The formatter of the field: each dir's directory id by name (``dir 0``, ``dir 1'`` once replaced)."""
    return [dir_name(dir_id(d, k)) for d, k in enumerate(disks)]
