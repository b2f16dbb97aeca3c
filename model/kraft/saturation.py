"""KIP-928 (log dirs becoming full) on KRaft (issue 31; docs/kraft.md, "KIP-928 saturation on KRaft"): the feature
``kraft-saturation``, on with ``--saturation`` as in ZooKeeper mode. KIP-928 has no Kafka code; its text describes
ZooKeeper mode and says the functionality "will be easily implementable once KIP-858 is code-complete". The model
reads it onto KIP-858's mechanisms:

- storage's rules are the KIP's (model/storage/rules_space.py: ``Write``, ``DirSaturate``, ``Retention``): a write
  that finds its dir full saturates it, its replicas are no longer led or fetched, retention and deletion go on;
- the broker tells the controller through "the same node as the current state", the failure notification: under
  KRaft the heartbeat's ``OfflineLogDirs`` (``BrokerLifecycleManager.propagateDirectoryFailure``), handled by
  ``ReplicationControlManager.handleDirectoriesOffline`` as for a failed dir ("Notification mechanism -
  Zookeeper/KRaft Controller": no change): the ``dir_event`` hook below;
- a replica whose log is on a saturated dir is not served when a delta names it (model/kraft/replica_manager.py
  ``apply_local``), no new log is created in a saturated dir (gate 3 takes good dirs only), and a deleted topic's
  log on a saturated dir is deleted (``stop_and_delete``), one on a failed dir is not;
- a saturated dir is good again only after its broker restarts and registers it again: KRaft has no message that
  brings a dir back online (BrokerHeartbeatRequest carries ``OfflineLogDirs`` only; a registration's ``LogDirs``
  replace the old ones), so ``--saturation-recovery restart`` is the only recovery (the others are ZooKeeper
  mode's: explorer/catalog.py refuses them with ``--variant kraft``).

kraft-core's model is unchanged without the feature (``--saturation`` off: none of its states has a saturated dir).
"""
from __future__ import annotations

from model.kraft import rules as R
from model.kraft.rules import KRAFT
from model.spec.feature import Feature
from model.storage.common import set_broker
from model.storage.mode import declares
from model.storage.rules_space import SATURATION
from model.storage.state import SATURATED

KRAFT_SATURATION = Feature(
    "kraft-saturation",
    "KIP-928 on KRaft: a saturated dir is reported as a failed one (heartbeat OfflineLogDirs, "
    "handleDirectoriesOffline), its replicas are not served, deletion and retention go on, no new log goes there; "
    "back only by a restart",
    enabled=lambda cfg: cfg.saturation,
    requires=(KRAFT, SATURATION),
    config_fields=(),  # --saturation, --dir-capacity, --reserved-file, --saturation-recovery: storage's feature's
)


def saturated_dirs(broker) -> int:
    """The bitmask of the broker's saturated dirs."""
    return sum(1 << d for d, status in enumerate(broker.dirs) if status == SATURATED)


@declares(reads=("broker[broker].failed", "broker[broker].dirs"), writes=("broker[broker].failed",))
def dir_event(m, s, broker, dir=None):
    """kraft-core's dir_event for a failed dir; for KIP-928's saturation (storage's DirSaturate passes no dir) the
    broker's saturated dirs join the offline dirs every later heartbeat carries, as a failed dir's does
    (BrokerLifecycleManager.propagateDirectoryFailure: KIP-928's "the same node as the current state")."""
    if dir is not None:
        return R.dir_event(m, s, broker, dir=dir)
    b = s.brokers[broker]
    return set_broker(s, broker, b._replace(failed=b.failed | saturated_dirs(b)))


# Storage's Write and Retention range over storage's default ``space_brokers``, the constant ``assignments``: with
# kraft-reassignment it holds the brokers the reassignment adds (model/kraft/reassignment.py ``replica_slots``).
KRAFT_SATURATION.hooks.update({"dir_event": dir_event})


def refusal(cfg, features: set) -> str | None:
    """Why a KRaft configuration with --saturation is not modelled (one line), or None."""
    if not cfg.saturation:
        return None
    if cfg.saturation_recovery != "restart":
        return (f"--saturation-recovery {cfg.saturation_recovery} is ZooKeeper mode's (a KRaft broker has no way to "
                "report a dir back online but a restart): use --saturation-recovery restart with --variant kraft "
                "(docs/kraft.md)")
    if not cfg.deletion_waits_for_response:
        return ("--deletion-fails-offline-replicas is ZooKeeper mode's StopReplica handling: it has no meaning with "
                "--variant kraft (docs/kraft.md)")
    if "kraft-future" in features:
        return ("--saturation with kraft-future (intra-broker moves) is not modelled yet: a -future log takes no "
                "space (docs/kraft.md)")
    return None


# Every rule of the configuration fires (DirRecover is not in it: recovery is by restart only). One partition on
# two brokers (RF 2), no record: the saturation of the leader's dir moves leadership as a failure does.
KRAFT_SATURATION.presets.update({
    "kraft-saturation": ("KRaft with KIP-928: 2 brokers x 2 dirs, 1 partition, RF 2, no record; 2 units a dir (the "
                         "reserved file takes one); a saturation, a crash, a restart, at most two faults",
                         dict(variant="kraft", brokers=2, dirs=2, partitions=1, rf=2, saturation=True,
                              dir_capacity=2, saturation_recovery="restart", max_dir_failures=0, max_saturations=1,
                              max_crashes=1, max_restarts=1, max_fixes=0, max_failovers=0, max_faults=2,
                              max_records=0, consumer=False)),
})
