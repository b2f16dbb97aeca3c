"""Time to verdict with and without partial-order reduction (--por), per preset, on 1 and 2 workers, with and
without symmetry; the legacy counterexample lengths with and without POR; and, per preset, what blocks the
reduction (how many actions each selected invariant makes visible).

    PYTHONPATH=. python benchmarks/por.py [--presets tiny,reassignment-race] [--invariant ID ...] [--why N]

Prints one line per run: preset, symmetry, workers, por, result, distinct, generated, seconds, POR note.
``--why N``: instead, why each of the first N states of a BFS is not reduced (closure over every enabled action,
C2/C2q, nothing enabled), and how many have a controller event enabled.
"""
from __future__ import annotations

import argparse
import time

from explorer.por import Reduction
from explorer.search import SearchOptions, explore
from model import Model
from model.presets import preset_config


def run(preset, symmetry, workers, por, invariants, **overrides):
    model = Model(preset_config(preset, **overrides), symmetry=symmetry, invariants=invariants or None)
    start = time.monotonic()
    r = explore("bfs", model, model.invariants, SearchOptions(por=por, workers=workers, all_violations=True))
    return r, time.monotonic() - start


def why(preset, invariants, limit) -> None:
    from collections import Counter

    from tests.helpers import bfs_states

    model = Model(preset_config(preset), invariants=invariants or None)
    red = Reduction(model, model.invariants)
    counts, controller = Counter(), 0
    for state in bfs_states(model, model.fingerprint, limit).values():
        counts[red.why_full(state) or "reduced"] += 1
        controller += any(model.action_space[pos][1].kind == "controller"
                          for pos in range(len(model.action_space)) if red.enabled(state) >> pos & 1)
    total = sum(counts.values())
    print(f"{preset} ({', '.join(invariants) or 'default invariants'}), first {total:,} BFS states: "
          + ", ".join(f"{k} {v:,}" for k, v in counts.most_common()) + f"; a controller event enabled in {controller:,}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--presets", default="tiny,reassignment-race")
    ap.add_argument("--invariant", action="append", default=[])
    ap.add_argument("--why", type=int, default=0)
    args = ap.parse_args()
    if args.why:
        for preset in args.presets.split(","):
            why(preset, args.invariant, args.why)
        return
    for preset in args.presets.split(","):
        model = Model(preset_config(preset), invariants=args.invariant or None)
        red = Reduction(model, model.invariants)
        print(f"{preset}: {bin(red.visible).count('1')} of {len(model.action_space)} actions visible to the transition "
              f"invariants; actions each invariant sees: "
              + ", ".join(f"{k} {v}" for k, v in sorted(red.blocked_by.items(), key=lambda kv: -kv[1])))
        for symmetry in (True, False):
            for workers in (1, 2):
                for por in (False, True):
                    r, secs = run(preset, symmetry, workers, por, args.invariant)
                    note = (r.por or {}).get("note") or (f"reduced {r.por['reduced_states']}" if r.por else "")
                    print(f"  {preset:18} sym={symmetry!s:5} w={workers} por={por!s:5} {r.result:9} "
                          f"{r.distinct_states:>9,} {r.states_generated:>10,} {secs:7.1f}s  {note[:70]}")
    for por in (False, True):
        r, _ = run("tiny", True, 1, por, [], variant="legacy")
        print(f"legacy tiny counterexamples, por={por}: "
              + ", ".join(f"{v.invariant.id} {len(v.trace) - 1} steps" for v in r.violations))


if __name__ == "__main__":
    main()
