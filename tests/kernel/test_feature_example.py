"""The one-model API (docs/extending.md, "Adding a feature"): a feature added in one module
(examples/preferred_election.py) is picked up by every engine; models of different designs and feature sets
coexist in one process; symmetry is opt-in per invariant, so a user's invariant is never hidden by it."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import attrs
import pytest
from hypothesis import settings
from hypothesis.stateful import run_state_machine_as_test

from explorer.fuzz import make_state_machine, scenario_dict
from explorer.scenario import load_scenario, replay
from explorer.search import SearchOptions, bfs, dfs, simulate
from invariants import invariant, load_plugins
from invariants.plugins import Plugins
from model import ConfigError, Model
from explorer.catalog import preset_config
from model.storage.state import P_NONEXISTENT

from support.helpers import REPO, created_topic, deliver_all
from explorer.catalog import build_model

EXAMPLE = str(REPO / "examples" / "preferred_election.py")
RULE = "PreferredLeaderElection"
INVARIANT = "preferred_election_elects_a_live_isr_member"


@pytest.fixture(scope="module")
def plugins() -> Plugins:
    return load_plugins([EXAMPLE])


def _model(plugins, **overrides) -> Model:
    feature = plugins.features[0]
    return build_model(preset_config("preferred-election", feature.presets, **overrides), symmetry=True, plugins=plugins)


@invariant("no_preferred_election_yet", kind="transition", symmetric=True,
           statement="No preferred leader election ever happens (a probe that fails at the first one).",
           reference="KafkaController.onPreferredReplicaElection")
def no_preferred_election_yet(model, state, action, after):
    if model.rules[action.rule].name == RULE:
        return f"a preferred election of partition {action.args[0]} happened"
    return None


PROBE = no_preferred_election_yet.invariant


def test_the_feature_brings_its_rule_field_option_invariant_and_preset(plugins):
    m = _model(plugins)
    assert [f.name for f in m.features][-1] == "preferred-election"
    assert RULE in m.rule_index and RULE in {r.name for _, r, _ in m.action_space}
    assert INVARIANT in {i.id for i in m.invariants}
    assert m.init_states()[0].controller.preferred_elections == 0 and m.option("max_preferred_elections") == 1
    assert m.symmetry, "the example's invariant is declared symmetric"
    # The option bounds the rule: 0 leaves it out of the configuration.
    none = _model(plugins, options={"max_preferred_elections": 0})
    assert not {r.name for _, r, _ in none.action_space} & {RULE} and RULE in none.reported_rules
    with pytest.raises(ConfigError, match="max_preferred_elections"):
        _model(plugins, options={"max_preferred_elections": -1})
    with pytest.raises(ConfigError, match="unknown option"):
        build_model(preset_config("tiny", options={"max_preferred_elections": 1}))  # without the feature


def test_every_local_engine_explores_the_feature(plugins):
    m = _model(plugins, max_faults=1)   # one fault (a crash moves the leader away): seconds per engine
    results = {
        "bfs": bfs(m, m.invariants, SearchOptions(workers=1)),
        "bfs-2": bfs(m, m.invariants, SearchOptions(workers=2)),
        "dfs": dfs(m, m.invariants, SearchOptions()),
        "random": simulate(m, m.invariants, SearchOptions(walks=200, seed=1)),
    }
    for name, r in results.items():
        assert r.violations == [], (name, r.violations)
        assert r.coverage[RULE] > 0, name
    assert results["bfs"].result == "ok"
    for name in ("bfs-2", "dfs"):
        assert results[name].distinct_states == results["bfs"].distinct_states, name
    # The feature's rule adds states: the same configuration without the feature (tiny without a consumer) has
    # fewer.
    base = build_model(preset_config("tiny", consumer=False, max_faults=1), symmetry=True)
    assert bfs(base, base.invariants, SearchOptions()).distinct_states < results["bfs"].distinct_states


@pytest.mark.long_run
def test_fuzz_and_replay_take_the_feature(plugins, tmp_path):
    m = _model(plugins)
    probe = build_model(m.cfg, plugins=Plugins(plugins.modules, plugins.features, (PROBE,)),
                  invariants=["no_preferred_election_yet"])
    found = bfs(probe, probe.invariants, SearchOptions())
    assert found.violations and found.violations[0].invariant.id == "no_preferred_election_yet"
    actions = [a for a, _ in found.violations[0].trace[1:]]
    path = tmp_path / "preferred.json"
    path.write_text(json.dumps(scenario_dict(m, actions, "preferred-election")))
    result, trace, failed = replay(m, load_scenario(str(path)), list(m.invariants))
    assert result.result == "ok" and not failed
    assert trace[-1][1].controller.preferred_elections == 1
    assert m.rules[trace[-1][0].rule].name == RULE
    # Hypothesis: the machine generated from the model has the feature's rule and reaches it.
    machine = make_state_machine(probe)
    assert RULE in {r.function.__name__ for r in machine.setup_state().rules}
    with pytest.raises(Exception) as info:
        run_state_machine_as_test(machine, settings=settings(max_examples=300, stateful_step_count=40,
                                                             report_multiple_bugs=False, deadline=None))
    assert "no_preferred_election_yet" in str(info.value)


def test_the_example_invariant_fails_on_a_hand_made_election(plugins):
    m = _model(plugins, eager_metadata=True)
    s = deliver_all(m, created_topic(m))
    inv = next(i for i in m.invariants if i.id == INVARIANT)
    # Hand-made: an "election" that makes broker 1, not the preferred broker 0, the leader.
    part = s.controller.partitions[0]
    wrong = s._replace(controller=s.controller._replace(
        partitions=(part._replace(leader=1, leader_epoch=part.leader_epoch + 1),)))
    action = m.step(s, "BrokerCrash", (1,))[0]._replace(rule=m.rule_index[RULE], args=(0,), settled=())
    assert "not its preferred replica 0" in inv.check(m, s, action, wrong)


@pytest.mark.slow
def test_models_of_different_designs_coexist_in_one_process(plugins):
    kip112 = build_model(preset_config("tiny"), symmetry=True)
    legacy = build_model(preset_config("small", variant="legacy"), symmetry=True)
    example = _model(plugins, max_faults=1)
    # Each owns its rules, hooks, invariants and caches: building one changes nothing in another.
    assert kip112.hooks.may_create_log is not legacy.hooks.may_create_log
    assert RULE in example.rule_index and RULE not in kip112.rule_index and RULE not in legacy.rule_index
    assert kip112._memos is not example._memos
    r_legacy = bfs(legacy, legacy.invariants, SearchOptions())
    r_kip112 = bfs(kip112, kip112.invariants, SearchOptions())
    r_example = bfs(example, example.invariants, SearchOptions())
    assert [v.invariant.id for v in r_legacy.violations] == ["no_recreate_with_bad_dir"]
    assert len(r_legacy.violations[0].trace) - 1 == 4
    assert (r_kip112.result, r_kip112.distinct_states, r_kip112.states_generated, r_kip112.depth) == \
        ("ok", 63_335, 187_361, 29)
    assert r_example.result == "ok" and r_example.coverage[RULE] > 0


# ---- symmetry is opt-in per invariant --------------------------------------------------------------------------

@invariant("dir_1_of_broker_0_never_fails_first", kind="state",
           statement="Dir 1 of broker 0 does not fail before any topic exists (a probe that names a dir).",
           reference="KIP-112 scenario 2")
def dir_1_of_broker_0_never_fails_first(model, state):
    if all(p.state == P_NONEXISTENT for p in state.controller.partitions) and state.brokers[0].dirs[1] != 0:
        return "dir 1 of broker 0 failed before any topic exists"
    return None


ASYMMETRIC = dir_1_of_broker_0_never_fails_first.invariant


@pytest.mark.slow
def test_an_invariant_not_declared_symmetric_turns_the_reduction_off_and_is_found():
    assert not ASYMMETRIC.symmetric
    plugins = Plugins(invariants=(ASYMMETRIC,))
    m = build_model(preset_config("tiny"), symmetry=True, plugins=plugins)
    assert not m.symmetry and "dir_1_of_broker_0_never_fails_first" in m.symmetry_note
    r = bfs(m, m.invariants, SearchOptions())
    assert [v.invariant.id for v in r.violations] == ["dir_1_of_broker_0_never_fails_first"]
    assert [m.label(a) for a, _ in r.violations[0].trace[1:]] == ["DirFail(broker=0, dir=1)"]
    # What the reduction would have done: the violating state is in the class of DirFail(broker=0, dir=0).
    forced = build_model(preset_config("tiny"), symmetry=True)
    assert forced.symmetry
    assert bfs(forced, [ASYMMETRIC], SearchOptions()).violations == []
    # Declared symmetric (wrongly, here), it keeps the reduction: the declaration is the user's promise.
    promised = Plugins(invariants=(attrs.evolve(ASYMMETRIC, symmetric=True),))
    assert build_model(preset_config("tiny"), symmetry=True, plugins=promised).symmetry


def test_the_cli_default_finds_a_plugin_invariant_that_is_not_symmetric(tmp_path):
    plugin = tmp_path / "dir_probe.py"
    plugin.write_text(
        "from invariants import invariant\n"
        "from model.storage.state import P_NONEXISTENT\n"
        "@invariant('dir_1_of_broker_0_never_fails_first', kind='state', statement='Dir 1 of broker 0 does not "
        "fail before any topic exists.', reference='KIP-112 scenario 2')\n"
        "def check(model, state):\n"
        "    if all(p.state == P_NONEXISTENT for p in state.controller.partitions) and state.brokers[0].dirs[1]:\n"
        "        return 'dir 1 of broker 0 failed first'\n"
        "    return None\n")
    run = subprocess.run([sys.executable, "-m", "explorer", "explore", "--preset", "tiny", "--plugin", str(plugin),
                          "--json", "-"], capture_output=True, text=True, cwd=REPO, timeout=600)
    assert run.returncode == 1, run.stderr
    report = json.loads(run.stdout)
    assert report["symmetry"] is False and "not declared symmetric" in report["symmetry_note"]
    assert report["violations"][0]["invariant"] == "dir_1_of_broker_0_never_fails_first"
    assert "jbodcheck: symmetry reduction off: invariant(s) dir_1_of_broker_0_never_fails_first" in run.stderr


def test_the_cli_explores_the_example_feature():
    run = subprocess.run([sys.executable, "-m", "explorer", "explore", "--plugin", EXAMPLE, "--preset",
                          "preferred-election", "--max-depth", "12", "-q", "--json", "-"],
                         capture_output=True, text=True, cwd=REPO, timeout=600)
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["coverage"][RULE] > 0 and report["model"]["options"] == {"max_preferred_elections": 1}
    bad = subprocess.run([sys.executable, "-m", "explorer", "explore", "--plugin", EXAMPLE, "--preset",
                          "preferred-election", "--option", "max_preferred_elections=-1", "-q"],
                         capture_output=True, text=True, cwd=REPO, timeout=600)
    assert bad.returncode == 2 and bad.stderr.strip().count("\n") == 0
    assert "max_preferred_elections" in bad.stderr


@pytest.mark.skipif(shutil.which("java") is None and not os.environ.get("JAVA_HOME"), reason="Spark needs Java 17+")
@pytest.mark.long_run
def test_spark_explores_the_example_feature(plugins):
    pytest.importorskip("pyspark")
    from spark_explore import SparkOptions, explore_spark

    m = _model(plugins)
    local = bfs(m, m.invariants, SearchOptions(max_depth=12))
    spark = explore_spark(m, list(m.invariants), SearchOptions(max_depth=12), SparkOptions(master="local[2]"))
    assert (spark.distinct_states, spark.states_generated, spark.coverage) == \
        (local.distinct_states, local.states_generated, local.coverage)
    assert spark.coverage[RULE] > 0
