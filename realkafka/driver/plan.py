"""The model run the real cluster follows: the scenario's steps, each followed by the steps the cluster takes by
itself (mapping.py: the awaited rules, in their order, until none is enabled), except those a hold stops.

A real cluster does not wait for the trace: brokers replay the metadata log within milliseconds, heartbeat every
two seconds, the controller fences a crashed broker when its session expires, followers fetch. So the driver's
model takes those steps too, as the cluster would, and compares the real cluster with that model run (each of
its steps is a rule of the model: the same semantics). The trace's own order is kept by holds:
AssignReplicasToDirs is held for every broker from the start and released for the trace's
ControllerAssignReplicasToDirs steps (and at the end); a follower that the trace shrinks out of an ISR has its
fetches held from the start; a broker's heartbeats are held over a window where taking them earlier would change
the outcome (finding 5: the unfencing heartbeat must come after the dir failure and the assignment).

A held AssignReplicasToDirs is refused by the gate (the broker's AssignmentsManager puts the sent entries back and
sends them again, a newer entry of the same partition winning) unless the trace handles a request while the broker
has queued a newer entry of one of its partitions behind it (finding 3): the model's request in flight is then
handled as sent, which a refusal would merge away, so the gate delays it instead, from the step that sends it to
the step that handles it (``Plan.delays``; a delay longer than the gate's cap becomes a refusal). Where the trace
keeps a promotion the controller accepted from moving on (the swap) over a driven step, the controller's answers to
the broker are held meanwhile by the harness's answer proxy (``Plan.answers``).

The plan keeps the trace's violation: the checks (checks.py) that the trace's projections show must be those the
planned run shows. It first tries no heartbeat window; if the outcome differs, it holds each broker's heartbeats
from where the cluster would first send the one the trace takes later, up to the trace's step. If that still
differs, the trace's timing cannot be forced with these holds: the plan says so (``forced`` False) and the run
compares the real cluster with the planned model run anyway.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from model import ActionDisabled

from .checks import CHECKS, judge
from .mapping import (
    ANSWER, ASSIGN, AWAITED, DELAYED, DRIVEN, FETCH, HEARTBEAT, NOT_REPRODUCIBLE, ORDERED, Hold, handler, own_steps,
)
from .projection import project

MAX_OWN_STEPS = 200   # the cluster's own steps after one scenario step: more means the model does not settle


class PlanError(ValueError):
    """The scenario cannot be run on a real cluster (a rule with no mapping, or one that is not reproducible, or a
    driven step that the cluster's own steps disabled): bad input, exit 2."""


@dataclass(frozen=True)
class PlannedStep:
    number: int                  # the scenario's step number (0: the start; len + 1: the end, every hold released)
    text: str                    # the step as the scenario writes it
    rule: str | None
    args: tuple
    taken: bool                  # the model took the step here (False: the cluster's own steps had taken it)
    own: tuple                   # labels of the cluster's own steps the model took after it
    holds_during: frozenset      # the holds in force while the step is done
    holds_after: frozenset       # the holds in force after it
    state: object
    view: object
    checks: dict                 # check id -> what it says, at this view


@dataclass
class Plan:
    steps: list                  # PlannedStep, the start first and the end last
    target: dict                 # check id -> the first message, as the scenario's own trace shows them
    shown: dict                  # the same, as the planned run shows them
    windows: tuple               # heartbeat windows: (broker, from step, to step)
    fetch_holds: dict = field(default_factory=dict)   # Hold -> the step releasing it (None: the end)
    dir_failure_timeout: bool = True   # the cluster keeps log.dir.failure.timeout.ms (see cluster_steps)
    delays: tuple = ()           # AssignReplicasToDirs delayed, not refused: (broker, from step, to step)
    answers: tuple = ()          # the controller's answers held (the answer proxy): (broker, from step, to step)

    @property
    def forced(self) -> bool:
        """The planned run shows the trace's violation: the trace's timing is forced by the holds."""
        return set(self.shown) == set(self.target)


def parse(model, steps) -> list[tuple]:
    """(name, args) per step, refused (PlanError) where a rule has no mapping or is not reproducible."""
    out = []
    for number, (name, args) in enumerate(steps, start=1):
        try:
            h = handler(name)
        except KeyError:
            raise PlanError(f"step {number} {name}: the rule has no mapping onto a real cluster "
                            f"(realkafka/driver/mapping.py)") from None
        if h.how == NOT_REPRODUCIBLE:
            raise PlanError(f"step {number} {name} is not reproducible on a real cluster: {h.says}")
        out.append((name, tuple(args)))
    return out


def data_path_step(model, name, args) -> tuple | None:
    """A step of a scenario written without records, as the run's model with the data path on takes it, or None
    when it has no such step: the added replica's catch-up, ``ReplicaCatchUp(p, b)`` (its fetches and the
    leader's ISR expansion in one step, model/kraft/reassignment.py), is then its fetch ``ReplicaFetch(b, p)``,
    awaited likewise (a real follower fetches until it joins)."""
    fetch = ("ReplicaFetch", (args[1], args[0])) if name == "ReplicaCatchUp" else None
    if fetch is None or not any(r.name == fetch[0] and a == fetch[1] for _, r, a in model.action_space):
        return None
    return fetch


def _label(model, name, args) -> str:
    return model.rule(name).label(args)


def settle(model, state, holds: frozenset, own=None, record: list | None = None) -> tuple[object, tuple, tuple]:
    """The cluster's own steps from ``state``, in order, until none is enabled (those a hold stops left out): the
    state, the steps taken and, when they come back to a state they passed (the cluster repeats them for ever: an
    AssignReplicasToDirs retried without end), the repeated steps (else empty)."""
    own = own_steps(model) if own is None else own
    taken: list = []
    seen = {state: 0}
    for _ in range(MAX_OWN_STEPS):
        for _, _, rule, args in own:
            h = handler(rule.name)
            if h.held_by is not None and h.held_by(*args) in holds:
                continue
            if rule.guard(model, state, *args) is None:
                _, state = model.step(state, rule.name, args)
                taken.append(rule.label(args))
                if record is not None:
                    record.append((rule.name, tuple(args)))   # (name, args): a scenario can replay them
                break
        else:
            return state, tuple(taken), ()
        if state in seen:
            return state, tuple(taken), tuple(taken[seen[state]:])
        seen[state] = len(taken)
    raise PlanError(f"the model's own steps do not settle after {MAX_OWN_STEPS} steps (last: {taken[-5:]})")


def retrying(cycle: tuple) -> frozenset:
    """The brokers whose AssignReplicasToDirs requests a cycle of the cluster's own steps repeats."""
    return frozenset(int(label.split("=")[1].rstrip(")")) for label in cycle
                     if label.startswith("ControllerAssignReplicasToDirs("))


def _fetch_holds(steps) -> dict:
    """Hold(Fetch, follower, p) for every LeaderShrinkIsr(p, follower) of the trace: held from the start up to the
    trace's next ReplicaFetch(follower, p) after the shrink (None: to the end)."""
    holds = {}
    for i, (name, args) in enumerate(steps, start=1):
        if name == "LeaderShrinkIsr":
            p, follower = args
            hold = Hold(FETCH, follower, p)
            later = [j for j, (n, a) in enumerate(steps, start=1) if j > i and n == "ReplicaFetch" and a == (follower, p)]
            holds[hold] = later[0] if later else None
    return holds


def _holds_at(model, steps, number: int, windows, fetch_holds, during: bool, delays=(), answers=()) -> frozenset:
    """The holds in force while step ``number`` is done (during) or after it, before the next one. A fetch hold
    released at step r is in force before r. A heartbeat window (broker, start, end) is in force from step
    ``start`` (already while it is done: a restarted broker heartbeats within a second) up to step ``end``, the
    trace's heartbeat, which it lets through; a trace heartbeat of that broker inside a window goes through too.
    A delay (broker, start, end) marks the broker's AssignReplicasToDirs hold delayed from step ``start`` (while it
    is done: its request goes out then) up to step ``end``, which releases it. An answer window (broker, start,
    end) holds the controller's answers to the broker's AssignReplicasToDirs likewise, from the step whose request
    the controller accepts up to the trace's swap (PromoteFutureReplica), which lets them through."""
    holds = {Hold(ASSIGN, b) for b in range(model.cfg.brokers)}
    for hold, release in fetch_holds.items():
        if release is None or number < release:
            holds.add(hold)
    for broker, start, end in windows:
        if start <= number < end:
            holds.add(Hold(HEARTBEAT, broker))
    for broker, start, end in delays:
        if start <= number < end:
            holds.add(Hold(DELAYED, broker))
    for broker, start, end in answers:
        if start <= number < end:
            holds.add(Hold(ANSWER, broker))
    if during and 0 < number <= len(steps):
        name, args = steps[number - 1]
        if name == "ControllerAssignReplicasToDirs":
            holds.discard(Hold(ASSIGN, args[0]))
            holds.discard(Hold(DELAYED, args[0]))
        if name == "ControllerExpireSession":
            holds.add(Hold(HEARTBEAT, args[0]))
        if name in ("BrokerHeartbeat", "BrokerHeartbeatControlledShutdown", "BrokerHeartbeatShutdownNow"):
            holds.discard(Hold(HEARTBEAT, args[0]))
    return frozenset(holds)


TIMED_OUT = "BrokerDirFailureTimeout"


def cluster_steps(model, steps) -> list:
    """The cluster's own steps for this trace (mapping.own_steps), without BrokerDirFailureTimeout unless the trace
    takes it: a broker whose heartbeats a hold keeps back would otherwise stop itself log.dir.failure.timeout.ms
    after a dir failure (3.8+), a step the trace does not have; the cluster then runs with that timeout beyond the
    run (``Plan.dir_failure_timeout`` False), a Kafka configuration in which the model's run is the trace's."""
    own = own_steps(model)
    if any(name == TIMED_OUT for name, _ in steps):
        return own
    return [o for o in own if o[2].name != TIMED_OUT]


def _trace_checks(model, steps, own, at: dict | None = None) -> dict:
    """The checks the scenario's own trace shows: its projection after each step, as the model replays it, then
    after the cluster's own steps from its last state with nothing held (what follows the trace: an assignment
    retried for ever shows only there)."""
    state = model.init_states()[0]
    faulted, history, found = set(), [project(model, state)], {}
    for number, (name, args) in enumerate(steps, start=1):
        try:
            _, state = model.step(state, name, args)
        except ActionDisabled as e:
            raise PlanError(f"step {number} {e} (the scenario's own trace, on the model of this release)") from None
        if name == "DirFail":
            faulted.add(tuple(args))
        history.append(project(model, state, faulted))
        for cid, why in judge(history).items():
            found.setdefault(cid, why)
            if at is not None:
                at.setdefault(cid, number)
    state, _, cycle = settle(model, state, frozenset(), own)
    history.append(replace(project(model, state, faulted), retrying=retrying(cycle)))
    for cid, why in judge(history).items():
        found.setdefault(cid, why)
        if at is not None:
            at.setdefault(cid, len(steps) + 1)
    return found


def why_unforced(model, steps, planned: "Plan") -> str | None:
    """None when the plan is forced; else a line naming the first trace step whose violation the holds cannot
    bring about, and what the model run the cluster can be held to shows instead."""
    if planned.forced:
        return None
    steps = parse(model, steps)
    at: dict = {}
    _trace_checks(model, steps, cluster_steps(model, steps), at)
    missing = sorted(set(planned.target) ^ set(planned.shown), key=lambda c: at.get(c, len(steps) + 1))
    first = at.get(missing[0], len(steps)) if missing else len(steps)
    name, args = steps[min(first, len(steps)) - 1]
    target = ", ".join(sorted(planned.target)) or "no violation"
    shown = ", ".join(sorted(planned.shown)) or "none"
    return (f"step {first} {_label(model, name, args)}: the trace shows {target} there, which needs a timing the "
            f"harness's holds cannot force (the model run the cluster can be held to shows {shown} instead)")


def trace_properties(model, steps) -> dict:
    """The model's safety properties the scenario's own trace violates: id -> the first step showing it (state and
    quiescent properties after each step, transition properties at each step)."""
    found: dict = {}
    state = model.init_states()[0]

    def judge_state(s, number):
        for inv in model.invariants:
            if inv.kind == "state" or (inv.kind == "quiescent" and model.is_quiescent(s)):
                if inv.check(model, s) is not None:
                    found.setdefault(inv.id, number)
    judge_state(state, 0)
    for number, (name, args) in enumerate(steps, start=1):
        action, after = model.step(state, name, args)
        for inv in model.invariants:
            if inv.kind == "transition" and inv.check(model, state, action, after) is not None:
                found.setdefault(inv.id, number)
        state = after
        judge_state(state, number)
    return found


def unjudged(model, steps, target=None) -> dict:
    """The properties the trace violates that no check (checks.py) shows on the trace: id -> the first step showing
    it. A property no check stands for, or whose checks the trace's projections do not show (``target``: the plan's;
    a quiet check on a trace that is never quiet there), could not be judged on a real run, so such a scenario is
    refused."""
    target = set(plan(model, steps).target if target is None else target)
    shown = {i for c in CHECKS.values() if c.id in target for i in c.invariants}
    return {i: n for i, n in trace_properties(model, steps).items() if i not in shown}


def _run(model, steps, windows, fetch_holds, target, own, delays=(), answers=()) -> Plan:
    state = model.init_states()[0]
    state, first_own, _ = settle(model, state, _holds_at(model, steps, 0, windows, fetch_holds, False), own)
    faulted: set = set()
    history = [project(model, state)]
    planned = [PlannedStep(0, "start", None, (), True, first_own, frozenset(),
                           _holds_at(model, steps, 0, windows, fetch_holds, False), state, history[0],
                           judge(history))]
    shown: dict = {}
    for number, (name, args) in enumerate(steps, start=1):
        h = handler(name)
        during = _holds_at(model, steps, number, windows, fetch_holds, True, delays, answers)
        after = _holds_at(model, steps, number, windows, fetch_holds, False, delays, answers)
        try:
            _, state = model.step(state, name, args)
            taken = True
        except ActionDisabled as e:
            if h.how != AWAITED:
                raise PlanError(f"step {number} {_label(model, name, args)} cannot be driven on a real cluster: "
                                f"after the cluster's own steps, {str(e).split(' is not enabled: ', 1)[-1]}") \
                    from None
            taken = False   # the cluster did it already (or has nothing to do): nothing to wait for
        if name == "DirFail":
            faulted.add(tuple(args))
        state, taken_own, cycle = settle(model, state, after, own)
        history.append(replace(project(model, state, faulted), retrying=retrying(cycle)))
        checks = judge(history)
        for cid, why in checks.items():
            shown.setdefault(cid, why)
        planned.append(PlannedStep(number, _label(model, name, args), name, tuple(args), taken, taken_own, during,
                                   after, state, history[-1], checks))
    state, last_own, cycle = settle(model, state, frozenset(), own)
    history.append(replace(project(model, state, faulted), retrying=retrying(cycle)))
    planned.append(PlannedStep(len(steps) + 1, "end: every hold released", None, (), True, last_own, frozenset(),
                               frozenset(), state, history[-1], judge(history)))
    for cid, why in planned[-1].checks.items():
        shown.setdefault(cid, why)
    return Plan(planned, target, shown, tuple(windows), dict(fetch_holds),
                any(o[2].name == TIMED_OUT for o in own), tuple(delays), tuple(answers))


def _answer_windows(model, steps, plan: Plan) -> list:
    """(broker, from step, to step) where the trace keeps the -future log the controller accepted as it is: a trace
    step ControllerAssignReplicasToDirs(b) after which the plan's cluster moves the promotion on (its own steps take
    PromoteFutureReplica(b, p): the swap, or a promotion queued again after the broker replayed its own record)
    while the trace drives a step (or orders one by a hold) before it. Held up to the trace's
    PromoteFutureReplica(b, p) after it, to the trace's next ControllerAssignReplicasToDirs(b) or to the step after
    b's crash, whichever comes first (else to the end): while its answer is held the real broker keeps the request
    in flight and sends no other (AssignmentsManager: one at a time; what the model sends at once waits in its
    queue, which no view tells apart), so the controller can handle its next request only once the answer went
    through."""
    out = []
    for number, (name, args) in enumerate(steps, start=1):
        if name != "ControllerAssignReplicasToDirs":
            continue
        broker = args[0]
        mine = f"PromoteFutureReplica(broker={broker}, "
        swaps = {label for label in plan.steps[number].own if label.startswith(mine)}
        if not swaps:
            continue
        ends = [j for j, (n, a) in enumerate(steps, start=1) if j > number and n == "PromoteFutureReplica"
                and _label(model, n, a) in swaps]
        before_swap = steps[number:(ends[0] - 1) if ends else len(steps)]
        if all(handler(n).how == AWAITED for n, _ in before_swap):
            continue      # the trace swaps among the cluster's own steps, as the cluster would
        ends += [j for j, (n, a) in enumerate(steps, start=1) if j > number and (n, tuple(a)) == (name, tuple(args))]
        # a crash ends the broker's connection and its request with it: let go after it (the restarted broker's
        # answers are not held)
        ends += [j + 1 for j, (n, a) in enumerate(steps, start=1) if j > number and n == "BrokerCrash"
                 and tuple(a) == (broker,)]
        out.append((broker, number, min(ends, default=len(steps) + 1)))
    return out


def _sent_at(planned: list, broker: int) -> int | None:
    """The last planned step at (or after) which the broker sent its AssignReplicasToDirs request: the step whose
    own steps send it, or the send itself taken as a trace step."""
    send = f"BrokerSendAssignments(broker={broker})"
    found = [p.number for p in planned if send in p.own or (p.taken and p.text == send)]
    return found[-1] if found else None


def delays(model, planned: Plan) -> list:
    """(broker, from step, to step) for each trace step ControllerAssignReplicasToDirs(b) that handles a request
    while b has queued a newer entry of one of its partitions: a refusal would have the broker send the newer entry
    in its place (AssignmentsManager re-queues what it sent, the latest entry of a partition winning), so the
    request is delayed from the step that sends it to that step, as the model has it in flight."""
    out = []
    for i, step in enumerate(planned.steps):
        if step.rule != "ControllerAssignReplicasToDirs" or not step.taken or i == 0:
            continue
        broker = step.args[0]
        b = planned.steps[i - 1].state.brokers[broker]
        if not {e[0] for e in b.inflight} & {e[0] for e in b.queue}:
            continue
        sent = _sent_at(planned.steps[:i], broker)
        if sent is not None:
            out.append((broker, max(sent, 1), step.number))
    return out


def _windows(model, steps, plan: Plan) -> list:
    """Heartbeat windows from a plan without them: for each trace step BrokerHeartbeat(b) (or a session expiry of
    b), b's heartbeats are held from the first step after which the plan's cluster heartbeated for b on its own
    (since b's previous trace heartbeat) up to that step."""
    windows = []
    for broker in range(model.cfg.brokers):
        mine = f"BrokerHeartbeat(broker={broker})"
        since = 0
        for number, (name, args) in enumerate(steps, start=1):
            if name == "ControllerExpireSession" and args == (broker,):
                later = [j for j, (n, a) in enumerate(steps, start=1) if j > number and n == "BrokerHeartbeat"
                         and a == (broker,)]
                windows.append((broker, number, later[0] if later else len(steps) + 1))
                since = number
            if name != "BrokerHeartbeat" or args != (broker,):
                continue
            early = [p.number for p in plan.steps if since <= p.number < number and mine in p.own]
            if early and (broker, early[0], number) not in windows:
                windows.append((broker, early[0], number))
            since = number
    return windows


def plan(model, steps) -> Plan:
    """The model run the real cluster follows for the scenario's ``steps`` ((name, args) each)."""
    steps = parse(model, steps)
    own = cluster_steps(model, steps)
    target = _trace_checks(model, steps, own)
    fetch_holds = _fetch_holds(steps)
    chosen = first = _run(model, steps, (), fetch_holds, target, own)
    answers = _answer_windows(model, steps, first)
    if answers:
        # the trace keeps an accepted -future log unswapped where the cluster would swap: held, whatever the outcome
        chosen = first = _run(model, steps, (), fetch_holds, target, own, (), answers)
    windows = () if first.forced else _windows(model, steps, first)
    if windows:
        second = _run(model, steps, windows, fetch_holds, target, own, (), answers)
        chosen = second if second.forced or len(second.shown) >= len(first.shown) else first
    delayed = delays(model, chosen)
    if not delayed:
        return chosen
    # the same model run (a delay stops what a refusal stops), its holds marked delayed where they are
    return _run(model, steps, chosen.windows, fetch_holds, target, own, delayed, chosen.answers)


def hold_texts(holds) -> list[str]:
    """Each hold in words, a delayed AssignReplicasToDirs hold said once, as delayed."""
    delayed = {h.broker for h in holds if h.api == DELAYED}
    return [Hold(DELAYED, h.broker).text() if h.api == ASSIGN and h.broker in delayed else h.text()
            for h in sorted(holds) if h.api != DELAYED]


def describe_holds(holds) -> str:
    return ", ".join(hold_texts(holds)) or "none"


__all__ = ["Plan", "PlanError", "PlannedStep", "data_path_step", "plan", "settle", "describe_holds", "hold_texts", "DRIVEN", "ORDERED"]
