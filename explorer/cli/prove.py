"""`jbodcheck prove`: the flagship properties for every cluster size (docs/proofs.md, docs/cli.md), over proofs/
(z3 is imported only when this command runs: explorer/cli/optional.py LazyCommand).

A proof is about the z3 model; it is about the explicit model the user runs only if that model conforms to it.
So before the verdict, prove runs the conformance check on the configuration its MODEL options name (with
--plugin's features, --bug's switches and every other MODEL option; explorer/cli/prove_conformance.py), or says
in the verdict that it did not (--no-conformance).

Exit codes: 0 every property proved (with --bmc: no violation up to K) and the explicit model conforms (or the
check was turned off, which the verdict says); 1 a property not proved (a counterexample to induction printed;
with --bmc: a violation found, its path printed), an action never enabled, or the explicit model does not conform
to the z3 model (the proof does not apply to it); 2 bad input; 3 the checker failed (the conformance check raised:
a plugin's rule, z3 answering unknown); 130 / 143 interrupted (the report says "interrupted").
"""
from __future__ import annotations

import json
import time

import click

from explorer import signals
from explorer.cli import prove_conformance, prove_kraft
from explorer.cli.prove_report import induction_report, with_conformance
from explorer.errors import OutputError
from explorer.outputs import check_writable, write_json
from proofs.properties import PROPERTIES

from .model_value import checked_model, model_config
from .sections import SectionedCommand, section
from .options import model_options, model_params, plugin_option

SCHEMA = 1
FAILURE_BMC_SIZE = (2, 2, 1)     # tiny's brokers, dirs and partitions
FAILURE_BMC_DEPTH = 8            # no_recreate_over_offline_copy's shortest z3 path under legacy has 8 steps
DEFAULT_PRESET = "tiny"          # the configuration of KIP-112's conformance check and of --bmc's size


class _BadInput(click.ClickException):
    exit_code = 2


def _model_options_but_variant_and_preset(f):
    """The MODEL options (explorer/cli/options.py), whatever they come to hold, except --variant and --preset,
    which prove has with its own defaults: so that the configuration the conformance check runs is the one the
    user names, with every option another command would take."""
    probe = model_options(lambda **kwargs: None)
    params = getattr(f, "__click_params__", [])
    params.extend(p for p in probe.__click_params__ if p.name not in ("variant", "preset"))
    f.__click_params__ = params
    return f


@click.command(name="prove", cls=SectionedCommand)
@section(
    "Proof",
    click.option("--variant", default="kip112", show_default=True, metavar="NAME",
                 help="Protocol variant: kip112 or kip112-no-isnew-check (legacy, a deprecated alias): the broker's "
                      "may_create_log; kraft: the KRaft controller's image (docs/proofs.md, 'KRaft')."),
    click.option("--property", "property_ids", multiple=True, metavar="ID",
                 help=f"Prove only this property (repeatable; default all: {', '.join(PROPERTIES)})."),
    click.option("--bmc", "bmc_depth", type=click.IntRange(min=0, max=50), default=None, metavar="K",
                 help="Bounded model checking instead of induction: unroll the relation K steps on a fixed size."),
    click.option("--preset", default=None, metavar="NAME",
                 help=f"The configuration of the conformance check (default {DEFAULT_PRESET}; KRaft: the list of "
                      "docs/proofs.md 9.3), the other MODEL options over it; with --bmc its brokers, dirs and "
                      "partitions fix the size."),
    click.option("--no-conformance", "no_conformance", is_flag=True,
                 help="Do not check that the explicit model conforms to the z3 model: the verdict then says the proof "
                      "is about the z3 model only."),
    click.option("--conformance-max-states", "conformance_max_states", type=click.IntRange(min=1), default=None,
                 metavar="N", help="Check conformance on the first N states (breadth-first) of each configuration "
                                   "only (the verdict says so); default: every reachable state (KRaft: the list's "
                                   "own bounds)."),
    click.option("--json", "json_path", default=None, metavar="PATH|-",
                 help="Write the JSON result to PATH or stdout."),
)
@_model_options_but_variant_and_preset
@plugin_option
def prove_command(variant, property_ids, bmc_depth, preset, no_conformance, conformance_max_states, json_path,
                  **kwargs):
    """Prove KIP-112's properties for every number of brokers, dirs and partitions (z3: an inductive invariant
    per property, checked per action; a counterexample to induction when it fails), or, with --bmc K, look
    for a violation within K steps on a fixed size; then check that the explicit model (MODEL options,
    --plugin) conforms to the z3 model, without which the proof says nothing about it."""
    from proofs.system import VARIANTS

    from explorer.catalog import VARIANTS as CATALOG_VARIANTS

    params = model_params(kwargs)
    if variant == prove_kraft.KRAFT_VARIANT:
        return _prove_kraft(property_ids, bmc_depth, preset, params, no_conformance, conformance_max_states,
                            json_path)
    if variant not in VARIANTS:
        if variant in CATALOG_VARIANTS:
            raise _BadInput(f"prove covers {', '.join(VARIANTS)}; --variant {variant} has no z3 model yet "
                            "(docs/proofs.md, 'Scope'): check it with explore")
        raise _BadInput(f"unknown variant {variant!r} (known: {', '.join((*VARIANTS, prove_kraft.KRAFT_VARIANT))})")
    unknown = [p for p in property_ids if p not in PROPERTIES]
    if unknown:
        raise _BadInput(f"unknown property {', '.join(unknown)} (known: {', '.join(PROPERTIES)})")
    preset = preset or DEFAULT_PRESET
    cfg = model_config(preset, {**params, "variant": variant})     # bad input is found before the long run
    try:
        check_writable(json_path, "the JSON result")
    except OutputError as e:
        raise _BadInput(str(e)) from None
    def work(lines):
        if bmc_depth is None:
            report, ok, verdict = _induction(variant, property_ids, lines)
        else:
            report, ok, verdict = _bmc(variant, property_ids, bmc_depth, preset, cfg, lines)
        if no_conformance:
            conf_lines, conf, conforms = prove_conformance.not_checked("--no-conformance")
        else:
            conf_lines, conf, conforms = prove_conformance.kip112(preset, bool(params), cfg, variant,
                                                                  conformance_max_states)
        lines += [""] + conf_lines
        return with_conformance(report, ok, verdict, conf, conforms)

    return _interruptible(work, variant, json_path)


def _interruptible(work, variant, json_path):
    """Run ``work(lines)`` (-> report, ok, verdict) and finish; SIGINT or SIGTERM stops it (docs/cli.md, exit codes):
    the lines so far, a report with "result": "interrupted" and its signal, exit 128 + the signal."""
    start = time.monotonic()
    lines: list[str] = []
    try:
        with signals.interruptible():
            signals.test_point("prove")
            report, ok, verdict = work(lines)
    except signals.INTERRUPTS as e:
        sig = signals.interrupt_signal(e)
        report = {"schema": SCHEMA, "tool": "jbodcheck", "command": "prove", "variant": variant,
                  "result": "interrupted", "signal": sig}
        _finish(lines, report, False, f"interrupted by signal {sig} before the proofs and the conformance check "
                                      "ended: nothing is proved", start, json_path)
        click.echo(f"jbodcheck: interrupted by signal {sig}: the result is partial", err=True)
        return 128 + sig
    return _finish(lines, report, ok, verdict, start, json_path)


def _induction(variant, property_ids, lines):
    from proofs import bmc as bmc_mod
    from proofs import induction, vacuity

    ids = list(property_ids) or list(PROPERTIES)
    lines.append(f"jbodcheck prove: variant {variant}, any number of brokers, dirs and partitions (z3 induction)")
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
    return induction_report(SCHEMA, variant, results, vac)


def _bmc(variant, property_ids, depth, preset, cfg, lines):
    from proofs import bmc as bmc_mod
    from proofs import vacuity

    ids = list(property_ids) or list(PROPERTIES)
    lines.append(f"jbodcheck prove --bmc {depth}: variant {variant}, size of preset {preset}")
    # An action whose relation is contradictory would make "no violation" vacuous here too.
    vac = vacuity.check(variant)
    lines += [""] + vacuity.render(vac)
    results = [bmc_mod.bmc(pid, variant, cfg.brokers, cfg.dirs, cfg.partitions, depth) for pid in ids]
    for r in results:
        lines += [""] + bmc_mod.render(r)
    found = all(r["result"] == "no violation" for r in results)
    ok = found and not vac["never_enabled"]
    report = {"schema": SCHEMA, "tool": "jbodcheck", "command": "prove", "mode": "bmc", "variant": variant,
              "preset": preset, "depth_bound": depth,
              "result": "no violation" if found else "violation", "properties": results, "vacuity": vac}
    if not found:
        verdict = "violation: " + ", ".join(f"{r['id']} at depth {r.get('first_violation_depth')}"
                                            for r in results if r["result"] != "no violation")
    else:
        verdict = f"no violation up to depth {depth}"
    if vac["never_enabled"]:
        report["result"] = "vacuous" if found else report["result"]
        verdict = (verdict if not found else "NOT established") + "; " + ", ".join(
            f"action {name} never enabled (vacuous)" for name in vac["never_enabled"])
    return report, ok, verdict


def _prove_kraft(property_ids, bmc_depth, preset, params, no_conformance, max_states, json_path):
    if bmc_depth is not None:
        raise _BadInput("--bmc covers kip112 only: KRaft has no bounded z3 unrolling yet (check it with explore)")
    unknown = prove_kraft.unknown_properties(property_ids)
    if unknown:
        raise _BadInput(f"unknown property {', '.join(unknown)} (known: {prove_kraft.known_properties()})")
    # the configuration the MODEL options name, or None: the list of docs/proofs.md 9.3 (bad input before the run)
    cfg = prove_conformance.kraft_config(preset, params) if preset is not None or params else None
    if cfg is not None:      # a configuration the model refuses (elr=true before 4.0) is refused before the z3 work
        checked_model(None, cfg, quiet=True)
    try:
        check_writable(json_path, "the JSON result")
    except OutputError as e:
        raise _BadInput(str(e)) from None
    def work(lines):
        proved, report, ok, verdict = prove_kraft.run(property_ids, SCHEMA)
        lines += proved
        if no_conformance:
            conf_lines, conf, conforms = prove_conformance.not_checked("--no-conformance")
        else:
            conf_lines, conf, conforms = prove_conformance.kraft(preset, cfg, max_states)
        lines += [""] + conf_lines
        return with_conformance(report, ok, verdict, conf, conforms)

    return _interruptible(work, prove_kraft.KRAFT_VARIANT, json_path)


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
