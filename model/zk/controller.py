"""The ZooKeeper-era controller: its replica and partition state machines and its request batches.

A ``ControllerStep`` is a scratch copy of the state on which one controller event is processed, step by
step as KafkaController does it (Kafka 1.0 / 3.6, KAFKA-NOTES.md); ``finish()`` returns the new immutable
state. Controller events are atomic with respect to each other (the controller is single-threaded), and
what they send is appended to the brokers' FIFO inboxes.
"""
from __future__ import annotations

from model.zk.deletion import fail_replica_deletion
from model.storage.state import (
    D_INELIGIBLE, D_QUEUED, LEADER_AND_ISR, LEADER_DURING_DELETE, NO_LEADER, P_NEW, P_NONEXISTENT, P_OFFLINE,
    P_ONLINE, R_DELETION_INELIGIBLE, R_DELETION_STARTED, R_DELETION_SUCCESSFUL, R_NEW, R_NONEXISTENT, R_OFFLINE,
    R_ONLINE, STOP_REPLICA, STOP_REPLICA_DELETE, UPDATE_METADATA, Controller, LeaderAndIsrEntry, Message,
    Partition, State, UpdateMetadataEntry,
)

# ReplicaStateMachine's valid previous states for each target (KAFKA-NOTES.md).
VALID_REPLICA_PREVIOUS = {
    R_NEW: (R_NONEXISTENT,),
    R_ONLINE: (R_NEW, R_ONLINE, R_OFFLINE, R_DELETION_INELIGIBLE),
    R_OFFLINE: (R_NEW, R_ONLINE, R_OFFLINE, R_DELETION_INELIGIBLE),
    R_DELETION_STARTED: (R_OFFLINE,),
    R_DELETION_SUCCESSFUL: (R_DELETION_STARTED,),
    R_DELETION_INELIGIBLE: (R_OFFLINE, R_DELETION_STARTED),
    R_NONEXISTENT: (R_DELETION_SUCCESSFUL,),
}
# PartitionStateMachine's valid previous states for each target.
VALID_PARTITION_PREVIOUS = {
    P_NEW: (P_NONEXISTENT,),
    P_ONLINE: (P_NEW, P_ONLINE, P_OFFLINE),
    P_OFFLINE: (P_NEW, P_ONLINE, P_OFFLINE),
    P_NONEXISTENT: (P_OFFLINE,),
}


def is_replica_online(live: int, offline, broker: int, partition: int) -> bool:
    """controllerContext.isReplicaOnline: broker alive and not known to hold the partition on an offline dir
    (live: the controller's live-broker bitmask; offline: per broker, the partitions it knows to be offline)."""
    return bool(live >> broker & 1) and not (offline[broker] >> partition & 1)


def targets_in_isr(isr: int, target) -> bool:
    """Every target replica of a reassignment is in the ISR bitmask."""
    return all(isr >> b & 1 for b in target)


# The attribute of a model that holds, while steps are recorded (``recording``), the list of their changes.
_RECORD = "controller_step_record"


def recording(model, run) -> tuple:
    """Every individual replica and partition state change that the controller steps of ``model`` make while
    ``run()`` runs, in order (the invariant controller_transitions_valid replays a step so,
    invariants/zk/controller.py). Each entry is ("replica", p, i, previous, target, exemption) or
    ("partition", p, None, previous, target, exemption); exemption is None, or the name of the Kafka procedure
    that sets the state without validating it. The record is the model's own: steps of other models are not
    recorded meanwhile."""
    previous = getattr(model, _RECORD, None)
    record: list = []
    setattr(model, _RECORD, record)
    try:
        run()
        return tuple(record)
    finally:
        setattr(model, _RECORD, previous)


class ControllerStep:
    def __init__(self, model, state: State):
        self.m = model
        # The model's record of state changes while ``recording`` (None otherwise, as in a search).
        self.record: list | None = getattr(model, _RECORD, None)
        self.state = state
        c = state.controller
        self.epoch = c.epoch
        self.live = c.live
        self.offline = list(c.offline)
        self.partitions = list(c.partitions)
        self.replicas = [list(r) for r in c.replicas]
        self.deletion = list(c.deletion)
        self.assigned = list(c.assigned)
        self.reassigning = list(c.reassigning)
        self.inboxes = [b.inbox for b in state.brokers]
        self.replies = [b.replies for b in state.brokers]
        self.notifications = state.notifications
        self._new_batch()

    # ---- queries -------------------------------------------------------------------------------
    def is_replica_online(self, broker: int, partition: int) -> bool:
        return is_replica_online(self.live, self.offline, broker, partition)

    def has_leadership_record(self, p: int) -> bool:
        return self.partitions[p].leader_epoch >= 0

    def live_brokers(self) -> list[int]:
        return [b for b in range(self.m.cfg.brokers) if self.live >> b & 1]

    def replicas_on(self, broker: int) -> list[tuple[int, int]]:
        """(partition, replica index) of every replica assigned to the broker in a partition that exists, or
        whose topic is being deleted (its assignment stays until the deletion completes)."""
        return [(p, i) for p, i in self.m.replicas_on[broker] if self.is_assigned(p) and broker in self.assigned[p]]

    def assigned_replicas(self, p: int) -> list[tuple[int, int]]:
        """(partition, replica index) of the partition's currently assigned replicas, in assignment order."""
        slots = self.m.assignments[p]
        return [(p, slots.index(b)) for b in self.assigned[p]]

    def is_assigned(self, p: int) -> bool:
        return self.partitions[p].state != P_NONEXISTENT or self.is_queued_for_deletion(p)

    def is_queued_for_deletion(self, p: int) -> bool:
        return self.deletion[p] in (D_QUEUED, D_INELIGIBLE)

    # ---- request batches (ControllerBrokerRequestBatch) -----------------------------------------
    def _new_batch(self) -> None:
        self.batch_lai: dict[int, dict[int, LeaderAndIsrEntry]] = {}
        self.batch_um: set[int] = set()
        self.batch_sr: dict[int, list[int]] = {}
        self.batch_srd: dict[int, list[int]] = {}

    def add_leader_and_isr(self, brokers, p: int, is_new: bool) -> None:
        """addLeaderAndIsrRequestForBrokers: the partition's current record, and UpdateMetadata to all live brokers."""
        part = self.partitions[p]
        # The design's choice of isNewReplica (hook ``is_new_replica``; the adopted design keeps the replica
        # state machine's: true from NewReplica only; KIP-112's draft asks its created list, model/zk/design_draft.py).
        is_new_replica = self.m.hooks.is_new_replica
        for b in brokers:
            requests = self.batch_lai.setdefault(b, {})
            already_new = p in requests and requests[p].is_new
            new = is_new_replica(self, b, p, is_new)
            requests[p] = LeaderAndIsrEntry(p, part.leader, part.leader_epoch, part.isr, new or already_new)
        self.batch_um.add(p)

    def add_update_metadata(self, partitions) -> None:
        self.batch_um.update(p for p in partitions if self.has_leadership_record(p))

    def add_stop_replica(self, broker: int, p: int, delete: bool = False) -> None:
        (self.batch_srd if delete else self.batch_sr).setdefault(broker, []).append(p)

    def _send(self, broker: int, message: Message) -> None:
        # The controller has a channel only to brokers it believes alive; a request to a broker that is
        # down is lost (its channel is removed when the controller processes the broker's failure).
        if self.live >> broker & 1 and self.state.brokers[broker].up:
            self.inboxes[broker] = self.inboxes[broker] + (message,)

    def flush(self) -> None:
        """sendRequestsToBrokers: per broker, LeaderAndIsr first, then UpdateMetadata, then StopReplica."""
        for b in sorted(self.batch_lai):
            entries = tuple(self.batch_lai[b][p] for p in sorted(self.batch_lai[b]))
            self._send(b, Message(LEADER_AND_ISR, entries))
        if self.batch_um:
            entries = tuple(self._metadata_entry(p) for p in sorted(self.batch_um))
            for b in self.live_brokers():
                self._send(b, Message(UPDATE_METADATA, entries))
        for b in sorted(self.batch_sr):
            self._send(b, Message(STOP_REPLICA, tuple(sorted(set(self.batch_sr[b])))))
        for b in sorted(self.batch_srd):
            self._send(b, Message(STOP_REPLICA_DELETE, tuple(sorted(set(self.batch_srd[b])))))
        self._new_batch()

    def _metadata_entry(self, p: int) -> UpdateMetadataEntry:
        part = self.partitions[p]
        if self.is_queued_for_deletion(p):
            return UpdateMetadataEntry(p, LEADER_DURING_DELETE, part.isr, 0)
        offline = 0
        for b in self.assigned[p]:
            if not self.is_replica_online(b, p):
                offline |= 1 << b
        return UpdateMetadataEntry(p, part.leader, part.isr, offline)

    # ---- state changes (every one goes through these two, which record it when asked) -------------
    def set_replica(self, p: int, i: int, target: int, exempt: str | None = None) -> None:
        """Write replica (p, i)'s state. ``exempt``: the Kafka procedure that sets it without validation."""
        previous = self.replicas[p][i]
        self.replicas[p][i] = target
        if self.record is not None and previous != target:
            self.record.append(("replica", p, i, previous, target, exempt))

    def set_partition(self, p: int, part: Partition, exempt: str | None = None) -> None:
        """Write partition p's record and state. ``exempt`` as for set_replica."""
        previous = self.partitions[p].state
        self.partitions[p] = part
        if self.record is not None and previous != part.state:
            self.record.append(("partition", p, None, previous, part.state, exempt))

    # ---- replica state machine ------------------------------------------------------------------
    def _set_replica_state(self, p: int, i: int, target: int) -> bool:
        if self.replicas[p][i] not in VALID_REPLICA_PREVIOUS[target]:
            return False  # Kafka logs an invalid transition and leaves the replica as it is
        self.set_replica(p, i, target)
        return True

    def replicas_to_new(self, replicas) -> None:
        """To NewReplica. Kafka sends a LeaderAndIsr only if a leadership record exists (never at creation)."""
        for p, i in replicas:
            if self._set_replica_state(p, i, R_NEW) and self.has_leadership_record(p):
                self.add_leader_and_isr([self.m.assignments[p][i]], p, is_new=True)
        self.flush()

    def replicas_to_online(self, replicas) -> None:
        """To OnlineReplica: from NewReplica nothing is sent; otherwise LeaderAndIsr with isNew=false."""
        for p, i in replicas:
            previous = self.replicas[p][i]
            if self._set_replica_state(p, i, R_ONLINE) and previous != R_NEW and self.has_leadership_record(p):
                self.add_leader_and_isr([self.m.assignments[p][i]], p, is_new=False)
        self.flush()

    def replicas_to_offline(self, replicas) -> None:
        """To OfflineReplica: StopReplica(delete=false), removal from the ISR, LeaderAndIsr to the others (not
        for a topic being deleted)."""
        for p, i in replicas:
            if self.replicas[p][i] not in VALID_REPLICA_PREVIOUS[R_OFFLINE]:
                continue
            broker = self.m.assignments[p][i]
            self.add_stop_replica(broker, p)
            if self.has_leadership_record(p):
                self._remove_replica_from_isr(p, broker)
                if not self.is_queued_for_deletion(p):
                    others = [b for b in self.assigned[p] if b != broker]
                    self.add_leader_and_isr(others, p, is_new=False)
            self.set_replica(p, i, R_OFFLINE)
        self.flush()

    def replicas_to(self, replicas, target: int) -> None:
        """A deletion state change: ReplicaDeletionStarted sends StopReplica(delete=true); NonExistentReplica
        forgets the replica; the others send nothing. Invalid transitions are refused."""
        for p, i in replicas:
            if self._set_replica_state(p, i, target) and target == R_DELETION_STARTED:
                self.add_stop_replica(self.m.assignments[p][i], p, delete=True)
        self.flush()

    def _remove_replica_from_isr(self, p: int, broker: int) -> None:
        part = self.partitions[p]
        if not part.isr >> broker & 1:
            return
        leader = NO_LEADER if part.leader == broker else part.leader
        isr = part.isr & ~(1 << broker)
        if isr == 0:
            isr = part.isr  # the last ISR member is kept (unclean leader election is disabled)
        self.set_partition(p, Partition(part.state, leader, part.leader_epoch + 1, isr))

    # ---- partition state machine ----------------------------------------------------------------
    def _set_partition_state(self, p: int, target: int) -> bool:
        part = self.partitions[p]
        if part.state not in VALID_PARTITION_PREVIOUS[target]:
            return False
        self.set_partition(p, part._replace(state=target))
        return True

    def partitions_to_new(self, partitions) -> None:
        for p in partitions:
            self._set_partition_state(p, P_NEW)

    def partitions_to_offline(self, partitions) -> None:
        for p in partitions:
            self._set_partition_state(p, P_OFFLINE)

    def trigger_online_partition_state_change(self, partitions=None) -> None:
        """Move every New or Offline partition (of those given; default all) to Online, electing a leader
        where one can be elected."""
        for p in range(len(self.partitions)) if partitions is None else partitions:
            part = self.partitions[p]
            if self.is_queued_for_deletion(p):
                continue  # topics queued for deletion are left out (PartitionStateMachine)
            if part.state == P_NEW:
                self._initialize_leader_and_isr(p)
            elif part.state == P_OFFLINE:
                self._elect_offline_leader(p)
        self.flush()

    def _initialize_leader_and_isr(self, p: int) -> None:
        live = [b for b in self.assigned[p] if self.is_replica_online(b, p)]
        if not live:
            return  # no live replica: the partition stays New
        isr = 0
        for b in live:
            isr |= 1 << b
        self.set_partition(p, Partition(P_ONLINE, live[0], 0, isr))
        self.add_leader_and_isr(live, p, is_new=True)

    def _elect_offline_leader(self, p: int) -> None:
        part = self.partitions[p]
        live = [b for b in self.assigned[p] if self.is_replica_online(b, p)]
        live_isr = [b for b in live if part.isr >> b & 1]
        if not live_isr:
            if not (self.m.cfg.unclean_election and live):
                return  # NoReplicaOnlineException: the partition stays Offline
            live_isr = live[:1]  # unclean election: the first live replica, alone in the ISR
        isr = 0
        for b in live_isr:
            isr |= 1 << b
        self.set_partition(p, Partition(P_ONLINE, live_isr[0], part.leader_epoch + 1, isr))
        self.add_leader_and_isr(live, p, is_new=False)

    # ---- controller procedures ------------------------------------------------------------------
    def on_replicas_become_offline(self, replicas, answer_pending: bool = False) -> None:
        """KafkaController.onReplicasBecomeOffline: replicas of topics being deleted fail their deletion, except,
        when answer_pending, those whose StopReplica(delete=true) is on its way to a live broker (KIP-928)."""
        without_leader = [
            p for p, part in enumerate(self.partitions)
            if self.has_leadership_record(p) and part.state != P_NONEXISTENT and not self.is_queued_for_deletion(p)
            and (part.leader == NO_LEADER or not self.is_replica_online(part.leader, p))
        ]
        self.partitions_to_offline(without_leader)
        self.trigger_online_partition_state_change()
        self.replicas_to_offline([(p, i) for p, i in replicas if not self.is_queued_for_deletion(p)])
        failed = [(p, i) for p, i in replicas if self.is_queued_for_deletion(p)
                  and not (answer_pending and self.replicas[p][i] == R_DELETION_STARTED)]
        if failed:
            fail_replica_deletion(self, failed)
        if not without_leader:
            self.add_update_metadata(range(len(self.partitions)))
            self.flush()

    def finish(self) -> State:
        brokers = tuple(
            b if (b.inbox is inbox and b.replies is replies) else b._replace(inbox=inbox, replies=replies)
            for b, inbox, replies in zip(self.state.brokers, self.inboxes, self.replies)
        )
        controller = type(self.state.controller)(
            self.epoch, self.live, tuple(self.offline), tuple(self.partitions), tuple(map(tuple, self.replicas)),
            tuple(self.deletion), tuple(self.assigned), tuple(self.reassigning), *self.state.controller[8:],
        )
        s = self.state
        if controller == s.controller:
            controller = s.controller  # the same object: memos and transition invariants see it unchanged at once
        return s._replace(brokers=brokers, controller=controller, notifications=self.notifications)
