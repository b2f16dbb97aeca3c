"""`--bug KAFKA-NNNNN`, a MODEL option, and `jbodcheck bugs` (docs/cli.md; docs/kraft.md, "Bug switches").

``--bug`` sets the option ``bugs`` of KRaft's core feature (model/kraft/bugs.py): its ids are added to those the
preset, the scenario file or ``--option bugs=...`` give. ``jbodcheck bugs`` lists ``BUGS`` and the known bugs the
model does not express yet (``not_expressed``), both read from model/kraft/bugs.py.
"""
from __future__ import annotations

import json

import attrs
import click

from model.kraft.bugs import BUGS, TURN_ON, affected, not_expressed

from .exits import EXIT_OK, BadInput

BUGS_OPTION = "bugs"  # the feature option --bug sets (model/kraft/rules.py)


def known_names(values, normalise, known, flag: str, what: str):
    """The names a repeatable option gave, normalised, once each, in order; BadInput naming the unknown ones (what
    --bug and --fix check)."""
    if not values:
        return None
    names = tuple(dict.fromkeys(normalise(v.strip()) for v in values))
    unknown = [n for n in names if n not in known]
    if unknown:
        raise BadInput(f"{flag} {', '.join(unknown)}: unknown {what} (known: {', '.join(known)})")
    return names


def _bug_ids(ctx, param, values):
    return known_names(values, str.upper, BUGS, "--bug", "bug switch")


def bug_option(f):
    return click.option("--bug", "bug_ids", multiple=True, metavar="KAFKA-N", callback=_bug_ids,
                        help="Re-introduce a fixed Kafka bug (repeatable; --variant kraft; `jbodcheck bugs` lists "
                             "them). The same as --option bugs=[...], and added to it.")(f)


def with_bugs(cfg, ids: tuple, features) -> object:
    """The configuration with ``ids`` added to its ``bugs`` option (after those it has: preset, scenario file,
    --option), in order, once each. BadInput when no feature of the design takes the option."""
    return with_option_ids(cfg, BUGS_OPTION, ids, features, "--bug")


def with_option_ids(cfg, name: str, ids: tuple, features, flag: str) -> object:
    """The configuration with ``ids`` added to its list option ``name`` (after those it has), in order, once
    each: what --bug and --fix do. BadInput when no feature of the design takes the option."""
    if not any(o.name == name for f in features for o in f.options):
        raise BadInput(f"{flag} applies to --variant kraft")
    options = dict(cfg.options)
    given = options.get(name, ())
    given = (given,) if isinstance(given, str) else tuple(given)
    options[name] = tuple(dict.fromkeys(given + tuple(ids)))
    return attrs.evolve(cfg, options=options)


def bug_entries() -> list[dict]:
    """Every switch of BUGS, then every known bug not expressed yet, as `jbodcheck bugs --json` prints them."""
    entries = [{"id": bug_id, "expressed": True, "broke": bug.broke, "fixed": bug.fixed,
                "scenario": f"scenarios/{bug.scenario}", "feature": bug.feature, "in_releases": affected(bug_id)}
               for bug_id, bug in BUGS.items()]
    entries += [{"id": bug_id, "expressed": False, "broke": gap.broke, "fixed": gap.fixed, "why": gap.why}
                for bug_id, gap in not_expressed().items()]
    return entries


@click.command(name="bugs")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list.")
def bugs_command(as_json):
    """List the fixed Kafka bugs that `--bug KAFKA-N` re-introduces in KRaft mode (what each broke, the first
    fixed version, its scenario file, the releases of --kafka that have it without --bug), then the known ones the
    model does not express yet, and why."""
    entries = bug_entries()
    if as_json:
        click.echo(json.dumps(entries, indent=2))
        return EXIT_OK
    for e in entries:
        if e["expressed"]:
            click.echo(f"{e['id']}  [--bug {e['id']}; fixed in {e['fixed']}]\n    {e['broke']}\n"
                       f"    scenario: {e['scenario']}\n    on without --bug with --kafka: {e['in_releases']}")
            if e["feature"]:
                click.echo(f"    needs the feature {e['feature']}: {TURN_ON[e['feature']]}")
            click.echo()
    missing = [e for e in entries if not e["expressed"]]
    if missing:
        click.echo("Not expressed yet:\n")
        for e in missing:
            click.echo(f"{e['id']}  [fixed in {e['fixed']}]\n    {e['broke']}\n    why not: {e['why']}\n")
    return EXIT_OK
