"""Options listed in sections by --help (issue 49: a help a person can scan): an option declared inside
``section(TITLE, ...)`` is shown under TITLE by a ``SectionedCommand``, with click's own help formatter
(``HelpFormatter.section``), in the order the sections first appear; the others under "Other options"."""
from __future__ import annotations

import click

OTHER = "Other options"
_ATTRIBUTE = "jbodcheck_section"


def _params(f) -> list:
    """The parameters click's decorators have collected so far on ``f`` (a function or a command)."""
    if isinstance(f, click.Command):
        return f.params
    return getattr(f, "__click_params__", [])


def section(title: str, *decorators):
    """Apply click option decorators, written in the order they are listed (as if stacked above the function),
    and file the options they add under ``title``."""
    def apply(f):
        for decorator in reversed(decorators):
            before = {id(p) for p in _params(f)}
            f = decorator(f)
            added = [p for p in _params(f) if id(p) not in before]
            if not added:
                raise TypeError(f"section {title!r}: {decorator!r} added no click parameter")
            for param in added:
                setattr(param, _ATTRIBUTE, title)
        return f
    return apply


def section_of(param: click.Parameter) -> str:
    return getattr(param, _ATTRIBUTE, OTHER)


def sections_of(command: click.Command, ctx: click.Context) -> list[tuple[str, list[tuple[str, str]]]]:
    """(title, help rows) of the command's options, the sections in the order they first appear, "Other options"
    (which holds -h/--help) last."""
    out: dict[str, list] = {}
    for param in command.get_params(ctx):
        if not isinstance(param, click.Option):
            continue        # (click 8.5 gives an argument a help record too: arguments are in the usage line)
        row = param.get_help_record(ctx)
        if row is not None:
            out.setdefault(section_of(param), []).append(row)
    other = out.pop(OTHER, None)
    return list(out.items()) + ([(OTHER if out else "Options", other)] if other else [])


class SectionedCommand(click.Command):
    """A command whose --help lists its options in their sections."""

    def format_options(self, ctx, formatter) -> None:
        for title, rows in sections_of(self, ctx):
            with formatter.section(title):
                formatter.write_dl(rows)
