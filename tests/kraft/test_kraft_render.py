"""KRaft state in Kafka's vocabulary (issue 40; model/kraft/render.py, docs/kraft.md "State", docs/cli.md "The trace
format"): each record kind, the registrations, the partition image, the AssignmentsManager entries and the
future-replica and hosted states pinned in their JSON and text forms; a step shows the batch it appended and the
image fields that changed; and every KRaft preset's reachable states walked through every renderer (text trace,
JSON, ITF, HTML page, DOT tooltip, serve's page) with no raw tuple of the controller or the brokers left."""
from __future__ import annotations

import html
import json
import re
from typing import NamedTuple

import pytest

from explorer.catalog import PRESETS, build_model, design_of, preset_config
from explorer.reports import dot, render as R
from explorer.reports.html import changes_table, page
from explorer.reports.itf import decode, encode
from explorer.scenario import load_scenario, replay, scenario_steps
from explorer.serve.page import state_page
from explorer.serve.walk import Walker
from model.kraft import render as K
from model.kraft.metadata import (
    K_BROKER_CHANGE, K_FEATURE_LEVEL, K_PARTITION, K_PARTITION_CHANGE, K_REGISTER, K_REMOVE_TOPIC, MIGRATING,
    NO_PARTITION, UNASSIGNED, BrokerChange, FeatureLevel, PartitionChange, PartitionRecord, PartitionState,
    RegisterBroker, Registration, RemoveTopic, empty_image, replay as replay_record,
)
from model.spec.engine import fingerprint_of
from model.storage.state import H_FOLLOWER, H_LEADER, H_NONE, H_OFFLINE, H_SATURATED, H_STOPPED

from support.helpers import SCENARIOS, bfs_states, init, step
from support.cli import cli
from support.console_blocks import console_blocks, matches_with_trims
from support.damaged_reports import paths as field_paths, renders_or_refuses

KRAFT_PRESETS = [name for name, (_, params) in PRESETS.items() if params.get("variant") == "kraft"]


def text(value) -> str:
    return R.show_value(value)


def image_with(*records):
    """The image of a 2-broker, 2-partition log of one batch a record."""
    image = empty_image(2, 2)
    for offset, record in enumerate(records):
        image = replay_record(image, offset, record)
    return image


REGISTERED = image_with(RegisterBroker(K_REGISTER, 0, (0, 1)), RegisterBroker(K_REGISTER, 1, (0, 1)),
                        PartitionRecord(K_PARTITION, 0, 0, 0b11, (UNASSIGNED, UNASSIGNED), 1, (0, 1)))


# ---- each record kind ----------------------------------------------------------------------------------------

def test_register_broker_record():
    record = RegisterBroker(K_REGISTER, 0, (0, 1))
    assert K.form(record, 7, REGISTERED) == {"type": "RegisterBrokerRecord", "brokerId": 0, "brokerEpoch": 7,
                                             "logDirs": ["dir 0", "dir 1"]}
    assert text(K.form(record, 7, REGISTERED)) == \
        "RegisterBrokerRecord(brokerId=0, brokerEpoch=7, logDirs=[dir 0, dir 1])"
    # before metadata.version 3.7-IV2 a registration keeps no dirs
    assert text(K.form(RegisterBroker(K_REGISTER, 1, ()), 2)) == \
        "RegisterBrokerRecord(brokerId=1, brokerEpoch=2, logDirs=[])"


@pytest.mark.parametrize("record, shown", [
    (BrokerChange(K_BROKER_CHANGE, 0, False, None),
     "BrokerRegistrationChangeRecord(brokerId=0, brokerEpoch=0, fenced=false)"),
    (BrokerChange(K_BROKER_CHANGE, 1, True, None),
     "BrokerRegistrationChangeRecord(brokerId=1, brokerEpoch=1, fenced=true)"),
    (BrokerChange(K_BROKER_CHANGE, 0, None, (1,)),
     "BrokerRegistrationChangeRecord(brokerId=0, brokerEpoch=0, logDirs=[dir 1])"),
    (BrokerChange(K_BROKER_CHANGE, 0, None, None, True),
     "BrokerRegistrationChangeRecord(brokerId=0, brokerEpoch=0, inControlledShutdown=true)"),
    (BrokerChange(K_BROKER_CHANGE, 0, True, (0,), False),
     "BrokerRegistrationChangeRecord(brokerId=0, brokerEpoch=0, fenced=true, inControlledShutdown=false, "
     "logDirs=[dir 0])"),
])
def test_broker_registration_change_record_shows_only_the_fields_it_carries(record, shown):
    assert text(K.form(record, 5, REGISTERED)) == shown
    assert "brokerEpoch" not in K.form(record)          # alone, without the log around it: no derived field


def test_partition_record():
    record = PartitionRecord(K_PARTITION, 0, 0, 0b11, (UNASSIGNED, UNASSIGNED), 1, (0, 1))
    assert K.form(record, 4, REGISTERED) == {
        "type": "PartitionRecord", "partitionId": 0, "topicId": "t1", "replicas": [0, 1], "isr": [0, 1],
        "leader": 0, "directories": ["UNASSIGNED", "UNASSIGNED"]}
    assert text(K.form(record)) == ("PartitionRecord(partitionId=0, topicId=t1, replicas=[0, 1], isr=[0, 1], leader=0, "
                                    "directories=[UNASSIGNED, UNASSIGNED])")
    with_elr = record._replace(elr=0b10, last_known_elr=(1,))     # KIP-966's tagged fields, when written
    assert text(K.form(with_elr)).endswith("directories=[UNASSIGNED, UNASSIGNED], eligibleLeaderReplicas=[1], "
                                           "lastKnownElr=[1])")
    recreated = PartitionRecord(K_PARTITION, 1, -1, 0b10, (MIGRATING, 1), 2, (0, 1))
    assert text(K.form(recreated)) == ("PartitionRecord(partitionId=1, topicId=t2, replicas=[0, 1], isr=[1], "
                                       "leader=none, directories=[MIGRATING, dir 1])")


@pytest.mark.parametrize("fields, shown", [
    (dict(leader=1), "leader=1"),
    (dict(leader=-1), "leader=none"),
    (dict(isr=0b10), "isr=[1]"),
    (dict(dirs=(1, UNASSIGNED)), "directories=[dir 1, UNASSIGNED]"),
    (dict(replicas=(0, 1, 2)), "replicas=[0, 1, 2]"),
    (dict(removing=(0,)), "removingReplicas=[0]"),
    (dict(adding=(2,)), "addingReplicas=[2]"),
    (dict(leader=1, isr=0b10, dirs=(0, 1), replicas=(1, 2), removing=(0,), adding=(2,)),
     "isr=[1], leader=1, replicas=[1, 2], removingReplicas=[0], addingReplicas=[2], directories=[dir 0, dir 1]"),
    # KIP-966 (kraft-elr): the ELR, LastKnownElr and an unclean election's LeaderRecoveryState RECOVERING (1)
    (dict(isr=0, elr=0b01, last_known_elr=(0,)), "isr=[], eligibleLeaderReplicas=[0], lastKnownElr=[0]"),
    (dict(leader=0, isr=0b01, recovering=True, elr=0),
     "isr=[0], leader=0, leaderRecoveryState=1, eligibleLeaderReplicas=[]"),
])
def test_partition_change_record_shows_only_the_fields_it_carries(fields, shown):
    record = PartitionChange(K_PARTITION_CHANGE, 0, None, None, None)._replace(**fields)
    assert text(K.form(record, 5, REGISTERED)) == f"PartitionChangeRecord(partitionId=0, topicId=t1, {shown})"
    assert text(K.form(record)) == f"PartitionChangeRecord(partitionId=0, {shown})"


def test_feature_level_record():
    assert K.form(FeatureLevel(K_FEATURE_LEVEL, True)) == {
        "type": "FeatureLevelRecord", "name": "metadata.version", "featureLevel": "3.7-IV2"}
    assert text(K.form(FeatureLevel(K_FEATURE_LEVEL, False))) == \
        "FeatureLevelRecord(name=metadata.version, featureLevel=before 3.7-IV2)"


def test_remove_topic_record_names_the_topic_it_removes():
    assert text(K.form(RemoveTopic(K_REMOVE_TOPIC, 0), 5, REGISTERED)) == "RemoveTopicRecord(topicId=t1, partitionId=0)"


def test_the_log_reads_each_record_against_the_log_before_it():
    """brokerEpoch and topicId, which the model's records leave implicit, come from the image before the record:
    a re-registration's epoch is its own offset; the change records after it carry it; a re-created topic's
    records name its new id."""
    m = build_model(preset_config("kraft-deletion"))
    log = (
        (RegisterBroker(K_REGISTER, 0, (0, 1)),), (RegisterBroker(K_REGISTER, 1, (0, 1)),),
        (PartitionRecord(K_PARTITION, 0, 0, 0b1, (UNASSIGNED,), 1, (0,)),),
        (RemoveTopic(K_REMOVE_TOPIC, 0),),
        (PartitionRecord(K_PARTITION, 0, 0, 0b1, (1,), 2, (0,)),),
        (RegisterBroker(K_REGISTER, 0, (1,)),),
        (BrokerChange(K_BROKER_CHANGE, 0, False, None), PartitionChange(K_PARTITION_CHANGE, 0, 0, None, None)),
    )
    shown = [text(batch) for batch in K.metadata_log(m, log)]
    assert shown[3] == "batch 3: [RemoveTopicRecord(topicId=t1, partitionId=0)]"
    assert shown[4].startswith("batch 4: [PartitionRecord(partitionId=0, topicId=t2, ")
    assert shown[5] == "batch 5: [RegisterBrokerRecord(brokerId=0, brokerEpoch=5, logDirs=[dir 1])]"
    assert shown[6] == ("batch 6: [BrokerRegistrationChangeRecord(brokerId=0, brokerEpoch=5, fenced=false); "
                        "PartitionChangeRecord(partitionId=0, topicId=t2, leader=0)]")


# ---- the images, the entries, the states --------------------------------------------------------------------

def test_registrations_by_broker_id():
    m = build_model(preset_config("kraft-tiny"))
    shown = K.registrations(m, (Registration(7, True, (1,)), None))
    assert shown == {"0": {"type": "BrokerRegistration", "epoch": 7, "fenced": True, "inControlledShutdown": False,
                           "directories": ["dir 1"]}, "1": None}
    assert text(shown["0"]) == \
        "BrokerRegistration(epoch=7, fenced=true, inControlledShutdown=false, directories=[dir 1])"


def test_the_partition_image_as_partition_registration():
    m = build_model(preset_config("kraft-tiny"))
    part = PartitionState(1, 2, 0b10, 3, (UNASSIGNED, 0), 1, (0, 1), (), ())
    assert text(K.partition_registration(m, part)) == (
        "PartitionRegistration(topicId=t1, replicas=[0, 1], directories=[UNASSIGNED, dir 0], isr=[1], "
        "removingReplicas=[], addingReplicas=[], elr=[], lastKnownElr=[], leader=1, leaderEpoch=2, partitionEpoch=3)")
    # KIP-966's fields, as PartitionRegistration.toString shows them (empty without ELR)
    fenced_out = part._replace(leader=-1, isr=0, elr=0b01, last_known_elr=(1,))
    assert "isr=[], removingReplicas=[], addingReplicas=[], elr=[0], lastKnownElr=[1], leader=none" in text(
        K.partition_registration(m, fenced_out))
    moving = part._replace(replicas=(0, 1, 2), dirs=(UNASSIGNED, 0, UNASSIGNED), adding=(2,), removing=(0,))
    assert "removingReplicas=[0], addingReplicas=[2]" in text(K.partition_registration(m, moving))
    # no PartitionRegistration before the creation, nor after the topic's deletion (which keeps the id)
    assert K.partition_registration(m, NO_PARTITION) is None
    assert K.partition_registration(m, NO_PARTITION._replace(topic=1)) is None


def test_assignments_manager_entries_and_the_request_in_flight():
    m = build_model(preset_config("kraft-tiny"))
    entries = ((0, 1, 1), (1, 0, 2))
    assert K.assignments(m, entries) == [
        {"type": "Assignment", "topicIdPartition": "t1:0", "directoryId": "dir 1"},
        {"type": "Assignment", "topicIdPartition": "t2:1", "directoryId": "dir 0"}]
    assert text(K.assignments(m, entries)) == ("[Assignment(topicIdPartition=t1:0, directoryId=dir 1); "
                                               "Assignment(topicIdPartition=t2:1, directoryId=dir 0)]")
    s = init(m)
    s = s._replace(brokers=(s.brokers[0]._replace(queue=entries[:1], inflight=entries[1:]), *s.brokers[1:]))
    shown = R.state_dict(m, s)["brokers"][0]
    assert text(shown["assignment_queue"]) == "[Assignment(topicIdPartition=t1:0, directoryId=dir 1)]"
    assert text(shown["assignment_in_flight"]) == "[Assignment(topicIdPartition=t2:1, directoryId=dir 0)]"


def test_hosted_states_as_replica_managers_hosted_partition():
    m = build_model(preset_config("kraft-saturation"))
    assert [m.formats["hosted"](m, h) for h in (H_NONE, H_OFFLINE, H_STOPPED, H_FOLLOWER, H_LEADER, H_SATURATED)] == [
        "HostedPartition.None", "HostedPartition.Offline", "HostedPartition.Online (no log)",
        "HostedPartition.Online (follower)", "HostedPartition.Online (leader)",
        "HostedPartition.Online (saturated dir)"]
    zk = build_model(preset_config("tiny"))
    assert "hosted" not in zk.formats         # ZooKeeper mode keeps its words


def test_future_replica_states_by_replica_alter_log_dirs_threads_names():
    from model.kraft.future import NO_FETCHER, P_ACCEPTED, P_NONE, P_QUEUED

    m = build_model(preset_config("kraft-future"))
    promotion = m.formats["kraft_promotion"]
    assert [promotion(m, v) for v in (NO_FETCHER, P_NONE, P_QUEUED, P_ACCEPTED)] == [
        None, "ReassignmentState.None", "ReassignmentState.Queued", "ReassignmentState.Accepted"]
    assert m.formats["kraft_optional_dir"](m, -1) is None and m.formats["kraft_optional_dir"](m, 1) == 1
    assert m.formats["kraft_moves"](m, (1, 2)) == {"alter_replica_log_dirs": 1, "promotions_queued": 2}
    s = init(m)
    b = s.brokers[0]
    s = s._replace(brokers=(b._replace(future=(1,), flog=((0,),), mover=(P_QUEUED,)), *s.brokers[1:]))
    row = R.state_dict(m, s)["brokers"][0]["partitions"][0]
    assert (row["future_log_dir"], row["future_log"], row["promotion"]) == (1, [0], "ReassignmentState.Queued")


def test_shutdown_state_and_deletion_fields():
    m = build_model(preset_config("kraft-controlled-shutdown"))
    assert R.state_dict(m, init(m))["brokers"][0]["shutdown_state"] is None
    assert m.formats["kraft_shutdown_state"](m, "PENDING_CONTROLLED_SHUTDOWN") == "PENDING_CONTROLLED_SHUTDOWN"
    d = build_model(preset_config("kraft-deletion"))
    s = init(d)
    s = s._replace(brokers=(s.brokers[0]._replace(topics=(2,), stray=(0b10,)), *s.brokers[1:]))
    row = R.state_dict(d, s)["brokers"][0]["partitions"][0]
    assert (row["hosted_topic_id"], row["stray_copies"]) == ("t2", [1])


# ---- the forms are data ------------------------------------------------------------------------------------------

def test_every_field_of_every_record_and_image_has_its_kafka_name():
    """A field added to a record or an image (ELR's, say) needs its entry in model/kraft/render.py FORMS."""
    for cls, (name, _) in K.FORMS.items():
        assert K.unnamed_fields(cls) == [], f"{cls.__name__} ({name}): no Kafka name for {K.unnamed_fields(cls)}"
    assert set(K.FORMS) == {RegisterBroker, BrokerChange, PartitionRecord, PartitionChange, FeatureLevel, RemoveTopic,
                            Registration, PartitionState}


class _LaterChange(NamedTuple):
    """A PartitionChange with one more optional field, as a later record version adds one (KIP-966's added
    EligibleLeaderReplicas; the name here is made up)."""
    kind: int
    partition: int
    leader: int | None
    isr: int | None
    dirs: tuple | None
    replicas: tuple | None = None
    adding: tuple | None = None
    removing: tuple | None = None
    elr: int | None = None
    last_known_elr: tuple | None = None
    recovering: bool | None = None
    target_elr: int | None = None


def test_a_new_optional_field_shows_under_its_own_name_until_its_one_entry_names_it(monkeypatch):
    name, fields = K.FORMS[PartitionChange]
    monkeypatch.setitem(K.FORMS, _LaterChange, (name, fields))
    record = _LaterChange(K_PARTITION_CHANGE, 0, None, None, None, target_elr=0b01)
    assert K.unnamed_fields(_LaterChange) == ["target_elr"]
    assert text(K.form(record)) == "PartitionChangeRecord(partitionId=0, target_elr=1)"     # not lost, not Kafka's
    monkeypatch.setitem(K.FORMS, _LaterChange, (name, fields + (("targetElr", "target_elr"),)))
    monkeypatch.setitem(K.VALUES, "target_elr", K.VALUES["isr"])
    assert K.unnamed_fields(_LaterChange) == []
    assert text(K.form(record)) == "PartitionChangeRecord(partitionId=0, targetElr=[0])"
    assert text(K.form(record._replace(target_elr=None, leader=1))) == "PartitionChangeRecord(partitionId=0, leader=1)"


# ---- a step's changes -------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def finding_1():
    """The replay of KRaft finding 1 with a record: (model, trace of (action, state))."""
    scenario = load_scenario(str(SCENARIOS / "kraft-finding-1-acked-record-lost.json"))
    params = dict(scenario.model)
    preset = params.pop("preset")
    model = build_model(preset_config(preset, **params), preset=preset)
    _, trace, _ = replay(model, scenario, list(model.invariants))
    return model, trace


def test_a_step_shows_the_batch_it_appended_and_the_image_fields_that_changed(finding_1):
    model, trace = finding_1
    lines = R.trace_text(model, trace).splitlines()
    shrink = lines.index("Step 4: LeaderShrinkIsr(partition=0, follower=1)")
    block = lines[shrink + 1:lines.index("Step 5: DirFail(broker=0, dir=0)")]
    assert ("    controller.metadata_log: + batch 5: [PartitionChangeRecord(partitionId=0, topicId=t1, isr=[0])]"
            in block)
    assert "    controller.partitions[0].registration.isr: [0, 1] -> [0]" in block
    assert "    controller.partitions[0].registration.partitionEpoch: 0 -> 1" in block
    assert not any("registration.leader" in line for line in block)
    fence = lines.index("Step 7: ControllerFenceBroker(broker=0)")
    # Kafka 4.4 with ELR (the default release): the records a real 4.4.0 cluster wrote at this step
    assert lines[fence + 1] == ("    controller.metadata_log: + batch 6: [PartitionChangeRecord(partitionId=0, "
                                "topicId=t1, isr=[], leader=none, eligibleLeaderReplicas=[0], lastKnownElr=[0]); "
                                "BrokerRegistrationChangeRecord(brokerId=0, brokerEpoch=0, fenced=true)]")
    assert lines[fence + 2] == "    controller.registrations.0.fenced: false -> true"
    # the log is never printed whole in a step, nor twice
    assert not any(line.startswith("    controller.metadata_log: [") for line in lines)
    # the HTML page's changes of a step: the same, the appended batch as "+ ..."
    before, after = (R.flat(model, s) for _, s in trace[3:5])
    table, keys = changes_table(before, after)
    assert "controller.partitions[0].registration.isr" in keys
    assert "+ batch 5: [PartitionChangeRecord(partitionId=0, topicId=t1, isr=[0])]" in html.unescape(table)


def test_replay_of_finding_1_prints_records_by_kafkas_names():
    """The issue's acceptance: `jbodcheck replay scenarios/kraft-finding-1-acked-record-lost.json`."""
    p = cli("replay", SCENARIOS / "kraft-finding-1-acked-record-lost.json")
    assert p.returncode == 1, p.stderr
    for name in ("RegisterBrokerRecord(brokerId=0, brokerEpoch=7, logDirs=[dir 1])",
                 "PartitionRecord(partitionId=0, topicId=t1, replicas=[0, 1], isr=[0, 1], leader=0, "
                 "directories=[UNASSIGNED, UNASSIGNED])",
                 "BrokerRegistrationChangeRecord(brokerId=0, brokerEpoch=7, fenced=false)",
                 "PartitionChangeRecord(partitionId=0, topicId=t1, eligibleLeaderReplicas=[])",
                 "PartitionChangeRecord(partitionId=0, topicId=t1, isr=[0], leader=0, leaderRecoveryState=1, "
                 "lastKnownElr=[])",
                 "Assignment(topicIdPartition=t1:0, directoryId=dir 1)",
                 "BrokerRegistration(epoch=0, fenced=false, inControlledShutdown=false, directories=[dir 0, dir 1])",
                 "HostedPartition.Online (leader)"):
        assert name in p.stdout, name
    assert raw_tuples(p.stdout) == []


def test_the_readmes_kraft_trace_is_what_the_cli_prints():
    """The README's KRaft excerpt (regenerate it when the rendering or finding 1's trace changes)."""
    import shlex

    (block,) = console_blocks("KRaft mode: the Kafka that ships (KIP-858, Kafka 3.7 to 4.4)")
    lines = block.rstrip("\n").split("\n")
    assert lines[0].startswith("$ jbodcheck replay ")
    p = cli(*shlex.split(lines[0][len("$ jbodcheck "):]))
    assert p.returncode == 1, p.stderr
    matches_with_trims(lines[1:], p.stdout.split("\n"))


# ---- no raw tuple in any output, on every KRaft preset -----------------------------------------------------------

# A list of numbers (or true/false/none) holding a list, or a list opening on a list of numbers: the positional
# tuples the KRaft fields were shown as before (`[[2, 0, 0, 3, [-1, -1], 1, [0, 1]]]`, `[1, 1, 2, 1, [-1, -1], ...]`).
RAW = re.compile(r"\[\s*\[\s*-?\d|\[(\s*(-?\d+|true|false|none)\s*,)+\s*\[")


def raw_tuples(shown: str) -> list[str]:
    return [line for line in shown.splitlines() if RAW.search(line)]


def positional(value, where: str = "") -> list[str]:
    """Where a JSON-ready value keeps a tuple's positions: a list holding a list, or a typed object with a key that
    is not a Kafka (camelCase) name."""
    if isinstance(value, dict):
        bad = [f"{where}.{k}" for k in value if R.is_typed(value) and "_" in k]
        return bad + [x for k, v in value.items() for x in positional(v, f"{where}.{k}")]
    if isinstance(value, list):
        bad = [where] if any(isinstance(v, list) for v in value) else []
        return bad + [x for i, v in enumerate(value) for x in positional(v, f"{where}[{i}]")]
    return []


def test_the_detectors_catch_the_old_positional_forms():
    """The checks below can fail: the issue's raw tuples, and a KRaft state's fields shown as plain tuples (the
    former formatter), are caught."""
    for old in ("controller.metadata_log = [[[0, 0, [0, 1]]], [[1, 0, false, none, none]]]",
                "controller.registrations = [[0, false, [0, 1], false], [1, false, [0, 1], false]]",
                "controller.partitions[0].partitions = [1, 1, 2, 1, [-1, -1], 1, [0, 1], [], []]",
                "brokers[0].assignment_queue: [] -> [[0, 0, 1]]"):
        assert raw_tuples(old) == [old]
    m = build_model(preset_config("kraft-tiny"))
    s = step(m, init(m), "CreateTopic", 0)
    plain = {name: K.plain(value) for name, value in zip(s.controller._fields, s.controller)}
    assert positional(plain["log"]) and positional(plain["registrations"])
    assert raw_tuples(text(plain["partitions"])) and raw_tuples(text(plain["log"]))
    assert positional({"type": "PartitionRegistration", "leader_epoch": 0}) == [".leader_epoch"]


def _walks(model, count: int, depth: int, seed: int):
    """Seeded random walks: each a trace of (action, state) from the initial state."""
    import random

    rng = random.Random(seed)
    for _ in range(count):
        s = init(model)
        trace = [(None, s)]
        for _ in range(depth):
            successors = list(model.successors(s))
            if not successors:
                break
            action, s = rng.choice(successors)
            trace.append((action, s))
        yield trace


def test_every_kraft_feature_is_in_a_preset_walked_below():
    included = {f.name for name in KRAFT_PRESETS for f in build_model(preset_config(name)).features}
    assert {f.name for f in design_of("kraft").features} <= included


@pytest.mark.parametrize("preset", KRAFT_PRESETS)
def test_no_raw_tuple_of_the_controller_or_the_brokers_in_any_output(preset):
    """Reachable states (the first 150 in BFS order, and the states of ten seeded random walks of 40 steps)
    through every renderer: the JSON state (and its ITF form, which decodes back to it), the text trace's lines,
    the HTML page of a walk, the DOT tooltip, and serve's page of states along a walk."""
    model = build_model(preset_config(preset), preset=preset)
    walks = list(_walks(model, 10, 40, seed=len(preset)))
    states = list(bfs_states(model, fingerprint_of(model), 150).values()) + [s for w in walks for _, s in w]
    for s in states:
        shown = R.state_dict(model, s)
        assert positional(shown) == [], (preset, positional(shown)[:3])
        assert decode(encode(shown)) == json.loads(json.dumps(shown))
        flat = R.flatten(shown)
        assert raw_tuples("\n".join(f"{k} = {text(v)}" for k, v in flat.items())) == []
        assert raw_tuples(dot._tooltip(model, s)) == []
    longest = max(walks, key=len)
    assert raw_tuples(R.trace_text(model, longest)) == []
    trace = [{"step": i, "action": None if a is None else model.label(a), "state": R.state_dict(model, s)}
             for i, (a, s) in enumerate(longest)]
    report = {"tool": "jbodcheck", "model": {"preset": preset}, "violations": []}
    assert raw_tuples(_page_text(page(report, walkthrough={"title": preset, "trace": trace}))) == []
    steps = tuple(scenario_steps(model, [a for a, _ in longest[1:]]))
    walker = Walker(model)
    for at in range(0, len(steps) + 1, 8):
        assert raw_tuples(_page_text(state_page(walker, preset, steps, at))) == []


def _page_text(document: str) -> str:
    """A page's text, one line per table cell or list item (a KRaft value is in one cell)."""
    body = document.split("<body>", 1)[1].split("<script>", 1)[0]
    return html.unescape(re.sub(r"<[^>]+>", "\n", body))


@pytest.mark.long_run
def test_whatever_view_accepts_of_a_kraft_report_renders(tmp_path):
    """tests/cli/test_hostile_input.py's check on a KRaft report, whose states hold typed objects: any one of their
    fields replaced by any JSON value (a "type" that is not a string, a record without its fields, ...), the shape
    check refuses it or the page renders."""
    path = tmp_path / "r.json"
    p = cli("replay", SCENARIOS / "kraft-finding-1-acked-record-lost.json", "--json", path)
    assert p.returncode == 1, p.stderr
    report = json.loads(path.read_text())
    paths = [q for q in field_paths(report) if " " not in q and any(
        k in q for k in ("metadata_log", "registration", "assignment", "hosted"))]
    assert any(q.endswith(".type") for q in paths) and any(".registrations.0" in q for q in paths)
    renders_or_refuses(report, paths)
