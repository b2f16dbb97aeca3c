"""Scenario files of scenarios/ replayed as the command line replays them."""
from __future__ import annotations

from explorer.cli.model_value import command_model
from explorer.scenario import load_scenario, replay
from support.helpers import SCENARIOS


def replay_as_the_cli(file: str):
    """Replay a scenario of scenarios/ on the model `jbodcheck replay FILE` builds: (model, result, failed expectations)."""
    scenario = load_scenario(str(SCENARIOS / file))
    params = dict(scenario.model)
    model = command_model(params.pop("preset", None), {}, (), base=params)  # as `jbodcheck replay FILE` builds it
    result, _, failed = replay(model, scenario, list(model.invariants))
    return model, result, failed
