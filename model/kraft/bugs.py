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
    "KAFKA-15649": Bug("no log.dir.failure.timeout.ms: a broker whose dir failure no heartbeat answer acknowledged "
                       "(the controller timing its heartbeats out) stayed up, an unfenced leader on the dead dir, "
                       "for ever (with the feature kraft-sessions)", "3.8.0",
                       "kraft-kafka-15649-unacknowledged-failure-keeps-the-leader.json"),
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
