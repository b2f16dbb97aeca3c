"""Model parameters: the cluster's shape, the protocol variant and the bounds on environment events."""
from __future__ import annotations

import attrs

VARIANTS = ("kip112", "legacy")

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


class ConfigError(ValueError):
    """A configuration that the model cannot take (bad input: exit code 2)."""


@attrs.frozen
class ModelConfig:
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

    def __attrs_post_init__(self) -> None:
        if self.variant not in VARIANTS:
            raise ConfigError(f"unknown variant {self.variant!r} (known: {', '.join(VARIANTS)})")
        for name in ("brokers", "dirs", "partitions", "rf"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"--{name} must be a whole number of at least 1, not {value!r}")
        for name in BOUNDS:
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ConfigError(f"--{name.replace('_', '-')} must be a whole number of at least 0, not {value!r}")
        if not isinstance(self.eager_metadata, bool):
            raise ConfigError(f"eager_metadata must be true or false, not {self.eager_metadata!r}")
        if self.rf > self.brokers:
            raise ConfigError(f"--rf {self.rf} is larger than --brokers {self.brokers}: each replica needs its own broker")
        if self.brokers > 16 or self.dirs > 8 or self.partitions > 16:
            raise ConfigError("the model supports at most 16 brokers, 8 dirs per broker and 16 partitions")

    def assignment(self, partition: int) -> tuple[int, ...]:
        """Replica assignment of a partition, in assignment order (the first is the preferred leader)."""
        return tuple((partition + i) % self.brokers for i in range(self.rf))

    def as_dict(self) -> dict:
        return attrs.asdict(self)

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in attrs.fields(cls))

    @classmethod
    def from_dict(cls, data: dict) -> "ModelConfig":
        unknown = sorted(set(data) - set(cls.field_names()))
        if unknown:
            raise ConfigError(f"unknown model parameter(s): {', '.join(unknown)}")
        return cls(**data)
