"""Exhaust presets with BFS, one process per preset, and print distinct states, states per second and
peak memory as a table (and JSON with --json). Not a test: figures vary with the machine.

    python3 benchmarks/presets.py                      # tiny, small, medium
    python3 benchmarks/presets.py small --variant legacy
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys

_CHILD = r"""
import json, resource, sys, time
from model import Model
from explorer.catalog import preset_config
from explorer.catalog import select_invariants as select
from explorer.search import bfs, SearchOptions
from explorer.catalog import build_model
name, variant = sys.argv[1], sys.argv[2]
model = build_model(preset_config(name, variant=variant))
start = time.process_time()
result = bfs(model, select(), SearchOptions())
cpu = time.process_time() - start
print(json.dumps({
    "preset": name, "variant": variant, "result": result.result,
    "distinct_states": result.distinct_states, "states_generated": result.states_generated,
    "depth": result.depth, "wall_s": result.elapsed_s, "cpu_s": round(cpu, 2),
    "distinct_per_cpu_s": round(result.distinct_states / cpu) if cpu else None,
    "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
}))
"""


def run(preset: str, variant: str) -> dict:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", _CHILD, preset, variant], check=True, capture_output=True,
                         text=True, env=env)
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("presets", nargs="*", default=["tiny", "small", "medium"])
    parser.add_argument("--variant", default="kip112")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args()
    rows = [run(p, args.variant) for p in args.presets]
    machine = {"python": platform.python_version(), "machine": platform.machine(), "cpus": os.cpu_count()}
    if args.json:
        print(json.dumps({"machine": machine, "runs": rows}, indent=2))
        return
    print(f"Python {machine['python']} on {machine['machine']}, {machine['cpus']} CPUs; BFS, one core, "
          f"all invariants checked")
    header = ("preset", "variant", "result", "distinct", "generated", "depth", "cpu s", "distinct/cpu s", "peak MB")
    print("{:<8} {:<8} {:<9} {:>10} {:>11} {:>6} {:>8} {:>15} {:>8}".format(*header))
    for r in rows:
        print("{:<8} {:<8} {:<9} {:>10,} {:>11,} {:>6} {:>8} {:>15,} {:>8}".format(
            r["preset"], r["variant"], r["result"], r["distinct_states"], r["states_generated"], r["depth"],
            r["cpu_s"], r["distinct_per_cpu_s"] or 0, r["peak_rss_mb"]))


if __name__ == "__main__":
    main()
