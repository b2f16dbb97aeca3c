"""Preset, variant and options -> the one model value a command runs on, built once through the catalog
(explorer/catalog.py) and handed to the engines and the reports as it is: the value carries its preset's name
(``model.preset``), no caller hands a name around beside it."""
from __future__ import annotations

import click

from model import ConfigError, Model, ModelConfig

from explorer.catalog import (build_model, claimed_invariants, configure, deprecation_note, design_of,
                              preset_deprecation_note)
from explorer.errors import guard_invariants

from .bugs import with_bugs
from .fixes import with_fixes
from .release import with_release
from .exits import BadInput
from .options import plugins


def model_config(preset: str | None, params: dict, base: dict | None = None,
                 base_name: str | None = None) -> ModelConfig:
    """The preset (if any), then the scenario file's model (base), then explicit flags; --kafka sets the ``kafka``
    option, --bug adds its ids to the ``bugs`` option they give, --fix its names to ``candidate_fixes``.
    ``base_name`` ("scenario PATH: model"): how an error that the file's model alone has names its source."""
    merged = {**(base or {}), **params}
    bug_ids = merged.pop("bug_ids", None)
    fix_names = merged.pop("fix_names", None)
    kafka = merged.pop("kafka_release", None)
    extra_presets = {name: p for f in plugins().features for name, p in f.presets.items()}
    try:
        cfg = configure(preset, merged, extra_presets, explicit=set(params))
    except ConfigError as e:
        raise BadInput(_source_of(e, preset, base, base_name, extra_presets)) from None
    if kafka is not None:
        cfg = with_release(cfg, kafka, design_of(cfg.variant).features)
    if bug_ids:
        cfg = with_bugs(cfg, bug_ids, design_of(cfg.variant).features)
    if fix_names:
        cfg = with_fixes(cfg, fix_names, design_of(cfg.variant).features)
    for note in (deprecation_note(cfg.variant), preset_deprecation_note(preset)):   # an old name works: say so
        if note is not None:
            click.echo(f"jbodcheck: warning: {note}", err=True)
    return cfg


def _source_of(error: ConfigError, preset, base: dict | None, base_name: str | None, extra_presets: dict) -> str:
    """The error's line, naming the file when the file's model alone (under the preset) has it, and then its
    fields as the file names them (``model.brokers``), not as the flags that set them (``--brokers``)."""
    if not base or base_name is None:
        return str(error)
    try:
        configure(preset, dict(base), extra_presets)
    except ConfigError as alone:
        return _in_file_terms(base_name, str(alone))
    return str(error)


def _in_file_terms(base_name: str, message: str) -> str:
    """``base_name`` ("scenario PATH: model") and ``message`` with each flag of a model field (``--max-faults``)
    written as the file's field (``model.max_faults``)."""
    import re

    import attrs

    fields = {f.name for f in attrs.fields(ModelConfig)} | {"preset"}
    owner = base_name.rpartition(": ")[2] if ": " in base_name else "model"

    def field(match):
        name = match.group(1).replace("-", "_")
        return f"{owner}.{name}" if name in fields else match.group(0)

    text = re.sub(r"(?<![\w-])--([a-z][a-z0-9-]*)", field, message)
    if text.startswith(f"{owner}.") and base_name.endswith(f": {owner}"):
        return f"{base_name[:-len(owner) - 2]}: {text}"
    return f"{base_name}: {text}"


def checked_model(preset: str | None, cfg: ModelConfig, invariant_ids=(), symmetry: bool = False,
                  quiet: bool = False) -> Model:
    """The model of this configuration with the plugins' features and invariants, checked with the named
    invariants (all by default), the plugins' ones guarded: an exception in their check is the checker's failure
    (exit 3, explorer/errors.py), not a traceback. Says on stderr when an invariant turns the asked-for symmetry
    reduction off (unless quiet: the summary and the report say it too)."""
    try:
        model = build_model(cfg, symmetry=symmetry, preset=preset, plugins=plugins(),
                            invariants=_with_portable(cfg, invariant_ids))
    except ConfigError as e:
        raise BadInput(str(e)) from None
    except KeyError as e:
        raise BadInput(_unknown_invariants(cfg, e.args[0])) from None
    if symmetry and not quiet and not model.symmetry and any(not i.symmetric for i in model.invariants):
        click.echo(f"jbodcheck: symmetry reduction off: {model.symmetry_note}", err=True)
    model.invariants = tuple(guard_invariants(model.invariants))
    return model


def command_model(preset: str | None, params: dict, invariant_ids=(), symmetry: bool = False, quiet: bool = False,
                  base: dict | None = None, base_name: str | None = None) -> Model:
    """model_config, then checked_model: the model value of a command's MODEL options."""
    return checked_model(preset, model_config(preset, params, base, base_name), invariant_ids, symmetry, quiet)


def _with_portable(cfg: ModelConfig, invariant_ids) -> list:
    """The named invariants, where one the design's features leave out but that reads only the core state
    (invariants/zk/designs.py PORTABLE: what `compare` judges every design by) is passed as a value, so that
    `--invariant dir_failure_spares_other_dirs` checks pre-kip112 as compare does."""
    from invariants.zk.designs import PORTABLE

    ids = list(invariant_ids)
    if not ids:
        return ids
    try:
        own = {i.id for i in build_model(cfg, plugins=plugins()).all_invariants}
    except ConfigError:
        return ids                          # reported by the caller's own build_model(...)
    portable = {i.id: i for i in PORTABLE}
    return [portable[i] if i not in own and i in portable else i for i in ids]


def _unknown_invariants(cfg: ModelConfig, unknown: str) -> str:
    known = build_model(cfg, plugins=plugins())
    elsewhere = {i.id: feature for feature, i in claimed_invariants()}
    left_out = [f"{i} belongs to feature {elsewhere[i]}, which this configuration leaves out"
                for i in unknown.split(", ") if i in elsewhere]
    if left_out:
        return "invariant " + "; ".join(left_out)
    return f"unknown invariant {unknown} (known: {', '.join(i.id for i in known.all_invariants)})"
