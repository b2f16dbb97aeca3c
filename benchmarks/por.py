"""Time to verdict with and without partial-order reduction (--por), per preset, on 1 and 2 workers, with and
without symmetry; the legacy counterexample lengths with and without POR; and, per preset, what blocks the
reduction (how many actions each selected invariant makes visible).

    PYTHONPATH=. python benchmarks/por.py [--presets tiny,reassignment-race] [--invariant ID ...] [--why N]
    PYTHONPATH=. python benchmarks/por.py --presets tiny,small,medium --independence 20000
    PYTHONPATH=. python benchmarks/por.py --presets tiny,reassignment --sleep-sets
    PYTHONPATH=. python benchmarks/por.py --presets tiny --commute 3000

Prints one line per run: preset, symmetry, workers, por, result, distinct, generated, seconds, POR note.
``--why N``: instead, why each of the first N states of a BFS is not reduced (closure over every enabled action,
C2/C2q, nothing enabled), and how many have a controller event enabled.
``--independence N``: instead, over the first N states of a BFS, how many pairs of enabled actions are
independent by their footprints at the state (what any partial-order reduction, stubborn or sleep sets, could
use), and the components that most often make a pair dependent.
``--sleep-sets``: instead, BFS with sleep sets (Godefroid; by the same footprints, without symmetry, a state met
again with a smaller sleep set re-expanded with what it had slept) against plain BFS: the transitions each
generates, and whether they reach the same states at the same depths. Sleep sets prune transitions, never states.
``--commute N``: instead, over the first N states of a BFS (without symmetry), how many pairs of enabled actions
commute at the state itself (each stays enabled after the other, and both orders reach the same state): an upper
bound on what any independence relation could use, next to which components each rule actually changed there.
Commuting at one state is weaker than the independence a reduction needs (along every path of other actions).
``--ideal``: instead, an optimistic bound on what any partial-order reduction could do with the model as it is:
BFS (without symmetry, or with it under ``--symmetry``) that expands, where it can, one enabled action that
commutes at the state with every other enabled action (the ``--commute`` test), ignoring visibility and
independence along paths, with BFS's cycle proviso (the action's successor must be new); elsewhere every action.
Not sound (it may miss states, and says how many quiescent ones it missed): a sound reduction must also respect
visibility and independence along paths, so this indicates its room, without being a strict bound on it.
"""
from __future__ import annotations

import argparse
import time

from explorer.por import Reduction
from explorer.search import SearchOptions, explore
from explorer.catalog import preset_config
from explorer.catalog import build_model


def run(preset, symmetry, workers, por, invariants, **overrides):
    model = build_model(preset_config(preset, **overrides), symmetry=symmetry, invariants=invariants or None)
    start = time.monotonic()
    r = explore("bfs", model, model.invariants, SearchOptions(por=por, workers=workers, all_violations=True))
    return r, time.monotonic() - start


def why(preset, invariants, limit) -> None:
    from collections import Counter

    from tests.support.helpers import bfs_states

    model = build_model(preset_config(preset), invariants=invariants or None)
    red = Reduction(model, model.invariants)
    counts, controller = Counter(), 0
    for state in bfs_states(model, model.fingerprint, limit).values():
        counts[red.why_full(state) or "reduced"] += 1
        controller += any(model.action_space[pos][1].kind == "controller"
                          for pos in range(len(model.action_space)) if red.enabled(state) >> pos & 1)
    total = sum(counts.values())
    print(f"{preset} ({', '.join(invariants) or 'default invariants'}), first {total:,} BFS states: "
          + ", ".join(f"{k} {v:,}" for k, v in counts.most_common()) + f"; a controller event enabled in {controller:,}")


def independence(preset, limit) -> None:
    from collections import Counter

    from tests.support.helpers import bfs_states

    model = build_model(preset_config(preset))
    red = Reduction(model, model.invariants)
    fp = red.footprints
    pairs = independent = 0
    shared = Counter()
    for state in bfs_states(model, model.fingerprint, limit).values():
        enabled = [pos for pos in range(len(model.action_space)) if red.enabled(state) >> pos & 1]
        foot = {pos: fp.at(model, state, pos) for pos in enabled}
        for i, p in enumerate(enabled):
            for q in enabled[i + 1:]:
                (rp, wp), (rq, wq) = foot[p], foot[q]
                clash = wp & (rq | wq) | wq & rp
                pairs += 1
                independent += not clash
                shared.update(name.split("]")[-1].lstrip(".") if name.startswith("broker[") else name
                              for name in fp.components.describe(clash))
    print(f"{preset}, first {limit:,} BFS states: {pairs:,} pairs of enabled actions, {independent:,} independent; "
          "components shared most often (per broker field, any broker): "
          + ", ".join(f"{k} {v:,}" for k, v in shared.most_common(8)))


def commute(preset, limit) -> None:
    from collections import Counter, defaultdict

    from model.spec.footprint import Components
    from tests.support.helpers import bfs_states

    model = build_model(preset_config(preset))
    comps = Components.of(model)
    keys = list(comps.keys())
    name = lambda a: model.rules[a.rule].name                      # noqa: E731

    def label(action, key) -> str:
        """A component by its role: the acting broker's own field, another broker's, or by its name."""
        if key[0] != "broker":
            return comps.names[comps.index[key]]
        own = model.rules[action.rule].params[:1] == ("broker",) and action.args[0] == key[1]
        return f"broker[{'own' if own else 'other'}].{key[2]}"

    pairs, commuting, by_rule, changed = 0, 0, Counter(), defaultdict(set)
    for state in bfs_states(model, model.fingerprint, limit).values():
        succ = {(a.rule, a.args): (a, after) for a, after in model.successors(state)}
        for a, after in succ.values():
            changed[name(a)].update(label(a, k) for k in keys
                                    if comps.get(state, k, model.ext_index) != comps.get(after, k, model.ext_index))
        ids = list(succ)
        for i, p in enumerate(ids):
            after_p = {(a.rule, a.args): t for a, t in model.successors(succ[p][1])}
            for q in ids[i + 1:]:
                after_q = {(a.rule, a.args): t for a, t in model.successors(succ[q][1])}
                pq, qp = after_p.get(q), after_q.get(p)
                same = pq is not None and qp is not None and model.fingerprint(pq) == model.fingerprint(qp)
                pairs += 1
                commuting += same
                by_rule[(*sorted((name(succ[p][0]), name(succ[q][0]))), same)] += 1
    print(f"{preset}, first {limit:,} BFS states: {pairs:,} pairs of enabled actions, {commuting:,} commute at the "
          f"state ({100 * commuting / max(pairs, 1):.1f}%). Most frequent pairs (commuting/all):")
    rule_pairs = Counter()
    for (a, b, _), n in by_rule.items():
        rule_pairs[a, b] += n
    for (a, b), n in rule_pairs.most_common(12):
        print(f"  {a:30} {b:30} {by_rule[a, b, True]:>6,}/{n:,}")
    print("Components each rule changed on those states:")
    for rule in sorted(changed):
        print(f"  {rule:30} {', '.join(sorted(changed[rule]))}")


def ideal(preset, symmetry: bool = False) -> None:
    model = build_model(preset_config(preset), symmetry=symmetry)
    fingerprint = model.fingerprint

    def commutes(p, q, nexts) -> bool:
        pq, qp = nexts[p].get(q), nexts[q].get(p)
        return pq is not None and qp is not None and fingerprint(pq) == fingerprint(qp)

    def search(reduce: bool):
        started = time.perf_counter()
        init = model.init_states()[0]
        seen, frontier, generated, singletons, quiescent = {fingerprint(init)}, [init], 0, 0, set()
        while frontier:
            following = []
            for state in frontier:
                if model.is_quiescent(state):
                    quiescent.add(fingerprint(state))
                succ = [((a.rule, a.args), t) for a, t in model.successors(state)]
                chosen = succ
                if reduce and len(succ) > 1:
                    nexts = {}
                    for p, after_p in succ:
                        if fingerprint(after_p) in seen:
                            continue
                        for q, after_q in succ:
                            if q not in nexts:
                                nexts[q] = {(a.rule, a.args): t for a, t in model.successors(after_q)}
                        if all(commutes(p, q, nexts) for q, _ in succ if q != p):
                            chosen, singletons = [(p, after_p)], singletons + 1
                            break
                for _, after in chosen:
                    generated += 1
                    f = fingerprint(after)
                    if f not in seen:
                        seen.add(f)
                        following.append(after)
            frontier = following
        return len(seen), generated, quiescent, singletons, time.perf_counter() - started

    full_states, full_generated, full_quiescent, _, full_s = search(False)
    states, generated, quiescent, singletons, secs = search(True)
    print(f"{preset} ({'dir symmetry' if model.symmetry else 'no symmetry'}): full BFS {full_states:,} states, {full_generated:,} transitions, "
          f"{len(full_quiescent):,} quiescent states ({full_s:.0f} s); one locally commuting action where one exists: "
          f"{states:,} states ({full_states / states:.2f}x fewer), {generated:,} transitions, "
          f"{singletons:,} states expanded by one action, {len(full_quiescent - quiescent):,} quiescent states "
          f"missed ({secs:.0f} s)")


def sleep_sets(preset) -> None:
    model = build_model(preset_config(preset))
    fp = Reduction(model, model.invariants).footprints

    def fire(state, pos):
        return model.settle(model._space[pos][2](model, state, *model._space[pos][3]))[0]

    def enabled(state):
        return [pos for pos, (_, guard, _, args) in enumerate(model._space) if guard(model, state, *args) is None]

    def independent(state, pos):
        return ~fp.dependent_on(pos, *fp.at(model, state, pos))

    def search(use_sleep):
        init = model.init_states()[0]
        depth = {model.fingerprint(init): 0}
        asleep, done = {model.fingerprint(init): 0}, set()
        frontier, generated, level = [(init, model.fingerprint(init), None)], 0, 0
        while frontier:
            following = []
            for state, f, only in frontier:
                sleep, explored = asleep[f], 0
                for pos in enabled(state):
                    if use_sleep and (sleep >> pos & 1 if only is None else not only >> pos & 1):
                        continue
                    after = fire(state, pos)
                    generated += 1
                    after_sleep = (sleep | explored) & independent(state, pos) if use_sleep else 0
                    explored |= 1 << pos
                    g = model.fingerprint(after)
                    if g not in depth:
                        depth[g], asleep[g] = level + 1, after_sleep
                        following.append((after, g, None))
                    elif g not in done:
                        asleep[g] &= after_sleep
                    elif asleep[g] & ~after_sleep:
                        following.append((after, g, asleep[g] & ~after_sleep))
                        asleep[g] &= after_sleep
                done.add(f)
            frontier, level = following, level + 1
        return depth, generated

    plain, plain_generated = search(False)
    slept, slept_generated = search(True)
    print(f"{preset} (no symmetry): plain BFS {len(plain):,} states, {plain_generated:,} transitions; with sleep sets "
          f"{len(slept):,} states, {slept_generated:,} transitions ({100 * (1 - slept_generated / plain_generated):.2f}% "
          f"fewer); same states at the same depths: {plain == slept}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--presets", default="tiny,reassignment-race")
    ap.add_argument("--invariant", action="append", default=[])
    ap.add_argument("--why", type=int, default=0)
    ap.add_argument("--independence", type=int, default=0)
    ap.add_argument("--sleep-sets", action="store_true")
    ap.add_argument("--commute", type=int, default=0)
    ap.add_argument("--ideal", action="store_true")
    ap.add_argument("--symmetry", action="store_true", help="with --ideal: under dir symmetry, as the default")
    args = ap.parse_args()
    modes = ((args.ideal, lambda preset: ideal(preset, args.symmetry)),
             (args.commute, lambda preset: commute(preset, args.commute)),
             (args.sleep_sets, sleep_sets),
             (args.independence, lambda preset: independence(preset, args.independence)),
             (args.why, lambda preset: why(preset, args.invariant, args.why)))
    for asked, mode in modes:
        if asked:
            for preset in args.presets.split(","):
                mode(preset)
            return
    for preset in args.presets.split(","):
        model = build_model(preset_config(preset), invariants=args.invariant or None)
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
