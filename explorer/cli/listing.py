"""`jbodcheck presets`, `rules` and `invariants`: what the catalog (explorer/catalog.py) holds."""
from __future__ import annotations

import json

import click

from model import BOUNDS, ModelConfig

from explorer.catalog import DEPRECATED_PRESETS, PRESETS, build_model, claimed_invariants, preset_config
from explorer.reports.bounds import event_bounds_text

from .exits import EXIT_OK
from .model_value import command_model
from .sections import SectionedCommand, section
from .options import model_options, model_params, plugin_option, plugins


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list.")
def presets(as_json):
    """List the named configurations."""
    entries = [{"name": name, "model": preset_config(name).as_dict(), "description": desc}
               for name, (desc, _) in PRESETS.items()]
    if as_json:
        click.echo(json.dumps(entries, indent=2))
        return EXIT_OK
    for e in entries:
        m = e["model"]
        model = build_model(preset_config(e["name"]))
        bounds = event_bounds_text(model)
        data = (f"records={m['max_records']}, min_isr={m['min_isr']}, consumer={str(m['consumer']).lower()}, "
                f"unclean_election={str(m['unclean_election']).lower()}")
        features = []
        for feature in model.features:
            if feature.enabled(ModelConfig()) or not feature.config_fields:
                continue  # always included (the core, the data path), or required by a switched feature
            switch, *details = feature.config_fields
            shown = ", ".join(f"{k.replace('saturation_', '')}={_text(m[k])}" for k in details
                              if k != "deletion_waits_for_response" and k not in BOUNDS)   # bounds: listed above
            features.append(f"{feature.name} ({shown})" if shown else feature.name)
        click.echo(f"{e['name']:<8} {e['description']}\n         {m['brokers']} brokers x {m['dirs']} dirs, "
                   f"{m['partitions']} partition(s), RF {m['rf']}, variant {m['variant']}; bounds: {bounds}\n"
                   f"         data: {data}" + (f"\n         features: {', '.join(features)}" if features else ""))
    if DEPRECATED_PRESETS:
        click.echo("Old names that keep working: "
                   + ", ".join(f"{old} (use {new})" for old, new in DEPRECATED_PRESETS.items()))
    return EXIT_OK


def _text(value) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


@click.command(cls=SectionedCommand)
@model_options
@plugin_option
@section("Output", click.option("--json", "as_json", is_flag=True, help="Print a JSON list."))
def rules(preset, as_json, **kwargs):
    """List every rule of the design with its feature and its KIP or Kafka-code reference (rules of features the
    configuration leaves out too: "in_configuration" says which the model includes)."""
    model = command_model(preset, model_params(kwargs))
    included = {id(r) for r in model.rules}
    features = model.design.features + tuple(plugins().features)
    by_name = {}
    for feature in features:
        for r in feature.rules:
            by_name.setdefault(r.name, (r, feature))
    for feature in model.features:
        for r in feature.replaces.values():
            by_name[r.name] = (r, feature)
    entries = [{"name": r.name, "params": list(r.params), "kind": r.kind, "fair": r.fair, "feature": feature.name,
                "in_configuration": id(r) in included, "reference": r.reference, "doc": r.doc}
               for r, feature in (by_name[name] for name in model.reported_rules)]
    if as_json:
        click.echo(json.dumps(entries, indent=2))
        return EXIT_OK
    for e in entries:
        fair = ", weakly fair" if e["fair"] else ""
        click.echo(f"{e['name']}({', '.join(e['params'])})  [{e['kind']}{fair}]\n    {e['reference']}\n    {e['doc']}\n")
    return EXIT_OK


@click.command(name="invariants")
@plugin_option
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list.")
def invariants_command(as_json):
    """List every invariant: id, kind, statement, reference, the feature that claims it (plugin invariants: none)
    and whether it is symmetric under the dir symmetry reduction."""
    loaded = plugins()
    claimed = [(i, feature) for feature, i in claimed_invariants()] + [
        (i, f.name) for f in loaded.features for i in f.invariants]
    entries = [{"id": i.id, "kind": i.kind, "statement": i.statement, "reference": i.reference, "feature": feature,
                "symmetric": i.symmetric}
               for i, feature in claimed + [(i, None) for i in loaded.invariants]]
    if as_json:
        click.echo(json.dumps(entries, indent=2))
        return EXIT_OK
    for e in entries:
        click.echo(f"{e['id']}  [{e['kind']}]\n    {e['statement']}\n    {e['reference']}\n")
    return EXIT_OK
