"""Every invariant holds on real reachable states/steps and fails on a hand-made state/step that breaks it.

Hand-made states start from real states (model.step from the initial state) and change only the fields that
matter with NamedTuple._replace, so the tests keep working when the state grows new fields.
"""
from __future__ import annotations

import re

import pytest

import invariants
from explorer.search import Checker
from model.storage.state import (
    D_DONE, D_QUEUED, GOOD, H_FOLLOWER, H_LEADER, H_OFFLINE, H_SATURATED, NO_LEADER, OFFLINE, P_NONEXISTENT,
    R_DELETION_STARTED,
    R_DELETION_SUCCESSFUL, REMOVED, SATURATED, PartitionMeta, replace_at,
)

from support.helpers import created_topic, custom_model, deliver_all, init, model_of, step, with_broker
from support.breaking_cases import broken_in
from explorer.catalog import builtin_invariants, select_invariants

EXPECTED_IDS = {
    "no_recreate_with_bad_dir": "transition",
    "create_only_on_good_dir": "transition",
    "no_serving_from_offline_dir": "state",
    "offline_broker_serves_nothing": "state",
    "offline_gauges_match": "state",
    "leader_is_live_isr_member": "quiescent",
    "metadata_shows_offline_replicas": "quiescent",
    "no_acked_record_lost": "state",
    "isr_logs_agree_below_hw": "state",
    "consumer_sees_no_loss_or_duplicate": "state",
    "reads_below_hw_are_committed": "state",
    "no_serving_from_saturated_dir": "state",
    "saturated_dir_can_free_space": "state",
    "deleted_replica_holds_no_data": "state",
    "controller_transitions_valid": "transition",
}


def inv(id_: str):
    (found,) = select_invariants([id_])
    return found



def with_partition(state, p, **fields):
    c = state.controller
    return state._replace(controller=c._replace(partitions=replace_at(c.partitions, p, c.partitions[p]._replace(**fields))))


def check(id_, model, *args):
    return inv(id_).check(model, *args)


# ---- real states used by several tests ------------------------------------------------------------

@pytest.fixture(scope="module")
def small():
    return model_of("small")


@pytest.fixture(scope="module")
def kip928():
    """small with KIP-928's disk space (capacity 3, the reserved file takes one unit) and topic deletion."""
    return model_of("small", saturation=True, deletion=True)


@pytest.fixture(scope="module")
def reassign():
    """Two brokers x 2 dirs, one partition with one replica (on broker 0) that may move to broker 1."""
    return custom_model(brokers=2, dirs=2, partitions=1, rf=1, reassignment=True, max_records=1)


@pytest.fixture(scope="module")
def healthy(small):
    """Partition 0 on brokers 0, 1, 2 (leader 0), every message delivered."""
    s = created_topic(small)
    assert small.is_quiescent(s)
    assert [b.hosted[0] for b in s.brokers] == [H_LEADER, H_FOLLOWER, H_FOLLOWER]
    return s


@pytest.fixture(scope="module")
def replicated(small, healthy):
    """A record produced at leader 0 (leader epoch 0), fetched by brokers 1 and 2: committed, acknowledged, and
    read by the consumer. Each intermediate state is kept: [healthy, produced, fetched once, fetched twice,
    consumed]. (The small preset has no explicit consumer: the steps are taken with one.)"""
    with_consumer = model_of("small", consumer=True)
    states = [healthy]
    for name, *args in (("Produce", 0, 0), ("ReplicaFetch", 1, 0), ("ReplicaFetch", 2, 0), ("Consume", 0, 0)):
        states.append(step(with_consumer, states[-1], name, *args))
    last = states[-1]
    assert [b.logs[0] for b in last.brokers] == [(0,), (0,), (0,)]
    assert last.brokers[0].hw[0] == 1 and last.committed == ((0,),) and last.acked == (0b1,)
    assert last.consumed == ((0,),)
    return states


@pytest.fixture(scope="module")
def leader_dir_failed(small, healthy):
    """KIP-112 scenario 2 at its end: the leader's dir failed at runtime and everything was delivered."""
    s = deliver_all(small, step(small, healthy, "DirFail", 0, 0))
    assert small.is_quiescent(s)
    return s


@pytest.fixture(scope="module")
def bootstrap_dir_failed(small, healthy):
    """KIP-112 scenario 1 at its end: the leader's dir failed while it was down; it restarted."""
    s = deliver_all(small, step(small, healthy, "BrokerCrash", 0))
    s = step(small, step(small, s, "DirFail", 0, 0), "BrokerRestart", 0)
    s = deliver_all(small, s)
    assert small.is_quiescent(s)
    return s


# ---- the registry -----------------------------------------------------------------------------------

def test_registry_has_at_least_the_seven_kip112_invariants():
    registered = {i.id: i.kind for i in builtin_invariants()}
    missing = set(EXPECTED_IDS) - set(registered)
    assert not missing, f"invariants missing from the registry: {missing}"
    for id_, kind in EXPECTED_IDS.items():
        assert registered[id_] == kind, id_


def test_invariant_ids_are_unique_and_kinds_known():
    ids = [i.id for i in builtin_invariants()]
    assert len(ids) == len(set(ids))
    assert all(i.kind in invariants.KINDS for i in builtin_invariants())


@pytest.mark.parametrize("invariant", builtin_invariants(), ids=lambda i: i.id)
def test_every_invariant_has_a_statement_and_a_kip_or_kafka_reference(invariant):
    assert invariant.statement.strip(), invariant.id
    assert len(invariant.statement.split()) >= 5, "a statement should be a sentence"
    # "KIP-112 ...", or a Kafka class/method such as LogManager.getOrCreateLog.
    assert re.search(r"\bKIP-\d+\b|\b[A-Z][a-z]+(?:[A-Z][a-z]+)+(?:\.\w+)?", invariant.reference), invariant.reference
    assert callable(invariant.check)


def test_select_returns_all_by_default_and_rejects_unknown_ids():
    assert [i.id for i in select_invariants()] == [i.id for i in builtin_invariants()
                                                   if i.kind in invariants.SAFETY_KINDS]
    assert [i.id for i in select_invariants(["offline_gauges_match"])] == ["offline_gauges_match"]
    with pytest.raises(KeyError):
        select_invariants(["no_such_invariant"])


# ---- holds on real states and steps -------------------------------------------------------------------

def test_no_recreate_with_bad_dir_holds_when_kip112_refuses(small, healthy):
    """Scenario 1's critical step: the restarted broker with an offline dir gets isNewReplica=false."""
    s = deliver_all(small, step(small, healthy, "BrokerCrash", 0))
    s = step(small, step(small, s, "DirFail", 0, 0), "BrokerRestart", 0)
    s = step(small, s, "ControllerBrokerStartup", 0)
    head = s.brokers[0].inbox[0]
    assert head.body[0].is_new is False and OFFLINE in s.brokers[0].dirs  # the invariant's premise
    action, after = small.step(s, "BrokerLeaderAndIsr", (0,))
    assert after.brokers[0].copies == s.brokers[0].copies  # nothing created
    assert check("no_recreate_with_bad_dir", small, s, action, after) is None


def test_no_recreate_with_bad_dir_holds_for_a_new_replica_next_to_an_offline_dir(small):
    s = step(small, init(small), "CreateTopic", 0)
    s = step(small, s, "DirFail", 0, 0)  # before broker 0 handled the isNewReplica=true request
    action, after = small.step(s, "BrokerLeaderAndIsr", (0,))
    assert after.brokers[0].copies[0] == 0b10  # created on the good dir 1, as KIP-112 allows
    assert check("no_recreate_with_bad_dir", small, s, action, after) is None
    assert check("create_only_on_good_dir", small, s, action, after) is None


def test_create_only_on_good_dir_holds_on_topic_creation(small):
    s = step(small, init(small), "CreateTopic", 0)
    for b in range(3):
        action, after = small.step(s, "BrokerLeaderAndIsr", (b,))
        assert after.brokers[b].copies[0] != s.brokers[b].copies[0]  # a replica was created
        assert check("create_only_on_good_dir", small, s, action, after) is None
        s = after


def test_no_serving_from_offline_dir_holds(small, healthy, leader_dir_failed):
    assert check("no_serving_from_offline_dir", small, healthy) is None
    s = step(small, healthy, "DirFail", 0, 0)  # the broker stops serving at once
    assert s.brokers[0].hosted[0] == H_OFFLINE
    assert check("no_serving_from_offline_dir", small, s) is None
    assert check("no_serving_from_offline_dir", small, leader_dir_failed) is None


def test_offline_broker_serves_nothing_holds(small, healthy):
    s = step(small, healthy, "BrokerCrash", 1)
    assert not s.brokers[1].up
    assert check("offline_broker_serves_nothing", small, s) is None


def test_offline_gauges_match_holds(small, healthy, leader_dir_failed, bootstrap_dir_failed):
    for s in (healthy, step(small, healthy, "DirFail", 0, 0), leader_dir_failed, bootstrap_dir_failed):
        assert check("offline_gauges_match", small, s) is None
    assert leader_dir_failed.brokers[0].hosted[0] == H_OFFLINE  # a non-zero gauge was checked


def test_leader_is_live_isr_member_holds(small, healthy, leader_dir_failed, bootstrap_dir_failed):
    for s in (healthy, leader_dir_failed, bootstrap_dir_failed):
        assert small.is_quiescent(s)
        assert s.controller.partitions[0].leader != NO_LEADER
        assert check("leader_is_live_isr_member", small, s) is None


def test_metadata_shows_offline_replicas_holds(small, healthy, leader_dir_failed, bootstrap_dir_failed):
    for s in (healthy, leader_dir_failed, bootstrap_dir_failed):
        assert check("metadata_shows_offline_replicas", small, s) is None
    assert all(b.meta[0].offline == 0b001 for b in bootstrap_dir_failed.brokers)


DURABILITY = ("no_acked_record_lost", "isr_logs_agree_below_hw", "consumer_sees_no_loss_or_duplicate",
              "reads_below_hw_are_committed")


@pytest.mark.parametrize("id_", DURABILITY)
def test_durability_invariants_hold_along_the_data_path(small, replicated, id_):
    for s in replicated:
        assert check(id_, small, s) is None


@pytest.mark.parametrize("id_", DURABILITY)
def test_durability_invariants_hold_after_a_clean_failover(small, replicated, id_):
    """The leader dies after the record was acknowledged; an ISR member that has it takes over."""
    s = deliver_all(small, step(small, replicated[-1], "BrokerCrash", 0))
    assert s.controller.partitions[0].leader == 1 and s.brokers[1].hosted[0] == H_LEADER
    assert s.brokers[1].logs[0] == (0,) and s.acked == (0b1,)
    assert check(id_, small, s) is None


def test_durability_invariants_hold_after_a_follower_dir_failure(small, replicated):
    """KIP-112 scenario 3 with data: a follower's dir fails at runtime; its log is gone, the ISR shrinks."""
    s = deliver_all(small, step(small, replicated[-1], "DirFail", 1, 0))
    assert s.brokers[1].logs[0] == () and s.controller.partitions[0].isr == 0b101
    for id_ in DURABILITY:
        assert check(id_, small, s) is None


def test_no_acked_record_lost_lapses_for_a_wiped_partition(small, replicated):
    broken = _acked_record_missing(small)[0]
    assert check("no_acked_record_lost", small, broken) is not None
    assert check("no_acked_record_lost", small, broken._replace(wiped=0b1)) is None
    # The same for the consumer's guarantee.
    read_wrong = _consumer_read_another_record(small)[0]
    assert check("consumer_sees_no_loss_or_duplicate", small, read_wrong._replace(wiped=0b1)) is None
    # ... and for what a leader would serve.
    serves_wrong = _leader_serves_another_record_below_hw(small)[0]
    assert check("reads_below_hw_are_committed", small, serves_wrong._replace(wiped=0b1)) is None


def test_no_acked_record_lost_ignores_a_partition_without_a_serving_leader(small, replicated):
    broken = _acked_record_missing(small)[0]
    # Down, hosting it as a follower, or at another leader epoch than ZooKeeper's: not a leader to check.
    assert check("no_acked_record_lost", small, with_broker(broken, 0, up=False)) is None
    assert check("no_acked_record_lost", small, with_broker(broken, 0, hosted=(H_FOLLOWER,))) is None
    assert check("no_acked_record_lost", small, with_partition(broken, 0, leader_epoch=1)) is None
    assert check("no_acked_record_lost", small, with_partition(broken, 0, leader=NO_LEADER)) is None
    # A stale leader is not checked by no_acked_record_lost (reads_below_hw_are_committed covers what it serves).
    stale = _stale_leader_serves_another_record(small)
    assert check("no_acked_record_lost", small, *stale) is None
    assert check("reads_below_hw_are_committed", small, *stale) is not None


def test_no_acked_record_lost_ignores_committed_records_that_were_not_acknowledged(small, replicated):
    broken = _acked_record_missing(small)[0]
    assert check("no_acked_record_lost", small, broken._replace(acked=(0,))) is None


def test_isr_logs_agree_below_hw_ignores_entries_at_or_above_the_hw_and_non_members(small, replicated):
    produced, fetched_twice = replicated[1], replicated[3]
    # Above the HW (0 after Produce), a follower may hold anything.
    assert check("isr_logs_agree_below_hw", small, with_broker(produced, 1, logs=((5,),))) is None
    # A replica outside the ISR may diverge below the HW: it truncates before it rejoins.
    outside = with_partition(with_broker(fetched_twice, 2, logs=((5,),)), 0, isr=0b011)
    assert check("isr_logs_agree_below_hw", small, outside) is None
    # A shorter member agrees on every entry it holds.
    assert check("isr_logs_agree_below_hw", small, with_broker(fetched_twice, 2, logs=((),))) is None


def test_durability_messages_name_partition_offset_and_epochs(small):
    message = check("no_acked_record_lost", small, *_acked_record_replaced(small))
    assert "partition 0" in message and "leader 0" in message and "offset 0" in message
    assert "leader epoch 3" in message and "leader epoch 0" in message
    message = check("isr_logs_agree_below_hw", small, *_isr_member_diverges_below_hw(small))
    assert "partition 0" in message and "member 1" in message and "offset 0" in message and "HW 1" in message
    message = check("consumer_sees_no_loss_or_duplicate", small, *_consumer_read_a_duplicate(small))
    assert "partition 0" in message and "offset 1" in message and "no committed record" in message


def test_quiescent_invariants_are_not_checked_while_messages_are_in_flight(small, healthy):
    s = step(small, healthy, "DirFail", 0, 0)
    assert not small.is_quiescent(s)
    # The metadata is stale (the controller has not heard of the failure yet) ...
    assert check("metadata_shows_offline_replicas", small, s) is not None
    # ... but the checker looks at quiescent invariants only in quiescent states.
    assert Checker(small, select_invariants()).check_state(s) == []


# ---- breaks on hand-made states and steps ------------------------------------------------------------------

def _break_no_recreate(small):
    """Broker 0 has an offline dir and creates partition 0 for a request with isNewReplica=false."""
    s = step(small, init(small), "CreateTopic", 0)
    s = step(small, s, "DirFail", 0, 0)
    action, after = small.step(s, "BrokerLeaderAndIsr", (0,))
    head = s.brokers[0].inbox[0]
    not_new = head._replace(body=tuple(e._replace(is_new=False) for e in head.body))
    before = with_broker(s, 0, inbox=(not_new,) + s.brokers[0].inbox[1:])
    return before, action, after


def _break_create_on(status):
    def make(small):
        s = step(small, init(small), "CreateTopic", 0)
        action, after = small.step(s, "BrokerLeaderAndIsr", (0,))
        created_on = after.brokers[0].copies[0] & ~s.brokers[0].copies[0]
        assert created_on == 0b01
        before = with_broker(s, 0, dirs=replace_at(s.brokers[0].dirs, 0, status))
        return before, action, after
    return make


def _serving_from_offline_dir(small):
    s = created_topic(small)
    return (with_broker(s, 0, dirs=replace_at(s.brokers[0].dirs, 0, OFFLINE)),)


def _serving_with_no_copy(small):
    s = created_topic(small)
    return (with_broker(s, 1, copies=(0,)),)


def _down_broker_hosting(small):
    s = created_topic(small)
    return (with_broker(s, 1, up=False),)


def _gauge_counts_a_live_replica(small):
    s = created_topic(small)
    return (with_broker(s, 1, hosted=(H_OFFLINE,)),)  # its copy is on a good dir


def _gauge_misses_an_unserved_replica(small):
    s = created_topic(small)
    return (with_broker(s, 1, hosted=(H_FOLLOWER,), dirs=(OFFLINE, GOOD)),)  # its copy is on dir 0


def _running_with_every_dir_offline(small):
    s = created_topic(small)
    return (with_broker(s, 2, hosted=(H_OFFLINE,), dirs=(OFFLINE, OFFLINE)),)


def _quiescent(make):
    def made(small):
        (s,) = make(small)
        assert small.is_quiescent(s), "a hand-made state for a quiescent invariant must be quiescent"
        return (s,)
    return made


@_quiescent
def _leader_not_in_isr(small):
    return (with_partition(created_topic(small), 0, isr=0b110),)


@_quiescent
def _leader_down(small):
    s = created_topic(small)
    s = s._replace(brokers=replace_at(s.brokers, 0, small.crashed(s.brokers[0])))
    return (s._replace(controller=s.controller._replace(live=0b110)),)


@_quiescent
def _leader_without_live_copy(small):
    s = created_topic(small)
    return (with_broker(s, 0, dirs=(OFFLINE, GOOD), hosted=(H_OFFLINE,)),)


@_quiescent
def _metadata_wrong_offline(small):
    s = created_topic(small)
    return (with_broker(s, 2, meta=(PartitionMeta(0, 0b111, 0b010),)),)


@_quiescent
def _metadata_missing(small):
    s = created_topic(small)
    return (with_broker(s, 2, meta=(None,)),)


@_quiescent
def _metadata_misses_a_dead_dir(small):
    s = created_topic(small)
    return (with_broker(s, 1, dirs=(OFFLINE, GOOD), hosted=(H_OFFLINE,)),)  # nobody told the controller


def _replicated(small):
    """Leader 0 with a record fetched by brokers 1 and 2: HW 1, committed and acknowledged (a real state)."""
    s = step(small, created_topic(small), "Produce", 0, 0)
    s = step(small, step(small, s, "ReplicaFetch", 1, 0), "ReplicaFetch", 2, 0)
    assert s.acked == (0b1,) and s.committed == ((0,),) and s.brokers[0].hw[0] == 1
    return s


def _acked_record_missing(small):
    """The serving leader's log is empty (a re-created replica) while offset 0 was acknowledged."""
    return (with_broker(_replicated(small), 0, logs=((),)),)


def _acked_record_replaced(small):
    """The serving leader holds another record (leader epoch 3) at the acknowledged offset."""
    return (with_broker(_replicated(small), 0, logs=((3,),)),)


def _acked_record_missing_at_a_new_leader(small):
    """After a clean failover to broker 1, broker 1 (the leader in ZooKeeper at its epoch) lacks the record."""
    s = deliver_all(small, step(small, _replicated(small), "BrokerCrash", 0))
    assert s.controller.partitions[0].leader == 1 and s.brokers[1].hosted[0] == H_LEADER
    return (with_broker(s, 1, logs=((),)),)


def _isr_member_diverges_below_hw(small):
    """ISR member 1 has another record than leader 0 at offset 0, below the HW 1."""
    return (with_broker(_replicated(small), 1, logs=((1,),)),)


def _leader_diverges_from_the_isr_below_hw(small):
    """Leader 0's entry below its HW differs from what both followers hold."""
    return (with_broker(_replicated(small), 0, logs=((2,),)),)


def _isr_member_longer_but_diverging(small):
    """A member holding more entries than the leader agrees above the HW but not below it."""
    return (with_broker(_replicated(small), 2, logs=((4, 4),)),)


def _consumer_read_a_duplicate(small):
    """The consumer read the one committed record twice."""
    return (_replicated(small)._replace(consumed=((0, 0),)),)


def _consumer_read_another_record(small):
    """The consumer read a record (leader epoch 1) that is not the committed one at offset 0."""
    return (_replicated(small)._replace(consumed=((1,),)),)


def _consumer_read_an_uncommitted_record(small):
    """The consumer read past the HW: a record that never became committed."""
    s = step(small, created_topic(small), "Produce", 0, 0)
    assert s.committed == ((),)
    return (s._replace(consumed=((0,),)),)


def _consumer_skipped_a_record(small):
    """Committed history [epoch 0, epoch 1]; the consumer read only the second (a gap at offset 0)."""
    return (_replicated(small)._replace(committed=((0, 1),), consumed=((1,),)),)


def _leader_serves_another_record_below_hw(small):
    """The leader holds, below its HW, another record (leader epoch 2) than the committed one."""
    return (with_broker(_replicated(small), 0, logs=((2,),)),)


def _leader_hw_past_the_committed_history(small):
    """The leader's HW (1) is past every committed record: it would serve a record never committed."""
    s = step(small, created_topic(small), "Produce", 0, 0)
    assert s.committed == ((),) and s.brokers[0].hw[0] == 0
    return (with_broker(s, 0, hw=(1,)),)


def _stale_leader_serves_another_record(small):
    """Broker 1 still leads at an old leader epoch (not the leader in ZooKeeper) and would serve, below its HW,
    another record: any consumer may read from it."""
    s = _replicated(small)
    return (with_broker(s, 1, hosted=(H_LEADER,), epoch=(s.brokers[1].epoch[0] - 1,), hw=(1,), logs=((7,),)),)


def _on(fixture):
    """The maker's hand-made input is for the model of that fixture (default: small)."""
    def mark(make):
        make.fixture = fixture
        return make
    return mark


def _saturated_leader_dir(kip928):
    """Broker 0's dir 0 filled up and saturated (a real state): its replica there is no longer served."""
    s = created_topic(kip928)
    s = step(kip928, step(kip928, s, "Write", 0, 0), "Write", 0, 0)
    s = step(kip928, s, "DirSaturate", 0, 0)
    b = s.brokers[0]
    assert b.dirs == (SATURATED, GOOD) and b.hosted == (H_SATURATED,) and b.used == (2, 1) and b.segs == (2,)
    return s


@_on("kip928")
def _leading_from_a_saturated_dir(kip928):
    return (with_broker(_saturated_leader_dir(kip928), 0, hosted=(H_LEADER,)),)


@_on("kip928")
def _following_on_a_saturated_dir(kip928):
    s = created_topic(kip928)
    return (with_broker(s, 2, dirs=(SATURATED, GOOD)),)  # broker 2 follows partition 0 on dir 0


@_on("kip928")
def _saturated_dir_full_of_segments(kip928):
    """No reserved file to delete: the saturated dir stays full while it holds the log's segments."""
    return (with_broker(_saturated_leader_dir(kip928), 0, used=(3, 1), segs=(3,)),)


@_on("kip928")
def _deleted_topic_still_on_a_dir(kip928):
    s = deliver_all(kip928, step(kip928, created_topic(kip928), "DeleteTopic", 0))
    assert s.controller.deletion == (D_DONE,) and all(b.copies == (0,) for b in s.brokers)
    return (with_broker(s, 1, copies=(0b01,)),)


@_on("kip928")
def _successful_deletion_before_the_broker_deleted(kip928):
    """The controller counts broker 0's replica deleted while its StopReplica(delete=true) is still queued."""
    s = step(kip928, created_topic(kip928), "DeleteTopic", 0)
    c = s.controller
    assert c.deletion == (D_QUEUED,) and c.replicas[0][0] == R_DELETION_STARTED and s.brokers[0].copies == (0b01,)
    replicas = (replace_at(c.replicas[0], 0, R_DELETION_SUCCESSFUL),)
    return (s._replace(controller=c._replace(replicas=replicas)),)


def _reassigned(reassign):
    """Partition 0 (one replica, on broker 0) holds an acknowledged record; its reassignment to broker 1 has
    started, broker 1 has fetched the record and joined the ISR. Returns (state, action, after) for the step that
    completes the reassignment."""
    s = step(reassign, created_topic(reassign), "Produce", 0, 0)
    s = deliver_all(reassign, step(reassign, s, "ReassignPartition", 0))
    s = step(reassign, s, "ReplicaFetch", 1, 0)
    assert s.acked == (0b1,) and s.controller.partitions[0].isr == 0b11
    action, after = reassign.step(s, "ControllerReassignmentIsrChange", (0,))
    assert after.controller.assigned == ((1,),) and after.brokers[1].logs == ((0,),)
    return s, action, after


@_on("reassign")
def _reassignment_completes_without_the_record(reassign):
    """The completing step, with broker 1's copy gone (its dir failed) before the controller knew."""
    s, action, after = _reassigned(reassign)
    return (s, action, with_broker(after, 1, logs=((),)))


def _controller_skips_to_deletion_successful(small):
    """CreateTopic's step, with replica 0 ending in ReplicaDeletionSuccessful: after the recorded NonExistentReplica
    -> NewReplica -> OnlineReplica, an unrecorded OnlineReplica -> ReplicaDeletionSuccessful."""
    s = init(small)
    action, after = small.step(s, "CreateTopic", (0,))
    c = after.controller
    replicas = (replace_at(c.replicas[0], 0, R_DELETION_SUCCESSFUL),)
    return s, action, after._replace(controller=c._replace(replicas=replicas))


def _broker_step_drops_an_online_partition(small):
    """A broker's step after which the controller's partition 0 went OnlinePartition -> NonExistentPartition
    (valid only from OfflinePartition)."""
    s = step(small, init(small), "CreateTopic", 0)
    action, after = small.step(s, "BrokerLeaderAndIsr", (0,))
    c = after.controller
    dropped = replace_at(c.partitions, 0, c.partitions[0]._replace(state=P_NONEXISTENT))
    return s, action, after._replace(controller=c._replace(partitions=dropped))


# id -> hand-made arguments for check(model, *args) that must make it return a message.
BREAKS = {
    "no_recreate_with_bad_dir": [_break_no_recreate],
    "create_only_on_good_dir": [_break_create_on(SATURATED), _break_create_on(OFFLINE), _break_create_on(REMOVED)],
    "no_serving_from_offline_dir": [_serving_from_offline_dir, _serving_with_no_copy],
    "offline_broker_serves_nothing": [_down_broker_hosting],
    "offline_gauges_match": [_gauge_counts_a_live_replica, _gauge_misses_an_unserved_replica,
                             _running_with_every_dir_offline],
    "leader_is_live_isr_member": [_leader_not_in_isr, _leader_down, _leader_without_live_copy],
    "metadata_shows_offline_replicas": [_metadata_wrong_offline, _metadata_missing, _metadata_misses_a_dead_dir],
    "no_acked_record_lost": [_acked_record_missing, _acked_record_replaced, _acked_record_missing_at_a_new_leader],
    "isr_logs_agree_below_hw": [_isr_member_diverges_below_hw, _leader_diverges_from_the_isr_below_hw,
                                _isr_member_longer_but_diverging],
    "consumer_sees_no_loss_or_duplicate": [_consumer_read_a_duplicate, _consumer_read_another_record,
                                           _consumer_read_an_uncommitted_record, _consumer_skipped_a_record],
    "reads_below_hw_are_committed": [_leader_serves_another_record_below_hw, _leader_hw_past_the_committed_history,
                                     _stale_leader_serves_another_record],
    "no_serving_from_saturated_dir": [_leading_from_a_saturated_dir, _following_on_a_saturated_dir],
    "saturated_dir_can_free_space": [_saturated_dir_full_of_segments],
    "deleted_replica_holds_no_data": [_deleted_topic_still_on_a_dir, _successful_deletion_before_the_broker_deleted],
    "reassignment_keeps_an_in_sync_copy": [_reassignment_completes_without_the_record],
    "controller_transitions_valid": [_controller_skips_to_deletion_successful, _broker_step_drops_an_online_partition],
}

BREAK_CASES = [pytest.param(id_, make, id=f"{id_}-{make.__name__.strip('_')}")
               for id_, makers in BREAKS.items() for make in makers]


# The test modules with breaking cases of their own (their BROKEN_HERE, read by tests/support/breaking_cases.py).
BROKEN_ELSEWHERE = ("test_designs.py", "test_kip46.py", "test_kraft.py", "test_kraft_future.py", "test_kraft_findings.py",
                    "test_kraft_bugs.py", "test_kraft_elr.py", "test_kraft_corrections.py")


def test_breaks_table_covers_every_registered_invariant():
    # Plugins (JBODCHECK_PLUGINS) bring their own tests; every invariant of the invariants package needs a case here
    # (the liveness properties are tested by tests/engines/test_liveness.py).
    registered = {i.id for i in builtin_invariants()
                  if i.check.__module__.startswith("invariants.") and i.kind in invariants.SAFETY_KINDS}
    assert registered, "the built-in invariants are registered"
    # The design invariants' breaking cases are in tests/zk/test_designs.py, KIP-46's in tests/zk/test_kip46.py,
    # KRaft's in the KRaft modules (finding 8's in test_kraft_corrections.py).
    covered = set(BREAKS).union(*(broken_in(name) for name in BROKEN_ELSEWHERE))
    assert registered <= covered, f"no breaking case for: {sorted(registered - covered)}"
    assert set(EXPECTED_IDS) <= set(BREAKS)


def _model_for(request, make):
    return request.getfixturevalue(getattr(make, "fixture", "small"))


@pytest.mark.parametrize("id_, make", BREAK_CASES)
def test_invariant_breaks_on_hand_made_input(request, id_, make):
    model = _model_for(request, make)
    args = make(model)
    message = check(id_, model, *args)
    assert isinstance(message, str) and message.strip(), f"{id_} did not notice the hand-made violation"


@pytest.mark.parametrize("id_, make", BREAK_CASES)
def test_checker_reports_the_hand_made_violation(request, id_, make):
    """The engines' Checker dispatches on kind: the same input is reported under the invariant's id, with the
    invariant's own message, alone or beside every per-broker invariant (which the Checker evaluates together)."""
    model = _model_for(request, make)
    args = make(model)
    expected = (id_, check(id_, model, *args))
    per_broker = [i.id for i in select_invariants() if hasattr(i.check, "broker_check")]
    assert len(per_broker) >= 4
    for selected in ([id_], sorted(set(per_broker + [id_]))):
        checker = Checker(model, select_invariants(selected))
        if inv(id_).kind == "transition":
            found = checker.check_transition(*args)
        else:
            found = checker.check_state(*args)
        found = [(i.id, message) for i, message in found]
        assert found == [expected] if len(selected) == 1 else expected in found


def test_kip928_invariants_hold_on_the_real_states_the_breaks_start_from(kip928):
    saturated = _saturated_leader_dir(kip928)
    for id_ in ("no_serving_from_saturated_dir", "saturated_dir_can_free_space", "no_serving_from_offline_dir"):
        assert check(id_, kip928, saturated) is None
    # Deletion, step by step to its end: no replica counts as deleted while it still holds data.
    s, trace = step(kip928, created_topic(kip928), "DeleteTopic", 0), []
    deliver_all(kip928, s, trace)
    states = [s]
    for name, args in trace:
        states.append(step(kip928, states[-1], name, *args))
    assert states[-1].controller.deletion == (D_DONE,) and len(states) > 3
    for x in states:
        assert check("deleted_replica_holds_no_data", kip928, x) is None


def test_kip928_messages_name_broker_dir_and_partition(kip928):
    message = check("no_serving_from_saturated_dir", kip928, *_leading_from_a_saturated_dir(kip928))
    assert "leader" in message and "partition 0" in message and "saturated dir 0" in message
    message = check("saturated_dir_can_free_space", kip928, *_saturated_dir_full_of_segments(kip928))
    assert "broker 0" in message and "dir 0" in message and "3 of 3" in message and "partition 0" in message
    message = check("deleted_replica_holds_no_data", kip928, *_successful_deletion_before_the_broker_deleted(kip928))
    assert "broker 0" in message and "partition 0" in message and "dir 0" in message and "succeeded" in message
    message = check("deleted_replica_holds_no_data", kip928, *_deleted_topic_still_on_a_dir(kip928))
    assert "broker 1" in message and "complete" in message


def test_no_recreate_message_names_broker_partition_and_dirs(small):
    message = check("no_recreate_with_bad_dir", small, *_break_no_recreate(small))
    assert "broker 0" in message and "partition 0" in message and "isNewReplica=false" in message


def test_real_legacy_step_breaks_no_recreate_with_bad_dir():
    """Not hand-made: the pre-KIP-112 broker re-creates the log of scenario 1 on its good dir."""
    legacy = model_of("small", variant="legacy")
    s = deliver_all(legacy, step(legacy, init(legacy), "CreateTopic", 0))
    s = deliver_all(legacy, step(legacy, s, "BrokerCrash", 0))
    s = step(legacy, step(legacy, s, "DirFail", 0, 0), "BrokerRestart", 0)
    s = step(legacy, s, "ControllerBrokerStartup", 0)
    action, after = legacy.step(s, "BrokerLeaderAndIsr", (0,))
    assert after.brokers[0].copies[0] == 0b11  # a second, empty copy on dir 1
    assert after.brokers[0].replies[-1] == ((0, 0),)  # answered NONE, so the controller never learns
    assert isinstance(check("no_recreate_with_bad_dir", legacy, s, action, after), str)
    # Creating on a good dir is allowed by create_only_on_good_dir: the two invariants are independent.
    assert check("create_only_on_good_dir", legacy, s, action, after) is None



# ---- found while exploring beyond the presets -----------------------------------------------------------------

_DEAD_LEADER_AFTER_FAILOVER = [
    ("CreateTopic", 0),
    ("BrokerCrash", 0),                 # the leader dies before it handled the request ...
    ("BrokerLeaderAndIsr", 1),
    ("DirFail", 1, 0),                  # ... the follower's dir fails
    ("ControllerLogDirEvent",),
    ("ControllerLeaderAndIsrResponse", 1),
    ("BrokerLeaderAndIsr", 1),
    ("ControllerLeaderAndIsrResponse", 1),  # KAFKA_STORAGE_ERROR: broker 1 leaves the ISR, which is now {0}
    ("ControllerFailover",),            # the new controller never processes broker 0's death as an event
]


# Found by `explore --preset tiny --max-faults 3`: the new controller's replica state machine must move the dead
# sole ISR member to OfflineReplica (leader none), as Kafka's ReplicaStateMachine.startup does.
def test_leader_is_live_after_a_failover_with_a_dead_sole_isr_member():
    m = model_of("tiny", max_faults=3)
    s = init(m)
    for name, *args in _DEAD_LEADER_AFTER_FAILOVER:
        s = step(m, s, name, *args)
    s = deliver_all(m, s)
    assert m.is_quiescent(s)
    part = s.controller.partitions[0]
    assert part.isr == 0b01 and not s.brokers[0].up  # the only ISR member is dead
    assert check("leader_is_live_isr_member", m, s) is None


def test_controller_transitions_valid_holds_on_real_steps_with_several_changes_of_one_replica(small):
    """CreateTopic moves each replica NonExistentReplica -> NewReplica -> OnlineReplica and the partition
    NonExistentPartition -> NewPartition -> OnlinePartition in one step: every individual change is valid."""
    from invariants.zk.controller import recorded_changes
    s = init(small)
    action, after = small.step(s, "CreateTopic", (0,))
    changes = recorded_changes(small, s, action)
    assert [c[3:5] for c in changes if c[0] == "replica" and c[2] == 0] == [(0, 1), (1, 2)]
    assert [c[3:5] for c in changes if c[0] == "partition"] == [(0, 1), (1, 2)]
    assert check("controller_transitions_valid", small, s, action, after) is None
    # A failover sets the replicas without validation (initializeReplicaState): recorded as exempt, accepted.
    s = deliver_all(small, step(small, created_topic(small), "BrokerCrash", 2))
    action, after = small.step(s, "ControllerFailover", ())
    assert check("controller_transitions_valid", small, s, action, after) is None
