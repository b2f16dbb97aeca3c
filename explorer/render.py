"""Readable forms of states and traces: a JSON-ready dict per state, and a text trace that shows, per step,
the action and only what changed."""
from __future__ import annotations

from model import Model, State
from model.state import (
    BUDGET_FIELDS, DELETION_NAMES, DIR_NAMES, ERROR_NAMES, HOSTED_NAMES, LEADER_AND_ISR, LEADER_DURING_DELETE,
    MESSAGE_NAMES, NO_LEADER, PARTITION_STATE_NAMES, REASSIGNMENT_NAMES, REPLICA_STATE_NAMES, STOP_REPLICA, STOP_REPLICA_DELETE, bits,
)


def _leader(b: int):
    if b == LEADER_DURING_DELETE:
        return "LeaderDuringDelete"
    return None if b == NO_LEADER else b


def message_text(msg) -> str:
    """A request in one line, e.g. LeaderAndIsr(p0: leader=1 epoch=2 isr=[1,2] isNew=false)."""
    if msg.kind == LEADER_AND_ISR:
        parts = [f"p{e.partition}: leader={_show(_leader(e.leader))} epoch={e.leader_epoch} isr={_ids(e.isr)} "
                 f"isNew={str(e.is_new).lower()}" for e in msg.body]
    elif msg.kind in (STOP_REPLICA, STOP_REPLICA_DELETE):
        delete = str(msg.kind == STOP_REPLICA_DELETE).lower()
        parts = [f"p{p}: delete={delete}" for p in msg.body]
    else:
        parts = [f"p{e.partition}: leader={_show(_leader(e.leader))} isr={_ids(e.isr)} offline={_ids(e.offline)}"
                 for e in msg.body]
    return f"{MESSAGE_NAMES[msg.kind].removesuffix('(delete)')}(" + "; ".join(parts) + ")"


def _responses(name: str, replies) -> list[str]:
    return [f"{name}(" + "; ".join(f"p{p}: {ERROR_NAMES[e]}" for p, e in r) + ")" for r in replies]


def _ids(mask: int) -> str:
    return "[" + ",".join(str(b) for b in bits(mask)) + "]"


def state_dict(model: Model, state: State) -> dict:
    brokers = []
    for b, br in enumerate(state.brokers):
        partitions = []
        for p in range(model.cfg.partitions):
            meta = br.meta[p]
            partitions.append({
                "partition": p,
                "log_on_dirs": bits(br.copies[p]),
                "hosted": HOSTED_NAMES[br.hosted[p]],
                "leader_epoch": br.epoch[p],
                "log": list(br.logs[p]),
                "hw": br.hw[p],
                "leader_isr": bits(br.isr[p]),
                "metadata": None if meta is None else {
                    "leader": _leader(meta.leader), "isr": bits(meta.isr), "offline_replicas": bits(meta.offline)},
            })
            if model.cfg.saturation:
                partitions[-1]["segments"] = br.segs[p]
        broker = {
            "broker": b,
            "up": br.up,
            "dirs": [DIR_NAMES[s] for s in br.dirs],
        }
        if model.cfg.saturation:
            broker["dir_units_used"] = list(br.used)
            broker["reserved_file_on_dirs"] = bits(br.reserved)
        broker.update({
            "partitions": partitions,
            "inbox": [message_text(m) for m in br.inbox],
            "responses": _responses("LeaderAndIsrResponse", br.replies)
            + _responses("StopReplicaResponse", br.stop_replies),
        })
        brokers.append(broker)
    c = state.controller
    controller = {
        "epoch": c.epoch,
        "live_brokers": bits(c.live),
        "offline_replicas_by_broker": {str(b): bits(mask) for b, mask in enumerate(c.offline)},
        "partitions": [
            {"partition": p, "state": PARTITION_STATE_NAMES[part.state], "leader": _leader(part.leader),
             "leader_epoch": part.leader_epoch, "isr": bits(part.isr),
             "replicas": {str(model.assignments[p][i]): REPLICA_STATE_NAMES[r] for i, r in enumerate(c.replicas[p])}}
            for p, part in enumerate(c.partitions)
        ],
    }
    if model.cfg.deletion:
        for p, entry in enumerate(controller["partitions"]):
            entry["topic_deletion"] = DELETION_NAMES[c.deletion[p]]
    if model.cfg.reassignment:
        for p, entry in enumerate(controller["partitions"]):
            entry["assignment"] = list(c.assigned[p])
            entry["reassignment"] = REASSIGNMENT_NAMES[c.reassigning[p]]
    out = {
        "brokers": brokers,
        "controller": controller,
        "log_dir_event_notifications": bits(state.notifications),
        "events_used": {name.removeprefix("max_"): n for name, n in zip(BUDGET_FIELDS, state.budget)},
        "records": [
            {"partition": p, "committed": list(state.committed[p]), "acked_offsets": bits(state.acked[p]),
             "consumed": list(state.consumed[p]), "wiped": bool(state.wiped >> p & 1)}
            for p in range(model.cfg.partitions)
        ],
    }
    if model.ext_fields:  # the state fields of features added from outside (model/feature.py StateField)
        out["extensions"] = {sf.name: _plain(value) for sf, value in zip(model.ext_fields, state.ext)}
    return out


def _plain(value):
    """A JSON-ready form of an extension field's value (tuples as lists)."""
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def _flatten(value, prefix: str, out: dict) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(v, f"{prefix}.{k}" if prefix else str(k), out)
    elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value) and prefix.split(".")[-1] in (
            "brokers", "partitions", "records"):
        for i, v in enumerate(value):
            _flatten(v, f"{prefix}[{i}]", out)
    else:
        out[prefix] = value


def flat(model: Model, state: State) -> dict:
    out: dict = {}
    _flatten(state_dict(model, state), "", out)
    return out


def _show(value) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list):
        if value and isinstance(value[0], dict):
            return "[" + "; ".join(_compact(v) for v in value) + "]"
        return "[" + ", ".join(_show(v) for v in value) + "]"
    if isinstance(value, dict):
        return _compact(value)
    return str(value)


def _compact(value) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_show(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + "; ".join(_compact(v) for v in value) + "]"
    return _show(value)


def trace_text(model: Model, trace: list) -> str:
    """The initial state in full, then one block per step: the action and the variables it changed."""
    lines = []
    previous = None
    for i, (action, state) in enumerate(trace):
        current = flat(model, state)
        if previous is None:
            lines.append("Step 0: initial state")
            lines.extend(f"    {k} = {_show(v)}" for k, v in current.items())
        else:
            lines.append(f"Step {i}: {model.label(action)}")
            changed = [k for k in current if current[k] != previous.get(k)]
            for k in changed:
                lines.append(f"    {k}: {_show(previous.get(k))} -> {_show(current[k])}")
            if not changed:
                lines.append("    (nothing changed)")
        previous = current
    return "\n".join(lines)
