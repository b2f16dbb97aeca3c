"""Every rule's declared read and write sets (model/footprint.py) against its behaviour on sampled reachable
states: the first states of a BFS and the states of seeded random walks, for every design and feature."""
from __future__ import annotations

import random
from collections import deque

import attrs
import pytest

from model import Model
from model.designs import catalog
from model.footprint import Components, FootprintError, Footprints, check_declaration, footprint_violations
from model.presets import preset_config

# (preset, overrides): every design, and every feature's rules on.
CONFIGS = [
    ("tiny", {}), ("tiny", {"variant": "legacy"}), ("tiny", {"eager_metadata": False}),
    ("tiny", {"variant": "kip112-draft", "deletion": True}), ("kip18-lost-update", {}), ("saturation", {}),
    ("deletion", {}), ("reassignment-race", {}), ("medium", {}),
]


def sample_states(model: Model, bfs: int = 120, walks: int = 6, depth: int = 30, seed: int = 0) -> list:
    """The first ``bfs`` states of a BFS, then the states of seeded random walks (deeper states)."""
    init = model.init_states()[0]
    seen, out, queue = {model.fingerprint(init)}, [init], deque([init])
    while queue and len(out) < bfs:
        for _, after in model.successors(queue.popleft()):
            fp = model.fingerprint(after)
            if fp not in seen:
                seen.add(fp)
                out.append(after)
                queue.append(after)
    rng = random.Random(seed)
    for _ in range(walks):
        state = init
        for _ in range(depth):
            successors = list(model.successors(state))
            if not successors:
                break
            state = successors[rng.randrange(len(successors))][1]
            if model.fingerprint(state) not in seen:
                seen.add(model.fingerprint(state))
                out.append(state)
    return out


@pytest.mark.parametrize("preset,overrides", CONFIGS, ids=[f"{p}-{'-'.join(map(str, o.values())) or 'default'}"
                                                          for p, o in CONFIGS])
def test_rules_stay_within_their_declared_footprints(preset, overrides):
    model = Model(preset_config(preset, **overrides))
    assert footprint_violations(model, sample_states(model)) == []


def test_every_built_in_rule_declares_its_footprint():
    undeclared = sorted({r.name for f in catalog() for r in list(f.rules) + list(f.replaces.values())
                         if r.reads is None or r.writes is None})
    assert undeclared == []


@pytest.fixture(scope="module")
def tiny_states():
    return sample_states(Model(preset_config("tiny")), bfs=400, walks=0)


def _with_declaration(model: Model, name: str, **declaration) -> Model:
    model.action_space = tuple((ri, attrs.evolve(r, **declaration) if r.name == name else r, args)
                               for ri, r, args in model.action_space)
    return model


@pytest.mark.parametrize("name,declaration,expected", [
    ("BrokerCrash", {"writes": ("budget",)}, "BrokerCrash: writes broker[0].up, not declared"),
    ("BrokerLeaderAndIsr", {"reads": ("broker[broker]",)}, "BrokerLeaderAndIsr: effect reads outside reads"),
    ("ControllerBrokerStartup", {"reads": ("controller",)}, "ControllerBrokerStartup: effect reads outside reads"),
    ("DirFail", {"guard_reads": ("broker[broker].dirs",)}, "DirFail: guard reads outside guard_reads"),
])
def test_the_checker_catches_a_wrong_declaration(name, declaration, expected, tiny_states):
    model = _with_declaration(Model(preset_config("tiny")), name, **declaration)
    problems = footprint_violations(model, tiny_states, rules=(name,))
    assert any(p.startswith(expected) for p in problems), problems


def test_an_undeclared_rule_reads_and_writes_everything():
    model = _with_declaration(Model(preset_config("tiny")), "Consume", reads=None, writes=None)
    fp = Footprints(model)
    consume = [i for i, (_, r, _) in enumerate(model.action_space) if r.name == "Consume"]
    assert consume and all(fp.writes[i] == fp.components.all for i in consume)
    assert all(fp.dependent[i] == (1 << len(model.action_space)) - 1 for i in consume)


def test_parameterised_patterns_resolve_per_action():
    c = Components(2, ("created",))
    assert c.describe(c.mask(("broker[broker].inbox",), ("broker",), (1,))) == ["broker[1].inbox"]
    assert c.describe(c.mask(("broker[*].up", "ext.created", "wiped"))) == [
        "broker[0].up", "broker[1].up", "wiped", "ext.created"]
    for bad in ("broker[dir].inbox", "broker[broker].nothing", "controller.nothing", "histories"):
        with pytest.raises(FootprintError):
            check_declaration((bad,), ("broker",), ())
