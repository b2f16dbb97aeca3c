"""Hypothesis stateful testing, generated from the rule registry (``jbodcheck fuzz``, ``pytest -m stateful``).

``make_state_machine(model, invariants)`` builds a ``RuleBasedStateMachine`` class for one configuration:

- one Hypothesis ``@rule`` per registry rule (same name), so Hypothesis's swarm testing switches whole rules on
  and off; its precondition is "some argument tuple of the rule's domain is enabled", and the rule draws one of
  the enabled argument tuples, then takes it with ``Model.step`` (the rules' own guard and effect);
- one Hypothesis ``@invariant`` per registered ``state`` and ``quiescent`` invariant (quiescent ones only
  checked when ``model.is_quiescent``); ``transition`` invariants are checked inside every step;
- one extra rule, ``idle_when_deadlocked``, enabled only when no model rule is (every event budget spent and
  nothing in flight), so that Hypothesis never sees a machine with no rule to run.

Nothing here names a model rule or an invariant: a rule or invariant added to the registries (or by a plugin,
see invariants/plugins.py) is picked up as it is. A broken invariant raises ``InvariantViolation``, an
``AssertionError`` that carries the steps of the run; Hypothesis shrinks the run, ``minimize`` then removes
every step the violation does not need, and the result is rendered by the explorer's trace renderer and can
be written as a scenario file for ``jbodcheck replay`` (docs/extending.md).
"""
from __future__ import annotations

import time
from typing import Callable

import attrs
import hypothesis.strategies as st
from hypothesis import HealthCheck, Phase, Verbosity, seed as hypothesis_seed, settings as Settings
from hypothesis.reporting import with_reporter
from hypothesis.stateful import RuleBasedStateMachine, invariant as hyp_invariant, precondition, rule as hyp_rule
from hypothesis.stateful import run_state_machine_as_test

from model.spec.engine import Checker, SearchResult, TransitionCounts, Violation, rebuild_trace, result_status
from model.spec.invariant import Invariant
from model.spec.model import Action, ActionDisabled, Model

from explorer.reports.render import trace_text
from . import signals
from .scenario import Scenario, replay, scenario_dict, scenario_steps  # noqa: F401 - their old home

# Bounds on environment events that `jbodcheck fuzz` uses when no --preset is given (and the pytest
# stateful suite uses for its large configuration): loose enough for long histories with several faults of
# each kind, while every run still ends. Explicit bound flags override them; --model-bounds uses ModelConfig's
# defaults (or the preset's) instead. At most four faults: with RF 3, every replica of a partition down plus a
# controller failover needs more, and that combination breaks leader_is_live_isr_member in the model's KIP-112
# variant (docs/extending.md, "A finding").
LOOSE_BOUNDS = dict(
    max_dir_failures=3, max_saturations=2, max_crashes=2, max_restarts=2, max_fixes=2, max_failovers=2,
    max_faults=4,
)
DEFAULT_EXAMPLES = 200
DEFAULT_STEPS = 60
IDLE_RULE = "idle_when_deadlocked"


class InvariantViolation(AssertionError):
    """An invariant broken during a Hypothesis run; carries the actions that led to it."""

    def __init__(self, model: Model, invariant: Invariant, message: str, actions):
        super().__init__(f"violation of {invariant.id}: {message}")
        self.model = model
        self.invariant = invariant
        self.message = message
        self.actions: tuple[Action, ...] = tuple(actions)

    @property
    def steps(self) -> list[str]:
        """The run's steps in scenario-file form, e.g. "DirFail(broker=1, dir=0)"."""
        return scenario_steps(self.model, self.actions)

    def trace(self) -> list:
        """The run as (action, state) pairs from the initial state, as the explorer's engines report it."""
        return rebuild_trace(self.model, self.actions)

    def minimal(self, invariants: list[Invariant] | None = None) -> "InvariantViolation":
        """The same violation after removing every step it does not need (see ``minimize``)."""
        actions, message = minimize(self.model, self.invariant, self.actions, invariants)
        return InvariantViolation(self.model, self.invariant, message, actions)

    def __str__(self) -> str:
        # Rendered only when shown (Hypothesis raises many of these while shrinking): the minimal trace.
        shown = self.minimal()
        inv = self.invariant
        return (f"VIOLATION of {inv.id} ({inv.kind} invariant): {shown.message}\n"
                f"  {inv.statement}\n"
                f"Steps ({len(shown.actions)}): " + "; ".join(shown.steps) + "\n"
                f"Trace ({len(shown.actions)} steps):\n" + trace_text(self.model, shown.trace()))


def _first_violation(model: Model, checker: Checker, pairs) -> tuple[int, dict] | None:
    """Apply (rule name, args) pairs from the initial state; the first step that breaks an invariant as (steps
    taken, {invariant id: message}), or None when a step is disabled or nothing is violated."""
    state = model.init_states()[0]
    found = checker.check_state(state)
    if found:
        return 0, {inv.id: msg for inv, msg in found}
    for n, (name, args) in enumerate(pairs, start=1):
        try:
            action, after = model.step(state, name, args)
        except ActionDisabled:
            return None
        found = checker.check_transition(state, action, after) + checker.check_state(after)
        if found:
            return n, {inv.id: msg for inv, msg in found}
        state = after
    return None


def minimize(model: Model, invariant: Invariant, actions, invariants: list[Invariant] | None = None,
             ) -> tuple[tuple[Action, ...], str]:
    """Remove steps (halving chunks, then single steps) as long as the run still breaks ``invariant`` first,
    among ``invariants`` (default: just that one): a 1-minimal counterexample. Hypothesis's shrinker works on
    its choice sequence and can stop at a longer run (a removed step shifts the later choices); this pass works
    on the steps themselves. Returns the actions (as the model takes them again) and the violation message."""
    checker = Checker(model, list(invariants) if invariants else [invariant])
    pairs = [(model.rules[a.rule].name, a.args) for a in actions]
    first = _first_violation(model, checker, pairs)
    if first is None or invariant.id not in first[1]:
        raise RuntimeError(f"the run does not break {invariant.id} first: {scenario_steps(model, actions)}")
    pairs, message = pairs[:first[0]], first[1][invariant.id]
    chunk = max(1, len(pairs) // 2)
    while True:
        i, changed = 0, False
        while i < len(pairs):
            candidate = pairs[:i] + pairs[i + chunk:]
            found = _first_violation(model, checker, candidate)
            if found is not None and invariant.id in found[1]:
                pairs, message, changed = candidate[:found[0]], found[1][invariant.id], True
            else:
                i += chunk
        if chunk == 1 and not changed:
            break
        chunk = max(1, chunk // 2)
    state, taken = model.init_states()[0], []
    for name, args in pairs:
        action, state = model.step(state, name, args)
        taken.append(action)
    return tuple(taken), message


def _stop_if_signalled() -> None:
    """A signal received (recorded only: ``fuzz`` runs Hypothesis in mode ``flag``) stops the run here, between two
    steps, as KeyboardInterrupt: the one exception Hypothesis lets through at once (another BaseException, such as
    SIGTERM's SearchInterrupted raised in the middle of its data generation, makes it replay the example)."""
    if signals.received() is not None:
        raise KeyboardInterrupt


@attrs.define
class FuzzStats:
    """Counters shared by every machine instance of one run (coverage as the explorer's engines count it)."""
    counts: TransitionCounts
    examples: int = 0
    deepest: int = 0
    seen: set = attrs.Factory(set)
    progress: Callable[[str], None] | None = None
    start: float = attrs.Factory(time.monotonic)
    next_progress: float = 0.0
    first_failure: "InvariantViolation | None" = None   # kept for a run a signal stops before Hypothesis shrank it

    def __attrs_post_init__(self):
        self.next_progress = self.start + 3.0

    @property
    def steps(self) -> int:
        return self.counts.generated

    def new_example(self) -> None:
        signals.test_point("fuzz-example")
        _stop_if_signalled()
        self.examples += 1
        if self.progress is not None:
            now = time.monotonic()
            if now >= self.next_progress:
                self.next_progress = now + 3.0
                self.progress(f"examples {self.examples:,}  steps {self.steps:,}  distinct {len(self.seen):,}  "
                              f"{now - self.start:.0f}s")

    def failed(self, failure: "InvariantViolation") -> "InvariantViolation":
        """Note a failing run (the first, or a shorter one) and return it, to be raised."""
        if self.first_failure is None or len(failure.actions) < len(self.first_failure.actions):
            self.first_failure = failure
        return failure

    def count(self, action: Action, after, depth: int) -> None:
        _stop_if_signalled()
        self.counts.count(action)
        self.seen.add(after)       # the states themselves: distinct by value, symmetry or not
        if depth > self.deepest:
            self.deepest = depth


def make_state_machine(model: Model, invariants: list[Invariant] | None = None, *,
                       stats: FuzzStats | None = None, name: str | None = None) -> type[RuleBasedStateMachine]:
    """A RuleBasedStateMachine class for this model, generated from its rules and the given invariants.

    invariants=None: the model's invariants (those of its features and plugins: build the model with
    ``plugins=invariants.load_plugins(env=True)`` to check the ones JBODCHECK_PLUGINS names).
    stats: a FuzzStats to count examples, steps, distinct states and per-rule coverage into.
    """
    if invariants is None:
        invariants = list(model.invariants)

    def _noted(failure: InvariantViolation) -> InvariantViolation:
        return stats.failed(failure) if stats is not None else failure

    transition_invs = [i for i in invariants if i.kind == "transition"]
    rules = model.rules
    domains = [[] for _ in rules]
    for ri, _, args in model.action_space:
        domains[ri].append(args)

    def enabled_args(self, ri: int) -> list:
        cache = self._enabled
        found = cache.get(ri)
        if found is None:
            r, state = rules[ri], self.state
            found = cache[ri] = [args for args in domains[ri] if r.guard(model, state, *args) is None]
        return found

    def take(self, ri: int, args: tuple) -> None:
        before = self.state
        action, after = model.step(before, rules[ri].name, args)
        self.actions.append(action)
        if stats is not None:
            stats.count(action, after, len(self.actions))
        for inv in transition_invs:
            message = inv.check(model, before, action, after)
            if message is not None:
                raise _noted(InvariantViolation(model, inv, message, self.actions))
        self.state = after
        self._enabled = {}

    def init(self) -> None:
        RuleBasedStateMachine.__init__(self)
        self.model = model
        self.state = model.init_states()[0]
        self.actions: list[Action] = []
        self._enabled: dict = {}
        if stats is not None:
            stats.new_example()

    def machine_repr(self) -> str:
        return f"{type(self).__name__}(after {len(self.actions)} steps)"

    namespace: dict = {
        "__init__": init, "__repr__": machine_repr, "enabled_args": enabled_args, "take": take,
        "__doc__": f"Hypothesis machine for {model.cfg!r}, generated from the rule registry.",
    }

    def make_rule(ri: int):
        r = rules[ri]
        choose = len(domains[ri]) > 1

        def fire(self, data):
            choices = self.enabled_args(ri)
            args = data.draw(st.sampled_from(choices), label=r.name) if choose and len(choices) > 1 else choices[0]
            self.take(ri, args)

        fire.__name__ = fire.__qualname__ = r.name
        fire.__doc__ = r.doc
        return precondition(lambda self: bool(self.enabled_args(ri)))(hyp_rule(data=st.data())(fire))

    for ri, r in enumerate(rules):
        if domains[ri]:
            namespace[r.name] = make_rule(ri)

    def idle(self):
        """Nothing can happen any more (every budget spent, nothing in flight): let the run end."""

    idle.__name__ = idle.__qualname__ = IDLE_RULE
    namespace[IDLE_RULE] = precondition(
        lambda self: not any(self.enabled_args(ri) for ri in range(len(rules)) if domains[ri]))(hyp_rule()(idle))

    def make_invariant(inv: Invariant):
        quiescent = inv.kind == "quiescent"

        def check(self):
            if quiescent and not model.is_quiescent(self.state):
                return
            message = inv.check(model, self.state)
            if message is not None:
                raise _noted(InvariantViolation(model, inv, message, self.actions))

        check.__name__ = check.__qualname__ = f"invariant_{inv.id}"
        check.__doc__ = inv.statement
        return hyp_invariant()(check)

    for inv in invariants:
        if inv.kind in ("state", "quiescent"):
            namespace[f"invariant_{inv.id}"] = make_invariant(inv)

    cfg = model.cfg
    name = name or f"JbodMachine_{cfg.variant}"
    return type(name, (RuleBasedStateMachine,), namespace)


def fuzz_settings(examples: int = DEFAULT_EXAMPLES, steps: int = DEFAULT_STEPS, **overrides) -> Settings:
    """Settings for a CLI run: no example database, no deadline, one bug reported, quiet."""
    values = dict(
        max_examples=examples, stateful_step_count=steps, database=None, deadline=None,
        suppress_health_check=list(HealthCheck), report_multiple_bugs=False, verbosity=Verbosity.quiet,
        phases=(Phase.explicit, Phase.generate, Phase.shrink), print_blob=False,
    )
    values.update(overrides)
    return Settings(**values)


@attrs.define
class FuzzOptions:
    examples: int = DEFAULT_EXAMPLES
    steps: int = DEFAULT_STEPS
    seed: int | None = 0          # None: Hypothesis picks a random seed
    progress: Callable[[str], None] | None = None


@attrs.define
class FuzzOutcome:
    result: SearchResult
    failure: InvariantViolation | None   # the shrunk failing run, if any
    examples_run: int = 0                # machine runs, including Hypothesis's shrinking attempts
    shrunk_steps: int | None = None      # the failing run's length after Hypothesis's shrinking, before minimize


def fuzz(model: Model, invariants: list[Invariant], options: FuzzOptions) -> FuzzOutcome:
    """Run the generated machine; a failure is shrunk by Hypothesis, minimized (``minimize``), then replayed
    (as `jbodcheck replay` would) to build the reported trace. Without a violation the result is "bounded": random testing is never exhaustive."""
    stats = FuzzStats(TransitionCounts(model), progress=options.progress)
    machine = make_state_machine(model, invariants, stats=stats)
    if options.seed is not None:
        machine = hypothesis_seed(options.seed)(machine)
    failure, signum = None, None
    with with_reporter(lambda _text: None):
        try:
            with signals.interruptible(raising=False):
                run_state_machine_as_test(machine, settings=fuzz_settings(options.examples, options.steps))
        except InvariantViolation as e:
            failure = e
        except signals.INTERRUPTS as e:
            # SIGINT or SIGTERM (docs/cli.md, exit codes): the figures so far, and the shortest failing run
            # Hypothesis had met, as it was (neither Hypothesis's shrinking nor ``minimal``: the run stops now)
            signum, failure = signals.received() or signals.interrupt_signal(e), stats.first_failure
    violations, shrunk = [], None
    if failure is not None:
        if signum is None:
            shrunk = len(failure.actions)
            failure = failure.minimal(invariants)
        violations.append(replay_failure(model, invariants, failure))
    coverage = stats.counts.coverage_dict()
    result = SearchResult(
        engine="hypothesis", result=result_status(violations, True, signum), distinct_states=len(stats.seen) + 1,
        states_generated=stats.steps, depth=len(failure.actions) if failure is not None else stats.deepest,
        elapsed_s=round(time.monotonic() - stats.start, 3), coverage=coverage, violations=violations,
        signal=signum,
    )
    return FuzzOutcome(result, failure, stats.examples, shrunk)


def replay_failure(model: Model, invariants: list[Invariant], failure: InvariantViolation) -> Violation:
    """Replay the failing steps through explorer.scenario.replay: the reported trace is replay's trace."""
    scenario = Scenario(model.cfg.as_dict(), tuple(failure.steps), {})
    result, _trace, _failed = replay(model, scenario, invariants)
    for v in result.violations:
        if v.invariant.id == failure.invariant.id:
            return v
    raise RuntimeError(f"the shrunk run did not reproduce {failure.invariant.id} on replay: {failure.steps}")
