"""Named configurations. Each exhausts without bounds on one machine (figures in docs/performance.md): tiny in
seconds, small in minutes, medium in under ten minutes. All carry records (the data path); tiny has the
explicit consumer, small and medium rely on reads_below_hw_are_committed, which covers every consumer."""
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
}


def preset_names() -> list[str]:
    return list(PRESETS)


def preset_config(name: str, **overrides) -> ModelConfig:
    if name not in PRESETS:
        raise ConfigError(f"unknown preset {name!r} (known: {', '.join(PRESETS)})")
    params = dict(PRESETS[name][1])
    params.update({k: v for k, v in overrides.items() if v is not None})
    return ModelConfig(**params)
