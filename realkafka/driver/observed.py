"""The real cluster's observation (realkafka.cluster's ClusterObservation) as a view (view.py): the same shape as
the model's projection, so one comparison and one set of checks serve both.

The harness names dirs by their index in a broker's ``log.dirs`` and Directories entries by a dir index or a
reserved name (``UNASSIGNED``, ``MIGRATING``, ``LOST``); a dir id it cannot place (a dir no broker lists any
more) is kept as its text, which never equals a dir index: a difference the comparison names. Topics are the
driver's (``t{p}``); a topic of the real cluster that is not the driver's (``__consumer_offsets``) is left out.
"""
from __future__ import annotations

from .view import (ABSENT, OFFLINE, ONLINE, RESERVED, BrokerView, DataView, LogView, PartitionView,
                   RegistrationView, View)


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
    if value is None:
        return "UNASSIGNED"
    if isinstance(value, int) or value in RESERVED:
        return value
    return str(value)


def _dir_status(d) -> str:
    if getattr(d, "configured", True) is False:
        return ABSENT
    return ONLINE if d.online else OFFLINE


def _int_or_none(value):
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _logs(broker) -> dict | None:
    replicas = getattr(broker, "replicas", None)
    if not broker.up or replicas is None:
        return None
    logs = {}
    for key, replica in replicas.items():
        topic = _topic(key)
        if topic is None:
            continue
        logs[topic] = LogView(_int_or_none(getattr(replica, "dir", None)),
                              _int_or_none(getattr(replica, "future", getattr(replica, "future_dir", None))),
                              _int_or_none(getattr(replica, "log_end_offset", getattr(replica, "log_end", None))))
    return logs


def _on_failed_dirs(broker) -> dict | None:
    """Per topic, the failed dirs whose (moved-aside) contents hold its directory: the harness lists what each
    failed dir holds on disk (``dirs[d].partitions``), None when it does not."""
    found: dict = {}
    for d, status in enumerate(broker.dirs):
        if status.online:
            continue
        held = getattr(status, "partitions", None)
        if held is None:
            return None
        for key in held:
            topic = _topic(key)
            if topic is not None:
                found.setdefault(topic, set()).add(d)
    return {t: frozenset(ds) for t, ds in found.items()}


def broker_view(broker) -> BrokerView:
    return BrokerView(bool(broker.up), tuple(_dir_status(d) for d in broker.dirs), _logs(broker),
                      _on_failed_dirs(broker))


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


def view_of(obs, brokers: int, acked: dict, read: dict, faulted=frozenset(), quiet: bool = False,
            retrying=frozenset()) -> View:
    """The view of a ClusterObservation: ``acked`` (topic -> offsets the producer was told are safe) and ``read``
    (topic -> records a consumer got from offset 0 at this point) come from the driver's clients; ``faulted``,
    ``quiet`` and ``retrying`` from the step (see View)."""
    broker_list = [obs.brokers[b] for b in range(brokers)]
    regs = obs.controller.registrations
    registrations = tuple(registration_view(regs.get(b) if hasattr(regs, "get") else regs[b]) for b in range(brokers))
    partitions = {}
    for key, part in obs.controller.partitions.items():
        topic = _topic(key)
        if topic is not None:
            partitions[topic] = partition_view(part)
    topics = set(partitions) | set(acked) | set(read)
    data = {t: DataView(frozenset(acked.get(t, ())), read.get(t)) for t in topics}
    return View(tuple(broker_view(b) for b in broker_list), registrations, partitions, data, frozenset(faulted),
                quiet, frozenset(retrying))
