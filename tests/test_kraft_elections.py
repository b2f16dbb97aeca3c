"""KRaft elections (docs/kraft.md, "Elections"): PartitionChangeBuilder.build runs tryElection on every change, so
a current leader that no longer passes LeaderAcceptor is replaced by any change of its partition, not only when
it leaves the ISR (apache/kafka PartitionChangeBuilder.electAnyLeader, 3.7.0 to 3.9.0-rc3)."""
from __future__ import annotations

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
