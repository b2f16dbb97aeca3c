"""The active controller's handlers (QuorumController events), each computing the records of one event from the
image before it (Kafka generates an event's records against the state at its start, then replays them).

Every election goes through ``LeaderAcceptor`` (PartitionChangeBuilder with the acceptor of
ReplicationControlManager.generateLeaderAndIsrUpdates). With ELR (KIP-966, model/kraft/elr.py) the builder keeps
the Eligible Leader Replicas and elects from the ISR, then the ELR, then the last known leader; without it an
ISR that would be empty keeps its last member. Unclean election (unclean.leader.election.enable) is off
(docs/kraft.md).
"""
from __future__ import annotations

from model.kraft import fixes as F
from model.kraft import release
from model.kraft.bugs import bugs
from model.kraft.metadata import (
    K_BROKER_CHANGE, K_PARTITION, K_PARTITION_CHANGE, K_REGISTER, BrokerChange, Image, PartitionChange,
    K_REMOVE_TOPIC, PartitionRecord, RegisterBroker, RemoveTopic, default_dir, is_online,
)
from model.storage.state import NO_LEADER


def exists(image: Image, p: int) -> bool:
    return image.partitions[p].leader_epoch >= 0


def is_active(image: Image, b: int) -> bool:
    """ClusterControlManager.isActive: registered, not fenced and not in controlled shutdown."""
    reg = image.registrations[b]
    return reg is not None and not reg.fenced and not reg.in_controlled_shutdown


def online(m, dir_id: int, registered: tuple, switches: tuple | None = None) -> bool:
    """BrokerRegistration.hasOnlineDir: DirectoryId.isOnline, as before KAFKA-16162's fix when that switch is on
    (``switches``: the model's bug switches by default)."""
    return is_online(dir_id, registered, "KAFKA-16162" not in (bugs(m) if switches is None else switches))


def leader_acceptor(m, image: Image, p: int, b: int, remove: int = -1, add: int = -1,
                    switches: tuple | None = None, unclean: int = -1) -> bool:
    """LeaderAcceptor.test: isAcceptableLeader (b is not the broker being removed nor the one whose unclean
    shutdown is handled, and is the broker being added or active: ClusterControlManager.isActive, unfenced and not
    in controlled shutdown) and ClusterControlManager.hasOnlineDir(b, Directories[b]). ``switches``: the bug
    switches (the model's by default; () for Kafka's fixed code, as the invariants judge)."""
    if b < 0 or b == remove or b == unclean:
        return False
    reg = image.registrations[b]
    if reg is None or (b != add and (reg.fenced or reg.in_controlled_shutdown)):
        return False
    part = image.partitions[p]
    return b in part.replicas and online(m, part.dirs[part.replicas.index(b)], reg.dirs, switches)


def elr_enabled(m) -> bool:
    """Whether the model runs with ELR (FeatureControlManager.isElrFeatureEnabled: eligible.leader.replicas.version
    1; model/kraft/release.py ``elr_on``), kept on the model as the constant ``kraft_elr``."""
    known = getattr(m, "kraft_elr", None)
    return release.elr_on(m.cfg) if known is None else known


def min_isr(m, image: Image, p: int) -> int:
    """ReplicationControlManager.getTopicEffectiveMinIsr: min.insync.replicas, at most the replication factor."""
    return min(m.cfg.min_isr_of(p), len(image.partitions[p].replicas))


def partition_change(m, image: Image, p: int, *, remove: int = -1, add: int = -1, dirs: tuple | None = None,
                     isr: int | None = None, unclean: int = -1, elr: bool | None = None,
                     judged_by: Image | None = None):
    """PartitionChangeBuilder.build (ONLINE election, no unclean election): the target ISR (the given one, or the
    current one without ``remove`` and ``unclean``: generateLeaderAndIsrUpdates' setTargetIsr); a reassignment in
    progress completes when the target ISR without the removing replicas holds the replicas the release asks for
    (release.needed_in_isr_to_complete; completeReassignmentIfNeeded: Replicas and ISR lose the removing ones,
    Adding and Removing empty, Directories follow Replicas), and a completion that drops a replica
    bumps the leader epoch (triggerLeaderEpochBumpForReplicaReassignmentIfNeeded: the leader field set, to the same
    leader if it stays); with ELR the target ELR (maybePopulateTargetElr: empty when the target ISR reaches min ISR,
    else the current ELR and ISR, less the target ISR and the broker whose unclean shutdown is handled); an election
    on every build (tryElection, electAnyLeader): the current leader if it is valid (in the target ISR, or in the
    ELR while the target ISR is empty, and passing LeaderAcceptor), else the first replica in Replicas order that is
    valid (one from the ELR becomes the ISR alone and leaves the ELR), else, with ELR, the last known leader when
    the target ISR and ELR are empty and it passes LeaderAcceptor (canElectLastKnownLeader; KAFKA-19522: whether or
    not it passes): an unclean election, ISR = it alone, LeaderRecoveryState RECOVERING, ELR cleared; else none.
    Without ELR an ISR that would be empty keeps its last member (the leader goes to none), and the ELR is cleared
    (maybeUpdateRecordElr). ``elr``: this builder's ELR flag (the model's by default).
    ``judged_by``: the image LeaderAcceptor reads (``image`` unless a candidate fix says otherwise). The record, or
    None when nothing changes."""
    part = image.partitions[p]
    with_elr = elr_enabled(m) if elr is None else elr
    target = part.isr if isr is None else isr
    if remove >= 0:
        target &= ~(1 << remove)
    if unclean >= 0:
        target &= ~(1 << unclean)
    replicas, adding, removing, new_dirs = part.replicas, part.adding, part.removing, dirs
    if adding or removing:                                  # PartitionReassignmentReplicas.maybeCompleteReassignment
        kept_isr = target & ~sum(1 << b for b in removing)
        kept = tuple(b for b in replicas if b not in removing)
        needed = release.needed_in_isr_to_complete(m, adding, removing, kept)
        if kept_isr and all(kept_isr >> b & 1 for b in needed):
            base = part.dirs if dirs is None else dirs
            new_dirs = tuple(base[replicas.index(b)] for b in kept)
            target, replicas, adding, removing = kept_isr, kept, (), ()
    target_elr = part.elr
    if with_elr:                                            # maybePopulateTargetElr
        if bin(target).count("1") >= min_isr(m, image, p):
            target_elr = 0
        else:
            target_elr = (target_elr | part.isr) & ~target & ~(1 << unclean if unclean >= 0 else 0)

    def acceptable(b):                                      # the builder's LeaderAcceptor
        return leader_acceptor(m, image if judged_by is None else judged_by, p, b, remove, add, unclean=unclean)

    def valid(b):                                           # isValidNewLeader
        return (target >> b & 1 or (not target and target_elr >> b & 1)) and acceptable(b)
    unclean_election = False
    if part.leader != NO_LEADER and valid(part.leader):
        leader = part.leader
    else:
        leader = next((b for b in replicas if valid(b)), NO_LEADER)
        lkl = part.last_known_elr
        # canElectLastKnownLeader (useLastKnownLeaderInBalancedRecovery is never set false). A last known leader
        # of -1 (4.0's rule can record one) is left out: the model elects no broker -1 (docs/kraft.md, ELR).
        if (leader == NO_LEADER and with_elr and not target and not target_elr and len(lkl) == 1 and lkl[0] >= 0
                and ("KAFKA-19522" in bugs(m) or acceptable(lkl[0]))):
            leader, unclean_election = lkl[0], True
    record_isr = None
    if leader != part.leader:                               # tryElection
        if leader >= 0 and target_elr >> leader & 1:
            target, target_elr = 1 << leader, target_elr & ~(1 << leader)
        if unclean_election:
            record_isr = 1 << leader
    if unclean_election or not with_elr:                    # maybeUpdateRecordElr
        target_elr = 0
    if record_isr is None and (target or with_elr) and target != part.isr:
        record_isr = target
    record_leader = None if leader == part.leader else leader
    if record_leader is None and any(b not in replicas for b in part.replicas):
        record_leader = part.leader         # triggerLeaderEpochBumpForReplicaReassignmentIfNeeded: a replica removed
    changed_isr = None if record_isr is None or record_isr == part.isr and not unclean_election else record_isr
    lke = part.last_known_elr                               # maybeUpdateLastKnownLeader
    if with_elr:
        if release.last_known_leader_when_leaderless(m):
            if record_leader == NO_LEADER and not part.last_known_elr:
                lke = (part.leader,)
            elif record_leader is not None and record_leader >= 0 and part.last_known_elr:
                lke = ()
        elif (changed_isr == 0
              and (len(part.last_known_elr) != 1 or part.last_known_elr[0] != part.leader)):
            lke = (part.leader,)
        elif ((record_leader is not None and record_leader >= 0)
              or (part.leader != NO_LEADER and record_leader != NO_LEADER)) and part.last_known_elr:
            lke = ()
    changed_dirs = None if new_dirs is None or new_dirs == part.dirs else new_dirs
    changed_elr = None if target_elr == part.elr else target_elr
    changed_lke = None if lke == part.last_known_elr else lke
    changed = [None if new == old else new for new, old in ((replicas, part.replicas), (adding, part.adding),
                                                            (removing, part.removing))]
    if (record_leader is None and changed_isr is None and changed_dirs is None and changed == [None] * 3
            and changed_elr is None and changed_lke is None):
        return None
    return PartitionChange(K_PARTITION_CHANGE, p, record_leader, changed_isr, changed_dirs, *changed,
                           changed_elr, changed_lke, True if unclean_election else None)


def _updates(m, image, partitions, **how) -> list:
    """ReplicationControlManager.generateLeaderAndIsrUpdates over the given partitions."""
    return [r for r in (partition_change(m, image, p, **how) for p in partitions) if r is not None]


def create_partition(m, image: Image, p: int) -> PartitionRecord:
    """ReplicationControlManager.createTopic with a manual assignment: ISR = the active replicas, leader the
    first of them, Directories from ClusterControlManager.defaultDir."""
    replicas = m.original[p]
    isr = 0
    for b in replicas:
        if is_active(image, b):
            isr |= 1 << b
    leader = next(b for b in replicas if isr >> b & 1)
    # A new topic id (Uuid.randomUuid in Kafka): the partition's last one + 1, unique as the model deletes once.
    return PartitionRecord(K_PARTITION, p, leader, isr, tuple(default_dir(image.registrations[b]) for b in replicas),
                           image.partitions[p].topic + 1, replicas)


def remove_topic(p: int) -> RemoveTopic:
    """ReplicationControlManager.deleteTopic: a RemoveTopicRecord (the partitions go with their topic)."""
    return RemoveTopic(K_REMOVE_TOPIC, p)


def register(b: int, dirs: tuple) -> RegisterBroker:
    """ClusterControlManager.registerBroker: a new incarnation, fenced, its LogDirs replacing the old ones."""
    return RegisterBroker(K_REGISTER, b, dirs)


def broker_shutdown(m, image: Image, b: int, clean: bool) -> list:
    """ReplicationControlManager.handleBrokerShutdown, which ClusterControlManager.registerBroker calls for a new
    incarnation of b (Kafka 4.0+; 3.7 to 3.9's handleBrokerUncleanShutdown writes nothing below metadata.version
    4.0-IV0): with ELR and an unclean shutdown (``clean``: the registration's previous broker epoch is the
    registration's own), b leaves every ISR and every ELR it is in (brokerWithUncleanShutdown: no election of it,
    not even as the last known leader); otherwise as handleBrokerFenced: b leaves every ISR it is in (into the
    ELR if the ISR falls below min ISR). Computed from the image before the registration, its records before the
    RegisterBrokerRecord."""
    if not release.handles_shutdown_at_registration(m):
        return []
    with_b = [p for p in range(m.cfg.partitions) if exists(image, p) and image.partitions[p].isr >> b & 1]
    if elr_enabled(m) and not clean:
        in_elr = [p for p in range(m.cfg.partitions) if exists(image, p) and image.partitions[p].elr >> b & 1]
        return _updates(m, image, with_b, unclean=b) + _updates(m, image, in_elr, unclean=b)
    return _updates(m, image, with_b, remove=b)


def broker_fenced(m, image: Image, b: int) -> list:
    """ReplicationControlManager.handleBrokerFenced: b leaves every ISR it is in (without ELR the last member
    stays; with it b joins the ELR while the ISR is below min ISR) and every leadership, then its registration is
    fenced. An ELR it is in keeps it."""
    with_b = [p for p in range(m.cfg.partitions) if exists(image, p) and image.partitions[p].isr >> b & 1]
    return _updates(m, image, with_b, remove=b) + [BrokerChange(K_BROKER_CHANGE, b, True, None)]


def broker_unfenced(m, image: Image, b: int) -> list:
    """ReplicationControlManager.handleBrokerUnfenced: the registration is unfenced, then leaders are elected
    for the partitions without one (b counts as active)."""
    leaderless = [p for p in range(m.cfg.partitions) if exists(image, p) and image.partitions[p].leader == NO_LEADER]
    return [BrokerChange(K_BROKER_CHANGE, b, False, None)] + _updates(m, image, leaderless, add=b)


def directories_offline(m, image: Image, b: int, offline: tuple) -> list:
    """ReplicationControlManager.handleDirectoriesOffline: for each registered dir of b the heartbeat names
    offline, the partitions indexed under it (directoriesToPartitions, which skips reserved ids) lose b from
    their ISR and leadership; then b's registration keeps only its other dirs."""
    reg = image.registrations[b]
    newly = tuple(d for d in reg.dirs if d in offline)
    if not newly:
        return []
    records = []
    for d in newly:
        under = [p for p in range(m.cfg.partitions) if exists(image, p) and b in image.partitions[p].replicas
                 and image.partitions[p].dirs[image.partitions[p].replicas.index(b)] == d]
        records += _updates(m, image, under, remove=b)
    return records + [BrokerChange(K_BROKER_CHANGE, b, None, tuple(d for d in reg.dirs if d not in newly))]


# Per-partition errors of an AssignReplicasToDirs answer.
UNKNOWN_TOPIC_ID, NOT_LEADER_OR_FOLLOWER = "UNKNOWN_TOPIC_ID", "NOT_LEADER_OR_FOLLOWER"


def assign_replicas_to_dirs(m, image: Image, b: int, epoch: int, entries: tuple) -> tuple[list, str | None, tuple]:
    """ReplicationControlManager.handleAssignReplicasToDirs: a stale broker epoch fails the whole request;
    per entry (partition, dir, topic id): an unknown topic id (the topic was deleted) or a broker that is not a
    replica is a per-partition error; else Directories[b] is set (no partition-epoch check); for a dir not online
    for b, b also leaves the ISR and leadership (generateLeaderAndIsrUpdates over those partitions, from the image
    before the request). The records, the request's error, and the (entry, error) of the failed entries."""
    reg = image.registrations[b]
    if reg is None or reg.epoch != epoch:
        return [], "STALE_BROKER_EPOCH", ()
    records, offline, failed = [], [], []
    for entry in entries:
        p, d, topic = entry
        part = image.partitions[p]
        if not exists(image, p) or part.topic != topic:
            failed.append((entry, UNKNOWN_TOPIC_ID))
            continue
        if b not in part.replicas:
            failed.append((entry, NOT_LEADER_OR_FOLLOWER))
            continue
        i = part.replicas.index(b)
        dirs = part.dirs[:i] + (d,) + part.dirs[i + 1:]
        # The election judges by the registration before the change (Kafka), or by the assigned dir with the
        # candidate fix elect-by-assigned-dir (model/kraft/fixes.py). Before 4.3 this builder has no ELR flag (ELR
        # disabled); the offline-dir updates below have it.
        change = partition_change(m, image, p, dirs=dirs, judged_by=F.assignment_acceptor_image(m, image, p, dirs),
                                  elr=elr_enabled(m) and release.elr_in_assignment(m))
        if change is not None:
            records.append(change)
        if not online(m, d, reg.dirs):
            offline.append(p)
    return records + _updates(m, image, offline, remove=b), None, tuple(failed)
