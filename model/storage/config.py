"""Model parameters, one configuration type per feature of the storage layer (the cluster's shape, storage's
faults, the data path, KIP-928 saturation, features' options), and how a controller mode composes them with its
own into one flat configuration (``compose``; model/zk/config.py makes ``ModelConfig``).

A part is a frozen attrs class: its fields (with their defaults and converters) and ``check(cfg)``, which
validates them on the composed configuration (a check may read other parts' fields, e.g. ``min_isr`` and
``rf``) and raises ConfigError. The composed class has every part's fields as its own, in the order the
composition gives (the order of ``as_dict``, hence of reports, scenarios and `jbodcheck presets`)."""
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

# Bounds on storage's environment events: each keeps every preset finite. Name -> (help text). A controller
# mode adds its own (model/zk/config.py BOUNDS).
STORAGE_BOUNDS = {
    "max_dir_failures": "log dirs that may fail (DirFail)",
    "max_saturations": "times a log dir may fill up (DirSaturate)",
    "max_crashes": "broker crashes (BrokerCrash)",
    "max_restarts": "broker restarts (BrokerRestart)",
    "max_fixes": "disk repairs: a disk replaced or a dir removed from the config",
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


def check_whole(cfg, names, low: int) -> None:
    """Each named field is a whole number (not a bool) of at least ``low``."""
    for name in names:
        value = getattr(cfg, name)
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            if low == 1:
                raise ConfigError(f"--{name} must be a whole number of at least 1, not {value!r}")
            raise ConfigError(f"--{name.replace('_', '-')} must be a whole number of at least {low}, not {value!r}")


def check_switches(cfg, names) -> None:
    for name in names:
        if not isinstance(getattr(cfg, name), bool):
            raise ConfigError(f"{name} must be true or false, not {getattr(cfg, name)!r}")


def check_choice(cfg, name: str, choices, flag: str | None = None) -> None:
    """The named field is one of ``choices`` (``flag``: its command-line name, if not the field's)."""
    if getattr(cfg, name) not in choices:
        flag = flag or "--" + name.replace("_", "-")
        raise ConfigError(f"unknown {flag} {getattr(cfg, name)!r} (known: {', '.join(choices)})")


@attrs.frozen
class Shape:
    """The cluster: brokers with their log dirs, partitions (one topic each) and the replication factor."""
    brokers: int = 3
    dirs: int = 2
    partitions: int = 1
    rf: int = 3

    @staticmethod
    def check(cfg) -> None:
        check_whole(cfg, ("brokers", "dirs", "partitions", "rf"), 1)
        if cfg.rf > cfg.brokers:
            raise ConfigError(f"--rf {cfg.rf} is larger than --brokers {cfg.brokers}: each replica needs its own broker")
        if cfg.brokers > 16 or cfg.dirs > 8 or cfg.partitions > 16:
            raise ConfigError("the model supports at most 16 brokers, 8 dirs per broker and 16 partitions")


@attrs.frozen
class StorageFaults:
    """The bounds on storage's environment events (model/storage/faults.py). The defaults are the `small`
    preset's: one of each event, at most two faults."""
    max_dir_failures: int = 1
    max_crashes: int = 1
    max_restarts: int = 1
    max_fixes: int = 1
    max_faults: int = 2

    @staticmethod
    def check(cfg) -> None:
        check_whole(cfg, ("max_dir_failures", "max_crashes", "max_restarts", "max_fixes", "max_faults"), 0)


@attrs.frozen
class DataPath:
    """The data path (docs/model.md, section 6.3): produce with acks=all, replication, consumption."""
    # Entries a partition's log may hold: one number for every partition, or one per partition (0: no data).
    max_records: int | tuple = attrs.field(default=1, converter=_tuple_if_list)
    # min.insync.replicas: one number for every partition, or one per partition.
    min_isr: int | tuple = attrs.field(default=1, converter=_tuple_if_list)
    # An explicit consumer (the Consume rule). Without it, reads_below_hw_are_committed still covers every
    # consumer: it says what any consumer reading from any leader at any time would see.
    consumer: bool = True

    @staticmethod
    def check(cfg) -> None:
        check_switches(cfg, ("consumer",))
        _check_per_partition(cfg, "min_isr", 1, cfg.rf)
        _check_per_partition(cfg, "max_records", 0, None)


def _check_per_partition(cfg, name: str, low: int, high: int | None) -> None:
    value = getattr(cfg, name)
    values = value if isinstance(value, tuple) else (value,)
    flag = "--" + name.replace("_", "-")
    if isinstance(value, tuple) and len(values) != cfg.partitions:
        raise ConfigError(f"{flag} lists {len(values)} values for {cfg.partitions} partition(s)")
    for v in values:
        if not isinstance(v, int) or isinstance(v, bool) or v < low or (high is not None and v > high):
            limit = f"between {low} and --rf {high}" if high is not None else f"at least {low}"
            raise ConfigError(f"{flag} must be {limit}, not {v!r}")


@attrs.frozen
class Saturation:
    """KIP-928 (docs/model.md, section 6.4): a full dir is saturated rather than offline; disk space in units."""
    saturation: bool = False
    dir_capacity: int = 3               # units of space per dir (the reserved file takes one)
    reserved_file: bool = True          # KIP-928's space of last resort, written at start-up
    # How a saturated dir becomes good again (the KIP is silent): "free-space" (DirRecover, once retention or
    # deletion freed enough; the controller reacts to replicas that answer without error again), "restart" (only
    # when its broker restarts) or "free-space-unchanged-controller" (DirRecover with KIP-112's controller as it
    # is: the replicas come back, but nothing re-elects their partitions or refreshes the metadata).
    saturation_recovery: str = "free-space"
    # With KIP-928 (StopReplica(delete=true) goes to every replica, saturated or offline, and answers for
    # itself): a replica whose deletion started is not failed when a LeaderAndIsr answer shows it offline. False
    # keeps Kafka's failReplicaDeletion, which lets a stale StopReplica answer count a re-created replica as
    # deleted (docs/model.md, section 6.5).
    deletion_waits_for_response: bool = True
    max_saturations: int = 1

    @staticmethod
    def check(cfg) -> None:
        check_whole(cfg, ("max_saturations",), 0)
        check_switches(cfg, ("saturation", "reserved_file", "deletion_waits_for_response"))
        check_choice(cfg, "saturation_recovery", SATURATION_RECOVERIES)
        capacity = cfg.dir_capacity
        if not isinstance(capacity, int) or isinstance(capacity, bool) or not 1 <= capacity <= 8:
            raise ConfigError(f"--dir-capacity must be a whole number between 1 and 8, not {cfg.dir_capacity!r}")
        if cfg.saturation and cfg.reserved_file and cfg.dir_capacity < 2:
            raise ConfigError("--dir-capacity must be at least 2 with the reserved file (it takes one unit)")


@attrs.frozen
class FeatureOptions:
    """The options of features added from outside (model/spec/feature.py Option), as sorted (name, value) pairs;
    a dict is accepted. Checked by the model against its features' declarations."""
    options: tuple = attrs.field(default=(), converter=_option_pairs)

    @staticmethod
    def check(cfg) -> None:
        return None


class ComposedConfig:
    """What every composed configuration has (``compose``): the per-partition values, the assignment, the
    parts, the JSON form."""

    PARTS: tuple = ()  # the parts, in the order their checks run (the first failing one is reported)

    def __attrs_post_init__(self) -> None:
        for part in self.PARTS:
            part.check(self)

    def min_isr_of(self, partition: int) -> int:
        return self.min_isr[partition] if isinstance(self.min_isr, tuple) else self.min_isr

    def max_records_of(self, partition: int) -> int:
        return self.max_records[partition] if isinstance(self.max_records, tuple) else self.max_records

    def assignment(self, partition: int) -> tuple[int, ...]:
        """Replica assignment of a partition, in assignment order (the first is the preferred leader)."""
        return tuple((partition + i) % self.brokers for i in range(self.rf))

    def part(self, part: type):
        """This configuration's values of one part (e.g. ``cfg.part(Saturation)``), as that part's type."""
        return part(**{f.name: getattr(self, f.name) for f in attrs.fields(part)})

    def as_dict(self) -> dict:
        """Every field, JSON-ready (per-partition values as lists, the options as an object)."""
        out = {k: list(v) if isinstance(v, tuple) else v for k, v in attrs.asdict(self).items() if k != "options"}
        out["options"] = {k: list(v) if isinstance(v, tuple) else v for k, v in self.options}
        return out

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in attrs.fields(cls))

    @classmethod
    def from_dict(cls, data: dict):
        unknown = sorted(set(data) - set(cls.field_names()))
        if unknown:
            raise ConfigError(f"unknown model parameter(s): {', '.join(unknown)}")
        return cls(**data)


def compose(name: str, parts: tuple, order: tuple[str, ...], methods: tuple = (), module: str | None = None) -> type:
    """A frozen attrs class ``name`` with the fields of ``parts`` (each part's default and converter) in
    ``order`` (every field once), checked after construction by each part's ``check``, in the order of
    ``parts``; ``methods``: more base classes (a controller mode's own methods)."""
    fields = {}
    for part in parts:
        for f in attrs.fields(part):
            if f.name in fields:
                raise TypeError(f"config field {f.name} is in two parts")
            fields[f.name] = f
    if sorted(order) != sorted(fields):
        raise TypeError(f"the order must name every field once: {sorted(set(order) ^ set(fields))}")
    these = {n: attrs.field(default=fields[n].default, converter=fields[n].converter, type=fields[n].type)
             for n in order}
    cls = attrs.make_class(name, these, bases=(*methods, ComposedConfig), frozen=True)
    cls.PARTS = tuple(parts)
    if module is not None:
        cls.__module__ = module
    return cls
