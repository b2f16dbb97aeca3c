"""The controller's own state machines: every replica and partition state change a step makes is one that
Kafka's ReplicaStateMachine and PartitionStateMachine accept."""
from __future__ import annotations

from model.zk.controller import VALID_PARTITION_PREVIOUS, VALID_REPLICA_PREVIOUS, recording
from model.storage.state import PARTITION_STATE_NAMES, REPLICA_STATE_NAMES

from model.spec.invariant import invariant

# The Kafka procedures that set a state without the state machine's validation (docs/model.md, section 9).
EXEMPT = ("initializeReplicaState", "initializePartitionState", "completeDeleteTopic")


def recorded_changes(model, state, action) -> list:
    """Every individual replica and partition state change the action's effect makes, in order: the effect is
    replayed with the model's controller steps recording (model/zk/controller.py ``recording``; off during the
    search itself). Like the effect, the record is a function of what the effect reads: remembered with it where
    the effect is memoised."""
    def replay():
        return recording(model, lambda: model.rules[action.rule].effect(model, state, *action.args))

    return model.by_effect_key(action, state, replay)


def _invalid(kind: str, previous: int, target: int) -> bool:
    table = VALID_REPLICA_PREVIOUS if kind == "replica" else VALID_PARTITION_PREVIOUS
    return previous not in table[target]


def _describe(kind, p, i, previous, target, model) -> str:
    if kind == "replica":
        names = REPLICA_STATE_NAMES
        what = f"replica {model.assignments[p][i]} of partition {p}"
    else:
        names = PARTITION_STATE_NAMES
        what = f"partition {p}"
    return f"the controller moved {what} {names[previous]} -> {names[target]}, which Kafka's state machine refuses"


@invariant(
    "controller_transitions_valid", kind="transition", symmetric=True,
    reads=("controller",),
    statement="Every replica and partition state change the controller makes in a step is a transition that "
              "Kafka's ReplicaStateMachine and PartitionStateMachine accept (their valid-previous-state tables), "
              "except where Kafka sets a state without validation: the failover's initializeReplicaState and "
              "initializePartitionState, and completeDeleteTopic dropping a deleted topic's partition state. A step "
              "that leaves every replica and partition state as it was is not checked.",
    reference="ReplicaStateMachine.isValidTransition, PartitionStateMachine.isValidTransition (Kafka 1.0 to 3.6)",
)
def controller_transitions_valid(model, state, action, after):
    before_c, after_c = state.controller, after.controller
    if before_c is after_c:
        return None
    # A step whose controller changed is replayed with every individual state change recorded: one step may
    # change a replica several times (NewReplica -> OnlineReplica at creation; OfflineReplica ->
    # ReplicaDeletionStarted -> ReplicaDeletionSuccessful -> NonExistentReplica when a reassignment completes).
    # A write that bypasses the recording (a rule without a ControllerStep, or a direct assignment) shows as a gap
    # between what was recorded and the state before, in between or after, and counts as one transition.
    current = {}
    for p, states in enumerate(before_c.replicas):
        for i, x in enumerate(states):
            current["replica", p, i] = x
    for p, part in enumerate(before_c.partitions):
        current["partition", p, None] = part.state
    # Only controller events run a ControllerStep, and only a step that leaves some replica or partition state
    # changed is replayed (a change undone within the same step is not checked); the other steps are compared
    # directly (a leader's ISR write changes no state).
    changed = before_c.replicas != after_c.replicas or any(
        x.state != y.state for x, y in zip(before_c.partitions, after_c.partitions))
    if not changed:
        return None
    replayed = recorded_changes(model, state, action) if model.rules[action.rule].kind == "controller" else ()
    for kind, p, i, previous, target, exempt in replayed:
        key = (kind, p, i)
        if current[key] != previous and _invalid(kind, current[key], previous):
            return _describe(kind, p, i, current[key], previous, model)
        if exempt is None and _invalid(kind, previous, target):
            return _describe(kind, p, i, previous, target, model)
        current[key] = target
    for p, states in enumerate(after_c.replicas):
        for i, y in enumerate(states):
            x = current["replica", p, i]
            if x != y and _invalid("replica", x, y):
                return _describe("replica", p, i, x, y, model)
    for p, part in enumerate(after_c.partitions):
        x = current["partition", p, None]
        if x != part.state and _invalid("partition", x, part.state):
            return _describe("partition", p, None, x, part.state, model)
    return None
