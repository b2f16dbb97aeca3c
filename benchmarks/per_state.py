"""Where a deep state's time goes: the guards of every action, the effects, the fingerprints and the invariants,
in microseconds per state, on distinct states met deep in seeded random walks (BFS's first states are shallow,
and the work per state changes with depth). The memos are warm from the walks, as they are deep in a long
search; each part is timed three times and the least kept. Not a test: figures vary with the machine and its load.

    PYTHONPATH=. python3 benchmarks/per_state.py small                     # depths 15 to 40, 4,000 states
    PYTHONPATH=. python3 benchmarks/per_state.py medium --states 2000 --from-depth 20 --to-depth 33
"""
from __future__ import annotations

import argparse
import time

from model.spec.engine import Checker
from model import Model
from explorer.catalog import preset_config
from tests.support.helpers import walk_states
from explorer.catalog import build_model


def deep_states(model: Model, count: int, low: int, high: int) -> list:
    """``count`` distinct states met ``low`` to ``high`` steps deep in seeded random walks."""
    found: dict = {}
    seed = 0
    while len(found) < count:
        for state in walk_states(model, 100, high, seed, skip=low):
            found.setdefault(model.fingerprint(state), state)
        seed += 1
    return list(found.values())[:count]


def timed(fn, repeat: int = 3) -> float:
    """The least of ``repeat`` runs' seconds (the machine's noise only adds)."""
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("preset", nargs="?", default="small")
    parser.add_argument("--states", type=int, default=4000)
    parser.add_argument("--from-depth", type=int, default=15)
    parser.add_argument("--to-depth", type=int, default=40)
    args = parser.parse_args()
    model = build_model(preset_config(args.preset), symmetry=True)
    checker = Checker(model, list(model.invariants))
    states = deep_states(model, args.states, args.from_depth, args.to_depth)
    space = model._space

    def guards():
        for s in states:
            for _, guard, _, params in space:
                guard(model, s, *params)

    expanded = [(st, a, t) for st in states for a, t in model.successors(st)]
    g = timed(guards)
    s = timed(lambda: [list(model.successors(st)) for st in states])
    f = timed(lambda: [model.fingerprint(t) for _, _, t in expanded])
    c = timed(lambda: [checker.check_state(t) for _, _, t in expanded])
    t = timed(lambda: [checker.check_transition(st, a, after) for st, a, after in expanded])
    per = 1e6 / len(states)
    print(f"{args.preset}: {len(states):,} states at walk depths {args.from_depth}-{args.to_depth}, "
          f"{len(expanded):,} successors; us per state (least of 3 runs, memos warm from the walks): guards "
          f"{g * per:.0f}, guards and effects {s * per:.0f} (effects about {(s - g) * per:.0f}), fingerprints of "
          f"the successors {f * per:.0f}, state invariants on the successors {c * per:.0f}, transition invariants "
          f"{t * per:.0f}")


if __name__ == "__main__":
    main()
