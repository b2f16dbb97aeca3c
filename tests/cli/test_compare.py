"""`jbodcheck compare` (explorer/cli/compare.py): every design on the tiny preset regenerates the table in
docs/designs.md exactly, and every violated cell's scenario file replays to the same violation.

The whole comparison takes about eight minutes on 2 cores (the KIP-928 row alone about six), more than the
suite's budget: the ci profile regenerates the rows of the designs that exhaust tiny in seconds (pre-KIP-112,
KIP-112 without the isNewReplica check, KIP-18, KIP-46, KIP-112) and checks them, and their scenarios, against
both tables in docs/designs.md (what each design costs, every invariant); the thorough
profile (JBODCHECK_PROFILE=thorough, docs/testing.md) runs `jbodcheck compare` itself on every row."""
from __future__ import annotations

import json

import pytest

from explorer.cli import main
from explorer.cli.compare import CONFIGS, ROWS, ZK_KRAFT, config_of, configuration, generated_block, model_of, rows
from explorer.scenario import load_scenario, replay
from model import VARIANTS

from explorer.cli.compare import markdown, run_cell
from support.helpers import REPO
from support.profiles import THOROUGH

DOC = REPO / "docs" / "designs.md"


def test_every_variant_is_a_row():
    keys = {r.params.get("variant") for r in rows()}
    assert set(VARIANTS) <= keys
    assert [r.key for r in rows()][:2] == ["pre-kip112", "kip112-no-isnew-check"]
    assert ROWS[-1].params.get("saturation") is True


def test_an_unknown_preset_is_bad_input(capsys):
    with pytest.raises(SystemExit) as e:
        main(["compare", "--configs", "tiny,nope", "-q"])
    assert e.value.code == 2
    assert "nope" in capsys.readouterr().err


@pytest.mark.parametrize("config", ["kraft-tiny", "kraft-heartbeat"])
def test_a_kraft_preset_is_refused_with_the_configuration_that_compares_kraft(capsys, config):
    """compare runs every ZooKeeper design on a preset: on a KRaft preset it ran no KRaft at all under the heading
    "Preset kraft-tiny" (issue 41, item 6)."""
    with pytest.raises(SystemExit) as e:
        main(["compare", "--configs", f"tiny,{config}", "-q"])
    err = capsys.readouterr().err
    assert e.value.code == 2 and len(err.strip().splitlines()) == 1
    assert config in err and "KRaft" in err and "tiny-kraft" in err


CHEAP_ROWS = ("pre-kip112", "kip112-no-isnew-check", "kip18", "kip46", "kip112")


def _doc_section(config: str) -> str:
    """The generated block's section of a configuration (from its heading to the next one)."""
    heading = markdown({"configurations": [config], "designs": [], "cells": {config: {}}}, "").splitlines()[0]
    block = generated_block(DOC.read_text())
    assert heading in block, f"docs/designs.md has no section {heading!r}: regenerate it"
    section = block[block.index(heading):]
    following = section.find("\n### ", 1)
    return (section if following < 0 else section[:following]).strip()


def _doc_rows(config: str = "tiny") -> list[dict]:
    """Each generated table's lines (what each design costs, every invariant) of a configuration, by row label."""
    tables: list[dict] = []
    for line in _doc_section(config).splitlines():
        if line.startswith("| design |"):
            tables.append({})
        elif line.startswith("| "):
            tables[-1][line.split(" | ")[0].lstrip("| ").strip()] = line
    return tables


@pytest.fixture(scope="module")
def cheap_cells(tmp_path_factory):
    out = tmp_path_factory.mktemp("compare-cheap")
    by_key = {r.key: r for r in rows()}
    cells = {key: run_cell("tiny", by_key[key], 1, str(out / "designs-scenarios")) for key in CHEAP_ROWS}
    return out, cells


@pytest.mark.long_run
def test_compare_regenerates_the_rows_of_the_quick_designs_in_the_docs(cheap_cells):
    out, cells = cheap_cells
    doc = _doc_section("tiny")
    header = [line for line in doc.splitlines() if line.startswith("| design |")][-1]
    columns = [c.strip().strip("`") for c in header.strip("| ").split(" | ")[1:]]
    # A report that lists the doc's columns first, so the regenerated rows have the doc's column order.
    order = {"invariants": columns, "violations": [], "result": "ok", "distinct_states": 0}
    data = {"configurations": ["tiny"],
            "designs": [{"key": "_columns", "label": "_columns"}] + [{"key": r.key, "label": r.label} for r in rows()],
            "cells": {"tiny": {"_columns": order, **cells}}}
    regenerated: list[list[str]] = []
    for line in markdown(data, "designs-scenarios").splitlines():
        if line.startswith("| design |"):
            regenerated.append([])
        elif line.startswith("| ") and not line.startswith("| _columns"):
            regenerated[-1].append(line)
    labels = {r.key: r.label for r in rows()}
    expected = _doc_rows()
    assert len(regenerated) == len(expected) == 2
    for table, doc_table in zip(regenerated, expected):
        assert len(table) == len(CHEAP_ROWS)
        for key, line in zip(CHEAP_ROWS, table):
            assert line == doc_table[labels[key]], f"docs/designs.md's row for {key} is out of date: regenerate it"


@pytest.mark.long_run
def test_every_violated_cell_of_the_quick_designs_replays(cheap_cells):
    out, cells = cheap_cells
    _replay_cells(out, {"tiny": cells})


@pytest.fixture(scope="module")
def zk_kraft_cells(tmp_path_factory):
    out = tmp_path_factory.mktemp("compare-kraft")
    cells = {row.key: run_cell(ZK_KRAFT.name, row, 1, str(out / "designs-scenarios")) for row in ZK_KRAFT.rows}
    return out, cells


@pytest.mark.long_run
def test_compare_regenerates_the_zookeeper_kraft_section_in_the_docs(zk_kraft_cells):
    """KIP-112 and KIP-858 side by side (tiny-kraft): the section, its tables and notes, exactly as generated."""
    out, cells = zk_kraft_cells
    data = {"configurations": [ZK_KRAFT.name], "designs": [{"key": r.key, "label": r.label} for r in ZK_KRAFT.rows],
            "cells": {ZK_KRAFT.name: cells}}
    assert markdown(data, "designs-scenarios").strip() == _doc_section(ZK_KRAFT.name), (
        "docs/designs.md's ZooKeeper/KRaft section is out of date: regenerate it")
    # Where one refuses and the other creates: each breaks the property the other keeps.
    kip112, kip858 = (cells[r.key] for r in ZK_KRAFT.rows)
    assert [v["invariant"] for v in kip112["violations"]] == ["refusal_only_for_a_lost_copy"]
    assert [v["invariant"] for v in kip858["violations"]] == ["no_recreate_over_offline_copy"]
    assert model_of(ZK_KRAFT.name, ZK_KRAFT.rows[1]).cfg.variant == "kraft"
    shared = ("brokers", "dirs", "partitions", "rf", "max_records", "consumer", "max_dir_failures", "max_crashes",
              "max_restarts", "max_fixes", "max_failovers", "max_saturations", "max_faults")
    zk, kraft = (config_of(ZK_KRAFT.name, r).as_dict() for r in ZK_KRAFT.rows)
    assert {k: zk[k] for k in shared} == {k: kraft[k] for k in shared}, "the same cluster shape and bounds"


@pytest.mark.long_run
def test_every_violated_cell_of_the_zookeeper_kraft_section_replays(zk_kraft_cells):
    out, cells = zk_kraft_cells
    _replay_cells(out, {ZK_KRAFT.name: cells})


@pytest.fixture(scope="module")
def tiny_comparison(tmp_path_factory):
    if not THOROUGH:
        pytest.skip("the whole comparison takes minutes: JBODCHECK_PROFILE=thorough (the quick rows run in ci)")
    out = tmp_path_factory.mktemp("compare")
    with pytest.raises(SystemExit) as e:
        main(["compare", "--configs", ",".join(CONFIGS), "--workers", "2", "-q", "--markdown", str(out / "designs.md"),
              "--json", str(out / "designs.json")])
    assert e.value.code == 0
    return out


@pytest.mark.slow
def test_compare_regenerates_the_table_in_the_docs(tiny_comparison):
    generated = generated_block((tiny_comparison / "designs.md").read_text())
    assert "| design |" in generated
    assert generated == generated_block(DOC.read_text()), (
        "docs/designs.md is out of date: regenerate it with the command it gives")


@pytest.mark.slow
def test_every_violated_cell_replays_to_the_same_violation(tiny_comparison):
    data = json.loads((tiny_comparison / "designs.json").read_text())
    _replay_cells(tiny_comparison, data["cells"])


def _replay_cells(tiny_comparison, cells_by_config):
    replayed = 0
    for config, cells in cells_by_config.items():
        replayed += _replay_config(tiny_comparison, config, cells)
    assert replayed > 0


def _replay_config(tiny_comparison, config, cells) -> int:
    by_key = {r.key: r for r in configuration(config).rows}
    replayed = 0
    for design, report in cells.items():
        assert report["result"] in ("ok", "violation") and report["coverage"]
        for v in report["violations"]:
            path = tiny_comparison / "designs-scenarios" / report["scenarios"][v["invariant"]]
            scenario = load_scenario(str(path))
            model = model_of(config, by_key[design])
            assert model.cfg == config_of(config, by_key[design])
            result, trace, failed = replay(model, scenario, list(model.invariants))
            ids = [x.invariant.id for x in result.violations]
            assert v["invariant"] in ids, (design, v["invariant"], ids)
            assert len(trace) - 1 == len(v["trace"]) - 1 == len(scenario.steps)
            # The last step breaks it (the shortest trace: no earlier state or step does).
            hit = result.violations[ids.index(v["invariant"])]
            assert len(hit.trace) == len(trace)
            replayed += 1
    return replayed
