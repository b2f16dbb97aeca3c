"""KIP-18 (discarded) as a design (docs/model.md, section 12.2): the broker catches the storage error, takes the
dir offline, drops the partitions it held there (out of ReplicaManager's pool and LogManager) and asks the
controller to "restart" them by writing them under one /restart_partitions znode; the controller restarts
them as if their broker had shut down for them alone (RestartedPartitionsLeaderSelector: the broker leaves the
ISR, a new leader if it led, LeaderAndIsr to every broker) and deletes the entries it handled. The broker, as
Kafka then did, creates any replica it is asked for and lacks (``legacy-create``'s ``may_create_log``).

The znode is written by a read-modify-write of several brokers (the KIP: "brokers may update /restart_partitions
znode simultaneously ... It should be investigated what's the better solution"), modelled as two steps, a read
and a write, that brokers interleave: a write based on a stale read loses another broker's entries.
"""
from __future__ import annotations


from model.storage import broker as B
from model.storage.common import broker_dirs, brokers, bounded, set_broker, spend
from model.storage.config import ONE_OF_EACH
from model.zk.controller import ControllerStep
from model.zk.footprints import CONTROLLER_STEP_APPENDS, CONTROLLER_STEP_READS, CONTROLLER_STEP_WRITES
from model.spec.feature import Feature, StateField
from model.storage.faults import broker_crash, broker_crash_guard, dir_fail_guard
from model.storage.state import B_CRASHES, B_DIR_FAILURES, D_NONE, H_NONE, H_OFFLINE, NO_LEADER

SLOT = 16  # an entry (partition p, broker b) is bit p * SLOT + b


def _entries(mask: int, partitions: int, brokers_: int):
    return [(p, b) for p in range(partitions) for b in range(brokers_) if mask >> (p * SLOT + b) & 1]


def _reads(m, s) -> dict:
    return dict(m.ext(s, "restart_reads"))


def _render(m, s) -> dict:
    c = m.cfg
    return {
        "restart_partitions": [[p, b] for p, b in _entries(m.ext(s, "restart_znode"), c.partitions, c.brokers)],
        "restart_to_write": [[p, b] for p, b in _entries(m.ext(s, "restart_unwritten"), c.partitions, c.brokers)],
        "restart_reads": {str(b): [[p, x] for p, x in _entries(v, c.partitions, c.brokers)]
                          for b, v in m.ext(s, "restart_reads")},
    }


KIP18 = Feature(
    "kip18-restart-partitions",
    "KIP-18 (discarded): the broker drops a failed dir's partitions and writes them under /restart_partitions "
    "(read-modify-write); the controller restarts them as if their broker had shut down for them",
    state_fields=(
        StateField("restart_znode", 0, "/restart_partitions: bit p*16+b for partition p to restart on broker b.",
                   pending=True),
        StateField("restart_unwritten", 0, "Entries a running broker dropped and has not yet written (in memory).",
                   pending=True),
        StateField("restart_reads", (), "Per broker in the middle of its read-modify-write: (broker, the znode's "
                   "value it read).", pending=True),
    ),
    render=_render,
)


def _forget_broker(m, s, broker):
    """A broker that stops loses what it had not yet written (its memory)."""
    mask = sum(1 << (p * SLOT + broker) for p in range(m.cfg.partitions))
    unwritten = m.ext(s, "restart_unwritten")
    reads = tuple((b, v) for b, v in m.ext(s, "restart_reads") if b != broker)
    if unwritten & mask or reads != m.ext(s, "restart_reads"):
        s = m.with_ext(s, restart_unwritten=unwritten & ~mask, restart_reads=reads)
    return s


@KIP18.rule("DirFail",
      guard_reads=("broker[broker].dirs", "budget"), reads=("broker[broker]", "notifications", "budget", "ext.restart_unwritten", "ext.restart_reads"),
      writes=("broker[broker]", "notifications", "budget", "ext.restart_unwritten", "ext.restart_reads"),
      spends=B_DIR_FAILURES,
      params=("broker", "dir"), domain=bounded(broker_dirs, "max_dir_failures"),
            guard=dir_fail_guard, kind="environment", replaces="DirFail",
            reference="KIP-18, Implementation Details, IO Errors 2.1-2.4 (ExceptionHandler)")
def kip18_dir_fail(m, s, broker, dir):
    """A log dir fails. On a running broker the exception handler takes the dir offline and drops the
    partitions it held there (removed from ReplicaManager's pool and LogManager: no longer hosted, so a later
    LeaderAndIsr re-creates them on a good dir) and will notify the controller (/restart_partitions); with no
    live dir left it halts. On a broker that is down the dir is simply offline when it starts again."""
    before = s.brokers[broker]
    new, running = B.fail_dir(m, before, dir)
    s = set_broker(s, broker, new, budget=spend(s, B_DIR_FAILURES))
    if not running:
        return _forget_broker(m, s, broker) if before.up else s
    dropped = [p for p, h in enumerate(new.hosted) if h == H_OFFLINE and before.hosted[p] != H_OFFLINE]
    hosted = tuple(H_NONE if p in dropped else h for p, h in enumerate(new.hosted))
    epoch = tuple(-1 if p in dropped else e for p, e in enumerate(new.epoch))
    s = set_broker(s, broker, new._replace(hosted=hosted, epoch=epoch))
    if not dropped:
        return s
    add = sum(1 << (p * SLOT + broker) for p in dropped)
    return m.with_ext(s, restart_unwritten=m.ext(s, "restart_unwritten") | add)


@KIP18.rule("BrokerCrash",
      guard_reads=("broker[broker].up", "budget"), reads=("broker[broker]", "budget", "ext.restart_unwritten", "ext.restart_reads"),
      writes=("broker[broker]", "budget", "ext.restart_unwritten", "ext.restart_reads"),
      spends=B_CRASHES,
      params=("broker",), domain=bounded(brokers, "max_crashes"),
            guard=broker_crash_guard,
            kind="environment", replaces="BrokerCrash",
            reference="KIP-112 test plan 1 (kill the leader); a KIP-18 broker's pending notification is in memory")
def kip18_broker_crash(m, s, broker):
    """As the core's BrokerCrash, and the broker's unwritten /restart_partitions entries (and a read it was about
    to write back) are lost with its memory."""
    return _forget_broker(m, broker_crash(m, s, broker), broker)


def _writing(m, s, broker) -> bool:
    return any(b == broker for b, _ in m.ext(s, "restart_reads"))


def _mine(m, broker) -> int:
    return sum(1 << (p * SLOT + broker) for p in range(m.cfg.partitions))


def _guard_read(m, s, broker):
    if not s.brokers[broker].up:
        return f"broker {broker} is down"
    if not m.ext(s, "restart_unwritten") & _mine(m, broker):
        return f"broker {broker} has no partition to restart"
    if _writing(m, s, broker):
        return f"broker {broker} has already read /restart_partitions"
    return None


def _if_dir_failures(m):
    return brokers(m) if m.cfg.max_dir_failures > 0 and m.cfg.max_faults > 0 else []


@KIP18.rule("BrokerReadRestartPartitions",
      reads=("broker[broker].up", "ext"), writes=("ext.restart_reads",),
      params=("broker",), domain=_if_dir_failures, guard=_guard_read,
            kind="broker", reference="KIP-18, Notifying Controller (/restart_partitions); the read of a "
                                     "read-modify-write (the KIP leaves concurrent updates open)")
def broker_read_restart_partitions(m, s, broker):
    """The broker reads /restart_partitions (the first half of its update)."""
    reads = tuple(sorted(m.ext(s, "restart_reads") + ((broker, m.ext(s, "restart_znode")),)))
    return m.with_ext(s, restart_reads=reads)


def _guard_write(m, s, broker):
    if not s.brokers[broker].up:
        return f"broker {broker} is down"
    if not _writing(m, s, broker):
        return f"broker {broker} has not read /restart_partitions"
    return None


@KIP18.rule("BrokerWriteRestartPartitions",
      reads=("broker[broker].up", "ext"), writes=("ext",),
      params=("broker",), domain=_if_dir_failures, guard=_guard_write,
            kind="broker", reference="KIP-18, Notifying Controller; Open questions 3 (/restart_partitions format: "
                                     "brokers may update it simultaneously)")
def broker_write_restart_partitions(m, s, broker):
    """The broker writes /restart_partitions: the value it read plus its own partitions (the second half of its
    update; an entry another broker or the controller changed since the read is overwritten)."""
    mine = m.ext(s, "restart_unwritten") & _mine(m, broker)
    read = _reads(m, s)[broker]
    reads = tuple((b, v) for b, v in m.ext(s, "restart_reads") if b != broker)
    return m.with_ext(s, restart_znode=read | mine, restart_unwritten=m.ext(s, "restart_unwritten") & ~mine,
                      restart_reads=reads)


def _guard_restart(m, s):
    if not m.ext(s, "restart_znode"):
        return "/restart_partitions is empty"
    return None


def _if_dir_failure(m):
    return [()] if m.cfg.max_dir_failures > 0 and m.cfg.max_faults > 0 else []


@KIP18.rule("ControllerRestartPartitions",
      guard_reads=("ext.restart_znode",), reads=CONTROLLER_STEP_READS + ("ext",), writes=CONTROLLER_STEP_WRITES + ("ext.restart_znode",), appends=CONTROLLER_STEP_APPENDS,
      needs_message=True,
      params=(), domain=_if_dir_failure, guard=_guard_restart,
            kind="controller", replaces="ControllerLogDirEvent",
            reference="KIP-18, Partitions Restart and Restarted Partition Leader Selector")
def controller_restart_partitions(m, s):
    """The controller reads /restart_partitions and, per partition (those being deleted are left out), acts as
    if each broker named had shut down for it alone, with the procedures it runs for a broker failure: the
    replica goes OfflineReplica (StopReplica to the broker, removal from the ISR but for the last member,
    LeaderAndIsr to the others); a partition left without a leader goes Offline and gets one by the offline
    election (a live ISR member, the restarted broker too if it is the last); then the replica goes
    OnlineReplica again (LeaderAndIsr with isNewReplica=false to the broker, which creates it again on a good
    dir), with UpdateMetadata to every broker. Then it deletes the entries it handled (the znode is emptied)."""
    c = m.cfg
    step = ControllerStep(m, s)
    by_partition: dict = {}
    for p, b in _entries(m.ext(s, "restart_znode"), c.partitions, c.brokers):
        by_partition.setdefault(p, []).append(b)
    for p, restarted in by_partition.items():
        if not step.has_leadership_record(p) or step.deletion[p] != D_NONE:
            continue
        slots = m.assignments[p]
        replicas = [(p, slots.index(b)) for b in restarted if b in step.assigned[p]]
        step.replicas_to_offline(replicas)
        part = step.partitions[p]
        if part.leader == NO_LEADER or not step.is_replica_online(part.leader, p):
            step.partitions_to_offline([p])
            step.trigger_online_partition_state_change([p])
        step.replicas_to_online(replicas)
    step.add_update_metadata(range(c.partitions))
    step.flush()
    return m.with_ext(step.finish(), restart_znode=0)


KIP18.presets["kip18-lost-update"] = (
    "KIP-18's concurrent /restart_partitions updates (variant kip18): 2 brokers x 2 dirs, 2 partitions, RF 2; no records; a dir "
    "failure on each broker, a crash and a restart; at most three faults",
    dict(variant="kip18", brokers=2, dirs=2, partitions=2, rf=2, max_records=0, consumer=False,
         **{**ONE_OF_EACH, "max_dir_failures": 2, "max_fixes": 0, "max_failovers": 0, "max_saturations": 0,
            "max_faults": 3}))
