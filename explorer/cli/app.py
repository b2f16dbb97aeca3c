"""The `jbodcheck` command group and ``main`` (docs/cli.md; the README's "Interface" section).

click parses the options. Exit codes (``main``): 0 no violation (exhaustive or bounded), 1 a property
violated, 2 bad input, 3 the checker itself failed (an exception in a plugin invariant, a dead worker, an
output that could not be written, Spark failing, any unexpected exception), 128 + N when signal N
interrupted the search. Every error is one line on stderr, never a traceback.

Every command is a LazyCommand (explorer/cli/optional.py): its module, and the model behind it, is imported only
when it runs or shows its own --help; ``jbodcheck --help`` and ``--version`` import neither.
"""
from __future__ import annotations

import sys

import click

from explorer import __version__
from explorer.errors import JbodcheckFailure, one_line

from .exits import EXIT_BAD_INPUT, EXIT_FAILURE, EXIT_OK, os_error_line, worker_error_line
from .optional import LazyCommand
from . import thread_errors
from .stdout import EXIT_STDOUT_CLOSED, ClosedPipeGroup, StdoutClosed, silence_stdout, stdout_is_closed


@click.group(cls=ClosedPipeGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@click.version_option(version=__version__, prog_name="jbodcheck")  # this source tree's, not an installed one's
def cli():
    """jbodcheck: a model checker for Apache Kafka's JBOD disk-failure protocols (KIP-112 and friends)."""


# (name, "module:attribute", the short help `jbodcheck --help` shows: the command's own first sentence)
COMMANDS = (
    ("explore", "explorer.cli.explore:explore", "Search the model's state space for invariant violations."),
    ("replay", "explorer.cli.replay:replay_command",
     "Replay a scenario file step by step, checking every invariant after each step."),
    ("view", "explorer.cli.view:view", "Render a saved JSON report (--json) as a self-contained HTML page."),
    ("presets", "explorer.cli.listing:presets", "List the named configurations."),
    ("rules", "explorer.cli.listing:rules",
     "List every rule of the design with its feature and its KIP or Kafka-code reference."),
    ("invariants", "explorer.cli.listing:invariants_command",
     "List every invariant: id, kind, statement, reference, the feature that claims it."),
    ("fuzz", "explorer.cli.fuzz:fuzz",
     "Hypothesis stateful testing of the model: random runs, shrunk to a short counterexample."),
    ("compare", "explorer.cli.compare:compare_command",
     "Run every design on the same presets and compare which invariants each breaks."),
    ("bugs", "explorer.cli.bugs:bugs_command",
     "List the fixed Kafka bugs that `--bug KAFKA-N` re-introduces in KRaft mode."),
    ("kafka", "explorer.cli.kafka:kafka_group", "Real Kafka releases for the real-cluster harness (docs/realkafka.md)."),
    ("fixes", "explorer.cli.fixes:fixes_command",
     "List the candidate fixes of the KRaft findings that `--fix NAME` applies."),
    # z3 is imported only when it runs (explorer/cli/optional.py)
    ("prove", "explorer.cli.prove:prove_command",
     "Prove KIP-112's properties for every number of brokers, dirs and partitions (z3)."),
    ("reproduce", "explorer.cli.reproduce:reproduce_command",
     "Run a KRaft scenario on a real Kafka cluster of that release and compare it with the model, step by step."),
    ("conform", "explorer.cli.conform:conform_command",
     "Drive traces generated from the model on real Kafka clusters and judge each by the model."),
    ("serve", "explorer.serve.command:serve_command",
     "Walk the model by hand in a browser."),
)
for name, target, short_help in COMMANDS:
    cli.add_command(LazyCommand(name, target, short_help))


def loaded_commands():
    """(full name, command) for every command, loaded, a group's subcommands after it (the generated CLI
    reference, explorer/reference/cli.py; the help tests)."""
    for name, _target, _short in COMMANDS:
        command = cli.commands[name].load()
        yield name, command
        if isinstance(command, click.Group):
            for sub in sorted(command.commands):
                yield f"{name} {sub}", command.commands[sub]


def command_context(name: str, command: click.Command) -> click.Context:
    """A context for ``command`` under `jbodcheck`, as its --help has (without running it)."""
    parent = click.Context(cli, info_name="jbodcheck", **cli.context_settings)
    return click.Context(command, info_name=name, parent=parent)


def _stdout_closed() -> int:
    """The standard output's reader went away (explorer/cli/stdout.py): no more output, exit 141."""
    silence_stdout()
    return EXIT_STDOUT_CLOSED


def main(argv=None) -> None:
    """Run the CLI and map every outcome to its exit code (module docstring), with one line on stderr for
    every error."""
    from explorer import signals

    installed = signals.install()   # explorer/cli/entry.py did, before the imports; a caller of main() may not
    thread_errors.watch()
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
    except OSError as e:
        # the system refused something (a full disk, a file gone): its cause and path, not Python's "[Errno N]"
        click.echo(f"jbodcheck: failure: {os_error_line(e)}", err=True)
        code = EXIT_FAILURE
    except Exception as e:  # noqa: BLE001 - a bug in jbodcheck: one line, never a traceback
        # a BFS worker that died (explorer/parallel.py, loaded only by a search that raised it)
        parallel = sys.modules.get("explorer.parallel")
        if parallel is not None and isinstance(e, parallel.WorkerError):
            click.echo(f"jbodcheck: failure: {worker_error_line(e)}", err=True)
        else:
            click.echo(f"jbodcheck: internal error: {one_line(e)}", err=True)
        code = EXIT_FAILURE
    code = signals.exit_code(code if isinstance(code, int) else EXIT_OK)
    failed_thread = thread_errors.finish()
    if failed_thread is not None and code in (EXIT_OK, 1):   # (a 2, a 3 or a signal's code has its own line)
        click.echo(f"jbodcheck: failure: {failed_thread}", err=True)
        code = EXIT_FAILURE
    if installed:
        signals.uninstall()
    sys.exit(code)
