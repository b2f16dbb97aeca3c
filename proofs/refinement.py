"""The refinement check: every transition the explicit model takes, mapped into the z3 vocabulary by the
abstraction function, satisfies the z3 relation of its action, and every initial state the z3 initial
condition (docs/proofs.md, "Soundness"). z3 evaluates the formulas on the concrete values: the universe is
finite (the configuration's sizes), quantifiers are expanded, every function application is replaced by its
value and the ground formula simplifies to true or false.
"""
from __future__ import annotations

from collections import deque
from typing import NamedTuple

import z3

from model.storage.state import LEADER_AND_ISR, P_NONEXISTENT, STOP_REPLICA

from .system import (
    ACTION_BY_NAME, DIR_VALUES, FIELDS, HOSTED_VALUES, RULE_TO_ACTION, Finite, StateVars, initial, relation,
    witnesses,
)


def abstract(m, state) -> dict:
    """The abstraction function: a concrete State as the values of the vocabulary's functions, keyed by field
    name and then by the tuple of argument indices (a Bool argument is 0 for false, 1 for true)."""
    D, P = m.cfg.dirs, m.cfg.partitions
    c = state.controller
    out = {f.name: {} for f in FIELDS}
    for b, br in enumerate(state.brokers):
        out["up"][(b,)] = br.up
        out["replied"][(b,)] = bool(br.replies)
        out["live"][(b,)] = bool(c.live >> b & 1)
        out["notified"][(b,)] = bool(state.notifications >> b & 1)
        for d in range(D):
            out["dir"][(b, d)] = br.dirs[d]
        lai = [e for msg in br.inbox if msg.kind == LEADER_AND_ISR for e in msg.body]
        stops = {p for msg in br.inbox if msg.kind == STOP_REPLICA for p in msg.body}
        for p in range(P):
            out["hosted"][(b, p)] = br.hosted[p]
            out["stop_pending"][(b, p)] = p in stops
            for n in (0, 1):
                out["pending"][(b, p, n)] = any(e.partition == p and bool(e.is_new) == bool(n) for e in lai)
            for d in range(D):
                out["copy"][(b, p, d)] = bool(br.copies[p] >> d & 1)
    for p, part in enumerate(c.partitions):
        out["created"][(p,)] = part.state != P_NONEXISTENT
        out["rec"][(p,)] = part.leader_epoch >= 0
    return out


# ---- the abstraction function, as a hashable key ------------------------------------------------------------
def abstract_broker(m, br) -> tuple:
    P = m.cfg.partitions
    pend = [False] * (2 * P)
    stops = [False] * P
    for msg in br.inbox:
        if msg.kind == LEADER_AND_ISR:
            for e in msg.body:
                pend[2 * e.partition + bool(e.is_new)] = True
        elif msg.kind == STOP_REPLICA:
            for p in msg.body:
                stops[p] = True
    return (br.up, bool(br.replies), tuple(br.dirs), tuple(br.hosted), tuple(br.copies), tuple(pend), tuple(stops))


def abstract_key(m, state, broker_key=None) -> tuple:
    """The abstraction of ``state`` (proofs/refinement.py ``abstract``) as a flat hashable value."""
    bk = broker_key or m.cached(abstract_broker, bind=True)
    c = state.controller
    return (tuple(bk(br) for br in state.brokers), c.live, state.notifications,
            tuple((part.state != P_NONEXISTENT, part.leader_epoch >= 0) for part in c.partitions))


def witness_values(m, state, rule: str, args) -> dict:
    """The action's witnesses, read off the request it handles."""
    P = m.cfg.partitions
    if rule == "BrokerLeaderAndIsr":
        entries = {e.partition: e for e in state.brokers[args[0]].inbox[0].body}
        return {"handled": {(p,): p in entries for p in range(P)},
                "is_new": {(p,): bool(entries[p].is_new) if p in entries else False for p in range(P)}}
    if rule == "BrokerStopReplica":
        named = set(state.brokers[args[0]].inbox[0].body)
        return {"stopped": {(p,): p in named for p in range(P)}}
    return {}


def _freeze(values: dict) -> tuple:
    return tuple(tuple(sorted(v.items())) for _, v in sorted(values.items()))


class Offence(NamedTuple):
    label: str            # the explicit action, e.g. "BrokerLeaderAndIsr(broker=0)"
    action: str           # the abstract action
    failed: tuple         # labels of the relation's conjuncts that are false on the transition
    pre: dict             # abstract values
    post: dict


class Refinement:
    """The z3 model of one variant over a configuration's sizes, evaluated on abstracted explicit states."""

    def __init__(self, m, variant: str | None = None):
        self.m = m
        self.variant = variant or m.cfg.variant
        self.u = Finite(m.cfg.brokers, m.cfg.dirs, m.cfg.partitions)
        self.s = StateVars(self.u, "pre")
        self.t = StateVars(self.u, "post")
        self._formulas: dict = {}
        self._apps: dict = {}
        self._consts = {"Bool": {False: z3.BoolVal(False), True: z3.BoolVal(True)},
                        "DirStatus": dict(enumerate(DIR_VALUES)), "Hosted": dict(enumerate(HOSTED_VALUES))}
        self._verdicts: dict = {}
        self._witness_vars = {a.name: witnesses(self.u, a, a.name) for a in ACTION_BY_NAME.values()}

    def relation_of(self, act, args: tuple):
        """The labelled conjuncts of ``act``'s relation on these parameters, and their conjunction (built once)."""
        fkey = (act.name, args)
        if fkey not in self._formulas:
            elems = tuple(self._elem(sort, i) for (_, sort), i in zip(act.params, args))
            labelled = relation(self.u, act, self.s, self.t, self._witness_vars[act.name], self.variant, elems)
            self._formulas[fkey] = (labelled, z3.And([f for _, f in labelled]))
        return self._formulas[fkey]

    def _elem(self, sort_name: str, i: int):
        u = self.u
        if sort_name == "Bool":
            return z3.BoolVal(bool(i))
        return {"B": u.brokers, "D": u.dirs, "P": u.partitions}[sort_name][i]

    def _value(self, range_name: str, v):
        if range_name == "Bool":
            return z3.BoolVal(bool(v))
        return (DIR_VALUES if range_name == "DirStatus" else HOSTED_VALUES)[v]

    def _apps_of(self, st, values: dict) -> list:
        """The ground applications of st's functions, in the (fixed) order of ``abstract``'s values."""
        apps = self._apps.get(st.prefix)
        if apps is None:
            apps = self._apps[st.prefix] = [
                st.function(f.name)(*(self._elem(a, i) for a, i in zip(f.args, idx)))
                for f in FIELDS for idx in values[f.name]]
        return apps

    def _values_of(self, values: dict) -> list:
        consts = self._consts
        return [consts[f.range][v] for f in FIELDS for v in values[f.name].values()]

    def _pairs(self, st, values: dict) -> list:
        return list(zip(self._apps_of(st, values), self._values_of(values)))

    def _witness_pairs(self, action, wvals: dict) -> list:
        ws = self._witness_vars[action.name]
        pairs = []
        for name, argsorts, rng in action.witnesses:
            for idx, v in wvals[name].items():
                pairs.append((ws[name](*(self._elem(a, i) for a, i in zip(argsorts, idx))), self._value(rng, v)))
        return pairs

    @staticmethod
    def _substitute(expr, pairs):
        """z3.substitute without the Python wrapper's per-pair sort checks (every pair here is well sorted)."""
        n = len(pairs)
        if n == 0:
            return expr
        src, dst = (z3.Ast * n)(), (z3.Ast * n)()
        for i, (a, b) in enumerate(pairs):
            src[i], dst[i] = a.as_ast(), b.as_ast()
        ctx = expr.ctx
        return z3.z3._to_expr_ref(z3.Z3_substitute(ctx.ref(), expr.as_ast(), n, src, dst), ctx)

    def _false_conjuncts(self, labelled, pairs, first=(), whole=None) -> tuple:
        """The labels of the conjuncts that are false once every function application is replaced by its value.
        ``first`` (the witnesses) is substituted before ``pairs``: a witness's value can complete a state
        function's arguments (pending(b, p, is_new(p)))."""
        if whole is None:
            whole = z3.And([f for _, f in labelled])
        if z3.is_true(z3.simplify(self._substitute(self._substitute(whole, first), pairs))):
            return ()
        failed = []
        for label, formula in labelled:
            value = z3.simplify(self._substitute(self._substitute(formula, first), pairs))
            if not z3.is_true(value):
                failed.append(label if z3.is_false(value) else f"{label} (not decided: {value})")
        return tuple(failed)

    def check_initial(self, state) -> tuple:
        """The labels of the initial condition's conjuncts that the abstracted state violates (empty: fine)."""
        values = abstract(self.m, state)
        return self._false_conjuncts(initial(self.u, self.s), self._pairs(self.s, values))

    def check_transition(self, state, action, after) -> Offence | None:
        rule = self.m.rules[action.rule].name
        label = self.m.label(action)
        abstract_name = RULE_TO_ACTION.get(rule)
        pre, post = abstract(self.m, state), abstract(self.m, after)
        if abstract_name is None:
            return Offence(label, "-", (f"rule {rule} has no abstract action in proofs/system.py",), pre, post)
        act = ACTION_BY_NAME[abstract_name]
        # The abstract action's parameters, from the rule's (e.g. the data path's rules map to Stutter).
        names = self.m.rules[action.rule].params
        given = dict(zip(names, action.args))
        args = tuple(given[name] for name, _ in act.params)
        wvals = witness_values(self.m, state, rule, action.args)
        key = (abstract_name, args, _freeze(pre), _freeze(post), _freeze(wvals))
        failed = self._verdicts.get(key)
        if failed is None:
            labelled, whole = self.relation_of(act, args)
            pairs = self._pairs(self.s, pre) + self._pairs(self.t, post)
            failed = self._verdicts[key] = self._false_conjuncts(labelled, pairs, self._witness_pairs(act, wvals),
                                                                 whole)
        if failed:
            return Offence(label, abstract_name, failed, pre, post)
        return None

    @property
    def abstract_transitions(self) -> int:
        return len(self._verdicts)


class Report(NamedTuple):
    states: int
    transitions: int
    abstract_transitions: int
    initial_failures: tuple
    offences: tuple
    rules: dict           # rule name -> transitions of it checked


def check_model(m, max_states: int, variant: str | None = None, max_offences: int = 5) -> Report:
    """Breadth-first over the explicit model's first ``max_states`` distinct states: every initial state and
    every transition out of each explored state (including those to states beyond the bound)."""
    ref = Refinement(m, variant)
    initial_failures = []
    seen, queue = set(), deque()
    for s0 in m.init_states():
        failed = ref.check_initial(s0)
        if failed:
            initial_failures.append(failed)
        seen.add(s0)
        queue.append(s0)
    transitions, offences, rules = 0, [], {}
    while queue and len(offences) < max_offences:
        state = queue.popleft()
        for action, after in m.successors(state):
            transitions += 1
            name = m.rules[action.rule].name
            rules[name] = rules.get(name, 0) + 1
            off = ref.check_transition(state, action, after)
            if off is not None and len(offences) < max_offences:
                offences.append(off)
            if after not in seen and len(seen) < max_states:
                seen.add(after)
                queue.append(after)
    return Report(len(seen), transitions, ref.abstract_transitions, tuple(initial_failures), tuple(offences), rules)


def describe(off: Offence) -> str:
    """One offence in a few lines: the explicit action, the abstract action's false conjuncts, and the
    vocabulary's values that changed."""
    from model.storage.state import DIR_NAMES, HOSTED_NAMES
    names = {"dir": DIR_NAMES, "hosted": HOSTED_NAMES}
    letters = {f.name: [a[0].lower() if a != "Bool" else "n" for a in f.args] for f in FIELDS}

    def show(field, v):
        return names[field][v] if field in names else str(bool(v)).lower()

    lines = [f"{off.label} (abstract action {off.action}) breaks: {'; '.join(off.failed)}"]
    for field, values in off.pre.items():
        for idx, v in values.items():
            w = off.post[field][idx]
            if w != v:
                args = ",".join(f"isNew={str(bool(i)).lower()}" if letter == "n" else f"{letter}{i}"
                                for letter, i in zip(letters[field], idx))
                lines.append(f"    {field}({args}): {show(field, v)} -> {show(field, w)}")
    return "\n".join(lines)
