"""Fixed Kafka bugs that KRaft mode can re-introduce (``--bug KAFKA-NNNNN``; docs/kraft.md, "Bug switches").

Each switch brings back the code path of the versions before the fix. ``BUGS`` is the one list: the option's check,
``jbodcheck bugs`` and the docs read it.
"""
from __future__ import annotations

from typing import NamedTuple


class Bug(NamedTuple):
    broke: str        # what the bug broke, in a line
    fixed: str        # the first Kafka version with the fix
    scenario: str     # the scenario file (scenarios/) that replays to its violation with the switch


BUGS: dict[str, Bug] = {
    "KAFKA-16234": Bug("an Offline partition's topic id was read from its log, gone with the failed dir: the next "
                       "delta treated the partition as new and re-created its log empty on another dir", "3.7.1",
                       "kraft-kafka-16234-offline-partition-recreated.json"),
    "KAFKA-16157": Bug("an Offline partition kept no topic id: gate 1 skipped it even for a re-created topic, so "
                       "the broker never hosted the new topic's replica", "3.7.0",
                       "kraft-kafka-16157-recreated-topic-never-hosted.json"),
    "KAFKA-17190": Bug("AssignmentsManager sent assignments of deleted topics and retried the controller's "
                       "UNKNOWN_TOPIC_ID forever: the queue never drained", "3.8.1",
                       "kraft-kafka-17190-assignment-of-a-deleted-topic-retried.json"),
    "KAFKA-16886": Bug("AssignmentsManager retried the controller's NOT_LEADER_OR_FOLLOWER forever: the assignment of "
                       "a replica reassigned away never left the queue", "3.7.1",
                       "kraft-kafka-16886-assignment-of-a-removed-replica-retried.json"),
}


def check_bugs(value) -> str | None:
    ids = (value,) if isinstance(value, str) else value
    if not isinstance(ids, tuple) or not all(isinstance(i, str) for i in ids):
        return f"bugs must be a JIRA id or a list of them, not {value!r}"
    unknown = [i for i in ids if i not in BUGS]
    return f"unknown bug(s) {', '.join(unknown)} (known: {', '.join(BUGS)})" if unknown else None


def bugs(m) -> tuple:
    """The bug switches a model re-introduces (its ``bugs`` option)."""
    value = m.option("bugs")
    return (value,) if isinstance(value, str) else value
