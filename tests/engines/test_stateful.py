"""Hypothesis stateful testing (``pytest -m stateful``): the state machines generated from the rule registry
(explorer/fuzz.py) run on the presets and on a cluster far beyond exhaustive search; KIP-112 holds, and the
legacy variant is caught with a short, replayable counterexample.

The Hypothesis settings come from the profile (JBODCHECK_PROFILE, docs/testing.md): ``ci`` is derandomized.
"""
from __future__ import annotations

import json

import pytest
from hypothesis import settings
from hypothesis.stateful import RuleBasedStateMachine, run_state_machine_as_test

from explorer.fuzz import IDLE_RULE, LOOSE_BOUNDS, InvariantViolation, make_state_machine, scenario_dict
from explorer.scenario import load_scenario, replay
from model import Feature, Model, ModelConfig
from explorer.catalog import preset_config
from explorer.catalog import KIP112
from support.profiles import THOROUGH
from explorer.catalog import build_model, select_invariants

pytestmark = pytest.mark.stateful

CONFIGS = {
    "tiny": lambda variant: preset_config("tiny", variant=variant),
    "small": lambda variant: preset_config("small", variant=variant),
    # Far beyond exhaustive search: 5 brokers x 4 dirs x 8 partitions, several faults of each kind.
    "large": lambda variant: ModelConfig(variant=variant, brokers=5, dirs=4, partitions=8, rf=3, **LOOSE_BOUNDS),
}


def run(machine, **overrides) -> None:
    """Run a machine under the active profile (with overrides)."""
    run_state_machine_as_test(machine, settings=settings(report_multiple_bugs=False, **overrides))


def caught(model: Model, examples: int = 300) -> InvariantViolation:
    machine = make_state_machine(model)
    with pytest.raises(InvariantViolation) as info:
        run(machine, max_examples=max(examples, settings().max_examples))
    return info.value


@pytest.mark.parametrize("name", list(CONFIGS))
def test_kip112_machine_finds_no_violation(name):
    run(make_state_machine(build_model(CONFIGS[name]("kip112"))))


def test_kip112_large_machine_runs_long_histories():
    """The large configuration as a unittest-style TestCase, with longer runs than the profile's default."""
    machine = make_state_machine(build_model(CONFIGS["large"]("kip112")), name="LargeKip112Machine")
    case = machine.TestCase
    case.settings = settings(stateful_step_count=max(100, settings().stateful_step_count),
                             max_examples=max(10, settings().max_examples // 4))
    result = case("runTest").run()
    assert result.wasSuccessful(), result.failures + result.errors


@pytest.mark.parametrize("name", ["small", pytest.param("large", marks=pytest.mark.skipif(
    not THOROUGH, reason="the large configuration's catch takes half a minute: JBODCHECK_PROFILE=thorough"))])
def test_legacy_is_caught_with_a_short_replayable_trace(name, tmp_path):
    model = build_model(CONFIGS[name]("legacy"))
    shrunk = caught(model)
    assert shrunk.invariant.id == "no_recreate_with_bad_dir", str(shrunk)
    minimal = shrunk.minimal()
    assert 1 <= len(minimal.steps) <= min(15, len(shrunk.steps)), minimal.steps
    # Both runs are scenario-file steps, and replay (as `jbodcheck replay` runs it) reproduces the violation.
    for failure in (shrunk, minimal):
        path = tmp_path / "counterexample.json"
        path.write_text(json.dumps(scenario_dict(model, failure.actions)))
        scenario = load_scenario(str(path))
        result, trace, _ = replay(build_model(ModelConfig.from_dict(scenario.model)), scenario, select_invariants())
        assert "no_recreate_with_bad_dir" in {v.invariant.id for v in result.violations}
        assert len(trace) == len(failure.steps) + 1
    # The failure renders as the explorer's trace, minimal.
    text = str(shrunk)
    assert "Step 0: initial state" in text and f"Trace ({len(minimal.steps)} steps)" in text


def test_machine_is_generated_from_the_registries():
    model = build_model(CONFIGS["small"]("kip112"))
    machine = make_state_machine(model)
    setup = machine.setup_state()
    rule_names = {r.function.__name__ for r in setup.rules}
    # One Hypothesis rule per model rule with actions in this configuration (small has no explicit consumer).
    assert rule_names == {r.name for _, r, _ in model.action_space} | {IDLE_RULE}
    assert "Consume" not in rule_names and "Produce" in rule_names
    expected_invariants = {f"invariant_{i.id}" for i in model.invariants if i.kind != "transition"}
    assert {i.function.__name__ for i in setup.invariants} == expected_invariants


def test_a_rule_added_by_a_feature_is_picked_up():
    """A new rule needs no change to the machine: a feature brings one, and the generated machine runs it."""
    fired = []
    touch = Feature("touch", "A test-only feature with one rule")

    def _brokers(m):
        return [(b,) for b in range(m.cfg.brokers)]

    @touch.rule("TouchBroker", params=("broker",), domain=_brokers, guard=lambda m, s, broker: None,
                reference="a test-only rule", kind="environment")
    def touch_broker(m, s, broker):
        """Does nothing."""
        fired.append(broker)
        return s

    model = build_model(preset_config("tiny"), design=KIP112.extended(touch))
    machine = make_state_machine(model)
    assert "TouchBroker" in {r.function.__name__ for r in machine.setup_state().rules}
    run(machine, max_examples=20)
    assert fired, "the added rule never fired"
    assert "TouchBroker" not in build_model(preset_config("tiny")).rule_index, "the other model does not have it"


def test_a_machine_with_every_budget_spent_idles_instead_of_failing():
    """With every topic created and nothing left to happen, Hypothesis still has a rule to run."""
    model = build_model(ModelConfig(brokers=1, dirs=1, partitions=1, rf=1, max_dir_failures=0, max_saturations=0,
                              max_crashes=0, max_restarts=0, max_fixes=0, max_failovers=0))
    assert isinstance(make_state_machine(model)(), RuleBasedStateMachine)
    run(make_state_machine(model), max_examples=5, stateful_step_count=20)
