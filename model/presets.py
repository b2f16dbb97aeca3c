"""Named configurations. Each exhausts without bounds on one machine (figures in docs/performance.md): tiny in
seconds, small in minutes, medium in under ten minutes; the feature presets (saturation, deletion, reassignment,
reassignment-race) in seconds to three minutes. tiny has the explicit consumer; the others rely on reads_below_hw_are_committed, which
covers every consumer."""
from __future__ import annotations

from .config import ConfigError, ModelConfig

# Every environment event may happen once, and at most two faults (dir failures, saturations, crashes,
# failovers) happen in one run, so that each rule fires while the state space stays exhaustible.
_ONE_OF_EACH = dict(
    max_dir_failures=1, max_saturations=1, max_crashes=1, max_restarts=1, max_fixes=1, max_failovers=1,
    max_faults=2,
)

PRESETS: dict[str, tuple[str, dict]] = {
    "tiny": ("2 brokers x 2 dirs, 1 partition, RF 2; one record, a consumer; one of each event, at most two faults",
             dict(brokers=2, dirs=2, partitions=1, rf=2, max_records=1, consumer=True, **_ONE_OF_EACH)),
    "small": ("3 brokers x 2 dirs, 1 partition, RF 3: KIP-112's test-plan cluster; one record; one of each event, "
              "at most two faults",
              dict(brokers=3, dirs=2, partitions=1, rf=3, max_records=1, consumer=False, **_ONE_OF_EACH)),
    "medium": ("3 brokers x 2 dirs, 2 partitions, RF 2; one record in partition 0; one of each event, at most two "
               "faults",
               dict(brokers=3, dirs=2, partitions=2, rf=2, max_records=(1, 0), consumer=False, **_ONE_OF_EACH)),
    "saturation": ("KIP-928: 2 brokers x 2 dirs, 1 partition, RF 2; 2 units a dir (the reserved file takes one); "
                   "one record; one dir failure, saturation, crash, restart; at most two faults",
                   dict(brokers=2, dirs=2, partitions=1, rf=2, saturation=True, dir_capacity=2, max_records=1,
                        consumer=False, **{**_ONE_OF_EACH, "max_failovers": 0, "max_fixes": 0})),
    "deletion": ("Topic deletion under KIP-112 + KIP-928: 2 brokers x 2 dirs, 1 partition, RF 2; 2 units a dir; no "
                 "records; one of each event but failover; at most two faults",
                 dict(brokers=2, dirs=2, partitions=1, rf=2, saturation=True, deletion=True, dir_capacity=2,
                      max_records=0, **{**_ONE_OF_EACH, "max_failovers": 0})),
    "reassignment": ("Partition reassignment: 2 brokers x 2 dirs, 1 partition with one replica, moved from broker 0 "
                     "to broker 1; one record; a crash, a restart and a controller failover, no disk failure (see "
                     "reassignment-race)",
                     dict(brokers=2, dirs=2, partitions=1, rf=1, reassignment=True, max_records=1, consumer=False,
                          **{**_ONE_OF_EACH, "max_dir_failures": 0, "max_fixes": 0})),
    "reassignment-race": ("The reassignment preset with one disk failure and one disk repair as well: finds the race "
                          "of docs/model.md 11.1, finding 4 (exits 1 by design)",
                          dict(brokers=2, dirs=2, partitions=1, rf=1, reassignment=True, max_records=1,
                               consumer=False, **_ONE_OF_EACH)),
}


def preset_names() -> list[str]:
    return list(PRESETS)


def preset_config(name: str, **overrides) -> ModelConfig:
    if name not in PRESETS:
        raise ConfigError(f"unknown preset {name!r} (known: {', '.join(PRESETS)})")
    params = dict(PRESETS[name][1])
    params.update({k: v for k, v in overrides.items() if v is not None})
    return ModelConfig(**params)
