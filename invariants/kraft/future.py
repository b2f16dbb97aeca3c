"""KRaft mode's properties of intra-broker moves (model/kraft/future.py): at quiescence the metadata names the dir
each replica's log is in, and a healthy dir goes offline only by a dir failure of the environment."""
from __future__ import annotations

from model.kraft.metadata import dir_name
from model.spec.invariant import invariant
from model.storage.broker import live_copy_dir
from model.storage.state import B_DIR_FAILURES, LIVE_DIR, OFFLINE


def log_dir(broker, p: int) -> int:
    """The dir of the broker's current log of p: its live copy's, else the lowest failed dir holding a copy, else
    -1 (no log)."""
    d = live_copy_dir(broker, p)
    if d >= 0:
        return d
    return next((d for d, status in enumerate(broker.dirs) if status == OFFLINE and broker.copies[p] >> d & 1), -1)


@invariant(
    "kraft_directories_name_the_log_dir", kind="quiescent", symmetric=False,
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
            if part.leader_epoch < 0 or b not in model.assignments[p]:
                continue
            actual = log_dir(broker, p)
            named = part.dirs[model.assignments[p].index(b)]
            if actual >= 0 and named != actual:
                return (f"partition {p}'s Directories entry for broker {b} is {dir_name(named)} but its log is on "
                        f"dir {actual}")
    return None


@invariant(
    "healthy_dir_never_goes_offline", kind="transition", symmetric=True,
    reads=("broker[*].dirs", "budget"),
    statement="A log dir goes offline only by a dir failure of the environment (DirFail, one dir each): no step of "
              "the brokers takes a healthy dir offline (no cascade).",
    reference="KIP-858 (a dir failure affects that dir only); KAFKA-16082",
)
def healthy_dir_never_goes_offline(model, state, action, after):
    gone = [(b, d) for b, (old, new) in enumerate(zip(state.brokers, after.brokers)) if old is not new
            for d, (x, y) in enumerate(zip(old.dirs, new.dirs)) if LIVE_DIR[x] and y == OFFLINE]
    spent = after.budget[B_DIR_FAILURES] - state.budget[B_DIR_FAILURES]
    if len(gone) > spent:
        return f"dir(s) {[f'{d} of broker {b}' for b, d in gone]} went offline without a dir failure"
    return None
