"""The effect memo (model/spec/effect_memo.py) rule by rule: over the first N states of a BFS, every enabled action's
effect is run directly and through the memo, on the same states, and the seconds each took are summed per rule,
with the memo's hit rate. Not a test: figures vary with the machine.

    PYTHONPATH=. python benchmarks/effect_memo.py tiny small medium --states 40000
    PYTHONPATH=. python benchmarks/effect_memo.py small --variant legacy --rules 20

End to end (the whole search, invariants included) use benchmarks/scale.py with and without --no-memo.
"""
from __future__ import annotations

import argparse
import time
from collections import Counter

from model.spec.effect_memo import MemoisedEffect
from explorer.catalog import preset_config
from explorer.catalog import build_model


def measure(preset: str, variant: str, limit: int, shown: int) -> None:
    cfg = preset_config(preset, variant=variant)
    direct, memoised = build_model(cfg, symmetry=True, memo_effects=False), build_model(cfg, symmetry=True)
    spent_direct, spent_memo = Counter(), Counter()
    seen, frontier, expanded = {direct.fingerprint(direct.init_states()[0])}, direct.init_states(), 0
    clock = time.perf_counter
    while frontier and expanded < limit:
        following = []
        for state in frontier:
            expanded += 1
            for (ri, guard, effect, args), (_, _, memo, _) in zip(direct._space, memoised._space):
                if guard(direct, state, *args) is not None:
                    continue
                t0 = clock()
                after = effect(direct, state, *args)
                t1 = clock()
                again = memo(memoised, state, *args)
                t2 = clock()
                if again != after:
                    raise SystemExit(f"{direct.rules[ri].label(args)}: the memo's successor differs from the effect's")
                spent_direct[ri] += t1 - t0
                spent_memo[ri] += t2 - t1
                after, _ = direct.settle(after)
                fp = direct.fingerprint(after)
                if fp not in seen:
                    seen.add(fp)
                    following.append(after)
        frontier = following
    hits, lookups = Counter(), Counter()
    for (ri, _, _), (_, _, memo, _) in zip(memoised.action_space, memoised._space):
        if isinstance(memo, MemoisedEffect):
            hits[ri] += memo.hits
            lookups[ri] += memo.lookups
    total_d, total_m = sum(spent_direct.values()), sum(spent_memo.values())
    print(f"{preset} ({variant}), first {expanded:,} BFS states: effects {total_d:.2f} s directly, {total_m:.2f} s "
          f"through the memo ({total_d / total_m:.2f}x)")
    for ri in sorted(spent_direct, key=lambda r: -spent_direct[r])[:shown]:
        rate = f"hits {100 * hits[ri] / lookups[ri]:5.1f}%" if lookups[ri] else "not memoised"
        print(f"  {direct.rules[ri].name:34} {spent_direct[ri]:7.3f} s -> {spent_memo[ri]:7.3f} s   {rate}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("presets", nargs="*", default=["tiny", "small", "medium"])
    ap.add_argument("--variant", default="kip112")
    ap.add_argument("--states", type=int, default=40000, help="BFS states to expand per preset")
    ap.add_argument("--rules", type=int, default=12, help="rules shown per preset (the costliest directly)")
    args = ap.parse_args()
    for preset in args.presets:
        measure(preset, args.variant, args.states, args.rules)


if __name__ == "__main__":
    main()
