"""What a verdict covers (docs/cli.md, "What a result covers"): the configuration's bounds, the search's own
limits and, for liveness, the fairness assumed. Every engine's summary and JSON report carry them, so that no
result reads as more than was checked.

The model's bounds are derived from the configuration and its features, not listed per preset: the cluster's
shape (brokers, dirs, partitions, RF), then every ``max_*`` field (and ``dir_capacity``) that an included
feature declares in ``Feature.config_fields``, then every ``max_*`` option of a feature added from outside, and
every option declared ``in_bounds`` that is not at its default (KRaft's bug switches: ``bugs=KAFKA-16234``), and
every option that says how it is ``shown`` (KRaft's release and ELR: ``kafka=4.4, elr=on``).
"""
from __future__ import annotations

from model import BOUNDS
from model.spec.model import Model

from explorer.engines import Engine, engine_named

SHAPE = ("brokers", "dirs", "partitions", "rf")
# A bound printed under another name than its field's: max_fixes counts disk repairs (ReplaceDisk,
# RemoveDirFromConfig), not the candidate fixes of `--fix` and `jbodcheck fixes`. The report's ``bounds.model`` has
# both keys (the field's, kept for the readers of earlier reports, and the printed one).
PRINTED_AS = {"max_fixes": "max_repairs"}


def _is_bound(name: str) -> bool:
    return name.startswith("max_") or name == "dir_capacity"


def _plain(value):
    return list(value) if isinstance(value, tuple) else value


def model_bounds(model: Model) -> dict:
    """The configuration's bounds: the shape, then each included feature's ``max_*`` fields (and options)."""
    cfg = model.cfg
    out = {name: getattr(cfg, name) for name in SHAPE}
    for feature in model.features:
        for name in feature.config_fields:
            if _is_bound(name) and hasattr(cfg, name):
                out.setdefault(name, _plain(getattr(cfg, name)))
        for option in feature.options:
            value = model.option(option.name)
            if _is_bound(option.name):
                out.setdefault(option.name, _plain(value))
            elif option.shown is not None:
                out.setdefault(option.name, option.shown(model))
            elif option.in_bounds and value not in (option.default, ()):
                out.setdefault(option.name, _plain((value,) if isinstance(value, str) else value))
    return _with_printed_names(out)


def _with_printed_names(bounds: dict) -> dict:
    """The bounds with the events' first, in BOUNDS' order, and each printed name beside its field's."""
    out = {}
    ordered = [*SHAPE, *(n for n in BOUNDS if n in bounds), *(n for n in bounds if n not in SHAPE and n not in BOUNDS)]
    for name in ordered:
        value = bounds[name]
        out[name] = value
        if name in PRINTED_AS:
            out[PRINTED_AS[name]] = value
    return out


def _value_text(value) -> str:
    return ",".join(str(v) for v in value) if isinstance(value, list) else str(value)


def _items_text(bounds: dict, keep=lambda name: True) -> str:
    return ", ".join(f"{name.removeprefix('max_')}={_value_text(v)}" for name, v in bounds.items()
                     if name not in SHAPE and name not in PRINTED_AS and keep(name))


def model_bounds_text(bounds: dict) -> str:
    """'2 brokers x 2 dirs, 1 partition(s), RF 2; dir_failures=1, ..., repairs=1, ..., records=1'."""
    shape = (f"{bounds['brokers']} brokers x {bounds['dirs']} dirs, {bounds['partitions']} partition(s), "
             f"RF {bounds['rf']}")
    rest = _items_text(bounds)
    return f"{shape}; {rest}" if rest else shape


def event_bounds_text(model: Model) -> str:
    """'dir_failures=1, crashes=1, ..., repairs=1, faults=2': the bounds on environment events of the included
    features (`jbodcheck presets`, fuzz's closing line)."""
    events = {PRINTED_AS.get(name, name) for name in BOUNDS}
    return _items_text(model_bounds(model), lambda name: name in events)


def search_limits(options, engine: Engine) -> dict:
    """The search's own limits from the engine's options (explorer/search.py SearchOptions, explorer/fuzz.py
    FuzzOptions), those the engine declares (explorer/engines.py; the commands set ``SearchResult.limits``)."""
    return {name: getattr(options, name) for name in engine.limits if hasattr(options, name)}


def search_text(model: Model, result) -> tuple[str, bool]:
    """How far the search went, in words, and whether it covered every reachable state of the bounds."""
    limits, engine = result.limits, engine_named(result.engine)
    if engine.scope is not None:
        return engine.scope(limits, result), False
    given = [f"--{name.replace('_', '-')} {limits[name]}"
             for name in ("max_depth", "max_states", "max_memory") if limits.get(name) is not None]
    reductions = []
    if model.symmetry:
        reductions.append("dir symmetry")
    if result.por and result.por.get("used"):
        reductions.append("partial-order reduction")
    up_to = f" (up to {' and '.join(reductions)})" if reductions else ""
    if result.result == "violation":
        trace = engine.por_trace if result.por and result.por.get("used") else engine.trace
        return trace or f"found by the {engine.name} engine", False
    if result.result == "bounded" and getattr(result, "inconclusive", None):
        return (f"every reachable state{up_to}; {len(result.inconclusive)} lasso(s) need a step this "
                f"configuration leaves out (a bound of 0), so those properties are neither proved nor violated"), False
    if result.result == "bounded":
        if result.note:
            return f"the search {result.note}", False
        return f"the search stopped at {' or '.join(given) or 'a limit of the search'}, not exhaustive", False
    if result.result == "interrupted":
        return "interrupted by a signal, not exhaustive", False
    if not engine.exhaustive:
        return f"engine {engine.name}", False
    if given:
        return f"every reachable state{up_to}, search limits {', '.join(given)} not reached", True
    return f"every reachable state{up_to}", True


def fairness(model: Model) -> dict:
    """The fairness a liveness run assumes: weak fairness per action instance of the configured fair rules."""
    configured = {rule.name for _ri, rule, _args in model.action_space}
    rules = [r for r in model.rules if r.name in configured]
    return {"kind": "weak, per action instance (rule and arguments)",
            "fair_rules": [r.name for r in rules if r.fair],
            "unfair_rules": [r.name for r in rules if not r.fair],
            # Fair rules of the configuration's features that a bound of 0 leaves without actions: a lasso that
            # needs one is reported as inconclusive, not as a violation (explorer/liveness.py left_out_progress).
            "fair_rules_without_actions": [r.name for r in model.rules if r.fair and r.name not in configured]}


def bounds_dict(model: Model, result) -> dict:
    """The report's "bounds" object (docs/cli.md, "JSON report")."""
    bounds = model_bounds(model)
    text, exhaustive = search_text(model, result)
    out = {"model": bounds, "search": {"engine": result.engine, "exhaustive": exhaustive, "limits": dict(result.limits),
                                       "symmetry": model.symmetry, "text": text},
           "text": f"{model_bounds_text(bounds)}; {text}"}
    if engine_named(result.engine).checks == "liveness":
        out["fairness"] = fairness(model)
    return out


_LEAD = {
    "ok": "No violation within",
    "violation": "Found within",
    "bounded": "No violation found within",
    "interrupted": "No violation found before the interrupt, within",
}


def verdict_line(model: Model, result) -> str:
    """The line under ``Result:``: what the verdict covers."""
    text, _exhaustive = search_text(model, result)
    lead = _LEAD.get(result.result, f"{result.result} within")
    return f"{lead}: {model_bounds_text(model_bounds(model))}; {text}."
