"""`jbodcheck compare` (explorer/compare.py): every design on the tiny preset regenerates the table in
docs/designs.md exactly, and every violated cell's scenario file replays to the same violation."""
from __future__ import annotations

import json

import pytest

from explorer.cli import main
from explorer.compare import ROWS, generated_block, model_of, rows
from explorer.scenario import load_scenario, replay
from model import VARIANTS
from model.presets import preset_config

from helpers import REPO

DOC = REPO / "docs" / "designs.md"


def test_every_variant_is_a_row():
    keys = {r.params.get("variant") for r in rows()}
    assert set(VARIANTS) <= keys
    assert [r.key for r in rows()][0] == "legacy" and ROWS[-1].params.get("saturation") is True


def test_an_unknown_preset_is_bad_input(capsys):
    with pytest.raises(SystemExit) as e:
        main(["compare", "--configs", "tiny,nope", "-q"])
    assert e.value.code == 2
    assert "nope" in capsys.readouterr().err


@pytest.fixture(scope="module")
def tiny_comparison(tmp_path_factory):
    out = tmp_path_factory.mktemp("compare")
    with pytest.raises(SystemExit) as e:
        main(["compare", "--configs", "tiny", "--workers", "2", "-q", "--markdown", str(out / "designs.md"),
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
    by_key = {r.key: r for r in rows()}
    replayed = 0
    for design, report in data["cells"]["tiny"].items():
        assert report["result"] in ("ok", "violation") and report["coverage"]
        for v in report["violations"]:
            path = tiny_comparison / "designs-scenarios" / report["scenarios"][v["invariant"]]
            scenario = load_scenario(str(path))
            model = model_of("tiny", by_key[design])
            assert model.cfg == preset_config("tiny", **by_key[design].params)
            result, trace, failed = replay(model, scenario, list(model.invariants))
            ids = [x.invariant.id for x in result.violations]
            assert v["invariant"] in ids, (design, v["invariant"], ids)
            assert len(trace) - 1 == len(v["trace"]) - 1 == len(scenario.steps)
            # The last step breaks it (the shortest trace: no earlier state or step does).
            hit = result.violations[ids.index(v["invariant"])]
            assert len(hit.trace) == len(trace)
            replayed += 1
    assert replayed > 0
