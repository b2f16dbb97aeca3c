"""Partition reassignment (KIP-112 scenario 7; KafkaController.onPartitionReassignment, Kafka 1.0 to 2.3): the
ReassignPartition and ControllerReassignmentIsrChange rules, guards and effects, on short hand-driven paths; its
resumption after a failover and a broker's start-up; then the checker's three findings (docs/model.md, 11.1).

Broker numbers: in the 3-broker model partition 0 is on brokers [0, 1], broker 0 leads, and the reassignment moves
it to [1, 2] (slots 0, 1, 2 are brokers 0, 1, 2); in the `reassignment` preset (RF 1) it moves from [0] to [1].
"""
from __future__ import annotations

import pytest

from explorer.search import SearchOptions, explore
from model import ModelConfig
from model.zk import requests
from explorer.catalog import preset_config
from model.storage.state import (
    D_NONE, D_QUEUED, D_DONE, E_NONE, E_STORAGE, H_FOLLOWER, H_LEADER, H_NONE, H_OFFLINE, LEADER_AND_ISR, NO_LEADER,
    R_NEW, R_NONEXISTENT, R_ONLINE, RA_DONE, RA_IN_PROGRESS, RA_NONE, STOP_REPLICA, STOP_REPLICA_DELETE,
    UPDATE_METADATA, bits,
)

from support.profiles import THOROUGH

from support.helpers import created_topic, custom_model, deliver_all, enabled, guard, init, model_of, run, step
from explorer.catalog import build_model, select_invariants

REASSIGNMENT_RULES = ("ReassignPartition", "ControllerReassignmentIsrChange")
STOP_REPLICA_DELETE_RULES = ("BrokerStopReplicaDelete", "ControllerStopReplicaResponse")
THREE = dict(brokers=3, dirs=2, partitions=1, rf=2, reassignment=True, max_records=1, consumer=False)




def check(id_, model, *args):
    (found,) = select_invariants([id_])
    return found.check(model, *args)


def lai(broker):
    """The LeaderAndIsr entries waiting at a broker, in order: (leader, leader epoch, ISR brokers, isNew)."""
    return [(e.leader, e.leader_epoch, bits(e.isr), e.is_new) for m in broker.inbox if m.kind == LEADER_AND_ISR
            for e in m.body]


def kinds(broker):
    return [m.kind for m in broker.inbox]


def zk(state, p=0):
    return state.controller.partitions[p]


@pytest.fixture(scope="module")
def ra():
    return custom_model(**THREE)


@pytest.fixture(scope="module")
def acked(ra):
    """Partition 0 on [0, 1], broker 0 leads; one record, replicated to broker 1 and acknowledged."""
    s = run(ra, created_topic(ra), ("Produce", 0, 0), ("ReplicaFetch", 1, 0))
    assert s.acked == (0b1,) and zk(s).leader == 0 and zk(s).isr == 0b011 and zk(s).leader_epoch == 0
    return s


@pytest.fixture(scope="module")
def started(ra, acked):
    """ReassignPartition taken, nothing delivered yet."""
    return step(ra, acked, "ReassignPartition", 0)


@pytest.fixture(scope="module")
def caught_up(ra, started):
    """Every request delivered; broker 2 created its replica, fetched the record and joined the ISR."""
    s = step(ra, deliver_all(ra, started), "ReplicaFetch", 2, 0)
    assert zk(s).isr == 0b111 and s.controller.reassigning == (RA_IN_PROGRESS,)
    return s


# ---- the switch ----------------------------------------------------------------------------------------------

def test_the_reassignment_rules_are_in_the_model_only_with_the_feature():
    plain = custom_model(**{**THREE, "reassignment": False})
    for name in REASSIGNMENT_RULES + STOP_REPLICA_DELETE_RULES:
        assert name not in plain.rule_index and name in plain.absent_rules, name
    assert plain.assignments == plain.original == ((0, 1),) and plain.targets == (None,)
    m = custom_model(**THREE)
    assert m.original == ((0, 1),) and m.targets == ((1, 2),) and m.assignments == ((0, 1, 2),)
    for name in REASSIGNMENT_RULES:
        assert m.rule(name).domain(m) == [(0,)], name
    for name in STOP_REPLICA_DELETE_RULES:   # reassignment requires replica deletion: the old replicas go
        assert m.rule(name).domain(m) == [(0,), (1,), (2,)], name
    assert [f.name for f in m.features] == ["kip112-core", "kip112-create", "data", "replica-deletion",
                                            "reassignment"]
    assert "DeleteTopic" not in {r.name for _, r, _ in m.action_space}
    c = init(m).controller
    assert c.assigned == ((0, 1),) and c.reassigning == (RA_NONE,) and c.replicas == ((R_NONEXISTENT,) * 3,)


def test_only_partition_0_has_a_target():
    m = custom_model(**{**THREE, "partitions": 2})
    assert m.targets == ((1, 2), None) and m.assignments == ((0, 1, 2), (1, 2))
    for name in REASSIGNMENT_RULES:
        assert m.rule(name).domain(m) == [(0,)], name
    assert m.cfg.reassignment_target(1) is None


# ---- ReassignPartition ---------------------------------------------------------------------------------------

def test_reassign_partition_guard(ra, acked, started, caught_up):
    assert "no leader-and-ISR record" in guard(ra, init(ra), "ReassignPartition", 0)
    assert enabled(ra, step(ra, init(ra), "CreateTopic", 0), "ReassignPartition", 0)
    assert enabled(ra, acked, "ReassignPartition", 0)
    assert "already been reassigned" in guard(ra, started, "ReassignPartition", 0)
    done = deliver_all(ra, step(ra, caught_up, "ControllerReassignmentIsrChange", 0))
    assert done.controller.reassigning == (RA_DONE,)
    assert "already been reassigned" in guard(ra, done, "ReassignPartition", 0)
    # A target broker the controller counts dead; a target replica it knows to be on an offline dir.
    dead = deliver_all(ra, step(ra, acked, "BrokerCrash", 2))
    assert "target replica(s) [2] are not online" in guard(ra, dead, "ReassignPartition", 0)
    offline = deliver_all(ra, step(ra, acked, "DirFail", 1, 0))
    assert offline.controller.offline[1] == 0b1
    assert "target replica(s) [1] are not online" in guard(ra, offline, "ReassignPartition", 0)
    # The controller knows nothing of a dir that holds no replica yet: accepted (finding 2 below).
    assert enabled(ra, deliver_all(ra, step(ra, acked, "DirFail", 2, 0)), "ReassignPartition", 0)


def test_reassign_partition_is_refused_for_a_topic_being_deleted():
    """DeleteTopic makes the partition NonExistent at once, so the guard first says it does not exist; the
    deletion's own reason shows once a failover has read the partition back from ZooKeeper while its deletion is
    ineligible (a replica on a dead broker)."""
    m = custom_model(**{**THREE, "deletion": True})
    s = step(m, created_topic(m), "DeleteTopic", 0)
    assert "does not exist" in guard(m, s, "ReassignPartition", 0)
    s = deliver_all(m, step(m, deliver_all(m, step(m, created_topic(m), "BrokerCrash", 1)), "DeleteTopic", 0))
    s = step(m, s, "ControllerFailover")
    assert zk(s).leader_epoch >= 0 and s.controller.deletion != (D_NONE,)
    assert "topic is being deleted" in guard(m, s, "ReassignPartition", 0)


def test_reassign_partition_adds_the_targets_and_sends_is_new_false_to_all_then_is_new_true_to_the_new_one(
        ra, acked, started):
    c = started.controller
    assert c.assigned == ((0, 1, 2),) and c.reassigning == (RA_IN_PROGRESS,)
    assert zk(started) == zk(acked)._replace(leader_epoch=1)        # leader and ISR unchanged, epoch bumped
    assert c.replicas == ((R_ONLINE, R_ONLINE, R_NEW),)
    # Step 2: isNewReplica=false to every replica of old + new; step 3: isNewReplica=true to the added one.
    assert lai(started.brokers[0]) == [(0, 1, [0, 1], False)]
    assert lai(started.brokers[1]) == [(0, 1, [0, 1], False)]
    assert lai(started.brokers[2]) == [(0, 1, [0, 1], False), (0, 1, [0, 1], True)]
    assert kinds(started.brokers[2]) == [LEADER_AND_ISR, UPDATE_METADATA, LEADER_AND_ISR, UPDATE_METADATA]
    assert all(UPDATE_METADATA in kinds(b) for b in started.brokers)
    assert started.brokers[2].copies == (0,)                        # nothing is created before delivery
    assert "not all in its ISR" in guard(ra, started, "ControllerReassignmentIsrChange", 0)
    # Delivered: broker 2 creates the replica and follows; the old replicas keep serving; nothing completes.
    s = deliver_all(ra, started)
    assert [b.hosted for b in s.brokers] == [(H_LEADER,), (H_FOLLOWER,), (H_FOLLOWER,)]
    assert s.brokers[2].copies == (0b01,) and s.brokers[2].logs == ((),)
    assert s.controller.reassigning == (RA_IN_PROGRESS,) and zk(s).isr == 0b011


# ---- ControllerReassignmentIsrChange -------------------------------------------------------------------------

def test_isr_change_guard(ra, acked, started, caught_up):
    assert "not being reassigned" in guard(ra, acked, "ControllerReassignmentIsrChange", 0)
    assert "not all in its ISR" in guard(ra, deliver_all(ra, started), "ControllerReassignmentIsrChange", 0)
    assert enabled(ra, caught_up, "ControllerReassignmentIsrChange", 0)
    done = step(ra, caught_up, "ControllerReassignmentIsrChange", 0)
    assert "not being reassigned" in guard(ra, done, "ControllerReassignmentIsrChange", 0)


def test_completion_moves_the_leader_removes_the_old_replica_and_updates_metadata(ra, caught_up):
    action, done = ra.step(caught_up, "ControllerReassignmentIsrChange", (0,))
    assert check("reassignment_keeps_an_in_sync_copy", ra, caught_up, action, done) is None
    c = done.controller
    assert c.reassigning == (RA_DONE,) and c.assigned == ((1, 2),)
    # Targets OnlineReplica; the old replica through OfflineReplica and deletion to NonExistentReplica.
    assert c.replicas == ((R_NONEXISTENT, R_ONLINE, R_ONLINE),)
    # Leader 0 is not a target: the first live in-sync target leads (epoch 2), then broker 0 leaves the ISR (3).
    assert (zk(done).leader, zk(done).leader_epoch, bits(zk(done).isr)) == (1, 3, [1, 2])
    assert kinds(done.brokers[0]) == [STOP_REPLICA, STOP_REPLICA_DELETE, UPDATE_METADATA]
    # Broker 1 was OnlineReplica: isNewReplica=false with the record as it was; broker 2 (NewReplica) gets nothing
    # for that step; both then get the new leader and the shrunk ISR.
    assert lai(done.brokers[1]) == [(0, 1, [0, 1, 2], False), (1, 2, [0, 1, 2], False), (1, 3, [1, 2], False)]
    assert lai(done.brokers[2]) == [(1, 2, [0, 1, 2], False), (1, 3, [1, 2], False)]
    for b in done.brokers:
        last = [m for m in b.inbox if m.kind == UPDATE_METADATA][-1].body[0]
        assert (last.leader, bits(last.isr), last.offline) == (1, [1, 2], 0)
    trace = []
    quiet = deliver_all(ra, done, trace)
    assert ra.is_quiescent(quiet)
    assert [b.hosted for b in quiet.brokers] == [(H_NONE,), (H_LEADER,), (H_FOLLOWER,)]
    assert quiet.brokers[0].copies == (0,) and quiet.brokers[0].logs == ((),)
    assert quiet.brokers[1].logs == quiet.brokers[2].logs == ((0,),)
    assert ("BrokerStopReplicaDelete", (0,)) in trace and ("ControllerStopReplicaResponse", (0,)) in trace
    for inv in select_invariants():
        if inv.kind != "transition":
            assert inv.check(ra, quiet) is None, inv.id


def test_the_controller_ignores_the_answer_to_the_old_replicas_delete(ra, caught_up):
    """The topic is not being deleted: the StopReplica(delete=true) answer changes nothing at the controller."""
    s = run(ra, caught_up, ("ControllerReassignmentIsrChange", 0), ("BrokerStopReplica", 0))
    assert "not StopReplica(delete=true)" not in (guard(ra, s, "BrokerStopReplicaDelete", 0) or "")
    s = step(ra, s, "BrokerStopReplicaDelete", 0)
    assert s.brokers[0].stop_replies == (((0, E_NONE),),) and s.brokers[0].copies == (0,)
    after = step(ra, s, "ControllerStopReplicaResponse", 0)
    assert after.controller == s.controller and after.controller.deletion == (D_NONE,)
    assert after.brokers[0].stop_replies == ()
    assert [b.inbox for b in after.brokers] == [b.inbox for b in s.brokers]     # nothing sent
    assert "no StopReplica(delete=true) response" in guard(ra, after, "ControllerStopReplicaResponse", 0)


def test_the_new_leader_is_the_first_live_in_sync_target(ra, caught_up):
    """Hand-made: the controller counts broker 1's replica offline while the ZooKeeper ISR still names it (the
    race of finding 1, from the other side): broker 2 is elected."""
    c = caught_up.controller
    s = caught_up._replace(controller=c._replace(offline=(0, 0b1, 0)))
    done = step(ra, s, "ControllerReassignmentIsrChange", 0)
    assert zk(done).leader == 2 and done.controller.assigned == ((1, 2),)


# ---- resumption ----------------------------------------------------------------------------------------------

def test_a_failover_resumes_a_reassignment_in_progress(ra, started):
    s = step(ra, started, "ControllerFailover")
    c = s.controller
    assert c.epoch == 2 and c.reassigning == (RA_IN_PROGRESS,) and c.assigned == ((0, 1, 2),)
    assert zk(s).leader == 0 and zk(s).leader_epoch == 2           # bumped again by the resumed reassignment
    # The new controller's replica state machine starts broker 2's replica as OnlineReplica, so the resumed
    # step 3 (NewReplica) is an invalid transition: broker 2 is asked with isNewReplica=false only.
    assert c.replicas == ((R_ONLINE, R_ONLINE, R_ONLINE),)
    assert lai(s.brokers[2]) and all(not new for *_, new in lai(s.brokers[2]))
    assert lai(s.brokers[2])[-1] == (0, 2, [0, 1], False)
    s = step(ra, deliver_all(ra, s), "ReplicaFetch", 2, 0)
    s = deliver_all(ra, step(ra, s, "ControllerReassignmentIsrChange", 0))
    assert s.controller.reassigning == (RA_DONE,) and zk(s).leader == 1
    assert [b.logs for b in s.brokers] == [((),), ((0,),), ((0,),)]


def test_a_failover_completes_a_reassignment_whose_targets_are_in_sync(ra, caught_up):
    s = step(ra, caught_up, "ControllerFailover")
    c = s.controller
    assert c.reassigning == (RA_DONE,) and c.assigned == ((1, 2),) and zk(s).leader == 1
    assert c.replicas == ((R_NONEXISTENT, R_ONLINE, R_ONLINE),)
    assert STOP_REPLICA_DELETE in kinds(s.brokers[0])


def test_a_target_brokers_startup_resumes_the_reassignment(ra, started):
    # Broker 2 crashes before it handles anything; the controller sees it go and come back.
    s = step(ra, deliver_all(ra, step(ra, started, "BrokerCrash", 2)), "BrokerRestart", 2)
    assert s.controller.reassigning == (RA_IN_PROGRESS,) and s.brokers[2].copies == (0,)
    epoch = zk(s).leader_epoch
    up = step(ra, s, "ControllerBrokerStartup", 2)
    assert zk(up).leader_epoch == epoch + 1                         # updateLeaderEpochAndSendRequest
    for b in (0, 1, 2):
        assert lai(up.brokers[b])[-1] == (0, epoch + 1, [0, 1], False), b
    quiet = deliver_all(ra, up)
    assert quiet.brokers[2].hosted == (H_FOLLOWER,) and quiet.brokers[2].copies == (0b01,)


def test_a_non_target_brokers_startup_does_not_resume_it(ra, started):
    s = step(ra, deliver_all(ra, step(ra, deliver_all(ra, started), "BrokerCrash", 0)), "BrokerRestart", 0)
    assert zk(s).leader == 1 and s.controller.reassigning == (RA_IN_PROGRESS,)
    epoch = zk(s).leader_epoch
    up = step(ra, s, "ControllerBrokerStartup", 0)
    assert zk(up).leader_epoch == epoch
    assert lai(up.brokers[1]) == lai(up.brokers[2]) == []            # only broker 0 is asked (OnlineReplica)
    assert lai(up.brokers[0]) == [(1, epoch, bits(zk(s).isr), False)]


def test_delete_topic_during_a_reassignment_deletes_at_once_and_leaves_it_in_progress():
    """The model as it is: DeleteTopic does not wait for the reassignment. (Kafka 1.0-2.3's TopicDeletion handler
    calls markTopicIneligibleForDeletion for a topic being reassigned *before* enqueueTopicsForDeletion, and that
    call is a no-op for a topic not yet queued; so Kafka's code deletes at once too.) The reassignment never
    completes: the deleted partition has no ISR."""
    m = custom_model(**{**THREE, "deletion": True})
    s = step(m, created_topic(m), "ReassignPartition", 0)
    assert enabled(m, s, "DeleteTopic", 0)
    s = step(m, s, "DeleteTopic", 0)
    assert s.controller.deletion == (D_QUEUED,)
    assert STOP_REPLICA_DELETE in kinds(s.brokers[2])               # the added replica is deleted as well
    quiet = deliver_all(m, s)
    c = quiet.controller
    assert c.deletion == (D_DONE,) and c.reassigning == (RA_IN_PROGRESS,) and c.assigned == ((0, 1, 2),)
    assert all(b.copies == (0,) and b.meta == (None,) for b in quiet.brokers)
    assert "not all in its ISR" in guard(m, quiet, "ControllerReassignmentIsrChange", 0)
    assert check("deleted_replica_holds_no_data", m, quiet) is None


# ---- finding 1: the ZooKeeper ISR completes a reassignment onto a failed dir ---------------------------------

# The shortest trace (9 steps) on the `reassignment` preset, RF 1: broker 0's replica moves to broker 1.
RACE = [
    ("CreateTopic", 0), ("BrokerLeaderAndIsr", 0), ("Produce", 0, 0), ("ReassignPartition", 0),
    ("BrokerLeaderAndIsr", 0), ("BrokerLeaderAndIsr", 1), ("ReplicaFetch", 1, 0),   # broker 1 joins the ISR
    ("DirFail", 1, 0),                                                                # its copy is gone
]


def test_bfs_finds_the_reassignment_race_in_9_steps():
    m = build_model(preset_config("reassignment-race", max_failovers=0, max_fixes=0), symmetry=True)
    r = explore("bfs", m, select_invariants(), SearchOptions())
    assert r.result == "violation"
    (v,) = r.violations
    assert v.invariant.id == "reassignment_keeps_an_in_sync_copy"
    assert len(v.trace) - 1 == 9
    names = [m.rules[a.rule].name for a, _ in v.trace[1:]]
    assert names[-1] == "ControllerReassignmentIsrChange" and "DirFail" in names and "ReassignPartition" in names
    assert "none of its in-sync replicas [1] holds every acknowledged record" in v.message


@pytest.mark.parametrize("completion", ["ControllerReassignmentIsrChange", "ControllerFailover"])
def test_the_race_step_by_step(completion):
    m = model_of("reassignment-race")
    s = init(m)
    for name, *args in RACE:
        s = step(m, s, name, *args)
        assert check("no_acked_record_lost", m, s) is None, name
    assert s.acked == (0b1,) and zk(s).isr == 0b11 and s.notifications == 0b10
    assert s.brokers[1].hosted == (H_OFFLINE,) and s.brokers[1].logs == ((),)
    args = (0,) if completion == "ControllerReassignmentIsrChange" else ()
    action, after = m.step(s, completion, args)
    message = check("reassignment_keeps_an_in_sync_copy", m, s, action, after)
    assert message is not None and "[1]" in message
    assert after.controller.reassigning == (RA_DONE,) and zk(after).leader == 1
    # Broker 0's replica, the only live copy of the acknowledged record, is deleted.
    quiet = deliver_all(m, after)
    assert quiet.brokers[0].logs == ((),) and quiet.brokers[0].copies == (0,)
    # The partition waits offline for broker 1's failed disk, the one copy left (no leader: no invariant fires
    # yet; replacing the disk loses the record, which the full preset finds: no_acked_record_lost).
    assert zk(quiet).leader == NO_LEADER and bits(zk(quiet).isr) == [1] and quiet.controller.assigned == ((1,),)
    assert quiet.brokers[1].copies == (0b01,) and quiet.brokers[1].dirs[0] != quiet.brokers[1].dirs[1]
    # Handled in the other order, the log-dir event first: broker 1 leaves the ISR and nothing completes.
    safe = deliver_all(m, step(m, s, "ControllerLogDirEvent"))
    assert zk(safe).isr == 0b01 and safe.controller.reassigning == (RA_IN_PROGRESS,)
    assert guard(m, safe, "ControllerReassignmentIsrChange", 0) is not None


# ---- finding 2: isNewReplica=false first, so a target broker with an offline dir refuses ---------------------

def test_a_target_broker_with_an_offline_dir_refuses_and_the_reassignment_waits(ra, acked):
    s = deliver_all(ra, step(ra, acked, "DirFail", 2, 0))            # broker 2 holds nothing: nothing to report
    assert s.controller.offline == (0, 0, 0) and s.brokers[2].dirs[0] != s.brokers[2].dirs[1]
    s = step(ra, s, "ReassignPartition", 0)
    assert lai(s.brokers[2]) == [(0, 1, [0, 1], False), (0, 1, [0, 1], True)]
    before = s.brokers[2]
    first = step(ra, s, "BrokerLeaderAndIsr", 2)                     # isNewReplica=false, a dir offline: refused
    assert first.brokers[2].hosted == (H_OFFLINE,) and first.brokers[2].copies == (0,)
    assert first.brokers[2].replies == (((0, E_STORAGE),),)
    second = step(ra, first, "BrokerLeaderAndIsr", 2)                # isNewReplica=true, but already offline
    assert second.brokers[2].replies == (((0, E_STORAGE),), ((0, E_STORAGE),))
    assert second.brokers[2].copies == (0,)
    # Alone, the isNewReplica=true request would have created the replica on the good dir.
    new_only = [e for m_ in before.inbox if m_.kind == LEADER_AND_ISR for e in m_.body if e.is_new]
    alone, response = requests.handle_leader_and_isr(ra.hooks.may_create_log, 2, before, new_only)
    assert response == ((0, E_NONE),) and alone.copies == (0b10,) and alone.hosted == (H_FOLLOWER,)
    # The controller learns the replica is offline; the reassignment waits; the old replicas serve.
    quiet = deliver_all(ra, second)
    assert quiet.controller.reassigning == (RA_IN_PROGRESS,) and quiet.controller.offline[2] == 0b1
    assert zk(quiet).leader == 0 and zk(quiet).isr == 0b011
    assert [b.hosted for b in quiet.brokers] == [(H_LEADER,), (H_FOLLOWER,), (H_OFFLINE,)]
    assert "not all in its ISR" in guard(ra, quiet, "ControllerReassignmentIsrChange", 0)
    assert guard(ra, quiet, "ReplicaFetch", 2, 0) is not None
    assert all(b.meta[0].offline == 0b100 for b in quiet.brokers)


# ---- finding 3: Kafka's log-dir probe skips replicas in NewReplica -------------------------------------------

def _probe_model(probe, **params):
    return build_model(ModelConfig(**params, reassignment=True, max_records=0, consumer=False, max_faults=1, max_crashes=0,
                             max_restarts=0, max_failovers=0, max_fixes=0, probe_new_replicas=probe), symmetry=True)


def _metadata_search(model):
    return explore("bfs", model, select_invariants(["metadata_shows_offline_replicas"]), SearchOptions())


@pytest.mark.parametrize("probe", [True, False])
def test_probe_new_replicas_on_two_brokers(probe):
    """The `reassignment` preset's cluster without records, one dir failure and no other fault, exhausted."""
    m = _probe_model(probe, brokers=2, dirs=2, partitions=1, rf=1)
    r = _metadata_search(m)
    if probe:
        assert r.result == "ok" and r.coverage["ReassignPartition"] > 0 and r.coverage["ControllerLogDirEvent"] > 0
        return
    assert r.result == "violation"
    (v,) = r.violations
    names = [m.rules[a.rule].name for a, _ in v.trace[1:]]
    assert len(names) == 12 and names.index("ReassignPartition") < names.index("DirFail") < names.index(
        "ControllerLogDirEvent")
    assert "shows offline replicas {}" in v.message and "but {1} are offline" in v.message


# The shortest trace with --no-probe-new-replicas on 3 brokers, RF 2 (the lead's command; with --max-crashes,
# --max-restarts, --max-failovers and --max-fixes 0 too, so that the search takes about 2 s).
UNPROBED = [
    ("CreateTopic", 0), ("BrokerLeaderAndIsr", 0), ("ControllerLeaderAndIsrResponse", 0), ("BrokerLeaderAndIsr", 1),
    ("ControllerLeaderAndIsrResponse", 1), ("ReassignPartition", 0), ("BrokerLeaderAndIsr", 0),
    ("ControllerLeaderAndIsrResponse", 0), ("BrokerLeaderAndIsr", 1), ("ControllerLeaderAndIsrResponse", 1),
    ("BrokerLeaderAndIsr", 2), ("ControllerLeaderAndIsrResponse", 2), ("BrokerLeaderAndIsr", 2),
    ("DirFail", 2, 0), ("ControllerLogDirEvent",), ("ControllerLeaderAndIsrResponse", 2),
]
THREE_PROBE = dict(brokers=3, dirs=2, partitions=1, rf=2)


def test_without_probing_new_replicas_bfs_finds_stale_metadata_in_16_steps():
    m = _probe_model(False, **THREE_PROBE)
    r = _metadata_search(m)
    assert r.result == "violation"
    (v,) = r.violations
    assert [(m.rules[a.rule].name, *a.args) for a, _ in v.trace[1:]] == UNPROBED
    assert v.message == "broker 0's metadata shows offline replicas {} for partition 0, but {2} are offline"


@pytest.mark.parametrize("probe", [True, False])
def test_the_probe_reaches_the_new_replica_only_with_probe_new_replicas(probe):
    m = _probe_model(probe, **THREE_PROBE)
    s = init(m)
    for name, *args in UNPROBED[:-2]:
        s = step(m, s, name, *args)
    assert s.controller.replicas == ((R_ONLINE, R_ONLINE, R_NEW),) and s.brokers[2].hosted == (H_OFFLINE,)
    probed = step(m, s, "ControllerLogDirEvent")
    assert lai(probed.brokers[2]) == ([(0, 1, [0, 1], True)] if probe else [])
    quiet = deliver_all(m, probed)
    assert m.is_quiescent(quiet)
    shown = {bits(b.meta[0].offline)[0] if b.meta[0].offline else None for b in quiet.brokers}
    if probe:
        assert quiet.controller.offline[2] == 0b1 and shown == {2}
        assert check("metadata_shows_offline_replicas", m, quiet) is None
    else:
        assert quiet.controller.offline[2] == 0 and shown == {None}
        assert check("metadata_shows_offline_replicas", m, quiet) is not None


# ---- presets -------------------------------------------------------------------------------------------------

FEATURE_RULES = {
    "saturation": ("Write", "DirSaturate", "Retention", "DirRecover"),
    "deletion": ("Write", "DirSaturate", "Retention", "DirRecover", "DeleteTopic", "BrokerStopReplicaDelete",
                 "ControllerStopReplicaResponse"),
    "reassignment": ("ReassignPartition", "ControllerReassignmentIsrChange", "BrokerStopReplicaDelete",
                     "ControllerStopReplicaResponse"),
}
ALL_FEATURE_RULES = {name for names in FEATURE_RULES.values() for name in names}


@pytest.mark.parametrize("preset", sorted(FEATURE_RULES))
def test_each_feature_preset_configures_its_rules_and_no_others(preset):
    configured = {r.name for _, r, _ in build_model(preset_config(preset)).action_space}
    assert set(FEATURE_RULES[preset]) <= configured
    assert not (ALL_FEATURE_RULES - set(FEATURE_RULES[preset])) & configured
    assert not ALL_FEATURE_RULES & {r.name for _, r, _ in build_model(preset_config("small")).action_space}


@pytest.mark.slow
@pytest.mark.skipif(not THOROUGH, reason="exhausts a feature preset (1-3 minutes): JBODCHECK_PROFILE=thorough")
@pytest.mark.parametrize("preset", ["saturation", "deletion"])
def test_feature_preset_is_ok_and_every_configured_rule_fires(preset):
    m = build_model(preset_config(preset), symmetry=True)
    r = explore("bfs", m, select_invariants(), SearchOptions())
    assert r.result == "ok", [(v.invariant.id, v.message) for v in r.violations]
    configured = {rule.name for _, rule, _ in m.action_space}
    assert {name for name in configured if r.coverage[name] == 0} == set()


# ---- with topic deletion (docs/model.md 6.6 and 11.1, finding 7) ----------------------------------------------

_DELETE_WHILE_REASSIGNING = [
    ("CreateTopic", 0), ("BrokerLeaderAndIsr", 0), ("ReassignPartition", 0), ("BrokerLeaderAndIsr", 0),
    ("BrokerLeaderAndIsr", 1), ("ReplicaFetch", 1, 0),   # broker 1 caught up: ISR {0, 1} in ZooKeeper
    ("DeleteTopic", 0),                                    # the partition goes NonExistentPartition
]


def test_a_reassignment_completing_during_topic_deletion_does_not_revive_the_partition():
    """The leader move of a reassignment completing while its topic is deleted goes through the partition state
    machine, which refuses NonExistentPartition -> OnlinePartition: no LeaderAndIsr is sent, and no broker
    re-creates the deleted topic's log or leads it (before the fix: OnlinePartition, leader 1, and broker 1
    re-created the log and led an empty replica of a deleted topic)."""
    m = model_of("reassignment", deletion=True)
    s = run(m, init(m), *_DELETE_WHILE_REASSIGNING)
    assert zk(s).state == 0 and s.controller.deletion == (D_QUEUED,)  # NonExistentPartition
    inboxes = [b.inbox for b in s.brokers]
    action, after = m.step(s, "ControllerReassignmentIsrChange", (0,))
    assert zk(after).state == 0 and zk(after).leader == NO_LEADER
    new = [b.inbox[len(old):] for b, old in zip(after.brokers, inboxes)]
    assert not any(msg.kind == LEADER_AND_ISR for msgs in new for msg in msgs)
    assert check("controller_transitions_valid", m, s, action, after) is None
    end = deliver_all(m, after)
    assert end.controller.deletion == (D_DONE,)
    assert all(b.copies == (0,) and b.hosted == (H_NONE,) for b in end.brokers)


# ---- Kafka versions: --reassignment-procedure (docs/model.md 6.6) ----------------------------------------------

KAFKA_10314 = "kafka-2.7-reassign-onto-a-broker-with-an-offline-log-dir.json"


def _offline_dir_target(procedure):
    """Kafka's testPartitionReassignmentToBrokerWithOfflineLogDir up to the reassignment's first requests handled:
    broker 1 has an offline dir and no replica when partition 0 (on broker 0) is moved to it."""
    m = custom_model(brokers=2, dirs=2, partitions=1, rf=1, reassignment=True, max_records=1, consumer=False,
                     reassignment_procedure=procedure)
    s = run(m, init(m), ("CreateTopic", 0), ("BrokerLeaderAndIsr", 0), ("ControllerLeaderAndIsrResponse", 0),
            ("Produce", 0, 0), ("DirFail", 1, 0), ("ControllerLogDirEvent",), ("ReassignPartition", 0))
    return m, s


def test_the_procedure_is_validated_and_kafka_1_0_is_the_default():
    assert ModelConfig().reassignment_procedure == "kafka-1.0"
    with pytest.raises(ValueError, match="reassignment-procedure"):
        ModelConfig(reassignment_procedure="kafka-3.0")
    assert custom_model(**THREE).hooks.reassignment_procedure.name == "kafka-1.0"
    assert custom_model(**THREE, reassignment_procedure="kafka-2.7").hooks.reassignment_procedure.name == "kafka-2.7"


def test_kafka_2_7_sends_is_new_true_to_the_added_replica_first_and_puts_the_target_first():
    m, s = _offline_dir_target("kafka-2.7")
    assert s.controller.assigned == ((1, 0),)                      # ReplicaAssignment: (new ++ old).distinct
    assert lai(s.brokers[0]) == [(0, 1, [0], False)]
    assert lai(s.brokers[1]) == [(0, 1, [0], True), (0, 1, [0], True)]
    _, s1 = _offline_dir_target("kafka-1.0")
    assert s1.controller.assigned == ((0, 1),)
    assert lai(s1.brokers[1]) == [(0, 1, [0], False), (0, 1, [0], True)]


def test_with_kafka_1_0_the_reassignment_onto_an_offline_dir_broker_stalls():
    """KAFKA-10314 as Kafka 1.0 to 2.6 have it: broker 1 refuses isNewReplica=false, marks the partition offline,
    refuses isNewReplica=true too; nothing more happens until its disk is fixed and it restarts."""
    m, s = _offline_dir_target("kafka-1.0")
    s = deliver_all(m, s)
    assert m.is_quiescent(s) and s.controller.reassigning == (RA_IN_PROGRESS,)
    assert s.brokers[1].hosted == (H_OFFLINE,) and s.brokers[1].copies == (0,)
    assert guard(m, s, "ReplicaFetch", 1, 0) is not None
    assert guard(m, s, "ControllerReassignmentIsrChange", 0) is not None


def test_with_kafka_2_7_it_completes_as_kafkas_integration_test_expects():
    """The scenario file mirrors ControllerIntegrationTest.testPartitionReassignmentToBrokerWithOfflineLogDir:
    leader broker 1 at initialLeaderEpoch + 3, assignment [1], the reassignment done."""
    from explorer.scenario import load_scenario, replay
    from support.helpers import SCENARIOS
    scenario = load_scenario(str(SCENARIOS / KAFKA_10314))
    m = build_model(ModelConfig(**scenario.model))
    assert m.cfg.reassignment_procedure == "kafka-2.7"
    result, trace, failed = replay(m, scenario, select_invariants())
    final = trace[-1][1]
    assert result.result == "ok" and failed == []
    assert zk(final).leader == 1 and zk(final).leader_epoch == 3 and final.controller.reassigning == (RA_DONE,)
    assert final.brokers[1].copies == (0b10,)                     # created on its good dir 1
    # The same steps under Kafka 1.0's procedure cannot be replayed: broker 1 never follows.
    m1 = build_model(ModelConfig(**{**scenario.model, "reassignment_procedure": "kafka-1.0"}))
    names = [s.split("(")[0] for s in scenario.steps]
    s = init(m1)
    for label in scenario.steps[:names.index("ReplicaFetch")]:
        name, args = label.split("(")[0], tuple(int(a.split("=")[1]) for a in label[:-1].split("(")[1].split(",") if a)
        if guard(m1, s, name, *args) is None:
            s = step(m1, s, name, *args)
    assert guard(m1, deliver_all(m1, s), "ReplicaFetch", 1, 0) is not None


def test_kafka_2_7_marks_a_topic_being_deleted_ineligible_while_the_reassignment_runs():
    """A failover resumes the reassignment; Kafka 2.4+'s onPartitionReassignment marks the topic ineligible for
    deletion while it runs (Kafka 1.0's does not). The state machines stay valid either way."""
    outcomes = {}
    for procedure in ("kafka-1.0", "kafka-2.7"):
        m = model_of("reassignment", deletion=True, reassignment_procedure=procedure)
        s = run(m, init(m), *_DELETE_WHILE_REASSIGNING)
        action, after = m.step(s, "ControllerFailover", ())
        assert check("controller_transitions_valid", m, s, action, after) is None
        outcomes[procedure] = (after.controller.reassigning, after.controller.deletion)
    assert outcomes["kafka-2.7"] == ((RA_IN_PROGRESS,), (2,))   # in progress, the topic ineligible
    assert outcomes["kafka-1.0"][1] == (D_QUEUED,)


_FINDING_8 = _DELETE_WHILE_REASSIGNING[:5] + [("BrokerLeaderAndIsr", 1)] + _DELETE_WHILE_REASSIGNING[5:] + [
    ("BrokerStopReplica", 1), ("BrokerStopReplicaDelete", 1), ("ControllerStopReplicaResponse", 1),
    ("ControllerReassignmentIsrChange", 0),
]


def test_a_copy_outlives_the_deletion_after_a_failover():
    """docs/model.md 11.1, finding 8 (faithful to Kafka): the completion counts broker 0's replica deleted before
    it answered, the topic's deletion completes, and a failover drops broker 0's StopReplica(delete=true): in the
    quiescent end state broker 0 still holds the log of a deleted topic. Without the failover the copy goes."""
    m = model_of("reassignment-deletion")
    s = run(m, init(m), *_FINDING_8)
    assert s.controller.deletion == (D_DONE,) and s.brokers[0].copies == (0b01,)
    assert STOP_REPLICA_DELETE in kinds(s.brokers[0])
    assert check("deleted_replica_holds_no_data", m, s) is not None
    kept = deliver_all(m, step(m, s, "ControllerFailover"))
    assert m.is_quiescent(kept) and kept.brokers[0].copies == (0b01,)
    assert check("deleted_replica_holds_no_data", m, kept) is not None
    gone = deliver_all(m, s)
    assert m.is_quiescent(gone) and gone.brokers[0].copies == (0,)
    assert check("deleted_replica_holds_no_data", m, gone) is None
