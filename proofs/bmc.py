"""Bounded model checking: the z3 transition relation unrolled K steps on a fixed finite size, and the first
depth at which a property can be violated (docs/proofs.md, "Bounded model checking")."""
from __future__ import annotations

import itertools
import time

import z3

from .induction import snapshot, state_lines
from .properties import PROPERTIES
from .system import ACTIONS, Finite, StateVars, conj, initial, relation, sort_of, witnesses


def _label(model, u, action, combo, w) -> str:
    elems = {u.B: u.elements[u.B], u.D: u.elements[u.D], u.P: u.elements[u.P]}
    index = {s: {str(e): i for i, e in enumerate(es)} for s, es in elems.items()}
    parts = [f"{name}={index[sort_of(u, sort)][str(e)]}" for (name, sort), e in zip(action.params, combo)]
    label = f"{action.name}({', '.join(parts)})"

    def true(x):
        return z3.is_true(model.eval(x, model_completion=True))
    if "handled" in w:
        entries = [f"p{i} isNew={str(true(w['is_new'](p))).lower()}"
                   for i, p in enumerate(u.elements[u.P]) if true(w["handled"](p))]
        label += " handling LeaderAndIsr[" + ", ".join(entries) + "]"
    if "stopped" in w:
        entries = [f"p{i}" for i, p in enumerate(u.elements[u.P]) if true(w["stopped"](p))]
        label += " handling StopReplica[" + ", ".join(entries) + "]"
    return label


def bmc(prop_id: str, variant: str, brokers: int, dirs: int, partitions: int, depth: int) -> dict:
    """The first k <= depth at which some path of k steps from the initial state violates the property (for
    a transition property: its k-th step does; for a state property: its k-th state does), with that path;
    or no violation up to depth."""
    prop = PROPERTIES[prop_id]
    u = Finite(brokers, dirs, partitions)
    start = time.monotonic()
    states = [StateVars(u, f"s{i}") for i in range(depth + 1)]
    solver = z3.Solver()
    solver.add(conj(initial(u, states[0])))
    steps: list = []
    found = None
    for k in range(0, depth + 1):
        if k > 0:
            s, t = states[k - 1], states[k]
            choices = []
            for action in ACTIONS:
                for j, combo in enumerate(itertools.product(*(u.elements[sort_of(u, srt)] for _, srt in action.params))):
                    sel = z3.Bool(f"step{k}.{action.name}.{j}")
                    w = witnesses(u, action, f"step{k}.{action.name}.{j}")
                    solver.add(z3.Implies(sel, conj(relation(u, action, s, t, w, variant, combo))))
                    choices.append((sel, action, combo, w))
            solver.add(z3.Or([c[0] for c in choices]))
            steps.append(choices)
            if prop.kind == "transition":
                violated = z3.Or([z3.And(sel, z3.Not(prop.formula(u, s, t, a.name, w, combo)))
                                  for sel, a, combo, w in choices])
            else:
                violated = z3.Not(prop.formula(u, t))
        else:
            if prop.kind == "transition":
                continue
            violated = z3.Not(prop.formula(u, states[0]))
        solver.push()
        solver.add(violated)
        result = solver.check()
        if result == z3.sat:
            found = (k, solver.model())
            solver.pop()
            break
        solver.pop()
        if result == z3.unknown:
            return {"id": prop.id, "result": "unknown", "checked_depth": k - 1,
                    "elapsed_s": round(time.monotonic() - start, 3)}
    out = {"id": prop.id, "kind": prop.kind, "size": {"brokers": brokers, "dirs": dirs, "partitions": partitions},
           "depth_bound": depth}
    if found is None:
        out.update(result="no violation", first_violation_depth=None, trace=[])
    else:
        k, model = found
        elems = {u.B: u.elements[u.B], u.D: u.elements[u.D], u.P: u.elements[u.P]}
        trace = [{"step": 0, "action": None, "state": snapshot(model, u, states[0], elems)}]
        for i in range(1, k + 1):
            label = "?"
            for sel, action, combo, w in steps[i - 1]:
                if z3.is_true(model.eval(sel, model_completion=True)):
                    label = _label(model, u, action, combo, w)
                    break
            trace.append({"step": i, "action": label, "state": snapshot(model, u, states[i], elems)})
        out.update(result="violation", first_violation_depth=k, trace=trace)
    out["elapsed_s"] = round(time.monotonic() - start, 3)
    return out


def render(result: dict) -> list[str]:
    size = result.get("size", {})
    head = (f"{result['id']} ({result.get('kind', '?')} property), bounded model checking on "
            f"{size.get('brokers')} broker(s) x {size.get('dirs')} dir(s), {size.get('partitions')} partition(s), "
            f"up to {result.get('depth_bound')} steps:")
    lines = [head]
    if result["result"] == "unknown":
        lines.append(f"  UNKNOWN after depth {result['checked_depth']}")
    elif result["result"] == "no violation":
        lines.append(f"  no violation up to depth {result['depth_bound']} ({result['elapsed_s']:.1f}s)")
    else:
        lines.append(f"  VIOLATION at depth {result['first_violation_depth']} ({result['elapsed_s']:.1f}s):")
        prev = None
        for step in result["trace"]:
            if step["action"] is None:
                lines.append("  Step 0: initial state")
            else:
                lines.append(f"  Step {step['step']}: {step['action']}")
                lines += state_lines(step["state"], prev, indent="      ")
            prev = step["state"]
    return lines
