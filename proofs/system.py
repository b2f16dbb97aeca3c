"""The parameterized transition system: KIP-112's protocol core as z3 formulas (docs/proofs.md).

Brokers, dirs and partitions are sorts. In a *symbolic* universe they are uninterpreted (``DeclareSort``) and
``forall``/``exists`` are z3 quantifiers, so a proof holds for every number of brokers, dirs and partitions.
In a *finite* universe (a configuration's sizes) they are enumeration sorts and the quantifiers are expanded
into conjunctions and disjunctions over their elements: bounded model checking (proofs/bmc.py) and the
refinement check (proofs/refinement.py), where z3 evaluates a formula on concrete values, use it.

A state is a set of functions (``StateVars``); an action is a relation between two states, with parameters
(``broker``, ``dir``, ``partition``) and *witnesses* (functions the action chooses, e.g. which partitions the
head LeaderAndIsr names). Every relation is written once, against a universe, and is an over-approximation of
the explicit model's rule (docs/proofs.md, "Abstractions"); the refinement check ties the two.
"""
from __future__ import annotations

import itertools
from typing import Callable, NamedTuple

import z3

# ---- value sorts (the same in every universe) --------------------------------------------------------------
DirStatus, (GOOD, SATURATED, OFFLINE, REMOVED) = z3.EnumSort(
    "DirStatus", ["good", "saturated", "offline", "removed"])
Hosted, (H_NONE, H_OFFLINE, H_STOPPED, H_FOLLOWER, H_LEADER, H_SATURATED) = z3.EnumSort(
    "Hosted", ["none", "offline", "stopped", "follower", "leader", "saturated"])
DIR_VALUES = (GOOD, SATURATED, OFFLINE, REMOVED)            # indexed by model.storage.state's GOOD.. REMOVED
HOSTED_VALUES = (H_NONE, H_OFFLINE, H_STOPPED, H_FOLLOWER, H_LEADER, H_SATURATED)  # by H_NONE.. H_SATURATED
BOOL = z3.BoolSort()


# ---- universes ---------------------------------------------------------------------------------------------
class Symbolic:
    """Any number of brokers, dirs and partitions: uninterpreted sorts and real quantifiers."""
    finite = False

    def __init__(self):
        self.B = z3.DeclareSort("Broker")
        self.D = z3.DeclareSort("Dir")
        self.P = z3.DeclareSort("Partition")
        self.names = {self.B: "broker", self.D: "dir", self.P: "partition", BOOL: "isNew"}

    def _vars(self, sorts):
        return [z3.FreshConst(s, self.names[s][0]) for s in sorts]

    def forall(self, sorts, body: Callable):
        vs = self._vars(sorts)
        return z3.ForAll(vs, body(*vs))

    def exists(self, sorts, body: Callable):
        vs = self._vars(sorts)
        return z3.Exists(vs, body(*vs))


_FINITE_CACHE: dict = {}


class Finite:
    """A configuration's sizes: enumeration sorts, quantifiers expanded over their elements (so that a ground
    formula simplifies to true or false once its functions are given values)."""
    finite = True

    def __new__(cls, brokers: int, dirs: int, partitions: int):
        key = (brokers, dirs, partitions)
        if key not in _FINITE_CACHE:
            u = super().__new__(cls)
            tag = f"{brokers}x{dirs}x{partitions}"
            u.B, u.brokers = z3.EnumSort(f"Broker{tag}", [f"b{i}" for i in range(brokers)])
            u.D, u.dirs = z3.EnumSort(f"Dir{tag}", [f"d{i}" for i in range(dirs)])
            u.P, u.partitions = z3.EnumSort(f"Partition{tag}", [f"p{i}" for i in range(partitions)])
            u.names = {u.B: "broker", u.D: "dir", u.P: "partition", BOOL: "isNew"}
            u.elements = {u.B: list(u.brokers), u.D: list(u.dirs), u.P: list(u.partitions),
                          BOOL: [z3.BoolVal(False), z3.BoolVal(True)]}
            _FINITE_CACHE[key] = u
        return _FINITE_CACHE[key]

    def __init__(self, brokers: int, dirs: int, partitions: int):
        pass

    def combos(self, sorts):
        return itertools.product(*(self.elements[s] for s in sorts))

    def forall(self, sorts, body: Callable):
        return z3.And([body(*c) for c in self.combos(sorts)])

    def exists(self, sorts, body: Callable):
        return z3.Or([body(*c) for c in self.combos(sorts)])


# ---- the state vocabulary ----------------------------------------------------------------------------------
class Field(NamedTuple):
    name: str
    args: tuple          # "B", "D", "P", "Bool"
    range: str           # "Bool", "DirStatus", "Hosted"
    doc: str


FIELDS = (
    Field("up", ("B",), "Bool", "broker b is running and registered (Broker.up)"),
    Field("dir", ("B", "D"), "DirStatus", "status of dir d of broker b (Broker.dirs)"),
    Field("copy", ("B", "P", "D"), "Bool", "dir d of broker b holds a copy of p's log (Broker.copies)"),
    Field("hosted", ("B", "P"), "Hosted", "broker b's hold on p (Broker.hosted)"),
    Field("pending", ("B", "P", "Bool"), "Bool",
          "some LeaderAndIsr in b's inbox has an entry for p with isNewReplica = isNew"),
    Field("stop_pending", ("B", "P"), "Bool", "some StopReplica (delete=false) in b's inbox names p"),
    Field("replied", ("B",), "Bool", "b has a LeaderAndIsr response the controller has not handled"),
    Field("live", ("B",), "Bool", "the controller counts b as live (Controller.live)"),
    Field("notified", ("B",), "Bool", "a /log_dir_event_notification of b is pending (State.notifications)"),
    Field("created", ("P",), "Bool", "p's partition state is not NonExistentPartition"),
    Field("rec", ("P",), "Bool", "p has a leader-and-ISR record (leader_epoch >= 0)"),
)
FIELD_NAMES = tuple(f.name for f in FIELDS)


def sort_of(u, name: str):
    return {"B": u.B, "D": u.D, "P": u.P, "Bool": BOOL, "DirStatus": DirStatus, "Hosted": Hosted}[name]


class StateVars:
    """One state: a z3 function per field, named ``<prefix>.<field>`` (``FIELDS`` and ``sort_of``: a vocabulary's,
    KIP-112's here; proofs/kraft_system.py's subclass gives KRaft's)."""
    FIELDS = FIELDS

    def __init__(self, u, prefix: str):
        self.u, self.prefix = u, prefix
        for f in self.FIELDS:
            setattr(self, f.name, z3.Function(f"{prefix}.{f.name}", *(self.sort_of(u, a) for a in f.args),
                                              self.sort_of(u, f.range)))

    @staticmethod
    def sort_of(u, name: str):
        return sort_of(u, name)

    def function(self, name: str):
        return getattr(self, name)


# ---- derived predicates ------------------------------------------------------------------------------------
def live_dir(status):
    return z3.Or(status == GOOD, status == SATURATED)


def serving(h):
    return z3.Or(h == H_LEADER, h == H_FOLLOWER)


def has_offline_dir(u, s, b):
    return u.exists([u.D], lambda d: s.dir(b, d) == OFFLINE)


def has_live_copy(u, s, b, p):
    return u.exists([u.D], lambda d: z3.And(s.copy(b, p, d), live_dir(s.dir(b, d))))


def same(u, s, t, name: str, unless=None):
    """t's field equals s's, at every argument tuple (for which ``unless`` does not hold)."""
    f = next(x for x in FIELDS if x.name == name)
    sorts = [sort_of(u, a) for a in f.args]
    fs, ft = s.function(name), t.function(name)

    def body(*xs):
        eq = ft(*xs) == fs(*xs)
        return eq if unless is None else z3.Or(unless(*xs), eq)
    return u.forall(sorts, body)


def frame(u, s, t, changed: set, unless: dict | None = None):
    """Every field not in ``changed`` is unchanged (those in ``unless`` except where their condition holds)."""
    unless = unless or {}
    return [(f"{n} unchanged", same(u, s, t, n, unless.get(n))) for n in FIELD_NAMES if n not in changed]


# ---- the designs: which missing log a broker may create (model/zk/designs.py, may_create_log) ----------------
def may_create_kip112(u, s, b, is_new):
    return z3.Or(is_new, z3.Not(has_offline_dir(u, s, b)))


def may_create_legacy(u, s, b, is_new):
    return z3.BoolVal(True)


# The variant without KIP-112's isNewReplica check, by its names: "legacy" (deprecated alias) and its new name.
NO_CHECK_VARIANTS = ("kip112-no-isnew-check", "legacy")
VARIANTS = {"kip112": may_create_kip112, **{name: may_create_legacy for name in NO_CHECK_VARIANTS}}


# ---- actions -----------------------------------------------------------------------------------------------
class Action(NamedTuple):
    name: str
    params: tuple        # ((name, "B"|"D"|"P"), ...)
    witnesses: tuple     # ((name, arg sorts, range), ...): functions the action chooses
    relation: Callable   # (u, s, t, w, may_create, *args) -> [(label, formula), ...]
    doc: str


def _crash(u, s, t, b0):
    """b0 is down, hosts nothing, and its channels are empty (crashed(b), docs/model.md 6.2)."""
    return [
        ("b down", z3.Not(t.up(b0))),
        ("b hosts nothing", u.forall([u.P], lambda p: t.hosted(b0, p) == H_NONE)),
        ("b's inbox is empty", u.forall([u.P, BOOL], lambda p, n: z3.Not(t.pending(b0, p, n)))),
        ("b's StopReplicas are gone", u.forall([u.P], lambda p: z3.Not(t.stop_pending(b0, p)))),
        ("b's responses are gone", z3.Not(t.replied(b0))),
    ]


def create_topic(u, s, t, w, may, p0):
    return [
        ("guard: p does not exist", z3.Not(s.created(p0))),
        ("p exists", u.forall([u.P], lambda p: t.created(p) == z3.Or(s.created(p), p == p0))),
        ("only p may get a record", same(u, s, t, "rec", unless=lambda p: p == p0)),
        # LeaderAndIsr(isNewReplica=true) to running brokers, for p, once it has a record; nothing is removed.
        ("sends only isNew=true entries for p", u.forall([u.B, u.P, BOOL], lambda b, p, n: z3.And(
            z3.Implies(s.pending(b, p, n), t.pending(b, p, n)),
            z3.Implies(t.pending(b, p, n), z3.Or(s.pending(b, p, n),
                                                 z3.And(p == p0, n, s.up(b), s.live(b), t.rec(p0))))))),
    ] + frame(u, s, t, {"created", "rec", "pending"})


def _controller_event(u, s, t, keep: bool, changed: set):
    """What every controller event but CreateTopic may do: give records to created partitions, send
    LeaderAndIsr (either flag, for partitions with a record) and StopReplica to running brokers it counts as
    live (after the event's own change of ``live``: ControllerStep._send); ``keep``:
    nothing already in flight is removed (a failover empties every channel first)."""
    k = z3.BoolVal(keep)
    return [
        ("records only for created partitions, never removed", u.forall([u.P], lambda p: z3.And(
            z3.Implies(s.rec(p), t.rec(p)), z3.Implies(t.rec(p), z3.Or(s.rec(p), s.created(p)))))),
        # Kafka's replica state machine sends isNewReplica=true only to a NewReplica, and a replica is NewReplica
        # only until its partition's first leader-and-ISR record has been sent (docs/proofs.md, section 2).
        ("isNewReplica=true only for a partition getting its first record", u.forall(
            [u.B, u.P], lambda b, p: z3.Implies(z3.And(t.pending(b, p, z3.BoolVal(True)),
                                                        z3.Not(s.pending(b, p, z3.BoolVal(True)))),
                                                z3.Not(s.rec(p))))),
        ("LeaderAndIsr only to running brokers, for partitions with a record", u.forall(
            [u.B, u.P, BOOL], lambda b, p, n: z3.And(
                z3.Implies(z3.And(k, s.pending(b, p, n)), t.pending(b, p, n)),
                z3.Implies(t.pending(b, p, n), z3.Or(z3.And(k, s.pending(b, p, n)),
                                                     z3.And(s.up(b), t.live(b), t.rec(p))))))),
        ("StopReplica only to running brokers", u.forall([u.B, u.P], lambda b, p: z3.And(
            z3.Implies(z3.And(k, s.stop_pending(b, p)), t.stop_pending(b, p)),
            z3.Implies(t.stop_pending(b, p), z3.Or(z3.And(k, s.stop_pending(b, p)),
                                                   z3.And(s.up(b), t.live(b))))))),
    ] + frame(u, s, t, {"rec", "pending", "stop_pending"} | changed)


def controller_failover(u, s, t, w, may):
    return [
        ("live := the running brokers", u.forall([u.B], lambda b: t.live(b) == s.up(b))),
        ("notifications deleted", u.forall([u.B], lambda b: z3.Not(t.notified(b)))),
        ("responses lost", u.forall([u.B], lambda b: z3.Not(t.replied(b)))),
    ] + _controller_event(u, s, t, keep=False, changed={"live", "notified", "replied"})


def controller_broker_startup(u, s, t, w, may, b0):
    return [
        ("guard: b registered, not live", z3.And(s.up(b0), z3.Not(s.live(b0)))),
        ("b becomes live", u.forall([u.B], lambda b: t.live(b) == z3.Or(s.live(b), b == b0))),
    ] + _controller_event(u, s, t, keep=True, changed={"live"})


def controller_broker_failure(u, s, t, w, may, b0):
    return [
        ("guard: b not registered, live", z3.And(z3.Not(s.up(b0)), s.live(b0))),
        ("b no longer live", u.forall([u.B], lambda b: t.live(b) == z3.And(s.live(b), b != b0))),
    ] + _controller_event(u, s, t, keep=True, changed={"live"})


def controller_log_dir_event(u, s, t, w, may):
    return [
        ("guard: a notification is pending", u.exists([u.B], lambda b: s.notified(b))),
        ("notifications deleted", u.forall([u.B], lambda b: z3.Not(t.notified(b)))),
    ] + _controller_event(u, s, t, keep=True, changed={"notified"})


def controller_leader_and_isr_response(u, s, t, w, may, b0):
    return [
        ("guard: b has a response waiting", s.replied(b0)),
        ("only b's responses are consumed", same(u, s, t, "replied", unless=lambda b: b == b0)),
    ] + _controller_event(u, s, t, keep=True, changed={"replied"})


def dir_fail(u, s, t, w, may, b0, d0):
    halts = z3.And(s.up(b0), z3.Not(u.exists([u.D], lambda d: z3.And(d != d0, live_dir(s.dir(b0, d))))))
    stays = z3.And(s.up(b0), z3.Not(halts))
    out = [
        ("guard: the dir is live", live_dir(s.dir(b0, d0))),
        ("the dir is offline", u.forall([u.B, u.D], lambda b, d: t.dir(b, d) == z3.If(
            z3.And(b == b0, d == d0), OFFLINE, s.dir(b, d)))),
        ("a running broker writes a notification", u.forall([u.B], lambda b: t.notified(b) == z3.Or(
            s.notified(b), z3.And(b == b0, stays)))),
        ("other brokers unchanged", z3.And(*[same(u, s, t, n, unless=lambda b, *_: b == b0)
                                             for n in ("up", "hosted", "pending", "stop_pending", "replied")])),
        ("no live dir left: the broker halts", z3.Implies(halts, z3.And(*[f for _, f in _crash(u, s, t, b0)]))),
        ("a broker that was down: only the dir changes", z3.Implies(z3.Not(s.up(b0)), z3.And(*[
            same(u, s, t, n) for n in ("up", "hosted", "pending", "stop_pending", "replied")]))),
        ("still running: replicas hosted on the dir go offline", z3.Implies(stays, z3.And(
            t.up(b0),
            u.forall([u.P], lambda p: t.hosted(b0, p) == z3.If(
                z3.And(s.hosted(b0, p) != H_NONE, s.copy(b0, p, d0)), H_OFFLINE, s.hosted(b0, p))),
            *[same(u, s, t, n) for n in ("pending", "stop_pending", "replied")]))),
    ]
    return out + frame(u, s, t, {"dir", "notified", "up", "hosted", "pending", "stop_pending", "replied"})


def broker_crash(u, s, t, w, may, b0):
    return [("guard: b running", s.up(b0))] + _crash(u, s, t, b0) + [
        (f"other brokers' {n} unchanged", same(u, s, t, n, unless=lambda b, *_: b == b0))
        for n in ("up", "hosted", "pending", "stop_pending", "replied")
    ] + frame(u, s, t, {"up", "hosted", "pending", "stop_pending", "replied"})


def broker_restart(u, s, t, w, may, b0):
    return [
        ("guard: b down, its failure processed, a live dir", z3.And(
            z3.Not(s.up(b0)), z3.Not(s.live(b0)), u.exists([u.D], lambda d: live_dir(s.dir(b0, d))))),
        ("b runs", u.forall([u.B], lambda b: t.up(b) == z3.Or(s.up(b), b == b0))),
        ("saturated dirs of b are good again", u.forall([u.B, u.D], lambda b, d: t.dir(b, d) == z3.If(
            z3.And(b == b0, s.dir(b, d) == SATURATED), GOOD, s.dir(b, d)))),
    ] + frame(u, s, t, {"up", "dir"})


def _fix(status):
    def fix(u, s, t, w, may, b0, d0):
        return [
            ("guard: b down, the dir offline", z3.And(z3.Not(s.up(b0)), s.dir(b0, d0) == OFFLINE)),
            ("the dir's status", u.forall([u.B, u.D], lambda b, d: t.dir(b, d) == z3.If(
                z3.And(b == b0, d == d0), status, s.dir(b, d)))),
            ("the dir's copies are gone", u.forall([u.B, u.P, u.D], lambda b, p, d: t.copy(b, p, d) == z3.And(
                s.copy(b, p, d), z3.Not(z3.And(b == b0, d == d0))))),
        ] + frame(u, s, t, {"dir", "copy"})
    return fix


def broker_leader_and_isr(u, s, t, w, may, b0):
    handled, is_new = w["handled"], w["is_new"]

    def copies_same(p):
        return u.forall([u.D], lambda d: t.copy(b0, p, d) == s.copy(b0, p, d))

    def entry(p):
        h, h2 = s.hosted(b0, p), t.hosted(b0, p)
        unavailable = z3.Or(h == H_OFFLINE, h == H_SATURATED)
        keep = z3.And(h2 == h, copies_same(p))
        creates = z3.And(may(u, s, b0, is_new(p)), u.exists([u.D], lambda d: s.dir(b0, d) == GOOD))
        created_one = u.exists([u.D], lambda d: z3.And(
            s.dir(b0, d) == GOOD,
            u.forall([u.D], lambda d2: t.copy(b0, p, d2) == z3.Or(s.copy(b0, p, d2), d2 == d))))
        proceed = z3.If(
            has_live_copy(u, s, b0, p),
            z3.And(copies_same(p), z3.Or(serving(h2), h2 == H_SATURATED)),
            z3.If(creates, z3.And(created_one, serving(h2)), z3.And(h2 == H_OFFLINE, copies_same(p))))
        return z3.Or(
            z3.And(unavailable, keep),                              # 6.1 step 1: KAFKA_STORAGE_ERROR
            z3.And(h != H_NONE, z3.Not(unavailable), keep),         # 6.1 step 2: a stale leader epoch
            z3.And(z3.Not(unavailable), proceed))                   # 6.1 steps 3 to 5

    return [
        ("guard: a LeaderAndIsr heads b's inbox", u.exists([u.P], lambda p: handled(p))),
        ("its entries are in flight", u.forall([u.P], lambda p: z3.Implies(handled(p), s.pending(b0, p, is_new(p))))),
        ("each named partition as 6.1 says", u.forall([u.P], lambda p: z3.If(
            handled(p), entry(p), z3.And(t.hosted(b0, p) == s.hosted(b0, p), copies_same(p))))),
        ("other brokers' hosted and copies unchanged", z3.And(
            same(u, s, t, "hosted", unless=lambda b, p: b == b0),
            same(u, s, t, "copy", unless=lambda b, p, d: b == b0))),
        ("the request leaves the inbox", u.forall([u.B, u.P, BOOL], lambda b, p, n: z3.And(
            z3.Implies(t.pending(b, p, n), s.pending(b, p, n)),
            z3.Implies(b != b0, t.pending(b, p, n) == s.pending(b, p, n))))),
        # FIFO, in this vocabulary: a partition's isNewReplica=true entry is the first one sent to b for it
        # (with its first record), so it is handled before any other entry of it, and there is only one.
        ("an isNewReplica=true entry in flight is handled first, once", u.forall([u.P], lambda p: z3.Implies(
            handled(p), z3.And(z3.Implies(s.pending(b0, p, z3.BoolVal(True)), is_new(p)),
                               z3.Implies(is_new(p), z3.Not(t.pending(b0, p, z3.BoolVal(True)))))))),
        ("b answers", u.forall([u.B], lambda b: t.replied(b) == z3.Or(s.replied(b), b == b0))),
    ] + frame(u, s, t, {"hosted", "copy", "pending", "replied"})


def broker_stop_replica(u, s, t, w, may, b0):
    stopped = w["stopped"]
    return [
        ("guard: a StopReplica heads b's inbox", u.exists([u.P], lambda p: stopped(p))),
        ("its partitions are in flight", u.forall([u.P], lambda p: z3.Implies(stopped(p), s.stop_pending(b0, p)))),
        ("led or followed replicas named stop", u.forall([u.B, u.P], lambda b, p: t.hosted(b, p) == z3.If(
            z3.And(b == b0, stopped(p), serving(s.hosted(b, p))), H_STOPPED, s.hosted(b, p)))),
        ("the request leaves the inbox", u.forall([u.B, u.P], lambda b, p: z3.And(
            z3.Implies(t.stop_pending(b, p), s.stop_pending(b, p)),
            z3.Implies(b != b0, t.stop_pending(b, p) == s.stop_pending(b, p))))),
    ] + frame(u, s, t, {"hosted", "stop_pending"})


def stutter(u, s, t, w, may):
    return frame(u, s, t, set())


ACTIONS = (
    Action("CreateTopic", (("partition", "P"),), (), create_topic, "7.1"),
    Action("DirFail", (("broker", "B"), ("dir", "D")), (), dir_fail, "7.2"),
    Action("BrokerCrash", (("broker", "B"),), (), broker_crash, "7.3"),
    Action("BrokerRestart", (("broker", "B"),), (), broker_restart, "7.4"),
    Action("ReplaceDisk", (("broker", "B"), ("dir", "D")), (), _fix(GOOD), "7.5"),
    Action("RemoveDirFromConfig", (("broker", "B"), ("dir", "D")), (), _fix(REMOVED), "7.6"),
    Action("ControllerFailover", (), (), controller_failover, "7.7"),
    Action("ControllerBrokerStartup", (("broker", "B"),), (), controller_broker_startup, "7.8"),
    Action("ControllerBrokerFailure", (("broker", "B"),), (), controller_broker_failure, "7.9"),
    Action("ControllerLogDirEvent", (), (), controller_log_dir_event, "7.10"),
    Action("ControllerLeaderAndIsrResponse", (("broker", "B"),), (), controller_leader_and_isr_response, "7.11"),
    Action("BrokerLeaderAndIsr", (("broker", "B"),), (("handled", ("P",), "Bool"), ("is_new", ("P",), "Bool")),
           broker_leader_and_isr, "7.12"),
    Action("BrokerStopReplica", (("broker", "B"),), (("stopped", ("P",), "Bool"),), broker_stop_replica, "7.14"),
    Action("Stutter", (), (), stutter, "7.13, 7.15-7.18"),
)
ACTION_BY_NAME = {a.name: a for a in ACTIONS}

# The explicit model's rules (docs/model.md section 7, the protocol core and the data path) and the abstract
# action each refines. The data path and UpdateMetadata change nothing in this vocabulary.
RULE_TO_ACTION = {
    **{a.name: a.name for a in ACTIONS if a.name != "Stutter"},
    "BrokerUpdateMetadata": "Stutter", "Produce": "Stutter", "ReplicaFetch": "Stutter",
    "LeaderShrinkIsr": "Stutter", "Consume": "Stutter",
}


def witnesses(u, action: Action, prefix: str) -> dict:
    return {name: z3.Function(f"{prefix}.{name}", *(sort_of(u, a) for a in args), sort_of(u, rng))
            for name, args, rng in action.witnesses}


# Each action's relation by name: ``relation`` looks it up here on every call, so that a test can replace one
# (tests/proofs/test_proof_mutations.py) and every check (induction, BMC, vacuity, conformance) sees the change.
RELATIONS = {a.name: a.relation for a in ACTIONS}


def relation(u, action: Action, s, t, w, variant: str, args) -> list:
    """The labelled conjuncts of the action's relation between s and t, for the given parameters."""
    return RELATIONS[action.name](u, s, t, w, VARIANTS[variant], *args)


def initial(u, s) -> list:
    """docs/model.md 4.3, in this vocabulary."""
    return [
        ("every broker up", u.forall([u.B], lambda b: s.up(b))),
        ("every dir good", u.forall([u.B, u.D], lambda b, d: s.dir(b, d) == GOOD)),
        ("no copies", u.forall([u.B, u.P, u.D], lambda b, p, d: z3.Not(s.copy(b, p, d)))),
        ("nothing hosted", u.forall([u.B, u.P], lambda b, p: s.hosted(b, p) == H_NONE)),
        ("no LeaderAndIsr", u.forall([u.B, u.P, BOOL], lambda b, p, n: z3.Not(s.pending(b, p, n)))),
        ("no StopReplica", u.forall([u.B, u.P], lambda b, p: z3.Not(s.stop_pending(b, p)))),
        ("no responses", u.forall([u.B], lambda b: z3.Not(s.replied(b)))),
        ("every broker live", u.forall([u.B], lambda b: s.live(b))),
        ("no notification", u.forall([u.B], lambda b: z3.Not(s.notified(b)))),
        ("no partition", u.forall([u.P], lambda p: z3.Not(s.created(p)))),
        ("no record", u.forall([u.P], lambda p: z3.Not(s.rec(p)))),
    ]


def conj(labelled) -> z3.BoolRef:
    return z3.And([f for _, f in labelled])
