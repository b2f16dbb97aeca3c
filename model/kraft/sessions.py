"""KRaft broker sessions and controller failover: the feature ``kraft-sessions`` (docs/kraft.md, "Sessions and
failover").

kraft-core answers every heartbeat in the step that sends it and fences a broker only after its crash. This
feature adds what happens between a broker and the active controller when messages are lost or late:

- a heartbeat's answer is lost (the controller handled it; the broker does not learn the acknowledgement of the
  offline dirs it carried and keeps reporting them): ``BrokerHeartbeatAnswerLost``;
- the session of a running broker expires (its heartbeats stopped arriving): ``ControllerExpireSession``; the
  broker goes on with its session (same broker epoch) and its next heartbeat unfences it (kraft-core's
  ``BrokerHeartbeat``: BrokerHeartbeatManager.calculateNextBrokerState, FENCED -> UNFENCED once caught up);
- a failed dir not acknowledged within ``log.dir.failure.timeout.ms`` makes the broker shut down (Kafka 3.8+;
  ``BrokerDirFailureTimeout``; the bug switch KAFKA-15649 takes it away, as before 3.8);
- the active controller fails over: the new one keeps the metadata log and the requests in flight to the old
  one fail, so every AssignReplicasToDirs in flight goes back to its broker's queue (``ControllerFailover``).

A heartbeat the controller times out (QuorumController.processBrokerHeartbeat's timeout path,
ReplicationControlManager.processExpiredBrokerHeartbeat: the session is kept alive, the offline dirs ignored, the
broker retries) changes nothing the model holds: it is a stuttering step. So that the controller may time out every
heartbeat for ever (KAFKA-15649's premise: an overloaded controller), kraft-core's ``BrokerHeartbeat`` is not
weakly fair in a model with this feature (liveness checking only).

The feature is included when one of its options is given (``--option max_lost_heartbeats=N``,
``--option max_session_expiries=N``); ``--max-failovers`` bounds ``ControllerFailover`` as it bounds ZooKeeper
mode's (a fault, counted by ``--max-faults``).
"""
from __future__ import annotations

import attrs

from model.kraft import controller as C
from model.kraft import rules as core
from model.kraft.bugs import bugs
from model.spec.feature import Feature, Option, StateField
from model.kraft.replica_manager import requeue_inflight
from model.storage.common import bounded, brokers, budget_left, nothing, set_broker, spend
from model.storage.state import B_FAILOVERS

KAFKA_15649 = "KAFKA-15649"
CONTROLLER_EVENT = core.CONTROLLER_EVENT


def _count(value) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 9:
        return f"must be a whole number from 0 to 9, not {value!r}"
    return None


OPTIONS = (
    Option("max_lost_heartbeats", 0, "KRaft sessions: heartbeat answers lost (BrokerHeartbeatAnswerLost)", _count),
    Option("max_session_expiries", 0, "KRaft sessions: sessions of running brokers that expire "
           "(ControllerExpireSession)", _count),
)
OPTION_NAMES = tuple(o.name for o in OPTIONS)


def enabled(cfg) -> bool:
    """Included when one of the feature's options is given (with 0: the feature without that event)."""
    return any(name in OPTION_NAMES for name, _ in cfg.options)


def _render(m, s) -> dict:
    return {"lost_heartbeat_answers": m.ext(s, "lost_heartbeats"), "expired_sessions": m.ext(s, "session_expiries")}


SESSIONS = Feature(
    "kraft-sessions",
    "KRaft broker sessions: lost heartbeat answers, expired sessions of running brokers, the 3.8+ shutdown on an "
    "unacknowledged dir failure (log.dir.failure.timeout.ms) and controller failover",
    enabled=enabled,
    requires=(core.KRAFT,),
    config_fields=("max_failovers",),   # its ControllerFailover's bound: without the feature no failover happens
    options=OPTIONS,
    state_fields=(
        StateField("lost_heartbeats", 0, "How many heartbeat answers were lost (the bound max_lost_heartbeats)."),
        StateField("session_expiries", 0, "How many sessions of running brokers expired (max_session_expiries)."),
    ),
    render=_render,
)

# kraft-core's heartbeat, not weakly fair here: the controller may time out every heartbeat (module docstring).
_HEARTBEAT = next(r for r in core.KRAFT.rules if r.name == "BrokerHeartbeat")
SESSIONS.replaces["BrokerHeartbeat"] = attrs.evolve(_HEARTBEAT, fair=False)


def _bounded(option: str):
    def domain(m):
        return brokers(m) if m.option(option) > 0 else []
    domain.__name__ = f"brokers_if_{option}"
    return domain


# ---- lost heartbeat answers ------------------------------------------------------------------------------------

def answer_lost_guard(m, s, broker):
    why = core.heartbeat_guard(m, s, broker)
    if why is not None:
        return why
    if m.ext(s, "lost_heartbeats") >= m.option("max_lost_heartbeats"):
        return f"the bound max_lost_heartbeats {m.option('max_lost_heartbeats')} is used up"
    return None


@SESSIONS.rule("BrokerHeartbeatAnswerLost",
               reads=("broker[broker]", *CONTROLLER_EVENT, "ext.lost_heartbeats"),
               writes=(*CONTROLLER_EVENT, "ext.lost_heartbeats"),
               params=("broker",), domain=_bounded("max_lost_heartbeats"), guard=answer_lost_guard,
               kind="environment",
               reference="ReplicationControlManager.processBrokerHeartbeat; "
                         "BrokerLifecycleManager.BrokerHeartbeatResponseEvent (timed out: "
                         "scheduleNextCommunicationAfterFailure, offlineDirs not marked acknowledged)")
def broker_heartbeat_answer_lost(m, s, broker):
    """A heartbeat reaches the controller, which handles it as BrokerHeartbeat does (unfencing, then
    handleDirectoriesOffline for the dirs it carries), but its answer is lost: the broker does not mark the dirs it
    carried as acknowledged, and its next heartbeat carries them again (handled again, they change nothing)."""
    acked = s.brokers[broker].acked_dirs
    s = core.broker_heartbeat(m, s, broker)
    s = set_broker(s, broker, s.brokers[broker]._replace(acked_dirs=acked))
    return m.with_ext(s, lost_heartbeats=m.ext(s, "lost_heartbeats") + 1)


# ---- expired sessions of running brokers ---------------------------------------------------------------------

def expire_guard(m, s, broker):
    reg = s.controller.registrations[broker]
    if reg is None or reg.fenced:
        return f"broker {broker} is not registered unfenced"
    if not s.brokers[broker].up:
        return f"broker {broker} is down (ControllerFenceBroker fences it)"
    if m.ext(s, "session_expiries") >= m.option("max_session_expiries"):
        return f"the bound max_session_expiries {m.option('max_session_expiries')} is used up"
    return None


@SESSIONS.rule("ControllerExpireSession",
               reads=("broker[broker].up", *CONTROLLER_EVENT, "ext.session_expiries"),
               writes=(*CONTROLLER_EVENT, "ext.session_expiries"),
               params=("broker",), domain=_bounded("max_session_expiries"), guard=expire_guard, kind="environment",
               reference="BrokerHeartbeatManager.findOneStaleBroker (broker.session.timeout.ms); "
                         "ReplicationControlManager.maybeFenceOneStaleBroker, handleBrokerFenced")
def controller_expire_session(m, s, broker):
    """The heartbeats of a running broker stopped arriving (lost, or the broker too slow) and its session times
    out: as for a crashed broker, it leaves every ISR (the last member stays) and every leadership, then its
    registration is fenced. The broker keeps running with the same broker epoch: BrokerLifecycleManager ignores
    isFenced in RUNNING, and its next heartbeat (wantFence false, caught up) unfences it."""
    s = core.write(m, s, C.broker_fenced(m, core.controller_image(s), broker))
    return m.with_ext(s, session_expiries=m.ext(s, "session_expiries") + 1)


# ---- the 3.8+ shutdown on an unacknowledged dir failure ----------------------------------------------------------

def _timeout_domain(m):
    """Brokers; none with KAFKA-15649 (before 3.8 there is no log.dir.failure.timeout.ms)."""
    return [] if KAFKA_15649 in bugs(m) else brokers(m)


def dir_timeout_guard(m, s, broker):
    b = s.brokers[broker]
    if not b.up:
        return f"broker {broker} is down"
    if not b.failed & ~b.acked_dirs:
        return f"broker {broker} has no failed dir that a heartbeat answer has not acknowledged"
    return m.hooks.shutdown_under_way(m, s, broker)


@SESSIONS.rule("BrokerDirFailureTimeout",
               # controller.registrations: kraft-shutdown's shut_down hook (is the broker RUNNING?)
               reads=("broker[broker]", "controller.registrations"), writes=("broker[broker]",),
               params=("broker",), domain=_timeout_domain, guard=dir_timeout_guard, kind="broker",
               reference="BrokerLifecycleManager.propagateDirectoryFailure (scheduleDeferred after "
                         "log.dir.failure.timeout.ms), OfflineDirBrokerFailureEvent.run -> shutdownHook "
                         "(BrokerServer.shutdown); Kafka 3.8.0+, KAFKA-15649")
def broker_dir_failure_timeout(m, s, broker):
    """log.dir.failure.timeout.ms after a dir failed, no heartbeat answer has acknowledged it: the broker shuts
    down. Its memory is lost as in a crash (AssignmentsManager's queue is not flushed); the controller, which did not
    answer its heartbeats, fences it when its session expires (ControllerFenceBroker). No crash budget is spent: the
    shutdown follows from the dir failure. With the feature kraft-shutdown a running broker begins a controlled
    shutdown instead (BrokerServer.shutdown: model/kraft/shutdown.py)."""
    return m.hooks.shut_down(m, s, broker)


# ---- controller failover -----------------------------------------------------------------------------------

def failover_guard(m, s):
    if not any(b.inflight for b in s.brokers):
        return "no request is in flight (a failover would change nothing the model holds)"
    return budget_left(m, s, B_FAILOVERS)


@SESSIONS.rule("ControllerFailover",
               reads=("broker[*].inflight", "broker[*].queue", "budget"),
               writes=("broker[*].inflight", "broker[*].queue", "budget"),
               spends=B_FAILOVERS, needs_message=True,
               params=(), domain=bounded(nothing, "max_failovers"), guard=failover_guard, kind="environment",
               reference="QuorumController.QuorumMetaLogListener.handleLeaderChange (renounce: pending writes fail "
                         "with NOT_CONTROLLER; claim: ClusterControlManager.activate, fresh sessions); "
                         "AssignmentsManager.handleResponse (global error: requeued unless newer)")
def controller_failover(m, s):
    """The active controller changes: the new one replays the same metadata log (every event of the model is
    committed in its step) and starts every broker's session afresh; the requests in flight to the old one fail.
    Every broker's AssignReplicasToDirs in flight goes back to its queue (an entry whose partition has a newer one
    queued is dropped) and is sent again. Heartbeats are re-sent: the model has none in flight."""
    budget = spend(s, B_FAILOVERS)
    for i, b in enumerate(s.brokers):
        if b.inflight:
            s = set_broker(s, i, requeue_inflight(b))
    return s._replace(budget=budget)


# Each preset exhausts in a few minutes at most on one core: a lost answer, a failover and an expired session
# together with a dir failure and a restart are more than 5 million states (docs/kraft.md, "Sessions and failover").
_TINY = dict(variant="kraft", brokers=2, dirs=2, partitions=1, rf=2, max_records=0, consumer=False,
             max_saturations=0, max_crashes=0, max_fixes=0, max_dir_failures=1, max_restarts=1)
SESSIONS.presets.update({
    "kraft-heartbeat": ("KRaft sessions: 2 brokers x 2 dirs, 1 partition, RF 2, no record; a dir failure, a lost "
                        "heartbeat answer, a controller failover, a restart (no crash: the dir failure timeout "
                        "stops a broker)",
                        dict(_TINY, max_failovers=1, max_faults=2,
                             options={"max_lost_heartbeats": 1, "max_session_expiries": 0})),
    "kraft-session-expiry": ("KRaft sessions: 2 brokers x 2 dirs, 1 partition, RF 2, no record; a dir failure, "
                             "an expired session of a running broker, a restart (no crash: the dir failure timeout "
                             "stops a broker)",
                             dict(_TINY, max_failovers=0, max_faults=1,
                                  options={"max_lost_heartbeats": 0, "max_session_expiries": 1})),
})
