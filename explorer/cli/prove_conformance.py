"""`jbodcheck prove`'s conformance check: before a proof of the z3 model is called a proof about the explicit
model, the explicit model the user runs (its variant, its MODEL options, its plugins' features, its bug switches
and whatever else the MODEL options add) is compared with the z3 model on the reachable states of a configuration
(proofs/conformance.py for KIP-112, proofs/kraft_conformance.py for KRaft; docs/proofs.md sections 5 and 9.3).

Each function returns (text lines, the JSON ``conformance`` object, conforms); an exception inside the check (a
plugin's rule raising, z3 answering unknown) is the checker's failure (exit 3), never a verdict.
"""
from __future__ import annotations

import attrs

from explorer.errors import JbodcheckFailure, one_line

from .model_value import checked_model, model_config


def not_checked(why: str) -> tuple[list, dict, bool]:
    return ([f"conformance with the explicit model: NOT checked ({why})"],
            {"checked": False, "result": "not checked", "why": why}, True)


def _failure(e: Exception) -> JbodcheckFailure:
    return JbodcheckFailure(f"the conformance check failed: {one_line(e)}")


def kip112(preset: str, changed: bool, cfg, variant: str, max_states: int | None):
    """The whole conformance check (forward, reverse, properties and lemmas, and beyond the reachable states) on
    the configuration ``cfg`` the MODEL options name (``preset`` with the variant prove runs; ``changed``: other
    MODEL options changed it), up to the dir symmetry (proofs/conformance.py: sound when every feature is
    symmetric; the model turns it off otherwise, and the output says which)."""
    from proofs import conformance

    model = checked_model(preset, cfg, symmetry=True, quiet=True)
    try:
        report = conformance.check(model, f"{preset} (changed by the MODEL options)" if changed else preset,
                                   variant, max_states=max_states)
    except Exception as e:  # noqa: BLE001 - a plugin's rule, z3: the checker failed, not a verdict
        raise _failure(e) from None
    lines = conformance.render(report)
    lines.insert(1, f"  configuration: {_configuration(model)['text']}")
    figures = conformance.figures(report)
    figures["configuration"] = _configuration(model)
    out = {"checked": True, "result": "conforms" if report.ok else "does not conform", "configurations": [figures],
           "offences": conformance.offences(report)}
    return lines, out, report.ok


def kraft_config(preset: str | None, params: dict):
    """The configuration KRaft's MODEL options name: the preset's, or kraft-core's conformance base
    (proofs/kraft_configurations.py CORE), changed by the options."""
    from proofs import kraft_configurations as configs

    cfg = model_config(preset, {**params, "variant": "kraft"}, base=None if preset else configs.CORE)
    if "kafka_release" not in params and "kafka" not in dict(cfg.options):   # the z3 model's release, not the newest
        cfg = attrs.evolve(cfg, options={**dict(cfg.options), "kafka": configs.Z3_RELEASE})
    return cfg


def kraft(name: str | None, cfg, max_states: int | None, profile: str = "default"):
    """KRaft's conformance check on the configuration ``cfg`` the MODEL options name (``name``: the preset's),
    or (None) on every configuration of the profile (proofs/kraft_configurations.py), each bounded as the list
    says."""
    from proofs import kraft_configurations as configs

    if cfg is not None:
        runs = [(name or "the MODEL options' configuration", "", cfg, None, 300)]
    else:
        from model import ModelConfig
        runs = [(c.name, c.why, ModelConfig(**c.model), c.max_states, c.beyond) for c in configs.profile(profile)]
    lines = ["conformance of the z3 model with the explicit model (model/kraft/), "
             + (f"{len(runs)} configurations (proofs/kraft_configurations.py, profile {profile}):" if len(runs) > 1
                else "one configuration:")]
    records, offences, ok = [], [], True
    for name, why, cfg, bound, beyond in runs:
        if max_states is not None:
            bound = max_states if bound is None else min(bound, max_states)
        model = checked_model(None, cfg, quiet=True)
        refusal = kraft_conformance_refusal(model)
        if refusal is not None:         # a 4.x model: the z3 model is not a model of it, nothing is established
            lines += [f"  {name}: not checked: {refusal}", "  => DOES NOT CONFORM (not a model of this release)"]
            return lines, {"checked": False, "result": "refused", "why": refusal, "configurations": [],
                           "offences": []}, False
        try:
            result = _kraft_check(model, bound, beyond)
        except Exception as e:  # noqa: BLE001
            raise _failure(e) from None
        ok = ok and result["result"] == "ok"
        record = {"name": name, "configuration": _configuration(model), "max_states": bound,
                  "kafka": result["kafka"], "elr": result["elr"],
                  "whole": result["whole"], **{k: result[k] for k in (
                      "states", "transitions", "abstract_triples", "abstract_states", "reverse", "beyond",
                      "explicit_violations", "result", "elapsed_s")}}
        records.append(record)
        offences += [{"configuration": name, **_plain(o)} for o in result["offences"]]
        lines += _kraft_lines(name, why, model, result, bound)
    scope = kraft_scope(records)
    lines += [f"  checked at {scope['checked']}; NOT covered by this check:"]
    lines += [f"    - {long}" for _, long in configs.NOT_COVERED]
    lines.append("  => conforms" if ok else "  => DOES NOT CONFORM")
    out = {"checked": True, "result": "conforms" if ok else "does not conform", "configurations": records,
           "offences": offences, "scope": scope}
    return lines, out, ok


def kraft_scope(records) -> dict:
    """What the KRaft conformance runs covered (the releases and ELR of their models) and what no run covers
    (proofs/kraft_configurations.py NOT_COVERED): the verdict says both."""
    from proofs import kraft_configurations as configs

    releases = sorted({r["kafka"] for r in records})
    elr = sorted({r["elr"] for r in records})
    checked = f"Kafka {', '.join(releases)}, ELR {'/'.join('on' if e else 'off' for e in elr)}"
    return {"checked": checked, "not_covered": [short for short, _ in configs.NOT_COVERED],
            "not_covered_why": [long for _, long in configs.NOT_COVERED]}


def kraft_conformance_refusal(model) -> str | None:
    from proofs import kraft_conformance

    return kraft_conformance.release_refusal(model)


def _kraft_check(model, bound, beyond) -> dict:
    from proofs import kraft_conformance

    result = kraft_conformance.check(model, limit=bound, beyond=beyond)
    # reachable() stops adding states at the bound: the run was whole if it visited fewer
    result["whole"] = bound is None or result["states"] < bound
    return result


def _kraft_lines(name, why, model, result, bound) -> list[str]:
    rev = result["reverse"] or {}
    states = (f"{result['states']:,} states, every reachable one" if result["whole"] else
              f"the first {result['states']:,} states, breadth-first: NOT all")
    lines = [f"  {name}: {_configuration(model)['text']}" + (f" ({why})" if why else ""),
             f"    {states}; {result['transitions']:,} transitions, {result['abstract_triples']:,} distinct abstract "
             f"triples; reverse: {rev.get('z3_queries', 0):,} z3 queries; properties on every state and transition"]
    if result["beyond"]:
        b = result["beyond"]
        lines.append(f"    beyond the reachable states: {b['samples']:,} changed states and as many changed "
                     f"transitions (seed {b['seed']}), {', '.join(b['compared'])}")
    for o in result["offences"]:
        lines.append("    " + _kraft_offence(o))
    for pid, v in result["explicit_violations"].items():
        lines.append(f"    the explicit model itself breaks {pid} ({v['count']:,} times; first at {v['first']})")
    lines.append(f"    => {'conforms' if result['result'] == 'ok' else 'DOES NOT CONFORM'} ({result['elapsed_s']:.0f}s)")
    return lines


def _kraft_offence(o: dict) -> str:
    check = o["check"].upper()
    if o["check"] in ("property", "beyond"):
        where = f" at {o['rule']}{tuple(o['args'])}" if "rule" in o else ""
        return (f"{check} {o['property']}{where}: the explicit invariant says "
                f"{'holds' if o['explicit'] else 'violated'}, z3 says {'holds' if o['z3'] else 'violated'}")
    if o["check"] == "forward":
        return (f"FORWARD: the explicit {o['rule']}{tuple(o['args'])} is a transition the z3 action {o['action']} "
                f"does not allow")
    if o["check"] == "initial":
        return "INITIAL: the explicit initial state is not a z3 initial state"
    return f"{check}: z3 {o['action']}{tuple(o['args'])} (choice {o.get('choice')}) differs from the explicit steps"


def _plain(o: dict) -> dict:
    """An offence with its abstract states left out (JSON keeps which check, action or property, and where)."""
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in o.items()
            if k not in ("state", "pre", "post", "choice")}


def _configuration(model) -> dict:
    cfg = model.cfg
    feats = sorted(f.name for f in model.plugin_features)
    bounds = [f"{n} {what}" for n, what in (
        (cfg.max_dir_failures, "dir failure(s)"), (cfg.max_crashes, "crash(es)"), (cfg.max_restarts, "restart(s)"),
        (cfg.max_fixes, "repair(s)"), (cfg.max_failovers, "failover(s)")) if n]
    records = cfg.max_records if isinstance(cfg.max_records, int) else list(cfg.max_records)
    text = (f"{cfg.brokers} broker(s) x {cfg.dirs} dirs, {cfg.partitions} partition(s), RF {cfg.rf}, variant "
            f"{cfg.variant}; {records} record(s){', a consumer' if cfg.consumer else ''}; "
            f"{', '.join(bounds) or 'no fault event'}, at most {cfg.max_faults} fault(s)"
            + (f"; plugin features {', '.join(feats)}" if feats else "")
            + (f"; options {dict(cfg.options)}" if cfg.options else ""))
    return {"text": text, "model": cfg.as_dict(), "plugin_features": feats}
