"""The `jbodcheck` command group and ``main`` (docs/cli.md; the README's "Interface" section).

click parses the options. Exit codes (``main``): 0 no violation (exhaustive or bounded), 1 a property
violated, 2 bad input, 3 the checker itself failed (an exception in a plugin invariant, a dead worker, an
output that could not be written, Spark failing, any unexpected exception), 128 + N when signal N
interrupted the search. Every error is one line on stderr, never a traceback.
"""
from __future__ import annotations

import sys

import click

from explorer import __version__
from explorer.errors import JbodcheckFailure, one_line

from .bugs import bugs_command
from .compare import compare_command
from .exits import EXIT_BAD_INPUT, EXIT_FAILURE, EXIT_OK, worker_error_line
from .explore import explore
from .fixes import fixes_command
from .fuzz import fuzz
from .kafka import kafka_group
from .listing import invariants_command, presets, rules
from .optional import LazyCommand
from .replay import replay_command
from .stdout import EXIT_STDOUT_CLOSED, ClosedPipeGroup, StdoutClosed, silence_stdout, stdout_is_closed
from .view import view


@click.group(cls=ClosedPipeGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@click.version_option(version=__version__, prog_name="jbodcheck")  # this source tree's, not an installed one's
def cli():
    """jbodcheck: a model checker for Apache Kafka's JBOD disk-failure protocols (KIP-112 and friends)."""


for command in (explore, replay_command, view, presets, rules, invariants_command, fuzz, compare_command, bugs_command,
                kafka_group, fixes_command):
    cli.add_command(command)
# jbodcheck prove (docs/proofs.md): z3 is imported only when it runs (explorer/cli/optional.py).
cli.add_command(LazyCommand("prove", "explorer.cli.prove:prove_command",
                            "Prove KIP-112's properties for every number of brokers, dirs and partitions (z3)."))
# jbodcheck reproduce (realkafka/): a KRaft scenario on a real Kafka cluster; imported only when it runs.
cli.add_command(LazyCommand("reproduce", "explorer.cli.reproduce:reproduce_command",
                            "Run a KRaft scenario on a real Kafka cluster of a release, beside the model."))
# jbodcheck serve (explorer/serve/): walk the model by hand in a browser; imported only when it runs.
cli.add_command(LazyCommand("serve", "explorer.serve.command:serve_command",
                            "Walk the model by hand in a browser: click actions, go back, fork, save the path."))


def _stdout_closed() -> int:
    """The standard output's reader went away (explorer/cli/stdout.py): no more output, exit 141."""
    silence_stdout()
    return EXIT_STDOUT_CLOSED


def main(argv=None) -> None:
    """Run the CLI and map every outcome to its exit code (module docstring), with one line on stderr for
    every error."""
    from explorer import signals
    from explorer.parallel import WorkerError

    installed = signals.install()   # explorer/cli/entry.py did, before the imports; a caller of main() may not
    try:
        signals.test_point("startup")
        code = cli.main(args=argv, prog_name="jbodcheck", standalone_mode=False)
        sys.stdout.flush()
    except click.exceptions.Exit as e:
        code = e.exit_code
    except StdoutClosed:
        code = _stdout_closed()
    except BrokenPipeError as e:        # the flush above
        if stdout_is_closed():
            code = _stdout_closed()
        else:
            click.echo(f"jbodcheck: internal error: {one_line(e)}", err=True)
            code = EXIT_FAILURE
    except (click.exceptions.Abort, *signals.INTERRUPTS):
        # click turns Ctrl-C into Abort; 128 + the signal is the shell's code for an interrupted command.
        sig = signals.received() or 2
        click.echo(f"jbodcheck: interrupted by signal {sig} before a result could be reported", err=True)
        code = 128 + sig
    except click.ClickException as e:
        click.echo(f"jbodcheck: error: {' '.join(e.format_message().split())}", err=True)
        code = EXIT_BAD_INPUT
    except JbodcheckFailure as e:
        click.echo(f"jbodcheck: failure: {' '.join(str(e).split())}", err=True)
        code = EXIT_FAILURE
    except WorkerError as e:
        click.echo(f"jbodcheck: failure: {worker_error_line(e)}", err=True)
        code = EXIT_FAILURE
    except Exception as e:  # noqa: BLE001 - a bug in jbodcheck: one line, never a traceback
        click.echo(f"jbodcheck: internal error: {one_line(e)}", err=True)
        code = EXIT_FAILURE
    code = signals.exit_code(code if isinstance(code, int) else EXIT_OK)
    if installed:
        signals.uninstall()
    sys.exit(code)
