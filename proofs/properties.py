"""The properties proved for every cluster size, and the lemmas that make them inductive (docs/proofs.md).

A *lemma* is a state formula, named and explained. A *property* is either a state formula or a transition
formula (over the pre-state, the post-state, the action's parameters and witnesses); it is proved by showing
that its *inductive invariant* (the conjunction of its lemmas, and of the property itself when it is a state
property) holds initially (initiation) and is preserved by every action (consecution), and, for a transition
property, that every action from a state satisfying the invariant satisfies it.
"""
from __future__ import annotations

from typing import Callable, NamedTuple

import z3

from .system import BOOL, H_FOLLOWER, H_LEADER, H_NONE, H_STOPPED, SATURATED, has_live_copy, has_offline_dir, serving


class Lemma(NamedTuple):
    id: str
    why: str
    formula: Callable    # (u, s) -> BoolRef


class Property(NamedTuple):
    id: str
    kind: str            # "state" or "transition"
    statement: str
    lemmas: tuple        # lemma ids
    formula: Callable    # state: (u, s) -> BoolRef; transition: (u, s, t, action name, w, args) -> BoolRef
    why: str


LEMMAS = {lemma.id: lemma for lemma in (
    Lemma("requests_only_to_running_brokers",
          "A LeaderAndIsr or StopReplica is in a broker's inbox only while the broker runs and the controller "
          "counts it as live: the controller sends only to such brokers, a crash (or halt) empties the inbox, "
          "and the controller stops counting a broker as live only once it is down. Without it, a broker that "
          "is down could handle a request and host a replica.",
          lambda u, s: u.forall([u.B, u.P, BOOL], lambda b, p, n: z3.And(
              z3.Implies(s.pending(b, p, n), z3.And(s.up(b), s.live(b))),
              z3.Implies(s.stop_pending(b, p), z3.And(s.up(b), s.live(b)))))),
    Lemma("requests_only_for_records",
          "A LeaderAndIsr entry names a partition that has a leader-and-ISR record, and only a created partition "
          "has one: the controller sends the record it holds, and the core never deletes a record.",
          lambda u, s: u.forall([u.B, u.P, BOOL], lambda b, p, n: z3.And(
              z3.Implies(s.pending(b, p, n), s.rec(p)), z3.Implies(s.rec(p), s.created(p))))),
    Lemma("hosted_replicas_have_a_live_copy",
          "A replica a broker leads, follows or has stopped has a copy on a live dir: request handling makes a "
          "replica leader or follower only on a live copy (found or just created on a good dir), StopReplica "
          "keeps the copy, and a dir failure marks offline every hosted replica with a copy on it.",
          lambda u, s: u.forall([u.B, u.P], lambda b, p: z3.Implies(
              z3.Or(s.hosted(b, p) == H_LEADER, s.hosted(b, p) == H_FOLLOWER, s.hosted(b, p) == H_STOPPED),
              has_live_copy(u, s, b, p)))),
    Lemma("down_broker_hosts_nothing",
          "A broker that is down hosts nothing (offline_broker_serves_nothing): a crash or halt clears hosted, "
          "and only request handling (which needs a running broker, by the lemma above) sets it. Disk repairs "
          "(ReplaceDisk, RemoveDirFromConfig) happen while the broker is down, so they remove no served copy.",
          lambda u, s: u.forall([u.B, u.P], lambda b, p: z3.Implies(z3.Not(s.up(b)), s.hosted(b, p) == H_NONE))),
    Lemma("copies_only_of_partitions_with_a_record",
          "No broker holds a copy of a partition that has no leader-and-ISR record: a copy is created only by "
          "handling a LeaderAndIsr entry, which names a partition with a record, and the core never deletes a "
          "record.",
          lambda u, s: u.forall([u.B, u.P, u.D], lambda b, p, d: z3.Implies(s.copy(b, p, d), s.rec(p)))),
    Lemma("new_replica_request_only_without_a_copy",
          "A broker with an isNewReplica=true entry in flight for p holds no copy of p: the controller sends "
          "isNewReplica=true only with p's first record (so no broker has a copy yet, by the lemma above), the "
          "entry is handled before any other entry for p (FIFO), and handling it removes it.",
          lambda u, s: u.forall([u.B, u.P, u.D], lambda b, p, d: z3.Implies(s.pending(b, p, z3.BoolVal(True)),
                                                                          z3.Not(s.copy(b, p, d))))),
    Lemma("no_saturated_dir",
          "Without KIP-928 (the protocol core) no dir is ever saturated: every dir starts good and only DirFail, "
          "ReplaceDisk and RemoveDirFromConfig change a dir's status.",
          lambda u, s: u.forall([u.B, u.D], lambda b, d: s.dir(b, d) != SATURATED)),
)}

_CORE_LEMMAS = ("requests_only_to_running_brokers", "requests_only_for_records", "down_broker_hosts_nothing",
                "hosted_replicas_have_a_live_copy", "no_saturated_dir")


def _no_recreate(u, s, t, action, w, args):
    if action != "BrokerLeaderAndIsr":
        return z3.BoolVal(True)
    b0 = args[0]
    handled, is_new = w["handled"], w["is_new"]
    return u.forall([u.P], lambda p: z3.Implies(
        z3.And(handled(p), z3.Not(is_new(p)), has_offline_dir(u, s, b0)),
        u.forall([u.D], lambda d: z3.Implies(t.copy(b0, p, d), s.copy(b0, p, d)))))


def _create_on_good(u, s, t, action, w, args):
    from .system import GOOD
    return u.forall([u.B, u.P, u.D], lambda b, p, d: z3.Implies(
        z3.And(t.copy(b, p, d), z3.Not(s.copy(b, p, d))), s.dir(b, d) == GOOD))


def _no_recreate_over_offline_copy(u, s, t, action, w, args):
    from .system import OFFLINE
    return u.forall([u.B, u.P, u.D], lambda b, p, d: z3.Implies(
        z3.And(t.copy(b, p, d), z3.Not(s.copy(b, p, d))),
        z3.Not(u.exists([u.D], lambda d2: z3.And(s.copy(b, p, d2), s.dir(b, d2) == OFFLINE)))))


PROPERTIES = {prop.id: prop for prop in (
    Property("no_recreate_with_bad_dir", "transition",
             "A broker never creates a replica for a LeaderAndIsr with isNewReplica=false while it has an "
             "offline log dir.",
             _CORE_LEMMAS, _no_recreate,
             "Under kip112 it follows from one BrokerLeaderAndIsr step (may_create_log); the lemmas only make "
             "the pre-state of a counterexample one the protocol can plausibly reach (a running broker)."),
    Property("create_only_on_good_dir", "transition",
             "A new replica is created only on a good log dir (not saturated, offline or removed).",
             _CORE_LEMMAS, _create_on_good,
             "Only BrokerLeaderAndIsr adds a copy, on a good dir (chooseNewLogDir); repairs only remove copies."),
    Property("no_recreate_over_offline_copy", "transition",
             "A broker never creates a new log for a partition while a copy of that partition's log is on one of "
             "its offline dirs.",
             _CORE_LEMMAS + ("copies_only_of_partitions_with_a_record", "new_replica_request_only_without_a_copy"),
             _no_recreate_over_offline_copy,
             "Needs the controller: a broker creates a missing log for an isNewReplica=true entry whatever its "
             "dirs, so the property holds only because the controller sends isNewReplica=true for a partition "
             "no broker holds a copy of (the two lemmas); for isNewReplica=false, may_create_log refuses while "
             "a dir is offline."),
    Property("no_serving_from_offline_dir", "state",
             "A broker never leads or follows a replica whose log is not on one of its live log dirs.",
             _CORE_LEMMAS,
             lambda u, s: u.forall([u.B, u.P], lambda b, p: z3.Implies(serving(s.hosted(b, p)),
                                                                      has_live_copy(u, s, b, p))),
             "DirFail marks offline every hosted replica with a copy on the failed dir; a repair removes copies "
             "only on a down broker, which hosts nothing (down_broker_hosts_nothing)."),
    Property("offline_broker_serves_nothing", "state",
             "A broker that is down (crashed or halted) hosts no replica.",
             ("requests_only_to_running_brokers",),
             LEMMAS["down_broker_hosts_nothing"].formula,
             "Crash and halt clear hosted; request handling needs a queued request, hence a running broker."),
)}


def invariant_parts(prop: Property) -> list[tuple[str, Callable]]:
    """The inductive invariant's conjuncts: (name, (u, s) -> formula)."""
    parts = [(prop.id, prop.formula)] if prop.kind == "state" else []
    return parts + [(lid, LEMMAS[lid].formula) for lid in prop.lemmas if lid != prop.id
                    and not (prop.kind == "state" and LEMMAS[lid].formula is prop.formula)]
