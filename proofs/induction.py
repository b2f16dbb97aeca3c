"""Initiation and consecution of a property's inductive invariant, per action, for every cluster size; a
counterexample to induction (CTI) as a small concrete pre-state, action and post-state (docs/proofs.md)."""
from __future__ import annotations

import itertools
import time

import z3

from .properties import PROPERTIES, invariant_parts
from .system import (
    ACTIONS, DIR_VALUES, HOSTED_VALUES, StateVars, Symbolic, conj, initial, relation, sort_of, witnesses,
)

TIMEOUT_MS = 60_000
_DIR_NAMES = {str(v): str(v) for v in DIR_VALUES}
_HOSTED_NAMES = {str(v): str(v) for v in HOSTED_VALUES}


class Context:
    """One symbolic universe with a pre-state ``s`` and a post-state ``t``."""

    def __init__(self):
        self.u = Symbolic()
        self.s = StateVars(self.u, "pre")
        self.t = StateVars(self.u, "post")

    def params(self, action):
        return tuple(z3.Const(name, sort_of(self.u, sort)) for name, sort in action.params)

    def invariant(self, prop, st):
        return [(name, f(self.u, st)) for name, f in invariant_parts(prop)]


def _solve(solver: z3.Solver, u, bound_universe: bool = True):
    """Check; on sat, retry with the sorts bounded to 1 to 3 elements each, smallest universe first, so that
    the model (the counterexample) is small."""
    result = solver.check()
    if result != z3.sat or not bound_universe:
        return result, (solver.model() if result == z3.sat else None)
    sizes = sorted(itertools.product((1, 2, 3), repeat=3), key=lambda c: (sum(c), c))
    for size in sizes:
        solver.push()
        for sort, n in zip((u.B, u.D, u.P), size):
            cs = [z3.Const(f"__{sort}{i}", sort) for i in range(n)]
            x = z3.FreshConst(sort)
            solver.add(z3.ForAll([x], z3.Or([x == c for c in cs])))
        small = solver.check()
        if small == z3.sat:
            model = solver.model()
            solver.pop()
            return z3.sat, model
        solver.pop()
    return z3.sat, solver.model()


# ---- reading a state out of a z3 model -----------------------------------------------------------------------
def _universe(model, sort):
    elems = model.get_universe(sort)
    return list(elems) if elems is not None else []


def snapshot(model, u, st, elems=None) -> dict:
    """A state of the model as plain values: brokers (with dirs and per-partition facts) and partitions."""
    if elems is None:
        elems = {s: _universe(model, s) for s in (u.B, u.D, u.P)}
    bs, ds, ps = elems[u.B], elems[u.D], elems[u.P]

    def ev(x):
        return model.eval(x, model_completion=True)

    def truth(x):
        return z3.is_true(ev(x))

    brokers = []
    for bi, b in enumerate(bs):
        parts = []
        for pi, p in enumerate(ps):
            parts.append({
                "partition": pi,
                "hosted": str(ev(st.hosted(b, p))),
                "log_on_dirs": [di for di, d in enumerate(ds) if truth(st.copy(b, p, d))],
                "leader_and_isr_in_flight": [f"isNew={str(n).lower()}" for n in (False, True)
                                             if truth(st.pending(b, p, z3.BoolVal(n)))],
                "stop_replica_in_flight": truth(st.stop_pending(b, p)),
            })
        brokers.append({
            "broker": bi, "up": truth(st.up(b)), "dirs": [str(ev(st.dir(b, d))) for d in ds],
            "controller_counts_live": truth(st.live(b)), "notification_pending": truth(st.notified(b)),
            "response_pending": truth(st.replied(b)), "partitions": parts,
        })
    partitions = [{"partition": pi, "created": truth(st.created(p)), "has_record": truth(st.rec(p))}
                  for pi, p in enumerate(ps)]
    return {"brokers": brokers, "partitions": partitions}


def flatten(snap: dict) -> dict:
    out = {}
    for b in snap["brokers"]:
        for k, v in b.items():
            if k not in ("broker", "partitions"):
                out[f"brokers[{b['broker']}].{k}"] = v
        for p in b.get("partitions", ()):   # a broker's own partitions (KIP-112's vocabulary; KRaft's has none)
            for k, v in p.items():
                if k != "partition":
                    out[f"brokers[{b['broker']}].partitions[{p['partition']}].{k}"] = v
    for p in snap["partitions"]:
        for k, v in p.items():
            if k != "partition":
                out[f"partitions[{p['partition']}].{k}"] = v
    return out


def _fmt(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return "[" + ", ".join(map(str, v)) + "]"
    return str(v)


def state_lines(snap: dict, before: dict | None = None, indent: str = "    ", fmt=_fmt) -> list[str]:
    now = flatten(snap)
    if before is None:
        return [f"{indent}{k} = {fmt(v)}" for k, v in now.items()]
    old = flatten(before)
    return [f"{indent}{k}: {fmt(old.get(k))} -> {fmt(v)}" for k, v in now.items() if old.get(k) != v]


def action_label(model, u, action, args, w, elems) -> str:
    index = {s: {str(e): i for i, e in enumerate(elems[s])} for s in (u.B, u.D, u.P)}
    parts = []
    for (name, sort), a in zip(action.params, args):
        value = model.eval(a, model_completion=True)
        parts.append(f"{name}={index[sort_of(u, sort)].get(str(value), str(value))}")
    label = f"{action.name}({', '.join(parts)})"
    if "handled" in w:
        entries = [f"p{pi} isNew={str(z3.is_true(model.eval(w['is_new'](p), model_completion=True))).lower()}"
                   for pi, p in enumerate(elems[u.P]) if z3.is_true(model.eval(w["handled"](p), model_completion=True))]
        label += " handling LeaderAndIsr[" + ", ".join(entries) + "]"
    if "stopped" in w:
        entries = [f"p{pi}" for pi, p in enumerate(elems[u.P])
                   if z3.is_true(model.eval(w["stopped"](p), model_completion=True))]
        label += " handling StopReplica[" + ", ".join(entries) + "]"
    return label


# ---- the checks --------------------------------------------------------------------------------------------
def check_initiation(ctx: Context, prop) -> dict:
    solver = z3.Solver()
    solver.set("timeout", TIMEOUT_MS)
    solver.add(conj(initial(ctx.u, ctx.s)))
    inv = ctx.invariant(prop, ctx.s)
    solver.add(z3.Not(z3.And([f for _, f in inv])))
    result, model = _solve(solver, ctx.u)
    if result == z3.unsat:
        return {"action": "initiation", "result": "proved"}
    if result == z3.unknown:
        return {"action": "initiation", "result": "unknown", "reason": solver.reason_unknown()}
    elems = {s: _universe(model, s) for s in (ctx.u.B, ctx.u.D, ctx.u.P)}
    broken = [n for n, f in inv if not z3.is_true(model.eval(f, model_completion=True))]
    return {"action": "initiation", "result": "cti", "broken": broken,
            "cti": {"pre": snapshot(model, ctx.u, ctx.s, elems)}}


def check_action(ctx: Context, prop, action, variant: str) -> dict:
    u, s, t = ctx.u, ctx.s, ctx.t
    args = ctx.params(action)
    w = witnesses(u, action, action.name)
    solver = z3.Solver()
    solver.set("timeout", TIMEOUT_MS)
    solver.add(z3.And([f for _, f in ctx.invariant(prop, s)]))
    solver.add(conj(relation(u, action, s, t, w, variant, args)))
    goal = ctx.invariant(prop, t)
    if prop.kind == "transition":
        goal = [(prop.id, prop.formula(u, s, t, action.name, w, args))] + goal
    solver.add(z3.Not(z3.And([f for _, f in goal])))
    result, model = _solve(solver, u)
    if result == z3.unsat:
        return {"action": action.name, "result": "proved"}
    if result == z3.unknown:
        return {"action": action.name, "result": "unknown", "reason": solver.reason_unknown()}
    elems = {srt: _universe(model, srt) for srt in (u.B, u.D, u.P)}
    broken = [n for n, f in goal if not z3.is_true(model.eval(f, model_completion=True))]
    pre, post = snapshot(model, u, s, elems), snapshot(model, u, t, elems)
    return {"action": action.name, "result": "cti", "broken": broken,
            "cti": {"universe": {"brokers": len(elems[u.B]), "dirs": len(elems[u.D]),
                                 "partitions": len(elems[u.P])},
                    "pre": pre, "action": action_label(model, u, action, args, w, elems), "post": post}}


def follows_from_one_step(ctx: Context, prop, variant: str) -> bool:
    """Whether the property is proved with no lemma (a transition property: by every action from any state; a
    state property: inductive alone): then its proof says nothing about what the protocol reaches, only that
    each step (e.g. the broker's local check) implies it."""
    bare = prop._replace(lemmas=())
    u, s, t = ctx.u, ctx.s, ctx.t
    inv = [f for _, f in ctx.invariant(bare, s)]
    solver = z3.Solver()
    solver.set("timeout", TIMEOUT_MS)
    solver.add(conj(initial(u, s)))
    solver.add(z3.Not(z3.And(inv)))
    if solver.check() != z3.unsat:
        return False
    for action in ACTIONS:
        args = ctx.params(action)
        w = witnesses(u, action, action.name)
        solver = z3.Solver()
        solver.set("timeout", TIMEOUT_MS)
        solver.add(z3.And(inv))
        solver.add(conj(relation(u, action, s, t, w, variant, args)))
        goal = [f for _, f in ctx.invariant(bare, t)]
        if prop.kind == "transition":
            goal.append(prop.formula(u, s, t, action.name, w, args))
        solver.add(z3.Not(z3.And(goal)))
        if solver.check() != z3.unsat:
            return False
    return True


def prove(prop_id: str, variant: str, prop=None) -> dict:
    """Initiation and consecution per action of one property's inductive invariant (``prop``: a changed
    Property to prove instead of the registered one, for the mutation tests)."""
    prop = prop or PROPERTIES[prop_id]
    ctx = Context()
    start = time.monotonic()
    checks = [check_initiation(ctx, prop)] + [check_action(ctx, prop, a, variant) for a in ACTIONS]
    proved = all(c["result"] == "proved" for c in checks)
    out = {"id": prop.id, "kind": prop.kind, "statement": prop.statement,
           "invariant": [n for n, _ in invariant_parts(prop)], "result": "proved" if proved else "not proved",
           "checks": checks}
    if proved:
        out["follows_from_one_step"] = follows_from_one_step(ctx, prop, variant)
    out["elapsed_s"] = round(time.monotonic() - start, 3)
    return out


def render(result: dict, show=None) -> list[str]:
    """The lines of one property's result; ``show(snap, before)``: a CTI state's lines (KIP-112's by default)."""
    show = show or (lambda snap, before=None: state_lines(snap, before, indent="      "))
    lines = [f"{result['id']} ({result['kind']} property): {result['statement']}",
             "  inductive invariant: " + (" & ".join(result["invariant"]) or "true")]
    for c in result["checks"]:
        name = c["action"]
        if c["result"] == "proved":
            lines.append(f"  {name:<32} proved")
        elif c["result"] == "unknown":
            lines.append(f"  {name:<32} UNKNOWN ({c['reason']})")
        else:
            lines.append(f"  {name:<32} NOT PROVED: counterexample to induction, breaks {', '.join(c['broken'])}")
            cti = c["cti"]
            if "universe" in cti:
                u = cti["universe"]
                lines.append(f"    universe: {u['brokers']} broker(s), {u['dirs']} dir(s), {u['partitions']} "
                             f"partition(s)")
            lines.append("    pre-state:")
            lines += show(cti["pre"])
            if "action" in cti:
                lines.append(f"    action: {cti['action']}")
                lines.append("    post-state (what changed):")
                lines += show(cti["post"], cti["pre"])
    note = ""
    if result.get("follows_from_one_step"):
        note = ("; follows from one step: no lemma is needed, so the proof does not depend on what the protocol "
                "reaches")
    elif result.get("follows_from_one_step") is False:
        note = "; needs its lemmas (depends on the protocol's reachable states)"
    lines.append(f"  => {result['result']}{note} ({result['elapsed_s']:.1f}s)")
    return lines
