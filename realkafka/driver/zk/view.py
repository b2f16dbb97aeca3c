"""What can be seen of a ZooKeeper-mode cluster, in one shape for the model's projection of a state and the real
cluster's observation, and their differences (docs/reproduce-zk.md, "What is compared").

Compared: per broker, running or not, and registered or not (its ephemeral /brokers/ids znode, the model's
controller counting it live: the znode goes only when the broker's ZooKeeper session expires, after which the
controller's BrokerChange handling follows before any later request, ZooKeeper's watch order); for a running broker, each dir online or offline (describeLogDirs), and the
live dir holding each replica's log with its log end offset (the dirs on disk); per partition, the leader and ISR
of its state znode (the controller's LeaderIsrAndControllerEpoch); the offsets acknowledged to the producer; what a
consumer read. Not compared: epochs (the real controller epoch counts elections the model does not have), the
brokers' in-memory state and the controller's (its replica states, its offline replicas: the Admin client does
not show a MetadataResponse's offline_replicas), which a real cluster shows only in its logs.
Names follow the KRaft driver's (realkafka/driver/view.py): model partition p is topic ``t{p}``, partition 0.
"""
from __future__ import annotations

from dataclasses import dataclass

from invariants.storage.durability import serving_leader
from model.storage.broker import live_copy_dir
from model.storage.state import LIVE_DIR, REMOVED, bits

from ..view import ABSENT, OFFLINE, ONLINE, partition_of, topic_of


@dataclass(frozen=True)
class ZkBrokerView:
    up: bool
    registered: bool                   # /brokers/ids/<id> (the model: the controller's live set)
    dirs: tuple | None = None          # per dir: ONLINE / OFFLINE / ABSENT; None: not observed (the broker is down)
    logs: dict | None = None           # topic -> (live dir, log end offset); None: not observed


@dataclass(frozen=True)
class ZkView:
    brokers: tuple                     # ZkBrokerView per broker id
    partitions: dict                   # topic -> (leader, frozenset ISR) of its state znode (existing topics)
    acked: dict                        # topic -> frozenset of acknowledged offsets
    read: dict                         # topic -> records a consumer read (the model: the serving leader's HW)


def _dir(status: int) -> str:
    return ABSENT if status == REMOVED else ONLINE if LIVE_DIR[status] else OFFLINE


def project(model, state) -> ZkView:
    brokers = []
    c = state.controller
    for i, b in enumerate(state.brokers):
        logs = {}
        for p in range(model.cfg.partitions):
            d = live_copy_dir(b, p)
            if d >= 0:
                logs[topic_of(p)] = (d, len(b.logs[p]))
        brokers.append(ZkBrokerView(b.up, bool(c.live >> i & 1), tuple(_dir(s) for s in b.dirs) if b.up else None,
                                    logs if b.up else None))
    partitions = {topic_of(p): (part.leader, frozenset(bits(part.isr)))
                  for p, part in enumerate(c.partitions) if part.leader_epoch >= 0}
    acked = {topic_of(p): frozenset(bits(state.acked[p])) for p in range(model.cfg.partitions)}
    read = {}
    for p in range(model.cfg.partitions):
        leader = serving_leader(state, p)
        read[topic_of(p)] = None if leader < 0 else state.brokers[leader].hw[p]
    return ZkView(tuple(brokers), partitions, acked, read)


def observed(obs, model, acked: dict, read: dict) -> ZkView:
    """The real view: ``obs`` a ZkObservation; ``acked`` and ``read`` what the driver's producer and consumer got
    (topic -> offsets; topic -> count of the last read)."""
    brokers = []
    for b in sorted(obs.brokers):
        o = obs.brokers[b]
        registered = b in obs.controller.registrations
        if not o.up:
            brokers.append(ZkBrokerView(False, registered))
            continue
        dirs = tuple(ABSENT if not d.configured else None if d.online is None else ONLINE if d.online else OFFLINE
                     for d in o.dirs)
        logs = {t: (r.dir, r.log_end_offset) for (t, p), r in o.replicas.items() if p == 0 and r.dir is not None
                and t.startswith("t") and t[1:].isdigit() and dirs[r.dir] != OFFLINE}
        brokers.append(ZkBrokerView(True, registered, dirs, logs))
    partitions = {t: (x.leader, frozenset(x.isr)) for (t, p), x in obs.controller.partitions.items()
                  if p == 0 and t.startswith("t") and t[1:].isdigit() and partition_of(t) < model.cfg.partitions}
    topics = [topic_of(p) for p in range(model.cfg.partitions)]
    return ZkView(tuple(brokers), partitions, {t: frozenset(acked.get(t, ())) for t in topics},
                  {t: read.get(t) for t in topics})


def differences(model_view: ZkView, real: ZkView, *, read: bool = False) -> list[str]:
    """What the real view shows that the model's does not, one line each ([] when they agree on everything the
    real side observed). ``read``: compare the consumer's read (only right after a Consume)."""
    out = []
    for b, (m, r) in enumerate(zip(model_view.brokers, real.brokers)):
        if m.up != r.up:
            out.append(f"broker {b}: {'up' if r.up else 'down'} (model: {'up' if m.up else 'down'})")
            continue
        if m.registered != r.registered:
            out.append(f"broker {b}: {_registered(r.registered)} (model: the controller counts it "
                       f"{'live' if m.registered else 'dead'})")
        if not r.up:
            continue
        for d, (ms, rs) in enumerate(zip(m.dirs, r.dirs)):
            if rs is not None and ms != rs:
                out.append(f"broker {b} dir {d}: {rs} (model: {ms})")
        for t in sorted(set(m.logs) | set(r.logs)):
            if m.logs.get(t) != r.logs.get(t):
                out.append(f"broker {b} {t}-0 log (dir, end offset): {r.logs.get(t)} (model: {m.logs.get(t)})")
    for t in sorted(set(model_view.partitions) | set(real.partitions)):
        mp, rp = model_view.partitions.get(t), real.partitions.get(t)
        if mp != rp:
            out.append(f"{t}-0 state znode (leader, ISR): {_part(rp)} (model: {_part(mp)})")
    for t in sorted(real.acked):
        if model_view.acked.get(t, frozenset()) != real.acked[t]:
            out.append(f"{t}-0 acknowledged offsets {sorted(real.acked[t])} (model: {sorted(model_view.acked.get(t, ()))})")
    if read:
        for t in sorted(real.read):
            if real.read[t] is not None and model_view.read.get(t) != real.read[t]:
                out.append(f"{t}-0 read {real.read[t]} record(s) (model: {model_view.read.get(t)})")
    return out


def _registered(yes: bool) -> str:
    return "registered (/brokers/ids)" if yes else "not registered (no /brokers/ids znode)"


def _part(p) -> str:
    return "none" if p is None else f"leader {p[0]}, ISR {sorted(p[1])}"


def text(view: ZkView) -> list[str]:
    """The view in lines (the side-by-side print)."""
    lines = []
    for b, o in enumerate(view.brokers):
        if not o.up:
            lines.append(f"broker {b}: down" + ("; still registered (its session not expired)" if o.registered else ""))
            continue
        dirs = " ".join(f"dir {d} {s or '?'}" for d, s in enumerate(o.dirs or ()))
        logs = ", ".join(f"{t}-0 on dir {d} (end {e})" for t, (d, e) in sorted((o.logs or {}).items()))
        lines.append(f"broker {b}: up" + ("" if o.registered else ", not registered") + f"; {dirs}"
                     + (f"; {logs}" if logs else ""))
    for t, p in sorted(view.partitions.items()):
        lines.append(f"{t}-0: {_part(p)}; acked {sorted(view.acked.get(t, ()))}"
                     + (f"; readable {view.read[t]}" if view.read.get(t) is not None else ""))
    return lines
