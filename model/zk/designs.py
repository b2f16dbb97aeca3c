"""The designs jbodcheck models, each an ordered set of features (model/spec/feature.py).

``kip112`` is KIP-112 as adopted: a broker asked with isNewReplica=false for a replica it does not hold, while
it has an offline log dir, refuses (LogManager.getOrCreateLog). ``kip112-no-isnew-check`` (formerly ``legacy``,
still accepted: DEPRECATED_VARIANTS) is KIP-112 with that check removed: the broker creates any missing
log. The two differ in one feature, as a TLA+ module that EXTENDS a base and redefines one action; every other
feature (the data path, KIP-928 saturation, deletion, reassignment) composes with either, switched on by its
option. ``pre-kip112`` is the broker before KIP-112 (Kafka before 1.0): a log dir's I/O error stops the broker
(KIP-112, Motivation, problem 1), which creates any replica it lacks once it runs again.
"""
from __future__ import annotations


from model.zk.assignment import LIVE_BROKER_ASSIGNMENT
from model.storage.broker import has_offline_dir
from model.zk.design_draft import DRAFT, DRAFT_DELETION
from model.zk.design_kip18 import KIP18
from model.zk.design_kip46 import HALTING_BROKER, KIP46
from model.spec.errors import ConfigError
from model.spec.feature import Design, Feature
from model.zk.rules import CORE
from model.storage.rules_data import DATA
from model.zk.rules_deletion import DELETION, REPLICA_DELETION
from model.zk.rules_reassignment import REASSIGNMENT, REASSIGNMENT_KAFKA_2_7
from model.storage.rules_space import SATURATION

KIP112_CREATE = Feature(
    "kip112-create",
    "KIP-112's broker: a missing log is created only for isNewReplica=true or while no log dir is offline",
    hooks={"may_create_log": lambda broker, is_new: is_new or not has_offline_dir(broker)},
)
# KIP-112's goal, which its core DirFail keeps (the broker before it, HALTING_BROKER, does not): claimed by the
# adopted design; `jbodcheck compare` judges every design by it (invariants/zk/designs.py PORTABLE).

# The feature keeps its name (reports and plugins name it); the design that has it instead of kip112-create is
# kip112-no-isnew-check, and the broker before KIP-112 (pre-kip112, kip18, kip46) had no flag to check.
LEGACY_CREATE = Feature(
    "legacy-create",
    "No isNewReplica check (KIP-112 without it, and the broker before KIP-112): a missing log is always created "
    "(on a good dir)",
    hooks={"may_create_log": lambda broker, is_new: True},
)

_OPTIONAL = (DATA, SATURATION, DELETION, REPLICA_DELETION, REASSIGNMENT, REASSIGNMENT_KAFKA_2_7,
             LIVE_BROKER_ASSIGNMENT)

KIP112 = Design("kip112", "KIP-112 as adopted (isNewReplica, KAFKA_STORAGE_ERROR, offline_replicas)",
                (CORE, KIP112_CREATE, *_OPTIONAL))
KIP112_NO_ISNEW_CHECK = Design(
    "kip112-no-isnew-check", "KIP-112 without the isNewReplica check: the broker re-creates any replica it is asked "
    "for and lacks, while a dir is offline too", (CORE, LEGACY_CREATE, *_OPTIONAL))
LEGACY = KIP112_NO_ISNEW_CHECK      # the old name of the design (Python users)

# The broker before KIP-112 (Kafka 0.10/0.11): an I/O error in any log dir stops it, and it does not start with
# an unreadable log dir (model/zk/design_kip46.py HALTING_BROKER, the broker KIP-46 assumed); with no isNewReplica
# flag it creates any replica it lacks. The controller is the core's: it learns of the halt as of a crash.
PRE_KIP112 = Design("pre-kip112", "The broker before KIP-112: a log dir failure stops the whole broker, which "
                    "creates any replica it lacks once it runs again", (CORE, HALTING_BROKER, LEGACY_CREATE, *_OPTIONAL))

# KIP-112's draft (model/zk/design_draft.py): the controller's created list and the broker that creates a missing
# log only when asked to, over the same core and optional features.
KIP112_DRAFT = Design("kip112-draft", "KIP-112's draft: a created list per partition in ZooKeeper decides create=true",
                      (CORE, DRAFT, *_OPTIONAL, DRAFT_DELETION))

# KIP-18 (model/zk/design_kip18.py): /restart_partitions instead of KIP-112's notification and offline replicas,
# with the broker of its time (it creates any replica it lacks).
KIP18_DESIGN = Design("kip18", "KIP-18 (discarded): a failed dir's partitions are restarted via /restart_partitions",
                      (CORE, KIP18, LEGACY_CREATE, *_OPTIONAL))

# KIP-46 (model/zk/design_kip46.py): the broker of its time exits on a dir failure, and the controller moves a
# failed broker's replicas to other brokers (self-healing).
KIP46_DESIGN = Design("kip46", "KIP-46 (under discussion): a dir failure stops the broker, whose replicas the "
                      "controller moves to other brokers after failure_interval",
                      (CORE, HALTING_BROKER, LEGACY_CREATE, KIP46, *_OPTIONAL))

DESIGNS = {d.name: d for d in (KIP112, KIP112_NO_ISNEW_CHECK, PRE_KIP112, KIP112_DRAFT, KIP18_DESIGN, KIP46_DESIGN)}
# The names a configuration's variant may take (ModelConfig.variant).
VARIANTS = tuple(DESIGNS)
# Old variant names still accepted, with the same meaning: name -> the name to use. The CLI says so on stderr (one
# line); the configuration keeps the name given, so reports and saved scenarios do too.
DEPRECATED_VARIANTS = {"legacy": "kip112-no-isnew-check"}


def canonical_variant(variant: str) -> str:
    """The design's name for a variant name, old names included (``legacy`` -> ``kip112-no-isnew-check``)."""
    return DEPRECATED_VARIANTS.get(variant, variant)


def check_variant(cfg) -> None:
    """Raise ConfigError unless the configuration's variant names a design (old names included) that takes the
    configuration's features."""
    variant = canonical_variant(cfg.variant)
    if variant not in DESIGNS:
        raise ConfigError(f"unknown variant {cfg.variant!r} (known: {', '.join(VARIANTS)})")
    if cfg.reassignment and variant == "kip46":
        raise ConfigError("--reassignment is not supported with --variant kip46 (its self-healing reassigns "
                          "partitions itself)")


def deprecation_note(variant: str) -> str | None:
    """One line saying that a variant name is deprecated and what to use, or None for a current name."""
    new = DEPRECATED_VARIANTS.get(variant)
    if new is None:
        return None
    return (f"--variant {variant} is deprecated: use --variant {new} (the same design; {variant} keeps working "
            f"and reports keep the name given)")

