"""The reverse direction of the KRaft conformance check (docs/proofs.md 9.3): the z3 actions allow no more than
the explicit model once their deliberate over-approximations (the free choices of 9.1's table) are pinned to
the explicit model's own choices.

From every reachable explicit state, for every z3 action whose choices the explicit state (or transition) fixes:

- the choices are pinned (``PINS``): the heartbeat's offline dirs are the broker's failed dirs and its wish to be
  unfenced is the explicit readiness (metadata offset past its registration); the registration's LogDirs are
  the broker's live dirs; the assignment's entries are the request in flight; AlterPartition's ISR is the one
  the explicit leader asked for; CreateTopic's replicas are the configured assignment, its leader the first
  active one and its Directories the explicit ``defaultDir``; every election's witness is the first valid broker
  in Replicas order (Kafka's pick, from the pre-state's Replicas order, which the abstract state keeps);
- z3's successors are enumerated (blocking clauses on the abstract post-state, the finite universe of the
  configuration) and must be exactly the abstractions of the explicit successors by the rules mapped to that
  action with those arguments and choices: a z3 successor with no explicit one is a ``reverse`` offence, an
  explicit one the pinned z3 action does not allow a ``pinned`` offence (a pin misreads the explicit choice);
- where no explicit rule of the action is enabled, the pinned z3 action must be disabled too
  (``reverse-disabled``), except where the explicit guard reads what the vocabulary leaves out
  (``z3_only_reason``: a spent bound, a broker with no live dir), and for the heartbeat and the assignment, which z3 lets change
  nothing where Kafka's model leaves out a request that would change nothing (their only z3 successor must then
  be the pre-state).

Not checked: AlterPartition where no explicit ISR change is enabled (whether a follower caught up or fell
behind is the data path, not in the vocabulary: there is no explicit choice to pin) and BrokerLocal (a
stutter, enabled everywhere in z3). What the pins fix is not checked by this direction: a z3 choice wider than
Kafka's (e.g. a heartbeat naming a dir that did not fail) is the over-approximation the proofs rely on.
z3 is asked once per distinct (abstract pre-state, action, arguments, pinned choices).
"""
from __future__ import annotations

import itertools
from collections import Counter
from typing import Callable, NamedTuple

import z3

from model.kraft.disks import failed_dir_ids, live_dir_ids
from model.kraft.metadata import K_PARTITION_CHANGE, LOST, MIGRATING, UNASSIGNED, default_dir
from model.kraft.rules import _unfences as unfencing_due
from model.storage.broker import has_live_dir
from model.storage.common import budget_left
from model.storage.state import NO_LEADER

from .kraft_abstraction import atom, dir_elements, dir_ref, element, pin as pin_state, term
from .kraft_system import ACTION_BY_NAME, BOOL, StateVars, Witness, active, dir_ref_sort, relation
from .system import Finite

# The enumeration stops there: an explicit action has fewer successors from one state, so more is an offence anyway.
MAX_SUCCESSORS = 8


class Pin(NamedTuple):
    key: tuple                 # what the pins read beyond the abstract pre-state (part of the cache key)
    constraints: Callable      # (u, name, pre view) -> [BoolRef] on the action's choices


def _create_topic(m, s, p, t=None):
    assignment = tuple(m.original[p])
    defaults = tuple(element(m, default_dir(s.controller.registrations[b])) for b in assignment)

    def pins(u, name, v):
        R = dir_ref_sort(u)
        replica = z3.Function(f"{name}.replicas", u.B, BOOL)
        default = z3.Function(f"{name}.default_dir", u.B, R)
        leader = z3.Const(f"{name}.leader", u.B)
        first_active = u.brokers[assignment[-1]]
        for b in reversed(assignment):             # Kafka: the first active replica in assignment order
            first_active = z3.If(active(v, u.brokers[b]), u.brokers[b], first_active)
        return ([replica(u.brokers[b]) == (b in assignment) for b in range(len(u.brokers))]
                + [default(u.brokers[b]) == dir_ref(u, d) for b, d in zip(assignment, defaults)]
                + [leader == first_active])
    return Pin((assignment, defaults), pins)


def _register(m, s, b, t=None):
    dirs = tuple(element(m, d) for d in live_dir_ids(s.brokers[b]))

    def pins(u, name, v):
        log_dirs = z3.Function(f"{name}.log_dirs", u.D, BOOL)
        return [log_dirs(u.dirs[d]) == (d in dirs) for d in range(len(u.dirs))]
    return Pin((dirs,), pins)


def _heartbeat(m, s, b, t=None):
    broker = s.brokers[b]
    failed = sum(1 << element(m, d) for d in failed_dir_ids(m, broker))
    return heartbeat_pin(bool(broker.up and broker.registered and unfencing_due(s, b)), failed)


def heartbeat_pin(unfence: bool, failed: int) -> Pin:
    """The heartbeat asks to be unfenced iff ``unfence``, and names the dirs of the bitmask ``failed`` (of dir
    elements, ``element``) offline."""
    def pins(u, name, v):
        offline = z3.Function(f"{name}.offline_dirs", u.D, BOOL)
        return [z3.Bool(f"{name}.unfence") == unfence] + [offline(u.dirs[d]) == bool(failed >> d & 1)
                                                          for d in range(len(u.dirs))]
    return Pin((unfence, failed), pins)


def _assign(m, s, b, t=None):
    entries = s.brokers[b].inflight
    by_partition = {p: element(m, d) for p, d, _ in entries}
    if len(by_partition) < len(entries) or any(topic != s.controller.partitions[p].topic for p, _, topic in entries):
        return None    # two entries for a partition, or a stale topic id: the z3 request has neither

    def pins(u, name, v):
        entry = z3.Function(f"{name}.entry", u.P, BOOL)
        entry_dir = z3.Function(f"{name}.entry_dir", u.P, u.D)
        return ([entry(u.partitions[p]) == (p in by_partition) for p in range(len(u.partitions))]
                + [entry_dir(u.partitions[p]) == u.dirs[d] for p, d in by_partition.items()])
    return Pin(tuple(sorted(by_partition.items())), pins)


def requested_isr(s, t, p) -> int:
    """The ISR the leader's AlterPartition asked for, read off the record it produced (partition_change writes
    the requested ISR as it is when it differs: no ELR; it is the current one when the record leaves it)."""
    isr = s.controller.partitions[p].isr
    if len(t.controller.log) > len(s.controller.log):
        for rec in t.controller.log[-1]:
            if rec.kind == K_PARTITION_CHANGE and rec.partition == p and rec.isr is not None:
                isr = rec.isr
    return isr


def _alter_partition(m, s, p, t=None):
    if t is None:
        return None    # no explicit ISR change: nothing to pin (the data path is not in the vocabulary)
    isr = requested_isr(s, t, p)

    def pins(u, name, v):
        chosen = z3.Function(f"{name}.isr", u.B, BOOL)
        return [chosen(u.brokers[b]) == bool(isr >> b & 1) for b in range(len(u.brokers))]
    return Pin((isr,), pins)


def _none(m, s, arg, t=None):
    return Pin((), lambda u, name, v: [])


# The explicit choice each action's pins read: from the state (None for the transition) or, for AlterPartition,
# from each explicit transition.
PINS = {
    "CreateTopic": _create_topic,
    "BrokerRegister": _register,
    "BrokerCrash": _none,
    "BrokerRestart": _none,
    "BrokerHeartbeat": _heartbeat,
    "ControllerFenceBroker": _none,
    "ControllerAssignReplicasToDirs": _assign,
    "AlterPartition": _alter_partition,
}
# Where z3 may change nothing although the explicit model has no step of the action: the explicit model leaves
# out a heartbeat of a running registered broker that would change nothing; with no request in flight the pinned
# z3 request has no entry.
NO_OP_ALLOWED = {
    "BrokerHeartbeat": lambda s, b: bool(s.brokers[b].up and s.brokers[b].registered),
    "ControllerAssignReplicasToDirs": lambda s, b: True,
}
NOT_CHECKED = {
    "BrokerLocal": "a stutter, enabled everywhere in z3 (its successor is the pre-state, which the forward "
                   "direction establishes for every explicit BrokerLocal step)",
}


def z3_only_reason(m, s, action: str, args: tuple) -> str | None:
    """Why an action no explicit rule takes here may still be enabled in z3: its guard reads what the vocabulary
    leaves out (None: it may not)."""
    if action not in ("BrokerCrash", "BrokerRestart"):
        return None
    rule = m.rules[m.rule_index[action]]
    reason = rule.guard(m, s, *args)
    if reason is None or reason == budget_left(m, s, rule.spends):
        return "bound spent"   # guard None with no transition: the bounded domain leaves the broker out
    if action == "BrokerRestart" and not has_live_dir(s.brokers[args[0]]):
        return "no live dir"
    return None


def view(key) -> tuple:
    """An abstract state (kraft_abstraction.abstract) as the z3 vocabulary sees it: Replicas and a registration's
    dirs as sets (sorted), the leader only when there is one."""
    brokers, parts = key
    return (tuple((up, registered, reg, fenced, tuple(sorted(dirs))) for up, registered, reg, fenced, dirs in brokers),
            tuple((exists, tuple(sorted(replicas)), isr, leader, dirs, le, pe)
                  for exists, replicas, isr, leader, dirs, le, pe in parts))


class Reverse:
    """The reverse check on one configuration's universe; ``visit`` each reachable explicit state."""

    def __init__(self, m, mutation=None):
        self.m, self.mutation = m, mutation
        self.u = Finite(m.cfg.brokers, dir_elements(m), m.cfg.partitions)
        self.s, self.t = StateVars(self.u, "rev.pre"), StateVars(self.u, "rev.post")
        self._relations: dict = {}
        self._successors: dict = {}
        self._elections: dict = {}
        self._pins: dict = {}
        self.queries = 0
        self.disabled_checked: Counter = Counter()   # by action: (explicit state, arguments) where it is disabled
        self.compared: Counter = Counter()       # by action: (explicit state, action, arguments, choice) compared
        self.skipped: Counter = Counter()
        self._reported: set = set()

    # ---- z3 ----------------------------------------------------------------------------------------------
    def _relation(self, action, args):
        key = (action.name, args)
        if key not in self._relations:
            zargs = tuple({"B": self.u.brokers, "P": self.u.partitions}[srt][a]
                          for (_, srt), a in zip(action.params, args))
            labelled, _ = relation(self.u, action, self.s, self.t, zargs, self._name(action), self.mutation)
            solver = z3.Solver()
            solver.add(z3.And([f for _, f in labelled]))
            self._relations[key] = (solver, [c for c in labelled if isinstance(c, Witness) and c.election])
        return self._relations[key]

    @staticmethod
    def _name(action) -> str:
        return "rev." + action.name

    def _election_pins(self, key, witnesses, pre) -> list:
        """Each election's witness is the first valid broker in the pre-state's Replicas order (built once per
        action, arguments and Replicas orders: building the formulas is the cost)."""
        key = (key, tuple(part[1] for part in pre[1]))
        if key not in self._elections:
            self._elections[key] = self._build_election_pins(witnesses, pre)
        return self._elections[key]

    def _build_election_pins(self, witnesses, pre) -> list:
        u, out = self.u, []
        for w in witnesses:
            for p, part in enumerate(pre[1]):
                P, earlier = u.partitions[p], []
                for b in part[1]:
                    first = z3.And(w.pred(P, u.brokers[b]), *[z3.Not(e) for e in earlier])
                    out.append(z3.Implies(first, w.fn(P) == u.brokers[b]))
                    earlier.append(w.pred(P, u.brokers[b]))
        return out

    def successors(self, action, args, pre, pin: Pin) -> frozenset:
        """The views of the pinned z3 action's successors from the abstract pre-state (at most MAX_SUCCESSORS)."""
        key = (action.name, args, pre, pin.key)
        if key in self._successors:
            return self._successors[key]
        self.queries += 1
        solver, witnesses = self._relation(action, args)
        if pre not in self._pins:
            self._pins[pre] = [z3.And(pin_state(self.u, self.s, pre))]   # asserted whole: cheaper
        solver.push()         # the relation is asserted once per action and arguments; the rest in this scope
        try:
            solver.add(*self._pins[pre], *pin.constraints(self.u, self._name(action), self.s.view()),
                       *self._election_pins((action.name, args), witnesses, pre))
            found = set()
            while len(found) < MAX_SUCCESSORS:
                result = solver.check()
                if result == z3.unknown:
                    raise RuntimeError(f"z3 answered unknown: {solver.reason_unknown()}")
                if result == z3.unsat:
                    break
                post, block = self._read(solver.model())
                found.add(post)
                solver.add(z3.Not(z3.And(block)))
        finally:
            solver.pop()
        self._successors[key] = frozenset(found)
        return self._successors[key]

    def _read(self, model):
        """The post-state of a z3 model as a view, and the equalities that pin it (a blocking clause's body)."""
        u, t = self.u, self.t
        R = dir_ref_sort(u)
        block = []

        def read(field, idx, value):
            block.append(atom(t, field, idx, value))
            return value

        def true(field, *idx):
            return read(field, idx, z3.is_true(model.eval(term(t, field, idx), model_completion=True)))

        def number(field, *idx):
            return read(field, idx, model.eval(term(t, field, idx), model_completion=True).as_long())

        def ref(*idx):
            value = model.eval(term(t, "dirs", idx), model_completion=True)
            for reserved, name in ((UNASSIGNED, R.unassigned), (MIGRATING, R.migrating), (LOST, R.lost)):
                if z3.eq(value, name):
                    return read("dirs", idx, reserved)
            return read("dirs", idx, u.dirs.index(model.eval(R.dir_of(value))))

        B, D, P = range(len(u.brokers)), range(len(u.dirs)), range(len(u.partitions))
        brokers = tuple((true("up", b), true("registered", b), true("reg", b), true("fenced", b),
                         tuple(d for d in D if true("regdir", b, d))) for b in B)
        parts = []
        for p in P:
            leader = (read("leader", (p,), u.brokers.index(model.eval(term(t, "leader", (p,)), model_completion=True)))
                      if true("has_leader", p) else NO_LEADER)
            parts.append((true("exists", p), tuple(b for b in B if true("replica", p, b)),
                          sum(1 << b for b in B if true("isr", p, b)), leader, tuple(ref(p, b) for b in B),
                          number("leader_epoch", p), number("partition_epoch", p)))
        return view((brokers, tuple(parts))), block

    # ---- one explicit state ------------------------------------------------------------------------------
    def visit(self, s, pre, mapped) -> list:
        """Check the state ``s`` (abstraction ``pre``), whose explicit transitions are ``mapped``: (z3 action
        name, its arguments, the explicit transition's target, its abstraction). Returns the offences."""
        m = self.m
        offences = []
        explicit: dict = {}
        for name, args, t, post in mapped:
            if name in NOT_CHECKED:
                continue
            pin = PINS[name](m, s, args[0], t if name == "AlterPartition" else None)
            if pin is None:
                self.skipped[f"{name}: choice not expressible"] += 1
                continue
            explicit.setdefault((name, args, pin.key), (pin, set()))[1].add(view(post))
        for (name, args, _), (pin, posts) in explicit.items():
            self.compared[name] += 1
            z3_posts = self.successors(ACTION_BY_NAME[name], args, pre, pin)
            for check, extra in (("reverse", z3_posts - posts), ("pinned", posts - z3_posts)):
                if extra:
                    offences += self._offence(check, name, args, pin, pre, extra)
        taken = {(name, args) for name, args, _, _ in mapped}
        sizes = {"B": m.cfg.brokers, "P": m.cfg.partitions}
        for name, pins in PINS.items():
            action = ACTION_BY_NAME[name]
            for args in itertools.product(*(range(sizes[srt]) for _, srt in action.params)):
                if (name, args) in taken:
                    continue
                why = z3_only_reason(m, s, name, args)
                pin = pins(m, s, args[0])
                if why is not None or pin is None:
                    self.skipped[f"{name}: {why or 'nothing to pin'}"] += 1
                    continue
                self.disabled_checked[name] += 1
                no_op = name in NO_OP_ALLOWED and NO_OP_ALLOWED[name](s, args[0])
                extra = self.successors(action, args, pre, pin) - ({view(pre)} if no_op else set())
                if extra:
                    offences += self._offence("reverse-disabled", name, args, pin, pre, extra)
        return offences

    def _offence(self, check, name, args, pin, pre, posts) -> list:
        """One offence per (check, abstract pre-state, action, arguments, choice), however many explicit states
        share it."""
        key = (check, pre, name, args, pin.key)
        if key in self._reported:
            return []
        self._reported.add(key)
        return [{"check": check, "action": name, "args": args, "choice": pin.key, "pre": pre,
                 "post": sorted(posts)[0]}]

    def figures(self) -> dict:
        return {"z3_queries": self.queries, "compared": dict(self.compared), "disabled_checked": dict(self.disabled_checked),
                "skipped": dict(self.skipped)}
