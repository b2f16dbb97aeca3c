"""Dir symmetry in KRaft mode (model/spec/symmetry.py): a broker's dir ids appear outside its own fields, in the
metadata log's records, the image's registrations and Directories, and its assignment queue and request in
flight. ``permute_index_refs`` renames them as the brokers' dirs were permuted (an id names a disk of a dir: it
follows its dir, and the broker's ``disks`` field is permuted with the dirs); reserved (negative) ids stay, and
dir lists stay sorted (the model builds them sorted by id and reads them as sets)."""
from __future__ import annotations

from model.kraft.metadata import (
    K_BROKER_CHANGE, K_PARTITION, K_PARTITION_CHANGE, K_REGISTER, K_REMOVE_TOPIC, dir_disk, dir_id, dir_slot,
)


def dir_symmetry(cfg) -> str | None:
    """None when KRaft mode keeps the dirs interchangeable, beyond storage's condition (model/storage/faults.py).
    It is opt-in (kraft-core's option ``dir_symmetry``): renaming the dir ids in the metadata log costs about as
    much time as the 29% fewer states save on kraft-tiny-faults, and more on kraft-tiny (docs/performance.md)."""
    if not dict(cfg.options).get("dir_symmetry", False):
        return ("KRaft mode's dir symmetry is opt-in (--option dir_symmetry=true): it saves states but not time here "
                "(docs/performance.md, 'KRaft mode')")
    if cfg.max_fixes > 0:
        return ("a replaced disk's new directory id tells its dir from the others, where LogManager's tie-break "
                "between equally loaded dirs picks by index: two such dirs are not interchangeable (with repairs)")
    if cfg.partitions > 1 and cfg.max_dir_failures > 1:
        return ("handleDirectoriesOffline writes its records dir by dir: with two failed dirs of one broker holding "
                "different partitions, the batch's order follows the dir ids")
    return None


def permute_index_refs(m, s, orders):
    """The state with every broker's dir ids renamed: new dir i of broker b is old dir ``orders[b][i]``."""
    orders = tuple(orders)
    if all(o == tuple(range(len(o))) for o in orders):
        return s
    new = [{old: i for i, old in enumerate(o)} for o in orders]
    controller = m.cached(_renamed_controller, limit=1 << 18, bind=True)(s.controller, orders)
    brokers = tuple(b._replace(queue=tuple((p, renamed(new[i], d), t) for p, d, t in b.queue),
                               inflight=tuple((p, renamed(new[i], d), t) for p, d, t in b.inflight))
                    if b.queue or b.inflight else b for i, b in enumerate(s.brokers))
    return s._replace(controller=controller, brokers=brokers)


def renamed(new: dict, dir_id_: int) -> int:
    """A dir id of a broker whose dirs are renamed old -> ``new[old]``: the same disk of the renamed dir (a replaced
    disk's id, old or new, follows its dir); a reserved id stays."""
    return dir_id(new[dir_slot(dir_id_)], dir_disk(dir_id_)) if dir_id_ >= 0 else dir_id_


def _renamed_controller(m, c, orders):
    """The controller's record with every broker's dir ids renamed (``permute_index_refs``)."""
    new = [{old: i for i, old in enumerate(o)} for o in orders]

    def dir_of(b: int, d: int) -> int:
        return renamed(new[b], d)

    def dir_list(b: int, dirs):
        return None if dirs is None else tuple(sorted(dir_of(b, d) for d in dirs))

    def directories(replicas: tuple, dirs):
        return None if dirs is None else tuple(dir_of(b, d) for b, d in zip(replicas, dirs))

    # Directories is parallel to Replicas as of its record (a reassignment changes Replicas): walk the log keeping
    # each partition's Replicas.
    replicas = [()] * len(c.partitions)

    def record(r):
        if r.kind in (K_REGISTER, K_BROKER_CHANGE):
            return r._replace(dirs=dir_list(r.broker, r.dirs))
        if r.kind == K_REMOVE_TOPIC:
            replicas[r.partition] = ()
        elif r.kind in (K_PARTITION, K_PARTITION_CHANGE):
            if r.replicas is not None:
                replicas[r.partition] = r.replicas
            return r._replace(dirs=directories(replicas[r.partition], r.dirs))
        return r

    log = tuple(tuple(record(r) for r in batch) for batch in c.log)
    registrations = tuple(None if reg is None else reg._replace(dirs=dir_list(b, reg.dirs))
                          for b, reg in enumerate(c.registrations))
    partitions = tuple(part._replace(dirs=directories(part.replicas, part.dirs)) for part in c.partitions)
    return c._replace(log=log, registrations=registrations, partitions=partitions)
