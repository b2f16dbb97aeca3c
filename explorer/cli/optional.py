"""The optional parts of jbodcheck and the extras that install them (pyproject.toml, the README's "Install").

The base install explores, replays, compares and renders; ``prove`` needs z3, ``fuzz`` needs Hypothesis and
``--engine spark`` needs pyspark. Each is imported only by the command that uses it, so a missing one fails
that command alone, with one line that says what to install (exit 2), and never ``--help`` or another command.
"""
from __future__ import annotations

import contextlib
import importlib

import click

# top-level module -> (the package on PyPI, the extra of jbodcheck that installs it)
EXTRAS = {
    "z3": ("z3-solver", "prove"),
    "hypothesis": ("hypothesis", "fuzz"),
    "pyspark": ("pyspark", "spark"),
}


class MissingExtra(click.ClickException):
    """An optional part that the command needs is not installed: bad input (exit 2), one line."""
    exit_code = 2


def missing_line(module: str, what: str) -> str:
    package, extra = EXTRAS[module]
    return (f"{what} needs {package}, which is not installed: pip install 'jbodcheck[{extra}]' "
            f"(or pip install {package})")


def missing_extra(error: ImportError) -> str | None:
    """The top-level optional module whose absence caused ``error``, or None for any other import error."""
    top = (getattr(error, "name", None) or "").partition(".")[0]
    return top if top in EXTRAS else None


@contextlib.contextmanager
def needs(what: str):
    """Turn the ImportError of a missing optional part into MissingExtra naming ``what`` (e.g. "jbodcheck
    fuzz"); any other ImportError is a bug and goes on as it is."""
    try:
        yield
    except ImportError as e:
        module = missing_extra(e)
        if module is None:
            raise
        raise MissingExtra(missing_line(module, what)) from None


class LazyCommand(click.Command):
    """A subcommand whose module is imported only when it runs (or shows its own --help): ``jbodcheck --help``
    lists it from ``short_help`` alone. ``target`` is "package.module:attribute"."""

    def __init__(self, name: str, target: str, short_help: str):
        super().__init__(name, short_help=short_help, help=short_help)
        self.target = target

    def load(self) -> click.Command:
        """The command. A signal while its modules load is only recorded, then raised once they are in
        (explorer/signals.py ``held``: an interrupt inside a C extension's set-up leaves a half-built object)."""
        from explorer import signals

        module, _, attribute = self.target.partition(":")
        with needs(f"jbodcheck {self.name}"), signals.held():
            return getattr(importlib.import_module(module), attribute)

    def make_context(self, info_name, args, parent=None, **extra):
        return self.load().make_context(info_name, args, parent=parent, **extra)
