"""The model's projection: a pure function from a KRaft model state to what a real cluster shows of it (view.py).

What is projected: per broker, running or not, each dir online or offline (or removed from ``log.dirs``), the
live dir holding each replica's log, its ``-future`` log's dir and its log end offset, and the failed dirs still
holding a copy; the controller's registrations (fenced, online dirs, in controlled shutdown) and partitions
(Replicas, leader, ISR, Directories, a reassignment's adding and removing replicas); the offsets acknowledged to
the producer. What is not: epochs and offsets of the metadata log (compare.py says why), the brokers' in-memory
state (HostedPartition, the assignment queue), which a real cluster shows only in its logs.
"""
from __future__ import annotations

from invariants.storage.durability import serving_leader
from model.kraft.controller import elr_enabled
from model.kraft.disks import index_of
from model.kraft.metadata import DIR_ID_NAMES, dir_slot, image_of
from model.storage.broker import live_copy_dir
from model.storage.state import LIVE_DIR, OFFLINE, REMOVED, bits

from .view import (ABSENT, OFFLINE as V_OFFLINE, ONLINE, BrokerView, DataView, LogView, PartitionView,
                   RegistrationView, View, replaced_dir, topic_of)


def dir_entry(dir_id: int, b: int | None = None, broker=None):
    """A Directories entry of broker ``b`` (its state ``broker``) as the view names it: a reserved id's name, the
    index of the dir whose current disk has the id, or, for the id of a disk the broker no longer has (a replaced
    one), the harness's name of that old id (realkafka/cluster: "dir d of broker b before its replacement")."""
    if dir_id in DIR_ID_NAMES:
        return DIR_ID_NAMES[dir_id]
    if broker is None or index_of(broker, dir_id) >= 0:
        return dir_slot(dir_id)
    return replaced_dir(b, dir_slot(dir_id))


def _dir_status(status: int) -> str:
    if status == REMOVED:
        return ABSENT
    return ONLINE if LIVE_DIR[status] else V_OFFLINE


def _logs(model, broker) -> dict:
    future = getattr(broker, "future", None)
    logs = {}
    for p in range(model.cfg.partitions):
        d = live_copy_dir(broker, p)
        # a -future log on a dir that is not live is out of reach, as a current log is (observed.py reads the same)
        f = future[p] if future is not None and future[p] >= 0 and LIVE_DIR[broker.dirs[future[p]]] else None
        if d >= 0 or f is not None:
            logs[topic_of(p)] = LogView(d if d >= 0 else None, f, len(broker.logs[p]) if d >= 0 else None)
    return logs


def _on_failed_dirs(model, broker) -> dict:
    out = {}
    for p, mask in enumerate(broker.copies):
        failed = frozenset(d for d in bits(mask) if broker.dirs[d] == OFFLINE)
        if failed:
            out[topic_of(p)] = failed
    return out


def project_broker(model, broker) -> BrokerView:
    return BrokerView(broker.up, tuple(_dir_status(s) for s in broker.dirs), _logs(model, broker),
                      _on_failed_dirs(model, broker))


def project_registration(reg, broker=None) -> RegistrationView | None:
    """The registration's view: its LogDirs by the index of the dir whose current disk has the id; an id of a
    disk the broker no longer has (a replaced one) is none of its dirs, left out as the real view leaves it out."""
    if reg is None:
        return None
    dirs = reg.dirs if broker is None else tuple(d for d in reg.dirs if index_of(broker, d) >= 0)
    return RegistrationView(reg.fenced, frozenset(dir_slot(d) for d in dirs), reg.in_controlled_shutdown)


def project_partition(part, elr: bool = False, brokers=None) -> PartitionView:
    """The partition's view; its ELR and last known ELR only when the model runs with ELR (None: not compared).
    ``brokers``: the brokers' states, which tell a replaced disk's old id from its new one."""
    return PartitionView(tuple(part.replicas), part.leader, frozenset(bits(part.isr)),
                         tuple(dir_entry(d, b, None if brokers is None else brokers[b])
                               for b, d in zip(part.replicas, part.dirs)), tuple(part.adding), tuple(part.removing),
                         frozenset(bits(part.elr)) if elr else None,
                         frozenset(part.last_known_elr) if elr else None)


def _readable(state, p: int) -> int | None:
    """How many records a consumer reading from offset 0 gets now: the serving leader's high watermark (None when
    no broker serves the partition as its leader)."""
    leader = serving_leader(state, p)
    return None if leader < 0 else state.brokers[leader].hw[p]


def project(model, state, faulted=frozenset(), quiet: bool | None = None) -> View:
    """The view of ``state``: ``faulted`` are the (broker, dir) the environment failed so far (DirFail steps);
    ``quiet`` defaults to the model's quiescence (model.is_quiescent: nothing queued or in flight, every broker
    caught up with nothing to report)."""
    c = state.controller
    with_elr = elr_enabled(model)
    partitions = {topic_of(p): project_partition(part, with_elr, state.brokers) for p, part in enumerate(c.partitions)
                  if part.leader_epoch >= 0}
    data = {topic_of(p): DataView(frozenset(bits(state.acked[p])), _readable(state, p))
            for p in range(model.cfg.partitions) if topic_of(p) in partitions or state.acked[p]}
    return View(tuple(project_broker(model, b) for b in state.brokers),
                tuple(project_registration(r, state.brokers[b]) for b, r in enumerate(c.registrations)), partitions, data, frozenset(faulted),
                model.is_quiescent(state) if quiet is None else quiet, jbod=image_of(model, c.log).jbod)
