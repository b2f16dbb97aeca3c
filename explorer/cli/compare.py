"""`jbodcheck compare`: every design on the same configurations, one row a design, one column an invariant
(docs/designs.md holds the table it generates for the presets; tests/cli/test_compare.py checks that it regenerates).
A configuration is a preset (every ZooKeeper design on it) or one of CONFIGURATIONS (``tiny-kraft``: KIP-112 and
KIP-858 on tiny's cluster, with notes on what differs).

Each design is checked against its own features' invariants and the invariants other designs claim that read
only the core state (invariants/zk/designs.py PORTABLE), so that what one design buys shows up as what another
breaks. A cell says ``holds`` (with the distinct states of the exhaustive search) or ``violated`` (the length of
the shortest trace, BFS) and, for a violation, names a scenario file written beside the output
(explorer/scenario.py scenario_dict) that `replay` reproduces; ``n/a`` when the design does not have the state the
invariant reads. The Markdown has no run-dependent figure (no time), so the same run gives the same text; the
JSON has, per cell, the explore report (explorer/reports/report.py) and the scenario files.
"""
from __future__ import annotations

import json
import os
from typing import NamedTuple

from invariants.zk.designs import PORTABLE
from model.spec.invariant import is_liveness
from model import Model

from explorer import signals
from explorer.catalog import PRESETS, build_model, canonical_variant, preset_config
from model.kraft.design import VARIANTS as KRAFT_VARIANTS
from explorer.errors import OutputError
from explorer.outputs import check_directory, check_distinct, check_writable, is_regular_file, write_json, write_text
from explorer.reports.report import report_dict
from explorer.scenario import scenario_dict
from explorer.engines import engine_named
from explorer.search import SearchOptions

from .compare_common import DATA_INVARIANTS, interrupted_note, make_directory


class Row(NamedTuple):
    key: str          # names the scenario files
    label: str        # the table's row heading
    params: dict      # model parameters over the configuration's
    # PORTABLE invariants the design does not have the state for (n/a in its row)
    not_judged: tuple = ()


ROWS = (
    Row("pre-kip112", "pre-KIP-112 broker (stops on any dir failure)", {"variant": "pre-kip112"}),
    Row("kip112-no-isnew-check", "KIP-112 without the isNewReplica check (formerly legacy)",
        {"variant": "kip112-no-isnew-check"}),
    Row("kip18", "KIP-18 (/restart_partitions)", {"variant": "kip18"}),
    Row("kip46", "KIP-46 (self-healing)", {"variant": "kip46"}),
    Row("kip112-draft", "KIP-112 draft (created list)", {"variant": "kip112-draft"}),
    Row("kip112", "KIP-112 (adopted)", {"variant": "kip112"}),
    Row("kip112-kip928", "KIP-112 + KIP-928 (saturation, 2 units a dir)",
        {"variant": "kip112", "saturation": True, "dir_capacity": 2}),
)
# KIP-858 as Kafka's trunk implements it (docs/kraft.md). offline_replicas_are_known reads the ZooKeeper
# controller's live brokers and offline replicas, which KRaft mode's controller does not have.
KIP858 = Row("kip858", "KIP-858 (KRaft)", {"variant": "kraft"}, not_judged=("offline_replicas_are_known",))


class Configuration(NamedTuple):
    """What `--configs NAME` runs: the rows on a preset with parameters over it, its first table's columns, and
    the notes under its tables (what differs between the rows' models beyond the shared parameters)."""
    name: str         # the heading and the scenario files' prefix
    preset: str
    params: dict      # over the preset's (and under the row's)
    rows: tuple
    costs: tuple      # the first table's (what, invariant id) columns
    heading: str = ""
    notes: str = ""
    not_checked: tuple = ()   # invariant ids n/a in this configuration


# What a design costs, the first table of each configuration: the data it may lose, and the replicas on good
# dirs it stops serving (invariants/zk/designs.py dir_failure_spares_other_dirs), then KIP-112's own rule.
COSTS = (("data", "no_acked_record_lost"), ("availability", "dir_failure_spares_other_dirs"),
         ("KIP-112's rule", "no_recreate_with_bad_dir"))
ZK_KRAFT = Configuration(
    "tiny-kraft", "tiny", dict(max_records=0, consumer=False, max_failovers=0, max_saturations=0),
    (next(r for r in ROWS if r.key == "kip112"), KIP858),
    (("creates over a failed dir's copy", "no_recreate_over_offline_copy"),
     ("refuses for good", "refusal_only_for_a_lost_copy"), ("availability", "dir_failure_spares_other_dirs")),
    heading="KIP-112 (ZooKeeper) and KIP-858 (KRaft) on `tiny`'s cluster without data (`tiny-kraft`)",
    notes=("Both designs run `tiny`'s cluster and faults (2 brokers x 2 dirs, one partition, RF 2; a dir failure, a "
           "crash, a restart, a repair, at most two faults) without the record and the consumer, the controller "
           "failover and the saturation: KRaft mode's are features (`kraft-sessions`, `kraft-saturation`) left off "
           "here, kraft-core being what is compared, and its space "
           "with one record and two faults is more than 2 million states (docs/kraft.md, which gives the data loss "
           "finding 1 leads to with one record). What differs: KRaft mode's cluster starts with every broker "
           "registered and unfenced (the metadata log holds their registrations and unfencings); ZooKeeper mode's "
           "starts as docs/model.md says. The data invariants are not checked (no record); "
           "`offline_replicas_are_known` reads the ZooKeeper controller's offline replicas (n/a for KRaft); the "
           "invariants each design claims "
           "for its own state (KIP-112's broker and controller rules, KRaft's `LeaderAcceptor`) are n/a for the "
           "other. Symmetry: ZooKeeper mode's dir symmetry reduces KIP-112's count; KRaft mode declares none."),
    not_checked=DATA_INVARIANTS)
CONFIGURATIONS = {"tiny": Configuration("tiny", "tiny", {}, ROWS, COSTS), ZK_KRAFT.name: ZK_KRAFT}
CONFIGS = ("tiny", ZK_KRAFT.name)


def configuration(name: str) -> Configuration:
    """A comparison configuration by name: one of CONFIGURATIONS, or any preset with every ZooKeeper design."""
    return CONFIGURATIONS.get(name) or Configuration(name, name, {}, ROWS, COSTS)
def is_kraft_preset(name: str) -> bool:
    """A preset of KRaft mode (its variant is a KRaft design): `compare` runs the ZooKeeper designs on a preset."""
    return canonical_variant(preset_config(name).variant) in KRAFT_VARIANTS


def rows() -> tuple[Row, ...]:
    return ROWS


def config_of(config: str, row: Row):
    c = configuration(config)
    return preset_config(c.preset, **{**c.params, **row.params})


def model_of(config: str, row: Row) -> Model:
    """The row's model on the configuration, checked with its own invariants and the portable ones (but those
    the row has no state for and those the configuration leaves out)."""
    c = configuration(config)
    cfg = config_of(config, row)
    own = [i for i in build_model(cfg).all_invariants if not is_liveness(i)]  # safety only: BFS checks these
    ids = {i.id for i in own}
    invariants = list(own) + [i for i in PORTABLE if i.id not in ids and i.id not in row.not_judged]
    return build_model(cfg, symmetry=True, preset=c.preset,
                       invariants=[i for i in invariants if i.id not in c.not_checked])


def scenario_name(config: str, row: Row, invariant_id: str) -> str:
    return f"{config}-{row.key}-{invariant_id}.json"


def run_cell(config: str, row: Row, workers: int, scenarios_dir: str, progress=None) -> dict:
    model = model_of(config, row)
    result = engine_named("bfs").run(model, list(model.invariants),
                                     SearchOptions(all_violations=True, workers=workers, progress=progress))
    report = report_dict(model, result)
    report["design"] = row.key
    report["invariants"] = [i.id for i in model.invariants]
    report["scenarios"] = {}
    if result.violations:
        make_directory(scenarios_dir)
    for v in result.violations:
        name = scenario_name(config, row, v.invariant.id)
        kind = "preset" if config in PRESETS else "configuration"
        data = scenario_dict(model, [a for a, _ in v.trace[1:]], description=(
            f"jbodcheck compare: {row.label} on the {config} {kind} breaks {v.invariant.id} in "
            f"{len(v.trace) - 1} steps (the shortest trace): {v.message}"))
        data["expect"] = {}
        write_json(os.path.join(scenarios_dir, name), data, "a scenario")
        report["scenarios"][v.invariant.id] = name
    return report


def check_outputs(markdown_path: str | None, json_path: str | None, scenarios_dir: str) -> None:
    """OutputError (bad input for the command) for an output that cannot be written, before the runs; creates
    nothing (explorer/outputs.py)."""
    check_writable(markdown_path, "the Markdown table", dash_is_stdout=False)
    check_writable(json_path, "the JSON comparison")
    check_directory(scenarios_dir, "the scenarios")
    check_distinct({"--markdown": markdown_path, "--json": json_path, "--scenarios": scenarios_dir})


def compare(configs=CONFIGS, workers: int = 1, scenarios_dir: str = "compare-scenarios", progress=None) -> dict:
    """The comparison. SIGINT or SIGTERM stops it (as `explore`): the cell under way keeps its partial report
    (result "interrupted"), the cells not reached are marked so, and ``out["signal"]`` names the signal."""
    designs = list({r.key: r for config in configs for r in configuration(config).rows}.values())
    out = {"schema": 1, "tool": "jbodcheck compare", "configurations": list(configs),
           "designs": [{"key": r.key, "label": r.label, "params": r.params} for r in designs], "cells": {},
           "signal": None}
    for config in configs:
        out["cells"][config] = {}
        for row in configuration(config).rows:
            if out["signal"] is None:
                out["signal"] = signals.received()
            if out["signal"] is not None:
                out["cells"][config][row.key] = not_reached(config, row)
                continue
            if progress is not None:
                progress(f"{config}: {row.label}")
            try:
                signals.test_point("compare-cell")
                report = run_cell(config, row, workers, scenarios_dir)
            except signals.INTERRUPTS as e:       # before or after the search (its own interrupts are its own)
                out["signal"] = signals.received() or signals.interrupt_signal(e)
                report = not_reached(config, row)
            out["cells"][config][row.key] = report
            if report["result"] == "interrupted":
                out["signal"] = report["signal"]
    return out


def not_reached(config: str, row: Row) -> dict:
    """The stand-in report of a cell that an interrupted comparison did not reach."""
    return {"result": "not reached", "design": row.key, "invariants": [i.id for i in model_of(config, row).invariants],
            "violations": [], "scenarios": {}}


def _cell_text(report: dict, inv: str, link_dir: str) -> str:
    if inv not in report["invariants"]:
        return "n/a"
    for v in report["violations"]:
        if v["invariant"] == inv:
            name = report["scenarios"][inv]
            return f"**violated** ({len(v['trace']) - 1} steps, [scenario]({link_dir}/{name}))"
    if report["result"] == "ok" or (report["result"] == "violation"):
        return f"holds ({report['distinct_states']:,})"
    if report["result"] == "interrupted":
        return "unknown (interrupted)"
    if report["result"] == "not reached":
        return "not reached (interrupted)"
    return "unknown (bounded)"


def markdown(data: dict, link_dir: str) -> str:
    """The comparison as Markdown: per configuration, what each design costs (data, availability, KIP-112's
    rule), then every invariant (rows: designs; columns: invariants)."""
    lines = []
    labels = {d["key"]: d["label"] for d in data["designs"]}
    for config in data["configurations"]:
        cells = data["cells"][config]
        columns: list[str] = []
        for report in cells.values():
            columns.extend(i for i in report["invariants"] if i not in columns)
        c = configuration(config)
        lines.append(f"### {c.heading}" if c.heading else f"### Preset `{config}`")
        lines.append("")
        lines.append("What each design costs:")
        lines.append("")
        lines.append("| design | " + " | ".join(f"{what}: `{inv}`" for what, inv in c.costs) + " |")
        lines.append("|---" * (len(c.costs) + 1) + "|")
        for key, report in cells.items():
            lines.append(f"| {labels[key]} | " + " | ".join(_cell_text(report, inv, link_dir) for _, inv in c.costs)
                         + " |")
        lines.append("")
        lines.append("Every invariant:")
        lines.append("")
        lines.append("| design | " + " | ".join(f"`{c}`" for c in columns) + " |")
        lines.append("|---" * (len(columns) + 1) + "|")
        for key, report in cells.items():
            lines.append(f"| {labels[key]} | " + " | ".join(_cell_text(report, col, link_dir) for col in columns)
                         + " |")
        lines.append("")
        if c.notes:
            lines.append(f"Notes: {c.notes}")
            lines.append("")
    lines += interrupted_note(data, "the comparison")
    return "\n".join(lines)


BEGIN = "<!-- BEGIN GENERATED by `jbodcheck compare`: do not edit by hand -->"
END = "<!-- END GENERATED -->"


def write_markdown(path: str, table: str) -> None:
    """Write the table to path; a regular file that already has the generated block's markers keeps the rest of
    its text and gets the new block between them (docs/designs.md). A device or a pipe is written, never read
    (``/dev/zero`` never ends, ``/dev/stdout`` on a pipe would block)."""
    block = f"{BEGIN}\n\n{table.rstrip()}\n\n{END}"
    text = None
    if is_regular_file(path):
        try:
            with open(path, encoding="utf-8") as f:
                old = f.read()
        except (OSError, UnicodeDecodeError) as e:
            why = "it is not UTF-8 text" if isinstance(e, UnicodeDecodeError) else e.strerror or e
            raise OutputError(f"cannot keep the text of the Markdown file {path}: {why}") from None
        if BEGIN in old and END in old:
            text = old[:old.index(BEGIN)] + block + old[old.index(END) + len(END):]
    write_text(path, text if text is not None else block + "\n", "the Markdown table")


def generated_block(text: str) -> str:
    """The table between the markers of a Markdown file (what `compare` generated)."""
    return text[text.index(BEGIN) + len(BEGIN):text.index(END)].strip()


def default_scenarios_dir(markdown_path: str | None, json_path: str | None) -> str:
    for path in (markdown_path, json_path):
        if path and path != "-":
            stem = os.path.splitext(path)[0]
            return stem + "-scenarios"
    return "compare-scenarios"


def _command():
    import click

    @click.command(name="compare")
    @click.option("--configs", default=None, metavar="NAME[,NAME...]",
                  help=f"The configurations: a preset (every ZooKeeper design on it) or tiny-kraft (KIP-112 and "
                       f"KIP-858 on tiny's cluster without data) [default: {','.join(CONFIGS)}]; with --fixes, the "
                       f"fixes table's own [default: all of them].")
    @click.option("--fixes", "fixes", is_flag=True,
                  help="Compare the candidate fixes of the KRaft findings instead (`jbodcheck fixes`): rows are "
                       "fixes, columns safety invariants and liveness properties (docs/fixes.md).")
    @click.option("--workers", type=click.IntRange(min=1, max=1024), default=1, show_default=True, metavar="N",
                  help="BFS worker processes per run.")
    @click.option("--markdown", "markdown_path", default=None, metavar="PATH",
                  help="Write the Markdown table to PATH (between the generated-block markers if PATH has them); "
                       "default stdout.")
    @click.option("--json", "json_path", default=None, metavar="PATH|-",
                  help="Write the comparison as JSON (per cell the explore report) to PATH or stdout.")
    @click.option("--scenarios", "scenarios_dir", default=None, metavar="DIR",
                  help="Where the violations' scenario files go (default: beside the output, NAME-scenarios).")
    @click.option("--quiet", "-q", is_flag=True, help="No progress lines on stderr.")
    def compare_command(configs, fixes, workers, markdown_path, json_path, scenarios_dir, quiet):
        """Run every design on the same presets and compare which invariants each breaks (with --fixes: every
        candidate fix of the KRaft findings on the configurations where they were found)."""
        from . import compare_fixes

        known = compare_fixes.CONFIG_NAMES if fixes else tuple(CONFIGURATIONS)
        given = configs if configs is not None else ",".join(compare_fixes.CONFIG_NAMES if fixes else CONFIGS)
        names = [c.strip() for c in given.split(",") if c.strip()]
        if not names:                       # --configs '' is not the default table
            raise click.BadParameter(f"{configs!r} names no configuration (known: {', '.join(known)}"
                                     + ("" if fixes else "; or a preset") + ")", param_hint="--configs")
        unknown = [c for c in names if c not in known and (fixes or c not in PRESETS)]
        if unknown:
            if fixes:
                raise click.BadParameter(f"unknown configuration {', '.join(unknown)} (known: "
                                         f"{', '.join(known)})", param_hint="--configs")
            raise click.BadParameter(f"unknown preset(s) {', '.join(unknown)} (or configuration: "
                                     f"{', '.join(CONFIGURATIONS)})", param_hint="--configs")
        if fixes and workers != 1:
            raise click.BadParameter("the fixes table runs one worker per cell (--workers 1)", param_hint="--workers")
        kraft = [c for c in names if not fixes and c not in CONFIGURATIONS and is_kraft_preset(c)]
        if kraft:
            raise click.BadParameter(
                f"{', '.join(kraft)}: a KRaft-mode preset; a preset is compared by running every ZooKeeper design "
                f"on it, which would not run KRaft: use {ZK_KRAFT.name} (KIP-112 and KIP-858 on tiny's cluster)",
                param_hint="--configs")
        scenarios_dir = scenarios_dir or default_scenarios_dir(markdown_path, json_path)
        try:
            check_outputs(markdown_path, json_path, scenarios_dir)
        except OutputError as e:
            from .exits import BadInput

            raise BadInput(str(e)) from None
        progress = None if quiet else (lambda line: click.echo(f"[compare] {line}", err=True))
        if fixes:
            data = compare_fixes.compare_fixes(names, scenarios_dir, progress)
        else:
            data = compare(names, workers, scenarios_dir, progress)
        base = os.path.dirname(os.path.abspath(markdown_path)) if markdown_path else os.getcwd()
        link_dir = os.path.relpath(os.path.abspath(scenarios_dir), base)
        table = (compare_fixes.markdown if fixes else markdown)(data, link_dir)
        if markdown_path:
            write_markdown(markdown_path, table)
        elif json_path != "-":
            click.echo(table)
        if json_path == "-":
            click.echo(json.dumps(data, indent=2))
        elif json_path:
            write_json(json_path, data, "the JSON comparison")
        if data["signal"]:
            click.echo(f"jbodcheck: interrupted by signal {data['signal']}: the comparison is partial", err=True)
            return 128 + data["signal"]
        return 0

    return compare_command


compare_command = _command()
