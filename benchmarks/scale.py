"""Exhaust presets with BFS on 1 and N worker processes and print, per run, distinct states, generated
transitions, depth, wall time, CPU time (of the search process and its workers), distinct states per second,
peak memory and the visited set's bytes per state as a table (and JSON with --json). Each run is its own
process. Not a test: figures vary with the machine (and with whatever else runs on it).

    python3 benchmarks/scale.py                                  # tiny, small, medium on 1 and all cores
    python3 benchmarks/scale.py small --workers 2                # one preset, 1 and 2 workers
    python3 benchmarks/scale.py tiny small medium --symmetry     # dedup up to dir symmetry (the CLI default)
    python3 benchmarks/scale.py small --symmetry --max-depth 20  # a bounded run of a big preset
    python3 benchmarks/scale.py medium --symmetry --workers 1 --max-states 200000   # a quick per-change figure
    python3 benchmarks/scale.py tiny --set max_faults=1 --json
    python3 benchmarks/scale.py small --symmetry --workers 2 --no-memo   # without the effect memo: the baseline

Peak memory is the sum of the processes' peak resident set sizes (the search process, plus each worker's
when there are workers): an upper bound, since pages the workers share with the parent count twice.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time

_CHILD = r"""
import json, resource, sys, time
from explorer.search import SearchOptions, bfs
from explorer.catalog import build_model, preset_config, select_invariants
name, variant, workers, overrides = sys.argv[1], sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4])
symmetry = sys.argv[5] == "1"
max_depth = int(sys.argv[6]) if sys.argv[6] else None
max_states = int(sys.argv[7]) if sys.argv[7] else None
memo = sys.argv[8] == "1"
cfg = preset_config(name, variant=variant, **overrides)
model = build_model(cfg, symmetry=symmetry, memo_effects=memo)
def cpu():
    return sum(r.ru_utime + r.ru_stime for r in (resource.getrusage(resource.RUSAGE_SELF),
                                                  resource.getrusage(resource.RUSAGE_CHILDREN)))
start, cpu_start = time.monotonic(), cpu()
result = bfs(model, select_invariants(), SearchOptions(workers=workers, max_depth=max_depth, max_states=max_states))
wall, cpu_s = time.monotonic() - start, cpu() - cpu_start   # the workers have been joined: their CPU counts
own_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
peak = own_peak + sum(result.memory.get("worker_peak_rss", []))
print(json.dumps({
    "preset": name, "variant": variant, "overrides": overrides, "max_depth": max_depth, "symmetry": bool(getattr(model, "symmetry", False)),
    "workers": workers, "memo_effects": memo, "result": result.result,
    "distinct_states": result.distinct_states, "states_generated": result.states_generated,
    "depth": result.depth, "wall_s": round(wall, 2), "cpu_s": round(cpu_s, 2),
    "distinct_per_s": round(result.distinct_states / wall) if wall else None,
    "peak_rss_mb": round(peak / 2**20, 1),
    "visited_bytes": result.memory["visited_bytes"],
    "visited_bytes_per_state": round(result.memory["visited_bytes"] / result.distinct_states, 1),
    "coverage": result.coverage,
}))
"""


def default_workers() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def run(preset: str, variant: str, workers: int, overrides: dict, symmetry: bool, max_depth: int | None,
        max_states: int | None = None, memo: bool = True) -> dict:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", _CHILD, preset, variant, str(workers), json.dumps(overrides),
                          "1" if symmetry else "0", "" if max_depth is None else str(max_depth),
                          "" if max_states is None else str(max_states), "1" if memo else "0"],
                         check=True, capture_output=True, text=True, env=env)
    return json.loads(out.stdout)


def load() -> str:
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("presets", nargs="*", default=["tiny", "small", "medium"])
    parser.add_argument("--workers", type=int, default=default_workers(),
                        help="the N of the N-worker runs [default: all cores]")
    parser.add_argument("--variant", default="kip112")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="PARAM=N",
                        help="override a model parameter of every preset, e.g. max_faults=1 (repeatable)")
    parser.add_argument("--max-depth", type=int, default=None, metavar="N",
                        help="stop every run after depth N (result bounded): figures for presets too big to exhaust")
    parser.add_argument("--max-states", type=int, default=None, metavar="N",
                        help="stop every run after N distinct states (result bounded): a quick per-change figure")
    parser.add_argument("--symmetry", action="store_true",
                        help="dedup by the model's symmetry-reduced fingerprint (where the model finds it sound)")
    parser.add_argument("--no-memo", action="store_true",
                        help="run the effects directly, without the effect memo (model/spec/effect_memo.py): the baseline")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args()
    overrides = {}
    for item in args.overrides:
        key, _, value = item.partition("=")
        overrides[key] = int(value) if value.lstrip("-").isdigit() else value
    counts = sorted({1, args.workers})
    machine = {"python": platform.python_version(), "machine": platform.machine(), "cpus": os.cpu_count(),
               "load_before": load(), "date": time.strftime("%Y-%m-%d")}
    rows = []
    for preset in args.presets:
        for workers in counts:
            rows.append(run(preset, args.variant, workers, overrides, args.symmetry, args.max_depth, args.max_states,
                            memo=not args.no_memo))
            print(f"  ... {preset} on {workers} worker(s): {rows[-1]['wall_s']} s wall, {rows[-1]['cpu_s']} s CPU: "
                  + json.dumps({k: v for k, v in rows[-1].items() if k != "coverage"}), file=sys.stderr)
    for preset in args.presets:
        same = [r for r in rows if r["preset"] == preset]
        keys = ("result", "distinct_states", "states_generated", "depth", "coverage")
        if any(tuple(r[k] for k in keys) != tuple(same[0][k] for k in keys) for r in same):
            print(f"WARNING: {preset}: the runs disagree on counts or coverage", file=sys.stderr)
        base = same[0]["wall_s"]
        for r in same:
            r["speedup"] = round(base / r["wall_s"], 2) if r["wall_s"] else None
    machine["load_after"] = load()
    if args.json:
        print(json.dumps({"machine": machine, "runs": [{k: v for k, v in r.items() if k != "coverage"}
                                                        for r in rows]}, indent=2))
        return
    print(f"Python {machine['python']} on {machine['machine']}, {machine['cpus']} CPUs, load average "
          f"{machine['load_before']} before, {machine['load_after']} after; BFS, all invariants, symmetry reduction "
          f"{'on' if args.symmetry else 'off'}, effect memo {'off' if args.no_memo else 'on'}"
          + (f"; overrides {overrides}" if overrides else "") + (f"; --max-depth {args.max_depth}" if args.max_depth else "")
          + (f"; --max-states {args.max_states:,}" if args.max_states else ""))
    header = ("preset", "workers", "result", "distinct", "generated", "depth", "wall s", "CPU s", "distinct/s",
              "speed-up", "peak MB", "visited B/state")
    fmt = "{:<8} {:>7} {:<9} {:>10} {:>11} {:>5} {:>8} {:>8} {:>10} {:>8} {:>8} {:>15}"
    print(fmt.format(*header))
    for r in rows:
        print(fmt.format(r["preset"], r["workers"], r["result"], f"{r['distinct_states']:,}",
                         f"{r['states_generated']:,}", r["depth"], f"{r['wall_s']:.1f}", f"{r['cpu_s']:.1f}",
                         f"{r['distinct_per_s']:,}", f"{r['speedup']:.2f}x", f"{r['peak_rss_mb']:.0f}",
                         f"{r['visited_bytes_per_state']:.1f}"))


if __name__ == "__main__":
    main()
