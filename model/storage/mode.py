"""What the storage layer needs of a controller mode: the hooks its rules call, and the state components those
hooks may read or write (declared in the rules' footprints, model/spec/footprint.py).

A controller mode's core feature provides every hook of ``HOOKS`` (``provides`` checks it); storage's rules
never name the mode's own mechanisms (znodes, requests, records), only these hooks.
"""
from __future__ import annotations

HOOKS = {
    "dir_event": "(m, s, broker, dir=None) -> State: a running broker tells its controller that one of its log dirs "
                 "failed (DirFail passes the dir; KIP-928's saturation and recovery do not) or, with KIP-928, was "
                 "saturated or recovered; it writes only DIR_EVENT_FOOTPRINT",
    "restart_blocked": "(m, s, broker) -> str | None: why a stopped broker may not start yet as far as the "
                       "controller mode is concerned (None: it may); it reads only REGISTRATION_READS",
    "isr_writer": "(m, s, partition) -> int: the broker that may change the partition's ISR now (the leader "
                  "of the current leader epoch, running), or -1; it reads the broker states and ISR_RECORD",
    "isr_written": "(m, s, partition, isr) -> State: the partition's new ISR recorded where the controller mode "
                   "keeps it; it writes only ISR_RECORD",
}
DIR_EVENT_FOOTPRINT = ("notifications",)
REGISTRATION_READS = ("controller.live",)
ISR_RECORD = ("controller.partitions",)


def missing_hooks(hooks: dict) -> list[str]:
    """The hooks of ``HOOKS`` that a controller mode's core does not provide."""
    return [h for h in HOOKS if h not in hooks]
