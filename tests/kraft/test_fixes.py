"""The candidate fixes of the KRaft findings (model/kraft/fixes.py; docs/fixes.md): `--fix` on every command with
MODEL options, merged with `--option candidate_fixes=...` and a scenario file's options, refused for an unknown
name, a ZooKeeper variant or a configuration without the fix's feature; the reports name the fixes with the
bounds; `jbodcheck fixes` lists the catalogue; each finding's scenario replays to its violation without its fix
and holds (or is refused at the step the fix blocks) with it; the naive fixes fail where the table says; the
availability the fixes cost; every fix with every pair of KRaft features."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from explorer.catalog import build_model, builtin_invariants, preset_config
from explorer.cli.compare import generated_block
from explorer.cli.compare_fixes import CONFIG_NAMES, CONFIGS, RECOMMENDED, compare_fixes, markdown
from explorer.cli.model_value import model_config
from explorer.scenario import ScenarioError, load_scenario, replay
from explorer.search import SearchOptions, bfs
from model.kraft.fixes import (
    ASSIGN_LOST, ELECT_BY_ASSIGNED, FIXES, FIXES_OPTION, GATE2_STRICT, KEEP_PROMOTION, LIST_ADDED,
    OFFLINE_DIRS_FIRST, PROMOTE_CAUGHT_UP, UNFENCE_WITHOUT_OFFLINE,
)
from model.kraft.metadata import LOST, UNASSIGNED
from model.spec.engine import rebuild_trace
from model.storage.state import H_STOPPED, NO_LEADER

from support.helpers import REPO, SCENARIOS, init, run
from support.profiles import profile_name
from support.kraft_pairs import PAIRS, pair_config


def jbodcheck(*args, timeout=120):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "explorer", *map(str, args)], capture_output=True, text=True,
                          cwd=REPO, env=env, timeout=timeout)


F1 = SCENARIOS / "kraft-finding-1-replica-recreated-over-failed-dir.json"
F1_LOSS = SCENARIOS / "kraft-finding-1-acked-record-lost.json"
F2 = SCENARIOS / "kraft-finding-2-reset-promotion-loses-its-revert.json"
F3 = SCENARIOS / "kraft-finding-3-assignment-elects-by-the-old-dir.json"
F4 = SCENARIOS / "kraft-finding-4-stale-future-log-promoted-at-start-up.json"
F5 = SCENARIOS / "kraft-finding-5-unfenced-leader-on-failed-dir.json"
F6 = SCENARIOS / "kraft-finding-6-added-replica-stays-unassigned.json"


# ---- the catalogue and `jbodcheck fixes` ------------------------------------------------------------------------

def test_every_data_loss_or_unavailability_finding_has_a_fix():
    targeted = {n for fix in FIXES.values() for n in fix.findings}
    assert {1, 4, 5, 6} <= targeted and {2, 3} <= targeted
    for name, fix in FIXES.items():
        assert fix.where and fix.change and fix.release.startswith("3.9.2"), name
        assert fix.competes is None or FIXES[fix.competes].competes == name   # a competing pair names each other


def test_fixes_command_lists_every_fix_with_its_findings_and_the_code_it_changes():
    p = jbodcheck("fixes")
    assert p.returncode == 0, p.stderr
    for name, fix in FIXES.items():
        assert f"{name}  [--fix {name}; finding {', '.join(map(str, fix.findings))}; against " in p.stdout
        assert f"changes: {fix.where}" in p.stdout
    assert "needs the feature kraft-future: --preset kraft-future" in p.stdout
    assert f"an alternative to: {ASSIGN_LOST}" in p.stdout


def test_fixes_json():
    p = jbodcheck("fixes", "--json")
    assert p.returncode == 0, p.stderr
    entries = json.loads(p.stdout)
    assert [e["name"] for e in entries] == list(FIXES)
    by_name = {e["name"]: e for e in entries}
    assert by_name[LIST_ADDED] == {"name": LIST_ADDED, "findings": [6], "where": FIXES[LIST_ADDED].where,
                                   "change": FIXES[LIST_ADDED].change, "release": FIXES[LIST_ADDED].release,
                                   "feature": "kraft-reassignment", "competes": None}


# ---- --fix: merging, bounds, refusals -----------------------------------------------------------------------------

def test_fix_flag_is_named_with_the_bounds_and_merges_with_the_option_and_the_scenario_file():
    p = jbodcheck("replay", F1, "--fix", ASSIGN_LOST, "--option", f'{FIXES_OPTION}=["{ASSIGN_LOST}"]',
                  "--fix", UNFENCE_WITHOUT_OFFLINE, "--json", "-")
    assert p.returncode == 0, p.stderr
    report = json.loads(p.stdout)
    assert report["model"]["options"] == {FIXES_OPTION: [ASSIGN_LOST, UNFENCE_WITHOUT_OFFLINE]}
    assert report["bounds"]["model"][FIXES_OPTION] == [ASSIGN_LOST, UNFENCE_WITHOUT_OFFLINE]
    assert f"{FIXES_OPTION}={ASSIGN_LOST},{UNFENCE_WITHOUT_OFFLINE}" in report["bounds"]["text"]
    # A scenario file's own options (kraft-future's record) stay under --fix.
    base = dict(load_scenario(str(F4)).model)
    cfg = model_config(base.pop("preset"), {"fix_names": (PROMOTE_CAUGHT_UP,)}, base=base)
    assert cfg.max_records == 1 and dict(cfg.options)[FIXES_OPTION] == (PROMOTE_CAUGHT_UP,)
    assert dict(cfg.options)["alter_log_dirs"] == 1


def test_the_text_verdict_names_the_fix():
    # findings 1 and 5's properties (finding 8's, which no fix targets, is violated here with or without them)
    p = jbodcheck("explore", "--preset", "kraft-tiny-faults", "--brokers", "1", "--rf", "1", "--fix", ASSIGN_LOST,
                  "--fix", UNFENCE_WITHOUT_OFFLINE, "--invariant", "no_recreate_over_offline_copy",
                  "--invariant", "no_acked_record_lost", "--invariant", "leader_is_live_isr_member", "-q")
    assert p.returncode == 0, p.stdout + p.stderr
    assert f"{FIXES_OPTION}={ASSIGN_LOST},{UNFENCE_WITHOUT_OFFLINE}" in p.stdout


@pytest.mark.parametrize("args,message", [
    (("--preset", "kraft-tiny-faults", "--fix", "nope"), "--fix nope: unknown fix (known: gate2-strict"),
    (("--preset", "tiny", "--fix", GATE2_STRICT), "--fix applies to --variant kraft"),
    (("--preset", "kraft-tiny-faults", "--fix", LIST_ADDED),
     f"fix {LIST_ADDED} needs the feature kraft-reassignment, which this model does not include (the fix would "
     "change nothing): turn it on with --preset kraft-reassignment or --reassignment"),
    (("--preset", "kraft-tiny-faults", "--fix", KEEP_PROMOTION),
     f"fix {KEEP_PROMOTION} needs the feature kraft-future"),
    (("--preset", "kraft-tiny-faults", "--option", f"{FIXES_OPTION}=nope"), "unknown fix(es) nope"),
])
def test_refusals_are_one_line_and_exit_2(args, message):
    p = jbodcheck("explore", *args, "--max-states", "10")
    assert p.returncode == 2, p.stdout + p.stderr
    assert message in p.stderr and len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr


# ---- each finding's scenario: its violation without the fix, gone with it ------------------------------------------

def _replay(path, fixes=()):
    scenario = load_scenario(str(path))
    base = dict(scenario.model)
    preset = base.pop("preset", None)
    cfg = model_config(preset, {"fix_names": tuple(fixes)} if fixes else {}, base=base)
    model = build_model(cfg, preset=preset)
    result, trace, _failed = replay(model, scenario, list(model.invariants))
    return {v.invariant.id for v in result.violations}, trace


# scenario, its finding's violations, the fix, what is refused (None: every step replays)
FINDINGS = [
    (F1, {"no_recreate_over_offline_copy"}, GATE2_STRICT, None),
    (F1, {"no_recreate_over_offline_copy"}, ASSIGN_LOST, None),
    (F1_LOSS, {"no_recreate_over_offline_copy", "no_acked_record_lost"}, ASSIGN_LOST, None),
    (F2, {"kraft_directories_name_the_log_dir", "leader_is_live_isr_member", "metadata_shows_offline_replicas"},
     KEEP_PROMOTION, "step 12 BrokerReplay(broker=0) is not enabled: broker 0 applied the whole metadata log"),
    (F3, {"kraft_leader_passes_leader_acceptor"}, ELECT_BY_ASSIGNED, None),
    (F4, {"no_acked_record_lost"}, PROMOTE_CAUGHT_UP, None),
    (F5, {"leader_is_live_isr_member"}, UNFENCE_WITHOUT_OFFLINE, None),
    (F6, {"kraft_directories_match_actual_dir"}, LIST_ADDED, None),
]


@pytest.mark.parametrize("path,violated,fix,refused", FINDINGS, ids=[f"{p.stem[:16]}-{f}" for p, _, f, _ in FINDINGS])
def test_a_fix_removes_its_findings_violation(path, violated, fix, refused):
    found, _ = _replay(path)
    assert violated <= found
    if refused is not None:
        # The fix changes what the scenario's step needs: the replay stops there with the reason.
        with pytest.raises(ScenarioError, match=re.escape(refused)):
            _replay(path, (fix,))
        return
    found, _ = _replay(path, (fix,))
    assert not found & violated, found


def test_with_keep_promotion_state_finding_2s_revert_is_queued_and_delivered():
    """Finding 2's first 11 steps with the fix: the delta of step 8 no longer resets the Queued promotion, so the
    dir failure of step 9 reverts it (Assign(dir 0) replaces the queued Assign(dir 1)); the controller's
    Directories keeps naming dir 0, the failed dir of the log, and step 12 has no batch to replay."""
    scenario = load_scenario(str(F2))
    model = build_model(preset_config("kraft-future", options={"alter_log_dirs": 1, FIXES_OPTION: [KEEP_PROMOTION]}))
    state = model.init_states()[0]
    for text in scenario.steps[:11]:
        from explorer.scenario import parse_step
        _action, state = model.step(state, *parse_step(model, text, 0))
        assert not any(i.check(model, state) for i in model.invariants if i.kind == "state")
    assert state.controller.partitions[0].dirs == (0,)


def test_the_naive_fix_of_finding_5_does_not_remove_it_and_breaks_leader_acceptor():
    """offline-dirs-before-unfence moves handleDirectoriesOffline's records first, but every handler of the
    heartbeat reads the image before it: the unfencing still elects broker 0 on dir 0, now after the record that
    drops dir 0 from its registration."""
    found, _ = _replay(F5, (OFFLINE_DIRS_FIRST,))
    assert {"leader_is_live_isr_member", "kraft_leader_passes_leader_acceptor"} <= found
    found, _ = _replay(F5, (OFFLINE_DIRS_FIRST, UNFENCE_WITHOUT_OFFLINE))
    assert "leader_is_live_isr_member" not in found


def _run(model, steps):
    return run(model, init(model), *((name, *args) for name, args in steps))


def test_gate2_strict_leaves_a_new_topic_uncreated_under_a_leader_that_cannot_serve():
    """The cost of the literal gate-2 change: a topic created while a dir has failed but is not yet reported gets
    UNASSIGNED, the broker skips it (a reserved id is never indexed, so handleDirectoriesOffline moves nothing):
    leader 0 with no log, at quiescence. Kafka creates it on the live dir."""
    cfg = dict(brokers=1, rf=1)
    steps = [("CreateTopic", (0,)), ("DirFail", (0, 0)), ("BrokerHeartbeat", (0,)), ("BrokerReplay", (0,)),
             ("BrokerReplay", (0,))]
    strict = build_model(preset_config("kraft-tiny-faults", **cfg, options={FIXES_OPTION: [GATE2_STRICT]}))
    state = _run(strict, steps)
    assert state.controller.partitions[0].leader == 0 and state.controller.partitions[0].dirs == (UNASSIGNED,)
    assert state.brokers[0].hosted[0] == H_STOPPED and strict.is_quiescent(state)
    broken = {i.id for i in strict.invariants if i.kind == "quiescent" and i.check(strict, state)}
    assert "leader_is_live_isr_member" in broken
    # Kafka as read: the log is created on dir 1 and its assignment recorded; nothing is broken at quiescence.
    plain = build_model(preset_config("kraft-tiny-faults", **cfg))
    state = _run(plain, steps + [("BrokerSendAssignments", (0,)), ("ControllerAssignReplicasToDirs", (0,)),
                                 ("BrokerReplay", (0,))])
    assert state.controller.partitions[0].dirs == (1,) and plain.is_quiescent(state)
    assert not any(i.check(plain, state) for i in plain.invariants if i.kind in ("state", "quiescent"))


# ---- what assign-lost-at-start-up costs ----------------------------------------------------------------------------

def test_assign_lost_keeps_the_replica_off_the_broker_until_the_disk_is_back():
    """RF 2 (finding 1's 7 steps): Kafka re-creates broker 0's replica empty on dir 1 (broker 1 leads, so it would
    catch up); with the fix broker 0 holds no log of it, assigns it to LOST and leaves the ISR: the partition runs
    on broker 1 alone until dir 0 is repaired (docs/fixes.md)."""
    model = build_model(preset_config("kraft-tiny-faults", options={FIXES_OPTION: [ASSIGN_LOST]}))
    steps = [("CreateTopic", (0,)), ("BrokerReplay", (0,)), ("DirFail", (0, 0)), ("BrokerCrash", (0,)),
             ("ControllerFenceBroker", (0,)), ("BrokerRestart", (0,)), ("BrokerLoad", (0,)),
             ("BrokerRegister", (0,)), ("BrokerSendAssignments", (0,)), ("ControllerAssignReplicasToDirs", (0,))]
    state = _run(model, steps[:7])
    b0 = state.brokers[0]
    assert b0.hosted[0] == H_STOPPED and b0.copies[0] == 1 and b0.queue == ((0, LOST, 1),)
    state = _run(model, steps)
    part = state.controller.partitions[0]
    assert part.dirs == (LOST, UNASSIGNED) and part.leader == 1 and part.isr == 0b10


def test_assign_lost_leaves_a_partition_whose_only_copy_is_on_the_failed_dir_leaderless():
    """RF 1 (finding 1's loss route): the acknowledged record exists only on failed dir 0; with the fix the
    partition has no leader until the disk is back, as ZooKeeper mode's refusal leaves it, where Kafka elects the
    empty re-created log."""
    model = build_model(preset_config("kraft-tiny-faults", brokers=1, rf=1, max_records=1,
                                      options={FIXES_OPTION: [ASSIGN_LOST]}))
    steps = [("CreateTopic", (0,)), ("BrokerReplay", (0,)), ("Produce", (0, 0)), ("DirFail", (0, 0)),
             ("BrokerCrash", (0,)), ("ControllerFenceBroker", (0,)), ("BrokerRestart", (0,)),
             ("BrokerRegister", (0,)), ("BrokerLoad", (0,)), ("BrokerHeartbeat", (0,)),
             ("BrokerSendAssignments", (0,)), ("ControllerAssignReplicasToDirs", (0,)), ("BrokerReplay", (0,)),
             ("BrokerReplay", (0,))]
    state = _run(model, steps)
    part = state.controller.partitions[0]
    assert part.leader == NO_LEADER and part.dirs == (LOST,) and state.acked[0]
    assert model.is_quiescent(state)
    assert not any(i.check(model, state) for i in model.invariants if i.kind in ("state", "quiescent"))


# ---- every recommended fix with every pair of KRaft features -----------------------------------------------------

@pytest.mark.parametrize("a,b", PAIRS, ids=[f"{a}+{b}" for a, b in PAIRS])
def test_every_fix_explores_with_two_kraft_features(a, b):
    base = pair_config(a, b)
    included = {f.name for f in build_model(base).features}
    fixes = [f for f in RECOMMENDED if FIXES[f].feature is None or FIXES[f].feature in included]
    cfg = preset_config("kraft-tiny-faults", **{**base.as_dict(), "options": {**dict(base.options),
                                                                              FIXES_OPTION: fixes}})
    model = build_model(cfg)
    result = bfs(model, list(model.invariants), SearchOptions(all_violations=True, max_states=8_000))
    assert result.result in ("ok", "violation", "bounded"), result.note
    for v in result.violations:
        replayed = rebuild_trace(model, [action for action, _ in v.trace[1:]])
        assert model.fingerprint(replayed[-1][1]) == model.fingerprint(v.trace[-1][1])


# ---- the same fix on Kafka's own controller classes --------------------------------------------------------------

@pytest.mark.skipif(profile_name() != "thorough" or not (shutil.which("java") and shutil.which("mvn")),
                    reason="thorough profile with Java and Maven: fetches Kafka 3.9.2's jars from Maven Central")
def test_finding_5_and_its_fix_on_kafka_3_9_2s_controller_classes(tmp_path):
    """docs/fixes/check-finding-5.sh: Finding5Check.java drives kafka-metadata 3.9.2's ReplicationControlManager
    through finding 5's steps; as released the heartbeat elects the broker on the dir it reports offline (exit 1),
    with realkafka/patches/unfence-without-offline-dirs/3.9.2.diff compiled in the partition has no leader (exit 0)."""
    p = subprocess.run([str(REPO / "docs" / "fixes" / "check-finding-5.sh"), str(tmp_path)], capture_output=True,
                       text=True, timeout=900)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    released, patched = p.stdout.split("== Kafka 3.9.2 with realkafka/patches/unfence-without-offline-dirs/3.9.2.diff")
    assert "finding 5: broker 0 leads the partition on dir 0" in released and "exit 1" in released
    assert "no leader on the offline dir: the partition has leader -1" in patched and "exit 0" in patched


# ---- docs/fixes.md: the table `jbodcheck compare --fixes` generates ------------------------------------------------

DOC = REPO / "docs" / "fixes.md"
# The sections the ci profile regenerates (seconds); the thorough profile regenerates every section (hours).
QUICK = tuple(c.name for c in CONFIGS if c.quick)


def _doc_sections() -> dict:
    block = generated_block(DOC.read_text())
    sections = {}
    for part in ("\n" + block).split("\n### ")[1:]:
        name = part.split("`")[1]
        sections[name] = ("### " + part).strip()
    return sections


def test_docs_fixes_md_has_a_section_per_configuration_and_names_every_fix():
    assert list(_doc_sections()) == list(CONFIG_NAMES)
    text = DOC.read_text()
    for name in FIXES:
        assert f"`{name}`" in text, name


@pytest.mark.parametrize("name", CONFIG_NAMES if profile_name() == "thorough" else QUICK)
def test_compare_fixes_regenerates_the_section_in_the_docs(name, tmp_path):
    data = compare_fixes((name,), str(tmp_path / "fixes-scenarios"))
    assert markdown(data, "fixes-scenarios").strip() == _doc_sections()[name], (
        f"docs/fixes.md's section {name} is out of date: regenerate it (jbodcheck compare --fixes)")


def _linked_scenarios() -> list[str]:
    return sorted(set(re.findall(r"\]\((fixes-scenarios/[^)]+\.json)\)", DOC.read_text())))


def test_every_scenario_the_table_links_replays_to_its_violation():
    ids = sorted((i.id for i in builtin_invariants()), key=len, reverse=True)
    links = _linked_scenarios()
    assert links
    for link in links:
        path = REPO / "docs" / link
        scenario = load_scenario(str(path))
        invariant = next(i for i in ids if path.stem.endswith("-" + i))
        base = dict(scenario.model)
        preset = base.pop("preset", None)
        model = build_model(model_config(preset, {}, base=base), preset=preset)
        prop = next(i for i in model.all_invariants if i.id == invariant)
        result, _trace, _failed = replay(model, scenario, [prop])
        assert invariant in {v.invariant.id for v in result.violations}, link


def test_compare_fixes_refuses_an_unknown_configuration_and_workers():
    p = jbodcheck("compare", "--fixes", "--configs", "kraft-tiny-faults-rf1-data,nope", "-q")
    assert p.returncode == 2 and "unknown configuration nope (known: kraft-tiny-faults-rf1-data" in p.stderr
    p = jbodcheck("compare", "--fixes", "--configs", "kraft-tiny-faults-rf1-data", "--workers", "2", "-q")
    assert p.returncode == 2 and "--workers 1" in p.stderr


def test_a_deleted_topics_copy_on_a_failed_dir_is_not_the_re_created_topics():
    """Found by the fixes table (kraft-deletion, every fix): once finding 1's path is closed, the shortest
    no_recreate_over_offline_copy was a re-created topic's new log beside the deleted topic's copy on failed dir 0,
    the same without a fix. That copy is stray (LogManager.isStrayKraftReplica drops it at a start with the disk
    back: no duplicate), so the property no longer counts it; finding 1 on the same preset still breaks it."""
    steps = [("CreateTopic", (0,)), ("BrokerReplay", (0,)), ("DirFail", (0, 0)), ("BrokerHeartbeat", (0,)),
             ("BrokerCrash", (0,)), ("DeleteTopic", (0,)), ("CreateTopic", (0,)), ("ControllerFenceBroker", (0,)),
             ("BrokerRestart", (0,)), ("BrokerLoad", (0,))]
    transition = [i for i in build_model(preset_config("kraft-deletion")).invariants
                  if i.id == "no_recreate_over_offline_copy"]
    for options in ({}, {FIXES_OPTION: list(RECOMMENDED[:3])}):
        model = build_model(preset_config("kraft-deletion", options=options))
        state = _run(model, steps[:-1])
        assert state.brokers[0].stray[0] == 0b01 and state.brokers[0].copies[0] == 0b01
        action, after = model.step(state, *steps[-1])
        assert after.brokers[0].copies[0] == 0b10       # the re-created topic's log on dir 1 (the stray one dropped)
        assert transition[0].check(model, state, action, after) is None
    model = build_model(preset_config("kraft-deletion"))
    finding1 = [("CreateTopic", (0,)), ("BrokerReplay", (0,)), ("DirFail", (0, 0)), ("BrokerCrash", (0,)),
                ("ControllerFenceBroker", (0,)), ("BrokerRestart", (0,))]
    state = _run(model, finding1)
    action, after = model.step(state, "BrokerLoad", (0,))
    assert transition[0].check(model, state, action, after) is not None
