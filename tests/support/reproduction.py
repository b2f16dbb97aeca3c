"""The model a reproduction runs and the projections of its states (realkafka/driver/projection.py): what
`jbodcheck reproduce` compares a cluster with, computed without one."""
from __future__ import annotations

from explorer.catalog import build_model, configure
from explorer.cli.reproduce import _steps
from explorer.scenario import load_scenario
from realkafka.driver.projection import project


def scenario_model(path, bugs=(), data=True, kafka=None):
    """The model a reproduction runs: the scenario's, its bug switches, the data path on where allowed (at the
    default release, or ``kafka``)."""
    sc = load_scenario(str(path))
    base = dict(sc.model)
    preset = base.pop("preset", None)
    if bugs:
        base["options"] = {**base.get("options", {}), "bugs": tuple(bugs)}
    if kafka:
        base["options"] = {**base.get("options", {}), "kafka": kafka}
    try:
        cfg = configure(preset, {**base, "max_records": max(1, base.get("max_records", 0) or 0)} if data else base, {})
    except Exception:
        cfg = configure(preset, base, {})
    model = build_model(cfg, preset=preset)
    return model, _steps(sc, model)      # a catch-up written without records is a fetch with them


def trace_history(model, steps):
    """The projections of the states the steps pass through, a faulted dir counted from its DirFail on."""
    state, faulted = model.init_states()[0], set()
    history = [project(model, state)]
    for name, args in steps:
        _, state = model.step(state, name, args)
        if name == "DirFail":
            faulted.add(args)
        history.append(project(model, state, faulted))
    return history
