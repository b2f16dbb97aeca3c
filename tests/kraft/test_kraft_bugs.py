"""KRaft's bug switches from the command line (issue 31; docs/kraft.md, "Bug switches"; docs/cli.md): `--bug` on
every command with MODEL options, merged with `--option bugs=...` and a scenario file's options, refused for an
unknown id or a ZooKeeper variant; the reports name the switches with the bounds; `jbodcheck bugs` lists BUGS and
the known bugs not expressed yet."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from model.kraft.bugs import BUGS, NOT_EXPRESSED, not_expressed

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "scenarios"
S16234 = SCENARIOS / "kraft-kafka-16234-offline-partition-recreated.json"


def jbodcheck(*args, timeout=120):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "explorer", *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=timeout)


def _report(p) -> dict:
    return json.loads(p.stdout)


# ---- --bug ----------------------------------------------------------------------------------------------------------

def test_bug_flag_replays_the_scenario_to_its_violation_and_the_report_names_the_switch():
    p = jbodcheck("replay", S16234, "--bug", "KAFKA-16234", "--json", "-")
    assert p.returncode == 1, p.stderr
    report = _report(p)
    assert report["result"] == "violation"
    assert {v["invariant"] for v in report["violations"]} == {"no_recreate_over_offline_copy"}
    assert report["model"]["options"] == {"bugs": ["KAFKA-16234"]}
    assert report["bounds"]["model"]["bugs"] == ["KAFKA-16234"]
    assert "bugs=KAFKA-16234" in report["bounds"]["text"]


def test_without_the_switch_the_scenario_holds_and_the_bounds_name_no_switch():
    p = jbodcheck("replay", S16234, "--json", "-")
    assert p.returncode == 0, p.stderr
    report = _report(p)
    assert report["result"] == "ok" and report["expectations_failed"] == []
    assert "bugs" not in report["bounds"]["model"] and "bugs=" not in report["bounds"]["text"]


def test_the_text_verdict_names_the_switch():
    p = jbodcheck("replay", S16234, "--bug", "KAFKA-16234")
    assert p.returncode == 1
    assert "Found within: 2 brokers x 2 dirs" in p.stdout and "bugs=KAFKA-16234" in p.stdout


def test_bug_and_option_bugs_merge_once_each():
    p = jbodcheck("replay", S16234, "--bug", "KAFKA-16234", "--option", 'bugs=["KAFKA-16234"]', "--json", "-")
    assert p.returncode == 1, p.stderr
    assert _report(p)["model"]["options"] == {"bugs": ["KAFKA-16234"]}


def test_option_bugs_alone_still_works():
    p = jbodcheck("replay", S16234, "--option", "bugs=KAFKA-16234", "--json", "-")
    assert p.returncode == 1, p.stderr
    assert _report(p)["bounds"]["model"]["bugs"] == ["KAFKA-16234"]


def test_a_scenario_file_with_bugs_in_its_options_replays_with_them(tmp_path):
    scenario = json.loads(S16234.read_text())
    scenario["model"]["options"] = {"bugs": ["KAFKA-16234"]}
    path = tmp_path / "with-bug.json"
    path.write_text(json.dumps(scenario))
    p = jbodcheck("replay", path, "--json", "-")
    assert p.returncode == 1, p.stderr
    assert _report(p)["model"]["options"] == {"bugs": ["KAFKA-16234"]}
    # --bug adds to the file's switches instead of replacing them.
    p = jbodcheck("replay", path, "--bug", "KAFKA-16234", "--json", "-")
    assert p.returncode == 1 and _report(p)["model"]["options"] == {"bugs": ["KAFKA-16234"]}


def test_an_unknown_bug_is_bad_input_naming_the_known_ones():
    p = jbodcheck("replay", S16234, "--bug", "KAFKA-1")
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "KAFKA-1" in lines[0] and "Traceback" not in p.stderr
    assert all(bug in lines[0] for bug in BUGS)


def test_bug_with_a_zookeeper_variant_is_bad_input():
    for args in (("explore", "--preset", "tiny"), ("explore", "--variant", "kip112"), ("fuzz", "--preset", "tiny"),
                 ("rules", "--preset", "tiny")):
        p = jbodcheck(*args, "--bug", "KAFKA-16234")
        assert p.returncode == 2, (args, p.stderr)
        assert p.stderr.strip().splitlines() == ["jbodcheck: error: --bug applies to --variant kraft"], args


@pytest.mark.parametrize("command", ["explore", "replay", "fuzz", "serve", "rules"])
def test_every_command_with_model_options_takes_bug(command):
    p = jbodcheck(command, "--help")
    assert p.returncode == 0 and "--bug KAFKA-N" in p.stdout


def test_explore_with_bug_finds_the_violation_and_reports_the_switch():
    p = jbodcheck("explore", "--preset", "kraft-tiny-faults", "--bug", "KAFKA-16234", "--max-depth", "8",
                  "--invariant", "no_recreate_over_offline_copy", "--json", "-")
    assert p.returncode == 1, p.stderr
    report = _report(p)
    assert report["model"]["options"] == {"bugs": ["KAFKA-16234"]}
    assert report["bounds"]["model"]["bugs"] == ["KAFKA-16234"]


# ---- jbodcheck bugs -------------------------------------------------------------------------------------------------

def test_bugs_json_lists_every_switch_then_every_gap():
    p = jbodcheck("bugs", "--json")
    assert p.returncode == 0, p.stderr
    entries = json.loads(p.stdout)
    switches = [e for e in entries if e["expressed"]]
    gaps = [e for e in entries if not e["expressed"]]
    assert [e["id"] for e in switches] == list(BUGS)
    for e in switches:
        bug = BUGS[e["id"]]
        assert (e["broke"], e["fixed"], e["scenario"]) == (bug.broke, bug.fixed, f"scenarios/{bug.scenario}")
        assert (ROOT / e["scenario"]).is_file()
    assert [e["id"] for e in gaps] == list(not_expressed())
    assert all(e["why"] and e["broke"] and e["fixed"] for e in gaps)


def test_bugs_text_names_each_switch_and_gap():
    p = jbodcheck("bugs")
    assert p.returncode == 0, p.stderr
    for bug_id, bug in BUGS.items():
        assert f"--bug {bug_id}" in p.stdout and bug.scenario in p.stdout
    for bug_id, gap in not_expressed().items():
        assert bug_id in p.stdout and gap.why in p.stdout


def test_cli_md_s_bugs_example_lists_switches_as_switches_and_gaps_as_gaps():
    """docs/cli.md's `jbodcheck bugs` example: an id under "Not expressed yet" has no switch, one shown with
    `--bug` has one (issue 40: the example listed KAFKA-16157, which has a switch, as not expressed)."""
    import re
    text = (ROOT / "docs" / "cli.md").read_text()
    example = text[text.index("$ jbodcheck bugs"):]
    example = example[:example.index("```")]
    switches, _, gaps = example.partition("Not expressed yet:")
    assert set(re.findall(r"--bug (KAFKA-\d+)", switches)) <= set(BUGS)
    shown_gaps = re.findall(r"^(KAFKA-\d+) ", gaps, re.M)
    assert shown_gaps and set(shown_gaps) <= set(not_expressed())


def test_no_bug_is_both_a_switch_and_not_expressed():
    """A switch's id leaves NOT_EXPRESSED with its stale reason (issue 40: KAFKA-16365's and others' reasons had
    outlived the features that made them wrong)."""
    assert not set(NOT_EXPRESSED) & set(BUGS)
    assert "future replicas" not in NOT_EXPRESSED["KAFKA-16365"].why.replace("kraft-future", "")


def test_a_bug_with_a_switch_is_not_listed_as_not_expressed(monkeypatch):
    from model.kraft import bugs as registry

    some_gap = next(iter(NOT_EXPRESSED))
    monkeypatch.setitem(registry.BUGS, some_gap, registry.Bug("x", "9.9", "x.json"))
    assert some_gap not in registry.not_expressed()


# ---- the metadata.version upgrade: KAFKA-16162 and KAFKA-16757 ------------------------------------------------------

from explorer.catalog import build_model, preset_config  # noqa: E402
from explorer.scenario import load_scenario, parse_step, replay  # noqa: E402
from explorer.search import SearchOptions, bfs  # noqa: E402
from model.kraft.metadata import K_REGISTER, MIGRATING, UNASSIGNED, is_online  # noqa: E402
from model.spec.errors import ConfigError  # noqa: E402

MV_SCENARIOS = {"KAFKA-16162": "kraft-kafka-16162-no-leader-after-the-mv-upgrade.json",
                "KAFKA-16757": "kraft-kafka-16757-reregistration-fences-the-leader.json"}
LEADERSHIP = "kraft_leadership_as_leader_acceptor_allows"


def _replay(file: str, switches=(), **extra):
    scenario = load_scenario(str(SCENARIOS / file))
    params = dict(scenario.model)
    preset = params.pop("preset")
    options = {**params.pop("options", {}), "mv_upgrade": True, **extra}
    if switches:
        options["bugs"] = tuple(switches)
    model = build_model(preset_config(preset, **params, options=options))
    result, _trace, failed = replay(model, scenario, list(model.invariants))
    return result, failed


def test_the_mv_scenarios_are_the_switches_scenarios():
    for bug_id, file in MV_SCENARIOS.items():
        assert BUGS[bug_id].scenario == file and (SCENARIOS / file).is_file()


@pytest.mark.parametrize("bug_id", MV_SCENARIOS)
def test_mv_scenario_holds_without_its_switch(bug_id):
    result, failed = _replay(MV_SCENARIOS[bug_id])
    assert result.result == "ok" and not result.violations and failed == []


@pytest.mark.parametrize("bug_id", MV_SCENARIOS)
def test_mv_scenario_violates_leadership_with_its_switch(bug_id):
    result, failed = _replay(MV_SCENARIOS[bug_id], (bug_id,))
    assert result.result == "violation"
    assert [v.invariant.id for v in result.violations] == [LEADERSHIP]


def test_kafka_16162_leaves_the_partition_without_a_leader_while_an_isr_member_could_lead():
    result, failed = _replay(MV_SCENARIOS["KAFKA-16162"], ("KAFKA-16162",))
    assert "has no leader although its ISR member(s) [1]" in result.violations[0].message
    assert "expected partition 0's leader to be 0, found None" in failed


@pytest.mark.parametrize("kafka", ["3.7", "4.0", "4.4"])
def test_kafka_16757_fences_the_leader_by_its_reregistration(kafka):
    # The same incarnation writes no shutdown records at any release (3.7.0's registerBroker has none; from 4.0
    # handleBrokerShutdown is for a new incarnation), so the fenced broker keeps leading from 4.0 too.
    result, _ = _replay(MV_SCENARIOS["KAFKA-16757"], ("KAFKA-16757",), kafka=kafka)
    assert [len(v.trace) - 1 for v in result.violations] == [5]
    assert "broker 0 leads partition 0 but LeaderAcceptor refuses it" in result.violations[0].message


def test_kafka_16757s_reregistration_is_a_register_broker_record_alone():
    """At 4.4 the switch's re-registration (step 5) writes one batch, the RegisterBrokerRecord alone: fenced, the
    broker still leading (no handleBrokerShutdown record before it, as the same incarnation gets none)."""
    model = build_model(preset_config("kraft-mv-upgrade", options={"mv_upgrade": True, "bugs": ["KAFKA-16757"],
                                                                   "kafka": "4.4"}))
    scenario = load_scenario(str(SCENARIOS / MV_SCENARIOS["KAFKA-16757"]))
    s = model.init_states()[0]
    for number, text in enumerate(scenario.steps, 1):
        before = s
        s = model.step(s, *parse_step(model, text, number))[1]
    (batch,) = s.controller.log[len(before.controller.log):]
    assert [r.kind for r in batch] == [K_REGISTER]
    assert s.controller.registrations[0].fenced and s.controller.partitions[0].leader == 0


def test_is_online_of_an_empty_list_before_and_after_kafka_16162():
    assert is_online(0, ()) and is_online(0, (0,)) and not is_online(1, (0,))
    assert not is_online(0, (), empty_is_online=False)
    assert is_online(MIGRATING, (), empty_is_online=False) and is_online(UNASSIGNED, (), empty_is_online=False)


def test_before_kafka_16162s_fix_no_broker_reregisters():
    model = build_model(preset_config("kraft-mv-upgrade", options={"mv_upgrade": True, "bugs": ["KAFKA-16162"]}))
    result = bfs(model, [], SearchOptions(max_depth=6))
    assert result.coverage["BrokerReregister"] == 0 and result.coverage["UpgradeMetadataVersion"] > 0


@pytest.mark.parametrize("bug_id", MV_SCENARIOS)
def test_the_search_finds_each_switch(bug_id):
    # at 3.7, the bugs' release (KAFKA-16757's at 4.4 too: test_kafka_16757_fences_the_leader_by_its_reregistration)
    model = build_model(preset_config("kraft-mv-upgrade", options={"mv_upgrade": True, "bugs": [bug_id],
                                                                   "kafka": "3.7"}),
                        invariants=[LEADERSHIP])
    result = bfs(model, list(model.invariants), SearchOptions(max_depth=12))
    assert result.result == "violation" and result.violations[0].invariant.id == LEADERSHIP


def test_mv_upgrade_needs_one_dir_per_broker():
    with pytest.raises(ConfigError, match="--dirs must be 1"):
        build_model(preset_config("kraft-mv-upgrade", dirs=2))
    p = jbodcheck("explore", "--preset", "kraft-mv-upgrade", "--dirs", "2")
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1


def test_kraft_tiny_has_neither_the_upgrade_nor_its_invariant():
    model = build_model(preset_config("kraft-tiny-faults"))
    assert not model.has_feature("kraft-mv-upgrade")
    assert LEADERSHIP not in {i.id for i in model.invariants}
    assert {"UpgradeMetadataVersion", "BrokerReregister"} <= set(model.absent_rules)


@pytest.mark.slow
@pytest.mark.long_run
def test_kraft_mv_upgrade_exhausts_with_every_rule_of_its_configuration_fired():
    model = build_model(preset_config("kraft-mv-upgrade"))
    assert LEADERSHIP in {i.id for i in model.invariants}
    result = bfs(model, list(model.invariants), SearchOptions(all_violations=True))
    # Only kraft-core's quiescent Directories check fails: a replica created before the upgrade keeps MIGRATING
    # on a running broker, as Kafka's code does (docs/kraft.md, finding 7).
    assert {v.invariant.id for v in result.violations} == {"kraft_directories_match_actual_dir"}
    assert {n for n, k in result.coverage.items() if k} == {r.name for r in model.rules if r.domain(model)}


@pytest.mark.slow
@pytest.mark.long_run
def test_the_leadership_invariant_holds_on_kraft_tiny_too():
    from invariants.kraft.safety import kraft_leadership_as_leader_acceptor_allows as leadership

    model = build_model(preset_config("kraft-tiny-faults"), invariants=[leadership.invariant])
    result = bfs(model, list(model.invariants), SearchOptions())
    assert result.result == "ok"


# ---- kraft_leadership_as_leader_acceptor_allows breaks on hand-made states ------------------------------------------

def _with_partition(model, **changes):
    """kraft-mv-upgrade's cluster with partition 0 created, then its partition state changed."""
    from explorer.scenario import parse_step

    _, s = model.step(model.init_states()[0], *parse_step(model, "CreateTopic(partition=0)", 1))
    c = s.controller
    part = c.partitions[0]._replace(**changes)
    return (s._replace(controller=c._replace(partitions=(part,) + c.partitions[1:])),)


def _leader_fenced(model):
    (s,) = _with_partition(model)
    leader = s.controller.partitions[0].leader
    regs = list(s.controller.registrations)
    regs[leader] = regs[leader]._replace(fenced=True)
    return (s._replace(controller=s.controller._replace(registrations=tuple(regs))),)


def _leaderless_with_an_acceptable_member(model):
    return _with_partition(model, leader=-1)


BROKEN_HERE = {LEADERSHIP: [_leader_fenced, _leaderless_with_an_acceptable_member]}


@pytest.mark.parametrize("make", BROKEN_HERE[LEADERSHIP], ids=lambda f: f.__name__)
def test_the_leadership_invariant_breaks_on_hand_made_states(make):
    model = build_model(preset_config("kraft-mv-upgrade"))
    check = next(i for i in model.invariants if i.id == LEADERSHIP).check
    assert check(model, *make(model))
    assert check(model, *_with_partition(model)) is None     # the state they start from holds
