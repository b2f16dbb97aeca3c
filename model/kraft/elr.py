"""Eligible Leader Replicas (KIP-966) on KRaft: the feature ``kraft-elr`` (docs/kraft.md, "Eligible Leader
Replicas").

The ELR rules themselves are PartitionChangeBuilder's and live where every election is, in
model/kraft/controller.py ``partition_change`` (maybePopulateTargetElr, the election order ISR, ELR, last known
leader, maybeUpdateRecordElr, maybeUpdateLastKnownLeader) and ``broker_shutdown`` (handleBrokerShutdown at a
registration); they read the model's ELR flag (model/kraft/release.py ``elr_on``). This feature adds what ELR
needs beside them: the clean/unclean shutdown distinction a registration reads.

- ``LogManager.shutdown`` (every stop but a crash: BrokerServer.shutdown) writes the clean shutdown file, with
  the broker epoch, into each live dir whose logs it loaded (the hook ``clean_stop``: the broker fields
  ``clean_epoch`` and ``clean_marks``, durable);
- at start-up ``LogManager.readBrokerEpochFromCleanShutdownFiles`` gives the previous broker epoch only if every
  configured dir is live and holds the file with one epoch, else none (``BrokerRestart``, replaced: the files are
  read, and gone: the model deletes them at start rather than at log loading); a replaced disk holds none
  (``ReplaceDisk``, replaced);
- ``ClusterControlManager.registerBroker``: the shutdown was clean iff that epoch is the epoch of the registration
  the controller holds (the hook ``clean_shutdown``); kraft-core's ``BrokerRegister`` then writes
  ``handleBrokerShutdown``'s records (controller.broker_shutdown).

The feature is on when ELR is: Kafka 4.1 or later (the default) unless ``--option elr=false``, or 4.0 with
``--option elr=true``.
"""
from __future__ import annotations

import attrs

from model.kraft import release
from model.kraft import rules as core
from model.spec.feature import Feature
from model.spec.schema import Field, Show
from model.storage.common import set_broker
from model.storage.faults import RESTART_READS, RESTART_WRITES
from model.storage.state import LIVE_DIR, REMOVED, State

NO_EPOCH = -1  # no clean shutdown file (BrokerRegistrationRequest.PreviousBrokerEpoch -1)

FIELDS = (
    Field("clean_epoch", "brokers", lambda m: NO_EPOCH, after="acked_dirs", show=Show("clean_shutdown_epoch"),
          doc="the broker epoch of the clean shutdown files (LogManager.shutdown), -1 if none; at start-up the "
              "previous broker epoch the registration sends (readBrokerEpochFromCleanShutdownFiles), -1 unless "
              "every configured dir was live and held the file"),
    Field("clean_marks", "brokers", lambda m: 0, after="clean_epoch", index="index-mask",
          show=Show("clean_shutdown_files", "bits"),
          doc="bitmask of the dirs holding a clean shutdown file (written at a shutdown, read at the next start)"),
)


def clean_stop(m, s, broker) -> State:
    """LogManager.shutdown(brokerEpoch): the clean shutdown file, with the broker epoch
    (lifecycleManager.brokerEpoch: this incarnation's registration, -1 if it has none), in every live dir whose
    logs were loaded (hadCleanShutdownFlags or loadLogsCompletedFlags: the model's ``loaded``); a broker that
    never loaded writes none."""
    b = s.brokers[broker]
    if not b.loaded:
        return s
    epoch = s.controller.registrations[broker].epoch if b.registered else NO_EPOCH
    marks = sum(1 << d for d, status in enumerate(b.dirs) if LIVE_DIR[status])
    return set_broker(s, broker, b._replace(clean_epoch=epoch, clean_marks=marks))


def clean_shutdown(m, s, broker) -> bool:
    """ClusterControlManager.registerBroker: isCleanShutdown = the stored registration's broker epoch equals the
    request's previous broker epoch (-2 when there is no registration: never equal)."""
    reg = s.controller.registrations[broker]
    previous = s.brokers[broker].clean_epoch
    return reg is not None and previous != NO_EPOCH and reg.epoch == previous


def _previous_epoch(broker) -> int:
    """LogManager.readBrokerEpochFromCleanShutdownFiles at start-up: the files' broker epoch if every configured dir
    (not removed from log.dirs) is live and holds one, else -1 (the model writes one epoch to every file)."""
    configured = [d for d, status in enumerate(broker.dirs) if status != REMOVED]
    if all(LIVE_DIR[broker.dirs[d]] and broker.clean_marks >> d & 1 for d in configured):
        return broker.clean_epoch
    return NO_EPOCH


def _restart_effect(effect):
    def restart(m, s, broker):
        s = effect(m, s, broker)
        b = s.brokers[broker]
        return set_broker(s, broker, b._replace(clean_epoch=_previous_epoch(b), clean_marks=0))
    restart.__doc__ = (effect.__doc__ or "") + (" It reads the clean shutdown files of its dirs (the previous "
                                                "broker epoch its registration sends) and deletes them.")
    return restart


def _replace_disk_effect(effect):
    def replace(m, s, broker, dir):
        s = effect(m, s, broker, dir)
        b = s.brokers[broker]
        return set_broker(s, broker, b._replace(clean_marks=b.clean_marks & ~(1 << dir)))
    replace.__doc__ = (effect.__doc__ or "") + " The new disk holds no clean shutdown file."
    return replace


def _after_registration(effect):
    """kraft-core's BrokerRegister: the previous broker epoch is sent once, with the incarnation's registration."""
    def register(m, s, broker):
        s = effect(m, s, broker)
        return set_broker(s, broker, s.brokers[broker]._replace(clean_epoch=NO_EPOCH))
    register.__doc__ = effect.__doc__
    return register


def _rule(name):
    return next(r for r in core.KRAFT.rules if r.name == name)


_MARKS = ("broker[broker].clean_epoch", "broker[broker].clean_marks")

ELR = Feature(
    "kraft-elr",
    "Eligible Leader Replicas (KIP-966): the ELR and LastKnownElr of partitions, elections from the ISR, then the "
    "ELR, then the last known leader, the clean shutdown files and the unclean-shutdown removal at registration",
    enabled=release.elr_on,
    requires=(core.KRAFT,),
    fields=FIELDS,
    hooks={"clean_stop": clean_stop, "clean_shutdown": clean_shutdown},
)

_RESTART, _REPLACE, _REGISTER = _rule("BrokerRestart"), _rule("ReplaceDisk"), _rule("BrokerRegister")
ELR.replaces["BrokerRestart"] = attrs.evolve(
    _RESTART, effect=_restart_effect(_RESTART.effect), reads=RESTART_READS + _MARKS,
    writes=RESTART_WRITES + _MARKS,
    doc=_RESTART.doc + " It reads the clean shutdown files of its dirs (the previous broker epoch its registration "
    "sends) and deletes them.",
    reference=_RESTART.reference + "; LogManager.readBrokerEpochFromCleanShutdownFiles (KIP-966)")
ELR.replaces["ReplaceDisk"] = attrs.evolve(
    _REPLACE, effect=_replace_disk_effect(_REPLACE.effect), reads=_REPLACE.reads + _MARKS,
    writes=_REPLACE.writes + _MARKS, doc=" ".join(_replace_disk_effect(_REPLACE.effect).__doc__.split()))
ELR.replaces["BrokerRegister"] = attrs.evolve(
    _REGISTER, effect=_after_registration(_REGISTER.effect),
    reads=_REGISTER.reads + _MARKS, writes=_REGISTER.writes + ("broker[broker].clean_epoch",),
    reference=_REGISTER.reference + "; ReplicationControlManager.handleBrokerShutdown (isCleanShutdown)")


# kraft-tiny's cluster and bounds with min ISR 2: a broker that leaves the ISR joins the ELR (with min ISR 1, as in the
# other KRaft presets, the ELR fills only when the ISR empties).
ELR.presets["kraft-elr"] = (
    "KRaft with ELR (KIP-966): 2 brokers x 2 dirs, 1 partition, RF 2, min ISR 2; one record, a consumer; a dir "
    "failure, a crash, a restart, at most one fault, no repair",
    dict(variant="kraft", brokers=2, dirs=2, partitions=1, rf=2, min_isr=2, max_records=1, consumer=True,
         max_dir_failures=1, max_saturations=0, max_crashes=1, max_restarts=1, max_fixes=0, max_failovers=0,
         max_faults=1))
