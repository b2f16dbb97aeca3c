"""The engine registry (explorer/engines.py): every engine is chosen, asked what it takes and read through it,
and no other module compares an engine's name."""
from __future__ import annotations

import re

import pytest

from explorer.catalog import build_model, preset_config
from explorer.cli.app import command_context
from explorer.engines import ENGINES, default_engine, engine_named, liveness_engine, selectable
from explorer.reports.bounds import search_limits, search_text
from explorer.search import SearchOptions, bfs

from support.helpers import REPO

# `engine == "bfs"`, `result.engine != 'liveness'`, `engine in ("bfs", ...)`: a name compared as a string.
NAME_COMPARED = re.compile(r"""engine\w*\s*(==|!=|\bin\b|\bnot in\b)\s*[("'\[]""")


def name_comparisons(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if NAME_COMPARED.search(line.split("#")[0])]


def test_no_module_but_the_registry_compares_an_engine_name():
    found = {}
    for folder in ("explorer", "spark_explore", "proofs", "realkafka", "model", "invariants"):
        for path in (REPO / folder).rglob("*.py"):
            if path != REPO / "explorer" / "engines.py" and (lines := name_comparisons(path.read_text())):
                found[str(path.relative_to(REPO))] = lines
    assert found == {}


def test_the_name_check_sees_a_comparison():
    assert name_comparisons('    if engine != "bfs":\n    x = result.engine == \'liveness\'  # no\n') == [
        'if engine != "bfs":', "x = result.engine == 'liveness'  # no"]
    assert name_comparisons("    if engine.accepts('--workers'):\n") == []


def test_explore_offers_the_selectable_engines_with_their_help():
    from explorer.cli.explore import explore

    option = next(p for p in explore.params if p.name == "engine_name")
    assert list(option.type.choices) == [e.name for e in selectable()] == ["bfs", "dfs", "random", "spark"]
    assert option.default == default_engine().name
    help_text = option.get_help_record(command_context("explore", explore))[1]
    assert all(f"{e.name}: {e.help}" in " ".join(help_text.split()) for e in selectable())


def test_each_engine_says_which_options_it_takes():
    assert engine_named("dfs").refusal("--checkpoint", "--checkpoint and --resume") == \
        "--checkpoint and --resume apply to --engine bfs only (not dfs)"
    assert engine_named("spark").refusal("--max-memory").startswith(
        "--max-memory applies to --engine bfs, dfs and random only (not spark); for Spark set --spark-conf")
    assert [e.name for e in selectable() if e.accepts("--master")] == ["spark"]
    assert not liveness_engine().accepts("--max-depth") and liveness_engine().checks == "liveness"


def test_an_engine_its_command_runs_is_not_run_through_the_registry():
    with pytest.raises(ValueError, match="run by its own command"):
        engine_named("hypothesis").run(None, [], SearchOptions())


def test_the_registry_runs_an_engine_as_its_module_does():
    model = build_model(preset_config("tiny"))
    options = dict(max_states=300, workers=1)
    through = engine_named("bfs").run(model, list(model.invariants), SearchOptions(**options))
    direct = bfs(model, list(model.invariants), SearchOptions(**options))
    assert (through.engine, through.result, through.distinct_states, through.states_generated, through.depth,
            dict(through.coverage)) == (direct.engine, direct.result, direct.distinct_states,
                                        direct.states_generated, direct.depth, dict(direct.coverage))


def test_a_verdict_reads_as_its_engine_declares():
    model = build_model(preset_config("tiny"))
    options = SearchOptions(max_depth=4, walks=3, seed=7)
    result = engine_named("random").run(model, list(model.invariants), options)
    result.limits = search_limits(options, engine_named("random"))
    assert set(result.limits) == set(engine_named("random").limits)
    assert search_text(model, result) == ("3 random walk(s) of up to 4 steps, seed 7, not exhaustive", False)
    assert {e.name for e in ENGINES.values() if e.exhaustive} == {"bfs", "dfs", "spark", "liveness"}


def test_every_engine_a_result_names_is_registered():
    """The names the engines' modules give their results (SearchResult.engine) are the registry's."""
    given = set()
    for path in [*(REPO / "explorer").glob("*.py"), *(REPO / "spark_explore").glob("*.py")]:
        given |= set(re.findall(r"""(?:engine=|Run\([^)]*, )["'](\w+)["']""", path.read_text()))
        given |= set(re.findall(r"""^ENGINE = ["'](\w+)["']""", path.read_text(), re.M))
    assert given >= {"bfs", "dfs", "random", "liveness", "hypothesis", "spark"}
    assert given <= set(ENGINES), given - set(ENGINES)
