"""Controlled shutdown of a KRaft broker: the feature ``kraft-shutdown`` (docs/kraft.md, "Controlled shutdown").

BrokerServer.shutdown with controlled.shutdown.enable (the default) first asks the active controller to move the
broker's leaderships away, and stops only when the controller says so or the wait times out:

- ``BrokerBeginControlledShutdown``: BrokerLifecycleManager's BeginControlledShutdownEvent, RUNNING ->
  PENDING_CONTROLLED_SHUTDOWN (an operator's stop: an environment event, bounded by ``max_controlled_shutdowns``);
- ``BrokerHeartbeatControlledShutdown``: a heartbeat with wantShutDown whose answer is "not yet": the controller
  (BrokerHeartbeatManager.calculateNextBrokerState) moves an unfenced broker that leads a partition to
  CONTROLLED_SHUTDOWN (ReplicationControlManager.handleBrokerInControlledShutdown: the registration's
  InControlledShutdown, then the broker leaves every ISR and leadership);
- ``BrokerHeartbeatShutdownNow``: a heartbeat with wantShutDown answered shouldShutDown (SHUTDOWN_NOW: the broker
  leads nothing and, if it was in CONTROLLED_SHUTDOWN, every active broker replayed past its controlled shutdown
  offset; handleBrokerFenced); the broker goes to SHUTTING_DOWN;
- ``BrokerShutdown``: the rest of BrokerServer.shutdown, the broker stops;
- ``BrokerControlledShutdownTimeout``: the wait for the controller timed out, the broker stops anyway.

A stop loses the broker's memory as a crash does (volatile state, ``Schema.crashed``) and spends no crash budget.
With the feature, kraft-sessions' ``BrokerDirFailureTimeout`` (a shutdown through BrokerServer.shutdown) begins a
controlled shutdown of a running broker rather than stopping it (the hooks ``shutdown_under_way``, ``shut_down``).
The feature is included when its option ``max_controlled_shutdowns`` is given.
"""
from __future__ import annotations

from model.kraft import controller as C
from model.kraft import rules as core
from model.kraft.disks import failed_dir_ids
from model.kraft.metadata import K_BROKER_CHANGE, BrokerChange
from model.spec.feature import Feature, Option, StateField
from model.spec.schema import Field, Show
from model.storage.common import brokers, set_broker
from model.storage.state import State

CONTROLLER_EVENT = core.CONTROLLER_EVENT
OPTION = "max_controlled_shutdowns"

# The broker's shutdown state (BrokerLifecycleManager's BrokerState, the part this feature adds): none begun.
NOT_SHUTTING_DOWN, PENDING, SHUTTING_DOWN = "", "PENDING_CONTROLLED_SHUTDOWN", "SHUTTING_DOWN"
# The controller's states of a broker (BrokerHeartbeatManager.BrokerControlState).
FENCED, UNFENCED, CONTROLLED_SHUTDOWN, SHUTDOWN_NOW = "FENCED", "UNFENCED", "CONTROLLED_SHUTDOWN", "SHUTDOWN_NOW"


def _count(value) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 9:
        return f"must be a whole number from 0 to 9, not {value!r}"
    return None


def enabled(cfg) -> bool:
    return any(name == OPTION for name, _ in cfg.options)


def shutdown_under_way(m, s, broker) -> str | None:
    """The hook of kraft-core's BrokerHeartbeat and kraft-sessions' BrokerDirFailureTimeout: a broker whose
    shutdown began sends only heartbeats with wantShutDown (this feature's) and does not shut down again."""
    state = s.brokers[broker].shutdown
    if state != NOT_SHUTTING_DOWN:
        return f"broker {broker} is in {state}"
    return None


def _running(s, broker) -> bool:
    """BrokerLifecycleManager's RUNNING, as the model knows it: registered, its image loaded, and its registration
    unfenced (the heartbeat answer that unfenced it moved the broker from RECOVERY to RUNNING)."""
    b, reg = s.brokers[broker], s.controller.registrations[broker]
    return b.up and b.registered and b.loaded and reg is not None and not reg.fenced


def shut_down(m, s, broker) -> State:
    """BrokerServer.shutdown: a RUNNING broker begins a controlled shutdown (BeginControlledShutdownEvent);
    in any other state it stops at once (BeginControlledShutdownEvent's "skipping controlled shutdown")."""
    if _running(s, broker):
        return set_broker(s, broker, s.brokers[broker]._replace(shutdown=PENDING))
    return core.shut_down(m, s, broker)


FIELDS = (
    Field("shutdown", "brokers", lambda m: NOT_SHUTTING_DOWN, "volatile", pending=True, after="acked_dirs",
          show=Show("shutdown_state", "kraft_shutdown_state"),
          doc="BrokerLifecycleManager's state once a shutdown began: '' (none), PENDING_CONTROLLED_SHUTDOWN "
              "(heartbeats carry wantShutDown) or SHUTTING_DOWN (the controller said shouldShutDown)"),
)

SHUTDOWN = Feature(
    "kraft-shutdown",
    "Controlled shutdown of a KRaft broker: wantShutDown heartbeats, the controller's CONTROLLED_SHUTDOWN "
    "(InControlledShutdown, leaderships moved away) and SHUTDOWN_NOW (fenced), the broker's stop or timeout",
    enabled=enabled,
    requires=(core.KRAFT,),
    options=(Option(OPTION, 0, "kraft-shutdown: controlled shutdowns an operator begins "
                    "(BrokerBeginControlledShutdown; giving it turns the feature on)", _count),),
    state_fields=(StateField("controlled_shutdowns", 0, "How many controlled shutdowns an operator began "
                             "(the bound max_controlled_shutdowns)."),),
    fields=FIELDS,
    # BrokerLifecycleManager's state by its name; null before a shutdown begins.
    formats={"kraft_shutdown_state": lambda m, value: value or None},
    hooks={"shutdown_under_way": shutdown_under_way, "shut_down": shut_down},
    render=lambda m, s: {"controlled_shutdowns": m.ext(s, "controlled_shutdowns")},
)


# ---- the controller's view (BrokerHeartbeatManager) ----------------------------------------------------------

def in_controlled_shutdown(m, image, broker) -> list:
    """ReplicationControlManager.handleBrokerInControlledShutdown: a BrokerRegistrationChangeRecord with
    InControlledShutdown (unless the registration has it already), then the broker leaves every ISR it is in (the
    last member stays) and every leadership, elections through LeaderAcceptor (generateLeaderAndIsrUpdates with
    brokerToRemove), computed from the image before the event."""
    records = [] if image.registrations[broker].in_controlled_shutdown else [
        BrokerChange(K_BROKER_CHANGE, broker, None, None, True)]
    with_b = [p for p in range(m.cfg.partitions) if C.exists(image, p) and image.partitions[p].isr >> broker & 1]
    return records + C._updates(m, image, with_b, remove=broker)


def current_state(s, broker) -> str:
    """BrokerHeartbeatManager.currentBrokerState, from the registration (the model keeps no other controller
    memory: a broker is in CONTROLLED_SHUTDOWN while its registration says InControlledShutdown)."""
    reg = s.controller.registrations[broker]
    if reg.fenced:
        return FENCED
    return CONTROLLED_SHUTDOWN if reg.in_controlled_shutdown else UNFENCED


def controlled_shutdown_offset(s, broker) -> int:
    """BrokerHeartbeatManager's controlledShutdownOffset: the batch of the event that moved the broker to
    CONTROLLED_SHUTDOWN (QuorumController.processBrokerHeartbeat: maybeUpdateControlledShutdownOffset)."""
    log = s.controller.log
    return next(i for i in range(len(log) - 1, -1, -1)
                if any(r.kind == K_BROKER_CHANGE and r.broker == broker and r.in_controlled_shutdown for r in log[i]))


def others_caught_up(s, broker) -> bool:
    """controlledShutdownOffset <= lowestActiveOffset: every active broker (unfenced, not in controlled shutdown)
    has replayed the batch. A broker's metadata offset is its applied offset now (its heartbeats that only report
    it are left out); a crashed broker not yet fenced counts with its memory lost (0), which only delays the
    grant until its session expires."""
    offset = controlled_shutdown_offset(s, broker)
    return all(s.brokers[x].applied > offset for x, reg in enumerate(s.controller.registrations)
               if x != broker and reg is not None and not reg.fenced and not reg.in_controlled_shutdown)


def has_leaderships(s, broker) -> bool:
    """BrokersToIsrs.hasLeaderships: the broker leads a partition in the controller's image and is in its ISR.
    BrokersToIsrs indexes a partition under its ISR members only (the leader's entry flagged), so a leader outside
    its ISR (finding 3 with ELR: an empty ISR) is not counted: the controller may answer SHUTDOWN_NOW."""
    return any(part.leader == broker and part.leader_epoch >= 0 and part.isr >> broker & 1
               for part in s.controller.partitions)


def next_state(s, broker) -> str:
    """BrokerHeartbeatManager.calculateNextBrokerState for a heartbeat with wantShutDown (wantFence false: the
    broker was RUNNING)."""
    current = current_state(s, broker)
    if current == FENCED:
        return SHUTDOWN_NOW
    if has_leaderships(s, broker):
        return CONTROLLED_SHUTDOWN
    if current == UNFENCED or others_caught_up(s, broker):
        return SHUTDOWN_NOW
    return CONTROLLED_SHUTDOWN


def _want_shutdown_heartbeat(m, s, broker, nxt):
    """ReplicationControlManager.processBrokerHeartbeat: the records of the state change (none if the state stays),
    then handleDirectoriesOffline for the dirs the heartbeat names, from the image before it; the answer
    acknowledges those dirs (BrokerLifecycleManager's response handler)."""
    b = s.brokers[broker]
    image = core.controller_image(s)
    records = []
    if current_state(s, broker) != nxt:
        records = C.broker_fenced(m, image, broker) if nxt == SHUTDOWN_NOW else in_controlled_shutdown(m, image, broker)
    offline = failed_dir_ids(m, b)
    records += C.directories_offline(m, image, broker, offline)
    s = core.write(m, s, records)
    return set_broker(s, broker, s.brokers[broker]._replace(acked_dirs=b.failed))


def _pending(s, broker) -> str | None:
    b = s.brokers[broker]
    if not b.up or not b.registered:
        return f"broker {broker} is not running registered"
    if b.shutdown != PENDING:
        return f"broker {broker} is not in PENDING_CONTROLLED_SHUTDOWN"
    return None


# ---- the rules -----------------------------------------------------------------------------------------------

def _begin_domain(m):
    return brokers(m) if m.option(OPTION) > 0 else []


def begin_guard(m, s, broker):
    if not _running(s, broker):
        return f"broker {broker} is not RUNNING (registered, loaded, unfenced)"
    if s.brokers[broker].shutdown != NOT_SHUTTING_DOWN:
        return f"broker {broker} is in {s.brokers[broker].shutdown}"
    if m.ext(s, "controlled_shutdowns") >= m.option(OPTION):
        return f"the bound {OPTION} {m.option(OPTION)} is used up"
    return None


@SHUTDOWN.rule("BrokerBeginControlledShutdown",
               reads=("broker[broker]", "controller.registrations", "ext.controlled_shutdowns"),
               writes=("broker[broker].shutdown", "ext.controlled_shutdowns"),
               params=("broker",), domain=_begin_domain, guard=begin_guard, kind="environment",
               reference="BrokerServer.shutdown (controlled.shutdown.enable); "
                         "BrokerLifecycleManager.beginControlledShutdown, BeginControlledShutdownEvent")
def broker_begin_controlled_shutdown(m, s, broker):
    """An operator stops a RUNNING broker: BrokerLifecycleManager moves to PENDING_CONTROLLED_SHUTDOWN, and every
    later heartbeat carries wantShutDown. The broker keeps serving, fetching and replaying the metadata log."""
    s = set_broker(s, broker, s.brokers[broker]._replace(shutdown=PENDING))
    return m.with_ext(s, controlled_shutdowns=m.ext(s, "controlled_shutdowns") + 1)


def not_yet_guard(m, s, broker):
    why = _pending(s, broker)
    if why is not None:
        return why
    if next_state(s, broker) != CONTROLLED_SHUTDOWN:
        return f"the controller grants broker {broker}'s shutdown (SHUTDOWN_NOW)"
    b = s.brokers[broker]
    if current_state(s, broker) == CONTROLLED_SHUTDOWN and not b.failed & ~b.acked_dirs:
        return f"a heartbeat of broker {broker} changes nothing (still CONTROLLED_SHUTDOWN, no dir unacknowledged)"
    return None


# Not weakly fair: the controller may time the heartbeats out (kraft-sessions); the timeout stops the broker.
@SHUTDOWN.rule("BrokerHeartbeatControlledShutdown",
               reads=("broker[*].applied", "broker[broker]", *CONTROLLER_EVENT),
               writes=("broker[broker].acked_dirs", *CONTROLLER_EVENT),
               params=("broker",), domain=brokers, guard=not_yet_guard, kind="controller", fair=False,
               reference="BrokerLifecycleManager.sendBrokerHeartbeat (wantShutDown); "
                         "ReplicationControlManager.processBrokerHeartbeat; BrokerHeartbeatManager."
                         "calculateNextBrokerState (UNFENCED -> CONTROLLED_SHUTDOWN); "
                         "ReplicationControlManager.handleBrokerInControlledShutdown, handleDirectoriesOffline")
def broker_heartbeat_controlled_shutdown(m, s, broker):
    """A heartbeat with wantShutDown from a broker that still leads a partition (or whose controlled shutdown
    offset some active broker has not replayed yet): the controller moves it to CONTROLLED_SHUTDOWN (on the first
    such heartbeat: InControlledShutdown, the broker leaves every ISR and leadership, elections through
    LeaderAcceptor, which no longer accepts it) and handles the offline dirs it names; the answer, not
    shouldShutDown, acknowledges them."""
    return _want_shutdown_heartbeat(m, s, broker, CONTROLLED_SHUTDOWN)


def now_guard(m, s, broker):
    why = _pending(s, broker)
    if why is not None:
        return why
    if next_state(s, broker) != SHUTDOWN_NOW:
        return f"the controller keeps broker {broker} in CONTROLLED_SHUTDOWN (it leads a partition, or an active " \
               "broker has not replayed its controlled shutdown offset)"
    return None


@SHUTDOWN.rule("BrokerHeartbeatShutdownNow",
               reads=("broker[*].applied", "broker[broker]", *CONTROLLER_EVENT),
               writes=("broker[broker].acked_dirs", "broker[broker].shutdown", *CONTROLLER_EVENT),
               params=("broker",), domain=brokers, guard=now_guard, kind="controller", fair=False,
               reference="BrokerHeartbeatManager.calculateNextBrokerState (SHUTDOWN_NOW: no leaderships, "
                         "controlledShutdownOffset <= lowestActiveOffset); ReplicationControlManager."
                         "processBrokerHeartbeat, handleBrokerFenced; BrokerLifecycleManager "
                         "(shouldShutDown: beginShutdown, controlledShutdownFuture completes)")
def broker_heartbeat_shutdown_now(m, s, broker):
    """A heartbeat with wantShutDown that the controller grants: the broker leads nothing and every active broker
    replayed the batch that put it in CONTROLLED_SHUTDOWN (or it was fenced, or unfenced leading nothing). The
    controller fences it (handleBrokerFenced: it leaves every ISR, the last member stays), handles the offline
    dirs it names; the answer says shouldShutDown and the broker goes to SHUTTING_DOWN."""
    s = _want_shutdown_heartbeat(m, s, broker, SHUTDOWN_NOW)
    return set_broker(s, broker, s.brokers[broker]._replace(shutdown=SHUTTING_DOWN))


def stop_guard(m, s, broker):
    b = s.brokers[broker]
    if not b.up or b.shutdown != SHUTTING_DOWN:
        return f"broker {broker} is not running in SHUTTING_DOWN"
    return None


# controller.registrations: the clean shutdown file's broker epoch (the hook clean_stop, kraft-elr).
@SHUTDOWN.rule("BrokerShutdown",
               reads=("broker[broker]", "controller.registrations"), writes=("broker[broker]",),
               params=("broker",), domain=brokers, guard=stop_guard, kind="broker",
               reference="BrokerServer.shutdown (after controlledShutdownFuture: lifecycleManager.beginShutdown, "
                         "the socket server, ReplicaManager, LogManager stopped)")
def broker_shutdown(m, s, broker):
    """The controller granted the shutdown: the broker stops. Its memory is lost as in a crash (no crash budget
    is spent); its registration is fenced already, so it may start again at once (BrokerRestart)."""
    return core.shut_down(m, s, broker)


def timeout_guard(m, s, broker):
    b = s.brokers[broker]
    if not b.up or b.shutdown != PENDING:
        return f"broker {broker} is not running in PENDING_CONTROLLED_SHUTDOWN"
    return None


@SHUTDOWN.rule("BrokerControlledShutdownTimeout",
               reads=("broker[broker]", "controller.registrations"), writes=("broker[broker]",),
               params=("broker",), domain=brokers, guard=timeout_guard, kind="broker",
               reference="BrokerServer.shutdown (controlledShutdownFuture.get times out at the shutdown's deadline: "
                         "\"Timed out waiting for the controller to approve controlled shutdown\")")
def broker_controlled_shutdown_timeout(m, s, broker):
    """The controller did not grant the shutdown in time (it keeps the broker in CONTROLLED_SHUTDOWN, or timed its
    heartbeats out): the broker stops anyway, its memory lost as in a crash; the controller fences it when its
    session expires (ControllerFenceBroker)."""
    return core.shut_down(m, s, broker)


_TINY = dict(variant="kraft", brokers=2, dirs=2, partitions=1, rf=2, max_records=0, consumer=False,
             max_saturations=0, max_crashes=0, max_fixes=0, max_failovers=0, max_dir_failures=1, max_restarts=1,
             max_faults=1)
SHUTDOWN.presets.update({
    "kraft-controlled-shutdown": ("KRaft controlled shutdown: 2 brokers x 2 dirs, 1 partition, RF 2, no record; "
                                  "a controlled shutdown, a dir failure, a restart",
                                  dict(_TINY, options={OPTION: 1})),
    "kraft-controlled-shutdown-data": ("KRaft controlled shutdown with the data path: the same cluster, one record "
                                       "and a consumer; a controlled shutdown, a restart, no fault",
                                       dict(_TINY, max_records=1, consumer=True, max_dir_failures=0,
                                            options={OPTION: 1})),
})
