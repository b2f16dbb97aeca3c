"""KRaft mode's property of directory assignment under reassignment: at quiescence the metadata names the dir
each replica's log is on."""
from __future__ import annotations

from model.kraft.metadata import dir_name
from model.spec.invariant import invariant
from model.storage.broker import live_copy_dir
from model.storage.state import SERVING


@invariant(
    "kraft_directories_match_logs", kind="quiescent", symmetric=False,
    reads=("broker[*].up", "broker[*].loaded", "broker[*].applied", "broker[*].hosted", "broker[*].copies",
           "broker[*].dirs", "controller.log", "controller.partitions"),
    statement="When no assignment or message is in flight and every running broker applied the whole metadata log, "
              "every replica a running broker serves from a live dir is named by its Directories entry (UNASSIGNED "
              "only while its assignment is queued).",
    reference="KIP-858 (Directories, AssignReplicasToDirs); TopicDelta.localChanges; ReplicaManager.applyDelta "
              "(maybeUpdateTopicAssignment)",
)
def kraft_directories_match_logs(model, state):
    log = state.controller.log
    if any(broker.up and not (broker.loaded and broker.applied == len(log)) for broker in state.brokers):
        return None  # a broker still has records to apply (they may list its replicas' dirs)
    for b, broker in enumerate(state.brokers):
        if not broker.up:
            continue
        for p, part in enumerate(state.controller.partitions):
            if part.leader_epoch < 0 or b not in part.replicas or not SERVING[broker.hosted[p]]:
                continue
            actual = live_copy_dir(broker, p)
            named = part.dirs[part.replicas.index(b)]
            if actual >= 0 and named != actual:
                return (f"broker {b} serves partition {p} from dir {actual}, but its Directories entry is "
                        f"{dir_name(named)} and nothing is queued to change it")
    return None
