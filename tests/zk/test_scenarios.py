"""Every scenario file in scenarios/ replays without an invariant violation or a failed expectation; the KIP-112
Test Plan scenarios are there, and the pre-KIP-112 broker fails scenario 1."""
from __future__ import annotations

import attrs
import pytest

from explorer.cli import main
from explorer.scenario import ScenarioError, check_expectations, load_scenario, replay
from model import Model, ModelConfig
from explorer.catalog import preset_config
from model.storage.state import E_STORAGE

from support.helpers import SCENARIOS
from explorer.catalog import build_model, select_invariants

FILES = sorted(SCENARIOS.glob("*.json"))
KIP_TEST_PLAN = {
    1: "kip112-1-dir-failure-at-bootstrap.json",
    2: "kip112-2-leader-dir-failure-at-runtime.json",
    3: "kip112-3-follower-dir-failure-at-runtime.json",
}


def model_for(scenario, **override) -> Model:
    """The scenario's model as `jbodcheck replay` builds it: its preset (if any), then its parameters, then overrides."""
    params = dict(scenario.model)
    preset = params.pop("preset", None)
    params.update(override)
    return build_model(preset_config(preset, **params) if preset is not None else ModelConfig.from_dict(params))


def replayed(path, **override):
    scenario = load_scenario(str(path))
    model = model_for(scenario, **override)
    # A KRaft model is checked with its own claims (as `jbodcheck replay` checks every model): the ZooKeeper-mode
    # invariants among the built-in ones read the ZooKeeper controller's state (docs/kraft.md).
    invs = list(model.invariants) if model.has_feature("kraft-core") else select_invariants()
    result, trace, failed = replay(model, scenario, invs)
    return scenario, model, result, trace, failed


def test_the_kip112_test_plan_scenarios_exist():
    names = {f.name for f in FILES}
    missing = set(KIP_TEST_PLAN.values()) - names
    assert not missing, f"missing scenario files: {missing}"


# A finding's scenario replays to its violation (docs/kraft.md, "Findings"), every other one cleanly.
CLEAN_FILES = [f for f in FILES if "-finding-" not in f.name]
FINDING_FILES = [f for f in FILES if "-finding-" in f.name]


@pytest.mark.parametrize("path", FINDING_FILES, ids=lambda p: p.name)
def test_finding_scenario_replays_to_its_violation_at_its_last_step(path):
    scenario, model, result, trace, failed = replayed(path)
    assert scenario.description and scenario.expect
    assert result.violations, "a finding's scenario shows the violation without any bug switch"
    assert max(len(v.trace) - 1 for v in result.violations) == len(scenario.steps)  # it ends at a violation
    assert failed == [], failed


@pytest.mark.parametrize("path", CLEAN_FILES, ids=lambda p: p.name)
def test_scenario_replays_cleanly(path):
    scenario, model, result, trace, failed = replayed(path)
    assert scenario.description, "every scenario says what it checks"
    assert scenario.expect, "every scenario states the facts it expects at the end"
    assert [v.invariant.id for v in result.violations] == []
    assert failed == []
    assert result.result == "ok"
    assert len(trace) == len(scenario.steps) + 1


@pytest.mark.parametrize("path", CLEAN_FILES, ids=lambda p: p.name)
def test_scenario_replays_through_the_cli(path, capsys):
    with pytest.raises(SystemExit) as e:
        main(["replay", str(path)])
    out, err = capsys.readouterr()
    assert e.value.code == 0, err
    assert "Every expectation holds" in out


@pytest.mark.parametrize("number", sorted(KIP_TEST_PLAN))
def test_kip_scenarios_end_quiescent_with_everything_validated(number):
    scenario, model, _, trace, _ = replayed(SCENARIOS / KIP_TEST_PLAN[number])
    assert scenario.expect.get("quiescent") is True
    for key in ("brokers_up", "leaders", "isr", "offline_replicas"):
        assert key in scenario.expect, key
    final = trace[-1][1]
    assert model.is_quiescent(final)
    # The controller learned about the bad dir from a KAFKA_STORAGE_ERROR in a LeaderAndIsr response.
    assert any(reply == ((0, E_STORAGE),) for _, s in trace for b in s.brokers for reply in b.replies)


def test_scenario_1_outcome():
    _, model, _, trace, _ = replayed(SCENARIOS / KIP_TEST_PLAN[1])
    first, final = trace[1][1], trace[-1][1]
    old_leader = first.controller.partitions[0].leader
    assert final.controller.partitions[0].leader not in (old_leader, -1)
    assert all(b.up for b in final.brokers)
    assert all(b.meta[0].offline == 1 << old_leader for b in final.brokers)
    # Nothing was re-created: the old leader still holds only the log it created with the topic.
    original = next(s.brokers[old_leader].copies[0] for _, s in trace if s.brokers[old_leader].copies[0])
    assert final.brokers[old_leader].copies[0] == original


def test_expectations_are_really_checked():
    """A wrong expectation on scenario 1's final state is reported: the checker is not a no-op."""
    scenario, model, _, trace, _ = replayed(SCENARIOS / KIP_TEST_PLAN[1])
    final = trace[-1][1]
    assert check_expectations(model, final, scenario.expect) == []
    wrong = [
        {"quiescent": False},
        {"brokers_up": [1, 2]},
        {"leaders": {"0": 0}},
        {"leaders": {"0": None}},
        {"isr": {"0": [0, 1, 2]}},
        {"offline_replicas": {"0": []}},
    ]
    for expect in wrong:
        assert len(check_expectations(model, final, expect)) >= 1, expect
    bad = attrs.evolve(scenario, expect={"leaders": {"0": 0}})
    result, _, failed = replay(model, bad, select_invariants())
    assert failed and result.result == "violation"


def _longest_replayable(scenario, model):
    """The scenario cut at the first step the model cannot take (its expectations dropped)."""
    for k in range(len(scenario.steps), 0, -1):
        cut = attrs.evolve(scenario, steps=scenario.steps[:k], expect={})
        try:
            return cut, replay(model, cut, select_invariants())
        except ScenarioError:
            continue
    raise AssertionError("not even the first step replays")


def test_legacy_variant_violates_no_recreate_in_scenario_1():
    scenario = load_scenario(str(SCENARIOS / KIP_TEST_PLAN[1]))
    legacy = model_for(scenario, variant="legacy")
    assert legacy.cfg.variant == "legacy"
    cut, (result, trace, _) = _longest_replayable(scenario, legacy)
    ids = [v.invariant.id for v in result.violations]
    assert "no_recreate_with_bad_dir" in ids
    violation = result.violations[ids.index("no_recreate_with_bad_dir")]
    last_action = violation.trace[-1][0]
    assert legacy.rules[last_action.rule].name == "BrokerLeaderAndIsr" and last_action.args == (0,)
    # The same steps under kip112 are clean.
    kip112 = model_for(scenario)
    result, _, _ = replay(kip112, cut, select_invariants())
    assert result.violations == []


def test_legacy_variant_also_breaks_the_replay_through_the_cli(capsys):
    """`jbodcheck replay FILE --variant legacy` must not end in a traceback; it exits 1 or 2 with a message."""
    with pytest.raises(SystemExit) as e:
        main(["replay", str(SCENARIOS / KIP_TEST_PLAN[1]), "--variant", "legacy"])
    out, err = capsys.readouterr()
    assert e.value.code in (1, 2)
    assert "Traceback" not in out + err
    assert ("no_recreate_with_bad_dir" in out) or (len(err.strip().splitlines()) == 1 and "step" in err)


# ---- the expectation keys of the feature scenarios: deleted_topics, reassigned, assignment, dirs ----------------

REASSIGN = SCENARIOS / "kip112-7-reassign-onto-a-broker-with-an-offline-dir.json"
DELETE = SCENARIOS / "kip112-8-delete-a-topic-on-a-saturated-dir.json"


def test_the_feature_scenarios_state_their_new_facts():
    for path, keys in ((REASSIGN, {"reassigned", "assignment"}), (DELETE, {"deleted_topics", "dirs"})):
        assert keys <= set(load_scenario(str(path)).expect), path.name


@pytest.mark.parametrize("expect", [
    {"deleted_topics": 0}, {"deleted_topics": [1]}, {"deleted_topics": [True]}, {"deleted_topics": ["0"]},
    {"reassigned": {"0": True}}, {"reassigned": [-1]}, {"reassigned": [1]},
    {"assignment": [1, 2]}, {"assignment": {"1": [1, 2]}}, {"assignment": {"0": 1}}, {"assignment": {"0": [3]}},
    {"assignment": {"0": [True]}},
    {"dirs": ["good", "good"]}, {"dirs": {"3": ["good", "good"]}}, {"dirs": {"2": ["good"]}},
    {"dirs": {"2": ["good", "full"]}}, {"dirs": {"x": ["good", "good"]}}, {"dirs": {"2": "good"}},
], ids=repr)
def test_a_bad_value_of_a_new_expect_key_is_a_scenario_error(expect):
    """On kip112-7's model (3 brokers, 2 dirs, 1 partition): rejected before the first step."""
    scenario = load_scenario(str(REASSIGN))
    model = model_for(scenario)
    key = next(iter(expect))
    with pytest.raises(ScenarioError, match=f"expect.{key}"):
        replay(model, attrs.evolve(scenario, expect=expect), select_invariants())


def test_the_new_expect_keys_are_really_checked():
    scenario, model, _, trace, _ = replayed(REASSIGN)
    final = trace[-1][1]
    right = {"reassigned": [0], "assignment": {"0": [1, 2]}, "deleted_topics": [],
             "dirs": {"0": ["good", "good"], "1": ["good", "good"], "2": ["good", "good"]}}
    assert check_expectations(model, final, right) == []
    wrong = [
        ({"reassigned": []}, "reassignment"),
        ({"assignment": {"0": [0, 1]}}, "assignment"),
        ({"assignment": {"0": [2, 1]}}, "assignment"),                  # order matters: the first is preferred
        ({"deleted_topics": [0]}, "topic deletion"),
        ({"dirs": {"2": ["offline", "good"]}}, "broker 2's dirs"),       # the disk was replaced
    ]
    for expect, words in wrong:
        failed = check_expectations(model, final, expect)
        assert len(failed) == 1 and words in failed[0], (expect, failed)
    scenario, model, _, trace, _ = replayed(DELETE)
    final = trace[-1][1]
    assert check_expectations(model, final, {"deleted_topics": [0], "reassigned": []}) == []
    for expect in ({"deleted_topics": []}, {"dirs": {"1": ["saturated", "good"]}}):
        assert len(check_expectations(model, final, expect)) == 1, expect
    result, _, failed = replay(model, attrs.evolve(scenario, expect={"deleted_topics": []}), select_invariants())
    assert result.result == "violation" and failed and result.violations == []


def test_the_reassignment_scenario_holds_with_kafkas_probe_too():
    """--no-probe-new-replicas does not change kip112-7: its target replica is never probed while in NewReplica
    (it refuses the isNewReplica=false request first): the same steps and facts hold."""
    scenario, model, result, trace, failed = replayed(REASSIGN, probe_new_replicas=False)
    assert result.result == "ok" and failed == []
