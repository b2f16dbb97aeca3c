"""The model's building blocks: configuration, fingerprints, the broker's LeaderAndIsr decision, the controller's
state machines and its reaction to KAFKA_STORAGE_ERROR, and guards."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from model import BOUNDS, VARIANTS, ActionDisabled, ConfigError, Model, ModelConfig, fingerprint
from model.zk.designs import DEPRECATED_VARIANTS
from model.storage import broker as B
from model.zk import requests
from model.zk.controller import VALID_PARTITION_PREVIOUS, VALID_REPLICA_PREVIOUS, ControllerStep
from explorer.catalog import PRESETS, preset_config
from model.storage.state import (
    E_NONE, E_STALE, E_STORAGE, GOOD, H_FOLLOWER, H_LEADER, H_NONE, H_OFFLINE, H_STOPPED, LEADER_AND_ISR, NO_LEADER,
    OFFLINE, P_NEW, P_NONEXISTENT, P_OFFLINE, P_ONLINE, PARTITION_STATE_NAMES, R_NONEXISTENT, R_OFFLINE,
    H_SATURATED, R_ONLINE, REMOVED, REPLICA_STATE_NAMES, SATURATED, STOP_REPLICA, LeaderAndIsrEntry, replace_at,
)

from support.helpers import REPO, created_topic, custom_model, deliver_all, init, model_of, policy, step
from explorer.catalog import build_model

# ---- configuration ------------------------------------------------------------------------------------


@pytest.mark.parametrize("params, words", [
    (dict(brokers=3, rf=4), ("--rf 4", "--brokers 3")),
    (dict(brokers=0, rf=1), ("--brokers",)),
    (dict(dirs=0), ("--dirs",)),
    (dict(partitions=0), ("--partitions",)),
    (dict(rf=0), ("--rf",)),
    (dict(variant=""), ("variant",)),
    (dict(max_crashes=-1), ("--max-crashes",)),
    (dict(brokers=True, rf=1), ("--brokers",)),
    (dict(eager_metadata="yes"), ("eager_metadata",)),
])
def test_bad_configurations_raise_config_error(params, words):
    with pytest.raises(ConfigError) as e:
        ModelConfig(**params)
    for w in words:
        assert w in str(e.value)
    assert isinstance(e.value, ValueError)


def test_an_unknown_variant_is_a_config_error_where_the_design_is_looked_up():
    """The configuration does not know the designs' names (model/storage); the catalog does."""
    cfg = ModelConfig(variant="nope")
    for build in (lambda: build_model(cfg), lambda: preset_config("tiny", variant="nope")):
        with pytest.raises(ConfigError) as e:
            build()
        assert "nope" in str(e.value) and "kip112-no-isnew-check" in str(e.value)
    with pytest.raises(ConfigError, match="kip46"):
        build_model(ModelConfig(variant="kip46", reassignment=True, brokers=4))


def test_the_configuration_is_one_type_per_feature_composed():
    """ModelConfig is flat (keyword arguments, attributes, as_dict's keys) and made of one part per feature, each
    with its own fields and check (model/storage/config.py, model/zk/config.py)."""
    import attrs

    from model.storage.config import DataPath, Saturation, Shape
    from model.zk.config import Reassignment
    parts = ModelConfig.PARTS
    assert sorted(f.name for p in parts for f in attrs.fields(p)) == sorted(ModelConfig.field_names())
    cfg = ModelConfig(brokers=3, rf=2, saturation=True, dir_capacity=4, reassignment=True, min_isr=[2])
    assert cfg.part(Saturation) == Saturation(saturation=True, dir_capacity=4)
    assert cfg.part(Shape) == Shape(brokers=3, rf=2) and cfg.part(DataPath).min_isr == (2,)
    assert cfg.part(Reassignment).reassignment and cfg.reassignment_target(0) == (1, 2)
    assert list(cfg.as_dict())[:5] == ["variant", "brokers", "dirs", "partitions", "rf"]
    assert attrs.evolve(cfg, dir_capacity=5).part(Saturation).dir_capacity == 5
    with pytest.raises(ConfigError, match="--reassignment needs a broker"):   # a part's check reads the shape
        attrs.evolve(cfg, brokers=2)


def test_unknown_preset_and_unknown_parameter_raise_config_error():
    with pytest.raises(ConfigError, match="nope"):
        preset_config("nope")
    with pytest.raises(ConfigError, match="frobs"):
        ModelConfig.from_dict({"brokers": 2, "frobs": 1})


def test_variants_and_bounds_are_all_model_parameters():
    assert {"kip112", "kip112-no-isnew-check", "pre-kip112"} <= set(VARIANTS)
    assert DEPRECATED_VARIANTS == {"legacy": "kip112-no-isnew-check"} and "legacy" not in VARIANTS
    fields = set(ModelConfig.field_names())
    assert set(BOUNDS) <= fields
    assert {"variant", "brokers", "dirs", "partitions", "rf"} <= fields


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_presets_are_valid_and_overridable(name):
    cfg = preset_config(name)
    assert cfg.rf <= cfg.brokers
    assert preset_config(name, variant="legacy").variant == "legacy"
    assert preset_config(name, variant=None) == cfg  # None means "not given"
    assert ModelConfig.from_dict(cfg.as_dict()) == cfg


def test_contract_presets_have_the_contract_shapes():
    tiny, small = preset_config("tiny"), preset_config("small")
    assert (tiny.brokers, tiny.dirs, tiny.partitions, tiny.rf) == (2, 2, 1, 2)
    assert (small.brokers, small.dirs, small.partitions, small.rf) == (3, 2, 1, 3)
    medium = preset_config("medium")
    assert (medium.brokers, medium.dirs, medium.partitions) == (3, 2, 2)


def test_assignment_gives_each_replica_its_own_broker():
    cfg = ModelConfig(brokers=3, partitions=3, rf=2)
    for p in range(3):
        a = cfg.assignment(p)
        assert len(a) == len(set(a)) == 2
        assert a[0] == p % 3  # preferred leaders are spread over the brokers


# ---- fingerprints ---------------------------------------------------------------------------------------

_PATH = [("CreateTopic", 0), ("BrokerLeaderAndIsr", 1), ("DirFail", 1, 0), ("BrokerCrash", 0)]


def _walk(model, path):
    s = init(model)
    for name, *args in path:
        s = step(model, s, name, *args)
    return s


def test_fingerprint_is_a_stable_64_bit_int():
    m = model_of("small")
    a, b = _walk(m, _PATH), _walk(m, _PATH)
    assert a == b and a is not b
    assert fingerprint(a) == fingerprint(b) == fingerprint(a)
    assert isinstance(fingerprint(a), int) and 0 <= fingerprint(a) < 2 ** 64


def test_fingerprint_identifies_states_not_paths():
    m = model_of("small")
    s = step(m, init(m), "CreateTopic", 0)
    one = step(m, step(m, s, "BrokerLeaderAndIsr", 1), "BrokerLeaderAndIsr", 2)
    two = step(m, step(m, s, "BrokerLeaderAndIsr", 2), "BrokerLeaderAndIsr", 1)
    assert one == two and fingerprint(one) == fingerprint(two)
    other = step(m, s, "BrokerLeaderAndIsr", 0)
    assert fingerprint(other) != fingerprint(one)
    # Every successor of a state that differs from it has a different fingerprint.
    fps = {fingerprint(after) for _, after in m.successors(s)}
    assert len(fps) == len({after for _, after in m.successors(s)})


@pytest.mark.parametrize("seed", ["0", "12345"])
def test_fingerprint_is_the_same_in_another_process_with_another_hash_seed(seed):
    m = model_of("small")
    here = fingerprint(_walk(m, _PATH))
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "from support.helpers import init, model_of, run; from model import fingerprint; m = model_of('small');"
        f"print(fingerprint(run(m, init(m), *{_PATH!r})))"
    )
    env = dict(os.environ, PYTHONHASHSEED=seed)
    out = subprocess.run([sys.executable, "-c", code, str(REPO / "tests")], capture_output=True, text=True,
                         env=env, cwd=REPO, check=True, timeout=60)
    assert int(out.stdout.strip()) == here


# ---- the broker's LeaderAndIsr decision (LogManager.getOrCreateLog) ---------------------------------------------

def _broker(dirs, copies=None, hosted=None, epoch=None, partitions=2):
    """A running broker with no hosted partition, built from a real initial state."""
    m = custom_model(brokers=2, dirs=len(dirs), partitions=partitions, rf=2)
    b = init(m).brokers[0]
    return b._replace(
        dirs=tuple(dirs),
        copies=tuple(copies) if copies is not None else b.copies,
        hosted=tuple(hosted) if hosted is not None else b.hosted,
        epoch=tuple(epoch) if epoch is not None else b.epoch,
    )


def _lai(p=0, leader=0, epoch=1, is_new=False):
    return LeaderAndIsrEntry(partition=p, leader=leader, leader_epoch=epoch, isr=0b11, is_new=is_new)


def test_kip112_refuses_to_recreate_a_missing_log_while_a_dir_is_offline():
    b = _broker([OFFLINE, GOOD])
    new, response = requests.handle_leader_and_isr(policy("kip112"), 0, b, (_lai(is_new=False),))
    assert response == ((0, E_STORAGE),)
    assert new.hosted[0] == H_OFFLINE  # marked offline on the broker
    assert new.copies == b.copies  # nothing created
    assert new.epoch[0] == b.epoch[0]


def test_legacy_recreates_the_missing_log_on_a_good_dir():
    b = _broker([OFFLINE, GOOD])
    new, response = requests.handle_leader_and_isr(policy("legacy"), 0, b, (_lai(is_new=False),))
    assert response == ((0, E_NONE),)
    assert new.copies[0] == 0b10  # on dir 1, the good one
    assert new.hosted[0] == H_LEADER and new.epoch[0] == 1


@pytest.mark.parametrize("variant", VARIANTS)
def test_new_replica_goes_to_the_good_dir_with_fewest_logs(variant):
    # dir 0 offline, dir 1 holds partition 1's log, dir 2 is empty: the new replica of partition 0 goes to dir 2.
    b = _broker([OFFLINE, GOOD, GOOD], copies=[0, 0b010], hosted=[H_NONE, H_FOLLOWER], epoch=[-1, 0])
    new, response = requests.handle_leader_and_isr(policy(variant), 0, b, (_lai(leader=1, is_new=True),))
    assert response == ((0, E_NONE),)
    assert new.copies == (0b100, 0b010)
    assert new.hosted[0] == H_FOLLOWER


def test_fewest_logs_tie_goes_to_the_lowest_good_dir_and_skips_saturated_dirs():
    assert B.choose_new_log_dir(_broker([GOOD, GOOD])) == 0
    assert B.choose_new_log_dir(_broker([OFFLINE, GOOD, GOOD])) == 1
    assert B.choose_new_log_dir(_broker([SATURATED, GOOD])) == 1
    assert B.choose_new_log_dir(_broker([GOOD, GOOD], copies=[0b01, 0])) == 1
    assert B.choose_new_log_dir(_broker([SATURATED, OFFLINE, REMOVED])) == -1


@pytest.mark.parametrize("variant", [v for v in VARIANTS if v != "kip112-draft"])
def test_no_offline_dir_and_not_new_creates(variant):
    b = _broker([GOOD, GOOD])
    new, response = requests.handle_leader_and_isr(policy(variant), 0, b, (_lai(is_new=False),))
    assert response == ((0, E_NONE),)
    assert new.copies[0] == 0b01 and new.hosted[0] == H_LEADER


def test_the_drafts_broker_creates_only_when_asked_to():
    """KIP-112's draft, scenario 3: create=false and no log on a good dir is KAFKA_STORAGE_ERROR, offline dir
    or not (docs/model.md 13.1)."""
    b = _broker([GOOD, GOOD])
    new, response = requests.handle_leader_and_isr(policy("kip112-draft"), 0, b, (_lai(is_new=False),))
    assert response == ((0, E_STORAGE),) and new.copies[0] == 0
    new, response = requests.handle_leader_and_isr(policy("kip112-draft"), 0, b, (_lai(is_new=True),))
    assert response == ((0, E_NONE),) and new.copies[0] == 0b01


@pytest.mark.parametrize("variant", VARIANTS)
def test_existing_log_on_a_live_dir_is_used_as_it_is(variant):
    b = _broker([OFFLINE, GOOD], copies=[0b10, 0])
    new, response = requests.handle_leader_and_isr(policy(variant), 1, b, (_lai(leader=0, is_new=False),))
    assert response == ((0, E_NONE),)
    assert new.copies == b.copies and new.hosted[0] == H_FOLLOWER


@pytest.mark.parametrize("variant", VARIANTS)
def test_existing_log_on_a_saturated_dir_is_not_served(variant):
    # KIP-928: the log is there and readable, but a replica on a saturated dir is impaired, not served.
    b = _broker([OFFLINE, SATURATED], copies=[0b10, 0])
    new, response = requests.handle_leader_and_isr(policy(variant), 1, b, (_lai(leader=0, is_new=False),))
    assert response == ((0, E_STORAGE),)
    assert new.copies == b.copies and new.hosted[0] == H_SATURATED


def test_removed_dir_is_not_an_offline_dir():
    b = _broker([REMOVED, GOOD])
    new, response = requests.handle_leader_and_isr(policy("kip112"), 0, b, (_lai(is_new=False),))
    assert response == ((0, E_NONE),) and new.copies[0] == 0b10


def test_no_good_dir_marks_the_partition_offline_even_for_a_new_replica():
    b = _broker([SATURATED, SATURATED])
    new, response = requests.handle_leader_and_isr(policy("kip112"), 0, b, (_lai(is_new=True),))
    assert response == ((0, E_STORAGE),) and new.hosted[0] == H_OFFLINE and new.copies == b.copies


def test_partition_already_offline_answers_storage_error_straight_away():
    b = _broker([OFFLINE, GOOD], copies=[0b01, 0], hosted=[H_OFFLINE, H_NONE])
    new, response = requests.handle_leader_and_isr(policy("kip112"), 0, b, (_lai(is_new=True),))
    assert response == ((0, E_STORAGE),) and new == b


def test_stale_leader_epoch_is_ignored():
    b = _broker([GOOD, GOOD], copies=[0b01, 0], hosted=[H_FOLLOWER, H_NONE], epoch=[3, -1])
    new, response = requests.handle_leader_and_isr(policy("kip112"), 0, b, (_lai(leader=0, epoch=3),))
    assert response == ((0, E_STALE),) and new == b
    new, response = requests.handle_leader_and_isr(policy("kip112"), 0, b, (_lai(leader=0, epoch=4),))
    assert response == ((0, E_NONE),) and new.hosted[0] == H_LEADER and new.epoch[0] == 4


def test_kip112_decision_through_the_rule():
    """Scenario 1 through model.step: the restarted leader answers KAFKA_STORAGE_ERROR under kip112 only."""
    outcomes = {}
    for variant in ("kip112", "legacy"):
        m = model_of("small", variant=variant)
        s = deliver_all(m, step(m, created_topic(m), "BrokerCrash", 0))
        s = step(m, step(m, s, "DirFail", 0, 0), "BrokerRestart", 0)
        s = step(m, s, "ControllerBrokerStartup", 0)
        head = s.brokers[0].inbox[0]
        assert head.kind == LEADER_AND_ISR and not head.body[0].is_new
        after = step(m, s, "BrokerLeaderAndIsr", 0)
        outcomes[variant] = (after.brokers[0].replies[-1], after.brokers[0].hosted[0], after.brokers[0].copies[0])
    assert outcomes["kip112"] == (((0, E_STORAGE),), H_OFFLINE, 0b01)
    assert outcomes["legacy"] == (((0, E_NONE),), H_FOLLOWER, 0b11)


def test_dir_failure_at_runtime_marks_hosted_partitions_on_it_offline_and_notifies():
    m = model_of("small")
    s = step(m, created_topic(m), "DirFail", 0, 0)
    assert s.brokers[0].up and s.brokers[0].hosted[0] == H_OFFLINE
    assert s.notifications == 0b001
    s2 = step(m, created_topic(m), "DirFail", 0, 1)  # a dir without the partition
    assert s2.brokers[0].hosted[0] == H_LEADER and s2.notifications == 0b001


def test_broker_halts_when_its_last_live_dir_fails():
    m = custom_model(brokers=2, dirs=1, partitions=1, rf=2)
    s = step(m, created_topic(m), "DirFail", 1, 0)
    assert not s.brokers[1].up and all(h == H_NONE for h in s.brokers[1].hosted)
    assert s.notifications == 0  # it halted instead of writing a notification
    reason = m.rule("BrokerRestart").guard(m, deliver_all(m, s), 1)
    assert reason is not None and "log dir" in reason  # it cannot start again without a live dir


def test_stop_replica_stops_serving_but_keeps_offline_partitions_offline():
    b = _broker([GOOD, GOOD], hosted=[H_LEADER, H_OFFLINE])
    assert requests.handle_stop_replica(b, (0, 1)).hosted == (H_STOPPED, H_OFFLINE)


def test_get_or_create_log_finds_creates_or_refuses():
    """LogManager's decision alone (model/storage/broker.py): a loaded log is used as it is; a missing one is
    created empty on the good dir with the fewest logs, only when allowed; with no good dir there is none."""
    b = _broker([GOOD, GOOD], copies=[0b10, 0])
    assert B.get_or_create_log(b, 0, may_create=False) == (b, 1)           # found: nothing changes
    assert B.get_or_create_log(b, 1, may_create=False) == (b, -1)          # missing, not allowed
    created, d = B.get_or_create_log(b, 1, may_create=True)
    assert d == 0 and created.copies == (0b10, 0b01)                       # dir 0 holds fewer logs
    assert created.logs[1] == () and created.segs[1] == 0
    assert B.get_or_create_log(_broker([OFFLINE, OFFLINE]), 0, may_create=True)[1] == -1


def test_storage_rules_need_their_controller_modes_hooks():
    """A controller mode's core takes storage's rules only with the hooks they call (model/storage/mode.py)."""
    from model.spec.feature import Feature
    from model.storage.faults import STORAGE, add_storage_rules
    from model.storage.mode import HOOKS
    with pytest.raises(TypeError, match="dir_event"):
        add_storage_rules(Feature("bare", "a core without hooks", hooks={"restart_blocked": None}))
    core = Feature("core", "a core with every hook", hooks={h: None for h in HOOKS})
    add_storage_rules(core)
    assert [r.name for r in core.rules] == [r.name for r in STORAGE.rules] == [
        "DirFail", "BrokerCrash", "BrokerRestart", "ReplaceDisk", "RemoveDirFromConfig"]


def test_a_controller_step_record_is_its_models_own():
    """Recording one model's controller steps (the invariant controller_transitions_valid) leaves another
    model's steps unrecorded: the record is no longer class-global."""
    from model.zk.controller import recording
    m, other = model_of("tiny"), model_of("tiny")
    s = init(m)
    seen = {}

    def create_on_both():
        seen["other"] = ControllerStep(other, s).record
        step(m, s, "CreateTopic", 0)

    changes = recording(m, create_on_both)
    assert seen["other"] is None and ControllerStep(m, s).record is None
    assert ("partition", 0, None, P_NONEXISTENT, P_NEW, None) in changes


# ---- the controller's state machines (KAFKA-NOTES.md) ---------------------------------------------------------------

# ReplicaStateMachine.scala's valid previous states, transcribed from KAFKA-NOTES.md.
KAFKA_REPLICA_TABLE = {
    "NewReplica": {"NonExistentReplica"},
    "OnlineReplica": {"NewReplica", "OnlineReplica", "OfflineReplica", "ReplicaDeletionIneligible"},
    "OfflineReplica": {"NewReplica", "OnlineReplica", "OfflineReplica", "ReplicaDeletionIneligible"},
    "ReplicaDeletionStarted": {"OfflineReplica"},
    "ReplicaDeletionSuccessful": {"ReplicaDeletionStarted"},
    "ReplicaDeletionIneligible": {"OfflineReplica", "ReplicaDeletionStarted"},
    "NonExistentReplica": {"ReplicaDeletionSuccessful"},
}
KAFKA_PARTITION_TABLE = {
    "NewPartition": {"NonExistentPartition"},
    "OnlinePartition": {"NewPartition", "OnlinePartition", "OfflinePartition"},
    "OfflinePartition": {"NewPartition", "OnlinePartition", "OfflinePartition"},
    "NonExistentPartition": {"OfflinePartition"},
}


def test_replica_state_machine_matches_kafka():
    """The full table of KAFKA-NOTES.md, deletion states included (ReplicaStateMachine's validPreviousStates)."""
    model_table = {REPLICA_STATE_NAMES[t]: {REPLICA_STATE_NAMES[f] for f in fs} for t, fs in VALID_REPLICA_PREVIOUS.items()}
    assert model_table == KAFKA_REPLICA_TABLE
    assert set(REPLICA_STATE_NAMES) == set(KAFKA_REPLICA_TABLE)  # every state has a row


def test_partition_state_machine_matches_kafka():
    """The full table of KAFKA-NOTES.md, NonExistentPartition (topic deletion) included."""
    model_table = {PARTITION_STATE_NAMES[t]: {PARTITION_STATE_NAMES[f] for f in fs}
                   for t, fs in VALID_PARTITION_PREVIOUS.items()}
    assert model_table == KAFKA_PARTITION_TABLE
    assert set(PARTITION_STATE_NAMES) == set(KAFKA_PARTITION_TABLE)


def test_kafka_notes_tables_are_transcribed_correctly():
    """Cross-check the tables above against the specification's (docs/model.md, sections 5.3 and 5.4)."""
    rows = {}
    for line in (REPO / "docs" / "model.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) == 2 and cells[0] not in ("target", "---"):
            rows[cells[0].strip("`")] = {c.strip().strip("`") for c in cells[1].split(",")}
    assert {k: rows[k] for k in KAFKA_REPLICA_TABLE} == KAFKA_REPLICA_TABLE
    assert {k: rows[k] for k in KAFKA_PARTITION_TABLE} == KAFKA_PARTITION_TABLE


@pytest.mark.parametrize("target", range(len(REPLICA_STATE_NAMES)), ids=lambda t: REPLICA_STATE_NAMES[t])
@pytest.mark.parametrize("current", range(len(REPLICA_STATE_NAMES)), ids=lambda t: REPLICA_STATE_NAMES[t])
def test_replica_transitions_are_applied_only_when_valid(current, target):
    m = model_of("small")
    s = init(m)
    c = s.controller
    s = s._replace(controller=c._replace(replicas=((current,) * 3,)))
    st = ControllerStep(m, s)
    applied = st._set_replica_state(0, 1, target)
    assert applied == (current in VALID_REPLICA_PREVIOUS[target])
    assert st.replicas[0][1] == (target if applied else current)


def test_invalid_replica_transition_sends_nothing():
    """replicas_to_online on a NonExistentReplica is refused: no state change, no request."""
    m = model_of("small")
    st = ControllerStep(m, init(m))
    st.replicas_to_online([(0, 0)])
    after = st.finish()
    assert after.controller.replicas[0][0] == R_NONEXISTENT
    assert all(not b.inbox for b in after.brokers)


def test_topic_creation_follows_the_state_machines():
    m = model_of("small")
    s = step(m, init(m), "CreateTopic", 0)
    part = s.controller.partitions[0]
    assert (part.state, part.leader, part.leader_epoch, part.isr) == (P_ONLINE, 0, 0, 0b111)
    assert s.controller.replicas[0] == (R_ONLINE,) * 3
    for b in s.brokers:  # isNewReplica=true, then UpdateMetadata
        assert b.inbox[0].kind == LEADER_AND_ISR and b.inbox[0].body[0].is_new
    assert m.rule("CreateTopic").guard(m, s, 0) is not None  # a partition is created once


def test_topic_creation_with_no_live_replica_stays_new():
    m = custom_model(brokers=1, dirs=1, partitions=1, rf=1, max_crashes=1)
    s = deliver_all(m, step(m, init(m), "BrokerCrash", 0))
    s = step(m, s, "CreateTopic", 0)
    assert s.controller.partitions[0].state == P_NEW and s.controller.partitions[0].leader_epoch == -1
    assert s.controller.partitions[0].state != P_NONEXISTENT


# ---- the controller on a LeaderAndIsr response with KAFKA_STORAGE_ERROR ------------------------------------------------

def test_storage_error_from_the_leader_moves_leadership_and_shrinks_the_isr():
    m = model_of("small")
    s = step(m, created_topic(m), "DirFail", 0, 0)
    s = step(m, s, "ControllerLogDirEvent")
    s = step(m, s, "BrokerLeaderAndIsr", 0)
    assert s.brokers[0].replies == (((0, E_STORAGE),),)
    before = s.controller.partitions[0]
    after = step(m, s, "ControllerLeaderAndIsrResponse", 0)
    part = after.controller.partitions[0]
    assert part.leader == 1  # the next live ISR replica in assignment order (0, 1, 2)
    assert part.isr == 0b110  # broker 0 left the ISR
    assert part.leader_epoch > before.leader_epoch
    assert after.controller.replicas[0][0] == R_OFFLINE
    assert after.controller.offline[0] == 0b1  # the controller knows broker 0's replica is on an offline dir
    assert after.brokers[0].replies == ()
    # The others learn the new leader; the old leader is told to stop its replica.
    for b in (1, 2):
        lai = [msg for msg in after.brokers[b].inbox if msg.kind == LEADER_AND_ISR]
        assert lai and lai[0].body[0].leader == 1 and not lai[0].body[0].is_new
    assert any(msg.kind == STOP_REPLICA for msg in after.brokers[0].inbox)


def test_storage_error_elects_the_next_live_isr_replica_not_the_next_assigned_one():
    """Hand-made: broker 1 is out of the ISR, so the leadership goes to broker 2."""
    m = model_of("small")
    s = created_topic(m)
    c = s.controller
    s = s._replace(controller=c._replace(partitions=(c.partitions[0]._replace(isr=0b101),)))
    s = s._replace(brokers=replace_at(s.brokers, 0, s.brokers[0]._replace(replies=(((0, E_STORAGE),),))))
    after = step(m, s, "ControllerLeaderAndIsrResponse", 0)
    part = after.controller.partitions[0]
    assert (part.leader, part.isr) == (2, 0b100)
    assert after.controller.replicas[0][0] == R_OFFLINE


def test_storage_error_from_the_last_isr_member_keeps_it_in_the_isr_without_a_leader():
    m = model_of("small")
    s = created_topic(m)
    c = s.controller
    s = s._replace(controller=c._replace(partitions=(c.partitions[0]._replace(isr=0b001),)))
    s = s._replace(brokers=replace_at(s.brokers, 0, s.brokers[0]._replace(replies=(((0, E_STORAGE),),))))
    after = step(m, s, "ControllerLeaderAndIsrResponse", 0)
    part = after.controller.partitions[0]
    assert part.leader == NO_LEADER and part.isr == 0b001  # unclean election is disabled
    assert part.state == P_OFFLINE


def test_storage_error_from_a_follower_keeps_the_leader():
    m = model_of("small")
    s = step(m, created_topic(m), "DirFail", 2, 0)
    s = step(m, step(m, s, "ControllerLogDirEvent"), "BrokerLeaderAndIsr", 2)
    after = step(m, s, "ControllerLeaderAndIsrResponse", 2)
    part = after.controller.partitions[0]
    assert (part.leader, part.isr) == (0, 0b011)
    assert after.controller.replicas[0][2] == R_OFFLINE and after.controller.replicas[0][0] == R_ONLINE


def test_response_without_error_clears_the_known_offline_replica():
    m = model_of("small")
    s = created_topic(m)
    c = s.controller
    s = s._replace(controller=c._replace(offline=(0b1, 0, 0)))
    s = s._replace(brokers=replace_at(s.brokers, 0, s.brokers[0]._replace(replies=(((0, E_NONE),),))))
    after = step(m, s, "ControllerLeaderAndIsrResponse", 0)
    assert after.controller.offline[0] == 0


# ---- guards -------------------------------------------------------------------------------------------------

def test_disabled_action_raises_action_disabled_with_the_guards_reason():
    m = model_of("small")
    s = init(m)
    with pytest.raises(ActionDisabled) as e:
        m.step(s, "BrokerLeaderAndIsr", (0,))
    text = str(e.value)
    reason = m.rule("BrokerLeaderAndIsr").guard(m, s, 0)
    assert reason and "broker 0" in reason
    assert "BrokerLeaderAndIsr(broker=0)" in text and reason in text
    assert isinstance(e.value, ValueError)


def test_budget_guard_names_the_bound():
    m = model_of("small")
    s = step(m, created_topic(m), "DirFail", 0, 0)
    with pytest.raises(ActionDisabled, match="max-dir-failures"):
        m.step(s, "DirFail", (1, 0))
    s = step(m, s, "BrokerCrash", 1)  # the second fault of --max-faults 2
    with pytest.raises(ActionDisabled, match="max-faults"):
        m.step(s, "ControllerFailover", ())


def test_restart_waits_for_the_controller_to_see_the_failure():
    m = model_of("small")
    s = step(m, created_topic(m), "BrokerCrash", 0)
    reason = m.rule("BrokerRestart").guard(m, s, 0)
    assert reason and "broker 0" in reason
    s = step(m, s, "ControllerBrokerFailure", 0)
    assert m.rule("BrokerRestart").guard(m, s, 0) is None


def test_successors_agree_with_step_and_guards():
    """Every enabled action in successors() is what model.step produces, and nothing enabled is missing."""
    m = model_of("small")
    for s in (init(m), step(m, init(m), "CreateTopic", 0), step(m, created_topic(m), "DirFail", 0, 0)):
        succ = list(m.successors(s))
        enabled = [(ri, args) for ri, r, args in m.action_space if r.guard(m, s, *args) is None]
        assert [(a.rule, a.args) for a, _ in succ] == enabled
        for action, after in succ:
            again_action, again = m.step(s, m.rules[action.rule].name, action.args)
            assert again == after and again_action == action


def test_model_is_usable_for_every_variant():
    for variant in VARIANTS:
        m = build_model(preset_config("tiny", variant=variant))
        assert list(m.successors(init(m)))


# ---- the declared schema ---------------------------------------------------------------------------------------

def test_crash_channel_loss_and_quiescence_follow_the_declared_schema():
    """The features declare each broker field's lifetime, channels and dir indexing (model/storage/schema.py,
    model/zk/schema.py); a crash, a failover's channel loss and quiescence are derived from it
    (model/spec/schema.py)."""
    m = model_of("tiny", saturation=True, eager_metadata=False)
    fields = m.schema.fields["brokers"]
    assert tuple(f.name for f in fields) == type(init(m).brokers[0])._fields
    s = step(m, step(m, init(m), "CreateTopic", 0), "BrokerLeaderAndIsr", 0)   # broker 0 leads, replied, has UM
    b = s.brokers[0]
    assert b.hosted[0] and b.replies and b.inbox and b.copies[0]
    fresh = init(m).brokers[0]
    crashed = m.crashed(b)
    for i, f in enumerate(fields):
        expected = b[i] if f.lifetime == "durable" else False if f.name == "up" else fresh[i]
        assert crashed[i] == expected, f.name
    assert crashed.up is False and {f.name for f in fields if f.lifetime == "durable"} == {
        "dirs", "used", "reserved", "copies", "logs", "segs"}
    lost = m.schema.without_channels(b)
    for i, f in enumerate(fields):
        assert lost[i] == (() if f.channel else b[i]), f.name
    assert not m.is_quiescent(s)
    quiet = deliver_all(m, s)
    assert m.is_quiescent(quiet) and not any(x.inbox or x.replies or x.stop_replies for x in quiet.brokers)
    # A pending notification or a broker change the controller has not seen also makes a state not quiescent.
    assert not m.is_quiescent(quiet._replace(notifications=1))
    assert not m.is_quiescent(quiet._replace(controller=quiet.controller._replace(live=0b01)))
