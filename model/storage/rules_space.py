"""KIP-928's disk space: writes fill a dir, a write that finds no space saturates it, retention frees space.

The saturation feature, included with --saturation (docs/model.md, section 6.4). Space is counted in abstract units:
a unit is a segment's worth of data; the reserved file takes one unit of every dir.
"""
from __future__ import annotations


from model.storage import broker as B
from model.storage.config import ONE_OF_EACH, SATURATION_RECOVERIES

from model.spec.feature import Feature, Flag
from model.storage.common import broker_dirs, bounded, budget_left, set_broker, spend
from model.storage.mode import DIR_EVENT_READS, DIR_EVENT_WRITES
from model.storage.schema import SATURATION_CONSTANTS, SATURATION_FIELDS
from model.storage.state import B_SATURATIONS, GOOD, SATURATED, SERVING

SATURATION = Feature(
    "saturation",
    "KIP-928: a full log dir is saturated rather than offline; disk space in units, writes, retention, the "
    "reserved space-of-last-resort file, recovery",
    enabled=lambda cfg: cfg.saturation,
    fields=SATURATION_FIELDS, constants=SATURATION_CONSTANTS,
    config_fields=("saturation", "dir_capacity", "reserved_file", "saturation_recovery",
                   "deletion_waits_for_response", "max_saturations"),
    flags=(
        Flag("saturation", "--saturation/--no-saturation",
             "KIP-928: a full dir is saturated, not offline; disk space, retention, reserved file."),
        Flag("dir_capacity", "--dir-capacity", "Units of space per log dir, with --saturation.", "int"),
        Flag("reserved_file", "--reserved-file/--no-reserved-file",
             "KIP-928's reserved space-of-last-resort file, one unit of every dir (default on)."),
        Flag("saturation_recovery", "--saturation-recovery",
             "How a saturated dir becomes good again: free-space (DirRecover; the controller re-elects and "
             "refreshes the metadata), restart only, or free-space-unchanged-controller (DirRecover with KIP-112's "
             "controller as it is).", "choice", choices=SATURATION_RECOVERIES),
        Flag("deletion_waits_for_response", "--deletion-waits-for-response/--deletion-fails-offline-replicas",
             "With --saturation: a replica whose deletion started waits for its StopReplica answer (default) or, "
             "as in Kafka, fails when found offline."),
    ),
    # A dir also has its units in use and its reserved file, and the guards compare them with the capacity:
    # the reduction's soundness argument (docs/model.md, section 10) does not cover them.
    dir_symmetry=lambda cfg: "KIP-928's disk space is not covered by the dir symmetry argument (section 10)",
    hooks={
        # KIP-928: StopReplica(delete=true) goes to every replica on a broker the controller reaches, whatever
        # it knows of the replica's dir: the broker answers for itself.
        "deletion_reaches": lambda step, broker, p: bool(step.live >> broker & 1),
        "reelect_on_recovery": lambda cfg: cfg.saturation_recovery == "free-space",
        "deletion_awaits_answer": lambda cfg: cfg.deletion_waits_for_response,
        # The brokers that may hold a replica of a partition (Write's and Retention's domain): the mode's constant
        # ``assignments``, which includes the brokers a reassignment may add (both modes).
        "space_brokers": lambda m, p: m.assignments[p],
    },
)


def _replicas(m):
    return [(b, p) for p in range(m.cfg.partitions) for b in m.hooks.space_brokers(m, p)]


def _recoverable_dirs(m):
    return broker_dirs(m) if m.cfg.saturation_recovery.startswith("free-space") else []


def _guard_write(m, s, broker, partition):
    b = s.brokers[broker]
    if not b.up or not SERVING[b.hosted[partition]]:
        return f"broker {broker} neither leads nor follows partition {partition}"
    d = B.live_copy_dir(b, partition)
    if d < 0 or b.dirs[d] != GOOD:
        return f"broker {broker}'s log of partition {partition} is not on a good dir"
    if b.used[d] >= m.cfg.dir_capacity:
        return f"dir {d} of broker {broker} is full (a write there fails: DirSaturate)"
    return None


@SATURATION.rule("Write",
      guard_reads=("broker[broker].up", "broker[broker].hosted", "broker[broker].copies", "broker[broker].dirs", "broker[broker].used"), reads=("broker[broker]",),
      writes=("broker[broker]",),
      params=("broker", "partition"), domain=_replicas, guard=_guard_write, kind="client",
      reference="KIP-928 (log dirs becoming full): traffic fills the dir; Log.roll")
def write(m, s, broker, partition):
    """Traffic to a replica the broker leads or follows (produce on a leader, replication on a follower) fills
    one more unit of its dir: the log grows by a segment. Only the space is modelled; the records the data path
    tracks are the newest and retention never reaches them."""
    b = s.brokers[broker]
    return set_broker(s, broker, B.resize_log(b, partition, b.segs[partition] + 1))


def _guard_dir_saturate(m, s, broker, dir):
    b = s.brokers[broker]
    if not b.up:
        return f"broker {broker} is down"
    if b.dirs[dir] != GOOD:
        return f"dir {dir} of broker {broker} is not good"
    if b.used[dir] < m.cfg.dir_capacity:
        return f"dir {dir} of broker {broker} has free space"
    if not any(d == dir for _, _, d in B.served_replicas(b)):
        return f"broker {broker} serves no replica on dir {dir}: nothing writes there"
    return budget_left(m, s, B_SATURATIONS)


@SATURATION.rule("DirSaturate",
      reads=("broker[broker]", *DIR_EVENT_READS, "budget"), writes=("broker[broker]", *DIR_EVENT_WRITES, "budget"),
      spends=B_SATURATIONS,
      params=("broker", "dir"), domain=bounded(broker_dirs, "max_saturations"),
      guard=_guard_dir_saturate, kind="environment",
      reference="KIP-928 Goal state (a write fails with no space left on device: the dir is saturated)")
def dir_saturate(m, s, broker, dir):
    """A write to a replica on a full good dir fails for lack of space. The dir becomes saturated (any other I/O
    error takes it offline instead: DirFail); the broker deletes its reserved file there, stops the fetchers of
    the replicas on it and stops leading them (they become saturated: retention and deletion still run), and
    writes a /log_dir_event_notification znode, as for a failed dir."""
    new = B.saturate_dir(s.brokers[broker], dir)
    return m.hooks.dir_event(m, set_broker(s, broker, new, budget=spend(s, B_SATURATIONS)), broker)


def _guard_retention(m, s, broker, partition):
    b = s.brokers[broker]
    if not b.up:
        return f"broker {broker} is down"
    d = B.live_copy_dir(b, partition)
    if d < 0:
        return f"broker {broker} has no live copy of partition {partition}"
    if b.segs[partition] == 0:
        return f"broker {broker}'s log of partition {partition} holds no segment to delete"
    if b.used[d] >= m.cfg.dir_capacity:
        return f"dir {d} of broker {broker} has no space to roll a new segment before deleting the old ones"
    return None


@SATURATION.rule("Retention",
      reads=("broker[broker]",), writes=("broker[broker]",),
      params=("broker", "partition"), domain=_replicas, guard=_guard_retention, kind="broker",
      reference="KIP-928 Goal state (retention continues on saturated dirs) and the reserved file; "
                "Log.deleteOldSegments (rolls a new segment before deleting them all)")
def retention(m, s, broker, partition):
    """Every segment of the log (on a good or saturated dir) is past retention: the broker rolls a new, empty
    active segment, which needs one free unit of the dir while it is created, then deletes the old segments,
    freeing their units. With no free unit the roll fails and nothing is freed (see the guard)."""
    return set_broker(s, broker, B.resize_log(s.brokers[broker], partition, 0))


def _guard_dir_recover(m, s, broker, dir):
    b = s.brokers[broker]
    if not b.up:
        return f"broker {broker} is down"
    if b.dirs[dir] != SATURATED:
        return f"dir {dir} of broker {broker} is not saturated"
    needed = 2 if m.reserves else 1
    if m.cfg.dir_capacity - b.used[dir] < needed:
        return (f"dir {dir} of broker {broker} has fewer than {needed} free units "
                f"({'the reserved file and ' if m.reserves else ''}a unit to write)")
    return None


@SATURATION.rule("DirRecover",
      reads=("broker[broker]", *DIR_EVENT_READS), writes=("broker[broker]", *DIR_EVENT_WRITES),
      params=("broker", "dir"), domain=_recoverable_dirs, guard=_guard_dir_recover,
      kind="broker", reference="KIP-928 (silent on recovery: the model's choice, --saturation-recovery free-space)")
def dir_recover(m, s, broker, dir):
    """Retention or deletion freed enough of a saturated dir: a unit for the reserved file (rewritten) and one to
    write. The dir is good again; its saturated replicas are no longer hosted (as after a restart), and the
    broker writes a /log_dir_event_notification znode so that the controller probes it with LeaderAndIsr and
    learns, from the answers without error, that they are online again."""
    new = B.recover_dir(s.brokers[broker], dir, m.reserves)
    return m.hooks.dir_event(m, set_broker(s, broker, new), broker)


SATURATION.presets["saturation"] = (
    "KIP-928: 2 brokers x 2 dirs, 1 partition, RF 2; 2 units a dir (the reserved file takes one); one record; one "
    "dir failure, saturation, crash, restart; at most two faults",
    dict(brokers=2, dirs=2, partitions=1, rf=2, saturation=True, dir_capacity=2, max_records=1, consumer=False,
         **{**ONE_OF_EACH, "max_failovers": 0, "max_fixes": 0}))
