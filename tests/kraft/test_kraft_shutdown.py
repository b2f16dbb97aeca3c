"""Controlled shutdown of a KRaft broker (the feature kraft-shutdown, docs/kraft.md "Controlled shutdown"): each
rule's effect, leadership moved away before the broker stops, the routing of kraft-sessions' dir failure timeout,
and kraft-tiny-faults' model without the feature."""
from __future__ import annotations

import pytest

from explorer.catalog import build_model, preset_config
from model.kraft.controller import is_active, leader_acceptor
from model.kraft.metadata import Registration
from model.kraft.rules import controller_image
from model.kraft.shutdown import PENDING, SHUTTING_DOWN
from model.storage.state import NO_LEADER

from support.helpers import enabled_labels, run_labels

SHUTDOWN_RULES = {"BrokerBeginControlledShutdown", "BrokerHeartbeatControlledShutdown", "BrokerHeartbeatShutdownNow",
                  "BrokerShutdown", "BrokerControlledShutdownTimeout"}

# Broker 0 leads partition 0 with its log on dir 0 (the metadata names it); broker 1 follows, caught up.
LEADING = ["CreateTopic(partition=0)", "BrokerReplay(broker=0)", "BrokerSendAssignments(broker=0)",
           "ControllerAssignReplicasToDirs(broker=0)", "BrokerReplay(broker=0)", "BrokerReplay(broker=1)",
           "BrokerReplay(broker=1)"]


def _model(preset="kraft-controlled-shutdown", **options):
    return build_model(preset_config(preset, options=options or None))




def test_kraft_tiny_has_no_shutdown_rule_nor_field():
    m = build_model(preset_config("kraft-tiny-faults"))
    assert "kraft-shutdown" not in m.feature_names
    assert not SHUTDOWN_RULES & {r.name for r in m.rules} and not m.ext_fields
    s = m.init_states()[0]
    # The design's schema has the field (constant without the feature) and the hooks are kraft-core's.
    assert all(b.shutdown == "" for b in s.brokers)
    assert m.hooks.shutdown_under_way.__module__ == "model.kraft.rules"
    assert all(not reg.in_controlled_shutdown for reg in s.controller.registrations)
    # A registration without the feature's field is the one kraft-core had: the default is False.
    assert Registration(0, False, (0, 1)) == (0, False, (0, 1), False)


def test_the_preset_has_the_feature_and_its_rules():
    m = _model()
    assert "kraft-shutdown" in m.feature_names and [f.name for f in m.ext_fields] == ["controlled_shutdowns"]
    assert SHUTDOWN_RULES <= {r.name for r in m.rules} and not SHUTDOWN_RULES & set(m.absent_rules)
    assert m.init_states()[0].brokers[0].shutdown == ""


def test_begin_moves_the_broker_to_pending_and_its_heartbeats_carry_want_shutdown():
    m = _model()
    s = run_labels(m, LEADING)
    s = run_labels(m, ["DirFail(broker=0, dir=1)"], s)
    assert "BrokerHeartbeat(broker=0)" in enabled_labels(m, s)
    s = run_labels(m, ["BrokerBeginControlledShutdown(broker=0)"], s)
    assert s.brokers[0].shutdown == PENDING and m.ext(s, "controlled_shutdowns") == 1
    enabled = enabled_labels(m, s)
    assert "BrokerHeartbeat(broker=0)" not in enabled  # its heartbeats are the wantShutDown ones now
    assert "BrokerHeartbeatControlledShutdown(broker=0)" in enabled
    assert "BrokerBeginControlledShutdown(broker=1)" not in enabled  # the bound 1 is used up


def test_a_controlled_shutdown_moves_leadership_before_the_broker_stops():
    m = _model()
    s = run_labels(m, LEADING + ["BrokerBeginControlledShutdown(broker=0)"])
    assert s.controller.partitions[0].leader == 0
    assert "BrokerHeartbeatShutdownNow(broker=0)" not in enabled_labels(m, s)  # it leads a partition
    s = run_labels(m, ["BrokerHeartbeatControlledShutdown(broker=0)"], s)
    reg, part = s.controller.registrations[0], s.controller.partitions[0]
    assert reg.in_controlled_shutdown and not reg.fenced
    assert part.leader == 1 and part.isr == 0b10
    image = controller_image(s)
    assert not is_active(image, 0) and not leader_acceptor(m, image, 0, 0)
    # Broker 1 has not replayed the batch yet (lowestActiveOffset): not granted.
    assert "BrokerHeartbeatShutdownNow(broker=0)" not in enabled_labels(m, s)
    assert "BrokerHeartbeatControlledShutdown(broker=0)" not in enabled_labels(m, s)  # a stuttering heartbeat
    s = run_labels(m, ["BrokerReplay(broker=1)"], s)
    assert "BrokerHeartbeatShutdownNow(broker=0)" in enabled_labels(m, s)
    s = run_labels(m, ["BrokerHeartbeatShutdownNow(broker=0)"], s)
    assert s.controller.registrations[0].fenced and s.brokers[0].shutdown == SHUTTING_DOWN and s.brokers[0].up
    s = run_labels(m, ["BrokerShutdown(broker=0)"], s)
    assert not s.brokers[0].up and s.brokers[0].shutdown == "" and s.controller.partitions[0].leader == 1
    assert s.budget == m.init_states()[0].budget  # no crash spent
    assert "BrokerRestart(broker=0)" in enabled_labels(m, s)  # fenced already: no session timeout to wait for


def test_a_broker_that_leads_nothing_is_told_to_shut_down_at_once():
    m = _model()
    s = run_labels(m, LEADING + ["BrokerBeginControlledShutdown(broker=1)"])
    assert "BrokerHeartbeatControlledShutdown(broker=1)" not in enabled_labels(m, s)
    s = run_labels(m, ["BrokerHeartbeatShutdownNow(broker=1)"], s)
    assert s.controller.registrations[1].fenced and not s.controller.registrations[1].in_controlled_shutdown
    assert s.controller.partitions[0].isr == 0b01 and s.brokers[1].shutdown == SHUTTING_DOWN


@pytest.mark.parametrize("kafka", ["3.9", "4.4"])
def test_the_last_isr_member_gives_up_leadership_and_is_then_granted(kafka):
    m = _model(max_controlled_shutdowns=2, kafka=kafka)
    s = run_labels(m, LEADING + ["BrokerBeginControlledShutdown(broker=1)", "BrokerHeartbeatShutdownNow(broker=1)",
                           "BrokerShutdown(broker=1)", "BrokerBeginControlledShutdown(broker=0)"], )
    assert s.controller.partitions[0].isr == 0b01
    s = run_labels(m, ["BrokerHeartbeatControlledShutdown(broker=0)"], s)
    part = s.controller.partitions[0]
    if kafka == "3.9":
        assert part.leader == NO_LEADER and part.isr == 0b01  # no ELR: the last member stays, no leader
    else:   # ELR: the ISR may empty, the member joins the ELR (handleBrokerInControlledShutdown, min ISR 1)
        assert part.leader == NO_LEADER and part.isr == 0 and part.elr == 0b01
    assert "BrokerHeartbeatShutdownNow(broker=0)" in enabled_labels(m, s)  # no active broker left to wait for


def test_the_timeout_stops_a_pending_broker_and_its_session_then_expires():
    m = _model()
    s = run_labels(m, LEADING + ["BrokerBeginControlledShutdown(broker=0)", "BrokerControlledShutdownTimeout(broker=0)"])
    assert not s.brokers[0].up and s.controller.partitions[0].leader == 0
    assert "BrokerRestart(broker=0)" not in enabled_labels(m, s)
    s = run_labels(m, ["ControllerFenceBroker(broker=0)"], s)
    assert s.controller.partitions[0].leader == 1 and s.controller.registrations[0].fenced


def test_the_dir_failure_timeout_begins_a_controlled_shutdown_with_the_feature():
    steps = LEADING + ["DirFail(broker=0, dir=0)", "BrokerDirFailureTimeout(broker=0)"]
    without = _model("kraft-heartbeat", max_lost_heartbeats=1)
    s = run_labels(without, steps)
    assert not s.brokers[0].up
    m = _model("kraft-heartbeat", max_lost_heartbeats=1, max_controlled_shutdowns=0)
    s = run_labels(m, steps)
    assert s.brokers[0].up and s.brokers[0].shutdown == PENDING and m.ext(s, "controlled_shutdowns") == 0
    enabled = enabled_labels(m, s)
    assert "BrokerDirFailureTimeout(broker=0)" not in enabled and "BrokerHeartbeat(broker=0)" not in enabled
    assert "BrokerBeginControlledShutdown(broker=1)" not in enabled  # max_controlled_shutdowns 0
    s = run_labels(m, ["BrokerHeartbeatControlledShutdown(broker=0)"], s)
    assert s.brokers[0].acked_dirs == 0b01 and s.controller.registrations[0].dirs == (1,)
    assert s.controller.partitions[0].leader == 1


def _kraft_shaped(model):
    """The storage rules declare ZooKeeper mode's components for their hooks; in KRaft mode they are the controller
    record (as tests/kraft/test_kraft_future.py does)."""
    import attrs

    zk = ("notifications", "controller.live", "controller.partitions")

    def shaped(declared):
        return None if declared is None else tuple("controller" if d in zk else d for d in declared)
    model.action_space = tuple(
        (ri, attrs.evolve(r, reads=shaped(r.reads), writes=shaped(r.writes), guard_reads=shaped(r.guard_reads)), args)
        for ri, r, args in model.action_space)
    return model


@pytest.mark.long_run
def test_the_feature_rules_stay_within_their_declared_footprints():
    from support.footprints import footprint_violations, sample_states

    for model in (_model(max_controlled_shutdowns=2),
                  _model("kraft-heartbeat", max_lost_heartbeats=1, max_controlled_shutdowns=1)):
        model = _kraft_shaped(model)
        states = sample_states(model, bfs=400, walks=60, depth=40)
        fired = {model.rules[a.rule].name for s in states for a, _ in model.successors(s)}
        assert SHUTDOWN_RULES <= fired
        assert footprint_violations(model, states) == []


def test_a_leader_outside_its_isr_has_no_leadership_for_the_shutdown():
    """BrokersToIsrs.hasLeaderships reads the ISR index, where a partition is under its ISR members only: a leader
    outside its ISR (finding 3 with ELR: ISR empty) leads nothing there, and its wantShutDown heartbeat, unfenced,
    gets SHUTDOWN_NOW (BrokerHeartbeatManager.calculateNextBrokerState)."""
    from model.kraft.shutdown import CONTROLLED_SHUTDOWN, SHUTDOWN_NOW, has_leaderships, next_state
    m = _model()
    s = run_labels(m, LEADING, m.init_states()[0])
    part = s.controller.partitions[0]
    assert part.leader == 0 and part.isr >> 0 & 1
    assert has_leaderships(s, 0) and next_state(s, 0) == CONTROLLED_SHUTDOWN
    outside = part._replace(isr=part.isr & ~1, elr=0)
    s = s._replace(controller=s.controller._replace(partitions=(outside,) + s.controller.partitions[1:]))
    assert not has_leaderships(s, 0) and next_state(s, 0) == SHUTDOWN_NOW
