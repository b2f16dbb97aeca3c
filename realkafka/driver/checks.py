"""The violations a scenario may show, each defined once over the view shape (view.py) and so evaluated alike on
the model's projection and on the real cluster's observation: a check reads the views of the run so far (the last
is the step being judged) and says, in Kafka's words, what is wrong, or None.

A check marked ``quiet`` holds only when nothing is pending (the model's invariant is a quiescent one): it reads
``View.quiet``, which is the model's quiescence at that step on both sides (the real cluster's own is not
observable). ``invariants`` names the model's properties each check stands for: the scenario's expected violation
is the set of checks that its model run shows (plan.py), and the real cluster must show the same.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from .view import ABSENT, MIGRATING, ONLINE, UNASSIGNED, View, dir_text, tp


@dataclass(frozen=True)
class Check:
    id: str
    says: str                     # what it means, in a line
    invariants: tuple             # the model properties it stands for
    quiet: bool                   # judged only when nothing is pending
    judge: Callable[[Sequence[View]], "str | None"]

    def __call__(self, history: Sequence[View]) -> str | None:
        if self.quiet and not history[-1].quiet:
            return None
        return self.judge(history)


def _live_log(view: View, broker: int, topic: str):
    b = view.brokers[broker]
    if not b.up or b.logs is None:
        return None
    log = b.logs.get(topic)
    return log if log is not None and log.dir is not None else None


def _failed_copies(view: View, broker: int, topic: str) -> frozenset:
    failed = view.brokers[broker].on_failed_dirs
    return frozenset() if failed is None else failed.get(topic, frozenset())


def acked_record_gone(history: Sequence[View]) -> str | None:
    view = history[-1]
    for topic, data in sorted(view.data.items()):
        if not data.acked:
            continue
        need = max(data.acked) + 1
        part = view.partitions.get(topic)
        if part is not None and part.leader >= 0:
            log = _live_log(view, part.leader, topic)
            if log is not None and log.log_end is not None and log.log_end < need:
                return (f"{tp(topic)}'s acknowledged record at offset {need - 1} is gone: its leader, broker "
                        f"{part.leader}, serves a log on dir {log.dir} that ends at offset {log.log_end}")
        if data.read is not None and data.read < need and part is not None and part.leader >= 0:
            return (f"a consumer reading {tp(topic)} from offset 0 gets {data.read} record(s), though offset "
                    f"{need - 1} was acknowledged")
    return None


def _previous_up(history: Sequence[View], broker: int):
    for view in reversed(history[:-1]):
        b = view.brokers[broker]
        if b.up and b.logs is not None:
            return view
    return None


def replica_recreated_over_failed_dir(history: Sequence[View]) -> str | None:
    view = history[-1]
    for broker, b in enumerate(view.brokers):
        for topic in sorted(b.logs or {}):
            log = _live_log(view, broker, topic)
            failed = _failed_copies(view, broker, topic)
            if log is None or not failed or log.dir in failed:
                continue
            before = _previous_up(history, broker)
            old = before.brokers[broker].logs.get(topic) if before is not None else None
            if old is not None and old.dir == log.dir:
                continue  # the same log as before
            if old is not None and old.future_dir == log.dir and log.future_dir != log.dir:
                continue  # the -future log was promoted (renamed), not created
            return (f"broker {broker} created a new log of {tp(topic)} on dir {log.dir} while its copy on failed "
                    f"dir(s) {sorted(failed)} is out of reach")
    return None


def leader_on_failed_dir(history: Sequence[View]) -> str | None:
    view = history[-1]
    for topic, part in sorted(view.partitions.items()):
        leader = part.leader
        if leader < 0 or not view.brokers[leader].up or view.brokers[leader].logs is None:
            continue
        if _live_log(view, leader, topic) is None:
            failed = _failed_copies(view, leader, topic)
            where = f"only on failed dir(s) {sorted(failed)}" if failed else "on no live dir"
            return f"{tp(topic)}'s leader, broker {leader}, holds its log {where}"
    return None


def _online_for(entry, reg) -> bool:
    """DirectoryId.isOnline for the registration (BrokerRegistration.hasOnlineDir)."""
    if entry in (UNASSIGNED, MIGRATING):
        return True
    if isinstance(entry, str):
        return False
    return not reg.dirs or entry in reg.dirs


def leader_not_acceptable(history: Sequence[View]) -> str | None:
    view = history[-1]
    for topic, part in sorted(view.partitions.items()):
        leader = part.leader
        if leader < 0:
            continue
        reg = view.registrations[leader]
        if reg is None or reg.fenced:
            return f"{tp(topic)}'s leader, broker {leader}, is {'unregistered' if reg is None else 'fenced'}"
        entry = part.directory(leader)
        if not _online_for(entry, reg):
            return (f"{tp(topic)}'s leader, broker {leader}, has Directories entry {dir_text(entry)}, which is not "
                    f"among its registered dirs {sorted(reg.dirs)}")
    return None


def directories_name_wrong_dir(history: Sequence[View]) -> str | None:
    view = history[-1]
    if view.jbod is False:
        return None     # before metadata.version 3.7-IV2 every entry is MIGRATING by Kafka's design
    for topic, part in sorted(view.partitions.items()):
        for broker in part.replicas:
            log = _live_log(view, broker, topic)
            if log is not None and part.directory(broker) != log.dir:
                return (f"broker {broker} holds {tp(topic)}'s log on dir {log.dir}, but its Directories entry is "
                        f"{dir_text(part.directory(broker))}")
    return None


def directories_name_the_log_dir(history: Sequence[View]) -> str | None:
    view = history[-1]
    if view.jbod is False:
        return None     # before metadata.version 3.7-IV2 every entry is MIGRATING by Kafka's design
    for topic, part in sorted(view.partitions.items()):
        for broker in part.replicas:
            b = view.brokers[broker]
            if not b.up or b.logs is None:
                continue
            log = _live_log(view, broker, topic)
            held = {log.dir} if log is not None else set(_failed_copies(view, broker, topic))
            if len(held) == 1 and part.directory(broker) not in held:
                return (f"broker {broker} holds {tp(topic)}'s log on {'' if log else 'failed '}dir {min(held)}, but "
                        f"its Directories entry is {dir_text(part.directory(broker))}")
    return None


def offline_replica_shown_online(history: Sequence[View]) -> str | None:
    view = history[-1]
    for topic, part in sorted(view.partitions.items()):
        for broker in part.replicas:
            b = view.brokers[broker]
            if not b.up or b.logs is None or _live_log(view, broker, topic) is not None:
                continue
            failed = _failed_copies(view, broker, topic)
            reg = view.registrations[broker]
            if failed and reg is not None and not reg.fenced and _online_for(part.directory(broker), reg):
                return (f"broker {broker}'s replica of {tp(topic)} is on failed dir(s) {sorted(failed)}, but the "
                        f"metadata shows it online (Directories: {dir_text(part.directory(broker))}, registered "
                        f"dirs {sorted(reg.dirs)})")
    return None


def healthy_dir_offline(history: Sequence[View]) -> str | None:
    view = history[-1]
    for broker, b in enumerate(view.brokers):
        for d, status in enumerate(b.dirs):
            if status not in (ONLINE, ABSENT) and (broker, d) not in view.faulted:
                return f"broker {broker}'s dir {d} is offline, though no step failed it"
    return None


def _could_lead(view: View, broker: int, topic: str, need: int) -> bool:
    """An ISR (or ELR) member that could lead the partition with its data: running, registered and active
    (unfenced, not in controlled shutdown), with a live log on a dir online for its registration that holds every
    acknowledged record (``need``: the offset past the last one)."""
    reg = view.registrations[broker]
    if reg is None or reg.fenced or reg.in_controlled_shutdown:
        return False
    log = _live_log(view, broker, topic)
    if log is None or not _online_for(log.dir, reg):
        return False
    return need == 0 or (log.log_end is not None and log.log_end >= need)


def leaderless_with_live_isr_copy(history: Sequence[View]) -> str | None:
    view = history[-1]
    for topic, part in sorted(view.partitions.items()):
        if part.leader >= 0:
            continue
        acked = view.data.get(topic)
        need = max(acked.acked) + 1 if acked is not None and acked.acked else 0
        # the replicas an election may pick (PartitionChangeBuilder.isValidNewLeader, canElectLastKnownLeader): the
        # ISR; the ELR while the ISR is empty; the last known leader while both are
        members, kind = ((part.isr, "ISR") if part.isr else (part.elr, "ELR") if part.elr
                         else (part.last_known_elr or frozenset(), "last known leader"))
        able = [b for b in sorted(members) if _could_lead(view, b, topic, need)]
        if able:
            b = able[0]
            return (f"{tp(topic)} has no leader although {kind} member broker {b} runs active and holds its log on "
                    f"dir {_live_log(view, b, topic).dir}, online for its registration")
    return None


def assignments_never_drain(history: Sequence[View]) -> str | None:
    view = history[-1]
    if view.retrying:
        return (f"broker(s) {sorted(view.retrying)} send AssignReplicasToDirs without end: the controller refuses an "
                f"entry and the broker retries it")
    return None


CHECKS: dict[str, Check] = {c.id: c for c in (
    Check("acked_record_gone", "an acknowledged record is no longer served: the leader's log ends below it, or a "
          "consumer reading from offset 0 does not get it",
          ("no_acked_record_lost", "reads_below_hw_are_committed", "consumer_sees_no_loss_or_duplicate"), False,
          acked_record_gone),
    Check("replica_recreated_over_failed_dir", "a broker created a new log of a partition on a live dir while its "
          "copy sits on a failed dir (the moved-aside dir still holds the partition's directory)",
          ("no_recreate_over_offline_copy",), False, replica_recreated_over_failed_dir),
    Check("leader_on_failed_dir", "a running partition leader holds no live log of it (its log is on a failed dir)",
          ("leader_is_live_isr_member",), True, leader_on_failed_dir),
    Check("leader_not_acceptable", "a partition's leader would not pass LeaderAcceptor now: fenced, or its "
          "Directories entry is not among its registered dirs",
          ("kraft_leader_passes_leader_acceptor", "kraft_leadership_as_leader_acceptor_allows"), True,
          leader_not_acceptable),
    Check("directories_name_wrong_dir", "Directories names another dir (or UNASSIGNED) for a replica whose log is "
          "on a live dir", ("kraft_directories_match_actual_dir",), True, directories_name_wrong_dir),
    Check("directories_name_the_log_dir", "Directories names another dir than the one holding the replica's log, a "
          "failed dir included", ("kraft_directories_name_the_log_dir",), True, directories_name_the_log_dir),
    Check("offline_replica_shown_online", "a replica on a failed dir is shown online by the metadata (registered, "
          "unfenced, its Directories entry online)", ("metadata_shows_offline_replicas",), True,
          offline_replica_shown_online),
    Check("leaderless_with_live_isr_copy", "a partition has no leader although a replica an election may pick (an "
          "ISR member; an ELR member while the ISR is empty; the last known leader while both are) runs active with a "
          "live log of it, on a dir online for its registration, holding every acknowledged record",
          ("no_leaderless_partition_with_live_isr_copy",), True, leaderless_with_live_isr_copy),
    Check("assignments_never_drain", "a broker retries an assignment the controller refuses, for ever",
          ("kraft_assignments_drain", "kraft_assignments_drained_or_down"), False, assignments_never_drain),
    Check("healthy_dir_offline", "a dir went offline that no step failed", ("no_dir_failure_cascade",), False,
          healthy_dir_offline),
)}


def judge(history: Sequence[View]) -> dict[str, str]:
    """Every check that fails at the last view: id -> what it says."""
    found = {}
    for check in CHECKS.values():
        why = check(history)
        if why is not None:
            found[check.id] = why
    return found
