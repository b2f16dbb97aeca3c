"""Vacuity checks for `jbodcheck prove` (docs/proofs.md, section 3.1): every z3 action must be enabled in some
state reachable in the z3 model within a few steps on a small size. An action whose relation is contradictory
(or whose guard never holds) makes every consecution check about it pass vacuously; prove reports it and fails.
"""
from __future__ import annotations

import itertools
import time

import z3

from .system import ACTIONS, Finite, StateVars, conj, initial, relation, sort_of, witnesses

VACUITY_DEPTH = 5            # every action of the core is enabled within 4 steps on 2 brokers x 2 dirs x 1 partition
VACUITY_SIZE = (2, 2, 1)


def enabled_within(variant: str, depth: int = VACUITY_DEPTH, size=VACUITY_SIZE) -> dict:
    """action name -> the smallest k <= depth such that the action is enabled after k steps from the initial
    state (None: not enabled within depth)."""
    u = Finite(*size)
    states = [StateVars(u, f"vac{i}") for i in range(depth + 1)]
    solver = z3.Solver()
    solver.add(conj(initial(u, states[0])))
    found: dict = {a.name: None for a in ACTIONS}
    for k in range(depth + 1):
        if k > 0:
            s, t = states[k - 1], states[k]
            choices = []
            for action in ACTIONS:
                for j, combo in enumerate(itertools.product(*(u.elements[sort_of(u, srt)]
                                                              for _, srt in action.params))):
                    sel = z3.Bool(f"vac{k}.{action.name}.{j}")
                    w = witnesses(u, action, f"vac{k}.{action.name}.{j}")
                    solver.add(z3.Implies(sel, conj(relation(u, action, s, t, w, variant, combo))))
                    choices.append(sel)
            solver.add(z3.Or(choices))
        for action in ACTIONS:
            if found[action.name] is not None:
                continue
            post = StateVars(u, f"vac{k}.post.{action.name}")
            args = tuple(z3.Const(f"vac{k}.{action.name}.{name}", sort_of(u, srt)) for name, srt in action.params)
            w = witnesses(u, action, f"vac{k}.{action.name}.w")
            solver.push()
            solver.add(conj(relation(u, action, states[k], post, w, variant, args)))
            if solver.check() == z3.sat:
                found[action.name] = k
            solver.pop()
        if all(v is not None for v in found.values()):
            break
    return found


def check(variant: str) -> dict:
    start = time.monotonic()
    found = enabled_within(variant)
    never = [name for name, k in found.items() if k is None]
    return {"depth": VACUITY_DEPTH, "size": dict(zip(("brokers", "dirs", "partitions"), VACUITY_SIZE)),
            "enabled_at": found, "never_enabled": never, "result": "ok" if not never else "vacuous",
            "elapsed_s": round(time.monotonic() - start, 3)}


def render(result: dict) -> list[str]:
    size = result["size"]
    head = (f"vacuity: every action enabled within {result['depth']} steps on {size['brokers']} broker(s) x "
            f"{size['dirs']} dir(s), {size['partitions']} partition(s):")
    if not result["never_enabled"]:
        return [head + f" yes ({result['elapsed_s']:.1f}s)"]
    return [head + " NO", *(f"  {name:<32} NEVER ENABLED: its consecution checks hold vacuously"
                            for name in result["never_enabled"])]
