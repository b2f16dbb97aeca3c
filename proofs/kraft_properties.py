"""KRaft's properties about the controller's image, as z3 formulas over proofs/kraft_system.py's vocabulary, and
the lemmas their inductive invariants need (docs/proofs.md, "KRaft"). Each names the explicit invariant it is
checked against on every reachable state (proofs/kraft_conformance.py)."""
from __future__ import annotations

from typing import Callable, NamedTuple

import z3

from .kraft_system import acceptor, active, dir_ref_sort, registered_none


class Lemma(NamedTuple):
    name: str
    formula: Callable    # (u, s) -> BoolRef
    statement: str


class Property(NamedTuple):
    id: str
    kind: str            # "state" or "transition"
    statement: str
    formula: Callable    # state: (u, s) -> BoolRef; transition: (u, s, t, elected_ok) -> BoolRef
    lemmas: tuple        # names of LEMMAS
    explicit: str        # the explicit invariant's id


def _lifecycle(u, s):
    return u.forall([u.B], lambda b: z3.And(
        z3.Implies(s.registered(b), z3.And(s.up(b), s.reg(b))),
        z3.Implies(z3.And(s.up(b), z3.Not(s.registered(b))), z3.Or(z3.Not(s.reg(b)), s.fenced(b)))))


def _isr_within_replicas(u, s):
    return z3.And(
        u.forall([u.P, u.B], lambda p, b: z3.Implies(s.isr(p, b), z3.And(s.exists(p), s.replica(p, b)))),
        u.forall([u.P], lambda p: z3.Implies(s.exists(p), u.exists([u.B], lambda b: s.isr(p, b)))))


def _leader_in_isr(u, s):
    return u.forall([u.P], lambda p: z3.Implies(s.has_leader(p), z3.And(s.exists(p), s.isr(p, s.leader(p)))))


def _never_lost(u, s):
    R = dir_ref_sort(u)
    return u.forall([u.P, u.B], lambda p, b: z3.Implies(s.replica(p, b), s.dirs(p, b) != R.lost))


def _replicas_registered(u, s):
    return u.forall([u.P, u.B], lambda p, b: z3.Implies(s.replica(p, b), z3.And(s.exists(p), s.reg(b))))


def _epochs(u, s):
    return u.forall([u.P], lambda p: z3.If(
        s.exists(p), z3.And(s.leader_epoch(p) >= 0, s.partition_epoch(p) >= 0),
        z3.And(s.leader_epoch(p) == -1, s.partition_epoch(p) == -1)))


def _leaderless_unacceptable(u, s):
    v = s.view()
    return u.forall([u.P, u.B], lambda p, b: z3.Implies(
        z3.And(s.exists(p), z3.Not(s.has_leader(p)), s.isr(p, b), z3.Not(registered_none(v, b))),
        z3.Not(acceptor(u, v, p, b))))


def _shared_isr_active(u, s):
    v = s.view()
    return u.forall([u.P, u.B, u.B], lambda p, b, c: z3.Implies(
        z3.And(s.isr(p, b), s.isr(p, c), b != c), active(v, b)))


LEMMAS = {
    "leaderless_unacceptable": Lemma("leaderless_unacceptable", _leaderless_unacceptable,
                                     "no ISR member of a partition without a leader passes LeaderAcceptor, "
                                     "unless it registered no dir"),
    "never_lost": Lemma("never_lost", _never_lost, "no replica's Directories entry is LOST"),
    "shared_isr_active": Lemma("shared_isr_active", _shared_isr_active,
                               "a broker in an ISR with another member is active"),
    "broker_lifecycle": Lemma("broker_lifecycle", _lifecycle,
                              "a broker that registered this incarnation runs and has a registration; a running "
                              "broker that has not registered yet has none or a fenced one"),
    "isr_within_replicas": Lemma("isr_within_replicas", _isr_within_replicas,
                                 "ISR members are replicas of an existing partition, whose ISR is not empty"),
    "replicas_registered": Lemma("replicas_registered", _replicas_registered,
                                 "every replica of a partition is a registered broker"),
    "epochs_of_existing": Lemma("epochs_of_existing", _epochs,
                                "an existing partition has epochs >= 0, a missing one -1"),
}


# The lemmas tried for the two leader properties; leaderless_unacceptable and shared_isr_active are not inductive
# (docs/proofs.md, "KRaft": their CTIs).
LEADER_LEMMAS = ("isr_within_replicas", "replicas_registered", "never_lost", "broker_lifecycle",
                 "leaderless_unacceptable", "shared_isr_active")


def _epochs_monotone(u, s, t, elected_ok):
    return u.forall([u.P], lambda p: z3.And(
        t.leader_epoch(p) >= s.leader_epoch(p), t.partition_epoch(p) >= s.partition_epoch(p),
        z3.Implies(z3.Or(t.has_leader(p) != s.has_leader(p),
                         z3.And(t.has_leader(p), t.leader(p) != s.leader(p))),
                   t.leader_epoch(p) > s.leader_epoch(p))))


def _elected(u, s, t, elected_ok):
    return elected_ok


PROPERTIES = {p.id: p for p in (
    Property("kraft_leader_passes_leader_acceptor", "transition",
             "Every leader a metadata record names passes LeaderAcceptor on the image at that record: registered, "
             "active (or the broker the same event unfenced) and with its Directories entry online.",
             _elected, LEADER_LEMMAS, "kraft_leader_passes_leader_acceptor"),
    Property("kraft_isr_within_replicas", "state",
             "Every ISR member is a replica of an existing partition, and an existing partition's ISR is never "
             "empty.",
             lambda u, s, *_: _isr_within_replicas(u, s), (), "kraft_isr_within_replicas"),
    Property("kraft_leader_in_isr_or_none", "state",
             "A partition's leader, when it has one, is a member of its ISR.",
             lambda u, s, *_: _leader_in_isr(u, s), LEADER_LEMMAS, "kraft_leader_in_isr_or_none"),
    Property("kraft_directories_never_lost", "state",
             "No replica's Directories entry is LOST (it is a dir of the broker, UNASSIGNED or MIGRATING).",
             lambda u, s, *_: _never_lost(u, s), (), "kraft_directories_never_lost"),
    Property("kraft_epochs_monotone", "transition",
             "Leader and partition epochs never decrease, and every change of leader raises the leader epoch.",
             _epochs_monotone, ("epochs_of_existing",), "kraft_epochs_monotone"),
)}


def invariant_parts(prop: Property) -> list:
    """The inductive invariant: the property (if a state property) and its lemmas, named."""
    parts = [(prop.id, prop.formula)] if prop.kind == "state" else []
    return parts + [(name, LEMMAS[name].formula) for name in prop.lemmas]
