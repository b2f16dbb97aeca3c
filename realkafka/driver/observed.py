"""The real cluster's observation (realkafka.cluster's ClusterObservation) as a view (view.py): the same shape as
the model's projection, so one comparison and one set of checks serve both.

The harness names dirs by their index in a broker's ``log.dirs`` and Directories entries by a dir index, a
reserved name (``UNASSIGNED``, ``MIGRATING``, ``LOST``), another broker's (broker, index) or an unknown id: the last
two are kept as text, which never equals a dir index, so the comparison names them. A broker's replicas are read
from its dirs on disk (also while it is down); a log counts as live when its dir is online. Topics are the
driver's (``t{p}``); a topic of the real cluster that is not the driver's (``__consumer_offsets``) is left out.
"""
from __future__ import annotations

from .view import (ABSENT, OFFLINE, ONLINE, RESERVED, BrokerView, DataView, LogView, PartitionView,
                   RegistrationView, View, foreign_dir, is_replaced_dir)


def _topic(key) -> str | None:
    """The driver's topic of an observation key (a ("t0", 0) pair or a "t0-0" name), else None."""
    if isinstance(key, tuple):
        topic, partition = key[0], key[1]
    else:
        topic, _, partition = str(key).rpartition("-")
    if partition not in (0, "0") or not topic.startswith("t") or not topic[1:].isdigit():
        return None
    return topic


def _entry(value):
    """A Directories entry: a dir index, a reserved name, a replaced disk's old id by the harness's name, or
    (another broker's dir, an unknown id) its text."""
    if isinstance(value, int) or value in RESERVED or is_replaced_dir(value):
        return value
    if isinstance(value, tuple):
        return foreign_dir(*value)
    return f"unknown dir id {value}"


def _dir_status(d) -> str:
    """ONLINE or OFFLINE: what the running broker said (describeLogDirs), else whether the dir is there (a failed
    dir is a file in its place)."""
    if getattr(d, "configured", True) is False:
        return ABSENT
    online = d.online
    if online is None:
        online = getattr(d, "exists", True)
    return ONLINE if online else OFFLINE


def _int_or_none(value):
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _logs(broker, statuses) -> dict | None:
    """The live logs: on a dir that is online (a log on disk in a dir the broker took offline is out of reach)."""
    replicas = getattr(broker, "replicas", None)
    if replicas is None:
        return None
    logs = {}
    for key, replica in replicas.items():
        topic = _topic(key)
        if topic is None:
            continue
        d = _int_or_none(getattr(replica, "dir", None))
        f = _int_or_none(getattr(replica, "future_dir", getattr(replica, "future", None)))
        live = d if d is not None and statuses[d] == ONLINE else None
        future = f if f is not None and statuses[f] == ONLINE else None
        if live is None and future is None:
            continue
        logs[topic] = LogView(live, future, _int_or_none(getattr(replica, "log_end_offset", None))
                              if live is not None else None)
    return logs


def _on_failed_dirs(broker, statuses, failed_copies) -> dict:
    """Per topic, the offline dirs holding its directory: an offline dir still on disk (the broker took it offline
    by itself), and the moved-aside contents of a dir the harness failed (``failed_copies``: dir -> topics)."""
    found: dict = {}
    for key, replica in (getattr(broker, "replicas", None) or {}).items():
        topic, d = _topic(key), _int_or_none(getattr(replica, "dir", None))
        if topic is not None and d is not None and statuses[d] == OFFLINE:
            found.setdefault(topic, set()).add(d)
    for d, topics in (failed_copies or {}).items():
        for topic in topics:
            found.setdefault(topic, set()).add(d)
    return {t: frozenset(ds) for t, ds in found.items()}


def broker_view(broker, failed_copies=None) -> BrokerView:
    statuses = tuple(_dir_status(d) for d in broker.dirs)
    return BrokerView(bool(broker.up), statuses, _logs(broker, statuses),
                      _on_failed_dirs(broker, statuses, failed_copies))


def registration_view(reg) -> RegistrationView | None:
    if reg is None:
        return None
    return RegistrationView(bool(reg.fenced), frozenset(d for d in reg.dirs if isinstance(d, int)),
                            bool(getattr(reg, "in_controlled_shutdown", False)))


def _opt_set(value):
    return None if value is None else frozenset(value)


def partition_view(part) -> PartitionView:
    leader = part.leader if part.leader is not None and part.leader >= 0 else -1
    return PartitionView(tuple(part.replicas), leader, frozenset(part.isr),
                         tuple(_entry(d) for d in part.directories),
                         tuple(getattr(part, "adding", ()) or ()), tuple(getattr(part, "removing", ()) or ()),
                         _opt_set(getattr(part, "elr", None)), _opt_set(getattr(part, "last_known_elr", None)))


JBOD_LEVEL = 17   # metadata.version 3.7-IV2's feature level (MetadataVersion.IBP_3_7_IV2, 3.7.0 to 4.4.0)


def _jbod(obs) -> bool | None:
    level = (getattr(obs.controller, "features", None) or {}).get("metadata.version")
    return None if level is None else level >= JBOD_LEVEL


def view_of(obs, brokers: int, acked: dict, read: dict, faulted=frozenset(), quiet: bool = False,
            retrying=frozenset(), failed_copies=None, unsure=None) -> View:
    """The view of a ClusterObservation: ``acked`` (topic -> offsets the producer was told are safe) and ``read``
    (topic -> records a consumer got from offset 0 at this point) come from the driver's clients; ``faulted``,
    ``quiet`` and ``retrying`` from the step (see View); ``failed_copies`` (broker -> dir -> topics) from the
    moved-aside contents of the dirs the harness failed; ``unsure`` (topic -> offsets) the records whose producer
    gave up without knowing their outcome."""
    failed_copies = failed_copies or {}
    regs = obs.controller.registrations
    registrations = tuple(registration_view(regs.get(b)) for b in range(brokers))
    partitions = {}
    for key, part in obs.controller.partitions.items():
        topic = _topic(key)
        if topic is not None:
            partitions[topic] = partition_view(part)
    topics = set(partitions) | set(acked) | set(read)
    unsure = unsure or {}
    data = {t: DataView(frozenset(acked.get(t, ())), read.get(t), frozenset(unsure.get(t, ()))) for t in topics}
    return View(tuple(broker_view(obs.brokers[b], failed_copies.get(b)) for b in range(brokers)), registrations,
                partitions, data, frozenset(faulted), quiet, frozenset(retrying), _jbod(obs))
