"""The configurations KRaft's conformance check runs on (proofs/kraft_conformance.py; docs/proofs.md 9.3), one entry
each: what it reaches that the others do not, how many of its states are checked, and in which profile.

``default`` entries run in `jbodcheck prove --variant kraft` and in the test suite, ``thorough`` ones only in the
thorough profile (docs/testing.md). A feature that the z3 model comes to cover (ELR, say) adds its configuration
here as one more entry; every caller (prove, the tests, the docs' table) reads this list.
"""
from __future__ import annotations

from typing import NamedTuple

# The release the z3 model follows: Kafka 3.9's controller (no ELR; proofs/kraft_conformance.py Z3_RELEASE).
Z3_RELEASE = "3.9"

# kraft-tiny-faults' cluster, no record, one fault and no repair, at the z3 model's release: the base every entry
# changes.
CORE = dict(variant="kraft", brokers=2, dirs=2, partitions=1, rf=2, max_dir_failures=1, max_saturations=0,
            max_crashes=1, max_restarts=1, max_fixes=0, max_failovers=0, max_records=0, consumer=False,
            max_faults=1, options={"kafka": Z3_RELEASE})


class Configuration(NamedTuple):
    name: str
    changes: dict              # ModelConfig fields over CORE
    why: str                   # what it reaches that the others do not
    max_states: int | None     # the first states, breadth-first; None: every reachable state
    profile: str = "default"   # "default" or "thorough"
    beyond: int = 0            # changed states (and transitions) compared beyond the reachable ones

    @property
    def model(self) -> dict:
        return {**CORE, **self.changes, "options": {**CORE["options"], **self.changes.get("options", {})}}

    def describe(self) -> str:
        m = self.model
        faults = [f"{n} {what}" for n, what in ((m["max_dir_failures"], "dir failure"), (m["max_crashes"], "crash"),
                                                 (m["max_restarts"], "restart"), (m["max_fixes"], "repair")) if n]
        return (f"{m['brokers']} broker(s) x {m['dirs']} dirs, {m['partitions']} partition(s), RF {m['rf']}, "
                f"{m['max_records']} record(s){', a consumer' if m['consumer'] else ''}; "
                f"{', '.join(faults) or 'no fault event'}, at most {m['max_faults']} fault(s)")


CONFIGURATIONS = (
    Configuration("core-one-fault", {},
                  "every controller action but AlterPartition, with one fault", None, beyond=300),
    Configuration("one-record", dict(max_records=1, consumer=True, max_faults=0),
                  "AlterPartition (the data path's ISR changes), no fault", None),
    Configuration("one-broker-two-faults", dict(brokers=1, rf=1, max_faults=2),
                  "a restart after a dir failure and a crash: an election over a Directories entry whose dir the "
                  "new registration lacks (a LeaderAcceptor that ignores fencing or dirs elects there)", None),
    Configuration("three-partitions", dict(brokers=1, rf=1, partitions=3, max_crashes=0, max_restarts=0),
                  "three partitions on one broker's dirs: handleDirectoriesOffline over more partitions than dirs, "
                  "two of them on the failed dir (the drifts show deep in it: every state)", None),
    Configuration("three-brokers", dict(brokers=3, rf=3, max_dir_failures=0),
                  "three replicas: fencing one keeps two in the ISR, an election with two candidates", 500),
    Configuration("one-record-one-fault", dict(max_records=1, consumer=True),
                  "ISR changes and a fault together", 1_000),
    Configuration("two-faults-a-repair", dict(max_faults=2, max_fixes=1),
                  "kraft-tiny-faults' configuration: two faults and a repair", None, profile="thorough"),
)
BY_NAME = {c.name: c for c in CONFIGURATIONS}

# What the conformance check does not cover, whatever the configuration: the verdict of `prove --variant kraft`
# names each (short, long: docs/proofs.md 9.3, "What the check does not cover").
NOT_COVERED = (
    ("ELR and Kafka 4.0+",
     "ELR (KIP-966: the ELR, the last known leader and its election) and Kafka 4.0+'s controller: the z3 model "
     f"follows {Z3_RELEASE}'s, and the check runs the explicit model at {Z3_RELEASE} (3.7 or 3.8 when the MODEL "
     "options say so), where ELR's code does not run; a 4.x model is refused"),
    ("the brokers' choices",
     "the brokers' side the z3 model leaves free: which entries a broker's AssignmentsManager queue keeps and sends, "
     "when a heartbeat asks to be unfenced, which dirs it names offline (a bug there conforms)"),
    ("kraft-core's features",
     "the features beyond kraft-core (deletion, reassignment, controlled shutdown, sessions, future replicas, "
     "metadata.version upgrade): the z3 model has none of them, nor do the configurations above (a reassignment in "
     "progress or a controlled shutdown is refused: proofs/kraft_abstraction.py)"),
)


def profile(name: str = "default") -> tuple:
    """The configurations of a profile: ``default``, or ``thorough`` (every entry)."""
    return tuple(c for c in CONFIGURATIONS if name == "thorough" or c.profile == name)
