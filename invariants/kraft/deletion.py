"""KRaft mode's property of topic deletion: a re-created topic is hosted (KAFKA-16157). Queued directory
assignments draining (KAFKA-16886, KAFKA-17190) is kraft-core's kraft_assignments_drain (invariants/kraft/liveness.py)."""
from __future__ import annotations

from model.spec.invariant import invariant
from model.storage.state import H_OFFLINE


@invariant(
    "kraft_recreated_topic_hosted", kind="state", symmetric=True,
    reads=("broker[*].up", "broker[*].loaded", "broker[*].applied", "broker[*].hosted", "broker[*].topics",
           "controller.log", "controller.partitions"),
    statement="A running broker that has applied the whole metadata log does not hold a replica of an existing "
              "partition Offline under another topic id than the partition's (a re-created topic is hosted, or "
              "refused for its own topic).",
    reference="ReplicaManager.getOrCreatePartition (HostedPartition.Offline with its topic id); KAFKA-16157",
)
def kraft_recreated_topic_hosted(model, state):
    log = state.controller.log
    for b, broker in enumerate(state.brokers):
        if not (broker.up and broker.loaded and broker.applied == len(log)):
            continue
        for p, part in enumerate(state.controller.partitions):
            if (part.leader_epoch >= 0 and b in part.replicas and broker.hosted[p] == H_OFFLINE
                    and broker.topics[p] != part.topic):
                return (f"broker {b} applied the whole metadata log but holds partition {p} Offline under topic id "
                        f"{broker.topics[p]}, while the partition's topic id is {part.topic}: the re-created "
                        "topic is never hosted there")
    return None
