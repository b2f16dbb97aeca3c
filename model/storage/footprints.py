"""The storage layer's footprint declarations (model/spec/footprint.py patterns) that several rules share."""
from __future__ import annotations

from model.storage.mode import ISR_RECORD_READS, ISR_WRITER_READS

# What the new HW of a leader depends on (model/storage/data.py hw_candidate, advance_hw): the followers' logs and roles.
LEADER_HW_READS = ("broker[*].up", "broker[*].hosted", "broker[*].epoch", "broker[*].logs", "broker[*].hw",
                   "broker[*].isr", "committed", "acked")
# A disk replaced or removed while its broker is down (model/zk/rules.py _fix_dir): note_wiped looks at every
# replica's copies, dirs and log against the committed history.
FIX_DIR_GUARD_READS = ("broker[broker].up", "broker[broker].dirs", "budget")
FIX_DIR_READS = ("broker[broker]", "broker[*].dirs", "broker[*].copies", "broker[*].logs", "budget", "committed",
                 "wiped")
FIX_DIR_WRITES = ("broker[broker].dirs", "broker[broker].copies", "broker[broker].used", "broker[broker].reserved",
                  "budget", "wiped")
# A follower's fetch (model/storage/rules_data.py): the guard runs the fetch to see whether it changes anything
# (an ISR expansion included: the controller mode's isr_writer and isr_written hooks).
# The leader may refuse the fetch (the data path's hook ``fetch_refused``: KRaft's reassignment reads the leader's image).
FETCH_READS = ("broker[broker].copies", "broker[broker].dirs", "@fetch_refused.reads", *ISR_WRITER_READS,
               *ISR_RECORD_READS) + LEADER_HW_READS
