"""The configuration of a ZooKeeper-mode model: storage's parts (model/storage/config.py) and the ZooKeeper
controller's, composed into one flat ``ModelConfig`` (``ModelConfig(brokers=2, saturation=True, ...)``,
``cfg.saturation``; ``cfg.part(Saturation)`` gives one part).

``ModelConfig``'s fields keep the order they always had (``as_dict``: reports, scenarios, presets).
"""
from __future__ import annotations

import attrs

from model.spec.errors import ConfigError
from model.storage.config import (
    ASSIGNMENTS, REASSIGNMENT_PROCEDURES, STORAGE_BOUNDS, DataPath, FeatureOptions, Saturation, Shape,
    StorageFaults, check_choice, check_switches, check_whole, compose,
)


@attrs.frozen
class DesignChoice:
    """Which design the model is of: a variant name (model/zk/designs.py VARIANTS), checked where the design is
    looked up (explorer/catalog.py)."""
    variant: str = "kip112"

    @staticmethod
    def check(cfg) -> None:
        if not isinstance(cfg.variant, str) or not cfg.variant:
            raise ConfigError(f"the variant must be a design's name, not {cfg.variant!r}")


@attrs.frozen
class ZkController:
    """The ZooKeeper-era controller (model/zk/rules.py)."""
    max_failovers: int = 1
    # Apply an UpdateMetadata as soon as it reaches the head of a broker's queue (see docs/model.md,
    # "Eager metadata"): sound for every invariant that reads metadata caches only in quiescent states.
    eager_metadata: bool = True
    unclean_election: bool = False  # unclean.leader.election.enable
    # The log-dir probe queries replicas in NewReplica too, with isNewReplica=true, as KIP-112 scenarios 2 and 3
    # say (False: Kafka's code, where OnlineReplica from NewReplica sends nothing; only a reassignment leaves a
    # replica in NewReplica, so this matters only with --reassignment).
    probe_new_replicas: bool = True

    @staticmethod
    def check(cfg) -> None:
        check_whole(cfg, ("max_failovers",), 0)
        check_switches(cfg, ("eager_metadata", "unclean_election", "probe_new_replicas"))


@attrs.frozen
class Deletion:
    """Topic deletion (KIP-112 scenario 8; TopicDeletionManager): the DeleteTopic rule and the deletion states."""
    deletion: bool = False

    @staticmethod
    def check(cfg) -> None:
        check_switches(cfg, ("deletion",))


@attrs.frozen
class Reassignment:
    """Partition reassignment (KIP-112 scenario 7; KafkaController.onPartitionReassignment): partition 0 may be
    moved once, from its assignment to the next brokers (``reassignment_target``)."""
    reassignment: bool = False
    # Which Kafka's reassignment procedure (REASSIGNMENT_PROCEDURES): "kafka-1.0" (1.0 to 2.3, the default) or
    # "kafka-2.7" (KIP-455's replica set order and deletion ineligibility, and KAFKA-10314: the added replicas get
    # isNewReplica=true from the first LeaderAndIsr).
    reassignment_procedure: str = "kafka-1.0"

    @staticmethod
    def check(cfg) -> None:
        check_switches(cfg, ("reassignment",))
        check_choice(cfg, "reassignment_procedure", REASSIGNMENT_PROCEDURES)
        if cfg.reassignment and cfg.rf >= cfg.brokers:
            raise ConfigError(f"--reassignment needs a broker outside partition 0's assignment: --rf {cfg.rf} must "
                              f"be smaller than --brokers {cfg.brokers}")


@attrs.frozen
class DraftResets:
    """KIP-112's draft (--variant kip112-draft, docs/model.md 12.1): bound on the administrator's
    kafka-log-dirs.sh runs that remove a broker from the created lists (ResetCreatedLists); no effect on the
    other designs."""
    max_created_resets: int = 1

    @staticmethod
    def check(cfg) -> None:
        check_whole(cfg, ("max_created_resets",), 0)


@attrs.frozen
class AssignmentPolicy:
    """Which brokers a topic may be created on (ASSIGNMENTS; --assignment, model/zk/assignment.py)."""
    assignment_policy: str = "any"

    @staticmethod
    def check(cfg) -> None:
        check_choice(cfg, "assignment_policy", ASSIGNMENTS, "--assignment")


class _ReassignmentTarget:
    def reassignment_target(self, partition: int) -> tuple[int, ...] | None:
        """The assignment a reassignment moves the partition to: partition 0 only, every replica to the next
        broker (e.g. [0, 1] -> [1, 2]), so that the leader moves and a new broker receives a replica."""
        if not self.reassignment or partition != 0:
            return None
        return tuple((b + 1) % self.brokers for b in self.assignment(partition))


# Bounds on environment events: storage's and the controller's failovers. Name -> (help text).
BOUNDS = {
    **{k: v for k, v in STORAGE_BOUNDS.items() if k != "max_faults"},
    "max_failovers": "controller failovers (ControllerFailover)",
    "max_faults": STORAGE_BOUNDS["max_faults"],
}

ModelConfig = compose(
    "ModelConfig",
    (DesignChoice, Shape, StorageFaults, ZkController, DataPath, Saturation, Deletion, Reassignment, DraftResets,
     FeatureOptions, AssignmentPolicy),
    ("variant", "brokers", "dirs", "partitions", "rf", "max_dir_failures", "max_saturations", "max_crashes",
     "max_restarts", "max_fixes", "max_failovers", "max_faults", "eager_metadata", "max_records", "min_isr",
     "unclean_election", "consumer", "saturation", "dir_capacity", "reserved_file", "saturation_recovery", "deletion",
     "deletion_waits_for_response", "reassignment", "reassignment_procedure", "probe_new_replicas",
     "max_created_resets", "options", "assignment_policy"),
    methods=(_ReassignmentTarget,),
    module=__name__,
)
