"""`jbodcheck prove`: the flagship properties for every cluster size (docs/proofs.md, docs/cli.md), over proofs/
(z3 is imported only when this command runs: explorer/cli/optional.py LazyCommand).

Exit codes: 0 every property proved (with --bmc: no violation up to K steps), 1 a property not proved (a
counterexample to induction printed; with --bmc: a violation found, its path printed), 2 bad input.
"""
from __future__ import annotations

import json
import time

import click

from explorer.catalog import preset_config
from explorer.cli import prove_kraft
from explorer.cli.prove_report import induction_report
from explorer.errors import OutputError
from explorer.outputs import check_writable, write_json
from proofs.properties import PROPERTIES

SCHEMA = 1
FAILURE_BMC_SIZE = (2, 2, 1)     # tiny's brokers, dirs and partitions
FAILURE_BMC_DEPTH = 8            # no_recreate_over_offline_copy's shortest z3 path under legacy has 8 steps


class _BadInput(click.ClickException):
    exit_code = 2


def _size(preset: str) -> tuple[int, int, int]:
    from model import ConfigError

    try:
        cfg = preset_config(preset)
    except ConfigError as e:
        raise _BadInput(str(e)) from None
    return cfg.brokers, cfg.dirs, cfg.partitions


@click.command(name="prove")
@click.option("--variant", default="kip112", show_default=True, metavar="NAME",
              help="Protocol variant: kip112 or kip112-no-isnew-check (legacy, a deprecated alias): the broker's "
                   "may_create_log; kraft: the KRaft controller's image (docs/proofs.md, 'KRaft').")
@click.option("--property", "property_ids", multiple=True, metavar="ID",
              help=f"Prove only this property (repeatable; default all: {', '.join(PROPERTIES)}).")
@click.option("--bmc", "bmc_depth", type=click.IntRange(min=0, max=50), default=None, metavar="K",
              help="Bounded model checking instead of induction: unroll the relation K steps on a fixed size.")
@click.option("--preset", default="tiny", show_default=True, metavar="NAME",
              help="With --bmc: the preset whose brokers, dirs and partitions fix the size.")
@click.option("--json", "json_path", default=None, metavar="PATH|-", help="Write the JSON result to PATH or stdout.")
def prove_command(variant, property_ids, bmc_depth, preset, json_path):
    """Prove KIP-112's properties for every number of brokers, dirs and partitions (z3: an inductive invariant
    per property, checked per action; a counterexample to induction when it fails), or, with --bmc K, look
    for a violation within K steps on a fixed size."""
    from proofs import bmc as bmc_mod
    from proofs import induction, vacuity
    from proofs.system import VARIANTS

    from explorer.catalog import VARIANTS as CATALOG_VARIANTS

    if variant == prove_kraft.KRAFT_VARIANT:
        return _prove_kraft(property_ids, bmc_depth, json_path)
    if variant not in VARIANTS:
        if variant in CATALOG_VARIANTS:
            raise _BadInput(f"prove covers {', '.join(VARIANTS)}; --variant {variant} has no z3 model yet "
                            "(docs/proofs.md, 'Scope'): check it with explore")
        raise _BadInput(f"unknown variant {variant!r} (known: {', '.join((*VARIANTS, prove_kraft.KRAFT_VARIANT))})")
    unknown = [p for p in property_ids if p not in PROPERTIES]
    if unknown:
        raise _BadInput(f"unknown property {', '.join(unknown)} (known: {', '.join(PROPERTIES)})")
    try:
        check_writable(json_path, "the JSON result")
    except OutputError as e:
        raise _BadInput(str(e)) from None
    ids = list(property_ids) or list(PROPERTIES)
    start = time.monotonic()
    lines: list[str] = []
    if bmc_depth is None:
        lines.append(f"jbodcheck prove: variant {variant}, any number of brokers, dirs and partitions (z3 "
                     f"induction)")
        results = [induction.prove(pid, variant) for pid in ids]
        vac = vacuity.check(variant)
        lines += [""] + vacuity.render(vac)
        for r in results:
            lines += [""] + induction.render(r)
            if r["result"] != "proved":
                # A CTI may be unreachable: look for a real path to a violation (z3, on tiny's size).
                path = bmc_mod.bmc(r["id"], variant, *FAILURE_BMC_SIZE, FAILURE_BMC_DEPTH)
                r["bmc"] = path
                lines += ["  bounded model checking for a real path:"] + ["  " + x for x in bmc_mod.render(path)]
        report, ok, verdict = induction_report(SCHEMA, variant, results, vac)
    else:
        brokers, dirs, partitions = _size(preset)
        lines.append(f"jbodcheck prove --bmc {bmc_depth}: variant {variant}, size of preset {preset}")
        results = [bmc_mod.bmc(pid, variant, brokers, dirs, partitions, bmc_depth) for pid in ids]
        for r in results:
            lines += [""] + bmc_mod.render(r)
        ok = all(r["result"] == "no violation" for r in results)
        report = {"schema": SCHEMA, "tool": "jbodcheck", "command": "prove", "mode": "bmc", "variant": variant,
                  "preset": preset, "depth_bound": bmc_depth,
                  "result": "no violation" if ok else "violation", "properties": results}
        verdict = (f"no violation up to depth {bmc_depth}" if ok else "violation: " + ", ".join(
            f"{r['id']} at depth {r.get('first_violation_depth')}" for r in results
            if r["result"] != "no violation"))
    return _finish(lines, report, ok, verdict, start, json_path)


def _prove_kraft(property_ids, bmc_depth, json_path):
    if bmc_depth is not None:
        raise _BadInput("--bmc covers kip112 only: KRaft has no bounded z3 unrolling yet (check it with explore)")
    unknown = prove_kraft.unknown_properties(property_ids)
    if unknown:
        raise _BadInput(f"unknown property {', '.join(unknown)} (known: {prove_kraft.known_properties()})")
    try:
        check_writable(json_path, "the JSON result")
    except OutputError as e:
        raise _BadInput(str(e)) from None
    start = time.monotonic()
    lines, report, ok, verdict = prove_kraft.run(property_ids, SCHEMA)
    return _finish(lines, report, ok, verdict, start, json_path)


def _finish(lines, report, ok, verdict, start, json_path):
    elapsed = time.monotonic() - start
    report["elapsed_s"] = round(elapsed, 3)
    lines += ["", f"Result: {verdict} ({elapsed:.1f}s)"]
    text = "\n".join(lines)
    click.echo(text, err=json_path == "-")
    if json_path == "-":
        click.echo(json.dumps(report, indent=2))
    elif json_path is not None:
        write_json(json_path, report, "the JSON result")
    return 0 if ok else 1
