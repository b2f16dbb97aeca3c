"""Initiation and consecution of KRaft's properties (proofs/kraft_properties.py) for every cluster size, per
action of proofs/kraft_system.py, with a counterexample to induction (CTI) printed on failure; the same result
shape as proofs/induction.py's, so that `jbodcheck prove` renders both alike."""
from __future__ import annotations

import itertools
import time

import z3

from . import induction
from .kraft_properties import PROPERTIES, invariant_parts
from .kraft_system import ACTIONS, StateVars, conj, dir_ref_sort, initial, params, relation, well_formed
from .system import Symbolic

TIMEOUT_MS = 60_000


class Context:
    def __init__(self):
        self.u = Symbolic()
        self.s = StateVars(self.u, "pre")
        self.t = StateVars(self.u, "post")

    def invariant(self, prop, st):
        return [(name, f(self.u, st)) for name, f in invariant_parts(prop)]


def _elements(model, u):
    return {srt: induction._universe(model, srt) for srt in (u.B, u.D, u.P)}


def snapshot(model, u, st, elems) -> dict:
    """A state of a z3 model as plain values."""
    R = dir_ref_sort(u)
    bs, ds, ps = elems[u.B], elems[u.D], elems[u.P]
    index = {str(e): i for i, e in enumerate(bs)}

    def ev(x):
        return model.eval(x, model_completion=True)

    def truth(x):
        return z3.is_true(ev(x))

    def ref(x):
        x = ev(x)
        if z3.is_true(ev(R.is_dir(x))):
            return f"dir {[str(d) for d in ds].index(str(ev(R.dir_of(x))))}"
        return str(x).upper()
    brokers = [{"broker": i, "up": truth(st.up(b)), "registered": truth(st.registered(b)),
                "registration": ({"fenced": truth(st.fenced(b)), "dirs": [j for j, d in enumerate(ds)
                                                                        if truth(st.regdir(b, d))]}
                                 if truth(st.reg(b)) else None)} for i, b in enumerate(bs)]
    parts = []
    for i, p in enumerate(ps):
        exists = truth(st.exists(p))
        replicas = [j for j, b in enumerate(bs) if truth(st.replica(p, b))]
        parts.append({"partition": i, "exists": exists, "replicas": replicas,
                      "isr": [j for j, b in enumerate(bs) if truth(st.isr(p, b))],
                      "leader": index.get(str(ev(st.leader(p))), "?") if truth(st.has_leader(p)) else "none",
                      "directories": [ref(st.dirs(p, bs[j])) for j in replicas],
                      "leader_epoch": ev(st.leader_epoch(p)).as_long(),
                      "partition_epoch": ev(st.partition_epoch(p)).as_long()})
    return {"brokers": brokers, "partitions": parts}


def state_lines(snap: dict, before: dict | None = None, indent: str = "      ") -> list[str]:
    """A CTI state's lines, as KIP-112's (proofs/induction.py), values as Python prints them."""
    return induction.state_lines(snap, before, indent, fmt=str)


def _label(model, u, action, args, elems) -> str:
    index = {srt: {str(e): i for i, e in enumerate(elems[srt])} for srt in (u.B, u.P)}
    parts = []
    for (name, srt), a in zip(action.params, args):
        sort = u.B if srt == "B" else u.P
        value = str(model.eval(a, model_completion=True))
        parts.append(f"{name}={index[sort].get(value, value)}")
    return f"{action.name}({', '.join(parts)})"


class _Expanded:
    """The symbolic sorts with quantifiers expanded over a z3 model's universe, so that a formula built again
    with it evaluates to true or false in that model."""

    def __init__(self, u, elems):
        self.B, self.D, self.P, self.elems = u.B, u.D, u.P, elems

    def forall(self, sorts, body):
        return z3.And([body(*c) for c in itertools.product(*(self.elems[s] for s in sorts))])

    def exists(self, sorts, body):
        return z3.Or([body(*c) for c in itertools.product(*(self.elems[s] for s in sorts))])


def _broken(model, u, prop, st, pre=None, elected_ok=None) -> list:
    """The parts of the invariant (on ``st``), and the transition property (from ``pre``), that z3's model
    makes false."""
    x = _Expanded(u, _elements(model, u))
    parts = [(name, f(x, st)) for name, f in invariant_parts(prop)]
    if pre is not None and prop.kind == "transition":
        parts.insert(0, (prop.id, prop.formula(x, pre, st, elected_ok)))
    return [n for n, f in parts if not z3.is_true(model.eval(f, model_completion=True))]


def check_initiation(ctx: Context, prop) -> dict:
    solver = z3.Solver()
    solver.set("timeout", TIMEOUT_MS)
    solver.add(conj(initial(ctx.u, ctx.s)))
    inv = ctx.invariant(prop, ctx.s)
    solver.add(z3.Not(z3.And([f for _, f in inv] or [z3.BoolVal(True)])))
    result, model = induction._solve(solver, ctx.u)
    if result == z3.unsat:
        return {"action": "initiation", "result": "proved"}
    if result == z3.unknown:
        return {"action": "initiation", "result": "unknown", "reason": solver.reason_unknown()}
    elems = _elements(model, ctx.u)
    broken = _broken(model, ctx.u, prop, ctx.s)
    return {"action": "initiation", "result": "cti", "broken": broken,
            "cti": {"pre": snapshot(model, ctx.u, ctx.s, elems)}}


def _goal(ctx, prop, elected_ok, with_lemmas=True):
    p = prop if with_lemmas else prop._replace(lemmas=())
    goal = ctx.invariant(p, ctx.t)
    if prop.kind == "transition":
        goal = [(prop.id, prop.formula(ctx.u, ctx.s, ctx.t, elected_ok))] + goal
    return goal


def check_action(ctx: Context, prop, action, mutation=None) -> dict:
    u, s, t = ctx.u, ctx.s, ctx.t
    args = params(u, action, action.name)
    solver = z3.Solver()
    solver.set("timeout", TIMEOUT_MS)
    solver.add(z3.And([f for _, f in ctx.invariant(prop, s)] + [well_formed(u, s)]))
    rel, elected_ok = relation(u, action, s, t, args, action.name, mutation)
    solver.add(conj(rel))
    goal = _goal(ctx, prop, elected_ok)
    solver.add(z3.Not(z3.And([f for _, f in goal])))
    result, model = induction._solve(solver, u)
    if result == z3.unsat:
        return {"action": action.name, "result": "proved"}
    if result == z3.unknown:
        return {"action": action.name, "result": "unknown", "reason": solver.reason_unknown()}
    elems = _elements(model, u)
    broken = _broken(model, u, prop, t, s, elected_ok)
    return {"action": action.name, "result": "cti", "broken": broken,
            "cti": {"universe": {"brokers": len(elems[u.B]), "dirs": len(elems[u.D]),
                                 "partitions": len(elems[u.P])},
                    "pre": snapshot(model, u, s, elems), "action": _label(model, u, action, args, elems),
                    "post": snapshot(model, u, t, elems)}}


def follows_from_one_step(ctx: Context, prop, mutation=None) -> bool:
    """Whether the property is proved with no lemma (see proofs/induction.py)."""
    bare = prop._replace(lemmas=())
    if check_initiation(ctx, bare)["result"] != "proved":
        return False
    return all(check_action(ctx, bare, a, mutation)["result"] == "proved" for a in ACTIONS)


def prove(prop_id: str, mutation: str | None = None, prop=None) -> dict:
    """Initiation and consecution per action of one property's inductive invariant (``mutation``: a bug
    planted in the relation; ``prop``: a changed Property, for the mutation tests)."""
    prop = prop or PROPERTIES[prop_id]
    ctx = Context()
    start = time.monotonic()
    checks = [check_initiation(ctx, prop)] + [check_action(ctx, prop, a, mutation) for a in ACTIONS]
    proved = all(c["result"] == "proved" for c in checks)
    out = {"id": prop.id, "kind": prop.kind, "statement": prop.statement,
           "invariant": [n for n, _ in invariant_parts(prop)], "result": "proved" if proved else "not proved",
           "checks": checks}
    if proved:
        out["follows_from_one_step"] = follows_from_one_step(ctx, prop, mutation) if prop.lemmas else True
    out["elapsed_s"] = round(time.monotonic() - start, 3)
    return out


def vacuity(mutation=None) -> dict:
    """Every action's relation is satisfiable from some state satisfying every lemma (else its consecution
    checks would hold vacuously)."""
    from .kraft_properties import LEMMAS

    start = time.monotonic()
    ctx = Context()
    never = []
    for action in ACTIONS:
        solver = z3.Solver()
        solver.set("timeout", TIMEOUT_MS)
        solver.add([lemma.formula(ctx.u, ctx.s) for lemma in LEMMAS.values()])
        rel, _ = relation(ctx.u, action, ctx.s, ctx.t, params(ctx.u, action, action.name), action.name, mutation)
        solver.add(conj(rel))
        if solver.check() != z3.sat:
            never.append(action.name)
    return {"never_enabled": never, "result": "ok" if not never else "vacuous",
            "elapsed_s": round(time.monotonic() - start, 3)}


def render_vacuity(result: dict) -> list[str]:
    head = "vacuity: every action enabled in some state satisfying every lemma:"
    if not result["never_enabled"]:
        return [head + f" yes ({result['elapsed_s']:.1f}s)"]
    return [head + " NO", *(f"  {name:<32} NEVER ENABLED: its consecution checks hold vacuously"
                            for name in result["never_enabled"])]


def render(result: dict) -> list[str]:
    """As proofs/induction.py's render, with KRaft's state in a CTI."""
    return induction.render(result, show=state_lines)
