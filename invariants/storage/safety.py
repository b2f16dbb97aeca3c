"""KIP-112's safety properties."""
from __future__ import annotations

from operator import attrgetter

from model.storage.broker import has_offline_dir, live_copy_dir, served_replicas
from model.storage.state import (
    D_NONE, DIR_NAMES, GOOD, H_NONE, H_OFFLINE, HOSTED_NAMES, NO_LEADER, OFFLINE, REMOVED, bits,
)

from model.spec.invariant import invariant


def _brokers(mask: int) -> str:
    return "{" + ", ".join(str(b) for b in bits(mask)) + "}"


BROKERS = attrgetter("brokers")      # a state's members for per_broker checks (one object: one group)


def first_broker_failure(failures) -> str | None:
    """The message for the first broker whose check failed, given each broker's result (None or a text)."""
    for b, failure in enumerate(failures):
        if failure is not None:
            return f"broker {b} {failure}"
    return None


def per_broker(check):
    """Lift check(broker) -> None | text into check(model, state), naming the first broker that fails.
    Few distinct brokers recur across the states, so results are remembered by broker value, in the model's
    own cache (``model.cached``). The lifted check declares itself per member (model/spec/engine.py
    ``member_check_of``: the broker check, the brokers, how their results make the message): the engines'
    Checker evaluates all of a search's per-broker checks together, once per distinct broker."""

    def run(model, state):
        return first_broker_failure(map(model.cached(check), state.brokers))

    run.__name__, run.__doc__ = check.__name__, check.__doc__
    run.member_check, run.members, run.combine = check, BROKERS, first_broker_failure
    run.broker_check = check          # its former name
    return run


@invariant(
    "no_recreate_with_bad_dir", kind="transition", symmetric=True,
    reads=("broker[*].dirs", "broker[*].inbox", "broker[*].copies"),
    statement="A broker never creates a replica for a LeaderAndIsr with isNewReplica=false while it has an offline log dir.",
    reference="KIP-112 scenario 3 (broker bootstraps with bad log directories); LogManager.getOrCreateLog",
)
def no_recreate_with_bad_dir(model, state, action, after):
    if model.rules[action.rule].name != "BrokerLeaderAndIsr":
        return None
    b = action.args[0]
    before = state.brokers[b]
    if not has_offline_dir(before):
        return None
    for entry in before.inbox[0].body:
        p = entry.partition
        created = after.brokers[b].copies[p] & ~before.copies[p]
        if created and not entry.is_new:
            d = bits(created)[0]
            bad = [i for i, s in enumerate(before.dirs) if s == OFFLINE]
            return (f"broker {b} created partition {p} on dir {d} for a LeaderAndIsr with isNewReplica=false "
                    f"while dir(s) {bad} are offline")
    return None


@invariant(
    "create_only_on_good_dir", kind="transition", symmetric=True,
    reads=("broker[*].copies", "broker[*].dirs"),
    statement="A new replica is created only on a good log dir (not saturated, offline or removed).",
    reference="KIP-112 (new replicas will only be created on good log directory); KIP-928 (saturated dirs)",
)
def create_only_on_good_dir(model, state, action, after):
    for b, (before_b, after_b) in enumerate(zip(state.brokers, after.brokers)):
        if before_b is after_b or before_b.copies == after_b.copies:
            continue
        for p, (old, new) in enumerate(zip(before_b.copies, after_b.copies)):
            for d in bits(new & ~old):
                if before_b.dirs[d] != GOOD:
                    return f"broker {b} created partition {p} on dir {d}, which was {DIR_NAMES[before_b.dirs[d]]}"
    return None


@invariant(
    "no_serving_from_offline_dir", kind="state", symmetric=True,
    reads=("broker[*].hosted", "broker[*].copies", "broker[*].dirs"),
    statement="A broker never leads or follows a replica whose log is not on one of its live log dirs.",
    reference="KIP-112 (broker will stop serving replicas in any bad log directory)",
)
@per_broker
def no_serving_from_offline_dir(broker):
    for p, h, d in served_replicas(broker):
        if d < 0:
            return f"is {HOSTED_NAMES[h]} of partition {p} but holds no copy of it on a live dir"
    return None


@invariant(
    "offline_broker_serves_nothing", kind="state", symmetric=True,
    reads=("broker[*].up", "broker[*].hosted"),
    statement="A broker that is down (crashed or halted) hosts no replica.",
    reference="KIP-112 (broker will be offline if all log directories are bad)",
)
@per_broker
def offline_broker_serves_nothing(broker):
    if not broker.up:
        for p, h in enumerate(broker.hosted):
            if h != H_NONE:
                return f"is down but still {HOSTED_NAMES[h]} for partition {p}"
    return None


@invariant(
    "leader_is_live_isr_member", kind="quiescent", symmetric=True,
    statement="When no message is in flight, a partition's leader, if it has one, is in its ISR and holds its log "
              "on a good dir (not offline, not saturated) of a running broker; topics being deleted are left out.",
    reference="KIP-112 scenario 2 (controller elects leader only from online replicas)",
)
def leader_is_live_isr_member(model, state):
    for p, part in enumerate(state.controller.partitions):
        leader = part.leader
        if leader == NO_LEADER or state.controller.deletion[p] != D_NONE:
            continue
        if not part.isr >> leader & 1:
            return f"partition {p}'s leader {leader} is not in its ISR {_brokers(part.isr)}"
        broker = state.brokers[leader]
        if not broker.up:
            return f"partition {p}'s leader {leader} is down"
        if not on_good_dir(broker, p):
            return f"partition {p}'s leader {leader} holds no copy of it on a good dir"
    return None


def on_good_dir(broker, p: int) -> bool:
    """The broker's live copy of p is on a good dir: it can be served (not offline, not saturated: KIP-928)."""
    d = live_copy_dir(broker, p)
    return d >= 0 and broker.dirs[d] == GOOD


def truly_offline_replicas(model, state, p: int) -> int:
    """The assigned replicas of p that cannot be served: on a dead broker, or with no copy on a good dir."""
    mask = 0
    for b in state.controller.assigned[p]:
        broker = state.brokers[b]
        if not broker.up or not on_good_dir(broker, p):
            mask |= 1 << b
    return mask


@invariant(
    "metadata_shows_offline_replicas", kind="quiescent", symmetric=True,
    statement="When no message is in flight, every running broker's metadata lists as offline exactly the replicas "
              "on offline (or, with KIP-928, saturated) dirs of running brokers plus the replicas on dead brokers (for "
              "every partition with a leader record whose topic is not being deleted).",
    reference="KIP-112 scenario 5 (user queries replicas state): offline_replicas in UpdateMetadata and Metadata",
)
def metadata_shows_offline_replicas(model, state):
    for p, part in enumerate(state.controller.partitions):
        if part.leader_epoch < 0 or state.controller.deletion[p] != D_NONE:
            continue
        truth = truly_offline_replicas(model, state, p)
        for b, broker in enumerate(state.brokers):
            if not broker.up:
                continue
            meta = broker.meta[p]
            if meta is None:
                return f"broker {b}'s metadata has no entry for partition {p}"
            if meta.offline != truth:
                return (f"broker {b}'s metadata shows offline replicas {_brokers(meta.offline)} for partition {p}, "
                        f"but {_brokers(truth)} are offline")
    return None


@invariant(
    "offline_gauges_match", kind="state", symmetric=True,
    reads=("broker[*].up", "broker[*].hosted", "broker[*].copies", "broker[*].dirs"),
    statement="On every running broker, OfflineReplicaCount (partitions it marked offline) equals the number of "
              "partitions it hosts without a copy on a live dir, and OfflineLogDirectoryCount (configured dirs that "
              "are offline) is less than its number of configured dirs.",
    reference="KIP-112 Metrics: OfflineReplicaCount, OfflineLogDirectoryCount",
)
@per_broker
def offline_gauges_match(broker):
    if not broker.up:
        return None
    gauge = sum(1 for h in broker.hosted if h == H_OFFLINE)
    truth = sum(1 for p, h in enumerate(broker.hosted) if h != H_NONE and live_copy_dir(broker, p) < 0)
    if gauge != truth:
        return f"has OfflineReplicaCount {gauge} but {truth} hosted partitions have no live copy"
    configured = sum(1 for s in broker.dirs if s != REMOVED)
    offline_dirs = sum(1 for s in broker.dirs if s == OFFLINE)
    if offline_dirs >= configured:
        return f"is running with OfflineLogDirectoryCount {offline_dirs} of {configured} dirs"
    return None

