"""The conformance check: the z3 model against the explicit model, exhaustively and both ways (docs/proofs.md,
section 5).

Every reachable explicit state of a preset is enumerated (the model's own expansion, ``Model.successors``, in
breadth-first order, with the engine's fingerprints) and mapped into the z3 vocabulary by the abstraction
function. The abstract states, and the abstract (pre, action, post) triples, are deduplicated, so that z3 works
once per distinct triple and once per distinct abstract pre-state, however many explicit states there are:

- **forward** (soundness of the proofs): every explicit transition, abstracted, satisfies the z3 relation of its
  action (one evaluation per distinct abstract triple), and the initial state the z3 initial condition;
- **reverse** (the z3 model allows no more than the explicit one, except where it over-approximates on
  purpose): from every reachable abstract pre-state, every z3 transition of every action is matched by an
  explicit transition of the same action from an explicit state with that abstraction, once the fields that
  the action's documented over-approximations (``OVER_APPROXIMATIONS``) leave free are set aside. z3 is asked
  once per (abstract pre-state, action, parameters) for a successor that no explicit one matches (the
  explicit post-states are blocking clauses on the finite universe); an answer is an unmatched transition;
- **properties**: every z3 property and lemma agrees with its explicit statement (proofs/explicit.py: the
  invariants themselves, whichever design claims them) on every reachable state (state properties, lemmas) or
  transition (transition properties), and on states beyond the reachable ones (proofs/beyond.py); where the
  explicit model itself breaks a property, the report says so (``explicit_violations``): the proof's property
  does not hold for the explicit model, whatever the z3 model says.
"""
from __future__ import annotations

import itertools
import time
from collections import defaultdict
from typing import NamedTuple

import random

import z3

from model.spec.engine import fingerprint_of

from . import beyond as beyond_mod, explicit
from .properties import LEMMAS, PROPERTIES
from .refinement import Offence, Refinement, abstract_broker, abstract_key
from .system import ACTION_BY_NAME, ACTIONS, FIELDS, RULE_TO_ACTION, initial, relation, sort_of


def values_of_key(m, key) -> dict:
    """The key as ``abstract``'s values: per field, per argument index tuple."""
    B, D, P = m.cfg.brokers, m.cfg.dirs, m.cfg.partitions
    brokers, live, notified, parts = key
    out = {f.name: {} for f in FIELDS}
    for b, (up, replied, dirs, hosted, copies, pend, stops) in enumerate(brokers):
        out["up"][(b,)] = up
        out["replied"][(b,)] = replied
        out["live"][(b,)] = bool(live >> b & 1)
        out["notified"][(b,)] = bool(notified >> b & 1)
        for d in range(D):
            out["dir"][(b, d)] = dirs[d]
        for p in range(P):
            out["hosted"][(b, p)] = hosted[p]
            out["stop_pending"][(b, p)] = stops[p]
            for n in (0, 1):
                out["pending"][(b, p, n)] = pend[2 * p + n]
            for d in range(D):
                out["copy"][(b, p, d)] = bool(copies[p] >> d & 1)
    for p, (created, rec) in enumerate(parts):
        out["created"][(p,)] = created
        out["rec"][(p,)] = rec
    assert B == len(brokers)
    return out


def witness_key(m, state, rule: str, args) -> tuple:
    if rule == "BrokerLeaderAndIsr":
        return tuple(sorted((e.partition, bool(e.is_new)) for e in state.brokers[args[0]].inbox[0].body))
    if rule == "BrokerStopReplica":
        return tuple(sorted(state.brokers[args[0]].inbox[0].body))
    return ()


def witness_values_of(m, rule: str, wkey) -> dict:
    """The witnesses' values of a request (``witness_key``) of the explicit rule or its abstract action."""
    P = m.cfg.partitions
    if rule == "BrokerLeaderAndIsr":
        entries = dict(wkey)
        return {"handled": {(p,): p in entries for p in range(P)},
                "is_new": {(p,): entries.get(p, False) for p in range(P)}}
    if rule == "BrokerStopReplica":
        return {"stopped": {(p,): p in wkey for p in range(P)}}
    return {}


# ---- the deliberate over-approximations ------------------------------------------------------------------------
class OverApproximation(NamedTuple):
    name: str
    actions: tuple       # abstract actions it applies to
    fields: tuple        # post-state fields the reverse check sets aside for those actions
    why: str
    enables: bool = False   # the action may be enabled in z3 where the explicit model has no transition of it


_CONTROLLER = ("CreateTopic", "ControllerFailover", "ControllerBrokerStartup", "ControllerBrokerFailure",
               "ControllerLogDirEvent", "ControllerLeaderAndIsrResponse")
OVER_APPROXIMATIONS = (
    OverApproximation(
        "controller-requests", _CONTROLLER, ("pending", "stop_pending", "rec"),
        "The controller's replica and partition state machines are abstracted away: an event may send any "
        "LeaderAndIsr entries (isNewReplica=false; true only for a partition that gets its first record) and "
        "StopReplicas to running brokers it counts as live, and give a record to a created partition."),
    OverApproximation(
        "inbox-as-sets", ("BrokerLeaderAndIsr", "BrokerStopReplica"), ("pending", "stop_pending"),
        "A FIFO inbox is the set of entries in flight: any request in flight may be handled, not only the "
        "head (so the action is enabled in z3 where the explicit head is a request of the other kind), and "
        "after a request is handled an entry may or may not still be in flight (an identical one may sit in a "
        "later message).", enables=True),
    OverApproximation(
        "responses-as-a-flag", ("ControllerLeaderAndIsrResponse",), ("replied",),
        "A broker's queue of LeaderAndIsr responses is one flag: after the controller handles one, more may "
        "be waiting."),
    OverApproximation(
        "no-leader-epochs", ("BrokerLeaderAndIsr",), ("hosted",),
        "Leader epochs are not modelled: an entry for a hosted replica may be ignored as stale, and leader and "
        "follower are not told apart."),
    OverApproximation(
        "any-good-dir", ("BrokerLeaderAndIsr",), ("copy",),
        "chooseNewLogDir (fewest logs, lowest index) is 'some good dir'. The reverse check still compares "
        "how many copies each broker holds per partition (``copy-count`` view)."),
    OverApproximation(
        "no-bounds", tuple(a.name for a in ACTIONS), (),
        "max_faults and the per-event bounds (docs/model.md 3.1) are not modelled: an action the explicit model "
        "disables only because a bound is spent is enabled in z3 (the actions of rules that spend a bound). The "
        "reverse check therefore matches their z3 "
        "transitions only against parameters for which the explicit model takes at least one transition of that "
        "action; where it takes none the (pre-state, action) is counted as 'enabled in z3 only'.", enables=True),
    OverApproximation(
        "stutter", ("Stutter",), (),
        "The data path and UpdateMetadata change nothing in this vocabulary; Stutter is enabled everywhere.",
        enables=True),
)


def loose_fields(action: str) -> set:
    return {f for oa in OVER_APPROXIMATIONS if action in oa.actions for f in oa.fields}


# ---- exhaustive enumeration ------------------------------------------------------------------------------------
def transitions(m, max_states: int | None = None):
    """Every transition out of every reachable state, breadth-first (``Model.successors``, the engine's
    expansion, and its fingerprints), without symmetry reduction. Yields (state, [(action, after), ...]) per
    state. ``max_states``: only the first states (the mutation tests), None: all."""
    fingerprint = fingerprint_of(m)
    init = m.init_states()[0]
    seen = {fingerprint(init)}
    frontier = [init]
    while frontier:
        nxt = []
        for state in frontier:
            succ = list(m.successors(state))
            yield state, succ
            for _, after in succ:
                f = fingerprint(after)
                if f not in seen and (max_states is None or len(seen) < max_states):
                    seen.add(f)
                    nxt.append(after)
        frontier = nxt


class Report(NamedTuple):
    preset: str
    variant: str
    states: int
    transitions: int
    abstract_states: int
    abstract_triples: int
    forward_offences: tuple        # Offence
    initial_failures: tuple
    reverse_checked: int           # (abstract pre-state, action) pairs z3 was asked about
    reverse_unmatched: tuple       # (action, args, pre values, post values)
    z3_only: int                   # (pre, action) enabled in z3, no explicit transition there (bounds or guard)
    property_disagreements: tuple  # (property, invariant, label)
    property_checks: int
    rules: dict
    elapsed_s: float
    symmetry: bool = False         # one state per orbit of the dir symmetry (the engine's canonical fingerprints)
    max_states: int | None = None  # None: every reachable state; else the first states, breadth-first
    explicit_violations: dict = {}  # property id -> (explicit states or transitions breaking it, the first's label)
    beyond: beyond_mod.Report | None = None   # the agreement on states beyond the reachable ones
    reverse: bool = True           # whether the reverse direction ran

    @property
    def ok(self) -> bool:
        return not (self.forward_offences or self.initial_failures or self.reverse_unmatched
                    or self.property_disagreements or (self.beyond is not None and not self.beyond.ok))


# explicit invariant of each z3 property and lemma (the same statement, in the explicit model: proofs/explicit.py)
PROPERTY_TO_INVARIANT = {pid: inv.id for pid, inv in explicit.PROPERTIES.items()}
LEMMA_TO_INVARIANT = {lid: inv.id for lid, inv in explicit.LEMMAS.items()}
BASE_SAMPLE = 5_000     # reachable transitions kept (a seeded reservoir) to build the states beyond them from


class _Reverse:
    """z3 successors of an abstract pre-state that no explicit transition matches."""

    def __init__(self, ref: Refinement):
        self.ref = ref
        self._formulas: dict = {}
        self._views: dict = {}

    def formula(self, action: str, args: tuple):
        key = (action, args)
        if key not in self._formulas:
            ref = self.ref
            act = ACTION_BY_NAME[action]
            elems = tuple(ref._elem(srt, i) for (_, srt), i in zip(act.params, args))
            self._formulas[key] = z3.And([f for _, f in relation(ref.u, act, ref.s, ref.t,
                                                                 ref._witness_vars[action], ref.variant, elems)])
        return self._formulas[key]

    def view(self, action: str) -> list:
        """The post-state terms the reverse check compares for this action."""
        if action not in self._views:
            u, t = self.ref.u, self.ref.t
            loose = loose_fields(action)
            terms = []
            for f in FIELDS:
                if f.name in loose:
                    continue
                fn = t.function(f.name)
                for combo in u.combos([sort_of(u, a) for a in f.args]):
                    terms.append(fn(*combo))
            if "copy" in loose:      # copy-count: how many copies b holds of p
                for b in u.elements[u.B]:
                    for p in u.elements[u.P]:
                        terms.append(z3.Sum([z3.If(t.copy(b, p, d), 1, 0) for d in u.elements[u.D]]))
            self._views[action] = terms
        return self._views[action]

    def view_values(self, action: str, values: dict) -> list:
        """The values of ``view``'s terms on an explicit post-state (``abstract``'s values), in the same order."""
        consts = self.ref._consts
        loose = loose_fields(action)
        out = [consts[f.range][v] for f in FIELDS if f.name not in loose for v in values[f.name].values()]
        if "copy" in loose:
            u = self.ref.u
            D = len(u.elements[u.D])
            for b in range(len(u.elements[u.B])):
                for p in range(len(u.elements[u.P])):
                    out.append(z3.IntVal(sum(bool(values["copy"][(b, p, d)]) for d in range(D))))
        return out

    def witness_terms(self, action: str, rule_wkey) -> list:
        """The action's witnesses equal to those of an explicit request (``witness_key``)."""
        key = ("witness", action, rule_wkey)
        if key not in self._views:
            ref = self.ref
            act = ACTION_BY_NAME[action]
            pairs = ref._witness_pairs(act, witness_values_of(ref.m, action, rule_wkey))
            self._views[key] = [a == v for a, v in pairs]
        return self._views[key]

    def block(self, action: str, wkey, post_key) -> z3.BoolRef:
        """Not this explicit successor (its request and its post-state's view): built once per distinct one."""
        key = ("block", action, wkey, post_key)
        if key not in self._views:
            vals = self.view_values(action, values_of_key(self.ref.m, post_key))
            same_request = self.witness_terms(action, wkey) if ACTION_BY_NAME[action].witnesses else []
            self._views[key] = z3.Not(z3.And(same_request + [x == v for x, v in zip(self.view(action), vals)]))
        return self._views[key]

    def unmatched(self, action: str, pre_values: dict, explicit: dict, args_to_try, limit: int = 1) -> list:
        """z3 transitions of ``action`` (for each parameter tuple of ``args_to_try``) from the abstract pre-state
        whose view no explicit post-state has (explicit: args -> [(witness key, post key)]). An action with
        witnesses (the request handled) is asked about only with the requests the explicit model handles from
        this pre-state (inbox-as-sets: a z3 request may combine entries of several explicit messages). Returns
        up to ``limit`` (args, post) pairs, post as readable values."""
        ref = self.ref
        terms = self.view(action)
        pre_pairs = ref._pairs(ref.s, pre_values)
        has_witnesses = bool(ACTION_BY_NAME[action].witnesses)
        found = []
        for args in args_to_try:
            ground = z3.simplify(ref._substitute(self.formula(action, args), pre_pairs))
            if z3.is_false(ground):
                continue
            solver = z3.Solver()
            solver.add(ground)
            if has_witnesses:     # pre-state applications to a witness's value stay symbolic
                solver.add([app == value for app, value in pre_pairs])
            requests = set()
            for wkey, post_key in explicit.get(args, ()):
                requests.add(wkey)
                solver.add(self.block(action, wkey, post_key))
            if has_witnesses:
                solver.add(z3.Or([z3.And(self.witness_terms(action, w)) for w in requests]))
            while len(found) < limit and solver.check() == z3.sat:
                model = solver.model()
                vals = [model.eval(x, model_completion=True) for x in terms]
                post = {}
                for f in FIELDS:
                    fn = ref.t.function(f.name)
                    for combo in ref.u.combos([sort_of(ref.u, a) for a in f.args]):
                        post[f"{f.name}({','.join(map(str, combo))})"] = str(model.eval(fn(*combo),
                                                                                       model_completion=True))
                found.append((args, post))
                solver.add(z3.Not(z3.And([x == v for x, v in zip(terms, vals)])))
            if len(found) >= limit:
                break
        return found


def _forward(ref: Refinement, m, key, action):
    """The z3 relation of the triple's action on its abstract values (Refinement.check_transition, from a key)."""
    abstract_name, args, wkey, pre, post = key
    act = ACTION_BY_NAME[abstract_name]
    labelled, whole = ref.relation_of(act, args)
    pre_values, post_values = values_of_key(m, pre), values_of_key(m, post)
    rule = m.rules[action.rule].name
    failed = ref._false_conjuncts(labelled, ref._pairs(ref.s, pre_values) + ref._pairs(ref.t, post_values),
                                  ref._witness_pairs(act, witness_values_of(m, rule, wkey)), whole)
    return Offence(m.label(action), abstract_name, failed, pre_values, post_values) if failed else None


def _holds(ref: Refinement, formula, pairs) -> bool:
    value = z3.simplify(ref._substitute(formula, pairs))
    if not (z3.is_true(value) or z3.is_false(value)):
        raise ValueError(f"a property did not evaluate to true or false: {value}")
    return z3.is_true(value)


def _transition_holds(ref: Refinement, m, prop, key, cache: dict) -> bool:
    """The z3 transition property on a triple (its formula built once per action and parameters)."""
    abstract_name, args, wkey, pre, post = key
    act = ACTION_BY_NAME[abstract_name]
    fkey = (prop.id, abstract_name, args)
    if fkey not in cache:
        elems = tuple(ref._elem(srt, i) for (_, srt), i in zip(act.params, args))
        cache[fkey] = prop.formula(ref.u, ref.s, ref.t, act.name, ref._witness_vars[act.name], elems)
    formula = ref._substitute(cache[fkey], ref._witness_pairs(act, witness_values_of(m, abstract_name, wkey)))
    return _holds(ref, formula, ref._pairs(ref.s, values_of_key(m, pre)) + ref._pairs(ref.t, values_of_key(m, post)))


def check(m, preset: str = "?", variant: str | None = None, reverse: bool = True, properties: bool = True,
          max_offences: int = 5, progress=None, max_states: int | None = None, stop_early: bool = False,
          invariants=(), beyond: int = beyond_mod.DEFAULT_SAMPLES, seed: int = 0) -> Report:
    """The whole check on the reachable states of ``m`` (see the module's doc). ``max_states`` (only the first
    states, breadth-first) and ``stop_early`` (stop at the first forward offence or property disagreement);
    ``beyond``: how many changed states (and transitions) the agreement of the properties and lemmas is checked
    on beyond the reachable ones (0: none), built with the seeded generator ``seed``. The explicit side of each
    property and lemma is proofs/explicit.py's; ``invariants``: explicit invariants that replace some of it, by
    id (the mutation tests)."""
    start = time.monotonic()
    ref = Refinement(m, variant)
    bk = m.cached(abstract_broker, bind=True)
    replaced = {inv.id: inv for inv in invariants}

    def explicit_of(inv):
        return replaced.get(inv.id, inv)
    prop_pairs = [(PROPERTIES[pid], explicit_of(inv)) for pid, inv in explicit.PROPERTIES.items()
                  if pid in PROPERTIES] if properties else []
    lemma_pairs = [(LEMMAS[lid], explicit_of(inv)) for lid, inv in explicit.LEMMAS.items()
                   if lid in LEMMAS] if properties else []
    state_pairs = [(p.id, p.formula, i) for p, i in prop_pairs if p.kind == "state"]
    state_pairs += [(lemma.id, lemma.formula, i) for lemma, i in lemma_pairs]
    trans_props = [(p, i) for p, i in prop_pairs if p.kind == "transition"]
    init = m.init_states()[0]
    init_key = abstract_key(m, init, bk)
    initial_failures = []
    failed = ref._false_conjuncts(initial(ref.u, ref.s), ref._pairs(ref.s, values_of_key(m, init_key)))
    if failed:
        initial_failures.append(failed)
    triples: dict = {}                        # (action, args, wkey, pre, post) -> a sample (state, action, after)
    by_pre: dict = defaultdict(lambda: defaultdict(lambda: defaultdict(set)))   # pre -> action -> args -> posts
    states = ntrans = 0
    rules: dict = defaultdict(int)
    rule_info = [(r.name, RULE_TO_ACTION.get(r.name), r.params) for r in m.rules]
    state_prop_seen: dict = {}                 # (prop or lemma id, abstract key) -> explicit verdict
    prop_disagree: list = []
    prop_checks = 0
    trans_prop_seen: dict = {}
    violations: dict = {}                      # property id -> [count, first label]
    offences = []
    rng = random.Random(seed)
    base: list = []                            # a seeded reservoir of reachable transitions, for beyond

    def violated(pid: str, where: str) -> None:
        v = violations.setdefault(pid, [0, where])
        v[0] += 1

    for state, succ in transitions(m, max_states):
        if stop_early and (offences or prop_disagree):
            break
        states += 1
        if progress is not None and states % 100_000 == 0:
            progress(f"{states:,} states, {ntrans:,} transitions, {len(triples):,} abstract triples")
        pre = abstract_key(m, state, bk)
        for ident, _, inv in state_pairs:
            bad = inv.check(m, state) is not None
            prev = state_prop_seen.setdefault((ident, pre), bad)
            prop_checks += 1
            if bad and ident in PROPERTIES:
                violated(ident, f"a state reached after {states:,} states")
            if prev != bad and len(prop_disagree) < max_offences:
                prop_disagree.append((ident, inv.id, "two explicit states with the same abstraction disagree on "
                                      "the invariant"))
        for action, after in succ:
            ntrans += 1
            if beyond:
                if len(base) < BASE_SAMPLE:
                    base.append((state, action, after))
                elif (j := rng.randrange(ntrans)) < BASE_SAMPLE:
                    base[j] = (state, action, after)
            name, abstract_name, params = rule_info[action.rule]
            rules[name] += 1
            post = abstract_key(m, after, bk)
            if abstract_name is None:
                triples.setdefault((name, None, None, pre, post), action)
                continue
            given = dict(zip(params, action.args))
            args = tuple(given[p] for p, _ in ACTION_BY_NAME[abstract_name].params)
            wkey = witness_key(m, state, name, action.args)
            key = (abstract_name, args, wkey, pre, post)
            if key not in triples:
                triples[key] = action          # a sample, for the label of an offence
                by_pre[pre][abstract_name][args].add((wkey, post))
                off = _forward(ref, m, key, action)
                if off is not None and len(offences) < max_offences:
                    offences.append(off)
            for prop, inv in trans_props:
                prop_checks += 1
                bad = inv.check(m, state, action, after) is not None
                if bad:
                    violated(prop.id, m.label(action))
                prev = trans_prop_seen.setdefault((prop.id, key), bad)
                if prev != bad and len(prop_disagree) < max_offences:
                    prop_disagree.append((prop.id, inv.id, f"{m.label(action)}: two explicit "
                                          "transitions with the same abstraction disagree"))
    for key, action in triples.items():
        if key[1] is None and key[2] is None and len(offences) < max_offences:
            offences.append(Offence(m.label(action), "-", (f"rule {key[0]} has no abstract action in "
                                                            "proofs/system.py",), {}, {}))
    # properties and lemmas: the z3 formula against the explicit verdict, once per distinct abstract state / triple
    formulas: dict = {}
    names = {ident: inv.id for ident, _, inv in state_pairs}
    by_id = {ident: f for ident, f, _ in state_pairs}
    for (ident, pre), bad in state_prop_seen.items():
        if ident not in formulas:
            formulas[ident] = by_id[ident](ref.u, ref.s)
        holds = _holds(ref, formulas[ident], ref._pairs(ref.s, values_of_key(m, pre)))
        if holds == bad and len(prop_disagree) < max_offences:
            prop_disagree.append((ident, names[ident], f"on abstract state: z3 says "
                                  f"{'holds' if holds else 'violated'}, the explicit invariant the opposite"))
    for (pid, key), bad in trans_prop_seen.items():
        holds = _transition_holds(ref, m, PROPERTIES[pid], key, formulas)
        if holds == bad and len(prop_disagree) < max_offences:
            action = triples[key]
            prop_disagree.append((pid, PROPERTY_TO_INVARIANT[pid], f"{m.label(action)}: z3 says "
                                  f"{'holds' if holds else 'violated'}, the explicit invariant the opposite"))
    outside = None
    if properties and beyond and base and not (stop_early and (offences or prop_disagree)):
        outside = beyond_mod.check(m, base, beyond, seed, ref.variant, max_offences,
                                   explicit_properties={p.id: i for p, i in prop_pairs},
                                   explicit_lemmas={lemma.id: i for lemma, i in lemma_pairs})
    # reverse: once per distinct abstract pre-state and action
    unmatched, reverse_checked, z3_only = [], 0, 0
    if reverse:
        rev = _Reverse(ref)
        sizes = {"B": m.cfg.brokers, "D": m.cfg.dirs, "P": m.cfg.partitions}
        all_args = {a.name: list(itertools.product(*(range(sizes[srt]) for _, srt in a.params))) for a in ACTIONS}
        bounded = {RULE_TO_ACTION.get(r.name) for r in m.rules if getattr(r, "spends", None) is not None}
        enabled_only_in_z3 = bounded | {a for oa in OVER_APPROXIMATIONS if oa.enables and oa.name != "no-bounds"
                                        for a in oa.actions}
        for pre, per_action in by_pre.items():
            pre_values = values_of_key(m, pre)
            for act in ACTIONS:
                taken = per_action.get(act.name, {})
                if not taken and act.name in enabled_only_in_z3:
                    z3_only += 1        # no-bounds, inbox-as-sets, stutter
                    continue
                reverse_checked += 1
                tries = list(taken) if act.name in enabled_only_in_z3 else all_args[act.name]
                for args, post in rev.unmatched(act.name, pre_values, taken, tries):
                    unmatched.append((act.name, args, pre_values, post))
                if len(unmatched) >= max_offences:
                    break
            if len(unmatched) >= max_offences:
                break
    return Report(preset, ref.variant, states, ntrans, len(by_pre), len(triples), tuple(offences),
                  tuple(initial_failures), reverse_checked, tuple(unmatched), z3_only, tuple(prop_disagree),
                  prop_checks, dict(rules), round(time.monotonic() - start, 1), bool(m.symmetry),
                  max_states, {pid: tuple(v) for pid, v in violations.items()}, outside, reverse)


def figures(r: Report) -> dict:
    out = {"preset": r.preset, "variant": r.variant, "symmetry": r.symmetry, "states": r.states,
           "transitions": r.transitions,
           "abstract_states": r.abstract_states, "abstract_triples": r.abstract_triples,
           "reverse": r.reverse, "reverse_queries": r.reverse_checked, "enabled_in_z3_only": r.z3_only,
           "property_checks": r.property_checks, "ok": r.ok, "elapsed_s": r.elapsed_s,
           "whole": r.max_states is None, "max_states": r.max_states,
           "explicit_violations": {pid: {"count": n, "first": where} for pid, (n, where) in
                                   r.explicit_violations.items()}}
    if r.beyond is not None:
        out["beyond"] = {"samples": r.beyond.samples, "seed": r.beyond.seed,
                         "abstract_states": r.beyond.abstract_states, "abstract_triples": r.beyond.abstract_triples,
                         "compared": list(r.beyond.compared), "ok": r.beyond.ok}
    return out


def offences(r: Report) -> list[dict]:
    """Each offence of the report as a record: which check, which action or property (the JSON's
    ``conformance.offences``)."""
    out = [{"check": "initial", "conjuncts": list(failed)} for failed in r.initial_failures]
    out += [{"check": "forward", "transition": off.label, "action": off.action, "conjuncts": list(off.failed)}
            for off in r.forward_offences]
    out += [{"check": "reverse", "action": action, "args": list(args)} for action, args, _, _ in r.reverse_unmatched]
    out += [{"check": "property", "property": pid, "invariant": iid, "what": what}
            for pid, iid, what in r.property_disagreements]
    if r.beyond is not None:
        out += [{"check": "beyond", "property": ident, "where": where,
                 "explicit": explicit_holds if z3_holds is not None else None, "z3": z3_holds}
                for ident, where, explicit_holds, z3_holds in r.beyond.disagreements]
    return out


def render(r: Report) -> list[str]:
    from .refinement import describe
    lines = [f"conformance of the z3 model with the explicit model, preset {r.preset}, variant {r.variant}:",
             f"  explicit: {r.states:,} states, {r.transitions:,} transitions ("
             + ("every reachable state" if r.max_states is None else
                f"the first {r.max_states:,} states, breadth-first: NOT all")
             + (", one per orbit of the dir symmetry, every transition out of it)" if r.symmetry else ")"),
             f"  forward: {r.abstract_triples:,} distinct abstract (pre, action, post) triples from "
             f"{r.abstract_states:,} distinct abstract states, each checked against the z3 relation",
             (f"  reverse: {r.reverse_checked:,} (abstract pre-state, action) queries; {r.z3_only:,} where the "
              f"action is enabled only in z3 (no-bounds, inbox-as-sets, stutter)") if r.reverse else
             "  reverse: NOT checked",
             f"  properties and lemmas: {r.property_checks:,} explicit checks compared with the z3 formulas"]
    if r.beyond is not None:
        lines += beyond_mod.render(r.beyond)
    lines.append(f"  ({r.elapsed_s:.0f}s)")
    for failed in r.initial_failures:
        lines.append(f"  INITIAL STATE breaks: {'; '.join(failed)}")
    for off in r.forward_offences:
        lines.append("  FORWARD: " + describe(off).replace("\n", "\n  "))
    for action, args, _pre, post in r.reverse_unmatched:
        shown = ", ".join(k for k, v in post.items() if v not in ("False", "none", "good"))
        lines.append(f"  REVERSE: z3 {action}{args} has a successor no explicit transition matches; "
                     f"post-state (true/non-default): {shown}")
    for pid, iid, what in r.property_disagreements:
        lines.append(f"  PROPERTY {pid} vs invariant {iid}: {what}")
    lines.append("  => conforms" if r.ok else "  => DOES NOT CONFORM")
    for pid, (n, where) in r.explicit_violations.items():
        lines.append(f"  the explicit model itself breaks {pid} ({n:,} times; first at {where})")
    return lines
