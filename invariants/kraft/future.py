"""KRaft mode's property of intra-broker moves (model/kraft/future.py): at quiescence the metadata names the dir
each replica's log is in. (That a healthy dir goes offline only by its own failure is kraft-core's
``no_dir_failure_cascade``, invariants/kraft/quiescent.py.)"""
from __future__ import annotations

from model.kraft.disks import id_of
from model.kraft.metadata import dir_name
from model.spec.invariant import invariant
from model.storage.broker import live_copy_dir
from model.storage.state import OFFLINE


def log_dir(broker, p: int) -> int:
    """The dir of the broker's current log of p: its live copy's, else the lowest failed dir holding a copy, else
    -1 (no log)."""
    d = live_copy_dir(broker, p)
    if d >= 0:
        return d
    return next((d for d, status in enumerate(broker.dirs) if status == OFFLINE and broker.copies[p] >> d & 1), -1)


@invariant(
    "kraft_directories_name_the_log_dir", kind="quiescent", symmetric=True,  # dir symmetry renames Directories too
    statement="When nothing is in flight (no assignment queued or in flight, every running broker published the "
              "whole metadata log, no move under way), the Directories entry of every replica a running broker holds "
              "a log of names the dir that log is in (a failed one included).",
    reference="KIP-858 (Directories, AssignReplicasToDirs); ReplicaAlterLogDirsThread.removePartitions (KAFKA-16297)",
)
def kraft_directories_name_the_log_dir(model, state):
    parts = state.controller.partitions
    for b, broker in enumerate(state.brokers):
        if not broker.up:
            continue
        for p, part in enumerate(parts):
            if part.leader_epoch < 0 or b not in part.replicas:
                continue
            actual = log_dir(broker, p)
            named = part.dirs[part.replicas.index(b)]
            if actual >= 0 and named != id_of(broker, actual):
                return (f"partition {p}'s Directories entry for broker {b} is {dir_name(named)} but its log is on "
                        f"{dir_name(id_of(broker, actual))}")
    return None

