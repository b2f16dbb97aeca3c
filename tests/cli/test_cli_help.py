"""`--help` a person can scan (issue 49): the options in sections, `--option` naming the built-in options it
takes, the same metavar for the same kind of value on every command."""
from __future__ import annotations

import re

import click
import pytest

from explorer.catalog import features
from explorer.cli.sections import OTHER, section, section_of
from explorer.cli.app import command_context, loaded_commands

from support.helpers import in_process


def _explore():
    return next(command for name, command in loaded_commands() if name == "explore")


def test_explore_help_shows_its_options_in_sections(capsys):
    code, out, _ = in_process(capsys, "explore", "--help")
    assert code == 0
    headings = re.findall(r"^(\S[^:\n]*):$", out, re.M)
    assert headings == ["Model", "Cluster", "Bounds", "Features", "KRaft mode", "Plugins and feature options",
                        "Search", "Liveness", "Outputs", "Checkpoints (BFS)", "Spark engine (--engine spark)",
                        "Other options"]
    assert out.index("--max-dir-failures N") < out.index("--saturation / --no-saturation") < out.index("--engine")


def test_every_option_of_the_commands_that_build_a_model_is_in_a_section():
    for name, command in loaded_commands():
        if name in ("explore", "replay", "fuzz", "rules", "serve", "prove"):
            loose = [p.opts for p in command.params if isinstance(p, click.Option) and section_of(p) == OTHER
                     and p.name != "help"]
            assert not loose, (name, loose)


def test_option_help_names_every_built_in_option():
    option = next(p for p in _explore().params if p.name == "options")
    builtin = [o.name for f in features() for o in f.options]
    assert {"elr", "dir_symmetry", "mv_upgrade"} <= set(builtin)
    assert all(re.search(rf"\b{name}\b", option.help) for name in builtin), option.help


def test_the_same_option_has_the_same_metavar_on_every_command():
    """click's type names (INTEGER, TEXT, ...) say nothing of the value: every option names what it takes, and
    an option of several commands (--seed, --json, --preset, ...) names it the same way on each."""
    generic = re.compile(r"\b(INTEGER|TEXT|FLOAT|BOOLEAN|FILENAME|DIRECTORY|FILE|RANGE)\b")
    metavars: dict[str, set] = {}
    for name, command in loaded_commands():
        ctx = command_context(name, command)
        for param in command.get_params(ctx):
            record = param.get_help_record(ctx) if isinstance(param, click.Option) else None
            if record is None:
                continue
            assert not generic.search(record[0]), (name, record[0])
            if not param.is_flag:
                metavars.setdefault(param.opts[-1], set()).add(record[0].rsplit(" ", 1)[-1])
    assert {"--seed", "--json", "--preset", "--max-depth"} <= set(metavars)
    # --kafka takes other values: the model follows a line or a release (X.Y[.Z]), reproduce and conform start
    # a release (VERSION, as `kafka fetch VERSION`).
    # --resume resumes what its command writes: explore a checkpoint (PATH), conform a campaign's report
    # (REPORT.json).
    assert {opt: m for opt, m in metavars.items() if len(m) > 1} == {"--kafka": {"X.Y[.Z]", "VERSION"},
                                                                     "--resume": {"PATH", "REPORT.json"}}


def test_a_section_refuses_a_decorator_that_adds_no_option():
    with pytest.raises(TypeError, match="added no click parameter"):
        section("Nothing", lambda f: f)(lambda: None)
