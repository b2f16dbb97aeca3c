"""Named configurations, brought by the features they exercise (model/feature.py ``presets``). Each exhausts
without bounds on one machine (figures in docs/performance.md): tiny in seconds, small in minutes, medium in
under ten minutes; the feature presets (saturation, deletion, reassignment, reassignment-race) in seconds to
three minutes. tiny has the explicit consumer; the others rely on reads_below_hw_are_committed, which covers
every consumer."""
from __future__ import annotations

from .config import ConfigError, ModelConfig
from .designs import catalog

PRESETS: dict[str, tuple[str, dict]] = {name: preset for f in catalog() for name, preset in f.presets.items()}


def preset_names() -> list[str]:
    return list(PRESETS)


def preset_config(name: str, extra_presets: dict | None = None, **overrides) -> ModelConfig:
    """The preset's configuration with overrides (None values ignored); extra_presets: those of plugin features."""
    presets = {**PRESETS, **(extra_presets or {})}
    if name not in presets:
        raise ConfigError(f"unknown preset {name!r} (known: {', '.join(presets)})")
    params = dict(presets[name][1])
    params.update({k: v for k, v in overrides.items() if v is not None})
    return ModelConfig(**params)
