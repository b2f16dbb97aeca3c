"""KRaft finding 1 and the quiescent and no-cascade properties (docs/kraft.md, "Findings" and "Properties"): the
finding's markers run as tests/docs/test_findings.py runs ZooKeeper mode's, its scenarios replay to the violation with
no bug switch, and each new property fails on a state that breaks it and holds on the real one it is made from."""
from __future__ import annotations

import pytest

from explorer.catalog import build_model, claims_of, design_of, preset_config
from invariants.kraft import quiescent as kraft_quiescent
from invariants.storage import safety
from support.helpers import REPO, SCENARIOS, init, run, with_broker
from model.kraft.metadata import UNASSIGNED
from model.storage.state import GOOD, OFFLINE
from support.findings import check_finding, markers
from support.scenarios import replay_as_the_cli

# The committer's reports of docs/findings/ (issue 40), each marker run as a test.
# The findings' markers live in their reports only (docs/findings/; tests/docs/test_one_home.py): docs/kraft.md links.
KRAFT_MARKERS = [entry for path in sorted((REPO / "docs" / "findings").glob("finding-*.md")) for entry in markers(path)]


def test_every_finding_report_is_marked_and_indexed():
    reports = sorted((REPO / "docs" / "findings").glob("finding-*.md"))
    index = (REPO / "docs" / "findings" / "README.md").read_text()
    assert len(reports) >= 8
    for path in reports:
        assert path.name in index, path.name
        assert any(name == path.name for name, *_ in KRAFT_MARKERS), path.name
        text = path.read_text()
        for section in ("## Affected releases and settings", "## Shortest trace", "## Most realistic trace",
                        "## The real-time window", "## Severity", "## What happens afterwards", "## Per release",
                        "## On a real cluster", "## Prior reports searched"):
            assert section in text, (path.name, section)


def test_finding_1_is_marked():
    commands = [fields["command"] for _name, _line, fields, _after in KRAFT_MARKERS]
    assert any("--preset kraft-tiny-faults" in c and "--invariant" not in c for c in commands)
    assert any("--invariant no_acked_record_lost" in c for c in commands)


@pytest.mark.parametrize("name, line, fields, after", KRAFT_MARKERS, ids=[f"{e[0]}:{e[1]}" for e in KRAFT_MARKERS])
def test_a_kraft_finding_is_what_its_command_prints(name, line, fields, after, tmp_path):
    check_finding(name, line, fields, after, tmp_path)


# ---- the scenarios: no bug switch, the violation at the last step -------------------------------------------------

FINDING_SCENARIOS = {
    # file: {invariant: the step (1-based) whose state or transition breaks it}
    "kraft-finding-1-replica-recreated-over-failed-dir.json": {"no_recreate_over_offline_copy": 7},
    "kraft-finding-1-acked-record-lost.json": {"no_recreate_over_offline_copy": 10, "no_acked_record_lost": 12},
}


@pytest.mark.parametrize("file", FINDING_SCENARIOS)
def test_a_finding_1_scenario_replays_to_its_violation_without_a_bug_switch(file):
    model, result, failed = replay_as_the_cli(file)
    assert model.option("bugs") == ()
    assert failed == []  # the scenario's expectations hold at its end
    assert {v.invariant.id: len(v.trace) - 1 for v in result.violations} == FINDING_SCENARIOS[file]


@pytest.mark.parametrize("file", FINDING_SCENARIOS)
def test_a_finding_1_scenario_exits_1_through_the_cli_with_its_expectations_met(file, capsys):
    from explorer.cli import main

    with pytest.raises(SystemExit) as e:
        main(["replay", str(SCENARIOS / file)])
    out, _ = capsys.readouterr()
    assert e.value.code == 1 and "Every expectation holds" in out
    assert all(f"VIOLATION of {id_}" in out for id_ in FINDING_SCENARIOS[file])


def test_finding_1_needs_directories_unassigned_at_the_restart():
    """The same trace with the assignment delivered before the dir fails (Directories[0] = dir 0): gate 2 refuses
    the creation (the listed dir is not live and a dir is offline), the replica stays Online without a log."""
    model = build_model(preset_config("kraft-tiny-faults", max_records=0))
    s = run(model, init(model), ("CreateTopic", 0), ("BrokerReplay", 0), ("BrokerSendAssignments", 0),
            ("ControllerAssignReplicasToDirs", 0), ("DirFail", 0, 0), ("BrokerCrash", 0),
            ("ControllerFenceBroker", 0), ("BrokerRestart", 0))
    assert s.controller.partitions[0].dirs[0] == 0
    after = run(model, s, ("BrokerLoad", 0))
    assert after.brokers[0].copies == s.brokers[0].copies == (0b01,)
    trace_start = run(model, init(model), ("CreateTopic", 0), ("BrokerReplay", 0))
    assert trace_start.controller.partitions[0].dirs[0] == UNASSIGNED and trace_start.brokers[0].queue == ((0, 0, 1),)


# ---- the quiescence of KRaft mode ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def kraft():
    return build_model(preset_config("kraft-tiny-faults", max_records=0))


CONTROL_PLANE = ("BrokerRegister", "BrokerLoad", "BrokerReplay", "BrokerHeartbeat", "ControllerFenceBroker",
                 "BrokerSendAssignments", "ControllerAssignReplicasToDirs")


def _drain(model, s, limit=100):
    """Take the first enabled control-plane step (CONTROL_PLANE order, then broker order) until none is left."""
    for _ in range(limit):
        steps = [(name, (b,)) for name in CONTROL_PLANE for b in range(model.cfg.brokers)
                 if model.rule(name).guard(model, s, b) is None]
        if not steps:
            return s
        _, s = model.step(s, *steps[0])
    raise AssertionError("the control plane did not settle")


def _settled(model):
    """Partition 0 created, both replicas' logs on dir 0, their assignments delivered and replayed."""
    return _drain(model, run(model, init(model), ("CreateTopic", 0)))


def test_quiescence_waits_for_replay_heartbeats_and_fencing(kraft):
    assert kraft.is_quiescent(init(kraft))
    created = run(kraft, init(kraft), ("CreateTopic", 0))
    assert not kraft.is_quiescent(created)  # the brokers have not replayed the PartitionRecord
    settled = _settled(kraft)
    assert kraft.is_quiescent(settled)
    failed = run(kraft, settled, ("DirFail", 1, 1))
    assert not kraft.is_quiescent(failed)  # the failure is not reported yet
    assert kraft.is_quiescent(_drain(kraft, failed))
    crashed = run(kraft, settled, ("BrokerCrash", 1))
    assert not kraft.is_quiescent(crashed)  # its session has not timed out
    assert kraft.is_quiescent(_drain(kraft, crashed))


# ---- the new properties break on hand-made input (tests/zk/test_invariants.py counts these as breaking cases) ----------

def _check(model, id_):
    return next(i for i in model.invariants if i.id == id_).check


def _assignment_lost(model):
    """Both logs on dir 0, both assignments dropped from the queues before they were sent: Directories stays
    UNASSIGNED in a quiescent state."""
    s = run(model, init(model), ("CreateTopic", 0), ("BrokerReplay", 0), ("BrokerReplay", 1))
    s = with_broker(with_broker(s, 0, queue=()), 1, queue=())
    assert s.controller.partitions[0].dirs == (UNASSIGNED, UNASSIGNED)
    assert model.is_quiescent(s)
    return (s,)


def _offline_replica_not_shown(model):
    """Broker 1's dir 0 (its replica's) is offline and reported, but the metadata still names dir 0 online."""
    s = _settled(model)
    return (with_broker(s, 1, dirs=(OFFLINE, GOOD), failed=0b01, acked_dirs=0b01),)


def _leader_on_a_failed_dir(model):
    """The leader's (broker 0's) only copy is on a dir that is offline."""
    s = _settled(model)
    return (with_broker(s, 0, dirs=(OFFLINE, GOOD), failed=0b01, acked_dirs=0b01),)


def _healthy_dir_goes_offline(model):
    """Broker 0's dir 0 fails and its dir 1 goes offline in the same step."""
    s = _settled(model)
    action, after = model.step(s, "DirFail", (0, 0))
    return s, action, with_broker(after, 0, dirs=(OFFLINE, OFFLINE))


BROKEN_HERE = {
    "kraft_directories_match_actual_dir": [_assignment_lost],
    "metadata_shows_offline_replicas": [_offline_replica_not_shown],
    "leader_is_live_isr_member": [_leader_on_a_failed_dir],
    "no_dir_failure_cascade": [_healthy_dir_goes_offline],
}


@pytest.mark.parametrize("id_, make", [(i, mk) for i, makers in BROKEN_HERE.items() for mk in makers])
def test_kraft_property_breaks_on_hand_made_input(kraft, id_, make):
    message = _check(kraft, id_)(kraft, *make(kraft))
    assert isinstance(message, str) and message.strip()


def test_the_properties_hold_on_the_real_states_the_breaks_start_from(kraft):
    settled = _settled(kraft)
    for id_ in ("kraft_directories_match_actual_dir", "metadata_shows_offline_replicas", "leader_is_live_isr_member"):
        assert _check(kraft, id_)(kraft, settled) is None, id_
    assert settled.controller.partitions[0].dirs == (0, 0)
    action, after = kraft.step(settled, "DirFail", (0, 0))
    assert _check(kraft, "no_dir_failure_cascade")(kraft, settled, action, after) is None
    # The failure reported and replayed: the metadata shows broker 0's replica offline, broker 1 leads.
    reported = _drain(kraft, after)
    assert kraft.is_quiescent(reported) and reported.controller.partitions[0].leader == 1
    for id_ in ("metadata_shows_offline_replicas", "leader_is_live_isr_member", "kraft_directories_match_actual_dir"):
        assert _check(kraft, id_)(kraft, reported) is None, id_


def test_kraft_core_claims_the_properties_with_zookeepers_ids_where_the_meaning_is_the_same():
    kraft_core = next(f for f in design_of("kraft").features if f.name == "kraft-core")
    ids = [i.id for i in claims_of(kraft_core)]
    assert {"leader_is_live_isr_member", "metadata_shows_offline_replicas", "kraft_directories_match_actual_dir",
            "no_dir_failure_cascade"} <= set(ids)
    zk_core = next(f for f in design_of("kip112").features if f.name == "kip112-core")
    zk_shown = next(i for i in claims_of(zk_core) if i.id == "metadata_shows_offline_replicas")
    assert zk_shown is safety.metadata_shows_offline_replicas.invariant  # ZooKeeper's claim is unchanged
    # A KRaft model resolves the id among its own claims: KRaft's view.
    kraft = build_model(preset_config("kraft-tiny-faults"), invariants=["metadata_shows_offline_replicas"])
    assert kraft.invariants == (kraft_quiescent.METADATA_SHOWS_OFFLINE_REPLICAS,)
    assert kraft_quiescent.METADATA_SHOWS_OFFLINE_REPLICAS.statement == zk_shown.statement


def test_kraft_value_of_the_shared_id_reads_zookeepers_metadata_on_a_zookeeper_model():
    """KRaft's value of metadata_shows_offline_replicas takes ZooKeeper's UpdateMetadata view on a ZooKeeper model
    (`jbodcheck compare` may judge another design by it): no KRaft field is read there."""
    from support.helpers import created_topic, model_of

    model = model_of("tiny")
    s = created_topic(model)
    check = kraft_quiescent.METADATA_SHOWS_OFFLINE_REPLICAS.check
    assert model.is_quiescent(s) and check(model, s) is None
    meta = s.brokers[0].meta[0]
    wrong = with_broker(s, 0, meta=(meta._replace(offline=0b10),))
    assert check(model, wrong)
