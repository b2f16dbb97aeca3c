"""KRaft mode's properties at quiescence (rules.py ``quiescent``: every running broker registered, caught up
with the metadata log and with nothing left to report; no session left to time out; no assignment queued or in
flight) and its no-cascade property, from the facts file's list (docs/kraft.md, "Properties").

- ``kraft_directories_match_actual_dir``: the metadata names the dir each running broker's replica is on;
- ``metadata_shows_offline_replicas``: ZooKeeper mode's property of the same meaning (invariants/storage/safety.py),
  with the offline replicas a KRaft broker shows computed as KRaftMetadataCache does: KRaft's core claims
  ``METADATA_SHOWS_OFFLINE_REPLICAS``, the same id and statement with a check that takes the mode's view (a model
  resolves an id among its own features' claims, so ``--invariant metadata_shows_offline_replicas`` on a KRaft
  model is this one; ZooKeeper's core claims the original, the built-in one that `jbodcheck invariants` lists);
- ``no_dir_failure_cascade``: a dir goes offline only by its own failure (KAFKA-16082's symptom);
- ``no_leaderless_partition_with_live_isr_copy``: a partition has a leader whenever an ISR member (or, the ISR
  empty, an ELR member) could lead it with its data (issue 40: LeaderAcceptor judging an old, failed dir can leave
  a partition leaderless for good).
"""
from __future__ import annotations

import attrs

from invariants.storage import safety as storage_safety
from model.kraft.controller import elr_enabled
from model.kraft.disks import id_of
from model.kraft.metadata import dir_name, image_of, is_online
from model.spec.invariant import invariant
from model.storage.broker import live_copy_dir
from model.storage.state import H_FOLLOWER, H_LEADER, NO_LEADER, OFFLINE, bits


def _exists(part) -> bool:
    return part.leader_epoch >= 0


@invariant(
    "kraft_directories_match_actual_dir", kind="quiescent", symmetric=True,  # KRaft declares no dir symmetry
    statement="When nothing is pending, at a metadata.version with directory assignment (3.7-IV2+), for every "
              "existing partition and every running broker that holds its replica's log on a live dir, the "
              "partition's Directories entry for that broker names that dir (UNASSIGNED or another dir only while "
              "an assignment is queued or in flight).",
    reference="KIP-858 (AssignReplicasToDirs keeps Directories up to date); ReplicaManager.maybeUpdateTopicAssignment, "
              "AssignmentsManager, ReplicationControlManager.handleAssignReplicasToDirs",
)
def kraft_directories_match_actual_dir(model, state):
    if not image_of(model, state.controller.log).jbod:
        return None  # before 3.7-IV2 Kafka keeps no assignment: every entry is MIGRATING by design (docs/kraft.md)
    for p, part in enumerate(state.controller.partitions):
        if not _exists(part):
            continue
        for i, b in enumerate(part.replicas):
            broker = state.brokers[b]
            if not broker.up:
                continue
            actual = live_copy_dir(broker, p)
            if actual >= 0 and part.dirs[i] != id_of(broker, actual):
                return (f"broker {b} holds partition {p}'s log on {dir_name(id_of(broker, actual))}, but its "
                        f"Directories entry is {dir_name(part.dirs[i])}")
    return None


def shown_offline(model, image, p: int) -> int:
    """KRaftMetadataCache.getOfflineReplicas: the replicas of p whose broker is unregistered or fenced, or whose
    Directories entry is not online for its registration (BrokerRegistration.hasOnlineDir)."""
    part = image.partitions[p]
    mask = 0
    for i, b in enumerate(part.replicas):
        reg = image.registrations[b]
        if reg is None or reg.fenced or not is_online(part.dirs[i], reg.dirs):
            mask |= 1 << b
    return mask


def truly_offline(model, state, p: int) -> int:
    """The replicas of p that cannot be served: on a broker that is down, or with no copy on a good dir."""
    mask = 0
    for b in state.controller.partitions[p].replicas:
        broker = state.brokers[b]
        if not broker.up or not storage_safety.on_good_dir(broker, p):
            mask |= 1 << b
    return mask


def kraft_metadata_shows_offline_replicas(model, state):
    """metadata_shows_offline_replicas on a KRaft state: every running broker's published image shows as offline
    exactly the replicas on failed dirs of running brokers and those on brokers that are down."""
    for p, part in enumerate(state.controller.partitions):
        if not _exists(part):
            continue
        truth = truly_offline(model, state, p)
        for b, broker in enumerate(state.brokers):
            if not broker.up:
                continue
            shown = shown_offline(model, image_of(model, state.controller.log[:broker.applied]), p)
            if shown != truth:
                return (f"broker {b}'s metadata shows offline replicas {set(bits(shown)) or '{}'} for partition "
                        f"{p}, but {set(bits(truth)) or '{}'} are offline")
    return None


def _metadata_shows_offline_replicas(model, state):
    if "kraft-core" in model.feature_names:
        return kraft_metadata_shows_offline_replicas(model, state)
    return storage_safety.metadata_shows_offline_replicas(model, state)


_metadata_shows_offline_replicas.__name__ = "metadata_shows_offline_replicas"
# The value of the id that KRaft's core claims (explorer/catalog.py); on a ZooKeeper model it is the original.
METADATA_SHOWS_OFFLINE_REPLICAS = attrs.evolve(
    storage_safety.metadata_shows_offline_replicas.invariant, check=_metadata_shows_offline_replicas,
    reference=storage_safety.metadata_shows_offline_replicas.invariant.reference
    + "; KRaft: KRaftMetadataCache.getOfflineReplicas (fenced, unregistered, or !hasOnlineDir)")


@invariant(
    "no_dir_failure_cascade", kind="transition", symmetric=True,
    reads=("broker[*].dirs",),
    statement="A log dir goes offline only by its own failure: no step but the failure of that dir takes a dir "
              "that is not offline offline.",
    reference="KIP-858 (a failed dir costs only its replicas); KAFKA-16082 (a stale future replica marked a "
              "healthy dir offline)",
)
def no_dir_failure_cascade(model, state, action, after):
    own = model.rules[action.rule].name == "DirFail"
    for b, (before_b, after_b) in enumerate(zip(state.brokers, after.brokers)):
        if before_b is after_b or before_b.dirs == after_b.dirs:
            continue
        for d, (old, new) in enumerate(zip(before_b.dirs, after_b.dirs)):
            if new == OFFLINE and old != OFFLINE and not (own and tuple(action.args) == (b, d)):
                return (f"broker {b}'s dir {d} went offline in a step that is not its own failure "
                        f"({model.rules[action.rule].label(action.args)})")
    return None


def eligible_members(model, part) -> int:
    """The replicas an election may pick (PartitionChangeBuilder.electAnyLeader), as a bitmask: the ISR; the ISR
    empty, the ELR (isValidNewLeader: an ELR member passes once it is active with an online dir, LeaderAcceptor);
    both empty, with ELR on, the last known leader alone (canElectLastKnownLeader: LastKnownElr of one member; at
    4.1 and 4.2 an assignment's change, built without ELR, clears the ELR and leaves it there). Without ELR
    (eligible.leader.replicas.version 0: 3.7 to 4.0) the ELR and LastKnownElr stay empty: the ISR."""
    if part.isr or part.elr:
        return part.isr or part.elr
    lkl = part.last_known_elr
    return 1 << lkl[0] if elr_enabled(model) and len(lkl) == 1 and lkl[0] >= 0 else 0


def could_lead(model, state, p: int, b: int) -> bool:
    """Whether eligible member b of partition p could lead it with its data: b runs, is registered and active
    (unfenced, not in controlled shutdown: ClusterControlManager.isActive), hosts p Online in a leader or follower
    role from a log on a dir that is online for its registration (DirectoryId.isOnline of the dir the log is
    actually on, not of the Directories entry), and that log holds every acknowledged record of p."""
    broker, reg = state.brokers[b], state.controller.registrations[b]
    if not broker.up or reg is None or reg.fenced or reg.in_controlled_shutdown:
        return False
    d = live_copy_dir(broker, p)
    if broker.hosted[p] not in (H_LEADER, H_FOLLOWER) or d < 0 or not is_online(id_of(broker, d), reg.dirs):
        return False
    log, committed = broker.logs[p], state.committed[p]
    return all(offset < len(log) and log[offset] == committed[offset] for offset in bits(state.acked[p]))


@invariant(
    "no_leaderless_partition_with_live_isr_copy", kind="quiescent", symmetric=True,
    statement="When nothing is pending (every running broker caught up with the metadata log, no heartbeat, "
              "assignment or move left to do), no existing partition is without a leader while one of its ISR "
              "members (or, its ISR empty, one of its ELR members: PartitionChangeBuilder.isValidNewLeader; both "
              "empty, with ELR, its last known leader: canElectLastKnownLeader) "
              "could lead it with its data: a running broker, registered and active, that hosts the "
              "partition Online from a log on a dir online for its registration and holding every acknowledged "
              "record. At quiescence no protocol step of the model would elect it (Kafka's periodic preferred-"
              "leader election, auto.leader.rebalance.enable, every leader.imbalance.check.interval.seconds, is not "
              "modelled: docs/kraft.md).",
    reference="KIP-858 (a failed dir costs only its own replicas); PartitionChangeBuilder.electAnyLeader; "
              "PartitionChangeBuilder.isValidNewLeader (KIP-966: an ELR member while the ISR is empty) and "
              "canElectLastKnownLeader; "
              "ReplicationControlManager.LeaderAcceptor (issue 40: judged on the Directories entry before the "
              "change)",
)
def no_leaderless_partition_with_live_isr_copy(model, state):
    for p, part in enumerate(state.controller.partitions):
        if not _exists(part) or part.leader != NO_LEADER:
            continue
        able = [b for b in bits(eligible_members(model, part)) if could_lead(model, state, p, b)]
        if able:
            b = able[0]
            who = (f"ISR member {b}" if part.isr else f"ELR member {b}" if part.elr
                   else f"its last known leader {b} (ISR and ELR empty)")
            return (f"partition {p} has no leader although {who} runs active and serves it from "
                    f"{dir_name(id_of(state.brokers[b], live_copy_dir(state.brokers[b], p)))}, online for its "
                    f"registration (Directories entry "
                    f"{dir_name(part.dirs[part.replicas.index(b)])})")
    return None
