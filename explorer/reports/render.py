"""Readable forms of states and traces: a JSON-ready dict per state, and a text trace that shows, per step,
the action and only what changed.

A value may be a *typed object*, a dict with a ``"type"`` (a KRaft record, image or entry by its Kafka name:
model/kraft/render.py): its text is ``Type(field=value, ...)`` (or its type's own text form), flattening keeps it
whole, and a step's changes show the fields of it that changed, and the typed objects appended to a list rather
than the whole list twice (``changes``). The ZooKeeper mode's state has none, so its output is as it was.
"""
from __future__ import annotations

from model import Model, State
from model.kraft.render import TEXT_FORMS, TYPE
from model.storage.state import (
    BUDGET_FIELDS, DELETION_NAMES, DIR_NAMES, ERROR_NAMES, HOSTED_NAMES,
    LEADER_AND_ISR, LEADER_DURING_DELETE, MESSAGE_NAMES, NO_LEADER, PARTITION_STATE_NAMES, REASSIGNMENT_NAMES,
    REPLICA_STATE_NAMES, STOP_REPLICA, STOP_REPLICA_DELETE, bits,
)


def _leader(b: int):
    if b == LEADER_DURING_DELETE:
        return "LeaderDuringDelete"
    return None if b == NO_LEADER else b


def message_text(msg) -> str:
    """A request in one line, e.g. LeaderAndIsr(p0: leader=1 epoch=2 isr=[1,2] isNew=false)."""
    if msg.kind == LEADER_AND_ISR:
        parts = [f"p{e.partition}: leader={show_value(_leader(e.leader))} epoch={e.leader_epoch} isr={_ids(e.isr)} "
                 f"isNew={str(e.is_new).lower()}" for e in msg.body]
    elif msg.kind in (STOP_REPLICA, STOP_REPLICA_DELETE):
        delete = str(msg.kind == STOP_REPLICA_DELETE).lower()
        parts = [f"p{p}: delete={delete}" for p in msg.body]
    else:
        parts = [f"p{e.partition}: leader={show_value(_leader(e.leader))} isr={_ids(e.isr)} offline={_ids(e.offline)}"
                 for e in msg.body]
    return f"{MESSAGE_NAMES[msg.kind].removesuffix('(delete)')}(" + "; ".join(parts) + ")"


def _responses(name: str, replies) -> list[str]:
    return [f"{name}(" + "; ".join(f"p{p}: {ERROR_NAMES[e]}" for p, e in r) + ")" for r in replies]


def _ids(mask: int) -> str:
    return "[" + ",".join(str(b) for b in bits(mask)) + "]"


# The formatters the declared views name (model/storage/state.py Show.fmt): fmt(model, value) -> JSON-ready value.
_FORMATS = {
    "plain": lambda m, v: _plain(v),     # tuples as lists: the HTML of a run and of its JSON report agree
    "list": lambda m, v: list(v),
    "bits": lambda m, v: bits(v),
    "dir_names": lambda m, v: [DIR_NAMES[x] for x in v],
    "hosted": lambda m, v: HOSTED_NAMES[v],
    "metadata": lambda m, v: None if v is None else {
        "leader": _leader(v.leader), "isr": bits(v.isr), "offline_replicas": bits(v.offline)},
    "messages": lambda m, v: [message_text(x) for x in v],
    "leader_and_isr_responses": lambda m, v: _responses("LeaderAndIsrResponse", v),
    "stop_replica_responses": lambda m, v: _responses("StopReplicaResponse", v),
    "per_broker_bits": lambda m, v: {str(b): bits(mask) for b, mask in enumerate(v)},
    "budget": lambda m, v: {name.removeprefix("max_"): n for name, n in zip(BUDGET_FIELDS, v)},
    "deletion": lambda m, v: DELETION_NAMES[v],
    "reassignment": lambda m, v: REASSIGNMENT_NAMES[v],
}


def _partition_record(model, part) -> dict:
    return {"state": PARTITION_STATE_NAMES[part.state], "leader": _leader(part.leader),
            "leader_epoch": part.leader_epoch, "isr": bits(part.isr)}


def _view(model: Model, record, view, per_partition: dict | None = None, partitions_key: str = "partitions") -> dict:
    """A record's readable form from its declared view: (field, Show) pairs in order. Per-partition fields go
    into one entry per partition (under ``partitions_key``, placed where the first such field is declared)."""
    out: dict = {}
    rows = None
    for name, show in view:
        if show.feature is not None and not model.has_feature(show.feature):
            continue
        value = getattr(record, name)
        fmt = model.formats.get(show.fmt) or _FORMATS.get(show.fmt)
        if show.scope == "partition":
            if rows is None:
                rows = [{"partition": p} for p in range(model.cfg.partitions)]
                out[partitions_key] = rows
            for p, row in enumerate(rows):
                if show.fmt == "partition_record":
                    row.update(_partition_record(model, value[p]))
                elif show.fmt == "replica_states":
                    row[show.key] = {str(model.assignments[p][i]): REPLICA_STATE_NAMES[r] for i, r in enumerate(value[p])}
                elif show.fmt == "partition_bit":
                    row[show.key] = bool(value >> p & 1)
                else:
                    row[show.key] = fmt(model, value[p])
        elif show.scope == "responses":
            out.setdefault(show.key, []).extend(fmt(model, value))
        else:
            out[show.key] = fmt(model, value)
    return out


def state_dict(model: Model, state: State) -> dict:
    """The state as JSON-ready data, read from the fields' declared views (model/spec/schema.py Show; the fields
    in model/storage/schema.py and model/zk/schema.py); the fields of a feature the model leaves out are not
    shown."""
    schema = model.schema
    brokers = [{"broker": b, **_view(model, br, schema.view("brokers"))} for b, br in enumerate(state.brokers)]
    out = {"brokers": brokers, "controller": _view(model, state.controller, schema.view("controller"))}
    out.update(_view(model, state, schema.view(None), partitions_key="records"))
    if model.ext_fields:  # the state fields of features added from outside (model/spec/feature.py StateField)
        out["extensions"] = {sf.name: _plain(value) for sf, value in zip(model.ext_fields, state.ext)}
    return out


def _plain(value):
    """A JSON-ready form of an extension field's value (tuples as lists)."""
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def flatten(value, prefix: str = "", out: dict | None = None) -> dict:
    """A readable state (state_dict, or a report's trace state) as dotted keys, [i] for brokers, partitions and
    records: what the text trace and the HTML page compare from step to step."""
    out = {} if out is None else out
    if isinstance(value, dict) and not is_typed(value):
        for k, v in value.items():
            flatten(v, f"{prefix}.{k}" if prefix else str(k), out)
    elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value) and prefix.split(".")[-1] in (
            "brokers", "partitions", "records"):
        for i, v in enumerate(value):
            flatten(v, f"{prefix}[{i}]", out)
    else:
        out[prefix] = value
    return out


def flat(model: Model, state: State) -> dict:
    return flatten(state_dict(model, state))


def is_typed(value) -> bool:
    """A typed object: a dict with a ``"type"`` string (module docstring)."""
    return isinstance(value, dict) and isinstance(value.get(TYPE), str)


def typed_text(value: dict) -> str:
    """A typed object in one line: its type's own text form, else ``Type(field=value, ...)``."""
    own = TEXT_FORMS.get(value[TYPE])
    if own is not None:
        return own(value, show_value)
    return f"{value[TYPE]}(" + ", ".join(f"{k}={show_value(v)}" for k, v in value.items() if k != TYPE) + ")"


def show_value(value) -> str:
    """A readable value in one line, as the text trace (and the HTML page) shows it."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list):
        if value and isinstance(value[0], dict):
            return "[" + "; ".join(_compact(v) for v in value) + "]"
        return "[" + ", ".join(show_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return _compact(value)
    return str(value)


def _compact(value) -> str:
    if is_typed(value):
        return typed_text(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {show_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + "; ".join(_compact(v) for v in value) + "]"
    return show_value(value)


APPENDED = object()   # the "old" value of a change that appended to a list


def changes(key: str, old, new) -> list[tuple[str, object, object]]:
    """What changed of one flat key, as (key, old, new) triples: two typed objects of one type, field by field
    (``key.field``); a list that grew at its end by typed objects, one (key, APPENDED, item) per item appended;
    else the key itself."""
    if is_typed(old) and is_typed(new) and old[TYPE] == new[TYPE]:
        out: list = []
        for field in dict.fromkeys([*new, *old]):
            if field != TYPE and old.get(field) != new.get(field):
                out += changes(f"{key}.{field}", old.get(field), new.get(field))
        return out
    if (isinstance(old, list) and isinstance(new, list) and len(new) > len(old) and new[:len(old)] == old
            and all(is_typed(item) for item in new[len(old):])):
        return [(key, APPENDED, item) for item in new[len(old):]]
    return [(key, old, new)]


def change_line(key: str, old, new) -> str:
    if old is APPENDED:
        return f"{key}: + {show_value(new)}"
    return f"{key}: {show_value(old)} -> {show_value(new)}"


def trace_text(model: Model, trace: list, loop_start: int | None = None) -> str:
    """The initial state in full, then one block per step: the action and the variables it changed. ``loop_start``
    (a liveness lasso): the steps after that state repeat forever, or, at the last state, the run stays there."""
    lines = []
    previous = None
    for i, (action, state) in enumerate(trace):
        if loop_start is not None and i == loop_start + 1:
            lines.append(f"Cycle starts here (step {loop_start}): the steps below repeat forever")
        current = flat(model, state)
        if previous is None:
            lines.append("Step 0: initial state")
            lines.extend(f"    {k} = {show_value(v)}" for k, v in current.items())
        else:
            lines.append(f"Step {i}: {model.label(action)}")
            changed = [k for k in current if current[k] != previous.get(k)]
            for k in changed:
                lines.extend(f"    {change_line(*c)}" for c in changes(k, previous.get(k), current[k]))
            if not changed:
                lines.append("    (nothing changed)")
        previous = current
    if loop_start is not None and loop_start == len(trace) - 1:
        lines.append(f"The system stops here (step {loop_start}): no fair step is enabled, so it may stay in this "
                     f"state forever")
    return "\n".join(lines)
