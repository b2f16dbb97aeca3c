"""A ZooKeeper-mode scenario on a real ZooKeeper-mode cluster, judged by trace validation over the model's own
rules (docs/reproduce-zk.md, "Judging a run"), as the KRaft driver's Tracker does (realkafka/driver/validate.py):

- the *candidates* are the model states consistent with everything observed so far;
- a driven step (mapping.py) is done on the cluster and applied to every candidate, and to every state the
  cluster's own (awaited) steps reach from one, where the model enables it (a step Kafka refused: where it does not);
- then the driver observes the cluster until a view it read twice in a row is the projection (view.py) of a state
  the awaited steps reach from the candidates and that is *settled* (no awaited step left but a timed one): those
  states are the new candidates. When no reachable state shows the real view within the step's timeout, the run
  left the model: a difference, with the closest state's differences; when only unsettled states show it, the
  cluster did not take the steps the model says it takes by itself (named): a difference too.

Each driven step prints the scenario's own state at that point (its planned view: after the awaited steps it lists
before its next driven step) beside the real view; the two are compared where the cluster's own steps change nothing
seen of that state (where the scenario takes its next driven step before such a step, the cluster cannot be kept
from taking it: trace validation alone judges that point).
"""
from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field

from ..mapping import AWAITED, DRIVEN
from ..reach import TooManyCandidates, reach
from ..view import topic_of
from .mapping import awaited_steps, handler
from .view import differences, observed, project, text

POLL = 0.5                # seconds between two observations of a step


class RunLeftModel(Exception):
    pass


class NodeDied(Exception):
    """A node of the cluster ended without the harness ending it, not by Kafka's own doing (Cluster.dead): the run
    says nothing about Kafka (exit 3)."""


@dataclass
class StepResult:
    number: int
    label: str
    planned: list                      # the scenario's view at this point, in lines
    real: list                         # the real view, in lines
    differences: list                  # real vs planned (the scenario's own path)
    valid: bool                        # the real view is a settled state of the model reachable so far
    says: str = ""
    # the cluster's own steps change nothing seen of the scenario's state here, so the real view is compared with it;
    # False: the scenario takes its next driven step before such steps (which the cluster cannot be kept from
    # taking): trace validation only
    compared: bool = True
    own: list = field(default_factory=list)   # the scenario's awaited steps since the last driven one (labels)


@dataclass
class ZkRunResult:
    steps: list = field(default_factory=list)
    left_model: str | None = None      # why the run left the model (trace validation), or None
    interrupted: int | None = None

    @property
    def matched(self) -> bool:
        """Every view a settled state of the model, and the scenario's own wherever it can be compared (the end
        included)."""
        return (self.left_model is None and bool(self.steps) and self.steps[-1].compared
                and all(s.valid and not s.differences for s in self.steps))


class ZkDriver:
    def __init__(self, cluster, model, steps, *, timeout: float, echo=lambda step: None):
        self.cluster, self.model, self.steps = cluster, model, steps
        self.timeout, self.echo = timeout, echo
        self.own = awaited_steps(model)
        self.acked: dict = {}
        self.read: dict = {}
        self.result = ZkRunResult()
        self.states = frozenset(model.init_states())
        self._reached: tuple = (None, set())
        self._views: dict = {}

    # ---- the model side ----------------------------------------------------------------------------------------
    def _successors(self, state, timed_too=True):
        out = []
        for rule, args in self.own:
            if not timed_too and handler(rule.name).timed:
                continue
            if rule.guard(self.model, state, *args) is None:
                nxt = self.model.step(state, rule.name, args)[1]
                if nxt != state:
                    out.append(nxt)
        return out

    def reach(self, starts) -> set:
        """The states the cluster's own steps reach from ``starts`` (validate.reach: one search for both modes);
        the last search is kept (a random-fault run asks again for the same candidates at every observation)."""
        starts = frozenset(starts)
        if self._reached[0] != starts:
            try:
                self._reached = (starts, set(reach(self.model, starts, self.own).edges))
            except TooManyCandidates as e:
                raise RunLeftModel(str(e)) from None
        return self._reached[1]

    def _enabled(self, state) -> list[str]:
        return [rule.label(args) for rule, args in self.own if not handler(rule.name).timed
                and rule.guard(self.model, state, *args) is None
                and self.model.step(state, rule.name, args)[1] != state]

    def settled(self, state) -> bool:
        return not self._successors(state, timed_too=False)

    def view_stable(self, state, read: bool = False) -> bool:
        """No step the cluster takes by itself (a timed one aside) changes what is seen of ``state``: the scenario's
        state there can be compared with a real view (the cluster cannot be kept from taking those steps)."""
        seen, queue, view = {state}, deque([state]), project(self.model, state)
        while queue:
            for nxt in self._successors(queue.popleft(), timed_too=False):
                if nxt not in seen:
                    if differences(view, project(self.model, nxt), read=read):
                        return False
                    seen.add(nxt)
                    queue.append(nxt)
        return True

    def apply(self, rule, args, refused: bool) -> None:
        before = self.reach(self.states)
        r = self.model.rule(rule)
        if refused:
            kept = {s for s in before if r.guard(self.model, s, *args) is not None}
            if not kept:
                raise RunLeftModel(f"Kafka refused {r.label(args)}, which the model allows in every state consistent "
                                   f"with the run so far ({len(before)})")
            self.states = frozenset(kept)
            return
        after = {self.model.step(s, rule, args)[1] for s in before if r.guard(self.model, s, *args) is None}
        if not after:
            reason = sorted({r.guard(self.model, s, *args) for s in before})[0]
            raise RunLeftModel(f"the cluster did {r.label(args)}, which no model state consistent with the run so "
                               f"far allows (the model says: {reason})")
        self.states = frozenset(after)

    def narrow(self, real, read: bool = False) -> bool:
        """A view the cluster showed between two acts (a random-fault run: not necessarily a settled state): the
        candidates become the reachable states that show it; False when none does."""
        found = [s for s in self.reach(self.states) if not differences(self.view_of(s), real, read=read)]
        if found:
            self.states = frozenset(found)
        return bool(found)

    def view_of(self, state):
        """The state's projection, kept for the run (a random-fault run compares the same states at every poll)."""
        view = self._views.get(state)
        if view is None:
            view = self._views[state] = project(self.model, state)
        return view

    def closest(self, real, read: bool = False) -> list[str]:
        """The differences of the reachable state closest to the real view (fewest differences)."""
        scored = sorted((differences(project(self.model, s), real, read=read) for s in self.reach(self.states)),
                        key=len)
        return scored[0] if scored else []

    def enabled_somewhere(self, rule, args) -> bool:
        """The model enables the act in some state the cluster's own steps reach from the candidates."""
        return any(rule.guard(self.model, s, *args) is None for s in self.reach(self.states))

    # ---- the cluster side: the acts' clients -------------------------------------------------------------------
    def produce(self, broker, partition):
        topic = topic_of(partition)
        leader = self.cluster.observe(light=True).controller.partitions.get((topic, 0))
        if leader is None or leader.leader != broker:
            raise RunLeftModel(f"Produce(broker={broker}): the real leader of {topic}-0 is "
                               f"{'none' if leader is None else leader.leader}, not broker {broker}")
        r = self.cluster.produce(topic, 0, f"r{sum(map(len, self.acked.values()))}".encode())
        if r.offset is not None:
            self.acked.setdefault(topic, set()).add(r.offset)
        return {"refused": r.offset is None, "says": r.error or f"acknowledged at offset {r.offset}"}

    def consume(self, broker, partition):
        topic = topic_of(partition)
        r = self.cluster.consume(topic, 0)
        self.read = {topic: len(r.records)}      # this read only: an earlier read of another topic is past
        return {"refused": False, "says": f"read {len(r.records)} record(s)"}

    # ---- a run -------------------------------------------------------------------------------------------------
    def run(self) -> ZkRunResult:
        plan = self._planned_states()
        for number, (rule, args) in enumerate(self.steps, start=1):
            h = handler(rule)
            if h.how == AWAITED:
                continue
            label = self.model.rule(rule).label(args)
            answer = {}
            try:
                answer = h.act(self, *args) or {}
                self.apply(rule, args, bool(answer.get("refused")))
                real, valid, diffs = self._await(read=rule == "Consume")
            except RunLeftModel as e:
                self.result.left_model = f"step {number} {label}: {e}"
                real, valid, diffs = self._real(rule == "Consume"), False, []
            at = plan[self._next_driven(number)]
            own = [self.model.rule(r).label(a) for r, a in self.steps[number:self._next_driven(number)]]
            planned = project(self.model, at)
            comparable = self.view_stable(at, read=rule == "Consume")
            step = StepResult(number, label, text(planned), text(real),
                              differences(planned, real, read=rule == "Consume") if comparable else [], valid,
                              answer.get("says", ""), comparable, own)
            if diffs and not valid:
                step.says = (step.says + "; " if step.says else "") + "closest model state differs: " + "; ".join(diffs)
            self.result.steps.append(step)
            self.echo(step)
            if self.result.left_model:
                break
        return self.result

    def _planned_states(self) -> list:
        """The scenario's own path: the state after each step (index 0: the initial state)."""
        states = [next(iter(self.model.init_states()))]
        for rule, args in self.steps:
            states.append(self.model.step(states[-1], rule, args)[1])
        return states

    def _next_driven(self, number: int) -> int:
        """The index in the planned path of the state just before the next driven step after ``number`` (the end)."""
        for later in range(number + 1, len(self.steps) + 1):
            if handler(self.steps[later - 1][0]).how == DRIVEN:
                return later - 1
        return len(self.steps)

    def _real(self, read: bool):
        return observed(self.cluster.observe(), self.model, self.acked, self.read if read else {})

    def _await(self, read: bool):
        """Observe until the real view, read twice the same, is a settled reachable state's; (the view, whether it
        was, the closest state's differences)."""
        reachable = self.reach(self.states)
        views = [(s, self.view_of(s)) for s in reachable]      # projected once: each poll compares them
        deadline = time.monotonic() + self.timeout
        last, best = None, []
        while True:
            dead = self.cluster.dead()
            if dead:
                raise NodeDied("; ".join(dead))
            real = self._real(read)
            found = [s for s, view in views if not differences(view, real, read=read)]
            if real == last and found:
                settled = [s for s in found if self.settled(s)]
                if settled:
                    self.states = frozenset(settled)
                    return real, True, []
            last = real
            if time.monotonic() >= deadline:
                if found:
                    steps = sorted({label for s in found for label in self._enabled(s)})
                    raise RunLeftModel(f"the real cluster stayed {self.timeout:.0f} s in a state the model leaves by "
                                       f"its own steps ({', '.join(steps)}): it did not take them")
                scored = sorted((differences(project(self.model, s), real, read=read) for s in reachable), key=len)
                best = scored[0] if scored else []
                raise RunLeftModel(f"no model state reachable from the {len(self.states)} candidate(s) shows what the "
                                   f"real cluster shows ({len(reachable)} reachable); the closest differs: "
                                   + "; ".join(best))
            time.sleep(POLL)
