"""Fixed Kafka bugs that KRaft mode can re-introduce (``--bug KAFKA-NNNNN``; docs/kraft.md, "Bug switches").

Each switch brings back the code path of the versions before the fix. ``BUGS`` is the one list: the option's check,
``jbodcheck bugs`` and the docs read it. ``NOT_EXPRESSED``: the other known bugs of KIP-858's code (the facts
read from Kafka's JIRA), each with what the model lacks to express it; an id that gets a switch in ``BUGS`` leaves
it (a test checks that none is in both; ``not_expressed`` also filters).
"""
from __future__ import annotations

from typing import NamedTuple


class Bug(NamedTuple):
    broke: str        # what the bug broke, in a line
    # The first Kafka version with the fix, per release line it was fixed in ("3.7.2, 3.8.1": 3.7.0 to 3.7.1 and
    # 3.8.0 have the bug, 3.9.0 and later do not); ``present`` reads it.
    fixed: str
    scenario: str     # the scenario file (scenarios/) that replays to its violation with the switch
    # The feature the switch needs, besides kraft-core (which takes the option): without it the switch would change
    # nothing, and the configuration is refused (refuse_without_feature). None: kraft-core's own code path.
    feature: str | None = None


BUGS: dict[str, Bug] = {
    "KAFKA-16234": Bug("an Offline partition's topic id was read from its log, gone with the failed dir: the next "
                       "delta treated the partition as new and re-created its log empty on another dir", "3.7.1",
                       "kraft-kafka-16234-offline-partition-recreated.json"),
    "KAFKA-16157": Bug("an Offline partition kept no topic id: gate 1 skipped it even for a re-created topic, so "
                       "the broker never hosted the new topic's replica", "3.7.0",
                       "kraft-kafka-16157-recreated-topic-never-hosted.json", "kraft-deletion"),
    "KAFKA-17190": Bug("AssignmentsManager sent assignments of deleted topics and retried the controller's "
                       "UNKNOWN_TOPIC_ID forever: the queue never drained", "3.7.2, 3.8.1",
                       "kraft-kafka-17190-assignment-of-a-deleted-topic-retried.json", "kraft-deletion"),
    "KAFKA-16886": Bug("AssignmentsManager retried the controller's NOT_LEADER_OR_FOLLOWER forever: the assignment of "
                       "a replica reassigned away never left the queue", "3.7.1",
                       "kraft-kafka-16886-assignment-of-a-removed-replica-retried.json", "kraft-reassignment"),
    "KAFKA-16162": Bug("after the upgrade to metadata.version 3.7-IV2 a registration without dirs (from before it) "
                       "made every dir offline: AssignReplicasToDirs removed each broker from the ISR and no replica "
                       "was an acceptable leader; brokers did not re-register their dirs", "3.7.0",
                       "kraft-kafka-16162-no-leader-after-the-mv-upgrade.json", "kraft-mv-upgrade"),
    "KAFKA-16757": Bug("a broker's re-registration with its dirs after the upgrade to metadata.version 3.7-IV2 was a "
                       "new registration: it fenced the broker (and gave it a new broker epoch) while it led "
                       "partitions", "3.7.1", "kraft-kafka-16757-reregistration-fences-the-leader.json",
                       "kraft-mv-upgrade"),
    "KAFKA-15649": Bug("no log.dir.failure.timeout.ms: a broker whose dir failure no heartbeat answer acknowledged "
                       "(the controller timing its heartbeats out) stayed up, an unfenced leader on the dead dir, "
                       "for ever (with the feature kraft-sessions)", "3.8.0",
                       "kraft-kafka-15649-unacknowledged-failure-keeps-the-leader.json", "kraft-sessions"),
    # kraft-future's switches (model/kraft/future.py): naming one turns that feature on.
    "KAFKA-16297": Bug("3.7.0's ReplicaAlterLogDirsThread: a promotion the controller had accepted (Directories = "
                       "the future dir) was not reverted when a dir failure aborted it (only a QUEUED one was), so "
                       "the metadata kept naming the future dir and the controller never moved the partition off "
                       "the failed dir; and a delta did not reset a promotion (the fix's PromotionState(None) in "
                       "addPartitions, finding 2's reset, came with the fix). 3.7.0's AssignmentsManager (KAFKA-16365) "
                       "is not restored", "3.7.1",
                       "kraft-kafka-16297-aborted-promotion-not-reverted.json", "kraft-future"),
    "KAFKA-16082": Bug("a -future log abandoned by a crash after its promotion was accepted was not promoted at "
                       "start-up: the current log was re-created empty in the future log's dir, the stale future "
                       "log resumed, and its rename failed and took the healthy dir offline", "3.7.1",
                       "kraft-kafka-16082-stale-future-log-takes-a-dir-offline.json", "kraft-future"),
    # kraft-elr's (model/kraft/elr.py): ELR is on from Kafka 4.1 (4.0 with --option elr=true).
    "KAFKA-19522": Bug("PartitionChangeBuilder.canElectLastKnownLeader ignored LeaderAcceptor's answer: when the ISR "
                       "and ELR are empty the last known leader was elected even while fenced, or being removed "
                       "(its unclean shutdown being handled at its registration), or with its dir offline",
                       "4.1.0", "kraft-kafka-19522-fenced-last-known-leader-elected.json", "kraft-elr"),
}

# How a configuration includes each feature a switch needs (kraft-future is never refused: naming its switch
# includes it, model/kraft/future.py).
TURN_ON: dict[str, str] = {
    "kraft-mv-upgrade": "--preset kraft-mv-upgrade or --option mv_upgrade=true (with --dirs 1)",
    "kraft-sessions": "--preset kraft-heartbeat or --option max_lost_heartbeats=N (or max_session_expiries=N)",
    "kraft-future": "naming the switch turns it on (alter_log_dirs 1), as --preset kraft-future or --option "
                    "alter_log_dirs=N do",
    "kraft-deletion": "--preset kraft-deletion or --deletion",
    "kraft-reassignment": "--preset kraft-reassignment or --reassignment",
    "kraft-elr": "--kafka 4.1 or later (the default), or --kafka 4.0 --option elr=true",
}


class NotExpressed(NamedTuple):
    broke: str        # what the bug broke, in a line
    fixed: str        # the first Kafka version with the fix
    why: str          # what the model lacks to express it


NOT_EXPRESSED: dict[str, NotExpressed] = {
    "KAFKA-16365": NotExpressed("AssignmentsManager fired the callbacks of superseded assignments, or lost them",
                                "3.7.1", "needs 3.7.0's AssignmentsManager (AssignmentEvent.run): an event for the "
                                "dir already queued or in flight merged into it, an event older than the one queued "
                                "completing that one's callbacks before any answer, a replaced event's callbacks "
                                "dropped. The model keeps 3.7.1+'s maps (the latest entry per TopicIdPartition, "
                                "putIfAbsent after a failure); a request fails only by kraft-sessions' "
                                "ControllerFailover (or a stale broker epoch), so a switch would need kraft-future "
                                "with kraft-sessions and that AssignmentsManager"),
}


def not_expressed() -> dict[str, NotExpressed]:
    """The known bugs without a switch yet (an id with a switch in BUGS is left out)."""
    return {i: gap for i, gap in NOT_EXPRESSED.items() if i not in BUGS}


def check_bugs(value) -> str | None:
    ids = (value,) if isinstance(value, str) else value
    if not isinstance(ids, tuple) or not all(isinstance(i, str) for i in ids):
        return f"bugs must be a JIRA id or a list of them, not {value!r}"
    unknown = [i for i in ids if i not in BUGS]
    return f"unknown bug(s) {', '.join(unknown)} (known: {', '.join(BUGS)})" if unknown else None


def refuse_without_feature(value, included: set) -> str | None:
    """Why a configuration whose features are ``included`` cannot take the switches ``value`` (one line), or None:
    a switch whose feature is not in the model would change nothing, a silent no-op. Unknown ids and malformed
    values are left to ``check_bugs``."""
    return missing_feature(value, included, BUGS, TURN_ON, "", "switch")


def missing_feature(value, included: set, catalogue: dict, turn_on: dict, prefix: str, what: str) -> str | None:
    """The one line refusing the first name of ``value`` (a name or a tuple of them) whose entry of ``catalogue``
    needs a feature not ``included`` (``turn_on``: how a configuration includes it), or None. Bug switches and
    candidate fixes (model/kraft/fixes.py) share it."""
    ids = (value,) if isinstance(value, str) else value
    if not isinstance(ids, tuple):
        return None
    for i in ids:
        entry = catalogue.get(i) if isinstance(i, str) else None
        if entry is not None and entry.feature is not None and entry.feature not in included:
            return (f"{prefix}{i} needs the feature {entry.feature}, which this model does not include (the {what} "
                    f"would change nothing): turn it on with {turn_on[entry.feature]}")
    return None


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split("."))


def present(bug_id: str, version: tuple[int, int, int]) -> bool:
    """Whether Kafka ``version`` (major, minor, patch) has the bug: before the fix of its own release line if that
    line lists one, else unless the line is later than every line fixed (``fixed`` lists each line a fix was
    released in: a backport reaches only its own line)."""
    fixes = [_version(f.strip()) for f in BUGS[bug_id].fixed.split(",")]
    own = [fix for fix in fixes if fix[:2] == version[:2]]
    if own:
        return version < own[0]
    return version[:2] < max(fix[:2] for fix in fixes)


def implied(version: tuple[int, int, int]) -> tuple:
    """The switches a release implies: the bugs that Kafka ``version`` still has (``--kafka 3.7.0``: those fixed
    in 3.7.1 and later). A switch whose feature the model does not include changes nothing, so none is refused."""
    return tuple(i for i in BUGS if present(i, version))


def affected(bug_id: str) -> str:
    """The releases of model/kraft/release.py that have the bug, in words ("3.7.0 to 3.7.1, 3.8.0")."""
    from model.kraft.release import RELEASES
    fixes = {tuple(_version(f.strip())[:2]): _version(f.strip())[2] for f in BUGS[bug_id].fixed.split(",")}
    parts = []
    for line in RELEASES:
        key = tuple(int(x) for x in line.split("."))
        if key in fixes:
            if fixes[key] == 1:
                parts.append(f"{line}.0")
            elif fixes[key] > 1:
                parts.append(f"{line}.0 to {line}.{fixes[key] - 1}")
        elif key < max(fixes):
            parts.append(line)
    return ", ".join(parts) or "none"


def explicit(m) -> tuple:
    """The switches named by the model's ``bugs`` option (--bug, --option bugs=...)."""
    value = m.option("bugs")
    return (value,) if isinstance(value, str) else tuple(value)


def bugs(m) -> tuple:
    """The bug switches a model re-introduces: those its ``bugs`` option names, then those its release implies
    (model/kraft/release.py); kept on the model (the constant ``kraft_bugs``) once computed."""
    known = getattr(m, "kraft_bugs", None)
    if known is not None:
        return known
    from model.kraft.release import version_of
    named = explicit(m)
    return named + tuple(i for i in implied(version_of(m)) if i not in named)
