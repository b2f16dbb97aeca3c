"""The z3 model against the explicit model on every reachable state of a preset, both ways (proofs/conformance.py,
docs/proofs.md section 5): the figures of docs/proofs.md's conformance table.

    python3 benchmarks/conformance.py tiny                        # every state: about a minute on one core
    nice python3 benchmarks/conformance.py medium --symmetry      # every state up to the dir symmetry (hours)
    nice python3 benchmarks/conformance.py medium --symmetry --max-states=3000   # a breadth-first prefix

Exit status 0 when everything conforms, 1 otherwise (the offences are printed).
"""
from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from explorer.catalog import preset_config  # noqa: E402
from proofs import conformance  # noqa: E402
from explorer.catalog import build_model, builtin_invariants


def main(argv: list[str]) -> int:
    symmetry = "--symmetry" in argv
    max_states = next((int(a.split("=")[1]) for a in argv if a.startswith("--max-states=")), None)
    argv = [a for a in argv if a != "--symmetry" and not a.startswith("--max-states=")]
    preset = argv[0] if argv else "tiny"
    variant = argv[1] if len(argv) > 1 else None
    m = build_model(preset_config(preset, variant=variant), symmetry=symmetry)
    report = conformance.check(m, preset, invariants=builtin_invariants(), progress=lambda line: print(line, file=sys.stderr, flush=True),
                               max_states=max_states)
    print("\n".join(conformance.render(report)))
    print(json.dumps(conformance.figures(report)))
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
