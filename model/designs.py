"""The designs jbodcheck models, each an ordered set of features (model/feature.py).

``kip112`` is KIP-112 as adopted: a broker asked with isNewReplica=false for a replica it does not hold, while
it has an offline log dir, refuses (LogManager.getOrCreateLog). ``legacy`` is the broker before KIP-112, which
had no isNewReplica flag and created any missing log. The two differ in one feature, as a TLA+ module that
EXTENDS a base and redefines one action; every other feature (the data path, KIP-928 saturation, deletion,
reassignment) composes with either, switched on by its option.
"""
from __future__ import annotations

from .broker import has_offline_dir
from .design_draft import DRAFT, DRAFT_DELETION
from .design_kip18 import KIP18
from .design_kip46 import HALTING_BROKER, KIP46
from .feature import Design, Feature
from .rules import CORE
from .rules_data import DATA
from .rules_deletion import DELETION, REPLICA_DELETION
from .rules_reassignment import REASSIGNMENT, REASSIGNMENT_KAFKA_2_7
from .rules_space import SATURATION

KIP112_CREATE = Feature(
    "kip112-create",
    "KIP-112's broker: a missing log is created only for isNewReplica=true or while no log dir is offline",
    hooks={"may_create_log": lambda broker, is_new: is_new or not has_offline_dir(broker)},
)

LEGACY_CREATE = Feature(
    "legacy-create",
    "The broker before KIP-112: no isNewReplica flag; a missing log is always created (on a good dir)",
    hooks={"may_create_log": lambda broker, is_new: True},
)

_OPTIONAL = (DATA, SATURATION, DELETION, REPLICA_DELETION, REASSIGNMENT, REASSIGNMENT_KAFKA_2_7)

KIP112 = Design("kip112", "KIP-112 as adopted (isNewReplica, KAFKA_STORAGE_ERROR, offline_replicas)",
                (CORE, KIP112_CREATE, *_OPTIONAL))
LEGACY = Design("legacy", "The broker before KIP-112: it re-creates any replica it is asked for and lacks",
                (CORE, LEGACY_CREATE, *_OPTIONAL))

# KIP-112's draft (model/design_draft.py): the controller's created list and the broker that creates a missing
# log only when asked to, over the same core and optional features.
KIP112_DRAFT = Design("kip112-draft", "KIP-112's draft: a created list per partition in ZooKeeper decides create=true",
                      (CORE, DRAFT, *_OPTIONAL, DRAFT_DELETION))

# KIP-18 (model/design_kip18.py): /restart_partitions instead of KIP-112's notification and offline replicas,
# with the broker of its time (it creates any replica it lacks).
KIP18_DESIGN = Design("kip18", "KIP-18 (discarded): a failed dir's partitions are restarted via /restart_partitions",
                      (CORE, KIP18, LEGACY_CREATE, *_OPTIONAL))

# KIP-46 (model/design_kip46.py): the broker of its time exits on a dir failure, and the controller moves a
# failed broker's replicas to other brokers (self-healing).
KIP46_DESIGN = Design("kip46", "KIP-46 (under discussion): a dir failure stops the broker, whose replicas the "
                      "controller moves to other brokers after failure_interval",
                      (CORE, HALTING_BROKER, LEGACY_CREATE, KIP46, *_OPTIONAL))

DESIGNS = {d.name: d for d in (KIP112, LEGACY, KIP112_DRAFT, KIP18_DESIGN, KIP46_DESIGN)}


def design_of(variant: str) -> Design:
    return DESIGNS[variant]


def catalog() -> tuple[Feature, ...]:
    """Every feature of every design, once, in design order (the CLI's options, the presets, `invariants`)."""
    out: list[Feature] = []
    for design in DESIGNS.values():
        for f in design.features:
            if f not in out:
                out.append(f)
    return tuple(out)
