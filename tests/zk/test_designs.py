"""The other designs (docs/model.md, section 12): KIP-112's draft (created list) as features over the adopted
design's core, the core hook it overrides, and the invariants the designs claim (invariants/zk/designs.py), each
with a hand-made case that breaks it."""
from __future__ import annotations

import pytest

from invariants.zk import designs as D
from model import Model, ModelConfig
from model.zk.design_draft import in_created
from explorer.catalog import preset_config
from model.storage.state import E_NONE, H_FOLLOWER, H_LEADER, H_OFFLINE, OFFLINE

from support.helpers import created_topic, deliver_all, init, run, step
from support.console_blocks import console_blocks, matches_with_trims
from explorer.catalog import build_model

TINY = dict(max_records=0, consumer=False)


def tiny(variant: str, **params) -> Model:
    return build_model(preset_config("tiny", variant=variant, **{**TINY, **params}))


def created(model, state, p=0):
    return [b for b in range(model.cfg.brokers) if in_created(model.ext(state, "created"), p, b)]


def copy_dir(broker, p=0):
    return broker.copies[p].bit_length() - 1


# ---- the core hook ----------------------------------------------------------------------------------------

# The design invariants (invariants/zk/designs.py) whose breaking cases are the tests below (each asserts the
# invariant's message on a state that breaks it); tests/zk/test_invariants.py counts them as covered.
BROKEN_HERE = ("refusal_only_for_a_lost_copy", "no_recreate_over_offline_copy", "offline_replicas_are_known",
               "dir_failure_spares_other_dirs")


def test_the_adopted_design_keeps_the_state_machines_choice_of_is_new_replica():
    m = build_model(ModelConfig())
    assert m.hooks.is_new_replica(None, 0, 0, True) is True
    assert m.hooks.is_new_replica(None, 0, 0, False) is False
    s = step(m, init(m), "CreateTopic", 0)
    assert all(e.is_new for b in s.brokers for msg in b.inbox if msg.kind == 0 for e in msg.body)


# ---- the draft's created list -----------------------------------------------------------------------------

def test_an_error_free_response_adds_the_broker_to_the_created_list():
    m = tiny("kip112-draft")
    s = step(m, init(m), "CreateTopic", 0)
    assert created(m, s) == []
    s = run(m, s, ("BrokerLeaderAndIsr", 0))
    assert s.brokers[0].replies[-1] == ((0, E_NONE),)
    s = run(m, s, ("ControllerLeaderAndIsrResponse", 0))
    assert created(m, s) == [0]
    s = deliver_all(m, s)
    assert created(m, s) == [0, 1]


def test_the_created_list_decides_create_and_survives_a_failover():
    m = tiny("kip112-draft")
    s = created_topic(m)
    s = run(m, s, ("ControllerFailover",))
    entries = {b: [e for msg in s.brokers[b].inbox if msg.kind == 0 for e in msg.body] for b in (0, 1)}
    assert entries[0] and entries[1]
    assert not any(e.is_new for es in entries.values() for e in es), "both brokers are in the created list"
    assert created(m, s) == [0, 1]
    # A broker not in the list is asked to create (after kafka-log-dirs.sh removed it).
    s = run(m, created_topic(m), ("ResetCreatedLists", 1), ("ControllerFailover",))
    assert created(m, s) == [0]
    is_new = {b: [e.is_new for msg in s.brokers[b].inbox if msg.kind == 0 for e in msg.body] for b in (0, 1)}
    assert is_new == {0: [False], 1: [True]}


def test_the_reset_is_bounded_and_needs_a_listed_broker():
    m = tiny("kip112-draft")
    s = init(m)
    assert "no created list" in m.rule("ResetCreatedLists").guard(m, s, 0)
    s = run(m, created_topic(m), ("ResetCreatedLists", 0))
    s = deliver_all(m, run(m, s, ("ControllerFailover",)))
    # Broker 0 is asked with create=true and holds the log, but the leader epoch is unchanged: it answers
    # STALE_CONTROLLER_EPOCH, not NONE, so it does not re-enter the list.
    assert created(m, s) == [1]
    assert "used up" in m.rule("ResetCreatedLists").guard(m, s, 0)
    assert tiny("kip112-draft", max_created_resets=0).rule("ResetCreatedLists").domain(
        tiny("kip112-draft", max_created_resets=0)) == []


def test_a_deleted_replica_leaves_the_created_list():
    m = build_model(preset_config("deletion", variant="kip112-draft"))
    s = created_topic(m)
    assert created(m, s) == [0, 1]
    s = deliver_all(m, step(m, s, "DeleteTopic", 0))
    assert created(m, s) == []


# ---- what each design buys and costs (the hand-made cases of the new invariants) ----------------------------

def _failover_before_creation(m):
    """The topic is created; broker 1's dir 0 fails before it handles the LeaderAndIsr; the controller fails
    over (the request is lost) and the new one probes every replica."""
    s = run(m, init(m), ("CreateTopic", 0), ("DirFail", 1, 0), ("ControllerFailover",))
    return deliver_all(m, s)


def test_the_adopted_design_never_creates_a_replica_whose_request_a_failover_lost():
    m = tiny("kip112")
    s = _failover_before_creation(m)
    assert m.is_quiescent(s)
    assert s.brokers[1].hosted[0] == H_OFFLINE and s.brokers[1].copies[0] == 0
    assert "never created" in D.refusal_only_for_a_lost_copy(m, s)


def test_the_draft_creates_it():
    m = tiny("kip112-draft")
    s = _failover_before_creation(m)
    assert s.brokers[1].hosted[0] in (H_LEADER, H_FOLLOWER) and s.brokers[1].dirs[copy_dir(s.brokers[1])] != OFFLINE
    assert D.refusal_only_for_a_lost_copy(m, s) is None
    assert created(m, s) == [0, 1]


def test_the_draft_refuses_a_replaced_disk_for_good_without_the_admin_step():
    m = tiny("kip112-draft")
    s = created_topic(m)
    d = copy_dir(s.brokers[1])
    s = run(m, s, ("BrokerCrash", 1), ("DirFail", 1, d), ("ReplaceDisk", 1, d))
    s = deliver_all(m, run(m, deliver_all(m, s), ("BrokerRestart", 1)))
    assert s.brokers[1].hosted[0] == H_OFFLINE
    assert "never created" in D.refusal_only_for_a_lost_copy(m, s)
    # With kafka-log-dirs.sh run after the disk is fixed (before the restart), it is re-created.
    s = created_topic(m)
    s = run(m, s, ("BrokerCrash", 1), ("DirFail", 1, d), ("ReplaceDisk", 1, d))
    s = run(m, deliver_all(m, s), ("ResetCreatedLists", 1), ("BrokerRestart", 1))
    s = deliver_all(m, s)
    assert s.brokers[1].hosted[0] in (H_LEADER, H_FOLLOWER)
    assert D.refusal_only_for_a_lost_copy(m, s) is None


def test_the_draft_recreates_over_an_offline_copy_when_the_admin_step_runs_too_early():
    m = tiny("kip112-draft")
    s = created_topic(m)
    d = copy_dir(s.brokers[1])
    s = deliver_all(m, run(m, s, ("DirFail", 1, d)))
    assert s.brokers[1].hosted[0] == H_OFFLINE
    s = run(m, s, ("ResetCreatedLists", 1))  # too early: the disk is not fixed
    # While broker 1 runs, its replica is marked offline and answers KAFKA_STORAGE_ERROR whatever it is asked;
    # after a restart (nothing hosted) a LeaderAndIsr with create=true makes it create a new empty log.
    s = run(m, s, ("BrokerCrash", 1))
    s = deliver_all(m, s)
    s = run(m, s, ("BrokerRestart", 1), ("ControllerBrokerStartup", 1))
    b = 1
    assert any(e.is_new for msg in s.brokers[b].inbox if msg.kind == 0 for e in msg.body)
    after = step(m, s, "BrokerLeaderAndIsr", b)
    action = m.step(s, "BrokerLeaderAndIsr", (b,))[0]
    message = D.no_recreate_over_offline_copy(m, s, action, after)
    assert message and "out of reach" in message
    # The adopted design asks with isNewReplica=false and refuses.
    k = tiny("kip112")
    t = deliver_all(k, run(k, created_topic(k), ("DirFail", 1, d)))
    t = deliver_all(k, run(k, t, ("BrokerCrash", 1)))
    t = run(k, t, ("BrokerRestart", 1), ("ControllerBrokerStartup", 1))
    action, after = k.step(t, "BrokerLeaderAndIsr", (1,))
    assert D.no_recreate_over_offline_copy(k, t, action, after) is None
    assert after.brokers[1].hosted[0] == H_OFFLINE


def test_offline_replicas_are_known_is_broken_while_the_controller_has_not_heard():
    m = tiny("kip112")
    s = created_topic(m)
    d = copy_dir(s.brokers[1])
    s = run(m, s, ("DirFail", 1, d))
    assert "does not know" in D.offline_replicas_are_known(m, s)
    assert D.offline_replicas_are_known(m, deliver_all(m, s)) is None


# ---- KIP-18 ---------------------------------------------------------------------------------------------------

def test_kip18_restarts_a_failed_dirs_partition_on_a_good_dir():
    """KIP-18's workflow for a leader (Restarted Partition Leader Selector, case a): broker 0 leads; its dir
    fails; it drops the partition and writes it under /restart_partitions; the controller moves leadership to
    broker 1 and sends LeaderAndIsr to both; broker 0 creates the replica again on its good dir and follows."""
    m = tiny("kip18")
    s = created_topic(m)
    assert s.controller.partitions[0].leader == 0
    d = copy_dir(s.brokers[0])
    s = run(m, s, ("DirFail", 0, d))
    assert s.brokers[0].hosted[0] == 0 and m.ext(s, "restart_unwritten") == 1 and s.notifications == 0
    assert "does not know" in D.offline_replicas_are_known(m, s)
    s = run(m, s, ("BrokerReadRestartPartitions", 0), ("BrokerWriteRestartPartitions", 0))
    assert m.ext(s, "restart_znode") == 1 and m.ext(s, "restart_unwritten") == 0 and not m.is_quiescent(s)
    s = deliver_all(m, run(m, s, ("ControllerRestartPartitions",)))
    assert m.ext(s, "restart_znode") == 0 and m.is_quiescent(s)
    assert s.controller.partitions[0].leader == 1
    assert s.brokers[0].hosted[0] == H_FOLLOWER and s.brokers[0].copies[0] == (1 << d) | (1 << (1 - d))
    assert D.offline_replicas_are_known(m, s) is None


def test_kip18_loses_a_concurrent_restart_partitions_update():
    """Two brokers' read-modify-writes interleave: broker 1's write, based on the empty znode it read, overwrites
    broker 0's entry; partition 1 is never restarted on broker 0, which stays in its ISR without its log."""
    m = build_model(preset_config("kip18-lost-update", variant="kip18"))
    s = deliver_all(m, run(m, init(m), ("CreateTopic", 0), ("CreateTopic", 1)))
    lost0 = [d for d in range(2) if s.brokers[0].copies[1] >> d & 1][0]   # broker 0's dir of partition 1
    lost1 = [d for d in range(2) if s.brokers[1].copies[0] >> d & 1][0]   # broker 1's dir of partition 0
    assert s.brokers[0].copies[0] != s.brokers[0].copies[1]
    s = run(m, s, ("DirFail", 0, lost0), ("DirFail", 1, lost1),
            ("BrokerReadRestartPartitions", 0), ("BrokerReadRestartPartitions", 1),
            ("BrokerWriteRestartPartitions", 0), ("BrokerWriteRestartPartitions", 1))
    znode = m.ext(s, "restart_znode")
    assert znode == 1 << (0 * 16 + 1), "only broker 1's entry (partition 0) survives"
    s = deliver_all(m, run(m, s, ("ControllerRestartPartitions",)))
    assert m.is_quiescent(s)
    assert s.brokers[0].hosted[1] == 0 and s.controller.partitions[1].isr >> 0 & 1
    assert "does not know" in D.offline_replicas_are_known(m, s)
    # In the other order of the two reads and writes (no interleaving) both are restarted.
    t = deliver_all(m, run(m, init(m), ("CreateTopic", 0), ("CreateTopic", 1)))
    t = run(m, t, ("DirFail", 0, lost0), ("DirFail", 1, lost1),
            ("BrokerReadRestartPartitions", 0), ("BrokerWriteRestartPartitions", 0),
            ("BrokerReadRestartPartitions", 1), ("BrokerWriteRestartPartitions", 1))
    t = deliver_all(m, run(m, t, ("ControllerRestartPartitions",)))
    assert D.offline_replicas_are_known(m, t) is None


# ---- kip112-no-isnew-check, and `legacy`, its old name ---------------------------------------------------------

def test_legacy_is_an_alias_of_kip112_no_isnew_check_with_identical_results():
    """The old name builds the same design: the same rules, invariants and successors, and the same BFS to the
    same violations (tiny, to depth 12: through the lost acknowledged record). The configuration keeps the name
    given, so reports and saved scenarios say what the user wrote."""
    from explorer.search import SearchOptions, bfs

    old, new = tiny("legacy", max_records=1, consumer=True), tiny("kip112-no-isnew-check", max_records=1, consumer=True)
    assert old.cfg.variant == "legacy" and new.cfg.variant == "kip112-no-isnew-check"
    assert old.design is new.design and old.design.name == "kip112-no-isnew-check"
    assert [r.name for r in old.rules] == [r.name for r in new.rules]
    assert [i.id for i in old.invariants] == [i.id for i in new.invariants]
    results = [bfs(m, list(m.invariants), SearchOptions(all_violations=True, max_depth=12, workers=1))
               for m in (old, new)]
    a, b = results
    assert (a.distinct_states, a.states_generated, a.depth) == (b.distinct_states, b.states_generated, b.depth)
    assert [(v.invariant.id, v.message, [x for x, _ in v.trace[1:]]) for v in a.violations] == \
           [(v.invariant.id, v.message, [x for x, _ in v.trace[1:]]) for v in b.violations]
    assert {v.invariant.id for v in a.violations} >= {"no_recreate_with_bad_dir", "no_acked_record_lost"}


def test_the_cli_accepts_legacy_with_one_deprecation_line_and_the_same_exit_code(capsys, tmp_path):
    from support.helpers import in_process

    base = ("explore", "--preset", "tiny", "-q", "--max-depth", "4", "--workers", "1", "--json")
    code_old, out_old, err_old = in_process(capsys, *base, tmp_path / "old.json", "--variant", "legacy")
    code_new, out_new, err_new = in_process(capsys, *base, tmp_path / "new.json", "--variant", "kip112-no-isnew-check")
    assert code_old == code_new == 1
    assert err_new == ""
    assert err_old.count("\n") == 1 and "deprecated" in err_old and "--variant kip112-no-isnew-check" in err_old
    import json
    old, new = (json.loads((tmp_path / f"{n}.json").read_text()) for n in ("old", "new"))
    assert old["model"]["variant"] == "legacy" and new["model"]["variant"] == "kip112-no-isnew-check"
    assert old["violations"] == new["violations"] and old["distinct_states"] == new["distinct_states"]
    # A scenario file naming the old variant replays, with the same note.
    scenario = tmp_path / "s.json"
    scenario.write_text(json.dumps({"model": {"preset": "tiny", "variant": "legacy"}, "steps": [
        "CreateTopic(partition=0)", "DirFail(broker=0, dir=0)", "ControllerFailover()", "BrokerLeaderAndIsr(broker=0)"]}))
    code, out, err = in_process(capsys, "replay", scenario)
    assert code == 1 and "no_recreate_with_bad_dir" in out and "deprecated" in err
    # An unknown variant is still bad input, and the list of known ones is the current names.
    code, _, err = in_process(capsys, "explore", "--preset", "tiny", "--variant", "nope", "-q")
    assert code == 2 and "kip112-no-isnew-check" in err and "pre-kip112" in err


# ---- pre-kip112: the broker before KIP-112 -------------------------------------------------------------------

def test_pre_kip112_stops_the_broker_on_any_dir_failure():
    """A dir that holds none of the topic's logs fails on the leader: the broker halts (no notification), the
    controller handles it as a broker failure and moves leadership; it cannot start until the disk is fixed;
    then it finds its log on the good dir and follows again."""
    m = tiny("pre-kip112", max_records=1)
    s = run(m, created_topic(m), ("Produce", 0, 0), ("ReplicaFetch", 1, 0))
    d = copy_dir(s.brokers[0])
    other = 1 - d
    action, after = m.step(s, "DirFail", (0, other))
    assert not after.brokers[0].up and after.notifications == 0
    assert after.brokers[0].copies[0] == 1 << d and after.brokers[0].dirs[d] != OFFLINE
    assert m.rule("ControllerLogDirEvent").domain(m) == []
    after = deliver_all(m, after)
    assert after.controller.partitions[0].leader == 1
    assert "offline log dir" in m.rule("BrokerRestart").guard(m, after, 0)
    back = deliver_all(m, run(m, after, ("ReplaceDisk", 0, other), ("BrokerRestart", 0)))
    assert back.brokers[0].hosted[0] == H_FOLLOWER and back.brokers[0].copies[0] == 1 << d


def test_pre_kip112_reuses_the_halting_broker_of_kip46_and_creates_what_it_lacks():
    from explorer.catalog import DESIGNS
    from model.zk.designs import HALTING_BROKER, LEGACY_CREATE

    pre, kip46 = DESIGNS["pre-kip112"], DESIGNS["kip46"]
    assert HALTING_BROKER in pre.features and HALTING_BROKER in kip46.features and LEGACY_CREATE in pre.features
    assert {f.name for f in pre.features} < {f.name for f in kip46.features} | {"live-broker-assignment"}
    assert tiny("pre-kip112").hooks.may_create_log(None, False) is True


def test_dir_failure_spares_other_dirs_breaks_when_a_broker_stops_and_holds_under_kip112():
    """KIP-112's availability: the hand-made breaking case (a DirFail step on each design)."""
    for variant, broken in (("pre-kip112", True), ("kip46", True), ("kip112", False), ("kip112-no-isnew-check", False)):
        m = tiny(variant)
        s = created_topic(m)
        other = 1 - copy_dir(s.brokers[0])
        action, after = m.step(s, "DirFail", (0, other))
        message = D.dir_failure_spares_other_dirs(m, s, action, after)
        assert (message is not None) == broken, (variant, message)
        if broken:
            assert "stopped when its dir" in message and "no longer served" in message
    # The failed dir's own replica may go offline (KIP-112 keeps the broker serving the others).
    m = tiny("kip112")
    s = created_topic(m)
    action, after = m.step(s, "DirFail", (0, copy_dir(s.brokers[0])))
    assert after.brokers[0].hosted[0] == H_OFFLINE
    assert D.dir_failure_spares_other_dirs(m, s, action, after) is None
    # A replica on another dir that the step stopped serving breaks it too (a hand-made after-state).
    from support.helpers import with_broker

    m = tiny("kip112", partitions=2, rf=1)
    s = deliver_all(m, run(m, init(m), ("CreateTopic", 0), ("CreateTopic", 1)))
    b = 0
    d = copy_dir(s.brokers[b], 0)
    action, after = m.step(s, "DirFail", (b, 1 - d))
    assert D.dir_failure_spares_other_dirs(m, s, action, after) is None
    worse = with_broker(after, b, hosted=tuple(H_OFFLINE for _ in after.brokers[b].hosted))
    assert "stopped serving partition 0" in D.dir_failure_spares_other_dirs(m, s, action, worse)


# ---- --assignment live-brokers -----------------------------------------------------------------------------

def test_live_broker_assignment_creates_a_topic_only_on_running_brokers():
    m = tiny("kip112", assignment_policy="live-brokers")
    s = run(m, init(m), ("BrokerCrash", 0))
    assert "not registered" in m.rule("CreateTopic").guard(m, s, 0)
    s = deliver_all(m, run(m, deliver_all(m, s), ("BrokerRestart", 0)))
    assert m.rule("CreateTopic").guard(m, s, 0) is None
    # The default (a manual assignment) creates it on a broker that is down.
    k = tiny("kip112")
    assert k.rule("CreateTopic").guard(k, run(k, init(k), ("BrokerCrash", 0)), 0) is None
    assert "live-broker-assignment" not in {f.name for f in k.features}


def test_kip46_misses_a_failure_no_controller_saw_on_a_topic_created_on_live_brokers():
    """docs/model.md 13.3's first KIP-46 finding, without creating a topic on a dead broker: the topic exists on
    running brokers, a broker's dir fails (it halts) and the controller fails over before handling it."""
    from explorer.search import SearchOptions, bfs

    m = tiny("kip46", assignment_policy="live-brokers", max_records=1, consumer=True)
    inv = [i for i in m.invariants if i.id == "dead_broker_is_scheduled_for_healing"]
    r = bfs(m, inv, SearchOptions(workers=1))
    assert [v.invariant.id for v in r.violations] == ["dead_broker_is_scheduled_for_healing"]
    steps = [m.rules[a.rule].name for a, _ in r.violations[0].trace[1:]]
    assert steps[0] == "CreateTopic" and steps[1:3] == ["DirFail", "ControllerFailover"]


# ---- the documented counterexamples (docs/designs.md, the README) are what the CLI prints --------------------------

def _check_readme_block(block: str) -> None:
    import shlex
    import subprocess
    import sys

    from support.helpers import REPO

    lines = block.rstrip("\n").split("\n")
    assert lines[0].startswith("$ jbodcheck ")
    args = shlex.split(lines[0][len("$ jbodcheck "):])
    p = subprocess.run([sys.executable, "-m", "explorer", *args, "--workers", "1"], capture_output=True, text=True,
                       cwd=REPO, timeout=900)
    assert p.returncode == 1, p.stderr
    matches_with_trims(lines[1:], p.stdout.split("\n"))


def test_the_readmes_harmless_breach_is_what_the_cli_prints():
    blocks = console_blocks("A counterexample", "docs/designs.md")
    assert len(blocks) == 2 and "--invariant no_acked_record_lost" in blocks[0]
    _check_readme_block(blocks[1])


def test_the_readmes_lost_record_is_what_the_cli_prints():
    from support.profiles import THOROUGH

    if not THOROUGH:
        pytest.skip("BFS on small to depth 12 (219,236 states, a minute or two): JBODCHECK_PROFILE=thorough")
    _check_readme_block(console_blocks("A counterexample", "docs/designs.md")[0])


def test_the_cli_checks_a_portable_invariant_on_a_design_that_leaves_it_out():
    """`--invariant dir_failure_spares_other_dirs` on pre-kip112 checks it as `compare` does (a portable invariant
    reads only the core state), and finds the 3-step halt; an invariant of a left-out feature that is not portable
    is still bad input."""
    import json
    import subprocess
    import sys

    from support.helpers import REPO

    def run_cli(*args):
        return subprocess.run([sys.executable, "-m", "explorer", "explore", "--preset", "tiny", "-q", "--workers",
                               "1", *args], cwd=REPO, capture_output=True, text=True)

    p = run_cli("--variant", "pre-kip112", "--invariant", "dir_failure_spares_other_dirs", "--json", "-")
    assert p.returncode == 1, p.stderr
    (v,) = json.loads(p.stdout)["violations"]
    assert v["invariant"] == "dir_failure_spares_other_dirs" and len(v["trace"]) == 4
    bad = run_cli("--invariant", "deleted_replica_holds_no_data")
    assert bad.returncode == 2 and "leaves out" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("variant, assignment", [("pre-kip112", "any"), ("kip112", "live-brokers"),
                                                 ("pre-kip112", "live-brokers")])
@pytest.mark.parametrize("features, own_rule", [({"deletion": True}, "DeleteTopic"),
                                                ({"saturation": True, "dir_capacity": 2}, "DirSaturate"),
                                                ({"reassignment": True, "brokers": 3}, "ReassignPartition")])
def test_the_new_design_and_assignment_compose_with_deletion_saturation_and_reassignment(
        variant, assignment, features, own_rule):
    """pre-kip112 and --assignment live-brokers explored together with each optional feature: the feature's rule
    fires beside the design's (a dir failure, a creation), and the first 5,000 states break no invariant."""
    from explorer.search import SearchOptions, bfs

    m = build_model(preset_config("tiny", variant=variant, assignment_policy=assignment, **features))
    r = bfs(m, list(m.invariants), SearchOptions(max_states=5_000, all_violations=True))
    assert r.distinct_states == 5_000 and not r.violations
    fired = {name for name, n in r.coverage.items() if n}
    assert {"CreateTopic", "DirFail", own_rule} <= fired
    if variant == "pre-kip112":     # a dir failure halts the broker: its controller sees a broker failure
        assert "ControllerBrokerFailure" in fired
        if "saturation" not in features:   # and no log dir event (only KIP-928's saturated dirs send one)
            assert "ControllerLogDirEvent" not in fired
