"""KIP-112's draft (docs/model.md, section 12.1): the controller keeps a per-partition ``created`` list in
ZooKeeper (/brokers/topics/[topic]/partitions/[partitionId]/controller_managed_state) and sends isNewReplica
(``create``) true exactly for the replicas not in it; the broker creates a missing log only when asked to
(create=true); after a disk is replaced the administrator runs kafka-log-dirs.sh to remove the broker from
every created list.

As features over the adopted design's core (model/zk/rules.py): the hook ``is_new_replica`` (the controller's
choice), the hook ``may_create_log`` (the broker's), the ``created`` list as an extension state field (durable:
a controller failover keeps it, unlike the adopted design's NewReplica state), the response handlers that
maintain it (replacing the core's), and the administrator's step.
"""
from __future__ import annotations


from model.storage.common import bounded, brokers
from model.zk.requests import waiting_response
from model.zk.footprints import controller_handles_response
from model.spec.feature import Feature, Flag, StateField
from model.zk.rules import controller_leader_and_isr_response
from model.zk.rules_deletion import REPLICA_DELETION, controller_stop_replica_response
from model.storage.state import E_NONE

# The created lists, one int: bit p * SLOT + b is set when broker b is in partition p's list (16 brokers at most).
SLOT = 16


def in_created(created: int, p: int, b: int) -> bool:
    return bool(created >> (p * SLOT + b) & 1)


def _render(m, s) -> dict:
    created = m.ext(s, "created")
    return {"created": {str(p): [b for b in range(m.cfg.brokers) if in_created(created, p, b)]
                        for p in range(m.cfg.partitions)}}


def _is_new_replica(step, broker, p, is_new):
    """The draft's controller: create=true exactly when the broker is not in the partition's created list."""
    return not in_created(step.m.ext(step.state, "created"), p, broker)


DRAFT = Feature(
    "kip112-draft-created",
    "KIP-112's draft: the controller persists a per-partition created list (controller_managed_state) and sends "
    "create=true only for replicas not in it; the broker creates a missing log only when asked to; "
    "kafka-log-dirs.sh removes a broker from the lists after its disk is replaced",
    config_fields=("max_created_resets",),
    flags=(Flag("max_created_resets", "--max-created-resets",
                "Bound (KIP-112 draft): kafka-log-dirs.sh runs removing a broker from the created lists.", "int"),),
    state_fields=(
        StateField("created", 0, "The created lists in ZooKeeper: bit p*16+b when broker b is in partition p's."),
        StateField("created_resets", 0, "How many kafka-log-dirs.sh runs happened (the bound)."),
    ),
    hooks={
        "is_new_replica": _is_new_replica,
        # The draft's broker (scenario 3): KafkaStorageException for a replica asked with create=false and not
        # found on a good log dir, whether or not a dir is offline.
        "may_create_log": lambda broker, is_new: is_new,
    },
    render=_render,
)


@DRAFT.rule("ControllerLeaderAndIsrResponse",
      **controller_handles_response("replies", "ext.created"),
      params=("broker",), domain=brokers, guard=waiting_response("replies", "LeaderAndIsr"),
      kind="controller", replaces="ControllerLeaderAndIsrResponse",
      reference="KIP-112 draft, scenario 1 (the controller adds the broker to the created list of a partition "
                "answered with error=None); KafkaController's LeaderAndIsrResponseReceived")
def draft_leader_and_isr_response(m, s, broker):
    """As the adopted controller's (offline replicas, elections), and the broker is added to the created list of
    every partition it answered without error (a write to the partition's controller_managed_state znode)."""
    response = s.brokers[broker].replies[0]
    after = controller_leader_and_isr_response(m, s, broker)
    created = m.ext(s, "created")
    grown = created
    for p, error in response:
        if error == E_NONE:
            grown |= 1 << (p * SLOT + broker)
    return after if grown == created else m.with_ext(after, created=grown)


DRAFT_DELETION = Feature(
    "kip112-draft-deletion",
    "KIP-112's draft with StopReplica(delete=true): a replica deleted without error leaves the created list",
    enabled=lambda cfg: cfg.deletion or cfg.reassignment,
    requires=(REPLICA_DELETION,),
)


@DRAFT_DELETION.rule("ControllerStopReplicaResponse",
      **controller_handles_response("stop_replies", "ext.created"),
      params=("broker",), domain=brokers, guard=waiting_response("stop_replies", "StopReplica(delete=true)"),
      kind="controller", replaces="ControllerStopReplicaResponse",
      reference="KIP-112 draft, scenario 7 and Public interface 1 (the controller deletes the replica "
                "from the created list when StopReplicaResponse shows it deleted)")
def draft_stop_replica_response(m, s, broker):
    """As the adopted controller's, and the broker leaves the created list of every partition it deleted
    without error."""
    response = s.brokers[broker].stop_replies[0]
    after = controller_stop_replica_response(m, s, broker)
    created = m.ext(s, "created")
    shrunk = created
    for p, error in response:
        if error == E_NONE:
            shrunk &= ~(1 << (p * SLOT + broker))
    return after if shrunk == created else m.with_ext(after, created=shrunk)


def _guard_reset(m, s, broker):
    if m.ext(s, "created_resets") >= m.cfg.max_created_resets:
        return f"the bound --max-created-resets {m.cfg.max_created_resets} is used up"
    created = m.ext(s, "created")
    if not any(in_created(created, p, broker) for p in range(m.cfg.partitions)):
        return f"broker {broker} is in no created list"
    return None


@DRAFT.rule("ResetCreatedLists",
      reads=("ext.created", "ext.created_resets"), writes=("ext.created", "ext.created_resets"),
      params=("broker",), domain=bounded(brokers, "max_created_resets", fault=False),
            guard=_guard_reset, kind="environment",
            reference="KIP-112 draft, Changes in Operational Procedures 1 (kafka-log-dirs.sh removes the broker from "
                      "the list \"created\" of all partitions after the disk is fixed)")
def reset_created_lists(m, s, broker):
    """The administrator runs kafka-log-dirs.sh: the broker is removed from the created list of every partition,
    so that the controller asks it to create them again. The KIP says when (after the hardware is fixed, before
    the broker restarts) but nothing enforces it: the model lets it run at any moment, once per bound."""
    created = m.ext(s, "created")
    for p in range(m.cfg.partitions):
        created &= ~(1 << (p * SLOT + broker))
    return m.with_ext(s, created=created, created_resets=m.ext(s, "created_resets") + 1)


