"""Topic deletion (KIP-112 scenario 8) as two features: ``DELETION``, the admin's request (with --deletion), and
``REPLICA_DELETION``, the broker's StopReplica(delete=true) and the controller's handling of its response, which
topic deletion and partition reassignment (its old replicas are deleted) both require (docs/model.md, 6.5)."""
from __future__ import annotations



from model.storage.config import ONE_OF_EACH
from model.zk import requests
from model.zk.requests import oldest_request_is, waiting_response
from model.zk.controller import ControllerStep
from model.zk.schema import DELETION_FIELDS, REPLICA_DELETION_FIELDS
from model.zk.deletion import complete_replica_deletion, fail_replica_deletion, resume_deletions
from model.zk.footprints import CONTROLLER_STEP_APPENDS, CONTROLLER_STEP_READS, CONTROLLER_STEP_WRITES, controller_handles_response
from model.spec.feature import Feature, Flag
from model.storage.common import brokers, partitions, set_broker
from model.storage.state import D_NONE, D_QUEUED, E_NONE, P_NONEXISTENT, STOP_REPLICA_DELETE

REPLICA_DELETION = Feature(
    "replica-deletion",
    "StopReplica(delete=true): the broker deletes a replica's log and answers; the controller's replica deletion "
    "states (TopicDeletionManager)",
    enabled=lambda cfg: False,  # included when a feature requires it
    fields=REPLICA_DELETION_FIELDS,
)

DELETION = Feature(
    "deletion",
    "Topic deletion (KIP-112 scenario 8): an admin deletes a topic; the controller deletes its replicas",
    enabled=lambda cfg: cfg.deletion,
    requires=(REPLICA_DELETION,),
    fields=DELETION_FIELDS,
    config_fields=("deletion",),
    flags=(Flag("deletion", "--deletion/--no-deletion",
                "Topic deletion (KIP-112 scenario 8): DeleteTopic and the replica deletion states."),),
)


def _guard_delete_topic(m, s, partition):
    c = s.controller
    if c.deletion[partition] != D_NONE:
        return f"partition {partition}'s topic is already being deleted or deleted"
    if c.partitions[partition].state == P_NONEXISTENT:
        return f"partition {partition} does not exist"
    return None


@DELETION.rule("DeleteTopic",
      guard_reads=("controller.deletion", "controller.partitions"), reads=CONTROLLER_STEP_READS, writes=CONTROLLER_STEP_WRITES, appends=CONTROLLER_STEP_APPENDS,
      params=("partition",), domain=partitions, guard=_guard_delete_topic, kind="controller", fair=False,
      reference="KIP-112 scenario 8 (topic deletion); TopicDeletionManager.enqueueTopicsForDeletion, onTopicDeletion")
def delete_topic(m, s, partition):
    """An admin deletes the partition's topic and the controller queues it for deletion, then (resumeDeletions)
    starts it: the partition goes Offline then NonExistent, UpdateMetadata with LeaderDuringDelete makes every
    live broker drop it from its cache; replicas the controller does not count as online are ineligible at once
    (KIP-112: an offline replica is handled as if its broker were offline; with KIP-928 only replicas on dead
    brokers), which makes the topic ineligible; the others go OfflineReplica (StopReplica without delete) and
    ReplicaDeletionStarted (StopReplica with delete)."""
    step = ControllerStep(m, s)
    step.deletion[partition] = D_QUEUED
    resume_deletions(step)
    return step.finish()


@REPLICA_DELETION.rule("BrokerStopReplicaDelete",
      guard_reads=("broker[broker].inbox",), reads=("broker[broker]",), writes=("broker[broker]",),
      needs_message=True,
      params=("broker",), domain=brokers, guard=oldest_request_is(STOP_REPLICA_DELETE, "StopReplica(delete=true)"),
      kind="broker", reference="KIP-112 scenario 8; KIP-928 Goal deletion; ReplicaManager.stopReplicas (delete=true)")
def broker_stop_replica_delete(m, s, broker):
    """The broker handles its oldest request, a StopReplica with delete: for a partition it marked offline it
    answers KAFKA_STORAGE_ERROR (the log is out of reach); otherwise (led, followed, stopped, saturated or not
    hosted) it stops the replica and deletes its log from its live dirs, freeing the space, and answers NONE.
    A copy on an offline dir stays where it is."""
    b = s.brokers[broker]
    new, response = requests.handle_stop_replica_delete(b, b.inbox[0].body)
    return set_broker(s, broker, new._replace(stop_replies=b.stop_replies + (response,)))


@REPLICA_DELETION.rule("ControllerStopReplicaResponse",
      **controller_handles_response("stop_replies"),
      params=("broker",), domain=brokers, guard=waiting_response("stop_replies", "StopReplica(delete=true)"),
      kind="controller", reference="KIP-112 scenario 8; TopicDeletionStopReplicaResponseReceived")
def controller_stop_replica_response(m, s, broker):
    """The controller handles a broker's oldest StopReplica(delete=true) response: replicas answered with an
    error go ReplicaDeletionIneligible (their topic is ineligible until retried, e.g. when the broker starts
    again), the others ReplicaDeletionSuccessful; a topic whose replicas are all deleted is complete: they
    become NonExistentReplica and the topic's znodes are deleted."""
    b = s.brokers[broker]
    response = b.stop_replies[0]
    step = ControllerStep(m, set_broker(s, broker, b._replace(stop_replies=b.stop_replies[1:])))
    index = {p: i for p, i in m.replicas_on[broker]}
    fail_replica_deletion(step, [(p, index[p]) for p, error in response if error != E_NONE])
    complete_replica_deletion(step, [(p, index[p]) for p, error in response if error == E_NONE])
    return step.finish()


DELETION.presets["deletion"] = (
    "Topic deletion under KIP-112 + KIP-928: 2 brokers x 2 dirs, 1 partition, RF 2; 2 units a dir; no records; one "
    "of each event but failover; at most two faults",
    dict(brokers=2, dirs=2, partitions=1, rf=2, saturation=True, deletion=True, dir_capacity=2, max_records=0,
         **{**ONE_OF_EACH, "max_failovers": 0}))
