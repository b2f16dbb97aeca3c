"""Paths through KRaft models, as lists of (rule name, args): a walk takes them from the initial state."""
from __future__ import annotations

# Broker 0's assignment delivered, then partition 0 reassigned and the added broker 1 caught up.
DELIVERED = [("CreateTopic", (0,)), ("BrokerReplay", (0,)), ("BrokerSendAssignments", (0,)),
             ("ControllerAssignReplicasToDirs", (0,)), ("BrokerReplay", (0,)), ("BrokerReplay", (1,)),
             ("BrokerReplay", (1,))]
REASSIGNED = DELIVERED + [("ReassignPartition", (0,)), ("BrokerReplay", (0,)), ("BrokerReplay", (1,))]


def walk(model, steps, s=None):
    """The state the steps lead to, from ``s`` (the initial state when None)."""
    s = model.init_states()[0] if s is None else s
    for name, args in steps:
        _, s = model.step(s, name, args)
    return s
