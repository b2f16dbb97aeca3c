"""The KRaft controller (kraft-core, model/kraft/rules.py and controller.py) as a parameterized transition system
over z3's uninterpreted sorts of brokers, dirs and partitions (docs/proofs.md, "KRaft").

A state is the controller's image (per broker: registered, fenced, the online dirs of its registration; per
partition: exists, Replicas, ISR, leader, Directories, leader epoch, partition epoch) and, per broker, two bits
of its own state: ``up`` and ``registered`` (this incarnation registered). The rest of a broker (its logs, its
failed dirs, its metadata offset, its assignment queue) is abstracted away: an action over-approximates what a
broker may send, e.g. a heartbeat may name any set of dirs offline and may ask to be unfenced whenever its
registration is fenced, and an AssignReplicasToDirs request may carry any set of (partition, dir) entries.

Each controller event writes records computed from the image before the event and replays them in order
(QuorumController); a record is ``change`` below (PartitionChangeBuilder.build without ELR or reassignment),
applied by ``apply``. The election picks *some* valid ISR member where Kafka picks the first in Replicas order,
and CreateTopic's Directories entry of a broker with registered dirs is UNASSIGNED or one of them (defaultDir
picks by their number): over-approximations. Every action is checked against the explicit model's rules on
every reachable state of a configuration, both ways (proofs/kraft_conformance.py, proofs/kraft_reverse.py).

``mutation`` (a name of MUTATIONS, or None) plants a bug in the relation: the tests show that the proofs or
the conformance check notice each.
"""
from __future__ import annotations

from typing import Callable, NamedTuple

import z3

from . import system
from .system import BOOL

INT = z3.IntSort()
MUTATIONS = {
    "alter-isr-any-broker": "AlterPartition's new ISR may name a broker that is not a replica",
    "create-dir-lost": "CreateTopic's Directories entry may be LOST",
    "leader-epoch-kept": "a record that names a leader leaves the leader epoch as it was",
    "offline-keeps-isr": "handleDirectoriesOffline writes no record (the broker stays in the ISR and leader)",
    "alter-isr-may-skip": "AlterPartition may also write nothing (the image unchanged): only the reverse "
                          "conformance check notices (proofs/kraft_reverse.py)",
    "fence-drops-followers": "fencing a follower also drops the other followers from the ISR (it keeps only the "
                             "leader): a drift no proof notices, which only a cluster of three brokers shows",
}

_DIR_REF: dict = {}


def dir_ref_sort(u):
    """A Directories entry: a dir of the broker, or DirectoryId's UNASSIGNED, MIGRATING or LOST."""
    key = str(u.D)
    if key not in _DIR_REF:
        dt = z3.Datatype(f"DirRef_{key}")
        dt.declare("unassigned")
        dt.declare("migrating")
        dt.declare("lost")
        dt.declare("dir", ("dir_of", u.D))
        _DIR_REF[key] = dt.create()
    return _DIR_REF[key]


# ---- the state vocabulary ------------------------------------------------------------------------------------
class Field(NamedTuple):
    name: str
    args: tuple          # "B", "D", "P"
    range: str           # "Bool", "Int", "B", "D", "DirRef"
    doc: str


FIELDS = (
    Field("up", ("B",), "Bool", "the broker is running (Broker.up)"),
    Field("registered", ("B",), "Bool", "this incarnation registered (Broker.registered)"),
    Field("reg", ("B",), "Bool", "the image has a registration of the broker"),
    Field("fenced", ("B",), "Bool", "its registration is fenced"),
    Field("regdir", ("B", "D"), "Bool", "dir d is among its registration's online dirs (LogDirs)"),
    Field("some_dir", ("B",), "D", "a registered dir of b if it has any (a witness: whether b registered none)"),
    Field("exists", ("P",), "Bool", "the partition exists (leader_epoch >= 0)"),
    Field("replica", ("P", "B"), "Bool", "b is in Replicas"),
    Field("isr", ("P", "B"), "Bool", "b is in the ISR"),
    Field("has_leader", ("P",), "Bool", "the partition has a leader"),
    Field("leader", ("P",), "B", "its leader (meaningful when has_leader)"),
    Field("dirs", ("P", "B"), "DirRef", "Directories[b] (UNASSIGNED for a broker that is not a replica)"),
    Field("leader_epoch", ("P",), "Int", "the leader epoch (-1 before creation)"),
    Field("partition_epoch", ("P",), "Int", "the partition epoch (-1 before creation)"),
)
FIELD_NAMES = tuple(f.name for f in FIELDS)
FIELD_BY_NAME = {f.name: f for f in FIELDS}


def sort_of(u, name: str):
    return {"B": u.B, "D": u.D, "P": u.P, "Bool": BOOL, "Int": INT, "DirRef": dir_ref_sort(u)}[name]


class StateVars(system.StateVars):
    """One state of KRaft's vocabulary: a z3 function per field, named ``<prefix>.<field>``."""
    FIELDS = FIELDS
    sort_of = staticmethod(sort_of)

    def view(self) -> "View":
        return View(**{n: getattr(self, n) for n in FIELD_NAMES})


class View(NamedTuple):
    """A state as callables (a StateVars' functions, or the image part-way through an event's records)."""
    up: Callable
    registered: Callable
    reg: Callable
    fenced: Callable
    regdir: Callable
    some_dir: Callable
    exists: Callable
    replica: Callable
    isr: Callable
    has_leader: Callable
    leader: Callable
    dirs: Callable
    leader_epoch: Callable
    partition_epoch: Callable


def _memo(f: Callable) -> Callable:
    """``f`` remembering its result per argument tuple (z3 terms, by AST id; the arguments are kept, so that an id is
    never reused): an image part-way through an event is a chain of functions over the one before, and without
    this every application would rebuild the whole chain (building the relations, not solving them, was the cost)."""
    cache: dict = {}

    def g(*xs):
        key = tuple(x.get_id() if isinstance(x, z3.AstRef) else x for x in xs)
        hit = cache.get(key)
        if hit is None:
            hit = cache[key] = (xs, f(*xs))
        return hit[1]
    return g


def memo_view(v: "View") -> "View":
    return View(*(_memo(fn) for fn in v))


def well_formed(u, s) -> z3.BoolRef:
    """some_dir(b) is a registered dir whenever b registered one (so ``registered_none`` needs no quantifier)."""
    return u.forall([u.B, u.D], lambda b, d: z3.Implies(s.regdir(b, d), s.regdir(b, s.some_dir(b))))


# ---- derived predicates ----------------------------------------------------------------------------------------
def active(v: View, b):
    """ClusterControlManager.isActive (no controlled shutdown in kraft-core)."""
    return z3.And(v.reg(b), z3.Not(v.fenced(b)))


def registered_none(v: View, b):
    return z3.Not(v.regdir(b, v.some_dir(b)))


def online(u, v: View, ref, b):
    """BrokerRegistration.hasOnlineDir with DirectoryId.isOnline (KAFKA-16162 fixed): UNASSIGNED and MIGRATING
    are online, LOST is not, a dir is if registered or if the broker registered none."""
    R = dir_ref_sort(u)
    return z3.Or(R.is_unassigned(ref), R.is_migrating(ref),
                 z3.And(R.is_dir(ref), z3.Or(registered_none(v, b), v.regdir(b, R.dir_of(ref)))))


def acceptor(u, v: View, p, b, remove=None, add=None, mutation=None):
    """LeaderAcceptor.test on the image ``v``: not the broker being removed; the broker being added or active;
    a replica whose Directories entry is online for its registration."""
    return z3.And(z3.BoolVal(True) if remove is None else b != remove, v.reg(b),
                  z3.Not(v.fenced(b)) if add is None else z3.Or(b == add, z3.Not(v.fenced(b))),
                  v.replica(p, b), online(u, v, v.dirs(p, b), b))


# ---- records ---------------------------------------------------------------------------------------------------
class Change(NamedTuple):
    """A PartitionChangeRecord computed from an image, as functions of the partition: what it sets."""
    leader_set: Callable     # p -> Bool: the record names a leader (or none): the leader changed
    new_has: Callable        # p -> Bool
    new_leader: Callable     # p -> B
    isr_set: Callable        # p -> Bool
    new_isr: Callable        # (p, b) -> Bool
    dirs_set: Callable       # p -> Bool
    new_dirs: Callable       # (p, b) -> DirRef
    nonempty: Callable       # p -> Bool: the record changes something (else no record is written)


class Witness(tuple):
    """A witness's labelled constraint ``(label, formula)``, carrying the witness function ``fn``, the predicate
    ``pred`` it witnesses and whether it is an election's pick: the reverse conformance check
    (proofs/kraft_reverse.py) pins an election's witness to Kafka's pick, the first valid broker in Replicas order."""

    def __new__(cls, label: str, formula, fn, pred: Callable, election: bool):
        self = super().__new__(cls, (label, formula))
        self.fn, self.pred, self.election = fn, pred, election
        return self


def choose(u, cons: list, name: str, pred: Callable, election: bool = False):
    """A witness w: P -> B with pred(p, w(p)) whenever pred(p, b) for some b (Hilbert's choice, so that 'some
    broker' needs no existential quantifier)."""
    w = z3.Function(name, u.P, u.B)
    cons.append(Witness(f"{name} is a witness",
                        u.forall([u.P, u.B], lambda p, b: z3.Implies(pred(p, b), pred(p, w(p)))), w, pred, election))
    return w


def change(u, v: View, cons: list, name: str, *, remove=None, add=None, isr=None, dirs=None, mutation=None):
    """PartitionChangeBuilder.build on image ``v`` (ONLINE election, no ELR, no reassignment): the target ISR
    (``isr`` or the current one, without ``remove``); the leader stays if it is valid (in the target and passing
    LeaderAcceptor: tryElection runs on every build), else some valid target member (Kafka: the first in Replicas
    order), else none; an empty target keeps the
    current ISR; ``dirs``: new Directories."""
    @_memo
    def target(p, b):
        member = v.isr(p, b) if isr is None else isr(p, b)
        return member if remove is None else z3.And(member, b != remove)

    @_memo
    def valid(p, b):
        return z3.And(target(p, b), acceptor(u, v, p, b, remove, add, mutation))

    cand = choose(u, cons, f"{name}.candidate", valid, election=True)
    member = choose(u, cons, f"{name}.target_member", target)

    @_memo
    def keeps(p):
        return z3.And(v.has_leader(p), valid(p, v.leader(p)))

    @_memo
    def new_has(p):
        return z3.If(keeps(p), z3.BoolVal(True), valid(p, cand(p)))

    @_memo
    def new_leader(p):
        return z3.If(keeps(p), v.leader(p), cand(p))

    @_memo
    def new_isr(p, b):
        return z3.If(target(p, member(p)), target(p, b), v.isr(p, b))

    isr_diff = choose(u, cons, f"{name}.isr_diff", lambda p, b: new_isr(p, b) != v.isr(p, b))

    @_memo
    def isr_set(p):
        return new_isr(p, isr_diff(p)) != v.isr(p, isr_diff(p))

    @_memo
    def leader_set(p):
        return z3.Or(new_has(p) != v.has_leader(p), z3.And(new_has(p), new_leader(p) != v.leader(p)))

    new_dirs = v.dirs if dirs is None else dirs
    if dirs is None:
        @_memo
        def dirs_set(p):
            return z3.BoolVal(False)
    else:
        dirs_diff = choose(u, cons, f"{name}.dirs_diff", lambda p, b: new_dirs(p, b) != v.dirs(p, b))

        @_memo
        def dirs_set(p):
            return new_dirs(p, dirs_diff(p)) != v.dirs(p, dirs_diff(p))

    return Change(leader_set, new_has, new_leader, isr_set, new_isr, dirs_set, new_dirs,
                  lambda p: z3.Or(leader_set(p), isr_set(p), dirs_set(p)))


def apply(v: View, rec: Change, cond: Callable, mutation=None) -> View:
    """Replay the record on the partitions where ``cond`` holds and it changes something
    (PartitionRegistration.merge: the partition epoch + 1, the leader epoch + 1 when it names a leader)."""
    @_memo
    def on(p):
        return z3.And(cond(p), rec.nonempty(p))

    @_memo
    def sets_leader(p):
        return z3.And(on(p), rec.leader_set(p))
    bump = 0 if mutation == "leader-epoch-kept" else 1
    return memo_view(v._replace(
        has_leader=lambda p: z3.If(sets_leader(p), rec.new_has(p), v.has_leader(p)),
        leader=lambda p: z3.If(sets_leader(p), rec.new_leader(p), v.leader(p)),
        isr=lambda p, b: z3.If(z3.And(on(p), rec.isr_set(p)), rec.new_isr(p, b), v.isr(p, b)),
        dirs=lambda p, b: z3.If(z3.And(on(p), rec.dirs_set(p)), rec.new_dirs(p, b), v.dirs(p, b)),
        leader_epoch=lambda p: v.leader_epoch(p) + z3.If(sets_leader(p), bump, 0),
        partition_epoch=lambda p: v.partition_epoch(p) + z3.If(on(p), 1, 0)))


def elected_pass(u, image: View, rec: Change, cond: Callable):
    """kraft_leader_passes_leader_acceptor for one record on each partition: a leader it names passes
    LeaderAcceptor on ``image``, the image right after the record."""
    return u.forall([u.P], lambda p: z3.Implies(
        z3.And(cond(p), rec.nonempty(p), rec.leader_set(p), rec.new_has(p)),
        acceptor(u, image, p, rec.new_leader(p))))


def with_broker(v: View, b0, **fields) -> View:
    """``v`` with the given per-broker fields of broker b0 replaced (value or callable of the other args)."""
    out = {}
    for name, value in fields.items():
        old = getattr(v, name)
        if callable(value):
            out[name] = (lambda old, new: lambda b, *rest: z3.If(b == b0, new(*rest), old(b, *rest)))(old, value)
        else:
            out[name] = (lambda old, new: lambda b: z3.If(b == b0, new, old(b)))(old, value)
    return memo_view(v._replace(**out))


# ---- actions ---------------------------------------------------------------------------------------------------
class Step(NamedTuple):
    """An action's relation: its constraints (guard and witnesses' definitions), the image it ends in, and
    kraft_leader_passes_leader_acceptor for the records it writes."""
    constraints: list
    post: View
    elected_ok: z3.BoolRef


class Action(NamedTuple):
    name: str
    params: tuple        # ((name, "B"|"P"), ...)
    step: Callable       # (u, v, name, mutation, *args) -> Step
    rules: tuple         # the explicit rules it stands for
    doc: str


def _create_topic(u, v, name, mutation, p0):
    R = dir_ref_sort(u)
    replica = z3.Function(f"{name}.replicas", u.B, BOOL)
    default = z3.Function(f"{name}.default_dir", u.B, R)
    leader = z3.Const(f"{name}.leader", u.B)

    def in_isr(b):
        return z3.And(replica(b), active(v, b))

    def lost_too(ref):
        return z3.Or(ref == R.lost, ref == R.unassigned) if mutation == "create-dir-lost" else ref == R.unassigned
    cons = [
        ("the partition does not exist", z3.Not(v.exists(p0))),
        ("every replica is registered", u.forall([u.B], lambda b: z3.Implies(replica(b), v.reg(b)))),
        ("the leader is an active replica", in_isr(leader)),
        ("defaultDir: MIGRATING for no registered dir, else UNASSIGNED or a registered dir",
         u.forall([u.B], lambda b: z3.Implies(replica(b), z3.If(
             registered_none(v, b), default(b) == R.migrating,
             z3.Or(lost_too(default(b)), z3.And(R.is_dir(default(b)), v.regdir(b, R.dir_of(default(b))))))))),
    ]

    def at(old, new):
        return lambda p, *rest: z3.If(p == p0, new(*rest), old(p, *rest))
    post = memo_view(v._replace(
        exists=at(v.exists, lambda: z3.BoolVal(True)), replica=at(v.replica, replica), isr=at(v.isr, in_isr),
        has_leader=at(v.has_leader, lambda: z3.BoolVal(True)), leader=at(v.leader, lambda: leader),
        dirs=at(v.dirs, lambda b: z3.If(replica(b), default(b), R.unassigned)),
        leader_epoch=at(v.leader_epoch, lambda: z3.IntVal(0)),
        partition_epoch=at(v.partition_epoch, lambda: z3.IntVal(0))))
    return Step(cons, post, acceptor(u, post, p0, leader))


def _register(u, v, name, mutation, b0):
    dirs = z3.Function(f"{name}.log_dirs", u.D, BOOL)
    cons = [("the broker runs and has not registered", z3.And(v.up(b0), z3.Not(v.registered(b0))))]
    post = with_broker(v, b0, reg=z3.BoolVal(True), fenced=z3.BoolVal(True), registered=z3.BoolVal(True),
                       regdir=dirs)
    return Step(cons, post, z3.BoolVal(True))


def _crash(u, v, name, mutation, b0):
    cons = [("the broker runs", v.up(b0))]
    return Step(cons, with_broker(v, b0, up=z3.BoolVal(False), registered=z3.BoolVal(False)), z3.BoolVal(True))


def _restart(u, v, name, mutation, b0):
    cons = [("the broker is down", z3.Not(v.up(b0))),
            ("its registration is fenced or gone", z3.Or(z3.Not(v.reg(b0)), v.fenced(b0)))]
    return Step(cons, with_broker(v, b0, up=z3.BoolVal(True)), z3.BoolVal(True))


def _heartbeat(u, v, name, mutation, b0):
    R = dir_ref_sort(u)
    unfence = z3.Bool(f"{name}.unfence")
    offline = z3.Function(f"{name}.offline_dirs", u.D, BOOL)
    cons = [("the broker runs registered", z3.And(v.up(b0), v.registered(b0), v.reg(b0))),
            ("it is unfenced only if fenced", z3.Implies(unfence, v.fenced(b0)))]
    # handleBrokerUnfenced: the registration change, then elections for the leaderless partitions (b0 added).
    unfenced = with_broker(v, b0, fenced=z3.If(unfence, z3.BoolVal(False), v.fenced(b0)))
    rec_u = change(u, v, cons, f"{name}.unfence_election", add=b0, mutation=mutation)

    def leaderless(p):
        return z3.And(unfence, v.exists(p), z3.Not(v.has_leader(p)))
    after_u = apply(unfenced, rec_u, leaderless, mutation)
    # handleDirectoriesOffline, from the image before the event: the partitions whose Directories[b0] is a
    # registered dir the heartbeat names lose b0; then the registration drops those dirs.
    rec_o = change(u, v, cons, f"{name}.offline", remove=b0, mutation=mutation)

    def under(p):
        ref = v.dirs(p, b0)
        if mutation == "offline-keeps-isr":
            return z3.BoolVal(False)
        return z3.And(v.exists(p), v.replica(p, b0), R.is_dir(ref), v.regdir(b0, R.dir_of(ref)),
                      offline(R.dir_of(ref)))
    after_o = apply(after_u, rec_o, under, mutation)
    post = with_broker(after_o, b0, regdir=lambda d: z3.And(v.regdir(b0, d), z3.Not(offline(d))))
    return Step(cons, post, z3.And(elected_pass(u, after_u, rec_u, leaderless),
                                   elected_pass(u, after_o, rec_o, under)))


def _fence(u, v, name, mutation, b0):
    cons = [("the broker is down with an unfenced registration",
             z3.And(z3.Not(v.up(b0)), v.reg(b0), z3.Not(v.fenced(b0))))]
    isr = None
    if mutation == "fence-drops-followers":
        def isr(p, b):
            return z3.And(v.isr(p, b), z3.Or(z3.Not(v.has_leader(p)), v.leader(p) == b0, b == v.leader(p)))
    rec = change(u, v, cons, f"{name}.fenced", remove=b0, isr=isr, mutation=mutation)

    def with_b0(p):
        return z3.And(v.exists(p), v.isr(p, b0))
    after = apply(v, rec, with_b0, mutation)
    return Step(cons, with_broker(after, b0, fenced=z3.BoolVal(True)), elected_pass(u, after, rec, with_b0))


def _assign(u, v, name, mutation, b0):
    R = dir_ref_sort(u)
    entry = z3.Function(f"{name}.entry", u.P, BOOL)
    entry_dir = z3.Function(f"{name}.entry_dir", u.P, u.D)
    cons = [("the broker is registered", v.reg(b0))]

    def accepted(p):
        return z3.And(entry(p), v.exists(p), v.replica(p, b0))
    rec_d = change(u, v, cons, f"{name}.directories", mutation=mutation,
                   dirs=lambda p, b: z3.If(b == b0, R.dir(entry_dir(p)), v.dirs(p, b)))
    after_d = apply(v, rec_d, accepted, mutation)

    def offline(p):
        return z3.And(accepted(p), z3.Not(online(u, v, R.dir(entry_dir(p)), b0)))
    rec_o = change(u, v, cons, f"{name}.offline", remove=b0, mutation=mutation)
    after_o = apply(after_d, rec_o, offline, mutation)
    return Step(cons, after_o, z3.And(elected_pass(u, after_d, rec_d, accepted),
                                      elected_pass(u, after_o, rec_o, offline)))


def _alter_partition(u, v, name, mutation, p0):
    isr = z3.Function(f"{name}.isr", u.B, BOOL)
    cons = [("the partition has a leader", z3.And(v.exists(p0), v.has_leader(p0))),
            ("the new ISR holds replicas only", z3.BoolVal(True) if mutation == "alter-isr-any-broker" else
             u.forall([u.B], lambda b: z3.Implies(isr(b), v.replica(p0, b)))),
            ("the new ISR holds the leader", isr(v.leader(p0)))]
    rec = change(u, v, cons, f"{name}.isr_change", isr=lambda p, b: isr(b), mutation=mutation)
    skip = z3.Bool(f"{name}.skip") if mutation == "alter-isr-may-skip" else z3.BoolVal(False)

    def at_p0(p):
        return z3.And(p == p0, z3.Not(skip))
    after = apply(v, rec, at_p0, mutation)
    return Step(cons, after, elected_pass(u, after, rec, at_p0))


def _stutter(u, v, name, mutation, b0):
    return Step([], v, z3.BoolVal(True))


ACTIONS = (
    Action("CreateTopic", (("partition", "P"),), _create_topic, ("CreateTopic",),
           "ReplicationControlManager.createTopic"),
    Action("BrokerRegister", (("broker", "B"),), _register, ("BrokerRegister",),
           "ClusterControlManager.registerBroker, with any LogDirs"),
    Action("BrokerCrash", (("broker", "B"),), _crash, ("BrokerCrash",), "the broker stops (memory lost)"),
    Action("BrokerRestart", (("broker", "B"),), _restart, ("BrokerRestart",),
           "the broker starts once its registration is fenced"),
    Action("BrokerHeartbeat", (("broker", "B"),), _heartbeat, ("BrokerHeartbeat",),
           "processBrokerHeartbeat: handleBrokerUnfenced if fenced (any time), handleDirectoriesOffline for any dirs"),
    Action("ControllerFenceBroker", (("broker", "B"),), _fence, ("ControllerFenceBroker",),
           "handleBrokerFenced after a crash"),
    Action("ControllerAssignReplicasToDirs", (("broker", "B"),), _assign, ("ControllerAssignReplicasToDirs",),
           "handleAssignReplicasToDirs with any entries"),
    Action("AlterPartition", (("partition", "P"),), _alter_partition, ("LeaderShrinkIsr", "ReplicaFetch"),
           "an ISR change by the leader: any ISR of replicas holding the leader"),
    Action("BrokerLocal", (("broker", "B"),), _stutter,
           ("BrokerLoad", "BrokerReplay", "BrokerSendAssignments", "DirFail", "ReplaceDisk", "RemoveDirFromConfig",
            "Produce", "ReplicaFetch", "Consume", "LeaderShrinkIsr"),
           "a broker's own step: the controller's image and up/registered unchanged"),
)
ACTION_BY_NAME = {a.name: a for a in ACTIONS}


def params(u, action, prefix: str) -> tuple:
    return tuple(z3.Const(f"{prefix}.{n}", sort_of(u, s)) for n, s in action.params)


def step(u, action, v: View, args, name: str, mutation=None) -> Step:
    return action.step(u, v, name, mutation, *args)


def equals(u, t, v: View) -> list:
    """The post-state ``t`` is the image ``v`` (some_dir is a witness of ``t``'s own: not compared)."""
    out = []
    for f in FIELDS:
        if f.name in ("some_dir", "leader"):
            continue
        sorts = [sort_of(u, a) for a in f.args]
        out.append((f"{f.name}", u.forall(sorts, lambda *xs, n=f.name: getattr(t, n)(*xs) == getattr(v, n)(*xs))))
    out.append(("leader", u.forall([u.P], lambda p: z3.Implies(v.has_leader(p), t.leader(p) == v.leader(p)))))
    return out


def relation(u, action, s: StateVars, t: StateVars, args, name: str, mutation=None):
    """(labelled constraints, kraft_leader_passes_leader_acceptor for this step)."""
    st = step(u, action, s.view(), args, name, mutation)
    return ([*st.constraints, ("pre well formed", well_formed(u, s)), ("post well formed", well_formed(u, t)),
             *equals(u, t, st.post)], st.elected_ok)


def initial(u, s: StateVars) -> list:
    """started_log: every broker running, registered with all its dirs and unfenced; no partition."""
    R = dir_ref_sort(u)
    return [
        ("brokers up and registered", u.forall([u.B], lambda b: z3.And(
            s.up(b), s.registered(b), s.reg(b), z3.Not(s.fenced(b))))),
        ("every dir registered", u.forall([u.B, u.D], lambda b, d: s.regdir(b, d))),
        ("well formed", well_formed(u, s)),
        ("no partition", u.forall([u.P], lambda p: z3.And(
            z3.Not(s.exists(p)), z3.Not(s.has_leader(p)), s.leader_epoch(p) == -1, s.partition_epoch(p) == -1))),
        ("no replica", u.forall([u.P, u.B], lambda p, b: z3.And(
            z3.Not(s.replica(p, b)), z3.Not(s.isr(p, b)), s.dirs(p, b) == R.unassigned))),
    ]


def conj(labelled) -> z3.BoolRef:
    return z3.And([f for _, f in labelled])
