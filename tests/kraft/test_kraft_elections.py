"""KRaft elections (docs/kraft.md, "Elections"): PartitionChangeBuilder.build runs tryElection on every change, so
a current leader that no longer passes LeaderAcceptor is replaced by any change of its partition, not only when
it leaves the ISR (apache/kafka PartitionChangeBuilder.electAnyLeader, 3.7.0 to 3.9.0-rc3)."""
from __future__ import annotations

import pytest

from explorer.catalog import build_model, preset_config
from model.kraft.controller import partition_change
from model.kraft.metadata import NO_LEADER, Image, PartitionState, Registration

MODEL = build_model(preset_config("kraft-tiny-faults"))


def _image(leader: int, fenced: tuple = (False, False), dirs_of_0: tuple = (0, 1)) -> Image:
    regs = (Registration(0, fenced[0], dirs_of_0), Registration(1, fenced[1], (2, 3)))
    part = PartitionState(leader, 3, 0b11, 5, (0, 2), topic=1, replicas=(0, 1))
    return Image(regs, (part,))


def test_a_leader_whose_dir_went_offline_is_replaced_by_an_unrelated_change():
    # Leader 0's dir 0 is no longer registered; the change only sets broker 1's Directories entry.
    record = partition_change(MODEL, _image(0, dirs_of_0=(1,)), 0, dirs=(0, 3))
    assert record.leader == 1


def test_a_fenced_leader_still_in_the_isr_is_replaced_by_a_build_that_changes_nothing_else():
    record = partition_change(MODEL, _image(0, fenced=(True, False)), 0, isr=0b11)   # the ISR as it is
    assert record is not None and record.leader == 1


def test_an_acceptable_leader_is_kept_and_no_record_is_written_for_no_change():
    assert partition_change(MODEL, _image(0), 0) is None
    assert partition_change(MODEL, _image(0), 0, dirs=(0, 3)).leader is None   # the leader field is unchanged


def test_no_acceptable_replica_leaves_the_partition_leaderless():
    record = partition_change(MODEL, _image(0, fenced=(True, True)), 0, dirs=(0, 3))
    assert record.leader == NO_LEADER


# ---- a reassignment's completion (PartitionReassignmentReplicas.maybeCompleteReassignment) -------------------------

def _three(kafka: str):
    return build_model(preset_config("kraft-tiny-faults", brokers=3, options={"kafka": kafka}))


def _reassigning(replicas, adding, removing, isr, leader=0) -> Image:
    regs = tuple(Registration(0, False, (2 * b, 2 * b + 1)) for b in range(3))
    dirs = tuple(2 * b for b in replicas)
    part = PartitionState(leader, 3, isr, 5, dirs, topic=1, replicas=replicas, adding=adding, removing=removing)
    return Image(regs, (part,))


@pytest.mark.parametrize("kafka, completes", [("3.7", True), ("3.8", False), ("4.2", False), ("4.3", True),
                                              ("4.4", True)])
def test_a_reassignment_completes_with_its_adding_replicas_in_sync_at_3_7_and_from_4_3(kafka, completes):
    """[0, 1] -> [0, 1, 2] with broker 1 out of the ISR and broker 2 in it: 3.7.x asks only the adding replicas in
    the ISR, 3.8.0 to 4.2 every remaining one (KAFKA-15665), 4.3+ the adding ones again (KAFKA-19975)."""
    done = partition_change(_three(kafka), _reassigning((0, 1, 2), (2,), (), isr=0b101), 0)
    assert (done is not None and done.adding == () and done.replicas is None) == completes


def test_from_4_3_fewer_added_than_removed_still_needs_every_remaining_replica():
    shrunk = _reassigning((0, 1, 2), (), (2,), isr=0b101)                     # [0, 1, 2] -> [0, 1]: 1 is needed
    assert partition_change(_three("4.3"), shrunk, 0) is None
    assert partition_change(_three("3.7"), shrunk, 0).replicas == (0, 1)       # 3.7.x: no adding replica to wait for


def test_a_completion_that_drops_a_replica_bumps_the_leader_epoch():
    """triggerLeaderEpochBumpForReplicaReassignmentIfNeeded: [0, 1] -> [0, 2] completes with leader 0 kept; the
    record names the leader all the same, so its epoch goes up. Adding a replica alone bumps nothing."""
    moved = _reassigning((0, 2, 1), (2,), (1,), isr=0b111)
    record = partition_change(_three("4.4"), moved, 0)
    assert record.replicas == (0, 2) and record.leader == 0
    added = _reassigning((0, 1, 2), (2,), (), isr=0b111)
    record = partition_change(_three("4.4"), added, 0)
    assert record.replicas is None and record.adding == () and record.leader is None
