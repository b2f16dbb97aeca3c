"""KRaft presets exhausted with BFS on one core, plain, with --por, with dir symmetry and with both: distinct and
generated states, depth, the violated invariants, CPU seconds, and what POR and symmetry did (reduced states, or
why they were off; a run with symmetry refused is not run: it would be the one without). Each run in its own
process. Not a test: times vary with the machine and its load.

    PYTHONPATH=. python3 benchmarks/kraft.py                   # kraft-small
    PYTHONPATH=. python3 benchmarks/kraft.py kraft-tiny-faults kraft-tiny --json
    PYTHONPATH=. python3 benchmarks/kraft.py kraft-tiny-faults --why 3000   # why states are not reduced (first BFS states)
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
from explorer.catalog import build_model, preset_config
from explorer.search import SearchOptions, explore
name, por, symmetry = sys.argv[1], sys.argv[2] == "1", sys.argv[3] == "1"
model = build_model(preset_config(name), symmetry=symmetry)
if symmetry and not model.symmetry:     # refused: the run would be the one without symmetry
    print(json.dumps({"preset": name, "por": por, "symmetry": symmetry, "result": "not run", "distinct_states": 0,
                      "states_generated": 0, "depth": 0, "violated": [], "cpu_s": 0, "wall_s": 0, "por_report": None,
                      "symmetry_used": False, "symmetry_note": model.symmetry_note, "peak_rss_mb": 0}))
    sys.exit(0)
start = time.process_time()
result = explore("bfs", model, model.invariants, SearchOptions(por=por, all_violations=True))
cpu = time.process_time() - start
print(json.dumps({
    "preset": name, "por": por, "symmetry": symmetry, "result": result.result,
    "distinct_states": result.distinct_states, "states_generated": result.states_generated, "depth": result.depth,
    "violated": sorted({v.invariant.id for v in result.violations}), "cpu_s": round(cpu, 1),
    "wall_s": round(result.elapsed_s, 1), "por_report": result.por,
    "symmetry_used": model.symmetry, "symmetry_note": model.symmetry_note,
    "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
}))
"""

_WHY = r"""
import collections, json, sys
from explorer.catalog import build_model, preset_config
from explorer.por import Reduction
sys.path.insert(0, "tests")
from support.helpers import bfs_states
name, limit = sys.argv[1], int(sys.argv[2])
model = build_model(preset_config(name))
reduction = Reduction(model, model.invariants)
states = bfs_states(model, model.fingerprint, limit).values()
print(json.dumps({"preset": name, "states": len(states),
                  "why_full": collections.Counter(str(reduction.why_full(s)) for s in states)}))
"""


def _child(code: str, *args: str) -> dict:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", code, *args], check=True, capture_output=True, text=True, env=env,
                         cwd=root)
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("presets", nargs="*", default=["kraft-small"])
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--why", type=int, metavar="N", help="only say why POR expands each of the first N BFS "
                        "states fully (None: it did not)")
    args = parser.parse_args()
    if args.why:
        for preset in args.presets:
            print(json.dumps(_child(_WHY, preset, str(args.why))))
        return
    rows = []
    for preset in args.presets:
        for por, symmetry in ((False, False), (True, False), (False, True), (True, True)):
            rows.append(_child(_CHILD, preset, str(int(por)), str(int(symmetry))))
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    machine = {"python": platform.python_version(), "machine": platform.machine(), "cpus": os.cpu_count(),
               "load_1min": round(os.getloadavg()[0], 2)}
    if args.json:
        print(json.dumps({"machine": machine, "runs": rows}, indent=2))
        return
    print(f"Python {machine['python']} on {machine['machine']}, {machine['cpus']} CPUs (load {machine['load_1min']} "
          f"at the end); BFS, one core, --all-violations")
    header = ("preset", "por", "sym", "result", "distinct", "generated", "depth", "cpu s", "por / symmetry")
    print("{:<16} {:<5} {:<5} {:<9} {:>10} {:>11} {:>6} {:>8}  {}".format(*header))
    for r in rows:
        por = r["por_report"] or {}
        notes = []
        if r["por"] and r["por_report"] is not None:
            notes.append(f"reduced {por['reduced_states']:,} states" if por.get("used") else f"POR off: {por.get('note')}")
        if r["symmetry"]:
            notes.append("symmetry on" if r["symmetry_used"] else f"symmetry off: {r['symmetry_note']}")
        print("{:<16} {:<5} {:<5} {:<9} {:>10,} {:>11,} {:>6} {:>8}  {}".format(
            r["preset"], "on" if r["por"] else "off", "on" if r["symmetry"] else "off", r["result"],
            r["distinct_states"], r["states_generated"], r["depth"], r["cpu_s"], "; ".join(notes)))


if __name__ == "__main__":
    main()
