"""`jbodcheck compare`: every design on the same configurations, one row a design, one column an invariant
(docs/designs.md holds the table it generates for the presets; tests/test_compare.py checks that it regenerates).

Each design is checked against its own features' invariants and the invariants other designs claim that read
only the core state (invariants/designs.py PORTABLE), so that what one design buys shows up as what another
breaks. A cell says ``holds`` (with the distinct states of the exhaustive search) or ``violated`` (the length of
the shortest trace, BFS) and, for a violation, names a scenario file written beside the output
(explorer/fuzz.py scenario_dict) that `replay` reproduces; ``n/a`` when the design does not have the state the
invariant reads. The Markdown has no run-dependent figure (no time), so the same run gives the same text; the
JSON has, per cell, the explore report (explorer/report.py) and the scenario files.
"""
from __future__ import annotations

import json
import os
from typing import NamedTuple

from invariants.designs import PORTABLE
from model import Model
from model.presets import preset_config

from .fuzz import scenario_dict
from .report import report_dict
from .search import SearchOptions, bfs


class Row(NamedTuple):
    key: str          # names the scenario files
    label: str        # the table's row heading
    params: dict      # model parameters over the configuration's


ROWS = (
    Row("legacy", "legacy (pre-KIP-112 broker)", {"variant": "legacy"}),
    Row("kip112-draft", "KIP-112 draft (created list)", {"variant": "kip112-draft"}),
    Row("kip112", "KIP-112 (adopted)", {"variant": "kip112"}),
    Row("kip112-kip928", "KIP-112 + KIP-928 (saturation, 2 units a dir)",
        {"variant": "kip112", "saturation": True, "dir_capacity": 2}),
)
CONFIGS = ("tiny",)


def rows() -> tuple[Row, ...]:
    from model.config import VARIANTS

    extra = tuple(Row(v, label, {"variant": v}) for v, label in (("kip18", "KIP-18 (/restart_partitions)"),)
                  if v in VARIANTS)
    return ROWS[:1] + extra + ROWS[1:]


def model_of(config: str, row: Row) -> Model:
    """The row's model on the configuration, checked with its own invariants and the portable ones."""
    cfg = preset_config(config, **row.params)
    own = Model(cfg).all_invariants
    ids = {i.id for i in own}
    return Model(cfg, symmetry=True, invariants=list(own) + [i for i in PORTABLE if i.id not in ids])


def scenario_name(config: str, row: Row, invariant_id: str) -> str:
    return f"{config}-{row.key}-{invariant_id}.json"


def run_cell(config: str, row: Row, workers: int, scenarios_dir: str, progress=None) -> dict:
    model = model_of(config, row)
    result = bfs(model, list(model.invariants), SearchOptions(all_violations=True, workers=workers, progress=progress))
    report = report_dict(model, config, result)
    report["design"] = row.key
    report["invariants"] = [i.id for i in model.invariants]
    report["scenarios"] = {}
    os.makedirs(scenarios_dir, exist_ok=True)
    for v in result.violations:
        name = scenario_name(config, row, v.invariant.id)
        data = scenario_dict(model, [a for a, _ in v.trace[1:]], preset=config, description=(
            f"jbodcheck compare: {row.label} on the {config} preset breaks {v.invariant.id} in "
            f"{len(v.trace) - 1} steps (the shortest trace): {v.message}"))
        data["expect"] = {}
        with open(os.path.join(scenarios_dir, name), "w") as f:
            json.dump(data, f, indent=2)
            f.write("\n")
        report["scenarios"][v.invariant.id] = name
    return report


def compare(configs=CONFIGS, workers: int = 1, scenarios_dir: str = "compare-scenarios", progress=None) -> dict:
    out = {"schema": 1, "tool": "jbodcheck compare", "configurations": list(configs),
           "designs": [{"key": r.key, "label": r.label, "params": r.params} for r in rows()], "cells": {}}
    for config in configs:
        out["cells"][config] = {}
        for row in rows():
            if progress is not None:
                progress(f"{config}: {row.label}")
            out["cells"][config][row.key] = run_cell(config, row, workers, scenarios_dir)
    return out


def _cell_text(report: dict, inv: str, link_dir: str) -> str:
    if inv not in report["invariants"]:
        return "n/a"
    for v in report["violations"]:
        if v["invariant"] == inv:
            name = report["scenarios"][inv]
            return f"**violated** ({len(v['trace']) - 1} steps, [scenario]({link_dir}/{name}))"
    if report["result"] == "ok" or (report["result"] == "violation"):
        return f"holds ({report['distinct_states']:,})"
    return "unknown (bounded)"


def markdown(data: dict, link_dir: str) -> str:
    """The comparison as Markdown: per configuration, a table (rows: designs; columns: invariants)."""
    lines = []
    labels = {d["key"]: d["label"] for d in data["designs"]}
    for config in data["configurations"]:
        cells = data["cells"][config]
        columns: list[str] = []
        for report in cells.values():
            columns.extend(i for i in report["invariants"] if i not in columns)
        lines.append(f"### Preset `{config}`")
        lines.append("")
        lines.append("| design | " + " | ".join(f"`{c}`" for c in columns) + " |")
        lines.append("|---" * (len(columns) + 1) + "|")
        for key, report in cells.items():
            lines.append(f"| {labels[key]} | " + " | ".join(_cell_text(report, c, link_dir) for c in columns) + " |")
        lines.append("")
    return "\n".join(lines)
