"""Field-by-field comparison of the real cluster's view with the model's expected one (view.py), each difference
named in Kafka's words: "broker 0's replica of t0-0 is on dir 1, the model expects dir 0".

Not compared, and why:
- leader epochs, partition epochs, broker epochs and metadata offsets: the real controller writes records the model
  leaves out (the bootstrap's feature levels and its own registration, NoOpRecords, the ISR expansions of followers
  the model's trace did not schedule) and counts offsets in records where the model counts batches, so their values
  differ by design; what they change (leader, ISR, Directories, fencing, re-registration) is compared;
- the high watermark, except through what a consumer reads where the real side read (Consume steps, the end);
- ELR and last known ELR where the model runs without ELR (its view has None): the real values are shown, not
  compared (with ELR, the model's release, they are compared);
- a real broker's logs while it is down (it cannot be asked), and what the real side did not observe (None).
"""
from __future__ import annotations

from .view import BrokerView, PartitionView, View, dir_text, dirs_text, tp


def _set(values) -> str:
    return "{" + ", ".join(str(v) for v in sorted(values)) + "}"


def _leader(value: int) -> str:
    return "none" if value < 0 else f"broker {value}"


def _dir(d) -> str:
    return "none" if d is None else f"dir {d}"


def _brokers(expected: View, real: View) -> list[str]:
    out = []
    for b, (e, r) in enumerate(zip(expected.brokers, real.brokers)):
        if e.up != r.up:
            out.append(f"broker {b} is {'running' if r.up else 'down'}, the model expects it "
                       f"{'running' if e.up else 'down'}")
        for d, (es, rs) in enumerate(zip(e.dirs, r.dirs)):
            if es != rs:
                out.append(f"broker {b}'s dir {d} is {rs}, the model expects it {es}")
        out += _logs(b, e, r)
    return out


def _logs(b: int, e: BrokerView, r: BrokerView) -> list[str]:
    out = []
    if r.logs is not None and e.logs is not None:
        for topic in sorted(set(e.logs) | set(r.logs)):
            el, rl = e.logs.get(topic), r.logs.get(topic)
            ed, rd = (el.dir if el else None), (rl.dir if rl else None)
            if ed != rd:
                if rd is None:
                    out.append(f"broker {b} holds no live log of {tp(topic)}, the model expects one on dir {ed}")
                elif ed is None:
                    out.append(f"broker {b} holds a log of {tp(topic)} on dir {rd}, the model expects none")
                else:
                    out.append(f"broker {b}'s replica of {tp(topic)} is on dir {rd}, the model expects dir {ed}")
            ef, rf = (el.future_dir if el else None), (rl.future_dir if rl else None)
            if ef != rf:
                out.append(f"broker {b}'s -future log of {tp(topic)} is on {_dir(rf)}, the model expects {_dir(ef)}")
            if ed == rd and rd is not None and el.log_end is not None and rl.log_end is not None \
                    and el.log_end != rl.log_end:
                out.append(f"broker {b}'s log of {tp(topic)} ends at offset {rl.log_end}, the model expects "
                           f"{el.log_end}")
    if e.on_failed_dirs is not None and r.on_failed_dirs is not None:
        for topic in sorted(set(e.on_failed_dirs) | set(r.on_failed_dirs)):
            ef, rf = e.on_failed_dirs.get(topic, frozenset()), r.on_failed_dirs.get(topic, frozenset())
            if ef != rf:
                out.append(f"broker {b}'s failed dirs holding {tp(topic)} are {_set(rf)}, the model expects "
                           f"{_set(ef)}")
    return out


def _registrations(expected: View, real: View) -> list[str]:
    out = []
    for b, (e, r) in enumerate(zip(expected.registrations, real.registrations)):
        if (e is None) != (r is None):
            out.append(f"broker {b} is {'not ' if r is None else ''}registered, the model expects it "
                       f"{'not ' if e is None else ''}registered")
            continue
        if e is None:
            continue
        if e.fenced != r.fenced:
            out.append(f"broker {b}'s registration is {'fenced' if r.fenced else 'unfenced'}, the model expects "
                       f"it {'fenced' if e.fenced else 'unfenced'}")
        if e.dirs != r.dirs:
            out.append(f"broker {b}'s registration lists dirs {_set(r.dirs)}, the model expects {_set(e.dirs)}")
        if e.in_controlled_shutdown != r.in_controlled_shutdown:
            out.append(f"broker {b} is {'' if r.in_controlled_shutdown else 'not '}in controlled shutdown, the model "
                       f"expects {'it' if e.in_controlled_shutdown else 'not'}")
    return out


def _partition(topic: str, e: PartitionView, r: PartitionView) -> list[str]:
    name = tp(topic)
    out = []
    if e.replicas != r.replicas:
        out.append(f"{name}'s replicas are {list(r.replicas)}, the model expects {list(e.replicas)}")
    if e.leader != r.leader:
        out.append(f"{name}'s leader is {_leader(r.leader)}, the model expects {_leader(e.leader)}")
    if e.isr != r.isr:
        out.append(f"{name}'s ISR is {_set(r.isr)}, the model expects {_set(e.isr)}")
    if e.replicas == r.replicas:
        for b, ed, rd in zip(e.replicas, e.directories, r.directories):
            if ed != rd:
                out.append(f"{name}'s Directories entry for broker {b} is {dir_text(rd)}, the model expects "
                           f"{dir_text(ed)}")
    elif e.directories != r.directories:
        out.append(f"{name}'s Directories are {dirs_text(r.directories)}, the model expects "
                   f"{dirs_text(e.directories)}")
    if (e.adding, e.removing) != (r.adding, r.removing):
        out.append(f"{name}'s reassignment adds {list(r.adding)} and removes {list(r.removing)}, the model expects "
                   f"adding {list(e.adding)} and removing {list(e.removing)}")
    for what, ev, rv in (("ELR", e.elr, r.elr), ("last known ELR", e.last_known_elr, r.last_known_elr)):
        if ev is not None and rv is not None and ev != rv:
            out.append(f"{name}'s {what} is {_set(rv)}, the model expects {_set(ev)}")
    return out


def _partitions(expected: View, real: View) -> list[str]:
    out = []
    for topic in sorted(set(expected.partitions) | set(real.partitions)):
        e, r = expected.partitions.get(topic), real.partitions.get(topic)
        if e is None:
            out.append(f"{tp(topic)} exists, the model expects no such partition")
        elif r is None:
            out.append(f"{tp(topic)} does not exist, the model expects it")
        else:
            out += _partition(topic, e, r)
    return out


def _data(expected: View, real: View) -> list[str]:
    out = []
    for topic in sorted(set(expected.data) | set(real.data)):
        e, r = expected.data.get(topic), real.data.get(topic)
        ea = e.acked if e else frozenset()
        ra = r.acked if r else frozenset()
        if ea - (r.unsure if r else frozenset()) != ra:
            out.append(f"the producer was acknowledged offsets {_set(ra)} of {tp(topic)}, the model expects "
                       f"{_set(ea)}")
        if e is not None and r is not None and e.read is not None and r.read is not None and e.read != r.read:
            out.append(f"a consumer reading {tp(topic)} from offset 0 gets {r.read} record(s), the model expects "
                       f"{e.read}")
    return out


PARTS = {"brokers": _brokers, "registrations": _registrations, "partitions": _partitions, "data": _data}
CONTROLLER = ("registrations", "partitions")   # what the controller's image holds


def differences(expected: View, real: View, parts=tuple(PARTS)) -> list[str]:
    """Every observable point where the real view differs from the model's, in Kafka's words (empty: they match);
    ``parts`` limits the comparison (CONTROLLER: the controller's image only)."""
    return [line for part in parts for line in PARTS[part](expected, real)]


def changes(before: View | None, after: View) -> list[str]:
    """What changed from one view to the next, in the same words (as if ``before`` were the expectation): the
    per-step output shows only these."""
    if before is None:
        return describe(after)
    return [line.replace("the model expects it ", "was ").replace("the model expects ", "was ")
            for line in differences(before, after)]


def describe(view: View) -> list[str]:
    """A whole view in short lines (the first step's output)."""
    out = []
    for b, broker in enumerate(view.brokers):
        dirs = ", ".join(f"dir {d} {s}" for d, s in enumerate(broker.dirs))
        logs = "; ".join(f"{tp(t)} on {_dir(l.dir)}" + (f" (-future on dir {l.future_dir})" if l.future_dir is not
                                                           None else "") for t, l in sorted((broker.logs or {}).items()))
        out.append(f"broker {b}: {'running' if broker.up else 'down'}, {dirs}" + (f"; {logs}" if logs else ""))
    for b, reg in enumerate(view.registrations):
        if reg is not None:
            out.append(f"broker {b} registered {'fenced' if reg.fenced else 'unfenced'} with dirs {_set(reg.dirs)}")
    for topic, part in sorted(view.partitions.items()):
        out.append(f"{tp(topic)}: replicas {list(part.replicas)}, leader {_leader(part.leader)}, ISR {_set(part.isr)}, "
                   f"Directories {dirs_text(part.directories)}")
    return out
