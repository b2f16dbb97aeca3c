"""`jbodcheck view REPORT.json --html PATH`: a saved JSON report as a self-contained HTML page."""
from __future__ import annotations

import click

from model import ConfigError

from explorer.catalog import build_model
from explorer.errors import one_line
from explorer.outputs import write_text

from .exits import EXIT_OK, BadInput
from .model_value import model_config
from .options import plugin_option, plugins
from .outputs import checked_distinct, checked_writable


@click.command()
@click.argument("report_path", metavar="REPORT.json")
@click.option("--html", "html_path", required=True, metavar="PATH",
              help="Write the report as a self-contained HTML page (as --html of explore, replay and fuzz).")
@plugin_option
def view(report_path, html_path):
    """Render a saved JSON report (--json) as a self-contained HTML page."""
    from explorer.reports.html import load_report, page, references

    checked_writable(html_path, "the HTML page", dash_is_stdout=False)
    checked_distinct({"--html": html_path}, {"the report": report_path})
    try:
        report = load_report(report_path)
    except ValueError as e:
        raise BadInput(str(e)) from None
    # The report has no references: rebuild its model for the rules' and invariants' (any parameter it cannot
    # take, e.g. a plugin's option without --plugin, leaves the references out).
    params = dict(report.get("model") or {})
    preset = params.pop("preset", None)
    try:
        refs = references(build_model(model_config(preset, {}, base=params), preset=preset, plugins=plugins()))
    except (click.ClickException, ConfigError, KeyError, TypeError, ValueError) as e:
        click.echo(f"jbodcheck: warning: the report's model cannot be rebuilt ({one_line(e)}): "
                   f"the page has no rule references", err=True)
        refs = {}
    write_text(html_path, page(report, refs), "the HTML page")
    return EXIT_OK
