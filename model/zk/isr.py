"""ISR changes in ZooKeeper mode: the leader writes a partition's new ISR to its ZooKeeper record, conditionally
on the record's version (which every controller change bumps with the leader epoch), and then to its cache.
The data path (model/storage/rules_data.py) calls these as the hooks ``isr_writer`` and ``isr_written``."""
from __future__ import annotations

from model.storage.mode import declares
from model.storage.state import H_LEADER, State, replace_at


@declares(reads=("controller.partitions", "broker[*].up", "broker[*].hosted", "broker[*].epoch"), writes=())
def isr_writer(m, s: State, partition: int) -> int:
    """The leader in ZooKeeper, if it runs and leads at the record's epoch: only it can update the ISR there
    (the update is conditional on the record's version, which every controller change bumps with the epoch)."""
    part = s.controller.partitions[partition]
    leader = part.leader
    if leader < 0:
        return -1
    b = s.brokers[leader]
    if b.up and b.hosted[partition] == H_LEADER and b.epoch[partition] == part.leader_epoch:
        return leader
    return -1


@declares(reads=("controller.partitions",), writes=("controller.partitions",))
def isr_written(m, s: State, partition: int, isr: int) -> State:
    """The partition's ZooKeeper record with the new ISR (leader and leader epoch unchanged)."""
    c = s.controller
    part = c.partitions[partition]._replace(isr=isr)
    return s._replace(controller=c._replace(partitions=replace_at(c.partitions, partition, part)))
