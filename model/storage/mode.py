"""What the storage layer needs of a controller mode: the hooks its rules call, and the state components those
hooks read and write.

A controller mode's core feature provides every hook of ``HOOKS`` (``provides`` checks it); storage's rules
never name the mode's own mechanisms (znodes, requests, records), only these hooks. Each mode declares on its
implementations what they read and write (``declares``, model/spec/footprint.py: patterns over the hook's own
parameters), and storage's rules name those declarations in their footprints (``@<hook>.reads`` /
``@<hook>.writes``): the footprints the rules' actions get are the mode's own (ZooKeeper's dir event writes a
znode, KRaft's a broker's failed-dir set).
"""
from __future__ import annotations

from model.spec.footprint import declares  # noqa: F401 (the modes declare their hooks with it)

HOOKS = {
    "dir_event": "(m, s, broker, dir=None) -> State: a running broker tells its controller that one of its log dirs "
                 "failed (DirFail passes the dir; KIP-928's saturation and recovery do not) or, with KIP-928, was "
                 "saturated or recovered; it reads DIR_EVENT_READS and writes only DIR_EVENT_WRITES",
    "restart_blocked": "(m, s, broker) -> str | None: why a stopped broker may not start yet as far as the "
                       "controller mode is concerned (None: it may); it reads only REGISTRATION_READS",
    "isr_writer": "(m, s, partition) -> int: the broker that may change the partition's ISR now (the leader "
                  "of the current leader epoch, running), or -1; it reads only ISR_WRITER_READS",
    "isr_written": "(m, s, partition, isr) -> State: the partition's new ISR recorded where the controller mode "
                   "keeps it; it reads ISR_RECORD_READS and writes only ISR_RECORD",
}
# The hooks' footprints as storage's rules declare them: each mode's implementation says what they stand for.
DIR_EVENT_READS = ("@dir_event.reads",)
DIR_EVENT_WRITES = ("@dir_event.writes",)
REGISTRATION_READS = ("@restart_blocked.reads",)
ISR_WRITER_READS = ("@isr_writer.reads",)
ISR_RECORD_READS = ("@isr_written.reads",)
ISR_RECORD = ("@isr_written.writes",)
# The old name, for a plugin's rule that calls dir_event: both (a superset where it declared reads or writes).
DIR_EVENT_FOOTPRINT = DIR_EVENT_READS + DIR_EVENT_WRITES


def missing_hooks(hooks: dict) -> list[str]:
    """The hooks of ``HOOKS`` that a controller mode's core does not provide."""
    return [h for h in HOOKS if h not in hooks]
