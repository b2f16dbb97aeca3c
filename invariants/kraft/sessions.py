"""KRaft sessions' liveness property (the facts' "a failure is acknowledged, or the broker stops"): what
KAFKA-15649's log.dir.failure.timeout.ms guarantees."""
from __future__ import annotations

from model.spec.invariant import liveness


def _unacknowledged(broker) -> bool:
    return bool(broker.up and broker.failed & ~broker.acked_dirs)


def unacknowledged_dir_failures(model, state) -> int:
    """P: bit b while broker b runs with a failed dir that no heartbeat answer has acknowledged."""
    return sum(1 << b for b, broker in enumerate(state.brokers) if _unacknowledged(broker))


@liveness(
    "dir_failure_acknowledged_or_broker_stops", kind="leads_to", symmetric=True, p=unacknowledged_dir_failures,
    statement="A running broker with a failed log dir that no heartbeat answer has acknowledged eventually has "
              "every failed dir acknowledged, or stops (even if the controller times out every heartbeat).",
    reference="BrokerLifecycleManager.propagateDirectoryFailure and OfflineDirBrokerFailureEvent "
              "(log.dir.failure.timeout.ms, Kafka 3.8.0+: KAFKA-15649)",
)
def dir_failure_acknowledged_or_broker_stops(model, state) -> int:
    return sum(1 << b for b, broker in enumerate(state.brokers) if not _unacknowledged(broker))
