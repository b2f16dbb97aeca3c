"""Which Kafka release the KRaft model follows (docs/kraft.md, "What changed from 3.9 to 4.4"): the options
``kafka`` (a release line X.Y, or a full version X.Y.Z) and ``elr`` (Eligible Leader Replicas, KIP-966), and the
behaviours that differ between the releases, each a predicate of the model read where the rule it changes is.

A release line stands for its newest patch release read (``READ``); a full version X.Y.Z runs its line's model,
and the bug switches of model/kraft/bugs.py whose fix is later than X.Y.Z come with it (``bugs.implied``). The
default is the newest release, 4.4: ELR on, as a cluster formatted by 4.1 or later has it.
"""
from __future__ import annotations

import re

RELEASES = ("3.7", "3.8", "3.9", "4.0", "4.1", "4.2", "4.3", "4.4")
NEWEST = RELEASES[-1]
# The patch release each line's model was read from (4.4.0: decompiled bytecode, no sources jar is served).
READ = {"3.7": "3.7.2", "3.8": "3.8.1", "3.9": "3.9.2", "4.0": "4.0.2", "4.1": "4.1.2", "4.2": "4.2.1",
        "4.3": "4.3.1", "4.4": "4.4.0"}
KAFKA_OPTION, ELR_OPTION = "kafka", "elr"
_VERSION = re.compile(r"([0-9]+)\.([0-9]+)(?:\.([0-9]+))?")   # fullmatch: ASCII digits, no newline


def parse(value) -> tuple[int, int, int] | None:
    """(major, minor, patch) of an X.Y or X.Y.Z string of a known release line (X.Y: its newest patch read), or
    None."""
    if isinstance(value, float) and not isinstance(value, bool):
        value = repr(value)  # --option kafka=3.9 reads as a JSON number
    if not isinstance(value, str):
        return None
    match = _VERSION.fullmatch(value.strip())
    if not match or f"{match[1]}.{match[2]}" not in RELEASES:
        return None
    line = f"{match[1]}.{match[2]}"
    patch = int(match[3]) if match[3] is not None else int(READ[line].split(".")[2])
    return int(match[1]), int(match[2]), patch


def line_of(value) -> str:
    """The release line X.Y of an accepted value."""
    major, minor, _ = parse(value)
    return f"{major}.{minor}"


def check_kafka(value) -> str | None:
    if parse(value) is None:
        return (f"kafka must be a release {', '.join(RELEASES)} or a version X.Y.Z of one of them, not {value!r}")
    return None


def check_elr(value) -> str | None:
    return None if value is None or isinstance(value, bool) else f"elr must be true or false, not {value!r}"


def _given(options: dict) -> tuple[tuple[int, int, int], object]:
    return parse(options.get(KAFKA_OPTION, NEWEST)) or parse(NEWEST), options.get(ELR_OPTION)


def elr_refusal(cfg) -> str | None:
    """Why this configuration cannot run with ELR on (one line), or None. Before 4.0 the feature
    eligible.leader.replicas.version does not exist (3.7 to 3.9 have ELR's code behind an unstable
    metadata.version, 4.0-IV0, that no production cluster runs); ELR version 1 needs metadata.version 4.0-IV1, so a
    cluster that starts before 3.7-IV2 (kraft-mv-upgrade) has none."""
    options = dict(cfg.options)
    version, elr = _given(options)
    if elr is not True:
        return None
    if version < (4, 0, 0):
        return (f"--option elr=true needs Kafka 4.0 or later (eligible.leader.replicas.version); Kafka "
                f"{version[0]}.{version[1]} has ELR only behind the unstable metadata.version 4.0-IV0")
    if options.get("mv_upgrade"):
        return ("--option elr=true cannot go with mv_upgrade: eligible.leader.replicas.version 1 needs "
                "metadata.version 4.0-IV1, and that cluster starts before 3.7-IV2")
    return None


def elr_on(cfg) -> bool:
    """Whether ELR is on: the option ``elr`` if given, else the release's default for a new cluster
    (Formatter: Feature.defaultVersion of the release's metadata.version; ELRV_1 bootstraps at 4.1-IV0, so on
    from 4.1, off in 4.0, absent before); never with mv_upgrade (ELR version 1 needs metadata.version 4.0-IV1)."""
    options = dict(cfg.options)
    version, elr = _given(options)
    if version < (4, 0, 0) or options.get("mv_upgrade"):
        return False
    return elr if isinstance(elr, bool) else version >= (4, 1, 0)


def version_of(m) -> tuple[int, int, int]:
    """The model's (major, minor, patch)."""
    return parse(m.option(KAFKA_OPTION))


def text(m) -> str:
    """How the bounds name the release: X.Y, or the version given."""
    value = m.option(KAFKA_OPTION)
    return (repr(value) if isinstance(value, float) else str(value)).strip()


# ---- the behaviours that changed between the releases -----------------------------------------------------------

def handles_shutdown_at_registration(m) -> bool:
    """4.0+: ClusterControlManager.registerBroker calls ReplicationControlManager.handleBrokerShutdown for a new
    incarnation (an unclean shutdown with ELR: out of every ISR and ELR; otherwise as handleBrokerFenced). 3.7 to
    3.9: handleBrokerUncleanShutdown, which writes nothing below metadata.version 4.0-IV0."""
    return version_of(m) >= (4, 0, 0)


def elr_in_assignment(m) -> bool:
    """4.3+: handleAssignReplicasToDirs' PartitionChangeBuilder has the ELR flag (apache/kafka#20716 made it a
    constructor argument); before, that builder runs with ELR disabled: it clears the ELR, keeps an ISR that would
    be empty, and elects no last known leader."""
    return version_of(m) >= (4, 3, 0)


def needed_in_isr_to_complete(m, adding: tuple, removing: tuple, remaining: tuple) -> tuple:
    """PartitionReassignmentReplicas.maybeCompleteReassignment: the replicas the target ISR (less the removing ones,
    not empty) must hold for a reassignment to complete. 3.7.x: the adding ones; 3.8.0 to 4.2 (KAFKA-15665,
    apache/kafka#15359): every remaining one; 4.3+ (KAFKA-19975, apache/kafka#21114): the adding ones, and every
    remaining one when fewer are added than removed."""
    version = version_of(m)
    if version < (3, 8, 0):
        return adding
    if version < (4, 3, 0) or len(adding) < len(removing):
        return remaining
    return adding


def last_known_leader_when_leaderless(m) -> bool:
    """4.1.1+ (apache/kafka#20629): PartitionChangeBuilder.maybeUpdateLastKnownLeader records the leader as the
    last known one when a change leaves the partition without a leader; 4.0.0 to 4.1.0 did when a change empties
    the ISR, and cleared it on a change that keeps or names a leader."""
    return version_of(m) >= (4, 1, 1)
