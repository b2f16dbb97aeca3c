"""The environment's faults on a broker and what its disks keep: a log dir fails, the broker crashes and
restarts, a failed disk is replaced or its dir removed from the config (KIP-112 scenarios 2 to 4).

Every controller mode shares these rules: its core feature takes them as they are (``add_storage_rules``),
at the place its rule order has them. What a rule needs of the controller mode is a hook that the mode's
core provides (model/storage/mode.py: ``dir_event``, ``restart_blocked``).

Guards return None when the rule is enabled and otherwise a short reason; effects return the next state.
"""
from __future__ import annotations

import attrs

from model.spec.feature import Feature, Flag
from model.storage.footprints import FIX_DIR_GUARD_READS, FIX_DIR_READS, FIX_DIR_WRITES
from model.storage import broker as B
from model.storage.common import bounded, broker_dirs, brokers, budget_left, set_broker, spend
from model.storage.data import note_wiped
from model.storage.mode import DIR_EVENT_READS, DIR_EVENT_WRITES, REGISTRATION_READS, missing_hooks
from model.storage.state import (
    B_CRASHES, B_DIR_FAILURES, B_FIXES, B_RESTARTS, DIR_NAMES, GOOD, LIVE_DIR, OFFLINE, REMOVED, SATURATED,
    replace_at,
)



def dir_symmetry(cfg) -> str | None:
    """Whether a broker's log dirs are interchangeable (model/spec/symmetry.py), as far as storage decides."""
    if cfg.dirs < 2:
        return "a broker has one log dir: there is nothing to permute"
    if not (cfg.partitions == 1 or (cfg.dirs == 2 and cfg.partitions <= 2)):
        return ("LogManager's lowest-index tie-break can tell apart equally loaded dirs that hold different "
                "partitions (more than one partition, and more than two dirs or partitions)")
    return None


STORAGE = Feature(
    "storage",
    "Brokers with JBOD log dirs that fail, crash, restart and are repaired (KIP-112): the part of every "
    "controller mode's core that storage owns",
    config_fields=("brokers", "dirs", "partitions", "rf", "max_dir_failures", "max_crashes", "max_restarts",
                   "max_fixes", "max_faults"),
    flags=(
        Flag("brokers", "--brokers", "Brokers.", "int"),
        Flag("dirs", "--dirs", "Log dirs per broker.", "int"),
        Flag("partitions", "--partitions", "Partitions (one topic each).", "int"),
        Flag("rf", "--rf", "Replication factor.", "int"),
    ),
    dir_symmetry=dir_symmetry,
)


def dir_fail_guard(m, s, broker, dir):
    status = s.brokers[broker].dirs[dir]
    if not LIVE_DIR[status]:
        return f"dir {dir} of broker {broker} is {DIR_NAMES[status]}"
    return budget_left(m, s, B_DIR_FAILURES)


@STORAGE.rule("DirFail",
      guard_reads=("broker[broker].dirs", "budget"), reads=("broker[broker]", *DIR_EVENT_READS, "budget"),
      writes=("broker[broker]", *DIR_EVENT_WRITES, "budget"),
      spends=B_DIR_FAILURES,
      params=("broker", "dir"), domain=bounded(broker_dirs, "max_dir_failures"),
      guard=dir_fail_guard, kind="environment",
      reference="KIP-112 scenario 2 (a log directory stops working during runtime) and 3 (bad dir found at bootstrap)")
def dir_fail(m, s, broker, dir):
    """A log dir fails (any I/O error). On a running broker: the partitions it hosts on that dir are marked
    offline (their fetchers stop, they are no longer led), the dir leaves the live dirs, and the broker writes
    a /log_dir_event_notification znode; with no live dir left it halts instead. On a broker that is down the
    dir is simply offline when it starts again."""
    new, running = B.fail_dir(m, s.brokers[broker], dir)
    s = set_broker(s, broker, new, budget=spend(s, B_DIR_FAILURES))
    return m.hooks.dir_event(m, s, broker, dir=dir) if running else s


def broker_crash_guard(m, s, broker):
    if not s.brokers[broker].up:
        return f"broker {broker} is down"
    return budget_left(m, s, B_CRASHES)


@STORAGE.rule("BrokerCrash",
      guard_reads=("broker[broker].up", "budget"), reads=("broker[broker]", "budget"), writes=("broker[broker]", "budget"),
      spends=B_CRASHES,
      params=("broker",), domain=bounded(brokers, "max_crashes"), guard=broker_crash_guard,
      kind="environment",
      reference="KIP-112 test plan 1 (kill the leader); scenario 3 (broker bootstraps after a failure)")
def broker_crash(m, s, broker):
    """A running broker dies: its ZooKeeper registration goes, its in-memory state, unhandled requests and
    unsent responses are lost; its disks keep what they hold."""
    new = m.crashed(s.brokers[broker])
    return set_broker(s, broker, new, budget=spend(s, B_CRASHES))


def broker_restart_guard(m, s, broker):
    b = s.brokers[broker]
    if b.up:
        return f"broker {broker} is running"
    blocked = m.hooks.restart_blocked(m, s, broker)
    if blocked is not None:
        return blocked
    if not B.has_live_dir(b):
        return f"broker {broker} has no live (good or saturated) log dir and would exit at start-up"
    if m.reserves:
        for d, status in enumerate(b.dirs):
            if LIVE_DIR[status] and not b.reserved >> d & 1 and b.used[d] >= m.cfg.dir_capacity:
                return f"dir {d} of broker {broker} has no space for the reserved file: the broker would shut down"
    return budget_left(m, s, B_RESTARTS)


# What BrokerRestart reads and writes (a design's own restart declares the same).
RESTART_READS = ("broker[broker].up", "broker[broker].dirs", "broker[broker].used", "broker[broker].reserved",
                 *REGISTRATION_READS, "budget")
RESTART_WRITES = ("broker[broker].up", "broker[broker].dirs", "broker[broker].used", "broker[broker].reserved", "budget")


@STORAGE.rule("BrokerRestart",
      reads=RESTART_READS, writes=RESTART_WRITES,
      spends=B_RESTARTS,
      params=("broker",), domain=bounded(brokers, "max_restarts", fault=False),
      guard=broker_restart_guard, kind="environment",
      reference="KIP-112 scenario 3 (broker bootstraps with bad log directories) and 4 (restart after a fix)")
def broker_restart(m, s, broker):
    """A stopped broker starts: it loads the logs found on its live dirs (offline dirs stay offline) and
    registers in ZooKeeper. It hosts no partition until the controller's LeaderAndIsr arrives. With KIP-928 a
    saturated dir is good again (saturation is not persisted), and the reserved file is written to every live
    dir that lacks it before anything else (no space for it: the broker shuts down, see the guard)."""
    b = s.brokers[broker]
    dirs, used, reserved = b.dirs, b.used, b.reserved
    if SATURATED in dirs:
        dirs = tuple(GOOD if status == SATURATED else status for status in dirs)
    if m.reserves:
        for d, status in enumerate(dirs):
            if LIVE_DIR[status] and not reserved >> d & 1:
                used, reserved = replace_at(used, d, used[d] + 1), reserved | 1 << d
    new = b._replace(up=True, dirs=dirs, used=used, reserved=reserved)
    return set_broker(s, broker, new, budget=spend(s, B_RESTARTS))


def fix_dir_guard(m, s, broker, dir):
    b = s.brokers[broker]
    if b.up:
        return f"broker {broker} is running (a disk is fixed while its broker is down)"
    if b.dirs[dir] != OFFLINE:
        return f"dir {dir} of broker {broker} is not offline"
    return budget_left(m, s, B_FIXES)


def fix_dir(m, s, broker, dir, status):
    """Broker's offline dir ``dir`` becomes ``status`` (GOOD: an empty new disk; REMOVED: out of the config),
    its logs there gone."""
    b = s.brokers[broker]
    cleared = tuple(mask & ~(1 << dir) for mask in b.copies)
    new = b._replace(dirs=replace_at(b.dirs, dir, status), copies=cleared, used=replace_at(b.used, dir, 0),
                     reserved=b.reserved & ~(1 << dir))
    return note_wiped(m, set_broker(s, broker, new, budget=spend(s, B_FIXES)))


@STORAGE.rule("ReplaceDisk",
      guard_reads=FIX_DIR_GUARD_READS, reads=FIX_DIR_READS, writes=FIX_DIR_WRITES,
      spends=B_FIXES,
      params=("broker", "dir"), domain=bounded(broker_dirs, "max_fixes", fault=False),
      guard=fix_dir_guard, kind="environment",
      reference="KIP-112 scenario 4 (the disk gets fixed: replaced with a good disk)")
def replace_disk(m, s, broker, dir):
    """While the broker is down, an offline dir's disk is replaced by an empty good one: the logs it held are gone."""
    return fix_dir(m, s, broker, dir, GOOD)


@STORAGE.rule("RemoveDirFromConfig",
      guard_reads=FIX_DIR_GUARD_READS, reads=FIX_DIR_READS, writes=FIX_DIR_WRITES,
      spends=B_FIXES,
      params=("broker", "dir"), domain=bounded(broker_dirs, "max_fixes", fault=False),
      guard=fix_dir_guard, kind="environment",
      reference="KIP-112 scenario 4 (the bad log directory is removed from the broker config)")
def remove_dir_from_config(m, s, broker, dir):
    """While the broker is down, an offline dir is removed from its config: it is no longer a log dir of the
    broker, so it counts neither as live nor as offline, and its logs are no longer seen."""
    return fix_dir(m, s, broker, dir, REMOVED)


def add_storage_rules(core: Feature, cited: dict[str, tuple[str, str]] | None = None) -> None:
    """Give a controller mode's core feature the storage rules, here in its rule order (the engines enumerate
    rules in order: traces, reports and a search's first counterexample follow it). The core must provide
    the hooks of model/storage/mode.py, and takes ``STORAGE.flags`` and ``STORAGE.dir_symmetry`` as its own.
    ``cited``: rule name -> (reference, doc) in the mode's own terms, for a rule whose effect is the same but
    whose code is the mode's (KRaft's start-up is not KIP-112's ZooKeeper bootstrap)."""
    missing = missing_hooks(core.hooks)
    if missing:
        raise TypeError(f"feature {core.name} takes the storage rules but does not provide hook(s) "
                        f"{', '.join(missing)} (model/storage/mode.py)")
    unknown = set(cited or ()) - {r.name for r in STORAGE.rules}
    if unknown:
        raise ValueError(f"no storage rule named {', '.join(sorted(unknown))}")
    core.rules.extend(r if r.name not in (cited or {}) else
                      attrs.evolve(r, reference=cited[r.name][0], doc=" ".join(cited[r.name][1].split()))
                      for r in STORAGE.rules)
