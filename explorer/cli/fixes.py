"""`--fix NAME`, a MODEL option, and `jbodcheck fixes` (docs/cli.md; docs/fixes.md).

``--fix`` sets the option ``candidate_fixes`` of KRaft's core feature (model/kraft/fixes.py), as ``--bug`` sets
``bugs``: its names are added to those the preset, the scenario file or ``--option candidate_fixes=...`` give.
``jbodcheck fixes`` lists the catalogue ``FIXES``.
"""
from __future__ import annotations

import json
import textwrap

import click

from model.kraft.fixes import FIXES, FIXES_OPTION, TURN_ON

from .bugs import known_names, with_option_ids
from .exits import EXIT_OK


def _fix_names(ctx, param, values):
    return known_names(values, str.lower, FIXES, "--fix", "fix")


def fix_option(f):
    return click.option("--fix", "fix_names", multiple=True, metavar="NAME", callback=_fix_names,
                        help="Apply a candidate fix of a KRaft finding (repeatable; --variant kraft; `jbodcheck "
                             "fixes` lists them). The same as --option candidate_fixes=[...], and added to it.")(f)


def with_fixes(cfg, names: tuple, features) -> object:
    """The configuration with ``names`` added to its ``candidate_fixes`` option, in order, once each."""
    return with_option_ids(cfg, FIXES_OPTION, names, features, "--fix")


def fix_entries() -> list[dict]:
    """Every fix of FIXES, as `jbodcheck fixes --json` prints them."""
    return [{"name": name, "findings": list(fix.findings), "where": fix.where, "change": fix.change,
             "release": fix.release, "feature": fix.feature, "competes": fix.competes}
            for name, fix in FIXES.items()]


@click.command(name="fixes")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list.")
def fixes_command(as_json):
    """List the candidate fixes of the KRaft findings that `--fix NAME` applies (the findings each targets, the
    Kafka code it changes and how, the release it is written against, the feature it needs); docs/fixes.md has
    what each was checked on."""
    entries = fix_entries()
    if as_json:
        click.echo(json.dumps(entries, indent=2))
        return EXIT_OK
    for e in entries:
        findings = ", ".join(str(n) for n in e["findings"])
        click.echo(f"{e['name']}  [--fix {e['name']}; finding {findings}; against {e['release']}]")
        click.echo(f"    changes: {e['where']}")
        click.echo(textwrap.fill(e["change"], 110, initial_indent="    ", subsequent_indent="    "))
        if e["feature"]:
            click.echo(f"    needs the feature {e['feature']}: {TURN_ON[e['feature']]}")
        if e["competes"]:
            click.echo(f"    an alternative to: {e['competes']}")
        click.echo()
    return EXIT_OK
