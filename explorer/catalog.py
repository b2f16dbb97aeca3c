"""The catalog: the designs jbodcheck knows, each bound to the invariants its features claim, and the presets.

It sits above the model (model/: the kernel, storage, the ZooKeeper controller) and the invariants (invariants/),
which do not know each other's built-in pairing: a feature is defined without its invariants, an invariant
without its feature, and this module says which feature claims which (``CLAIMS``). The CLI, compare, the
benchmarks and the tests turn a configuration into a model value here (``build_model``) and hand engines that
value; no engine looks a design up by name.
"""
from __future__ import annotations

from types import SimpleNamespace

from invariants.plugins import Plugins, load_plugins as _load_plugins
from invariants.storage import durability, kip928, safety
from invariants.zk import controller as controller_invariants, designs as design_invariants, kip46 as kip46_invariants, progress
from invariants.kraft import deletion as kraft_deletion, elr as kraft_elr, future as kraft_future
from invariants.kraft import liveness as kraft_liveness
from invariants.kraft import quiescent as kraft_quiescent, safety as kraft_safety, sessions as kraft_sessions
from model.spec.errors import ConfigError
from model.spec.feature import Design, Feature, always
from model.spec.invariant import SAFETY_KINDS, Invariant, invariants_in
from model.spec.model import Model
from model.zk.config import ModelConfig
from model.kraft import design as kraft_designs
from model.kraft.bugs import TURN_ON as KRAFT_TURN_ON, refuse_without_feature
from model.kraft.fixes import FIXES_OPTION, refuse_without_feature as fixes_refusal
from model.kraft.saturation import refusal as saturation_refusal
from model.zk import designs as zk_designs
from model.zk.designs import (  # noqa: F401 (the CLI's names for variants)
    DEPRECATED_VARIANTS, canonical_variant, deprecation_note,
)

# The names a configuration's variant may take (ModelConfig.variant): the ZooKeeper-mode designs, then KRaft's.
VARIANTS = zk_designs.VARIANTS + kraft_designs.VARIANTS


def check_variant(cfg, explicit=()) -> None:
    """Raise ConfigError unless the configuration's variant names a design (old names included) that takes the
    configuration's features, and sets no parameter that design has no use for (``unread_parameter``; ``explicit``:
    the parameters given as command-line flags)."""
    _check_design(cfg)
    why = unread_parameter(cfg, explicit)
    if why:
        raise ConfigError(why)


def _check_design(cfg) -> None:
    _check_option_values(cfg)
    if canonical_variant(cfg.variant) in kraft_designs.DESIGNS:
        if cfg.deletion and cfg.max_records:
            raise ConfigError(f"--deletion with --variant {cfg.variant} is modelled without records: use "
                              "--max-records 0 (docs/kraft.md)")
        design = kraft_designs.DESIGNS[canonical_variant(cfg.variant)]
        included = {f.name for f in design.included(cfg)}
        options = dict(cfg.options)
        why = (refuse_without_feature(options.get("bugs", ()), included)
               or fixes_refusal(options.get(FIXES_OPTION, ()), included) or saturation_refusal(cfg, included))
        if why:
            raise ConfigError(why)
        return
    zk_designs.check_variant(cfg)


def _check_option_values(cfg) -> None:
    """ConfigError for a value that an option of the design's features refuses (its ``check``), before any
    feature's ``enabled`` reads it (KRaft's read ``bugs``); options no built-in feature declares are the model's
    to judge (a plugin's)."""
    if canonical_variant(cfg.variant) not in DESIGNS:
        raise ConfigError(f"unknown variant {cfg.variant!r} (known: {', '.join(VARIANTS)})")
    declared = {o.name: o for f in design_of(cfg.variant).features for o in f.options}
    for name, value in cfg.options:
        why = declared[name].check(value) if name in declared else None
        if why is not None:
            raise ConfigError(f"option {name}: {why}")


# ---- parameters a model has no use for (issue 41) ----------------------------------------------------------------
#
# A model parameter is read by the features that list it in ``Feature.config_fields``. One that no included feature
# reads changes nothing, so a report that says ``unclean_election: true`` of a KRaft run would claim what was not
# checked. It is refused, in one line, when it was given as a flag with another value than its idle one (what a
# model without the feature does: no event for a bound, the default for any other), or, from a preset or a
# scenario file (which carry every field), when no feature of the whole design reads it and it is neither its
# default nor its idle value. So `--variant kraft --unclean-election` and `--dir-capacity 2` without
# `--saturation` are refused; `--preset deletion --no-saturation`, whose preset's dir_capacity is 2, is not.

_ALWAYS_READ = ("variant", "options")


def _default(name: str):
    return getattr(ModelConfig(), name)


def _idle(name: str):
    return 0 if name.startswith("max_") else _default(name)      # a bound: no such event


def _flag_text(name: str, value) -> str:
    """How the command line says ``name`` = ``value`` (``--no-unclean-election``, ``--max-failovers 2``)."""
    flag = next((f for feature in features() for f in feature.flags if f.field == name), None)
    if flag is not None and flag.type == "switch":
        on, _, off = flag.decl.partition("/")
        return on if value else (off or f"{on}=false")
    decl = flag.decl if flag is not None else "--" + name.replace("_", "-")
    shown = ",".join(map(str, value)) if isinstance(value, tuple) else value
    return f"{decl} {shown}"


def turn_on(feature: Feature, cfg) -> str:
    """How ``cfg`` would include ``feature``: KRaft's own ways, else the switch or choice (or the switch and the
    choice) that enables it, else the features that require it."""
    if feature.name in KRAFT_TURN_ON:
        return KRAFT_TURN_ON[feature.name]
    flags = [flag for other in features() for flag in other.flags]
    switches = [(flag.field, True) for flag in flags if flag.type == "switch"]
    choices = [(flag.field, value) for flag in flags if flag.type == "choice" for value in flag.choices]
    values = {n: getattr(cfg, n) for n in cfg.as_dict()}
    for settings in [[s] for s in switches + choices] + [[s, c] for s in switches for c in choices]:
        if any(values[field] == value for field, value in settings):
            continue
        if feature.enabled(SimpleNamespace(**{**values, **dict(settings)})):
            return " ".join(_flag_text(field, value) for field, value in settings)
    needed_by = [f"{f.name} ({turn_on(f, cfg) if f.enabled is not always else 'always, in its designs'})"
                 for f in features() if feature in f.requires]
    if needed_by:
        return "a feature that requires it: " + ", ".join(needed_by)
    return f"a preset that includes it ({', '.join(feature.presets) or 'see jbodcheck presets'})"


def unread_parameter(cfg, explicit=()) -> str | None:
    """Why ``cfg`` sets a parameter its model has no use for (one line), or None; ``explicit``: the names given
    as command-line flags (the others come from a preset, a scenario file or the defaults)."""
    design = design_of(cfg.variant)
    included = design.included(cfg)
    read_now = {n for f in included for n in f.config_fields} | set(_ALWAYS_READ)
    for name in cfg.as_dict():
        if name in read_now:
            continue
        value = getattr(cfg, name)
        readers = [f for f in design.features if name in f.config_fields]
        if name in explicit:
            if value == _idle(name):
                continue
            given = _flag_text(name, value)
        elif readers or value in (_default(name), _idle(name)):
            continue
        else:
            given = f"the model parameter {name}={json_text(value)} (from the preset or scenario file)"
        if readers:
            return (f"{given} applies to the feature {readers[0].name} of --variant {cfg.variant}, which this "
                    f"configuration leaves out (it would change nothing): turn it on with {turn_on(readers[0], cfg)}")
        others = [d for d, design_ in DESIGNS.items() if any(name in f.config_fields for f in design_.features)]
        where = ("ZooKeeper mode's variants" if set(others) == set(zk_designs.DESIGNS)
                 else "--variant " + ", ".join(others))
        return (f"{given} is not a parameter of --variant {cfg.variant} (it applies to {where}): the model would "
                f"ignore it")
    return None


def json_text(value) -> str:
    import json

    return json.dumps(list(value) if isinstance(value, tuple) else value)


def _claimed(check, feature: str) -> Invariant:
    """A design-specific invariant: checked where the claiming feature is, vacuous elsewhere (compare judges
    every design by the unguarded one: invariants/zk/designs.py PORTABLE)."""
    return design_invariants.claimed_by(check.invariant, feature)


# KIP-112's goal that its draft and KRaft's create-or-not decision both claim (the same property, one id).
NO_RECREATE_OVER_OFFLINE_COPY = design_invariants.claimed_by(
    design_invariants.no_recreate_over_offline_copy.invariant, "kip112-draft-created", "kraft-core")

# Feature name -> the invariants it claims, in the order they are checked and reported.
CLAIMS: dict[str, tuple] = {
    "kip112-core": (*invariants_in(safety), controller_invariants.controller_transitions_valid,
                    progress.leader_or_no_candidate, progress.offline_replica_reported_or_back),
    "kip112-create": (_claimed(design_invariants.dir_failure_spares_other_dirs, "kip112-create"),),
    "data": tuple(invariants_in(durability)),
    "saturation": (kip928.no_serving_from_saturated_dir, kip928.saturated_dir_can_free_space),
    "replica-deletion": (kip928.deleted_replica_holds_no_data,),
    "deletion": (progress.deletion_done_or_broker_down,),
    "reassignment": (kip928.reassignment_keeps_an_in_sync_copy, progress.reassignment_done_or_broker_down),
    "kip112-draft-created": (_claimed(design_invariants.refusal_only_for_a_lost_copy, "kip112-draft-created"),
                             NO_RECREATE_OVER_OFFLINE_COPY),
    "kip18-restart-partitions": (_claimed(design_invariants.offline_replicas_are_known, "kip18-restart-partitions"),),
    # Vacuous on a model without the feature (they read its znodes).
    "kip46-self-healing": (_claimed(kip46_invariants.dead_broker_is_scheduled_for_healing, "kip46-self-healing"),
                           _claimed(kip46_invariants.replication_restored_or_premise_gone, "kip46-self-healing")),
    # KRaft mode: the shared storage property that reads only the brokers, and its own, vacuous on a model without
    # the feature (they read its metadata log); the data path's durability invariants come with the "data" feature.
    "kraft-core": (safety.no_serving_from_offline_dir, NO_RECREATE_OVER_OFFLINE_COPY,
                   _claimed(kraft_safety.kraft_leader_passes_leader_acceptor, "kraft-core"),
                   # metadata_shows_offline_replicas: ZooKeeper's id and meaning, read from KRaft's metadata.
                   safety.leader_is_live_isr_member, kraft_quiescent.METADATA_SHOWS_OFFLINE_REPLICAS,
                   _claimed(kraft_quiescent.kraft_directories_match_actual_dir, "kraft-core"),
                   _claimed(kraft_quiescent.no_dir_failure_cascade, "kraft-core"),
                   _claimed(kraft_quiescent.no_leaderless_partition_with_live_isr_copy, "kraft-core"),
                   *(design_invariants.claimed_by(i, "kraft-core") for i in invariants_in(kraft_liveness)),
                   # "A failure is acknowledged, or the broker stops": the broker stops by a crash, or with
                   # kraft-sessions by the 3.8+ dir failure timeout (invariants/kraft/sessions.py).
                   kraft_sessions.dir_failure_acknowledged_or_broker_stops),
    "kraft-mv-upgrade": (_claimed(kraft_safety.kraft_leadership_as_leader_acceptor_allows, "kraft-mv-upgrade"),),
    # Intra-broker moves (model/kraft/future.py): vacuous without the feature's moves.
    "kraft-future": (_claimed(kraft_future.kraft_directories_name_the_log_dir, "kraft-future"),),
    "kraft-deletion": (_claimed(kraft_deletion.kraft_recreated_topic_hosted, "kraft-deletion"),),
    # Eligible Leader Replicas (model/kraft/elr.py): what KIP-966 promises, checked wherever ELR is on.
    "kraft-elr": tuple(_claimed(i, "kraft-elr") for i in (kraft_elr.kraft_elr_leader_holds_committed,
                                                          kraft_elr.kraft_unclean_election_only_as_last_known_leader,
                                                          kraft_elr.kraft_elr_well_formed)),
}

DESIGNS: dict[str, Design] = {name: d.claiming(CLAIMS)
                              for name, d in {**zk_designs.DESIGNS, **kraft_designs.DESIGNS}.items()}


def design_of(variant: str) -> Design:
    return DESIGNS[canonical_variant(variant)]


def features() -> tuple[Feature, ...]:
    """Every feature of every design, once, in design order (the CLI's options, the presets, `invariants`)."""
    out: list[Feature] = []
    for design in DESIGNS.values():
        for f in design.features:
            if f not in out:
                out.append(f)
    return tuple(out)


def claims_of(feature: Feature) -> tuple[Invariant, ...]:
    """The invariants a feature claims (its own, then the catalog's for it)."""
    return tuple(feature.invariants) + tuple(getattr(i, "invariant", i) for i in CLAIMS.get(feature.name, ()))


def claimed_invariants() -> list[tuple[str, Invariant]]:
    """(feature name, invariant) for every built-in invariant, in order, with the first feature that claims it
    (no_serving_from_offline_dir: kip112-core, and no_recreate_over_offline_copy: kip112-draft-created; kraft-core
    claims both too)."""
    out: dict = {}
    for f in features():
        for i in claims_of(f):
            out.setdefault(i.id, (f.name, i))
    return list(out.values())


def load_plugins(names=(), *, env: bool = False) -> Plugins:
    """invariants.plugins.load_plugins, refusing a plugin invariant that takes a built-in one's id."""
    return _load_plugins(names, env=env, builtin=claimed_invariants())


def builtin_invariants() -> list[Invariant]:
    """Every built-in invariant, as the features of the built-in designs claim them, in order, once (what
    `jbodcheck invariants` lists; KRaft's core claims a storage invariant that ZooKeeper's core claims too)."""
    return [i for _, i in claimed_invariants()]


def select_invariants(ids=None, extra=()) -> list[Invariant]:
    """The built-in invariants (and ``extra`` ones) named by ids, all the safety ones when ids is empty (liveness
    properties only when named); an unknown id raises KeyError."""
    known = builtin_invariants() + list(extra)
    if not ids:
        return [i for i in known if i.kind in SAFETY_KINDS]
    by_id = {i.id: i for i in known}
    unknown = [i for i in ids if i not in by_id]
    if unknown:
        raise KeyError(", ".join(unknown))
    return [by_id[i] for i in ids]


# Named configurations, brought by the features they exercise (Feature.presets). Each exhausts without bounds on
# one machine (figures in docs/performance.md).
PRESETS: dict[str, tuple[str, dict]] = {name: preset for f in features() for name, preset in f.presets.items()}


# Old preset names that keep working (they name the same configuration), each with the name to use instead.
DEPRECATED_PRESETS: dict[str, str] = {
    "kraft-tiny-data": "kraft-tiny",   # 0.4.0's kraft-tiny took kraft-tiny-data's record and one fault (same space)
}


def preset_names() -> list[str]:
    return list(PRESETS)


def preset_deprecation_note(name: str | None) -> str | None:
    """One line saying that a preset name is deprecated and what to use, or None for a current name."""
    new = DEPRECATED_PRESETS.get(name)
    if new is None:
        return None
    return (f"--preset {name} is deprecated: use --preset {new} (the same state space; {name} keeps working and "
            f"reports keep the name given)")


def preset_config(name: str, extra_presets: dict | None = None, *, explicit=(), **overrides) -> ModelConfig:
    """The preset's configuration with overrides (None values ignored); extra_presets: those of plugin features;
    ``explicit``: the overrides given as command-line flags (check_variant)."""
    presets = {**PRESETS, **(extra_presets or {})}
    name = DEPRECATED_PRESETS.get(name, name) if name not in presets else name
    if name not in presets:
        raise ConfigError(f"unknown preset {name!r} (known: {', '.join(presets)})")
    params = dict(presets[name][1])
    given = {k: v for k, v in overrides.items() if v is not None}
    unknown = sorted(set(given) - set(ModelConfig.field_names()))
    if unknown:
        raise ConfigError(f"unknown model parameter(s): {', '.join(unknown)}")
    if params.get("options") and given.get("options"):  # the preset's feature options, with the given ones over them
        given["options"] = {**dict(ModelConfig(options=params["options"]).options), **dict(given["options"])}
    params.update(given)
    cfg = ModelConfig(**params)
    check_variant(cfg, explicit)
    return cfg


def build_model(cfg: ModelConfig, symmetry: bool = False, *, preset: str | None = None, **options) -> Model:
    """The model value of a configuration: its variant's design, with the invariants it claims (``options``:
    Model's ``plugins``, ``invariants``, ``memo_effects``; ``design`` to build another design). ``preset``: the
    name the configuration was made from, carried by the value (``model.preset``) for the reports and scenario
    files, so that no caller hands the name around beside the model."""
    check_variant(cfg)
    design = options.pop("design", None) or design_of(cfg.variant)
    model = Model(cfg, symmetry, design=design, **options)
    model.preset = preset
    return model


def preset_of(model) -> str | None:
    """The preset a model value was built from (build_model's ``preset``); None for a custom one."""
    return getattr(model, "preset", None)


def configure(preset: str | None, params: dict, extra_presets: dict | None = None, explicit=()) -> ModelConfig:
    """The configuration of a preset (if any) with ``params`` over it, else of ``params`` alone (ConfigError,
    TypeError for a bad one); ``explicit``: the names among ``params`` given as command-line flags."""
    if preset is not None:
        return preset_config(preset, extra_presets, explicit=explicit, **params)
    cfg = ModelConfig.from_dict(params)
    check_variant(cfg, explicit)
    return cfg


# The built-in designs, with their claims (model/zk/designs.py has them without).
KIP112 = DESIGNS["kip112"]
KIP112_NO_ISNEW_CHECK = DESIGNS["kip112-no-isnew-check"]
PRE_KIP112 = DESIGNS["pre-kip112"]
KIP112_DRAFT = DESIGNS["kip112-draft"]
KIP18_DESIGN = DESIGNS["kip18"]
KIP46_DESIGN = DESIGNS["kip46"]
KRAFT_DESIGN = DESIGNS["kraft"]
