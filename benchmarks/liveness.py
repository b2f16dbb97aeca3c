"""Liveness checking versus the safety run on one preset: wall time and memory per state (docs/model.md 9.1).

    python benchmarks/liveness.py [--preset tiny] [--repeat 1]

Each run is a fresh process (`python -m explorer explore ...`), timed from outside, with its peak resident set size
(``os.wait4``'s rusage). Runs: the safety run as the project measures it (``--workers 2``, symmetry on), the
same in one process, and ``--liveness`` (one process, symmetry off, every liveness property of the preset). The
liveness engine's own bookkeeping per state (CSR edges, parents, instance masks, fingerprint -> index dict) is
computed in this process.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path
from explorer.catalog import build_model

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def run(args: list[str]) -> tuple[float, int, str]:
    """(wall seconds, peak RSS bytes, stdout) of `python -m explorer explore ARGS` in a fresh process."""
    start = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "explorer", "explore", *args], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    out = proc.stdout.read()
    _pid, _status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    return wall, usage.ru_maxrss * 1024, out


def result_line(out: str) -> str:
    return next((line for line in out.splitlines() if line.startswith("Result:")), "?")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--preset", default="tiny")
    parser.add_argument("--repeat", type=int, default=1)
    a = parser.parse_args()
    runs = {
        "safety (--workers 2)": ["--preset", a.preset, "-q", "--workers", "2"],
        "safety (--workers 1)": ["--preset", a.preset, "-q", "--workers", "1"],
        "liveness": ["--preset", a.preset, "-q", "--liveness"],
    }
    best = {}
    for name, args in runs.items():
        for _ in range(a.repeat):
            wall, rss, out = run(args)
            if name not in best or wall < best[name][0]:
                best[name] = (wall, rss, result_line(out))
    for name, (wall, rss, line) in best.items():
        print(f"{name:<22} {wall:7.1f} s  peak RSS {rss / 2**20:7.1f} MB  {line}")
    ratio = best["liveness"][0] / best["safety (--workers 2)"][0]
    ratio1 = best["liveness"][0] / best["safety (--workers 1)"][0]
    print(f"liveness / safety wall time: {ratio:.2f}x (vs --workers 2), {ratio1:.2f}x (vs --workers 1)")

    from explorer.liveness import check_liveness
    from model.spec.invariant import LIVENESS_KINDS
    from explorer.catalog import preset_config

    model = build_model(preset_config(a.preset))
    result = check_liveness(model, [i for i in model.all_invariants if i.kind in LIVENESS_KINDS])
    m = result.memory
    print(f"liveness graph: {m['graph_states']:,} states, {m['edges']:,} edges, {m['graph_bytes'] / 2**20:.1f} MB: "
          f"{m['graph_bytes'] / m['graph_states']:.0f} bytes per state "
          f"(edges {m['edges'] / m['graph_states']:.1f} per state); peak RSS per state of the liveness run: "
          f"{best['liveness'][1] / m['graph_states']:.0f} bytes, above the one-process safety run's: "
          f"{(best['liveness'][1] - best['safety (--workers 1)'][1]) / m['graph_states']:.0f} bytes")


if __name__ == "__main__":
    main()
