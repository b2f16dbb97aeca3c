"""Model parameters: the cluster's shape, the protocol variant and the bounds on environment events."""
from __future__ import annotations

import attrs

from model.spec.errors import ConfigError

# Which brokers a topic may be created on (docs/model.md, section 3.3): "any" (a manual assignment, which may
# name brokers that are down: the model's default) or "live-brokers" (only while every broker of the
# partition's assignment is registered, as Kafka's automatic assignment picks registered brokers).
ASSIGNMENTS = ("any", "live-brokers")
SATURATION_RECOVERIES = ("free-space", "restart", "free-space-unchanged-controller")
# KafkaController.onPartitionReassignment as Kafka 1.0 to 2.3 have it, or as Kafka 2.4+ (KIP-455) with the
# KAFKA-10314 fix of Kafka 2.7 (docs/model.md, section 6.6).
REASSIGNMENT_PROCEDURES = ("kafka-1.0", "kafka-2.7")

# Bounds on environment events: each keeps every preset finite. Name -> (help text).
BOUNDS = {
    "max_dir_failures": "log dirs that may fail (DirFail)",
    "max_saturations": "times a log dir may fill up (DirSaturate)",
    "max_crashes": "broker crashes (BrokerCrash)",
    "max_restarts": "broker restarts (BrokerRestart)",
    "max_fixes": "disk repairs: a disk replaced or a dir removed from the config",
    "max_failovers": "controller failovers (ControllerFailover)",
    "max_faults": "faults of any kind together: dir failures, saturations, crashes and failovers",
}


# Every environment event may happen once, and at most two faults (dir failures, saturations, crashes,
# failovers) happen in one run, so that each rule fires while the state space stays exhaustible (the presets).
ONE_OF_EACH = dict(
    max_dir_failures=1, max_saturations=1, max_crashes=1, max_restarts=1, max_fixes=1, max_failovers=1,
    max_faults=2,
)


def _tuple_if_list(value):
    return tuple(value) if isinstance(value, list) else value


def _option_pairs(value):
    if isinstance(value, dict):
        value = value.items()
    try:
        return tuple(sorted((str(k), _tuple_if_list(v)) for k, v in value))
    except (TypeError, ValueError):
        raise ConfigError(f"options must be an object of option names and values, not {value!r}") from None


@attrs.frozen
class ModelConfig:
    # The design's name, checked where the design is looked up (explorer/catalog.py; the designs are above storage).
    variant: str = "kip112"
    brokers: int = 3
    dirs: int = 2
    partitions: int = 1
    rf: int = 3
    # The defaults are the `small` preset's: one of each event, at most two faults.
    max_dir_failures: int = 1
    max_saturations: int = 1
    max_crashes: int = 1
    max_restarts: int = 1
    max_fixes: int = 1
    max_failovers: int = 1
    max_faults: int = 2
    # Apply an UpdateMetadata as soon as it reaches the head of a broker's queue (see docs/model.md,
    # "Eager metadata"): sound for every invariant that reads metadata caches only in quiescent states.
    eager_metadata: bool = True
    # The data path (docs/model.md, section 6.3): produce with acks=all, replication, consumption.
    # Entries a partition's log may hold: one number for every partition, or one per partition (0: no data).
    max_records: int | tuple = attrs.field(default=1, converter=_tuple_if_list)
    # min.insync.replicas: one number for every partition, or one per partition.
    min_isr: int | tuple = attrs.field(default=1, converter=_tuple_if_list)
    unclean_election: bool = False  # unclean.leader.election.enable
    # An explicit consumer (the Consume rule). Without it, reads_below_hw_are_committed still covers every
    # consumer: it says what any consumer reading from any leader at any time would see.
    consumer: bool = True
    # KIP-928 (docs/model.md, section 6.4): a full dir is saturated rather than offline; disk space in units.
    saturation: bool = False
    dir_capacity: int = 3               # units of space per dir (the reserved file takes one)
    reserved_file: bool = True          # KIP-928's space of last resort, written at start-up
    # How a saturated dir becomes good again (the KIP is silent): "free-space" (DirRecover, once retention or
    # deletion freed enough; the controller reacts to replicas that answer without error again), "restart" (only
    # when its broker restarts) or "free-space-unchanged-controller" (DirRecover with KIP-112's controller as it
    # is: the replicas come back, but nothing re-elects their partitions or refreshes the metadata).
    saturation_recovery: str = "free-space"
    # Topic deletion (KIP-112 scenario 8; TopicDeletionManager): the DeleteTopic rule and the deletion states.
    deletion: bool = False
    # With KIP-928 (StopReplica(delete=true) goes to every replica, saturated or offline, and answers for
    # itself): a replica whose deletion started is not failed when a LeaderAndIsr answer shows it offline. False
    # keeps Kafka's failReplicaDeletion, which lets a stale StopReplica answer count a re-created replica as
    # deleted (docs/model.md, section 6.5).
    deletion_waits_for_response: bool = True
    # Partition reassignment (KIP-112 scenario 7; KafkaController.onPartitionReassignment, Kafka 1.0 to 2.3):
    # partition 0 may be moved once, from its assignment to the next brokers (see reassignment_target).
    reassignment: bool = False
    # Which Kafka's reassignment procedure (REASSIGNMENT_PROCEDURES): "kafka-1.0" (1.0 to 2.3, the default) or
    # "kafka-2.7" (KIP-455's replica set order and deletion ineligibility, and KAFKA-10314: the added replicas get
    # isNewReplica=true from the first LeaderAndIsr).
    reassignment_procedure: str = "kafka-1.0"
    # The log-dir probe queries replicas in NewReplica too, with isNewReplica=true, as KIP-112 scenarios 2 and 3
    # say (False: Kafka's code, where OnlineReplica from NewReplica sends nothing; only a reassignment leaves a
    # replica in NewReplica, so this matters only with --reassignment).
    probe_new_replicas: bool = True
    # KIP-112's draft (--variant kip112-draft, docs/model.md 12.1): bound on the administrator's kafka-log-dirs.sh
    # runs that remove a broker from the created lists (ResetCreatedLists); no effect on the other designs.
    max_created_resets: int = 1
    # The options of features added from outside (model/spec/feature.py Option), as sorted (name, value) pairs; a dict
    # is accepted. Checked by the model against its features' declarations.
    options: tuple = attrs.field(default=(), converter=_option_pairs)
    # Which brokers a topic may be created on (ASSIGNMENTS; --assignment).
    assignment_policy: str = "any"

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.variant, str) or not self.variant:
            raise ConfigError(f"the variant must be a design's name, not {self.variant!r}")
        for name in ("brokers", "dirs", "partitions", "rf"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"--{name} must be a whole number of at least 1, not {value!r}")
        for name in (*BOUNDS, "max_created_resets"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ConfigError(f"--{name.replace('_', '-')} must be a whole number of at least 0, not {value!r}")
        for name in ("eager_metadata", "unclean_election", "consumer", "saturation", "reserved_file", "deletion",
                     "deletion_waits_for_response", "reassignment",
                     "probe_new_replicas"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(f"{name} must be true or false, not {getattr(self, name)!r}")
        self._check_min_isr()
        if self.saturation_recovery not in SATURATION_RECOVERIES:
            raise ConfigError(f"unknown --saturation-recovery {self.saturation_recovery!r} "
                              f"(known: {', '.join(SATURATION_RECOVERIES)})")
        if self.assignment_policy not in ASSIGNMENTS:
            raise ConfigError(f"unknown --assignment {self.assignment_policy!r} (known: {', '.join(ASSIGNMENTS)})")
        if self.reassignment_procedure not in REASSIGNMENT_PROCEDURES:
            raise ConfigError(f"unknown --reassignment-procedure {self.reassignment_procedure!r} "
                              f"(known: {', '.join(REASSIGNMENT_PROCEDURES)})")
        capacity = self.dir_capacity
        if not isinstance(capacity, int) or isinstance(capacity, bool) or not 1 <= capacity <= 8:
            raise ConfigError(f"--dir-capacity must be a whole number between 1 and 8, not {self.dir_capacity!r}")
        if self.saturation and self.reserved_file and self.dir_capacity < 2:
            raise ConfigError("--dir-capacity must be at least 2 with the reserved file (it takes one unit)")
        if self.rf > self.brokers:
            raise ConfigError(f"--rf {self.rf} is larger than --brokers {self.brokers}: each replica needs its own broker")
        if self.reassignment and self.rf >= self.brokers:
            raise ConfigError(f"--reassignment needs a broker outside partition 0's assignment: --rf {self.rf} must "
                              f"be smaller than --brokers {self.brokers}")
        if self.brokers > 16 or self.dirs > 8 or self.partitions > 16:
            raise ConfigError("the model supports at most 16 brokers, 8 dirs per broker and 16 partitions")

    def _check_per_partition(self, name: str, low: int, high: int | None) -> None:
        value = getattr(self, name)
        values = value if isinstance(value, tuple) else (value,)
        flag = "--" + name.replace("_", "-")
        if isinstance(value, tuple) and len(values) != self.partitions:
            raise ConfigError(f"{flag} lists {len(values)} values for {self.partitions} partition(s)")
        for v in values:
            if not isinstance(v, int) or isinstance(v, bool) or v < low or (high is not None and v > high):
                limit = f"between {low} and --rf {high}" if high is not None else f"at least {low}"
                raise ConfigError(f"{flag} must be {limit}, not {v!r}")

    def _check_min_isr(self) -> None:
        self._check_per_partition("min_isr", 1, self.rf)
        self._check_per_partition("max_records", 0, None)

    def min_isr_of(self, partition: int) -> int:
        return self.min_isr[partition] if isinstance(self.min_isr, tuple) else self.min_isr

    def max_records_of(self, partition: int) -> int:
        return self.max_records[partition] if isinstance(self.max_records, tuple) else self.max_records

    def assignment(self, partition: int) -> tuple[int, ...]:
        """Replica assignment of a partition, in assignment order (the first is the preferred leader)."""
        return tuple((partition + i) % self.brokers for i in range(self.rf))

    def reassignment_target(self, partition: int) -> tuple[int, ...] | None:
        """The assignment a reassignment moves the partition to: partition 0 only, every replica to the next
        broker (e.g. [0, 1] -> [1, 2]), so that the leader moves and a new broker receives a replica."""
        if not self.reassignment or partition != 0:
            return None
        return tuple((b + 1) % self.brokers for b in self.assignment(partition))

    def as_dict(self) -> dict:
        """Every field, JSON-ready (per-partition values as lists, the options as an object)."""
        out = {k: list(v) if isinstance(v, tuple) else v for k, v in attrs.asdict(self).items() if k != "options"}
        out["options"] = {k: list(v) if isinstance(v, tuple) else v for k, v in self.options}
        return out

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in attrs.fields(cls))

    @classmethod
    def from_dict(cls, data: dict) -> "ModelConfig":
        unknown = sorted(set(data) - set(cls.field_names()))
        if unknown:
            raise ConfigError(f"unknown model parameter(s): {', '.join(unknown)}")
        return cls(**data)
