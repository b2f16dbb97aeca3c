"""The lemmas of KIP-112's proofs (proofs/properties.py LEMMAS) stated on the explicit model, each on its own
terms (the broker's inbox, copies and dirs, the controller's live set and records), not through the z3
vocabulary: the conformance check (proofs/conformance.py) compares each z3 lemma with its explicit statement on
every reachable state, and on states no search reaches (proofs/beyond.py), so that a z3 lemma weaker or stronger
than what it claims is noticed. No feature claims them: `explore` does not check them (they are facts of the
protocol core, KIP-928 and the other features aside; docs/proofs.md, section 3).
"""
from __future__ import annotations

from model.storage.state import (
    H_FOLLOWER, H_LEADER, H_NONE, H_STOPPED, LEADER_AND_ISR, LIVE_DIR, P_NONEXISTENT, SATURATED, STOP_REPLICA,
)
from model.spec.invariant import invariant


def _entries(broker):
    return [e for msg in broker.inbox if msg.kind == LEADER_AND_ISR for e in msg.body]


def _stopped(broker):
    return [p for msg in broker.inbox if msg.kind == STOP_REPLICA for p in msg.body]


def _has_record(state, p: int) -> bool:
    return state.controller.partitions[p].leader_epoch >= 0


@invariant(
    "lemma_requests_only_to_running_brokers", kind="state", symmetric=True,
    reads=("broker[*].inbox", "broker[*].up", "controller"),
    statement="A LeaderAndIsr entry or a StopReplica (delete=false) is in a broker's inbox only while the broker "
              "runs and the controller counts it as live.",
    reference="KafkaController (sendRequest to live brokers only); a crash empties the broker's channels",
)
def lemma_requests_only_to_running_brokers(model, state):
    for b, broker in enumerate(state.brokers):
        if (_entries(broker) or _stopped(broker)) and not (broker.up and state.controller.live >> b & 1):
            return f"broker {b} has a request in flight while it is down or not live for the controller"
    return None


@invariant(
    "lemma_requests_only_for_records", kind="state", symmetric=True, reads=("broker[*].inbox", "controller"),
    statement="A LeaderAndIsr entry names a partition with a leader-and-ISR record, and only a created partition "
              "has one.",
    reference="KafkaController: a LeaderAndIsr carries the partition's leader-and-ISR record",
)
def lemma_requests_only_for_records(model, state):
    for b, broker in enumerate(state.brokers):
        for e in _entries(broker):
            if not _has_record(state, e.partition):
                return f"broker {b} has a LeaderAndIsr entry for partition {e.partition}, which has no record"
    for p, part in enumerate(state.controller.partitions):
        if part.leader_epoch >= 0 and part.state == P_NONEXISTENT:
            return f"partition {p} has a record but is NonExistentPartition"
    return None


@invariant(
    "lemma_hosted_replicas_have_a_live_copy", kind="state", symmetric=True,
    reads=("broker[*].hosted", "broker[*].copies", "broker[*].dirs"),
    statement="A replica a broker leads, follows or has stopped has a copy of its log on a live (good or "
              "saturated) dir.",
    reference="ReplicaManager.makeLeaders/makeFollowers (a log found or created on a live dir); "
              "handleLogDirFailure (replicas on the failed dir go offline)",
)
def lemma_hosted_replicas_have_a_live_copy(model, state):
    for b, broker in enumerate(state.brokers):
        for p, hosted in enumerate(broker.hosted):
            if hosted in (H_LEADER, H_FOLLOWER, H_STOPPED) and not any(
                    broker.copies[p] >> d & 1 and LIVE_DIR[status] for d, status in enumerate(broker.dirs)):
                return f"broker {b} holds partition {p} with no copy of its log on a live dir"
    return None


@invariant(
    "lemma_down_broker_hosts_nothing", kind="state", symmetric=True, reads=("broker[*].up", "broker[*].hosted"),
    statement="A broker that is down hosts nothing.",
    reference="a crash or halt loses the broker's memory",
)
def lemma_down_broker_hosts_nothing(model, state):
    for b, broker in enumerate(state.brokers):
        if not broker.up and any(h != H_NONE for h in broker.hosted):
            return f"broker {b} is down but hosts a replica"
    return None


@invariant(
    "lemma_copies_only_of_partitions_with_a_record", kind="state", symmetric=True,
    reads=("broker[*].copies", "controller"),
    statement="No broker holds a copy of a partition that has no leader-and-ISR record.",
    reference="a log is created only by handling a LeaderAndIsr entry, which carries the partition's record",
)
def lemma_copies_only_of_partitions_with_a_record(model, state):
    for b, broker in enumerate(state.brokers):
        for p, mask in enumerate(broker.copies):
            if mask and not _has_record(state, p):
                return f"broker {b} holds a copy of partition {p}, which has no record"
    return None


@invariant(
    "lemma_new_replica_request_only_without_a_copy", kind="state", symmetric=True,
    reads=("broker[*].inbox", "broker[*].copies"),
    statement="A broker with a LeaderAndIsr entry isNewReplica=true in flight for a partition holds no copy of "
              "it.",
    reference="ReplicaStateMachine: isNewReplica=true only for a NewReplica, before the partition's first record "
              "reaches any broker",
)
def lemma_new_replica_request_only_without_a_copy(model, state):
    for b, broker in enumerate(state.brokers):
        for e in _entries(broker):
            if e.is_new and broker.copies[e.partition]:
                return f"broker {b} has isNewReplica=true in flight for partition {e.partition}, of which it holds a copy"
    return None


@invariant(
    "lemma_no_saturated_dir", kind="state", symmetric=True, reads=("broker[*].dirs",),
    statement="No dir is saturated (the protocol core never saturates one: KIP-928 is not in scope).",
    reference="docs/model.md 7.1-7.18 (no rule of the core saturates a dir)",
)
def lemma_no_saturated_dir(model, state):
    for b, broker in enumerate(state.brokers):
        if SATURATED in broker.dirs:
            return f"broker {b} has a saturated dir"
    return None


# z3 lemma id (proofs/properties.py LEMMAS) -> its explicit statement
LEMMAS = {
    "requests_only_to_running_brokers": lemma_requests_only_to_running_brokers.invariant,
    "requests_only_for_records": lemma_requests_only_for_records.invariant,
    "hosted_replicas_have_a_live_copy": lemma_hosted_replicas_have_a_live_copy.invariant,
    "down_broker_hosts_nothing": lemma_down_broker_hosts_nothing.invariant,
    "copies_only_of_partitions_with_a_record": lemma_copies_only_of_partitions_with_a_record.invariant,
    "new_replica_request_only_without_a_copy": lemma_new_replica_request_only_without_a_copy.invariant,
    "no_saturated_dir": lemma_no_saturated_dir.invariant,
}
