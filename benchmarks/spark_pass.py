"""The Spark engine's Python work per state against the local BFS's, on the same states, without Spark.

Runs the Spark workers' fused pass (spark_explore/worker.py ``LevelPass``) level by level in this process, the
shuffle replaced by a dict of candidate blocks per partition, then the one-process BFS on the same model, and
prints both CPU times per distinct state, with the share of the pass spent packing candidate blocks and decoding
them (model/spec/codec.py). No JVM, so what is left between the two is the engine's own work. Not a test: figures
vary with the machine and its load (docs/spark.md).

    python3 benchmarks/spark_pass.py tiny
    python3 benchmarks/spark_pass.py medium --max-depth 12 --partitions 2 --profile   # cProfile of the pass
"""
from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from explorer.search import SearchOptions, serial_bfs  # noqa: E402
from explorer.catalog import select_invariants as select  # noqa: E402
from model import Model  # noqa: E402
from explorer.catalog import preset_config  # noqa: E402
from spark_explore import worker  # noqa: E402
from explorer.catalog import build_model


class _Stats:
    """Stands in for the pyspark accumulator."""

    def __init__(self):
        self.value = {}

    def add(self, value):
        self.value.update(value)


class _Timed:
    """Wraps a function of the worker module and adds up its CPU seconds."""

    def __init__(self, name: str):
        self.fn, self.seconds = getattr(worker, name), 0.0
        setattr(worker, name, self)

    def __call__(self, *args):
        started = time.process_time()
        try:
            return self.fn(*args)
        finally:
            self.seconds += time.process_time() - started


def spark_pass(model: Model, invariants: list, max_depth: int | None, partitions: int) -> tuple[int, int, int]:
    """The Spark engine's levels, run in this process: (distinct, generated, depth)."""
    key = (model.cfg, model.symmetry, ())
    init = model.init_states()[0]
    fp = model.fingerprint(init)
    inbox = {p: [] for p in range(partitions)}
    inbox[worker.owner(fp, partitions)].append((0, worker.pack_block([fp], [0], [worker.NO_ACTION], [init])))
    visited = dict.fromkeys(range(partitions))
    distinct = generated = depth = level = 0
    while any(inbox.values()):
        stats = _Stats()
        expand = max_depth is None or level < max_depth
        fn = worker.LevelPass(key, (), invariants, frozenset(), level, partitions, expand, stats)
        nxt = {p: [] for p in range(partitions)}
        for p in range(partitions):
            records = ([("V", visited[p])] if visited[p] is not None else []) + inbox[p]
            for record in fn(p, iter(records)):
                if record[0] == "V":
                    visited[p] = record[1]
                else:
                    nxt[record[1]].append((record[1], record[2]))
        new = sum(s["new"] for s in stats.value.values())
        distinct += new
        generated += sum(s["generated"] for s in stats.value.values())
        depth = level if new else depth
        inbox, level = nxt, level + 1
    return distinct, generated, depth


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("preset", nargs="?", default="tiny")
    parser.add_argument("--max-depth", type=int, default=None)
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--symmetry", action="store_true")
    parser.add_argument("--profile", action="store_true", help="print a cProfile of the pass (slower)")
    args = parser.parse_args()
    model = build_model(preset_config(args.preset), symmetry=args.symmetry)
    invariants = list(select())

    pack, decode = _Timed("pack_block"), _Timed("decode_states")
    profile = cProfile.Profile() if args.profile else None
    started = time.process_time()
    if profile is not None:
        profile.enable()
    distinct, generated, depth = spark_pass(model, invariants, args.max_depth, args.partitions)
    if profile is not None:
        profile.disable()
    spark_cpu = time.process_time() - started

    started = time.process_time()
    result = serial_bfs(model, invariants, SearchOptions(max_depth=args.max_depth))
    bfs_cpu = time.process_time() - started

    print(f"preset {args.preset}, symmetry {'on' if model.symmetry else 'off'}, max depth {args.max_depth}, "
          f"{args.partitions} partitions; load average {os.getloadavg()[0]:.2f}")
    print(f"{'engine':<22} {'distinct':>11} {'generated':>11} {'depth':>5} {'CPU s':>8} {'CPU us/state':>13}")
    for name, d, g, dp, cpu in (("Spark pass, no Spark", distinct, generated, depth, spark_cpu),
                                ("BFS, one process", result.distinct_states, result.states_generated, result.depth,
                                 bfs_cpu)):
        print(f"{name:<22} {d:>11,} {g:>11,} {dp:>5} {cpu:>8.2f} {cpu * 1e6 / max(d, 1):>13.0f}")
    same = (distinct, generated, depth) == (result.distinct_states, result.states_generated, result.depth)
    print(f"identical counts: {same}; pass CPU / BFS CPU: {spark_cpu / bfs_cpu:.2f}; of the pass: packing blocks "
          f"{pack.seconds:.2f} s, decoding {decode.seconds:.2f} s")
    if profile is not None:
        pstats.Stats(profile).sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main()
