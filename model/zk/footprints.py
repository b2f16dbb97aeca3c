"""The ZooKeeper controller's footprint declarations (model/spec/footprint.py patterns) that several rules share."""
from __future__ import annotations

# A controller event (model/zk/controller.py ControllerStep): it reads and writes the controller, appends to the
# inboxes of the brokers it believes alive and that are up, and asks the design's hooks (which may read extension
# fields, e.g. the draft's created list). CONTROLLER_STEP_OWN_READS: without the hooks' reads (a design that knows
# which extension fields its hooks read names them, e.g. KIP-46's ext.heal_moves).
CONTROLLER_STEP_OWN_READS = ("controller", "broker[*].inbox", "broker[*].up")
CONTROLLER_STEP_READS = CONTROLLER_STEP_OWN_READS + ("ext",)
CONTROLLER_STEP_WRITES = ("controller", "broker[*].inbox")
# What it sends is appended to the inboxes, whatever they hold (ControllerStep._send): the effect memo's key leaves
# them out (model/spec/effect_memo.py).
CONTROLLER_STEP_APPENDS = ("broker[*].inbox",)
# The channels between the controller and every broker (a controller failover empties them).
CHANNELS = ("broker[*].inbox", "broker[*].replies", "broker[*].stop_replies")


def controller_handles_response(channel: str, *also_writes: str) -> dict:
    """The footprint of the controller handling the oldest response in ``broker[broker].<channel>`` (a
    ControllerStep: the rule's keyword arguments), writing ``also_writes`` as well."""
    queue = f"broker[broker].{channel}"
    return {"guard_reads": (queue,), "reads": CONTROLLER_STEP_READS + (queue,),
            "writes": CONTROLLER_STEP_WRITES + (queue, *also_writes), "appends": CONTROLLER_STEP_APPENDS,
            "needs_message": True}
