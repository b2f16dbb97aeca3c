"""`jbodcheck serve [MODEL options] [--plugin MODULE] [--host H] [--port N] [--open]` (docs/cli.md, "serve")."""
from __future__ import annotations

import webbrowser

import click

from ..cli.exits import BadInput
from ..cli.model_value import checked_model, model_config
from ..cli.options import model_options, model_params, plugin_option, plugins
from ..cli.sections import SectionedCommand, section
from ..signals import INTERRUPTS, interrupt_signal
from .server import App, Server, loopback_refusal
from .walk import Walker


@click.command(name="serve", cls=SectionedCommand)
@model_options
@plugin_option
@section(
    "Server",
    click.option("--host", default="127.0.0.1", show_default=True, metavar="HOST",
                 help="The loopback address to listen on (127.x.y.z, ::1 or localhost: the page has no "
                      "authentication)."),
    click.option("--port", type=click.IntRange(min=0, max=65535), default=0, metavar="N",
                 help="The port to listen on [default: a free one, printed]."),
    click.option("--open", "open_browser", is_flag=True, help="Open the page in the default browser."),
)
def serve_command(preset, host, port, open_browser, **kwargs):
    """Walk the model by hand in a browser: the state, every rule enabled or why not, the invariants; the path
    is the URL and saves as a scenario file. Runs until Ctrl-C (exit 130)."""
    refused = loopback_refusal(host)
    if refused:
        raise BadInput(refused)
    cfg = model_config(preset, model_params(kwargs))
    model = checked_model(preset, cfg)
    extra_presets = {name: p for f in plugins().features for name, p in f.presets.items()}
    try:
        server = Server(host, port, App(Walker(model), preset, extra_presets))
    except OSError as e:
        raise BadInput(f"cannot listen on {host}:{port}: {e.strerror or e}") from None
    except OverflowError as e:
        raise BadInput(f"cannot listen on {host}:{port}: {e}") from None
    try:
        click.echo(f"jbodcheck serve: {server.url} ({model.cfg.variant}, {preset or 'custom'} model; Ctrl-C stops)")
        if open_browser:
            webbrowser.open(server.url)
        server.serve_forever()
    except INTERRUPTS as e:
        sig = interrupt_signal(e)
        click.echo(f"jbodcheck serve: stopped by signal {sig}", err=True)
        return 128 + sig
    finally:
        server.server_close()
    return 0
