"""Shared helpers for the test suite: drive the model by rule name and deliver every pending message."""
from __future__ import annotations

from pathlib import Path

from invariants import Plugins
from model import Model, ModelConfig
from explorer.catalog import preset_config
from model.storage.state import replace_at
from explorer.catalog import build_model

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = REPO / "scenarios"

# The plugins JBODCHECK_PLUGINS names, loaded by conftest.py before collection (docs/testing.md).
PLUGINS = Plugins()

# Rules that only move messages and events the environment already produced: no new fault, no new topic.
DELIVERY_RULES = (
    "BrokerLeaderAndIsr", "BrokerUpdateMetadata", "BrokerStopReplica", "ControllerLeaderAndIsrResponse",
    "ControllerLogDirEvent", "ControllerBrokerFailure", "ControllerBrokerStartup", "BrokerStopReplicaDelete",
    "ControllerStopReplicaResponse",
)


def policy(variant: str):
    """The design's may_create_log hook (model/zk/designs.py), for calling the broker's procedures directly."""
    return build_model(ModelConfig(variant=variant)).hooks.may_create_log


def model_of(preset: str = "small", **overrides) -> Model:
    return build_model(preset_config(preset, **overrides))


def custom_model(**params) -> Model:
    return build_model(ModelConfig(**params))


def init(model: Model):
    return model.init_states()[0]


def step(model: Model, state, name: str, *args):
    """Take one enabled action by rule name; returns the next state."""
    _, after = model.step(state, name, tuple(args))
    return after


def enabled(model: Model, state, name: str, *args) -> bool:
    return model.rule(name).guard(model, state, *args) is None


def deliver_all(model: Model, state, trace: list | None = None, limit: int = 500):
    """Deliver every message, response, notification and broker change until the state is quiescent.

    Deterministic: the first enabled delivery action in DELIVERY_RULES order (then argument order) is taken.
    When ``trace`` is given, each action taken is appended to it as (rule name, args).
    """
    for _ in range(limit):
        for name in DELIVERY_RULES:
            if name not in model.rule_index:
                continue  # a rule of a feature this model leaves out
            r = model.rule(name)
            taken = False
            for args in r.domain(model):
                if r.guard(model, state, *args) is None:
                    _, state = model.step(state, name, args)
                    if trace is not None:
                        trace.append((name, args))
                    taken = True
                    break
            if taken:
                break
        else:
            return state
    raise AssertionError("deliver_all did not reach a state with nothing left to deliver")


def created_topic(model: Model):
    """Partition 0 created and every resulting message delivered: a healthy, quiescent cluster."""
    return deliver_all(model, step(model, init(model), "CreateTopic", 0))


def guard(model: Model, state, name: str, *args):
    """The rule's guard: None when enabled, else the reason it is not."""
    return model.rule(name).guard(model, state, *args)


def run(model: Model, state, *steps):
    """Take the steps in order: each is (rule name, *args)."""
    for name, *args in steps:
        state = step(model, state, name, *args)
    return state


def with_broker(state, b: int, **fields):
    """A hand-made state: broker b with the given fields replaced."""
    return state._replace(brokers=replace_at(state.brokers, b, state.brokers[b]._replace(**fields)))


def bfs_states(model: Model, fingerprint, limit: int | None = None) -> dict:
    """A small independent BFS (no engine involved): fingerprint -> the first state met with it, over every
    reachable state, or over the first ``limit`` of them in BFS order."""
    start = init(model)
    seen = {fingerprint(start): start}
    frontier = [start]
    while frontier and (limit is None or len(seen) < limit):
        nxt = []
        for s in frontier:
            for _, t in model.successors(s):
                fp = fingerprint(t)
                if fp not in seen:
                    seen[fp] = t
                    nxt.append(t)
        frontier = nxt
    return seen


def walk_states(model: Model, walks: int, depth: int, seed: int, skip: int = 0) -> list:
    """The states of ``walks`` seeded random walks of at most ``depth`` steps from the initial state, less the
    first ``skip`` of each walk (repeats kept: equal states reached by other paths may be distinct objects)."""
    import random

    rng = random.Random(seed)
    out = []
    for _ in range(walks):
        s = init(model)
        for step in range(depth):
            successors = list(model.successors(s))
            if not successors:
                break
            s = rng.choice(successors)[1]
            if step >= skip:
                out.append(s)
    return out


def in_process(capsys, *args):
    """Run explorer.cli.main in this process; returns (exit code, stdout, stderr)."""
    import pytest

    from explorer.cli import main

    with pytest.raises(SystemExit) as e:
        main([str(a) for a in args])
    out, err = capsys.readouterr()
    return e.value.code, out, err


def device_fills_after_the_check(monkeypatch) -> None:
    """A device that accepts the check before the run (explorer/outputs.py writes it zero bytes) and refuses the
    write at the end (it filled up meanwhile): how ``/dev/full`` behaves once the check lets it through."""
    monkeypatch.setattr("explorer.outputs._device_refuses", lambda path: None)


# ---- KRaft mode -------------------------------------------------------------------------------------------------

def kraft_configs(thorough: bool) -> list:
    """(preset, overrides) of KRaft configurations exhausted in seconds: with the bug switch one fault is enough
    for a violation (the KAFKA-16234 scenario's path); the data path without faults; the presets themselves under
    the thorough profile."""
    return [
        ("kraft-tiny-faults", dict(max_faults=1, max_fixes=0, options={"bugs": ("KAFKA-16234",)})),
        ("kraft-tiny-faults", dict(max_faults=1, max_fixes=0)),
        ("kraft-tiny", dict(max_faults=0)),
    ] + ([("kraft-tiny-faults", {}), ("kraft-tiny", {}), ("kraft-small", {})] if thorough else [])


def config_ids(configs) -> list[str]:
    return [f"{p}-{'-'.join(f'{k}={v}' for k, v in o.items()) or 'preset'}" for p, o in configs]


def run_labels(model: Model, steps, state=None):
    """The state after steps given as labels ("Rule(a=1, b=2)"), from the initial state or ``state``."""
    s = model.init_states()[0] if state is None else state
    for text in steps:
        name, _, rest = text.partition("(")
        args = tuple(int(a.split("=")[1]) for a in rest.rstrip(")").split(",") if a.strip())
        _action, s = model.step(s, name, args)
    return s


def enabled_labels(model: Model, state) -> set:
    return {model.rules[a.rule].label(a.args) for a, _ in model.successors(state)}
