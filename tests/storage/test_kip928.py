"""KIP-928's disk space (Write, DirSaturate, Retention, DirRecover, the reserved file, BrokerRestart) and topic
deletion (KIP-112 scenario 8: DeleteTopic, BrokerStopReplicaDelete, ControllerStopReplicaResponse), on short
hand-driven paths; then three search-level facts about the design choices (docs/model.md, sections 6.4-6.5).

Broker numbers follow the presets: partition 0's replicas are on brokers 0, 1[, 2], broker 0 leads first, and
every replica is created on dir 0. With the reserved file each dir starts with one unit in use.
"""
from __future__ import annotations

import pytest

from explorer.search import SearchOptions, explore
from model import ActionDisabled
from model.zk import requests
from model.storage.state import (
    B_SATURATIONS, D_DONE, D_INELIGIBLE, D_NONE, D_QUEUED, E_NONE, E_STORAGE, GOOD, H_FOLLOWER, H_LEADER, H_NONE,
    H_OFFLINE, H_SATURATED, LEADER_DURING_DELETE, NO_LEADER, P_NONEXISTENT, P_ONLINE, R_DELETION_INELIGIBLE,
    R_DELETION_STARTED, R_NONEXISTENT, R_ONLINE, SATURATED, STOP_REPLICA, STOP_REPLICA_DELETE,
    UPDATE_METADATA, LeaderAndIsrEntry, Partition,
)

from support.helpers import (
    created_topic, custom_model, deliver_all, enabled, guard, init, model_of, policy, run, step, with_broker,
)
from explorer.catalog import select_invariants

SPACE_RULES = ("Write", "DirSaturate", "Retention", "DirRecover")
DELETION_RULES = ("DeleteTopic", "BrokerStopReplicaDelete", "ControllerStopReplicaResponse")





def check(id_, model, state):
    (found,) = select_invariants([id_])
    return found.check(model, state)


def fill(model, state, broker, partition=0):
    """Write until the replica's dir is full."""
    while guard(model, state, "Write", broker, partition) is None:
        state = step(model, state, "Write", broker, partition)
    return state


@pytest.fixture(scope="module")
def sat():
    """tiny with disk space: capacity 3 per dir, the reserved file takes one unit."""
    return model_of("tiny", saturation=True)


@pytest.fixture(scope="module")
def healthy(sat):
    s = created_topic(sat)
    assert [b.hosted for b in s.brokers] == [(H_LEADER,), (H_FOLLOWER,)]
    return s


@pytest.fixture(scope="module")
def saturated(sat, healthy):
    """Leader 0 wrote two segments, filling dir 0 (2 + the reserved file), and its next write failed."""
    return step(sat, fill(sat, healthy, 0), "DirSaturate", 0, 0)


@pytest.fixture(scope="module")
def dele():
    """small (3 brokers, RF 3) with disk space and topic deletion."""
    return model_of("small", saturation=True, deletion=True)


# ---- the switches --------------------------------------------------------------------------------------------

def test_the_features_rules_are_in_the_model_only_when_their_feature_is_on():
    plain = model_of("tiny")
    for name in SPACE_RULES + DELETION_RULES:
        assert name not in plain.rule_index and name in plain.absent_rules, name
    assert [f.name for f in plain.features] == ["kip112-core", "kip112-create", "data"]
    both = model_of("tiny", saturation=True, deletion=True)
    for name in SPACE_RULES + DELETION_RULES:
        assert both.rule(name).domain(both), name
    # Bound 0: DirSaturate leaves the configuration; recovery by restart only: DirRecover too.
    assert model_of("tiny", saturation=True, max_saturations=0).rule("DirSaturate").domain(
        model_of("tiny", saturation=True, max_saturations=0)) == []
    restart_only = model_of("tiny", saturation=True, saturation_recovery="restart")
    assert restart_only.rule("DirRecover").domain(restart_only) == []
    assert restart_only.rule("Retention").domain(restart_only)


def test_initial_space_is_the_reserved_file_on_every_dir():
    s = init(model_of("tiny", saturation=True))
    assert all(b.used == (1, 1) and b.reserved == 0b11 and b.segs == (0,) for b in s.brokers)
    s = init(model_of("tiny", saturation=True, reserved_file=False))
    assert all(b.used == (0, 0) and b.reserved == 0 for b in s.brokers)


# ---- Write ---------------------------------------------------------------------------------------------------

def test_write_fills_the_replicas_dir_one_unit_at_a_time(sat, healthy):
    assert "neither leads nor follows" in guard(sat, step(sat, init(sat), "CreateTopic", 0), "Write", 0, 0)
    s = step(sat, healthy, "Write", 0, 0)
    assert s.brokers[0].segs == (1,) and s.brokers[0].used == (2, 1)
    s = step(sat, s, "Write", 1, 0)                          # a follower's replication fills its own dir
    assert s.brokers[1].segs == (1,) and s.brokers[1].used == (2, 1)
    s = step(sat, s, "Write", 0, 0)
    assert s.brokers[0].used == (3, 1)
    assert "is full" in guard(sat, s, "Write", 0, 0)
    with pytest.raises(ActionDisabled, match="full"):
        sat.step(s, "Write", (0, 0))
    # A replica no longer served (offline dir) takes no traffic.
    assert "neither leads nor follows" in guard(sat, step(sat, healthy, "DirFail", 1, 0), "Write", 1, 0)


# ---- DirSaturate ---------------------------------------------------------------------------------------------

def test_dir_saturate_guard(sat, healthy):
    assert "has free space" in guard(sat, healthy, "DirSaturate", 0, 0)
    full = fill(sat, healthy, 0)
    assert enabled(sat, full, "DirSaturate", 0, 0)
    # A full dir with no replica served on it (hand-made: nothing reachable fills such a dir) takes no write.
    assert "serves no replica on dir 1" in guard(sat, with_broker(full, 0, used=(3, 3)), "DirSaturate", 0, 1)
    assert "is down" in guard(sat, step(sat, full, "BrokerCrash", 0), "DirSaturate", 0, 0)
    assert "not good" in guard(sat, step(sat, full, "DirSaturate", 0, 0), "DirSaturate", 0, 0)
    # The bound: one saturation, and it is a fault.
    both_full = fill(sat, full, 1)
    once = step(sat, both_full, "DirSaturate", 0, 0)
    assert "--max-saturations 1" in guard(sat, once, "DirSaturate", 1, 0)
    two_faults = run(sat, both_full, ("DirFail", 0, 1), ("BrokerCrash", 0))
    assert "--max-faults 2" in guard(sat, two_faults, "DirSaturate", 1, 0)


def test_dir_saturate_deletes_the_reserved_file_and_stops_serving_the_dir(sat, healthy, saturated):
    before, after = fill(sat, healthy, 0).brokers[0], saturated.brokers[0]
    assert before.used == (3, 1) and before.reserved == 0b11
    assert after.dirs == (SATURATED, GOOD)
    assert after.used == (2, 1) and after.reserved == 0b10   # the reserved file's unit is free
    assert after.segs == (2,) and after.copies == before.copies and after.logs == before.logs
    assert after.hosted == (H_SATURATED,) and after.hw == (0,) and after.isr == (0,)
    assert saturated.notifications == 0b01
    assert saturated.budget[B_SATURATIONS] == 1
    assert saturated.brokers[1] == fill(sat, healthy, 0).brokers[1]


def test_dir_saturate_without_the_reserved_file_leaves_the_dir_full():
    m = model_of("tiny", saturation=True, reserved_file=False)
    s = step(m, fill(m, created_topic(m), 0), "DirSaturate", 0, 0)
    b = s.brokers[0]
    assert b.dirs[0] == SATURATED and b.used == (3, 0) and b.segs == (3,) and b.reserved == 0
    assert "no space to roll" in guard(m, s, "Retention", 0, 0)
    assert "fewer than 1 free units" in guard(m, s, "DirRecover", 0, 0)
    assert check("saturated_dir_can_free_space", m, s) is not None


# ---- Retention -----------------------------------------------------------------------------------------------

def test_retention_needs_a_segment_and_a_free_unit_and_frees_the_logs_units(sat, healthy, saturated):
    assert "holds no segment" in guard(sat, healthy, "Retention", 0, 0)
    one = step(sat, healthy, "Write", 0, 0)
    freed = step(sat, one, "Retention", 0, 0)
    assert freed.brokers[0].segs == (0,) and freed.brokers[0].used == (1, 1)
    full = fill(sat, healthy, 0)
    assert "no space to roll" in guard(sat, full, "Retention", 0, 0)
    # On the saturated dir the deleted reserved file's unit lets retention roll and delete (KIP-928).
    s = step(sat, saturated, "Retention", 0, 0)
    assert s.brokers[0].segs == (0,) and s.brokers[0].used == (0, 1) and s.brokers[0].dirs[0] == SATURATED
    assert "is down" in guard(sat, step(sat, one, "BrokerCrash", 0), "Retention", 0, 0)
    assert "no live copy" in guard(sat, step(sat, one, "DirFail", 0, 0), "Retention", 0, 0)


# ---- DirRecover ----------------------------------------------------------------------------------------------

def test_dir_recover_guard(sat, healthy, saturated):
    assert "not saturated" in guard(sat, healthy, "DirRecover", 0, 0)
    assert "fewer than 2 free units" in guard(sat, saturated, "DirRecover", 0, 0)   # 1 free of 3
    freed = step(sat, saturated, "Retention", 0, 0)
    assert enabled(sat, freed, "DirRecover", 0, 0)
    assert "is down" in guard(sat, step(sat, freed, "BrokerCrash", 0), "DirRecover", 0, 0)


def test_dir_recover_rewrites_the_reserved_file_and_the_controller_brings_the_replica_back(sat, saturated):
    s = step(sat, saturated, "Retention", 0, 0)
    recovered = step(sat, s, "DirRecover", 0, 0)
    b = recovered.brokers[0]
    assert b.dirs == (GOOD, GOOD) and b.used == (1, 1) and b.reserved == 0b11
    assert b.hosted == (H_NONE,) and b.epoch == (-1,)          # as after a restart: the controller decides
    assert recovered.notifications == 0b01
    quiet = deliver_all(sat, recovered)
    assert sat.is_quiescent(quiet)
    assert quiet.brokers[0].hosted[0] in (H_LEADER, H_FOLLOWER)
    assert quiet.controller.offline == (0, 0)
    assert all(x.meta[0].offline == 0 for x in quiet.brokers)
    for id_ in ("metadata_shows_offline_replicas", "leader_is_live_isr_member", "no_serving_from_saturated_dir"):
        assert check(id_, sat, quiet) is None


# ---- BrokerRestart, ReplaceDisk ------------------------------------------------------------------------------

def test_broker_restart_makes_saturated_dirs_good_and_rewrites_the_reserved_file(sat, saturated):
    down = deliver_all(sat, step(sat, saturated, "BrokerCrash", 0))
    assert down.brokers[0].dirs[0] == SATURATED and down.brokers[0].reserved == 0b10   # on disk: unchanged
    up = step(sat, down, "BrokerRestart", 0)
    b = up.brokers[0]
    assert b.up and b.dirs == (GOOD, GOOD) and b.reserved == 0b11 and b.used == (3, 1) and b.segs == (2,)


def test_broker_restart_refuses_without_space_for_the_reserved_file(sat, saturated):
    down = deliver_all(sat, step(sat, saturated, "BrokerCrash", 0))
    assert enabled(sat, down, "BrokerRestart", 0)
    no_room = with_broker(down, 0, used=(3, 1), segs=(3,))      # dir 0 full, its reserved file deleted
    assert "no space for the reserved file" in guard(sat, no_room, "BrokerRestart", 0)
    # Without the reserved file there is nothing to write: it starts.
    m = model_of("tiny", saturation=True, reserved_file=False)
    assert enabled(m, no_room, "BrokerRestart", 0)
    up = step(m, no_room, "BrokerRestart", 0)
    assert up.brokers[0].used == (3, 1) and up.brokers[0].dirs == (GOOD, GOOD)


def test_replace_disk_empties_the_dir_and_restart_writes_the_reserved_file(sat, healthy):
    s = run(sat, step(sat, healthy, "Write", 0, 0), ("DirFail", 0, 0))
    assert s.brokers[0].used == (2, 1) and s.brokers[0].segs == (0,)   # the log is out of reach
    s = deliver_all(sat, step(sat, deliver_all(sat, s), "BrokerCrash", 0))
    s = step(sat, s, "ReplaceDisk", 0, 0)
    b = s.brokers[0]
    assert b.dirs == (GOOD, GOOD) and b.used == (0, 1) and b.reserved == 0b10 and b.copies == (0,)
    b = step(sat, s, "BrokerRestart", 0).brokers[0]
    assert b.used == (1, 1) and b.reserved == 0b11


# ---- LeaderAndIsr on saturated dirs --------------------------------------------------------------------------

def test_leader_and_isr_for_a_saturated_replica_is_answered_storage_error(sat, saturated):
    s = step(sat, saturated, "ControllerLogDirEvent")            # probes broker 0 with LeaderAndIsr
    before = s.brokers[0]
    after = step(sat, s, "BrokerLeaderAndIsr", 0).brokers[0]
    assert after.replies == (((0, E_STORAGE),),)
    assert after.hosted == (H_SATURATED,) and after.copies == before.copies and after.epoch == before.epoch
    # The controller elects broker 1 (in the ISR, with everything broker 0 had) and tells everyone.
    quiet = deliver_all(sat, s)
    part = quiet.controller.partitions[0]
    assert part.leader == 1 and part.isr == 0b10 and quiet.controller.offline == (0b1, 0)
    assert all(x.meta[0].offline == 0b01 for x in quiet.brokers)
    for id_ in ("metadata_shows_offline_replicas", "leader_is_live_isr_member", "no_serving_from_saturated_dir",
                "saturated_dir_can_free_space"):
        assert check(id_, sat, quiet) is None


def test_a_log_found_on_a_saturated_dir_is_not_served_and_not_recreated(sat, saturated):
    """A LeaderAndIsr for a partition not hosted (as after a restart) whose log is on a saturated dir: the broker
    marks it saturated and answers KAFKA_STORAGE_ERROR; it does not create a log on its good dir."""
    b = saturated.brokers[0]._replace(hosted=(H_NONE,), epoch=(-1,))
    new, response = requests.handle_leader_and_isr(policy("kip112"), 0, b, (LeaderAndIsrEntry(0, 0, 5, 0b11, False),))
    assert response == ((0, E_STORAGE),)
    assert new.hosted == (H_SATURATED,) and new.copies == (0b01,) and new.epoch == (-1,)


def test_a_new_replica_is_not_created_on_a_saturated_dir():
    """One dir per broker: with dir 0 of broker 0 saturated, a new partition's replica there is refused."""
    m = custom_model(brokers=2, dirs=1, partitions=2, rf=2, max_records=0, saturation=True)
    s = step(m, fill(m, created_topic(m), 0), "DirSaturate", 0, 0)
    s = step(m, s, "CreateTopic", 1)
    s = run(m, s, *[("BrokerLeaderAndIsr", 0)] * sum(1 for x in s.brokers[0].inbox if x.kind == 0))
    assert s.brokers[0].copies[1] == 0 and s.brokers[0].hosted[1] == H_OFFLINE
    assert (1, E_STORAGE) in s.brokers[0].replies[-1]


# ---- StopReplica(delete=true) at the broker ------------------------------------------------------------------

def test_stop_replica_delete_on_a_saturated_replica_succeeds_and_frees_its_space():
    m = model_of("tiny", saturation=True, deletion=True)
    s = step(m, fill(m, created_topic(m), 0), "DirSaturate", 0, 0)
    assert s.brokers[0].used == (2, 1)
    s = step(m, s, "DeleteTopic", 0)
    assert [x.kind for x in s.brokers[0].inbox] == [STOP_REPLICA, STOP_REPLICA_DELETE]
    s = step(m, s, "BrokerStopReplica", 0)
    assert "not StopReplica(delete=true)" in guard(m, step(m, created_topic(m), "DeleteTopic", 0),
                                                   "BrokerStopReplicaDelete", 0)
    s = step(m, s, "BrokerStopReplicaDelete", 0)
    b = s.brokers[0]
    assert b.copies == (0,) and b.segs == (0,) and b.used == (0, 1) and b.hosted == (H_NONE,) and b.logs == ((),)
    assert b.stop_replies == (((0, E_NONE),),) and b.inbox == ()
    assert "no request waiting" in guard(m, s, "BrokerStopReplicaDelete", 0)


def test_stop_replica_delete_on_an_offline_replica_fails_and_the_copy_stays(dele):
    s = step(dele, created_topic(dele), "DirFail", 1, 0)         # the controller does not know yet
    assert s.brokers[1].hosted == (H_OFFLINE,)
    s = step(dele, s, "DeleteTopic", 0)
    assert s.controller.replicas[0][1] == R_DELETION_STARTED    # KIP-928: sent to every live broker
    s = run(dele, s, ("BrokerStopReplica", 1), ("BrokerStopReplicaDelete", 1))
    assert s.brokers[1].stop_replies == (((0, E_STORAGE),),) and s.brokers[1].copies == (0b01,)
    s = step(dele, s, "ControllerStopReplicaResponse", 1)
    assert s.controller.replicas[0][1] == R_DELETION_INELIGIBLE and s.controller.deletion == (D_INELIGIBLE,)
    quiet = deliver_all(dele, s)
    # The other two are deleted; broker 1's is not (the pending notification's probe moves it to OnlineReplica, and
    # its KAFKA_STORAGE_ERROR answer cannot make it ineligible from there: Kafka's invalid transition, refused).
    assert quiet.controller.deletion == (D_INELIGIBLE,)
    assert quiet.controller.replicas[0][0] == quiet.controller.replicas[0][2] == 5
    assert quiet.controller.replicas[0][1] in (R_ONLINE, R_DELETION_INELIGIBLE)
    assert [x.copies for x in quiet.brokers] == [(0,), (0b01,), (0,)]   # deleted where the dirs are live
    assert check("deleted_replica_holds_no_data", dele, quiet) is None


def test_stop_replica_delete_on_an_unhosted_replica_deletes_the_log_on_disk(dele):
    """A restarted broker holds the log on disk but hosts nothing yet: the log is deleted all the same."""
    s = deliver_all(dele, step(dele, created_topic(dele), "BrokerCrash", 2))
    s = step(dele, s, "BrokerRestart", 2)
    b = s.brokers[2]
    assert b.hosted == (H_NONE,) and b.copies == (0b01,)
    new, response = requests.handle_stop_replica_delete(b._replace(inbox=("request",)), (0,))
    assert response == ((0, E_NONE),) and new.copies == (0,) and new.inbox == ()
    # A broker that never had the log answers without error too.
    new, response = requests.handle_stop_replica_delete(init(dele).brokers[0]._replace(inbox=("request",)), (0,))
    assert response == ((0, E_NONE),) and new.copies == (0,)


# ---- the controller's deletion path ---------------------------------------------------------------------------

def test_delete_topic_guard():
    assert "DeleteTopic" not in model_of("small").rule_index
    m = model_of("small", deletion=True)
    assert "does not exist" in guard(m, init(m), "DeleteTopic", 0)
    s = step(m, created_topic(m), "DeleteTopic", 0)
    assert "already being deleted" in guard(m, s, "DeleteTopic", 0)


def test_delete_topic_starts_deleting_every_replica_and_drops_the_partition_from_metadata():
    m = model_of("small", saturation=True, deletion=True, eager_metadata=False)
    s = deliver_all(m, step(m, init(m), "CreateTopic", 0))
    assert all(x.meta[0] is not None for x in s.brokers)
    s = step(m, s, "DeleteTopic", 0)
    c = s.controller
    assert c.deletion == (D_QUEUED,)
    assert c.partitions[0].state == P_NONEXISTENT and c.partitions[0].leader == NO_LEADER
    assert c.replicas == ((R_DELETION_STARTED,) * 3,)
    for b in s.brokers:
        kinds = [x.kind for x in b.inbox]
        assert kinds == [UPDATE_METADATA, STOP_REPLICA, STOP_REPLICA_DELETE]
        assert b.inbox[0].body[0].leader == LEADER_DURING_DELETE
    s = step(m, s, "BrokerUpdateMetadata", 2)
    assert s.brokers[2].meta == (None,) and s.brokers[1].meta != (None,)


def test_delete_topic_with_a_dead_replica_is_ineligible_until_the_broker_starts_again(dele):
    s = deliver_all(dele, step(dele, created_topic(dele), "BrokerCrash", 2))
    s = step(dele, s, "DeleteTopic", 0)
    c = s.controller
    assert c.replicas == ((R_DELETION_STARTED, R_DELETION_STARTED, R_DELETION_INELIGIBLE),)
    assert c.deletion == (D_INELIGIBLE,) and s.brokers[2].inbox == ()
    s = deliver_all(dele, s)
    assert s.controller.deletion == (D_INELIGIBLE,)
    assert [x.copies for x in s.brokers] == [(0,), (0,), (0b01,)]
    assert check("deleted_replica_holds_no_data", dele, s) is None
    s = deliver_all(dele, step(dele, s, "BrokerRestart", 2))     # the retry on ControllerBrokerStartup
    assert s.controller.deletion == (D_DONE,) and [x.copies for x in s.brokers] == [(0,), (0,), (0,)]


def test_deletion_completes_resets_the_record_and_the_topic_is_not_recreated(dele):
    s = step(dele, created_topic(dele), "DeleteTopic", 0)
    trace = []
    s = deliver_all(dele, s, trace)
    responses = [args for name, args in trace if name == "ControllerStopReplicaResponse"]
    assert responses == [(0,), (1,), (2,)]
    c = s.controller
    assert c.deletion == (D_DONE,) and c.replicas == ((R_NONEXISTENT,) * 3,)
    assert c.partitions == (Partition(P_NONEXISTENT, NO_LEADER, -1, 0),)
    assert all(x.copies == (0,) and x.meta == (None,) and x.hosted == (H_NONE,) for x in s.brokers)
    assert "was deleted" in guard(dele, s, "CreateTopic", 0)
    assert "already being deleted or deleted" in guard(dele, s, "DeleteTopic", 0)
    assert dele.is_quiescent(s)
    for inv in select_invariants():
        if inv.kind != "transition":
            assert inv.check(dele, s) is None, inv.id


def test_a_successful_response_counts_only_for_its_replica(dele):
    s = step(dele, created_topic(dele), "DeleteTopic", 0)
    s = run(dele, s, ("BrokerStopReplica", 0), ("BrokerStopReplicaDelete", 0), ("ControllerStopReplicaResponse", 0))
    assert s.controller.replicas == ((5, R_DELETION_STARTED, R_DELETION_STARTED),)
    assert s.controller.deletion == (D_QUEUED,)
    assert "no StopReplica(delete=true) response" in guard(dele, s, "ControllerStopReplicaResponse", 0)


def test_controller_failover_during_a_deletion_restarts_it_and_completes(dele):
    s = step(dele, created_topic(dele), "DeleteTopic", 0)
    s = run(dele, s, ("BrokerStopReplica", 0), ("BrokerStopReplicaDelete", 0))
    assert s.brokers[0].stop_replies and s.brokers[0].copies == (0,)
    s = step(dele, s, "ControllerFailover")
    c = s.controller
    assert c.epoch == 2 and all(x.stop_replies == () for x in s.brokers)   # the answer is lost
    assert c.deletion == (D_QUEUED,) and c.replicas == ((R_DELETION_STARTED,) * 3,)
    assert all(x.inbox and x.inbox[-1].kind == STOP_REPLICA_DELETE for x in s.brokers)
    s = deliver_all(dele, s)
    assert s.controller.deletion == (D_DONE,) and all(x.copies == (0,) for x in s.brokers)


def test_without_saturation_an_offline_replica_gets_no_delete_request():
    """KIP-112 as in Kafka: a replica the controller knows to be offline is ineligible at once."""
    m = model_of("small", deletion=True)
    s = deliver_all(m, step(m, created_topic(m), "DirFail", 1, 0))
    assert s.controller.offline[1] == 0b1
    s = step(m, s, "DeleteTopic", 0)
    assert s.controller.replicas[0][1] == R_DELETION_INELIGIBLE and s.controller.deletion == (D_INELIGIBLE,)
    assert all(x.kind != STOP_REPLICA_DELETE for x in s.brokers[1].inbox)


def test_durability_invariants_lapse_for_a_deleted_topic():
    m = model_of("tiny", saturation=True, deletion=True)
    s = run(m, created_topic(m), ("Produce", 0, 0), ("ReplicaFetch", 1, 0))
    assert s.acked == (0b1,)
    s = deliver_all(m, step(m, s, "DeleteTopic", 0))
    assert s.controller.deletion == (D_DONE,) and all(x.logs == ((),) for x in s.brokers)
    for id_ in ("no_acked_record_lost", "consumer_sees_no_loss_or_duplicate", "reads_below_hw_are_committed"):
        assert check(id_, m, s) is None
    # Hand-made: a leader record with an empty log would break no_acked_record_lost, but not for a deleted topic.
    fake = s._replace(controller=s.controller._replace(partitions=(Partition(P_ONLINE, 0, 5, 0b01),)))
    fake = with_broker(fake, 0, hosted=(H_LEADER,), epoch=(5,))
    assert check("no_acked_record_lost", m, fake) is None
    undeleted = fake._replace(controller=fake.controller._replace(deletion=(D_NONE,)))
    assert check("no_acked_record_lost", m, undeleted) is not None


# ---- search-level facts --------------------------------------------------------------------------------------

# Two brokers with one dir each, one partition, no records; one saturation; no other fault.
SEARCH = dict(brokers=2, dirs=1, partitions=1, rf=2, max_records=0, consumer=False, saturation=True, dir_capacity=2,
              max_dir_failures=0, max_saturations=1, max_crashes=0, max_restarts=0, max_fixes=0, max_failovers=0,
              max_faults=1)


def _bfs(ids, **params):
    m = custom_model(**params)
    return m, explore("bfs", m, select_invariants(ids), SearchOptions())


def test_without_the_reserved_file_a_saturated_dir_cannot_free_space():
    m, r = _bfs(["saturated_dir_can_free_space"], reserved_file=False, **SEARCH)
    assert r.result == "violation"
    (v,) = r.violations
    labels = [m.label(a) for a, _ in v.trace[1:]]
    assert labels[-1] == "DirSaturate(broker=0, dir=0)" and labels.count("Write(broker=0, partition=0)") == 2
    assert "full (2 of 2 units)" in v.message
    m, r = _bfs(["saturated_dir_can_free_space"], reserved_file=True, **SEARCH)
    assert r.result == "ok" and r.coverage["DirSaturate"] > 0 and r.coverage["Retention"] > 0


def test_recovery_without_a_controller_change_leaves_stale_offline_replicas_in_metadata():
    m, r = _bfs(["metadata_shows_offline_replicas"], saturation_recovery="free-space-unchanged-controller", **SEARCH)
    assert r.result == "violation"
    (v,) = r.violations
    labels = [m.label(a).split(" + ")[0] for a, _ in v.trace[1:]]
    assert "DirSaturate(broker=1, dir=0)" in labels and "DirRecover(broker=1, dir=0)" in labels
    assert "shows offline replicas {1}" in v.message and "but {} are offline" in v.message
    m, r = _bfs(["metadata_shows_offline_replicas"], saturation_recovery="free-space", **SEARCH)
    assert r.result == "ok" and r.coverage["DirRecover"] > 0


# The shortest trace to deleted_replica_holds_no_data with Kafka's failReplicaDeletion, found by
# `explore --preset tiny --saturation --deletion --max-records 0 --max-failovers 0 --dir-capacity 2
# --deletion-fails-offline-replicas` (427k states, too slow for a test): replayed step by step.
STALE_DELETION_TRACE = [
    ("CreateTopic", 0), ("BrokerCrash", 1), ("ControllerBrokerFailure", 1), ("BrokerRestart", 1),
    ("BrokerLeaderAndIsr", 0), ("ControllerLeaderAndIsrResponse", 0), ("Write", 0, 0), ("DirSaturate", 0, 0),
    ("BrokerLeaderAndIsr", 0),                    # KAFKA_STORAGE_ERROR: broker 0's replica is saturated
    ("DeleteTopic", 0),                           # StopReplica(delete=true) to broker 0, ineligible for broker 1
    ("ControllerLeaderAndIsrResponse", 0),        # failReplicaDeletion: broker 0's replica leaves DeletionStarted
    ("ControllerLogDirEvent",),                   # ... and is probed with LeaderAndIsr, queued after the delete
    ("ControllerBrokerStartup", 1),               # the retry starts a second deletion of broker 0's replica
    ("BrokerStopReplica", 0), ("BrokerStopReplicaDelete", 0), ("BrokerStopReplica", 0),
    ("BrokerLeaderAndIsr", 0),                    # the probe re-creates the log on dir 1
    ("ControllerStopReplicaResponse", 0),         # the first, stale answer counts the new replica as deleted
]


def _tiny_deletion(waits):
    return model_of("tiny", saturation=True, deletion=True, max_records=0, max_failovers=0, dir_capacity=2,
                    deletion_waits_for_response=waits)


def test_failing_replica_deletion_on_a_storage_error_counts_a_recreated_replica_as_deleted():
    m = _tiny_deletion(False)
    s = init(m)
    for i, (name, *args) in enumerate(STALE_DELETION_TRACE):
        s = step(m, s, name, *args)
        message = check("deleted_replica_holds_no_data", m, s)
        if i < len(STALE_DELETION_TRACE) - 1:
            assert message is None, (i, name)
    assert message == "broker 0 still holds partition 0 on dir 1 although its deletion succeeded"
    assert s.brokers[0].copies == (0b10,) and s.controller.replicas[0][0] == 5


def test_waiting_for_the_delete_answer_keeps_deleted_replicas_empty():
    """The same steps with deletion_waits_for_response: the invariant holds at every step; the storage error
    does not fail broker 0's deletion, so no probe and no second StopReplica are queued behind the delete
    request, and step 16 (BrokerStopReplica(broker=0)) is no longer enabled. Delivering the rest completes the
    deletion with every log gone."""
    m = _tiny_deletion(True)
    s = init(m)
    disabled_at = None
    for i, (name, *args) in enumerate(STALE_DELETION_TRACE, 1):
        if guard(m, s, name, *args) is not None:
            disabled_at = (i, name)
            break
        s = step(m, s, name, *args)
        assert check("deleted_replica_holds_no_data", m, s) is None, (i, name)
        if name == "ControllerLeaderAndIsrResponse" and i == 11:
            assert s.controller.replicas[0][0] == R_DELETION_STARTED
    assert disabled_at == (16, "BrokerStopReplica")
    assert s.brokers[0].inbox == () and s.brokers[0].copies == (0,)
    trace = []
    quiet = deliver_all(m, s, trace)
    assert quiet.controller.deletion == (D_DONE,) and all(x.copies == (0,) for x in quiet.brokers)
    states = [s]
    for name, args in trace:
        states.append(step(m, states[-1], name, *args))
        assert check("deleted_replica_holds_no_data", m, states[-1]) is None
