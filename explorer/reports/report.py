"""The JSON report (docs/cli.md; the README's "Interface") and its text summary."""
from __future__ import annotations

from model import Model

from explorer import __version__
from explorer.catalog import preset_of
from explorer.engines import engine_named
from .bounds import bounds_dict, fairness, verdict_line
from .render import state_dict, trace_text
from explorer.search import SearchResult


def not_in_configuration(model: Model) -> list[str]:
    """The design's rules this configuration has no action of: a feature it leaves out, or a bound of 0."""
    configured = {rule.name for _, rule, _ in model.action_space}
    return [name for name in model.reported_rules if name not in configured]


def full_coverage(model: Model, coverage: dict) -> dict:
    """Firings per rule of the design (0 for the rules of features this configuration leaves out), in order."""
    return {name: coverage.get(name, 0) for name in model.reported_rules}


def report_dict(model: Model, result: SearchResult) -> dict:
    """The JSON report of a run on ``model`` (its preset, if any, is the model value's: explorer/catalog.py)."""
    return {
        "schema": 1,
        "tool": "jbodcheck",
        "version": __version__,
        "model": {"preset": preset_of(model), **model.cfg.as_dict()},
        "engine": result.engine,
        "symmetry": model.symmetry,
        # Why the reduction asked for is not used (a feature it is unsound with, an invariant not declared
        # symmetric); null when it is used or was not asked for.
        "symmetry_note": model.symmetry_note,
        "workers": result.workers,
        # Partial-order reduction (--por): {"used": bool, "note": why not (or null), figures when used}; null
        # when not asked for (or for an engine without it).
        "por": result.por,
        "result": result.result,
        "distinct_states": result.distinct_states,
        "states_generated": result.states_generated,
        "depth": result.depth,
        "elapsed_s": result.elapsed_s,
        "coverage": full_coverage(model, result.coverage),
        # The chance that two distinct states shared a 64-bit fingerprint (one then went unexplored): n^2/2^65.
        "collision_probability": result.collision_probability,
        # "interrupted": the signal that stopped the search (2: SIGINT, 15: SIGTERM, 1: SIGHUP); else null.
        "signal": result.signal,
        # Rules with no action in this configuration (a feature switched off, a bound of 0): they cannot fire.
        "rules_not_in_configuration": not_in_configuration(model),
        # What the verdict covers (explorer/reports/bounds.py): the model's bounds, the search's limits, fairness (liveness).
        "bounds": bounds_dict(model, result),
        "violations": [violation_dict(model, v) for v in result.violations],
        # Liveness lassos that need a step this configuration leaves out (a bound of 0): not violations; "needs":
        # bound -> the fair steps that, with the bound raised to 1, are enabled all along the lasso's cycle.
        "inconclusive": [{**violation_dict(model, v), "needs": v.needs} for v in result.inconclusive],
    }


def violation_dict(model: Model, v) -> dict:
    return {
        "invariant": v.invariant.id,
        "kind": v.invariant.kind,
        "message": v.message,
        "trace": [
            {"step": i, "action": None if a is None else model.label(a), "state": state_dict(model, s)}
            for i, (a, s) in enumerate(v.trace)
        ],
        # A liveness lasso (explorer/liveness.py): the steps after this one repeat forever (none: it stays).
        **({"loop_start": v.loop_start} if hasattr(v, "loop_start") else {}),
    }


def _prefix_of(violation, shown: list | None) -> bool:
    """The violation's trace (no lasso) is the start of the trace ``shown``: the same actions, step by step."""
    if shown is None or getattr(violation, "loop_start", None) is not None or len(violation.trace) > len(shown):
        return False
    return all(a == b for (a, _), (b, _) in zip(violation.trace, shown))


# The ZooKeeper-mode designs Kafka never shipped: a real cluster cannot judge their verdicts (docs/reproduce-zk.md).
UNSHIPPED = {"kip112-draft": "KIP-112's draft", "kip18": "KIP-18", "kip46": "KIP-46"}


def real_kafka_note(cfg) -> str | None:
    """The line that says a verdict no real Kafka can judge, for a design (or KIP-928's saturation) Kafka never
    shipped; None for the others."""
    never = [UNSHIPPED[cfg.variant]] if cfg.variant in UNSHIPPED else []
    if getattr(cfg, "saturation", False):
        never.append("KIP-928's saturation")
    if not never:
        return None
    return (f"Kafka never shipped {' nor '.join(never)}: no real Kafka can judge this verdict (only --variant kip112 "
            "runs on a real ZooKeeper-mode cluster: docs/reproduce-zk.md).")


def summary_text(model: Model, result: SearchResult, shown: list | None = None) -> str:
    """The text summary. ``shown``: a trace printed already (replay's, after the header line): a violation whose
    trace is a prefix of it names its step there instead of printing the trace again."""
    cfg = model.cfg
    lines = [
        f"jbodcheck {result.engine}: {preset_of(model) or 'custom'} model, variant {cfg.variant}, "
        f"{cfg.brokers} brokers x {cfg.dirs} dirs, {cfg.partitions} partition(s), RF {cfg.rf}",
    ]
    for v in result.violations:
        lines.append("")
        lines.append(f"VIOLATION of {v.invariant.id} ({v.invariant.kind} invariant): {v.message}")
        lines.append(f"  {v.invariant.statement}")
        lines.append(f"  Reference: {v.invariant.reference}")
        if _prefix_of(v, shown):
            lines.append(f"  At step {len(v.trace) - 1} of the trace above.")
            continue
        lines.append(f"Trace ({len(v.trace) - 1} steps):")
        lines.append(trace_text(model, v.trace, getattr(v, "loop_start", None)))
    for v in result.inconclusive:
        needs = "; ".join(f"{', '.join(steps)} (with {bound.removeprefix('max_')} above 0)"
                          for bound, steps in v.needs.items())
        lines.append("")
        lines.append(f"NOT A VIOLATION of {v.invariant.id} ({v.invariant.kind}): the lasso below stalls where progress "
                     f"needs {needs}, which this configuration leaves out: weak fairness would take that step, so "
                     f"the lasso shows the bound, not the protocol. {v.invariant.id} is neither proved nor violated "
                     f"here.")
        lines.append(f"  {v.message}")
        lines.append(f"Trace ({len(v.trace) - 1} steps):")
        lines.append(trace_text(model, v.trace, v.loop_start))
    lines.append("")
    rate = result.distinct_states / result.elapsed_s if result.elapsed_s > 0 else 0.0
    lines.append(
        f"Result: {result.result}. {result.distinct_states:,} distinct states, {result.states_generated:,} generated, "
        f"depth {result.depth}, {result.elapsed_s:.1f}s ({rate:,.0f} distinct states/s)."
    )
    lines.append(verdict_line(model, result))
    unjudged = real_kafka_note(cfg)
    if unjudged:
        lines.append(unjudged)
    if engine_named(result.engine).checks == "liveness":
        fair = fairness(model)
        lines.append(f"Fairness assumed: {fair['kind']}, of {', '.join(fair['fair_rules']) or 'no rule'}; not fair "
                     f"(may happen within their bounds, never have to): {', '.join(fair['unfair_rules']) or 'none'}.")
        if fair["fair_rules_without_actions"]:
            lines.append(f"Fair rules this configuration leaves without actions (a bound of 0): "
                         f"{', '.join(fair['fair_rules_without_actions'])}.")
    lines.append(f"Fingerprints: 64-bit; the chance that two distinct states collided is about n^2/2^65 = "
                 f"{result.collision_probability:.2g}.")
    if model.symmetry:
        lines.append("Symmetry reduction: on (a broker's log dirs are interchangeable); states are counted up to it.")
    elif model.symmetry_note:
        lines.append(f"Symmetry reduction: off: {model.symmetry_note}.")
    if result.result == "interrupted":
        name = {1: "SIGHUP", 2: "SIGINT", 15: "SIGTERM"}.get(result.signal, f"signal {result.signal}")
        lines.append(f"The search was stopped by a signal ({name}): it is not exhaustive; the counts are those "
                     f"reached before it stopped.")
    if result.result == "bounded":
        if result.note:
            lines.append(f"The search {result.note}.")
        else:
            lines.append("The search stopped at a bound (--max-depth, --max-states or a random walk budget): "
                         "it is not exhaustive.")
    coverage = full_coverage(model, result.coverage)
    width = max(len(name) for name in coverage)
    lines.append("Coverage (transitions per rule):")
    for name, n in coverage.items():
        lines.append(f"  {name:<{width}}  {n:>12,}")
    absent = not_in_configuration(model)
    configured = set(coverage) - set(absent)
    if absent:
        lines.append("Rules not in this configuration (no action in their domain): " + ", ".join(absent))
    never = [name for name, n in coverage.items() if n == 0 and name in configured]
    if never:
        # A liveness run explores the whole graph whatever it finds; only an interrupt stops it early.
        liveness = engine_named(result.engine).checks == "liveness"
        stopped = result.result != "ok" and (not liveness or result.result == "interrupted")
        early = " (the search stopped early)" if stopped else ""
        lines.append(f"Rules that never fired{early}: " + ", ".join(never))
    else:
        lines.append("Every rule fired." if not absent else "Every rule of this configuration fired.")
    return "\n".join(lines)
