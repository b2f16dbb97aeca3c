"""docs/reference/cli.md, generated from the command line's click definitions (explorer/cli/app.py ``COMMANDS``):
every command's usage, description and options, in the sections its --help shows, and the built-in features'
options that ``--option NAME=VALUE`` sets."""
from __future__ import annotations

import click

from explorer.catalog import features
from explorer.cli.app import command_context, loaded_commands
from explorer.cli.options import MODEL_SECTIONS
from explorer.cli.sections import sections_of

from .rules import GENERATED, _one_line


def _cell(text: str) -> str:
    return _one_line(text).replace("|", "\\|")


def _table(title: str, rows) -> list[str]:
    return [f"**{title}**", "", "| option | what it does |", "|---|---|",
            *(f"| `{_cell(option)}` | {_cell(text)} |" for option, text in rows), ""]


def _shared_sections() -> dict[str, list]:
    """The MODEL options' sections (explorer/cli/options.py), as `explore` shows them."""
    from explorer.cli.explore import explore as command

    return {title: rows for title, rows in sections_of(command, command_context("explore", command))
            if title in MODEL_SECTIONS}


def _command_lines(name: str, command: click.Command, shared: dict) -> list[str]:
    ctx = command_context(name, command)
    usage = " ".join(command.collect_usage_pieces(ctx))
    lines = [f"## jbodcheck {name}", "", "```", f"jbodcheck {name} {usage}".rstrip(), "```", "",
             _one_line(command.help or command.short_help or ""), ""]
    if isinstance(command, click.Group):
        lines += ["Subcommands: " + ", ".join(f"`{name} {sub}`" for sub in sorted(command.commands)) + ".", ""]
    arguments = [p for p in command.get_params(ctx) if isinstance(p, click.Argument)]
    if arguments:
        lines += ["Arguments: " + ", ".join(f"`{a.make_metavar(ctx)}`" for a in arguments) + ".", ""]
    sections = [(title, [(o, t) for o, t in rows if o != "-h, --help"]) for title, rows in sections_of(command, ctx)]
    same = [title for title, rows in sections if shared.get(title) == rows]
    if same:
        lines += [f"The [MODEL options](#model-options): {', '.join(same)}.", ""]
    for title, rows in sections:
        if rows and title not in same:
            lines += _table(title, rows)
    return lines


def options_table() -> list[str]:
    """The built-in features' options (model/spec/feature.py ``Option``), for ``--option NAME=VALUE``."""
    lines = ["| NAME | feature | default | what it sets |", "|---|---|---|---|"]
    for feature in features():
        for option in feature.options:
            default = "the release's" if option.default is None else repr(option.default)
            lines.append(f"| `{option.name}` | {feature.name} | `{_cell(default)}` | {_cell(option.help)} |")
    return lines


def cli_markdown() -> str:
    out = [GENERATED, "", "# The command line: every command and option", "",
           "What each command's `--help` says, in its sections. The guide to the commands, their results, exit codes "
           "and outputs is [cli.md](../cli.md); `python -m explorer ...` is the same as `jbodcheck ...`, and every "
           "command takes `-h/--help`.", ""]
    shared = _shared_sections()
    out += ["## MODEL options", "",
            "The commands that build a model (explore, replay, fuzz, rules, serve, and prove but its own --variant "
            "and --preset) take these: a preset fills them, an explicit option overrides the preset "
            "([cli.md](../cli.md#model-options)).", ""]
    for title, rows in shared.items():
        out += _table(title, rows)
    for name, command in loaded_commands():
        out += _command_lines(name, command, shared)
    out += ["## Built-in options of `--option NAME=VALUE`", "",
            "The MODEL options' `--option NAME=VALUE` sets an option of a feature (VALUE in JSON, else text; "
            "repeatable). The built-in features bring these (a plugin's feature brings its own, "
            "[extending.md](../extending.md)); `--kafka`, `--bug` and `--fix` set `kafka`, `bugs` and "
            "`candidate_fixes` too.", ""]
    out += options_table()
    return "\n".join(out).rstrip() + "\n"
