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
    # kraft-future's switches (model/kraft/future.py): naming one turns that feature on.
    "KAFKA-16297": Bug("a promotion the controller had accepted (Directories = the future dir) was not reverted "
                       "when a dir failure aborted it: the metadata kept naming the future dir, so the controller "
                       "never moved the partition off the failed dir", "3.7.1",
                       "kraft-kafka-16297-aborted-promotion-not-reverted.json"),
    "KAFKA-16082": Bug("a -future log abandoned by a crash after its promotion was accepted was not promoted at "
                       "start-up: the current log was re-created empty in the future log's dir, the stale future "
                       "log resumed, and its rename failed and took the healthy dir offline", "3.7.1",
                       "kraft-kafka-16082-stale-future-log-takes-a-dir-offline.json"),
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
