"""Each z3 property and lemma of KIP-112's proofs against its explicit statement (proofs/explicit.py) on states no
search reaches (docs/proofs.md, section 5): the conformance check compares them on every reachable state, where
an encoding weaker than its statement (say, "a copy on any dir" for "a copy on a live dir") may agree with it
everywhere, because the protocol never reaches a state that tells them apart. Here explicit states are built
from reachable ones by changing some of their fields at random (a seeded generator: the same states every run):
a broker's up, dirs, copies, hosted replicas and inbox (LeaderAndIsr entries with either isNewReplica,
StopReplicas), the controller's live set, notifications and partition records. Each is a value of the model's
own state schema, most are unreachable. For a transition, the pre- and post-state are both changed, the action
kept (a broker handling a request keeps a request of that kind at the head of its inbox). On each, the explicit
invariant and the z3 formula (evaluated on the abstraction, proofs/refinement.py) must give the same verdict.
"""
from __future__ import annotations

import random
from typing import NamedTuple

import z3

from model.storage.state import (
    LEADER_AND_ISR, NO_LEADER, P_NEW, P_NONEXISTENT, P_ONLINE, STOP_REPLICA, LeaderAndIsrEntry, Message, Partition,
)

from . import explicit
from .properties import LEMMAS, PROPERTIES
from .refinement import Refinement, abstract, abstract_key, abstract_broker, witness_values
from .system import ACTION_BY_NAME, RULE_TO_ACTION

DEFAULT_SAMPLES = 2_000     # changed states, and as many changed transitions


class Report(NamedTuple):
    samples: int                # explicit states generated (as many transitions)
    seed: int
    abstract_states: int        # distinct abstractions among them, each evaluated in z3 once
    abstract_triples: int
    compared: tuple             # the ids compared: properties, then lemmas
    explicit_failures: dict     # id -> how many generated states (transitions) break the explicit statement
    disagreements: tuple        # (id, where, explicit verdict, z3 verdict)

    @property
    def ok(self) -> bool:
        return not self.disagreements


def _random_inbox(rng, D: int, P: int, head: int | None = None) -> tuple:
    """0 to 2 requests; ``head``: the kind the first must have (the request the acting broker handles)."""
    out = []
    for i in range(rng.randint(1 if head is not None else 0, 2)):
        kind = head if i == 0 and head is not None else rng.choice((LEADER_AND_ISR, STOP_REPLICA))
        parts = sorted(rng.sample(range(P), rng.randint(1, P)))
        if kind == LEADER_AND_ISR:
            body = tuple(LeaderAndIsrEntry(p, NO_LEADER, 0, 0, rng.random() < 0.5) for p in parts)
        else:
            body = tuple(parts)
        out.append(Message(kind, body))
    return tuple(out)


_PARTITIONS = (Partition(P_NONEXISTENT, NO_LEADER, -1, 0), Partition(P_NEW, NO_LEADER, -1, 0),
               Partition(P_ONLINE, 0, 0, 1), Partition(P_ONLINE, NO_LEADER, 1, 0))


def changed(m, state, rng, acting: int | None = None, head: int | None = None):
    """``state`` with some fields changed at random (see the module's doc)."""
    D, P = m.cfg.dirs, m.cfg.partitions
    brokers = []
    for b, br in enumerate(state.brokers):
        if rng.random() < 0.4 and not (b == acting and head is not None and not _heads(br, head)):
            brokers.append(br)
            continue
        change = {}
        if rng.random() < 0.3:
            change["up"] = not br.up
        if rng.random() < 0.5:
            change["dirs"] = tuple(rng.randrange(4) for _ in range(D))
        if rng.random() < 0.5:
            change["copies"] = tuple(rng.randrange(1 << D) for _ in range(P))
        if rng.random() < 0.5:
            change["hosted"] = tuple(rng.randrange(6) for _ in range(P))
        if rng.random() < 0.4 or (b == acting and head is not None and not _heads(br, head)):
            change["inbox"] = _random_inbox(rng, D, P, head if b == acting else None)
        brokers.append(br._replace(**change))
    c = state.controller
    change = {}
    if rng.random() < 0.3:
        change["live"] = rng.randrange(1 << m.cfg.brokers)
    if rng.random() < 0.3:
        change["partitions"] = tuple(rng.choice(_PARTITIONS) for _ in range(P))
    state = state._replace(brokers=tuple(brokers), controller=c._replace(**change) if change else c)
    if rng.random() < 0.2:
        state = state._replace(notifications=rng.randrange(1 << m.cfg.brokers))
    return state


def _heads(broker, kind: int) -> bool:
    return bool(broker.inbox) and broker.inbox[0].kind == kind


_HEAD = {"BrokerLeaderAndIsr": LEADER_AND_ISR, "BrokerStopReplica": STOP_REPLICA}


def check(m, base, samples: int = DEFAULT_SAMPLES, seed: int = 0, variant: str | None = None,
          max_disagreements: int = 5, properties=None, lemmas=None, explicit_properties=None,
          explicit_lemmas=None) -> Report:
    """Compare on ``samples`` changed states and as many changed transitions, built from ``base`` (reachable
    explicit transitions: (state, action, after)). ``properties``/``lemmas``: id -> z3 Property/Lemma (default
    the registered ones, looked up at call time so that a test may replace one); ``explicit_properties`` /
    ``explicit_lemmas``: id -> the explicit Invariant (default proofs/explicit.py's)."""
    properties = PROPERTIES if properties is None else properties
    lemmas = LEMMAS if lemmas is None else lemmas
    explicit_properties = explicit.PROPERTIES if explicit_properties is None else explicit_properties
    explicit_lemmas = explicit.LEMMAS if explicit_lemmas is None else explicit_lemmas
    rng = random.Random(seed)
    ref = Refinement(m, variant)
    bk = m.cached(abstract_broker, bind=True)
    state_pairs = [(pid, p.formula, explicit_properties[pid]) for pid, p in properties.items()
                   if p.kind == "state" and pid in explicit_properties]
    state_pairs += [(lid, lemma.formula, explicit_lemmas[lid]) for lid, lemma in lemmas.items()
                    if lid in explicit_lemmas]
    trans_pairs = [(pid, p, explicit_properties[pid]) for pid, p in properties.items()
                   if p.kind == "transition" and pid in explicit_properties]
    state_seen: dict = {}        # (id, abstract key) -> (explicit verdict, where)
    trans_seen: dict = {}
    samples_of: dict = {}        # abstract key -> an explicit state (triple) with it
    failures = {i: 0 for i, *_ in trans_pairs + state_pairs}
    disagreements: list = []

    def note(seen, key, ident, bad: bool, where: str):
        first = seen.setdefault((ident, key), (bad, where))
        if first[0] != bad and len(disagreements) < max_disagreements:
            disagreements.append((ident, where, "two states with the same abstraction disagree: the explicit "
                                  "statement reads something the vocabulary does not have", None))
        failures[ident] += bad

    base = list(base)
    for _ in range(samples):
        state, action, after = base[rng.randrange(len(base))]
        st = changed(m, state, rng)
        key = abstract_key(m, st, bk)
        samples_of.setdefault(key, st)
        for ident, _, inv in state_pairs:
            note(state_seen, key, ident, inv.check(m, st) is not None, "a changed state")
        rule = m.rules[action.rule].name
        name = RULE_TO_ACTION.get(rule)
        if name is None:
            continue
        head = _HEAD.get(rule)
        pre = changed(m, state, rng, action.args[0] if head is not None else None, head)
        post = changed(m, after if rng.random() < 0.5 else pre, rng)
        wvals = witness_values(m, pre, rule, action.args)
        given = dict(zip(m.rules[action.rule].params, action.args))
        args = tuple(given[p] for p, _ in ACTION_BY_NAME[name].params)
        tkey = (name, args, abstract_key(m, pre, bk), abstract_key(m, post, bk),
                tuple(tuple(sorted(v.items())) for _, v in sorted(wvals.items())))
        samples_of.setdefault(tkey, (pre, post, wvals))
        for ident, _, inv in trans_pairs:
            note(trans_seen, tkey, ident, inv.check(m, pre, action, post) is not None,
                 f"a changed {m.label(action)} step")
    # z3, once per distinct abstraction
    formulas: dict = {}
    by_id = {i: f for i, f, _ in state_pairs}
    for (ident, key), (bad, where) in state_seen.items():
        if ident not in formulas:
            formulas[ident] = by_id[ident](ref.u, ref.s)
        holds = _value(ref, formulas[ident], ref._pairs(ref.s, abstract(m, samples_of[key])))
        if holds == bad and len(disagreements) < max_disagreements:
            disagreements.append((ident, where, not bad, holds))
    prop_of = {pid: p for pid, p, _ in trans_pairs}
    for (ident, tkey), (bad, where) in trans_seen.items():
        name, args = tkey[:2]
        pre, post, wvals = samples_of[tkey]
        act = ACTION_BY_NAME[name]
        fkey = (ident, name, args)
        if fkey not in formulas:
            elems = tuple(ref._elem(srt, a) for (_, srt), a in zip(act.params, args))
            formulas[fkey] = prop_of[ident].formula(ref.u, ref.s, ref.t, name, ref._witness_vars[name], elems)
        formula = ref._substitute(formulas[fkey], ref._witness_pairs(act, wvals))
        holds = _value(ref, formula, ref._pairs(ref.s, abstract(m, pre)) + ref._pairs(ref.t, abstract(m, post)))
        if holds == bad and len(disagreements) < max_disagreements:
            disagreements.append((ident, where, not bad, holds))
    return Report(samples, seed, len({k for _, k in state_seen}), len({k for _, k in trans_seen}),
                  tuple(i for i, *_ in trans_pairs + state_pairs), failures, tuple(disagreements))


def _value(ref, formula, pairs) -> bool:
    value = z3.simplify(ref._substitute(formula, pairs))
    if not (z3.is_true(value) or z3.is_false(value)):
        raise ValueError(f"a formula did not evaluate to true or false: {value}")
    return z3.is_true(value)


def render(r: Report) -> list[str]:
    lines = [f"  beyond the reachable states: {r.samples:,} changed states and as many changed transitions (seed "
             f"{r.seed}; {r.abstract_states:,} distinct abstract states, {r.abstract_triples:,} triples), each "
             f"z3 property and lemma against its explicit statement ({len(r.compared)} compared)"]
    for ident, where, explicit_holds, z3_holds in r.disagreements:
        if z3_holds is None:
            lines.append(f"  BEYOND {ident}: {where}: {explicit_holds}")
        else:
            lines.append(f"  BEYOND {ident} on {where}: the explicit statement says "
                         f"{'holds' if explicit_holds else 'violated'}, z3 says {'holds' if z3_holds else 'violated'}")
    return lines
