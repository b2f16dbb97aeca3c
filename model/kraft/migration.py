"""The feature ``kraft-mv-upgrade`` (docs/kraft.md, "The metadata.version upgrade"): a cluster that ran at a
metadata.version before 3.7-IV2, where brokers register without their log dirs, upgraded to 3.7-IV2 (directory
assignment, JBOD) while it runs; then each broker re-registers its dirs. Enabled by the option ``mv_upgrade``
(``--option mv_upgrade=true``; preset ``kraft-mv-upgrade``).

Before 3.7-IV2 a broker has one log dir (KafkaConfig.validateWithMetadataVersion refuses more), registers no
LogDirs, partitions' Directories read MIGRATING (ReplicationControlManager's ClusterDescriber.defaultDir) and no
AssignReplicasToDirs is sent (ReplicaManager.applyDelta). KAFKA-16162 (before 3.7.0) and KAFKA-16757 (before
3.7.1) re-introduce the older code of this path (model/kraft/bugs.py).
"""
from __future__ import annotations

from model.kraft.bugs import bugs
from model.kraft.controller import register
from model.kraft.disks import live_dir_ids
from model.kraft.metadata import K_BROKER_CHANGE, K_FEATURE_LEVEL, MV_UPGRADE_OPTION, BrokerChange, FeatureLevel, image_of
from model.kraft.rules import (
    CONTROLLER_EVENT, KRAFT, broker_image, broker_register, register_broker, register_guard, write,
)
from model.spec.errors import ConfigError
from model.spec.feature import Feature, Option
from model.storage.common import brokers, nothing


def _one_dir_per_broker(m) -> bool:
    """KafkaConfig.validateWithMetadataVersion: more than one log dir needs metadata.version 3.7-IV2."""
    if MV_UPGRADE.enabled(m.cfg) and m.cfg.dirs != 1:
        raise ConfigError(f"--option {MV_UPGRADE_OPTION}=true starts before metadata.version 3.7-IV2, where a broker "
                          f"has one log dir (JBOD needs 3.7-IV2): --dirs must be 1, not {m.cfg.dirs}")
    return True


def _check(value) -> str | None:
    return None if value is True else f"{MV_UPGRADE_OPTION} is true or left out, not {value!r}"


def _quiescent(m, s) -> bool:
    """No re-registration is due: BrokerRegistrationTracker sends one as soon as the broker's published image is
    at 3.7-IV2 and shows its registration without dirs, so until then something is pending."""
    return all(reregister_guard(m, s, b) is not None for b in range(len(s.brokers)))


MV_UPGRADE = Feature(
    "kraft-mv-upgrade",
    "A KRaft cluster from before metadata.version 3.7-IV2 (one dir per broker, registrations without dirs) "
    "upgraded to 3.7-IV2 while it runs, and the brokers' re-registration with their dirs",
    enabled=lambda cfg: bool(dict(cfg.options).get(MV_UPGRADE_OPTION)),
    requires=(KRAFT,),
    options=(Option(MV_UPGRADE_OPTION, False, "Start before metadata.version 3.7-IV2 and upgrade (KRaft)", _check),),
    constants={"one_dir_per_broker": _one_dir_per_broker},
    quiescent=_quiescent,
)


def controller_jbod(m, s) -> bool:
    """The controller's metadata.version supports directory assignment (the image of its whole log)."""
    return image_of(m, s.controller.log).jbod


def upgrade_guard(m, s):
    if controller_jbod(m, s):
        return "metadata.version is 3.7-IV2 already"
    return None


@MV_UPGRADE.rule("UpgradeMetadataVersion",
      reads=CONTROLLER_EVENT, writes=CONTROLLER_EVENT,
      params=(), domain=nothing, guard=upgrade_guard, kind="environment", fair=False,
      reference="kafka-features.sh upgrade; QuorumController.updateFeatures; FeatureControlManager.updateFeatures "
                "(FeatureLevelRecord metadata.version 3.7-IV2)")
def upgrade_metadata_version(m, s):
    """The operator upgrades metadata.version to 3.7-IV2: one FeatureLevelRecord. The registrations keep their
    empty dir lists until each broker re-registers."""
    return write(m, s, [FeatureLevel(K_FEATURE_LEVEL, True)])


@MV_UPGRADE.rule("BrokerRegister", replaces="BrokerRegister",
      reads=("broker[broker]", *CONTROLLER_EVENT), writes=("broker[broker].registered", *CONTROLLER_EVENT),
      params=("broker",), domain=brokers, guard=register_guard, kind="controller",
      reference="BrokerLifecycleManager.sendBrokerRegistration; ClusterControlManager.registerBroker "
                "(no LogDirs before metadata.version 3.7-IV2)")
def broker_register_any_version(m, s, broker):
    """A started broker registers (as kraft-core's BrokerRegister); before metadata.version 3.7-IV2 the
    controller's RegisterBrokerRecord keeps no LogDirs."""
    if controller_jbod(m, s):
        return broker_register(m, s, broker)
    return register_broker(m, s, broker, ())


def reregister_guard(m, s, broker):
    b = s.brokers[broker]
    if not b.up or not b.registered or not b.loaded:
        return f"broker {broker} is not running registered with its image loaded"
    if "KAFKA-16162" in bugs(m):
        return "before KAFKA-16162's fix a broker never re-registered after the upgrade"
    image = broker_image(m, s, broker)
    if not image.jbod:
        return f"broker {broker}'s image is before metadata.version 3.7-IV2"
    if image.registrations[broker].dirs or s.controller.registrations[broker].dirs:
        return f"broker {broker}'s registration has its dirs"
    return None


@MV_UPGRADE.rule("BrokerReregister",
      reads=("broker[broker]", *CONTROLLER_EVENT), writes=CONTROLLER_EVENT,
      params=("broker",), domain=brokers, guard=reregister_guard, kind="controller",
      reference="BrokerRegistrationTracker.onMetadataUpdate; BrokerLifecycleManager.resendBrokerRegistration; "
                "ClusterControlManager.registerBroker (the same incarnation: amended)")
def broker_reregister(m, s, broker):
    """A broker whose published image is at 3.7-IV2 and shows its own registration without dirs registers again,
    the same incarnation, with the dirs it can read. The controller amends the registration: the dirs replace the
    empty list, its broker epoch and fencing stay (written here as a BrokerRegistrationChangeRecord with the dirs:
    the same image). With KAFKA-16757 (3.7.0) the amended registration does not keep the old one's state: a
    RegisterBrokerRecord with the record's defaults, fenced and not in controlled shutdown, and a new broker epoch
    (3.7.0 set neither setFenced(existing.fenced()) nor, KAFKA-16952, setBrokerEpoch(existing.epoch())). The
    incarnation is the same, so no shutdown records come first: 3.7.0's registerBroker writes none (its unclean
    shutdown branch is a TODO(KIP-966)), and from 4.0 registerBroker calls handleBrokerShutdown only for a new
    incarnation ID; so the fenced broker keeps its leaderships at every release (the bug back-ported to 4.x as
    its code reads: docs/kraft.md, "The metadata.version upgrade")."""
    b = s.brokers[broker]
    dirs = live_dir_ids(b)
    if "KAFKA-16757" in bugs(m):
        return write(m, s, [register(broker, dirs)])
    return write(m, s, [BrokerChange(K_BROKER_CHANGE, broker, None, dirs)])


_PRESET = dict(variant="kraft", brokers=2, dirs=1, partitions=1, rf=2, max_dir_failures=1, max_saturations=0,
               max_crashes=1, max_restarts=1, max_fixes=1, max_failovers=0, max_records=0, consumer=False,
               max_faults=1, options={MV_UPGRADE_OPTION: True})
MV_UPGRADE.presets["kraft-mv-upgrade"] = (
    "KRaft from before metadata.version 3.7-IV2, upgraded: 2 brokers x 1 dir, 1 partition, RF 2, no record; a dir "
    "failure, a crash, a restart, a repair, at most one fault", _PRESET)
