"""The data path (issue #3, docs/model.md sections 6.3, 7.15-7.18 and 9): Produce (acks=all, min.insync.replicas),
ReplicaFetch (truncation, HW, ISR expansion), LeaderShrinkIsr, Consume, unclean leader election, the `wiped`
history, the new model parameters, and the acceptance searches.

Small, explicit configurations; states are reached with model.step, and hand-made states change only the fields
that matter with NamedTuple._replace. Broker numbers below follow the presets: partition 0's replicas are
assigned to brokers 0, 1[, 2], broker 0 is the first leader, and every replica is created on dir 0.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from explorer.search import SearchOptions, bfs
from model import ActionDisabled, ModelConfig
from model.storage.config import ConfigError
from model.storage.data import fetch_result, matching_prefix
from model.storage.state import (
    E_STORAGE, GOOD, H_FOLLOWER, H_LEADER, H_SATURATED, NO_LEADER, OFFLINE, P_OFFLINE, P_ONLINE, SATURATED,
)

from support.helpers import (
    REPO, created_topic, custom_model, deliver_all, enabled, guard, init, model_of, run, step, with_broker,
)
from support.profiles import THOROUGH
from explorer.catalog import builtin_invariants, select_invariants

DATA_RULES = ("Produce", "ReplicaFetch", "LeaderShrinkIsr", "Consume")
# Every invariant of invariants/storage/durability.py (no_acked_record_lost, isr_logs_agree_below_hw,
# consumer_sees_no_loss_or_duplicate, reads_below_hw_are_committed, ...).
DURABILITY = tuple(i.id for i in builtin_invariants() if i.check.__module__ == "invariants.storage.durability")




def log(state, b, p=0):
    return state.brokers[b].logs[p]


def zk(state, p=0):
    """The partition's ZooKeeper leader-and-ISR record (and the controller's partition state)."""
    return state.controller.partitions[p]



def durability_violations(model, state):
    return {id_: msg for id_ in DURABILITY if (msg := select_invariants([id_])[0].check(model, state)) is not None}


def crash_follower(model, state, b):
    """Follower b crashes and the controller processes it: the ISR shrinks to the others, every message is
    delivered (the leader now caches the smaller ISR at a new leader epoch)."""
    return deliver_all(model, run(model, state, ("BrokerCrash", b), ("ControllerBrokerFailure", b)))


# ---- pure helpers of model/storage/data.py ----------------------------------------------------------------------------

@pytest.mark.parametrize("follower, leader, prefix, fetched", [
    ((), (), 0, ()),
    ((), (0, 0), 0, (0,)),                 # an empty follower gets one entry per fetch
    ((0,), (0, 0), 1, (0, 0)),
    ((0, 0), (0, 0), 2, (0, 0)),           # caught up: nothing changes
    ((0, 1), (0, 2), 1, (0, 2)),           # divergent at offset 1: truncate to 1, append the leader's entry
    ((1, 1), (0, 0), 0, (0,)),             # divergent from offset 0: truncate to nothing, append one entry
    ((0, 0), (0,), 1, (0,)),               # longer than the leader: truncated to the shared prefix
    ((0, 1), (0,), 1, (0,)),
])
def test_matching_prefix_and_fetch_result(follower, leader, prefix, fetched):
    assert matching_prefix(follower, leader) == prefix
    assert fetch_result(follower, leader) == fetched


# ---- Produce -----------------------------------------------------------------------------------------------

def test_produce_appends_the_leader_epoch_and_waits_for_the_isr():
    m = model_of("small")
    s = created_topic(m)
    assert zk(s).isr == 0b111 and s.brokers[0].isr[0] == 0b111
    after = step(m, s, "Produce", 0, 0)
    assert log(after, 0) == (0,)                      # tagged with leader epoch 0
    assert log(after, 1) == log(after, 2) == ()
    assert after.brokers[0].hw[0] == 0                # the followers have not fetched it
    assert after.committed == ((),) and after.acked == (0,)
    # Only the leader takes records.
    for b in (1, 2):
        assert "does not lead" in guard(m, s, "Produce", b, 0)


def test_produce_at_a_later_leader_epoch_appends_that_epoch():
    m = model_of("tiny", max_records=2)
    s = crash_follower(m, created_topic(m), 1)
    assert s.brokers[0].epoch[0] == zk(s).leader_epoch == 1
    s = step(m, s, "Produce", 0, 0)
    assert log(s, 0) == (1,)


def test_produce_with_an_isr_of_one_is_committed_and_acked_at_once():
    m = model_of("tiny")
    s = crash_follower(m, created_topic(m), 1)
    assert s.brokers[0].isr[0] == zk(s).isr == 0b01
    after = step(m, s, "Produce", 0, 0)
    assert after.brokers[0].hw[0] == 1
    assert after.committed == ((1,),) and after.acked == (0b1,)


def test_produce_with_an_isr_of_one_and_rf_one():
    m = custom_model(brokers=1, rf=1, dirs=1, max_records=2)
    s = created_topic(m)
    s = step(m, s, "Produce", 0, 0)
    s = step(m, s, "Produce", 0, 0)
    assert s.committed == ((0, 0),) and s.acked == (0b11,) and s.brokers[0].hw[0] == 2


def test_produce_is_disabled_below_min_isr():
    m = model_of("tiny", min_isr=2)
    healthy = created_topic(m)
    assert enabled(m, healthy, "Produce", 0, 0)       # ISR {0, 1}: two members
    s = crash_follower(m, healthy, 1)
    assert s.brokers[0].isr[0] == 0b01
    reason = guard(m, s, "Produce", 0, 0)
    assert reason is not None and "min.insync.replicas" in reason and "2" in reason
    with pytest.raises(ActionDisabled, match="min.insync.replicas"):
        m.step(s, "Produce", (0, 0))


def test_produce_counts_the_leaders_cached_isr_not_zookeepers():
    """Until the leader handles the controller's LeaderAndIsr, it still caches the larger ISR (and may take a
    record it cannot commit: the dead follower holds the HW back)."""
    m = model_of("tiny", min_isr=2)
    s = run(m, created_topic(m), ("BrokerCrash", 1), ("ControllerBrokerFailure", 1))
    assert zk(s).isr == 0b01 and s.brokers[0].isr[0] == 0b11
    after = step(m, s, "Produce", 0, 0)
    assert after.brokers[0].hw[0] == 0 and after.committed == ((),)


def _fill(m, state, broker, partition):
    """Write to the broker's replica of the partition until its dir is full (KIP-928's disk space)."""
    while m.rule("Write").guard(m, state, broker, partition) is None:
        state = step(m, state, "Write", broker, partition)
    d = state.brokers[broker].copies[partition].bit_length() - 1
    assert state.brokers[broker].used[d] == m.cfg.dir_capacity
    return state


def test_produce_is_disabled_on_a_saturated_leader_dir():
    m = model_of("tiny", max_records=2, saturation=True)
    s = created_topic(m)
    assert s.brokers[0].copies[0] == 0b01
    saturated = step(m, _fill(m, s, 0, 0), "DirSaturate", 0, 0)
    reason = guard(m, saturated, "Produce", 0, 0)
    assert reason is not None and "does not lead" in reason   # KIP-928: the saturated replica is not led
    with pytest.raises(ActionDisabled):
        m.step(saturated, "Produce", (0, 0))
    # Freeing the space (retention, then the dir recovers) enables it again once the controller probed the broker.
    recovered = run(m, saturated, ("Retention", 0, 0), ("DirRecover", 0, 0))
    assert recovered.brokers[0].dirs[0] == GOOD and not enabled(m, recovered, "Produce", 0, 0)
    assert enabled(m, deliver_all(m, recovered), "Produce", 0, 0)


def test_produce_is_not_disabled_by_another_saturated_dir():
    """Two partitions: broker 0 follows partition 1 on its dir 1; that dir saturating does not stop partition 0."""
    m = model_of("tiny", partitions=2, max_records=(2, 0), saturation=True)
    s = deliver_all(m, step(m, created_topic(m), "CreateTopic", 1))
    assert s.brokers[0].copies == (0b01, 0b10)
    saturated = step(m, _fill(m, s, 0, 1), "DirSaturate", 0, 1)
    assert saturated.brokers[0].dirs == (GOOD, SATURATED)
    assert enabled(m, saturated, "Produce", 0, 0)
    assert enabled(m, deliver_all(m, saturated), "Produce", 0, 0)


def test_produce_is_disabled_at_max_records():
    m = model_of("tiny", max_records=2)
    s = step(m, created_topic(m), "Produce", 0, 0)
    assert enabled(m, s, "Produce", 0, 0)
    s = step(m, s, "Produce", 0, 0)
    assert log(s, 0) == (0, 0)
    reason = guard(m, s, "Produce", 0, 0)
    assert reason is not None and "--max-records 2" in reason


# ---- ReplicaFetch ----------------------------------------------------------------------------------------------

def test_fetch_truncates_a_divergent_follower_then_appends_one_entry():
    m = model_of("tiny", max_records=3)
    s = run(m, created_topic(m), ("Produce", 0, 0), ("Produce", 0, 0))
    assert log(s, 0) == (0, 0)
    divergent = with_broker(s, 1, logs=((0, 7, 7),))   # agrees at offset 0 only
    after = step(m, divergent, "ReplicaFetch", 1, 0)
    assert log(after, 1) == (0, 0)                     # truncated to (0,), then the leader's entry at offset 1
    # Divergent from offset 0: truncated to nothing, then a single entry (not the whole log).
    after = step(m, with_broker(s, 1, logs=((7, 7),)), "ReplicaFetch", 1, 0)
    assert log(after, 1) == (0,)
    # A follower longer than the leader but agreeing on its prefix is truncated, nothing appended.
    after = step(m, with_broker(s, 1, logs=((0, 0, 7),)), "ReplicaFetch", 1, 0)
    assert log(after, 1) == (0, 0)
    assert after.brokers[0].hw[0] == 2 and after.committed == ((0, 0),) and after.acked == (0b11,)


def test_fetch_raises_the_hw_when_the_whole_isr_has_the_entry():
    m = model_of("small", min_isr=3)
    s = step(m, created_topic(m), "Produce", 0, 0)
    s = step(m, s, "ReplicaFetch", 1, 0)
    assert log(s, 1) == (0,)
    assert s.brokers[0].hw[0] == 0 and s.committed == ((),)   # broker 2 holds the HW back
    s = step(m, s, "ReplicaFetch", 2, 0)
    assert s.brokers[0].hw[0] == 1
    assert s.committed == ((0,),) and s.acked == (0b1,)       # ISR of 3 >= min.insync.replicas 3
    # Caught up and in the ISR: nothing more to fetch.
    reason = guard(m, s, "ReplicaFetch", 1, 0)
    assert reason is not None and "leader's" in reason


def test_fetch_acknowledges_when_the_isr_reaches_min_isr():
    m = model_of("small", min_isr=2)
    s = run(m, created_topic(m), ("Produce", 0, 0), ("LeaderShrinkIsr", 0, 2))
    assert s.brokers[0].isr[0] == 0b011 and s.brokers[0].hw[0] == 0  # broker 1 still lags
    s = step(m, s, "ReplicaFetch", 1, 0)
    assert s.brokers[0].hw[0] == 1
    assert s.committed == ((0,),) and s.acked == (0b1,)       # ISR {0, 1}: 2 >= min.insync.replicas 2


def test_fetch_commits_but_does_not_acknowledge_below_min_isr():
    """NOT_ENOUGH_REPLICAS_AFTER_APPEND: the ISR shrank below min.insync.replicas after the append."""
    m = model_of("small", min_isr=3, consumer=True)
    s = run(m, created_topic(m), ("Produce", 0, 0), ("LeaderShrinkIsr", 0, 2))
    assert s.brokers[0].isr[0] == 0b011
    s = step(m, s, "ReplicaFetch", 1, 0)
    assert s.brokers[0].hw[0] == 1
    assert s.committed == ((0,),)                             # passed the HW: committed ...
    assert s.acked == (0,)                                    # ... but the producer got an error
    # The consumer may read it; no invariant objects (it was never acknowledged).
    s = step(m, s, "Consume", 0, 0)
    assert s.consumed == ((0,),)
    assert durability_violations(m, s) == {}


def test_shrink_commits_but_does_not_acknowledge_below_min_isr():
    m = model_of("small", min_isr=2)
    s = run(m, created_topic(m), ("Produce", 0, 0), ("LeaderShrinkIsr", 0, 2), ("LeaderShrinkIsr", 0, 1))
    assert s.brokers[0].isr[0] == zk(s).isr == 0b001
    assert s.brokers[0].hw[0] == 1 and s.committed == ((0,),) and s.acked == (0,)


def test_fetch_expands_the_isr_when_the_follower_reaches_the_hw():
    m = model_of("small")
    s = run(m, created_topic(m), ("Produce", 0, 0), ("LeaderShrinkIsr", 0, 2), ("ReplicaFetch", 1, 0))
    assert s.brokers[0].hw[0] == 1 and zk(s).isr == 0b011
    epoch = zk(s).leader_epoch
    after = step(m, s, "ReplicaFetch", 2, 0)
    assert log(after, 2) == (0,)
    assert after.brokers[0].isr[0] == 0b111                   # the leader's cache ...
    assert zk(after).isr == 0b111                             # ... and ZooKeeper
    assert zk(after).leader_epoch == epoch                    # an ISR change does not bump the leader epoch
    assert after.brokers[0].hw[0] == 1


def test_fetch_does_not_expand_the_isr_below_the_hw():
    m = model_of("small", max_records=2)
    s = run(m, created_topic(m), ("Produce", 0, 0), ("Produce", 0, 0), ("LeaderShrinkIsr", 0, 2),
            ("ReplicaFetch", 1, 0), ("ReplicaFetch", 1, 0))
    assert s.brokers[0].hw[0] == 2 and zk(s).isr == 0b011
    s = step(m, s, "ReplicaFetch", 2, 0)
    assert log(s, 2) == (0,) and zk(s).isr == 0b011          # 1 entry < HW 2: still out
    s = step(m, s, "ReplicaFetch", 2, 0)
    assert log(s, 2) == (0, 0) and zk(s).isr == 0b111


def _leader_not_current(m):
    """small: broker 2 is out of the ISR and lags; then broker 1 dies and the controller bumps the leader epoch
    in ZooKeeper, while its LeaderAndIsr to broker 0 (still leading at epoch 0) is undelivered."""
    s = run(m, created_topic(m), ("Produce", 0, 0), ("LeaderShrinkIsr", 0, 2), ("ReplicaFetch", 1, 0),
            ("BrokerCrash", 1), ("ControllerBrokerFailure", 1))
    assert zk(s).leader == 0 and zk(s).leader_epoch == 1 and zk(s).isr == 0b001
    assert s.brokers[0].epoch[0] == s.brokers[2].epoch[0] == 0 and s.brokers[0].inbox
    return s


def test_fetch_does_not_expand_the_isr_when_the_leader_is_not_current_in_zookeeper():
    m = model_of("small")
    s = _leader_not_current(m)
    after = step(m, s, "ReplicaFetch", 2, 0)                  # enabled: its log changes
    assert log(after, 2) == (0,)
    assert after.brokers[0].isr[0] == 0b011 and zk(after).isr == 0b001   # no ISR write
    assert not enabled(m, after, "ReplicaFetch", 2, 0)        # nothing more to do at epoch 0
    # Once both brokers handled the new epoch, the caught-up follower joins without a new entry.
    s = deliver_all(m, after)
    assert s.brokers[0].epoch[0] == s.brokers[2].epoch[0] == 1 and s.brokers[0].isr[0] == 0b001
    assert s.brokers[2].hosted[0] == H_FOLLOWER and log(s, 2) == log(s, 0)
    joined = step(m, s, "ReplicaFetch", 2, 0)
    assert log(joined, 2) == log(s, 2)
    assert joined.brokers[0].isr[0] == zk(joined).isr == 0b101
    assert not enabled(m, joined, "ReplicaFetch", 2, 0)


def test_a_follower_at_another_leader_epoch_does_not_fetch():
    m = model_of("small")
    s = _leader_not_current(m)
    s = step(m, s, "BrokerLeaderAndIsr", 0)                   # the leader moves to epoch 1, broker 2 is at 0
    assert s.brokers[0].epoch[0] == 1 and s.brokers[2].epoch[0] == 0
    assert log(s, 2) != log(s, 0)                             # there is something to fetch ...
    reason = guard(m, s, "ReplicaFetch", 2, 0)
    assert reason is not None and "leader epoch" in reason   # ... but not from a leader at another epoch


def test_fetch_is_disabled_for_a_saturated_or_offline_follower():
    m = model_of("small", saturation=True)
    s = step(m, created_topic(m), "Produce", 0, 0)
    assert enabled(m, s, "ReplicaFetch", 1, 0)
    saturated = step(m, _fill(m, s, 1, 0), "DirSaturate", 1, 0)
    assert saturated.brokers[1].hosted[0] == H_SATURATED      # KIP-928: its fetcher is removed
    assert "does not follow" in guard(m, saturated, "ReplicaFetch", 1, 0)
    assert enabled(m, saturated, "ReplicaFetch", 2, 0)         # the other follower still fetches
    assert guard(m, step(m, s, "DirFail", 1, 0), "ReplicaFetch", 1, 0) is not None


def test_a_follower_that_does_not_fetch_at_the_leaders_epoch_holds_the_hw_back():
    m = model_of("tiny")
    s = run(m, created_topic(m), ("BrokerCrash", 1), ("Produce", 0, 0))
    assert s.brokers[0].isr[0] == 0b11                        # the leader does not know yet
    assert s.brokers[0].hw[0] == 0 and s.committed == ((),)


# ---- LeaderShrinkIsr ------------------------------------------------------------------------------------------

def test_shrink_only_removes_a_lagging_follower():
    m = model_of("small")
    s = created_topic(m)
    for f in (1, 2):
        assert "caught up" in guard(m, s, "LeaderShrinkIsr", 0, f)   # empty logs: everyone is caught up
    assert "not a follower in the ISR" in guard(m, s, "LeaderShrinkIsr", 0, 0)  # not the leader itself
    s = step(m, s, "Produce", 0, 0)
    assert enabled(m, s, "LeaderShrinkIsr", 0, 1) and enabled(m, s, "LeaderShrinkIsr", 0, 2)
    s = step(m, s, "ReplicaFetch", 1, 0)
    assert "caught up" in guard(m, s, "LeaderShrinkIsr", 0, 1)
    s = step(m, s, "LeaderShrinkIsr", 0, 2)
    assert "not a follower in the ISR" in guard(m, s, "LeaderShrinkIsr", 0, 2)   # already out


def test_shrink_writes_the_leaders_cache_and_zookeeper_and_raises_the_hw():
    m = model_of("small")
    s = run(m, created_topic(m), ("Produce", 0, 0), ("ReplicaFetch", 1, 0))
    epoch = zk(s).leader_epoch
    assert s.brokers[0].hw[0] == 0
    after = step(m, s, "LeaderShrinkIsr", 0, 2)
    assert after.brokers[0].isr[0] == 0b011
    assert zk(after).isr == 0b011 and zk(after).leader == 0 and zk(after).leader_epoch == epoch
    assert after.brokers[0].hw[0] == 1 and after.committed == ((0,),) and after.acked == (0b1,)
    # Nothing else changed: the follower keeps its log and role; nothing is sent.
    assert after.brokers[2] == s.brokers[2]
    assert all(b.inbox == () for b in after.brokers)


def test_shrink_is_disabled_when_the_leaders_epoch_is_stale():
    m = model_of("small")
    s = run(m, created_topic(m), ("Produce", 0, 0), ("BrokerCrash", 1), ("ControllerBrokerFailure", 1))
    assert zk(s).leader == 0 and zk(s).leader_epoch == 1 and zk(s).isr == 0b101
    assert s.brokers[0].epoch[0] == 0 and s.brokers[0].isr[0] == 0b111   # the LeaderAndIsr is undelivered
    assert log(s, 2) == ()                                    # broker 2 lags, in both ISRs ...
    reason = guard(m, s, "LeaderShrinkIsr", 0, 2)
    assert reason is not None and "leader epoch in the controller's record" in reason   # ... but broker 0 is not current
    s = step(m, s, "BrokerLeaderAndIsr", 0)                   # broker 0 at epoch 1: current again
    assert s.brokers[0].epoch[0] == zk(s).leader_epoch and s.brokers[0].isr[0] == 0b101
    after = step(m, s, "LeaderShrinkIsr", 0, 2)
    assert after.brokers[0].isr[0] == zk(after).isr == 0b001


def test_shrink_is_disabled_without_a_leader():
    m = model_of("tiny")
    s = run(m, created_topic(m), ("Produce", 0, 0), ("BrokerCrash", 0), ("ControllerBrokerFailure", 0))
    assert guard(m, s, "LeaderShrinkIsr", 0, 1) is not None


# ---- Consume ---------------------------------------------------------------------------------------------------

def test_consume_reads_one_entry_below_the_hw_and_stops_at_it():
    m = model_of("tiny", max_records=2)
    s = run(m, created_topic(m), ("Produce", 0, 0), ("Produce", 0, 0))
    assert "HW 0" in guard(m, s, "Consume", 0, 0)            # nothing is committed yet
    s = step(m, s, "ReplicaFetch", 1, 0)
    assert s.brokers[0].hw[0] == 1
    s = step(m, s, "Consume", 0, 0)
    assert s.consumed == ((0,),)
    reason = guard(m, s, "Consume", 0, 0)
    assert reason is not None and "HW 1" in reason           # the entry at offset 1 is not committed
    s = step(m, s, "ReplicaFetch", 1, 0)
    s = step(m, s, "Consume", 0, 0)
    assert s.consumed == ((0, 0),)
    assert not enabled(m, s, "Consume", 0, 0)
    assert "does not lead" in guard(m, s, "Consume", 1, 0)   # only from the leader
    assert durability_violations(m, s) == {}


def test_consume_from_a_saturated_leader():
    """KIP-928: a saturated leader stops leading (no consumption from it); the controller moves the leadership to
    the follower that has the record, and the consumer reads it there."""
    m = model_of("tiny", saturation=True)
    s = run(m, created_topic(m), ("Produce", 0, 0), ("ReplicaFetch", 1, 0))
    assert s.brokers[0].hw[0] == 1
    s = step(m, _fill(m, s, 0, 0), "DirSaturate", 0, 0)
    assert not enabled(m, s, "Produce", 0, 0)
    assert "does not lead" in guard(m, s, "Consume", 0, 0)
    s = deliver_all(m, s)
    assert zk(s).leader == 1 and s.brokers[1].hosted[0] == H_LEADER
    assert step(m, s, "Consume", 1, 0).consumed == ((0,),)
    assert durability_violations(m, s) == {}


# ---- Unclean leader election ---------------------------------------------------------------------------------

def _sole_isr_member_dies(m):
    """tiny: broker 0 takes a record and shrinks the ISR to itself (acknowledged), then crashes; the controller
    processes the failure."""
    s = run(m, created_topic(m), ("Produce", 0, 0), ("LeaderShrinkIsr", 0, 1))
    assert zk(s).isr == 0b01 and s.acked == (0b1,) and log(s, 1) == ()
    return run(m, s, ("BrokerCrash", 0), ("ControllerBrokerFailure", 0))


def test_unclean_election_elects_a_live_replica_outside_the_isr():
    m = model_of("tiny", unclean_election=True)
    s = _sole_isr_member_dies(m)
    part = zk(s)
    assert part.state == P_ONLINE and part.leader == 1 and part.isr == 0b10 and part.leader_epoch == 1
    s = deliver_all(m, s)
    assert s.brokers[1].hosted[0] == H_LEADER and s.brokers[1].isr[0] == 0b10
    # Broker 1 never had the acknowledged record: that is what unclean election costs.
    message = select_invariants(["no_acked_record_lost"])[0].check(m, s)
    assert message is not None and "leader 1" in message and "offset 0" in message


def test_without_unclean_election_the_partition_stays_without_a_leader():
    m = model_of("tiny")
    assert m.cfg.unclean_election is False
    s = deliver_all(m, _sole_isr_member_dies(m))
    part = zk(s)
    assert part.state == P_OFFLINE and part.leader == NO_LEADER
    assert part.isr == 0b01                                   # the last ISR member is kept
    assert s.brokers[1].hosted[0] != H_LEADER
    assert durability_violations(m, s) == {}
    # It comes back when the sole ISR member restarts with its log.
    s = deliver_all(m, run(m, s, ("BrokerRestart", 0)))
    assert zk(s).leader == 0 and log(s, 0) == (0,)
    assert durability_violations(m, s) == {}


def test_unclean_election_prefers_a_live_isr_member():
    """Unclean election only applies when no ISR member is live: a normal failover is unchanged."""
    clean, unclean = model_of("small"), model_of("small", unclean_election=True)
    results = []
    for m in (clean, unclean):
        s = run(m, created_topic(m), ("Produce", 0, 0), ("ReplicaFetch", 2, 0), ("LeaderShrinkIsr", 0, 1))
        s = run(m, s, ("BrokerCrash", 0), ("ControllerBrokerFailure", 0))
        results.append(zk(s))
    assert results[0] == results[1]
    assert results[0].leader == 2 and results[0].isr == 0b100


# ---- the fault rules and the data -------------------------------------------------------------------------

def test_dir_fail_empties_the_logs_on_the_failed_dir_only():
    m = model_of("small")
    s = run(m, created_topic(m), ("Produce", 0, 0), ("ReplicaFetch", 1, 0), ("ReplicaFetch", 2, 0))
    assert all(log(s, b) == (0,) for b in range(3)) and s.brokers[1].copies[0] == 0b01
    other_dir = step(m, s, "DirFail", 1, 1)                 # no copy there
    assert log(other_dir, 1) == (0,)
    failed = step(m, s, "DirFail", 1, 0)
    assert failed.brokers[1].dirs == (OFFLINE, GOOD)
    assert log(failed, 1) == ()
    assert log(failed, 0) == log(failed, 2) == (0,)
    assert failed.committed == s.committed and failed.acked == s.acked


def test_dir_fail_on_a_down_broker_empties_its_log():
    m = model_of("tiny")
    s = run(m, created_topic(m), ("Produce", 0, 0), ("ReplicaFetch", 1, 0), ("BrokerCrash", 1), ("DirFail", 1, 0))
    assert log(s, 1) == ()


def _only_copy_on_an_offline_dir(m):
    """tiny: an acknowledged record held by broker 0 alone (ISR {0}); broker 0 crashes and its dir fails."""
    s = run(m, created_topic(m), ("Produce", 0, 0), ("LeaderShrinkIsr", 0, 1))
    assert s.acked == (0b1,) and log(s, 1) == ()
    return run(m, s, ("BrokerCrash", 0), ("DirFail", 0, 0))


def test_replace_disk_destroying_the_only_copy_of_a_committed_record_sets_wiped():
    m = model_of("tiny")
    s = _only_copy_on_an_offline_dir(m)
    assert s.wiped == 0                                      # the copy is out of reach, not destroyed
    replaced = step(m, s, "ReplaceDisk", 0, 0)
    assert replaced.wiped == 0b1
    assert replaced.brokers[0].copies[0] == 0 and replaced.brokers[0].dirs == (GOOD, GOOD)
    # The partition's durability guarantee lapses from now on; the history stays.
    assert replaced.committed == s.committed and replaced.acked == s.acked
    s = deliver_all(m, run(m, replaced, ("ControllerBrokerFailure", 0), ("BrokerRestart", 0)))
    assert durability_violations(m, s) == {}


def test_remove_dir_from_config_destroying_the_only_copy_sets_wiped():
    m = model_of("tiny")
    assert step(m, _only_copy_on_an_offline_dir(m), "RemoveDirFromConfig", 0, 0).wiped == 0b1


def test_replace_disk_does_not_set_wiped_while_another_replica_holds_the_records():
    m = model_of("tiny")
    s = run(m, created_topic(m), ("Produce", 0, 0), ("ReplicaFetch", 1, 0))
    assert s.acked == (0b1,) and log(s, 1) == (0,)
    s = run(m, s, ("BrokerCrash", 0), ("DirFail", 0, 0), ("ReplaceDisk", 0, 0))
    assert s.wiped == 0


def test_replace_disk_sets_wiped_only_for_committed_records():
    m = model_of("tiny")
    s = run(m, created_topic(m), ("Produce", 0, 0), ("BrokerCrash", 0), ("DirFail", 0, 0), ("ReplaceDisk", 0, 0))
    assert s.committed == ((),) and s.wiped == 0             # the lost record was never committed


# ---- the model's parameters ------------------------------------------------------------------------------------

def _rule_names(model):
    return {r.name for _, r, _ in model.action_space}


def test_max_records_zero_removes_the_data_path_from_the_action_space():
    without = model_of("small", max_records=0, consumer=True)
    assert not _rule_names(without) & set(DATA_RULES)
    assert {r.name for r in without.rules} >= set(DATA_RULES)   # the data feature is in, its domains empty
    with_data = model_of("small", max_records=1, consumer=True)
    assert _rule_names(with_data) >= set(DATA_RULES)
    assert len(with_data.action_space) - len(without.action_space) == 4 * 3   # (broker|follower) x replica
    # The rest of the model is unchanged.
    assert [(r.name, a) for _, r, a in without.action_space] == [
        (r.name, a) for _, r, a in with_data.action_space if r.name not in DATA_RULES]


def test_without_a_consumer_only_consume_leaves_the_action_space():
    m = model_of("small", max_records=1, consumer=False)
    assert _rule_names(m) & set(DATA_RULES) == {"Produce", "ReplicaFetch", "LeaderShrinkIsr"}
    assert m.rule("Consume").domain(m) == []


def test_data_rule_domains_range_over_the_assigned_replicas():
    m = model_of("medium", max_records=1, consumer=True)      # 3 brokers, 2 partitions, RF 2
    produce = m.rule("Produce").domain(m)
    assert produce == [(0, 0), (1, 0), (1, 1), (2, 1)]        # partition-major, assignment order
    assert m.rule("ReplicaFetch").domain(m) == m.rule("Consume").domain(m) == produce
    assert m.rule("LeaderShrinkIsr").domain(m) == [(0, 0), (0, 1), (1, 1), (1, 2)]


def test_max_records_per_partition_limits_the_domains_and_produce():
    m = custom_model(brokers=3, partitions=2, rf=2, max_records=[2, 0], consumer=True)
    assert m.cfg.max_records == (2, 0)
    assert (m.cfg.max_records_of(0), m.cfg.max_records_of(1)) == (2, 0)
    for name in DATA_RULES:
        args = m.rule(name).domain(m)
        assert args and all((a[1] if name != "LeaderShrinkIsr" else a[0]) == 0 for a in args), (name, args)
    s = deliver_all(m, run(m, init(m), ("CreateTopic", 0), ("CreateTopic", 1)))
    s = run(m, s, ("Produce", 0, 0), ("Produce", 0, 0))
    assert "--max-records 2" in guard(m, s, "Produce", 0, 0)
    assert "--max-records 0" in guard(m, s, "Produce", 1, 1)


def test_min_isr_per_partition():
    cfg = ModelConfig(brokers=3, partitions=2, rf=2, min_isr=[1, 2])
    assert cfg.min_isr == (1, 2)
    assert (cfg.min_isr_of(0), cfg.min_isr_of(1)) == (1, 2)
    assert ModelConfig(min_isr=3).min_isr_of(0) == 3
    assert ModelConfig.from_dict(cfg.as_dict()) == cfg        # a tuple survives the round trip


@pytest.mark.parametrize("params, words", [
    (dict(partitions=2, rf=2, min_isr=[1]), ("1 values", "2 partition")),
    (dict(partitions=1, rf=2, min_isr=[1, 1]), ("2 values",)),
    (dict(rf=3, min_isr=4), ("--min-isr", "--rf 3")),
    (dict(rf=3, min_isr=0), ("--min-isr",)),
    (dict(partitions=2, rf=2, min_isr=[1, 3]), ("--min-isr",)),
    (dict(min_isr=True), ("--min-isr",)),
    (dict(min_isr="2"), ("--min-isr",)),
    (dict(max_records=-1), ("--max-records",)),
    (dict(partitions=2, rf=2, max_records=[1]), ("--max-records", "1 values")),
    (dict(partitions=2, rf=2, max_records=[1, -1]), ("--max-records",)),
    (dict(consumer=1), ("consumer",)),
    (dict(unclean_election=1), ("unclean_election",)),
])
def test_bad_data_path_parameters_raise_config_error(params, words):
    with pytest.raises(ConfigError) as e:
        ModelConfig(**params)
    for w in words:
        assert w in str(e.value), (w, str(e.value))


def test_min_isr_per_partition_is_used_by_produce():
    m = custom_model(brokers=3, partitions=2, rf=2, min_isr=[1, 2])
    s = deliver_all(m, run(m, init(m), ("CreateTopic", 0), ("CreateTopic", 1)))
    # Partition 0 on brokers 0, 1; partition 1 on brokers 1, 2. Broker 2 dies: partition 1's ISR is {1}.
    s = crash_follower(m, s, 2)
    assert s.brokers[1].isr[1] == 0b010
    assert enabled(m, s, "Produce", 0, 0)
    assert "min.insync.replicas 2" in guard(m, s, "Produce", 1, 1)


def _cli(*args):
    env = {k: v for k, v in os.environ.items() if k != "JBODCHECK_PLUGINS"}
    return subprocess.run([sys.executable, "-m", "explorer", *args], capture_output=True, text=True, cwd=REPO,
                          env=env, timeout=120)


@pytest.mark.parametrize("args, words", [
    (("--min-isr", "3"), ("--min-isr",)),                       # tiny has RF 2
    (("--min-isr", "1,1"), ("--min-isr",)),                     # tiny has one partition
    (("--min-isr", "two"), ("--min-isr",)),
    (("--max-records", "-1"), ("--max-records",)),
])
def test_cli_bad_data_path_options_exit_2_with_one_line(args, words):
    p = _cli("explore", "--preset", "tiny", *args)
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert "Traceback" not in p.stderr and "Traceback" not in p.stdout
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    for w in words:
        assert w in lines[0]


# ---- acceptance: the searches (engine API) ------------------------------------------------------------------

def _search(preset, ids=None, **overrides):
    m = model_of(preset, **overrides)
    return m, bfs(m, select_invariants(ids), SearchOptions())


def _labels(m, trace):
    return [m.label(a) for a, _ in trace[1:]]


@pytest.fixture(scope="module")
def legacy_tiny():
    """BFS of tiny under the legacy variant, checking no_acked_record_lost only (5-15 s)."""
    return _search("tiny", ["no_acked_record_lost"], variant="legacy")


def test_legacy_tiny_loses_an_acknowledged_record_through_a_recreated_log(legacy_tiny):
    m, r = legacy_tiny
    assert r.result == "violation"
    (v,) = r.violations
    assert v.invariant.id == "no_acked_record_lost"
    trace = v.trace
    # Some step is a BrokerLeaderAndIsr that re-creates the log: copies gain a bit while the broker has an
    # OFFLINE dir (what KIP-112 forbids for isNewReplica=false).
    recreations = []
    for (_, before), (action, after) in zip(trace, trace[1:]):
        if m.rules[action.rule].name != "BrokerLeaderAndIsr":
            continue
        (b,) = action.args
        gained = after.brokers[b].copies[0] & ~before.brokers[b].copies[0]
        if gained and OFFLINE in before.brokers[b].dirs:
            recreations.append((b, gained))
            assert log(after, b) == ()                        # re-created empty
    assert recreations, _labels(m, trace)
    # It ends with the leader (the re-creating broker) lacking an acknowledged record.
    last = trace[-1][1]
    leader = zk(last).leader
    assert leader == recreations[0][0]
    assert last.brokers[leader].hosted[0] == H_LEADER and last.brokers[leader].epoch[0] == zk(last).leader_epoch
    assert last.acked[0] and last.wiped == 0
    held = log(last, leader)
    lost = [o for o in range(len(last.committed[0]))
            if last.acked[0] >> o & 1 and (o >= len(held) or held[o] != last.committed[0][o])]
    assert lost, (last.acked, held)
    assert f"leader {leader}" in v.message
    # The record still exists on the offline dir: it was not the operator who destroyed it.
    offline_dir = last.brokers[leader].dirs.index(OFFLINE)
    assert last.brokers[leader].copies[0] >> offline_dir & 1
    # The trace replays step by step.
    s = init(m)
    for action, after in trace[1:]:
        _, s = m.step(s, m.rules[action.rule].name, action.args)
        assert s == after


def test_kip112_tiny_does_not_lose_data_on_the_legacy_trace(legacy_tiny):
    """The legacy counterexample's steps under KIP-112: the broker refuses (KAFKA_STORAGE_ERROR) to re-create the
    log, so it never serves the partition with an empty log."""
    legacy, r = legacy_tiny
    steps = [(legacy.rules[a.rule].name, *a.args) for a, _ in r.violations[0].trace[1:]]
    m = model_of("tiny")
    s = init(m)
    refused = False
    for name, *args in steps:
        try:
            after = step(m, s, name, *args)
        except ActionDisabled:
            break  # the trace diverges once KIP-112 refused to create the log
        if name == "BrokerLeaderAndIsr":
            (b,) = args
            assert after.brokers[b].copies == s.brokers[b].copies or OFFLINE not in s.brokers[b].dirs
            refused = refused or any(error == E_STORAGE for reply in after.brokers[b].replies for _, error in reply)
        s = after
        assert durability_violations(m, s) == {}
    assert refused


def test_unclean_election_on_tiny_loses_an_acknowledged_record():
    m, r = _search("tiny", ["no_acked_record_lost"], unclean_election=True)
    assert r.result == "violation"
    (v,) = r.violations
    assert v.invariant.id == "no_acked_record_lost"
    last = v.trace[-1][1]
    leader = zk(last).leader
    assert leader != NO_LEADER and zk(last).isr == 1 << leader
    assert any(m.rules[a.rule].name == "ControllerBrokerFailure" for a, _ in v.trace[1:])


@pytest.mark.long_run
def test_kip112_tiny_is_ok_with_every_invariant_and_every_rule_fires():
    m, r = _search("tiny")
    assert r.result == "ok", [(v.invariant.id, v.message) for v in r.violations]
    assert r.violations == []
    # The feature switches (saturation, deletion, ...) are off on tiny: their rules are not in the model.
    configured = {rule.name for _, rule, _ in m.action_space}
    assert {"Write", "DirSaturate", "Retention", "DirRecover", "DeleteTopic"} <= set(m.absent_rules)
    assert not set(m.absent_rules) & set(r.coverage)
    assert {"CreateTopic", "DirFail", "BrokerLeaderAndIsr", "Produce", "Consume"} <= configured
    never = [name for name, n in r.coverage.items() if n == 0 and name in configured]
    assert not never, f"rules that never fired: {never}"


def test_tiny_without_the_data_path_never_fires_its_rules():
    r = _search("tiny", ["no_acked_record_lost"], max_records=0)[1]
    assert r.result == "ok"
    assert all(r.coverage[name] == 0 for name in DATA_RULES)


@pytest.mark.slow
@pytest.mark.skipif(not THOROUGH, reason="exhausts small under KIP-112 with every invariant (minutes): "
                                         "JBODCHECK_PROFILE=thorough")
def test_kip112_small_is_ok_with_every_invariant():
    m, r = _search("small")
    assert r.result == "ok", [(v.invariant.id, v.message) for v in r.violations]


@pytest.mark.slow
@pytest.mark.skipif(not THOROUGH, reason="BFS on small to the legacy data loss (minutes): JBODCHECK_PROFILE=thorough")
def test_legacy_small_loses_an_acknowledged_record():
    m, r = _search("small", ["no_acked_record_lost"], variant="legacy")
    assert r.result == "violation" and r.violations[0].invariant.id == "no_acked_record_lost"


# ---- regressions: behaviour the tests found wrong and the model now gets right ------------------------------

def test_a_follower_rejoins_the_isr_only_once_it_has_the_leaders_epoch_start_offset():
    """ISR expansion needs the follower to reach the leader-epoch start offset as well as the HW (KAFKA-7128,
    Kafka >= 2.1: Partition.isFollowerInSync). Without it, a follower with one of two acknowledged entries
    rejoined a new leader's ISR (whose HW starts at 0) and a later clean election lost the other."""
    m = custom_model(brokers=4, rf=4, dirs=1, max_records=2, max_crashes=3, max_faults=3, max_restarts=0)
    s = run(m, created_topic(m), ("Produce", 0, 0), ("Produce", 0, 0),
            ("ReplicaFetch", 1, 0), ("ReplicaFetch", 1, 0), ("ReplicaFetch", 2, 0), ("ReplicaFetch", 2, 0),
            ("LeaderShrinkIsr", 0, 3))
    assert s.acked == (0b11,) and zk(s).isr == 0b0111 and log(s, 3) == ()
    # The leader dies: broker 1 leads at epoch 1 with ISR {1, 2}; broker 2 has not handled the new epoch yet.
    s = run(m, s, ("BrokerCrash", 0), ("ControllerBrokerFailure", 0), ("BrokerLeaderAndIsr", 1),
            ("BrokerLeaderAndIsr", 3))
    assert zk(s).leader == 1 and s.brokers[1].hw[0] == 0 and log(s, 1) == (0, 0)
    s = step(m, s, "ReplicaFetch", 3, 0)                       # broker 3 fetches one of the two entries
    assert log(s, 3) == (0,)
    # Kafka: broker 3's log end 1 < the leader epoch start offset 2: not in sync. The model adds it here.
    joined = zk(s).isr >> 3 & 1
    # Consequence: brokers 2 and 1 die; broker 3, a clean ISR member, leads without the acknowledged offset 1.
    s = deliver_all(m, s)
    s = deliver_all(m, run(m, s, ("BrokerCrash", 2), ("ControllerBrokerFailure", 2), ("BrokerCrash", 1),
                           ("ControllerBrokerFailure", 1)))
    lost = select_invariants(["no_acked_record_lost"])[0].check(m, s)
    assert not joined and lost is None, (zk(s), lost)


def test_the_new_leaders_hw_catches_up_with_a_caught_up_isr():
    """After a clean failover the new leader's HW starts at 0; a caught-up follower's fetch at the new epoch must
    still raise it (ReplicaFetch is enabled when it changes the leader's HW), or no consumer could ever read the
    committed records from the new leader."""
    m = model_of("small", consumer=True)
    s = run(m, created_topic(m), ("Produce", 0, 0), ("ReplicaFetch", 1, 0), ("ReplicaFetch", 2, 0))
    s = deliver_all(m, step(m, s, "BrokerCrash", 0))
    assert zk(s).leader == 1 and zk(s).isr == 0b110 and log(s, 1) == log(s, 2) == (0,)
    assert s.brokers[1].hw[0] == 0
    # Some data-path steps (a follower's fetch at the new epoch) should let the consumer read offset 0.
    frontier, seen = [s], {s}
    for _ in range(3):
        nxt = []
        for state in frontier:
            for action, after in m.successors(state):
                if m.rules[action.rule].name in DATA_RULES and after not in seen:
                    seen.add(after)
                    nxt.append(after)
        frontier = nxt
    assert any(state.consumed == ((0,),) for state in seen), "no data-path step is enabled after the failover"
