"""`jbodcheck compare --fixes`: the candidate fixes of the KRaft findings (model/kraft/fixes.py) on the
configurations where the findings were found, one row a fix (or none, or every fix), one column a property
(docs/fixes.md holds the table it generates; tests/kraft/test_fixes.py checks that it regenerates).

A cell of a safety invariant is the BFS of ``jbodcheck explore ... --all-violations`` with the row's ``--fix``
flags (every reachable state, every violated invariant with a shortest trace); a cell of a liveness property is
``jbodcheck explore ... --liveness`` (explorer/liveness.py: one lasso per failing property). A cell says
``holds`` (with the distinct states) or ``violated`` (the trace's length and a scenario file written beside the
output that `jbodcheck replay` reproduces, the fixes named in its model options); against the row without a fix
it says what changed: ``removed`` where the fix makes a violated property hold, ``NEW`` where it makes a holding
one fail. The Markdown has no run-dependent figure (no time), so the same run gives the same text.
"""
from __future__ import annotations

import os
from typing import NamedTuple

from model.kraft.fixes import (
    ASSIGN_LOST, ELECT_BY_ASSIGNED, FIXES, FIXES_OPTION, GATE2_STRICT, KEEP_PROMOTION, LIST_ADDED,
    OFFLINE_DIRS_FIRST, PROMOTE_CAUGHT_UP, UNFENCE_WITHOUT_OFFLINE,
)
from model.spec.invariant import is_liveness

from explorer import signals
from explorer.catalog import build_model, preset_config
from explorer.engines import engine_named, liveness_engine
from explorer.outputs import write_json
from explorer.reports.report import report_dict
from explorer.scenario import lasso_scenario, scenario_dict
from explorer.search import SearchOptions

from .compare_common import DATA_INVARIANTS, interrupted_note, make_directory

# The fixes a committer would apply together: every fix but the naive alternatives the table refutes.
RECOMMENDED = (ASSIGN_LOST, UNFENCE_WITHOUT_OFFLINE, ELECT_BY_ASSIGNED, KEEP_PROMOTION, PROMOTE_CAUGHT_UP, LIST_ADDED)
EVERY = "every"   # a row's name for the recommended fixes that the configuration's features take


# The release the table follows: the fixes are written against Kafka 3.9.2's code (jbodcheck fixes), and the
# findings were found there; docs/fixes.md says so.
TABLE_RELEASE = "3.9"


class FixConfig(NamedTuple):
    name: str          # the section's name and the scenario files' prefix
    preset: str
    params: dict       # model parameters over the preset's (CLI flags in the commands)
    found: str         # what the configuration found without a fix (the section's heading says it)
    rows: tuple        # per row: () for Kafka as read, a fix's name, a tuple of names, or EVERY
    quick: bool = False   # seconds for every row: the ci profile regenerates it (tests/kraft/test_fixes.py)


CONFIGS = (
    FixConfig("kraft-tiny-faults-rf1-data", "kraft-tiny-faults", {"brokers": 1, "rf": 1, "max_records": 1},
              "finding 1 (the re-creation, and the RF 1 loss of an acknowledged record), finding 5, and a liveness "
              "lasso by finding 3's mechanism",
              ((), GATE2_STRICT, ASSIGN_LOST, OFFLINE_DIRS_FIRST, UNFENCE_WITHOUT_OFFLINE, ELECT_BY_ASSIGNED,
               EVERY), quick=True),
    FixConfig("kraft-future-data", "kraft-future", {"max_records": 1}, "findings 1 to 4",
              ((), ASSIGN_LOST, KEEP_PROMOTION, ELECT_BY_ASSIGNED, PROMOTE_CAUGHT_UP, (ASSIGN_LOST, PROMOTE_CAUGHT_UP),
               EVERY)),
    FixConfig("kraft-reassignment", "kraft-reassignment", {}, "finding 6", ((), LIST_ADDED, EVERY)),
    FixConfig("kraft-reassignment-move", "kraft-reassignment-move", {}, "finding 6 and its consequences",
              ((), LIST_ADDED, EVERY)),
    FixConfig("kraft-heartbeat", "kraft-heartbeat", {}, "finding 1 through the dir failure timeout (sessions)",
              ((), ASSIGN_LOST, EVERY)),
    FixConfig("kraft-session-expiry-rf1", "kraft-session-expiry", {"brokers": 1, "rf": 1},
              "finding 1, and finding 5 through an expired session",
              ((), ASSIGN_LOST, UNFENCE_WITHOUT_OFFLINE, EVERY), quick=True),
    FixConfig("kraft-tiny-faults", "kraft-tiny-faults", {}, "finding 1 (RF 2)",
              ((), GATE2_STRICT, ASSIGN_LOST, EVERY)),
    FixConfig("kraft-small", "kraft-small", {}, "findings 1 and 5 (two partitions)", ((), EVERY)),
    FixConfig("kraft-controlled-shutdown", "kraft-controlled-shutdown", {},
              "finding 1 through a controlled shutdown's timeout", ((), EVERY)),
)
CONFIG_NAMES = tuple(c.name for c in CONFIGS)


def config_by_name(name: str) -> FixConfig:
    return next(c for c in CONFIGS if c.name == name)


def _features(config: FixConfig) -> set:
    return {f.name for f in build_model(preset_config(config.preset, **config.params)).features}


def row_fixes(config: FixConfig, row) -> tuple:
    """The fixes of a row: none, one, or every recommended fix whose feature the configuration includes."""
    if row == ():
        return ()
    if row == EVERY:
        included = _features(config)
        return tuple(f for f in RECOMMENDED if FIXES[f].feature is None or FIXES[f].feature in included)
    return row if isinstance(row, tuple) else (row,)


def row_key(row) -> str:
    return "none" if row == () else "+".join(row) if isinstance(row, tuple) else row


def row_label(config: FixConfig, row) -> str:
    if row == ():
        return "Kafka 3.9 as read (no fix)"
    if row == EVERY:
        return "every fix: " + ", ".join(f"`{f}`" for f in row_fixes(config, row))
    findings = sorted({n for f in row_fixes(config, row) for n in FIXES[f].findings})
    return " + ".join(f"`{f}`" for f in row_fixes(config, row)) + f" (finding {', '.join(map(str, findings))})"


def _flag(name: str, value) -> str:
    flag = "--" + name.replace("_", "-")
    if value is True:
        return flag
    return f"{flag} {value}"


def command(config: FixConfig, row, liveness: bool = False) -> str:
    """The explore command of a row's cells (safety: --all-violations; liveness: --liveness)."""
    parts = ["jbodcheck explore", f"--preset {config.preset}", f"--kafka {TABLE_RELEASE}"]
    parts += [_flag(k, v) for k, v in config.params.items()]
    parts += [f"--fix {f}" for f in row_fixes(config, row)]
    parts.append("--liveness" if liveness else "--all-violations")
    return " ".join(parts)


def model_of(config: FixConfig, row, liveness: bool = False):
    """The row's model: the configuration with the row's fixes, its safety invariants (or liveness properties);
    without a record the data path's invariants hold vacuously and are left out (their cells say n/a)."""
    params = dict(config.params)
    fixes = row_fixes(config, row)
    params["options"] = {"kafka": TABLE_RELEASE, **({FIXES_OPTION: list(fixes)} if fixes else {})}
    cfg = preset_config(config.preset, **params)
    model = build_model(cfg, preset=config.preset)
    vacuous = DATA_INVARIANTS if not any(cfg.max_records_of(p) for p in range(cfg.partitions)) else ()
    chosen = [i for i in model.all_invariants if is_liveness(i) == liveness and i.id not in vacuous]
    return build_model(cfg, preset=config.preset, invariants=chosen)


def scenario_name(config: FixConfig, row, invariant_id: str) -> str:
    return f"{config.name}-{row_key(row)}-{invariant_id}.json"


def run_cell(config: FixConfig, row, scenarios_dir: str, liveness: bool = False, progress=None) -> dict:
    """One row's safety (BFS, every violation) or liveness run, its report and the scenario files of its
    violations."""
    model = model_of(config, row, liveness)
    if liveness:
        result = liveness_engine().run(model, list(model.invariants), SearchOptions())
    else:
        result = engine_named("bfs").run(model, list(model.invariants),
                                         SearchOptions(all_violations=True, progress=progress))
    report = report_dict(model, result)
    report["fix_row"] = row_key(row)
    report["invariants"] = [i.id for i in model.invariants]
    report["scenarios"] = {}
    for v in result.violations:
        name = scenario_name(config, row, v.invariant.id)
        if liveness:
            data = lasso_scenario(model, v, config.preset)
        else:
            data = scenario_dict(model, [a for a, _ in v.trace[1:]], config.preset, description=(
                f"jbodcheck compare --fixes: {row_label(config, row)} on {config.name} breaks {v.invariant.id} in "
                f"{len(v.trace) - 1} steps (the shortest trace): {v.message}"))
            data["expect"] = {}
        make_directory(scenarios_dir)
        write_json(os.path.join(scenarios_dir, name), data, "a scenario")
        report["scenarios"][v.invariant.id] = name
    return report


def compare_fixes(names=CONFIG_NAMES, scenarios_dir: str = "fixes-scenarios", progress=None) -> dict:
    """Every row of each named configuration, safety then liveness. A signal stops it as `compare` stops: the
    cells not reached are marked so and ``out["signal"]`` names the signal."""
    out = {"schema": 1, "tool": "jbodcheck compare --fixes", "configurations": list(names), "cells": {},
           "signal": None}
    for name in names:
        config = config_by_name(name)
        out["cells"][name] = {}
        for row in config.rows:
            cell = {}
            for kind, liveness in (("safety", False), ("liveness", True)):
                if out["signal"] is None:
                    out["signal"] = signals.received()
                if out["signal"] is not None:
                    cell[kind] = {"result": "not reached", "invariants": [], "violations": [], "scenarios": {}}
                    continue
                if progress is not None:
                    progress(f"{name}: {row_label(config, row)} ({kind})")
                try:
                    signals.test_point("compare-cell")
                    cell[kind] = run_cell(config, row, scenarios_dir, liveness)
                except signals.INTERRUPTS as e:
                    out["signal"] = signals.received() or signals.interrupt_signal(e)
                    cell[kind] = {"result": "not reached", "invariants": [], "violations": [], "scenarios": {}}
                if cell[kind]["result"] == "interrupted":
                    out["signal"] = cell[kind]["signal"]
            out["cells"][name][row_key(row)] = cell
    return out


def _violated(report: dict, inv: str):
    return next((v for v in report["violations"] if v["invariant"] == inv), None)


def cell_text(report: dict, inv: str, baseline: dict | None, link_dir: str) -> str:
    """A cell: holds (N) or violated (K steps, scenario); against the row without a fix, ``removed`` or ``NEW``."""
    if inv not in report["invariants"]:
        return "n/a"
    if report["result"] in ("interrupted", "not reached"):
        return "not reached (interrupted)"
    if report["result"] == "bounded" and not report["violations"]:
        return "unknown (a lasso needs a step a bound of 0 leaves out)"
    was = None if baseline is None or inv not in baseline.get("invariants", ()) else _violated(baseline, inv)
    v = _violated(report, inv)
    if v is not None:
        new = "**NEW**: " if baseline is not None and baseline is not report and was is None \
            and baseline.get("result") in ("ok", "violation") else ""
        kind = "lasso of " if "loop_start" in v else ""
        steps = len(v["trace"]) - 1
        other = f"; was {len(was['trace']) - 1}" if was is not None and baseline is not report \
            and len(was["trace"]) - 1 != steps else ""
        return f"{new}**violated** ({kind}{steps} steps{other}, [scenario]({link_dir}/{report['scenarios'][inv]}))"
    held = f"holds ({report['distinct_states']:,})"
    return f"**removed**: {held}" if was is not None and baseline is not report else held


def markdown(data: dict, link_dir: str) -> str:
    """Per configuration, its commands and one table: rows are fixes, columns the safety invariants then the
    liveness properties."""
    lines = []
    for name in data["configurations"]:
        config = config_by_name(name)
        cells = data["cells"][name]
        safety_cols: list[str] = []
        liveness_cols: list[str] = []
        for cell in cells.values():
            safety_cols.extend(i for i in cell["safety"]["invariants"] if i not in safety_cols)
            liveness_cols.extend(i for i in cell["liveness"]["invariants"] if i not in liveness_cols)
        params = " ".join(_flag(k, v) for k, v in config.params.items())
        lines.append(f"### `{config.name}`: {config.found}")
        lines.append("")
        lines.append(f"`--preset {config.preset}{' ' + params if params else ''}`. Each row's safety cells: "
                     f"`{command(config, ())} [--fix NAME]...`; its liveness cells: the same with `--liveness` "
                     f"in place of `--all-violations`.")
        lines.append("")
        lines.append("| fix | " + " | ".join(f"`{c}`" for c in safety_cols) + " | "
                     + " | ".join(f"liveness: `{c}`" for c in liveness_cols) + " |")
        lines.append("|---" * (len(safety_cols) + len(liveness_cols) + 1) + "|")
        base = cells.get("none")
        for row in config.rows:
            cell = cells[row_key(row)]
            texts = [cell_text(cell["safety"], c, base and base["safety"], link_dir) for c in safety_cols]
            texts += [cell_text(cell["liveness"], c, base and base["liveness"], link_dir) for c in liveness_cols]
            lines.append(f"| {row_label(config, row)} | " + " | ".join(texts) + " |")
        lines.append("")
    lines += interrupted_note(data, "the table")
    return "\n".join(lines)
