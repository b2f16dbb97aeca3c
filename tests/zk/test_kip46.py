"""KIP-46 (self-healing; docs/model.md, section 13.3) as a design: the broker of its time that exits on a dir
failure, the controller's /admin/failed_brokers, its timer and its reassignment tasks, on short hand-driven
paths; and the invariant it claims, with the cases that break it.

In the kip46-heal preset's cluster (3 brokers, RF 2) partition 0 is on brokers [0, 1], broker 0 leads, and broker 2 is
where a failed broker's replica goes."""
from __future__ import annotations

import pytest

from invariants.zk.kip46 import dead_broker_is_scheduled_for_healing as scheduled
from model import ModelConfig
from model.storage.config import ConfigError
from explorer.catalog import preset_config
from model.storage.state import H_FOLLOWER, OFFLINE, RA_DONE, RA_IN_PROGRESS, bits

from support.helpers import created_topic, deliver_all, guard, init, run, step
from explorer.catalog import build_model

# The design invariant whose breaking cases are below (tests/zk/test_invariants.py counts it as covered).
BROKEN_HERE = ("dead_broker_is_scheduled_for_healing",)


@pytest.fixture(scope="module")
def heal():
    """The kip46-heal preset with two faults, a disk repair and a failover allowed."""
    return build_model(preset_config("kip46-heal", max_faults=2, max_fixes=1, max_failovers=1))


@pytest.fixture(scope="module")
def healthy(heal):
    """Partition 0 on [0, 1], broker 0 leads; one record acknowledged by both."""
    s = run(heal, created_topic(heal), ("Produce", 0, 0), ("ReplicaFetch", 1, 0))
    assert s.acked == (1,) and bits(s.controller.partitions[0].isr) == [0, 1]
    return s


def ext(m, s, name):
    return m.ext(s, name)


@pytest.fixture(scope="module")
def failed(heal, healthy):
    """Broker 1's dir with the partition fails: the broker exits; the controller records its failure."""
    d = healthy.brokers[1].copies[0].bit_length() - 1
    s = step(heal, healthy, "DirFail", 1, d)
    assert not s.brokers[1].up and s.brokers[1].dirs[d] == OFFLINE and s.notifications == 0
    s = deliver_all(heal, s)
    assert ext(heal, s, "failed_brokers") == 0b010 and not s.controller.live >> 1 & 1
    assert scheduled(heal, s) is None
    return s, d


def test_a_dir_failure_stops_the_broker_which_starts_again_only_without_an_offline_dir(heal, failed):
    s, d = failed
    assert "offline log dir" in guard(heal, s, "BrokerRestart", 1)
    s = run(heal, s, ("ReplaceDisk", 1, d), ("BrokerRestart", 1))
    assert s.brokers[1].up and s.brokers[1].copies[0] == 0, "the replaced disk held the partition's only copy"


def test_a_broker_back_before_the_timer_fires_cancels_it(heal, failed):
    s, d = failed
    s = deliver_all(heal, run(heal, s, ("RemoveDirFromConfig", 1, d), ("BrokerRestart", 1)))
    assert ext(heal, s, "failed_brokers") == 0
    assert "no entry" in guard(heal, s, "HealTimerFires", 1)


def test_the_timer_writes_a_task_that_moves_the_replica_to_another_broker(heal, failed):
    s, _ = failed
    s = step(heal, s, "HealTimerFires", 1)
    assert ext(heal, s, "heal_tasks") == ((0, 1),) and ext(heal, s, "failed_brokers") == 0
    assert scheduled(heal, s) is None
    s = step(heal, s, "ControllerHealTask")
    assert ext(heal, s, "heal_tasks") == () and ext(heal, s, "heal_moves") == ((0, (0, 1), (0, 2)),)
    assert s.controller.assigned[0] == (0, 1, 2) and s.controller.reassigning[0] == RA_IN_PROGRESS
    assert scheduled(heal, s) is None, "the move covers broker 1"
    leader_dead = s._replace(controller=s.controller._replace(live=s.controller.live & ~1))
    assert "broker 0 is dead" in scheduled(heal, leader_dead), "it does not cover broker 0, which stays assigned"
    s = step(heal, deliver_all(heal, s), "ReplicaFetch", 2, 0)
    assert s.brokers[2].hosted[0] == H_FOLLOWER and bits(s.controller.partitions[0].isr) == [0, 2]
    assert guard(heal, s, "ControllerHealIsrChange", 0) is None
    s = deliver_all(heal, step(heal, s, "ControllerHealIsrChange", 0))
    assert s.controller.assigned[0] == (0, 2) and s.controller.reassigning[0] == RA_DONE
    assert ext(heal, s, "heal_moves") == () and scheduled(heal, s) is None


def test_a_heal_in_progress_survives_a_controller_failover(heal, failed):
    s, _ = failed
    s = run(heal, s, ("HealTimerFires", 1), ("ControllerHealTask",), ("ControllerFailover",))
    s = step(heal, deliver_all(heal, s), "ReplicaFetch", 2, 0)
    s = deliver_all(heal, step(heal, s, "ControllerHealIsrChange", 0))
    assert s.controller.assigned[0] == (0, 2) and s.acked == (1,)


def test_a_task_whose_partition_has_its_replicas_again_is_skipped(heal, failed):
    s, d = failed
    s = run(heal, s, ("HealTimerFires", 1), ("RemoveDirFromConfig", 1, d), ("BrokerRestart", 1))
    s = step(heal, deliver_all(heal, s), "ControllerHealTask")
    assert ext(heal, s, "heal_tasks") == () and ext(heal, s, "heal_moves") == ()
    assert s.controller.assigned[0] == (0, 1)


def test_a_task_waits_while_no_broker_is_left_to_move_to(heal, failed):
    s, _ = failed
    s = deliver_all(heal, run(heal, s, ("HealTimerFires", 1), ("BrokerCrash", 2)))
    assert "no live broker outside" in guard(heal, s, "ControllerHealTask")
    assert scheduled(heal, s) is None, "broker 2 holds no replica of partition 0"


def test_a_broker_failure_no_controller_saw_is_never_healed(heal, healthy):
    """The KIP's explicit notification is onBrokerFailure: a broker that dies while the controller moves sees
    none (the new controller starts with it dead), so /admin/failed_brokers never has it."""
    s = deliver_all(heal, run(heal, healthy, ("BrokerCrash", 1), ("ControllerFailover",)))
    assert ext(heal, s, "failed_brokers") == 0 and heal.is_quiescent(s)
    assert "nothing will move it" in scheduled(heal, s)
    assert "no entry" in guard(heal, s, "HealTimerFires", 1)


def test_a_partition_created_on_a_broker_after_its_timer_fired_is_never_healed(heal):
    s = deliver_all(heal, run(heal, init(heal), ("BrokerCrash", 1)))
    s = step(heal, s, "HealTimerFires", 1)
    assert ext(heal, s, "heal_tasks") == (), "no partition existed"
    s = deliver_all(heal, step(heal, s, "CreateTopic", 0))
    assert "nothing will move it" in scheduled(heal, s)


def test_kip46_heals_by_itself_only():
    """The design takes no admin reassignment: said where the design is looked up (the catalog)."""
    with pytest.raises(ConfigError, match="not supported with --variant kip46"):
        build_model(ModelConfig(variant="kip46", brokers=3, rf=2, reassignment=True))
    with pytest.raises(ConfigError, match="not supported with --variant kip46"):
        preset_config("tiny", variant="kip46", brokers=3, reassignment=True)


# ---- liveness: replication_restored (docs/model.md, section 13.3) ----------------------------------------------

# 3 brokers x 1 dir, partition 0 on [0, 1], RF 2, one record; one crash, no restart (a broker down for good), no
# failover: about 15,000 unreduced states, a second or so each.
SMALL = dict(variant="kip46", brokers=3, dirs=1, partitions=1, rf=2, max_records=1, consumer=False,
             max_dir_failures=0, max_saturations=0, max_crashes=1, max_restarts=0, max_fixes=0, max_failovers=0,
             max_faults=1)


def _faults_only(design, full_isr: bool):
    """The design with a hand-made restriction (a test feature): a broker fails only once every topic exists, and
    with ``full_isr`` only while every assigned replica is in the ISR (a partition with RF in-sync replicas)."""
    import attrs

    from model.spec.feature import Feature

    rules = {r.name: r for f in design.features for r in f.rules}
    for f in design.features:
        rules.update(f.replaces)
    restriction = Feature("test-faults-after-topics", "A broker fails only once its topics exist (a test feature)")
    for name in ("BrokerCrash", "DirFail"):
        def guard(m, s, *args, raw=rules[name].guard):
            c = s.controller
            for p, part in enumerate(c.partitions):
                if part.leader_epoch < 0:
                    return f"partition {p} does not exist yet"
                if full_isr and any(not part.isr >> b & 1 for b in c.assigned[p]):
                    return f"partition {p} has an assigned replica outside its ISR"
            return raw(m, s, *args)
        restriction.replaces[name] = attrs.evolve(rules[name], guard=guard)
    return design.extended(restriction)


def _restored(model):
    from explorer.liveness import check_liveness
    from invariants.zk.kip46 import replication_restored_or_premise_gone

    return check_liveness(model, [replication_restored_or_premise_gone.invariant])


def _lasso_steps(model, result) -> list[str]:
    from explorer.liveness import cycle_is_fair

    (v,) = result.violations
    assert v.invariant.id == "replication_restored" and v.stutters and v.loop_start == len(v.trace) - 1
    assert cycle_is_fair(model, v.trace, v.loop_start)
    state = model.init_states()[0]
    for action, expected in v.trace[1:]:            # the lasso replays
        _, state = model.step(state, model.rules[action.rule].name, action.args)
        assert state == expected
    return [model.rules[a.rule].name for a, _s in v.trace[1:]]


def test_replication_restored_is_a_kip46_property_with_a_fair_timer():
    m = build_model(ModelConfig(**SMALL))
    assert "replication_restored" in {i.id for i in m.all_invariants if i.kind == "leads_to"}
    assert "replication_restored" not in {i.id for i in m.invariants}, "liveness: not in the safety selection"
    assert "replication_restored" not in {i.id for i in build_model(preset_config("tiny")).all_invariants}
    fair = {r.name: r.fair for r in m.rules}
    assert fair["HealTimerFires"] and fair["ControllerHealTask"] and fair["ControllerHealIsrChange"]
    assert not fair["BrokerCrash"] and not fair["CreateTopic"]


def test_replication_is_restored_when_a_broker_of_a_fully_replicated_partition_dies():
    from explorer.catalog import design_of

    m = build_model(ModelConfig(**SMALL), design=_faults_only(design_of("kip46"), full_isr=True))
    result = _restored(m)
    assert result.result == "ok" and result.distinct_states > 10_000


def test_a_topic_created_on_a_broker_after_its_timer_fired_never_gets_its_replication_back():
    m = build_model(ModelConfig(**SMALL))
    result = _restored(m)
    assert result.result == "violation"
    assert _lasso_steps(m, result) == ["BrokerCrash", "ControllerBrokerFailure", "HealTimerFires", "CreateTopic",
                                       "BrokerLeaderAndIsr", "ControllerLeaderAndIsrResponse"]


def test_an_offline_partition_never_gets_its_replication_back_and_its_move_waits_for_ever():
    """The dead broker was the only ISR member: no leader, so the move's target never joins the ISR, and the move
    (tasks run one at a time) stays in heal_moves."""
    from explorer.catalog import design_of

    m = build_model(ModelConfig(**SMALL), design=_faults_only(design_of("kip46"), full_isr=False))
    result = _restored(m)
    steps = _lasso_steps(m, result)
    assert steps[:6] == ["CreateTopic", "BrokerLeaderAndIsr", "Produce", "LeaderShrinkIsr", "BrokerCrash",
                         "ControllerBrokerFailure"] and "ControllerHealTask" in steps and len(steps) == 18
    last = result.violations[0].trace[-1][1]
    assert m.ext(last, "heal_moves") == ((0, (0, 1), (2, 1)),) and last.controller.partitions[0].leader == -1


@pytest.mark.parametrize("features", [{"deletion": True}, {"saturation": True, "dir_capacity": 2},
                                      {"deletion": True, "saturation": True, "dir_capacity": 2}])
def test_self_healing_composes_with_deletion_and_saturation(features):
    """KIP-46 with topic deletion and KIP-928's saturation: the features' rules fire beside the heal rules, and in
    the first 10,000 states no invariant breaks but the design's own known one (a topic created after the timer)."""
    from explorer.search import SearchOptions, bfs

    m = build_model(preset_config("kip46-heal", **features))
    r = bfs(m, list(m.invariants), SearchOptions(max_states=10_000, all_violations=True))
    assert {v.invariant.id for v in r.violations} <= {"dead_broker_is_scheduled_for_healing"}
    fired = {name for name, n in r.coverage.items() if n}
    assert {"HealTimerFires", "ControllerHealTask"} <= fired
    assert ("DeleteTopic" in fired) == features.get("deletion", False)
    assert ("DirSaturate" in fired) == features.get("saturation", False)
