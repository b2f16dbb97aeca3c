"""Liveness checking under weak fairness: ``eventually`` and ``leads_to`` properties (model/spec/invariant.py
``Liveness``), with lasso counterexamples (docs/model.md, section 9.1).

The state graph is explored breadth-first *without* symmetry reduction (a lasso must be a concrete cycle of the
model, and a property's instances need not be symmetric), keeping per state its index (fingerprint -> index), its
BFS parent (``ParentTable``), its outgoing edges as CSR arrays (target index, action id) and each property's P and
Q instance bitmasks. A rule's ``fair`` flag (model/spec/rule.py) makes each of its action instances weakly fair; an
action is enabled in a state exactly when it generated one of the state's edges.

For P ~> Q and instance i: in the subgraph of the states where Q(i) is false, an iterative Tarjan finds the
strongly connected components; a component C is *fair* when every fair action enabled in all of C's states labels
an edge inside C (with weak fairness this is exact: a cycle through all of C is then fair). A single state with no
fair action enabled is a fair component (the behaviour may stutter there forever; a terminal state is one). A
violation is a state where P(i) and not Q(i) hold from which, staying in not-Q(i) states, a fair component is
reachable. ``eventually G`` is ``true ~> G`` from the initial state.
"""
from __future__ import annotations

import time
from array import array
from collections import deque
from types import SimpleNamespace

import attrs
import numpy as np

from model.spec.engine import SearchResult, TransitionCounts, Violation, rebuild_trace, result_status
from model.spec.errors import ConfigError
from model.spec.invariant import is_liveness
from model.spec.model import Model

from .core import INTERRUPTS, gc_paused, interrupt_signal, interruptible
from .visited import ActionIndex, ParentTable


@attrs.define
class LivenessViolation(Violation):
    loop_start: int = 0          # the trace's step at which the cycle starts (== len(trace) - 1: stutters there)
    stutters: bool = False       # the cycle is empty: the behaviour stays in the last state forever
    instance: int = 0
    # left_out_progress: bound -> the fair steps the lasso needs that the configuration leaves out (empty: none).
    needs: dict = attrs.field(factory=dict)


@attrs.define
class StateGraph:
    """The explored graph: CSR edges, parents, per-property instance masks, fair actions."""
    actions: ActionIndex
    table: ParentTable
    offsets: np.ndarray          # int64, n + 1
    targets: np.ndarray          # int32
    labels: np.ndarray           # action ids
    p_masks: dict                # property id -> np.ndarray uint64 per state
    q_masks: dict
    fair_action: np.ndarray      # bool per action id
    depth: int
    index_bytes: int             # the fingerprint -> index dict's size

    @property
    def n(self) -> int:
        return len(self.offsets) - 1

    @property
    def nbytes(self) -> int:
        arrays = (self.offsets, self.targets, self.labels, *self.p_masks.values(), *self.q_masks.values())
        return sum(a.nbytes for a in arrays) + self.table.nbytes + self.index_bytes


def _mask(value) -> int:
    return int(value)   # a bool is instance 0


def explore_graph(model: Model, properties: list, counts: TransitionCounts, progress=None,
                  reached: dict | None = None) -> StateGraph:
    """BFS from the initial state, keeping the whole graph (states are visited in index order). ``reached``
    receives the distinct states and depth so far (what an interrupted run reports)."""
    reached = {} if reached is None else reached
    actions = ActionIndex(model)
    aid = actions.ids
    table = ParentTable(actions)
    fingerprint = model.fingerprint
    init = model.init_states()[0]
    index = {fingerprint(init): 0}
    p_masks = {inv.id: array("Q") for inv in properties}
    q_masks = {inv.id: array("Q") for inv in properties}
    evaluators = [(p_masks[inv.id], q_masks[inv.id], inv.p, inv.q) for inv in properties]

    def evaluate(state, first: bool) -> None:
        for ps, qs, p, q in evaluators:
            ps.append(_mask(p(model, state)) if p is not None else (1 if first else 0))
            qs.append(_mask(q(model, state)))

    evaluate(init, True)
    offsets, targets, labels = array("q", [0]), array("i"), array(actions.typecode)
    queue = deque([init])
    depth_of = array("H", [0])
    count, next_progress, at = counts.count, time.monotonic() + 3.0, 0
    while queue:
        state = queue.popleft()
        for action, after in model.successors(state):
            count(action)
            fp = fingerprint(after)
            j = index.get(fp)
            if j is None:
                j = index[fp] = table.append(at, aid[(action.rule, action.args)])
                depth_of.append(depth_of[at] + 1)
                reached["distinct"], reached["depth"] = j + 1, depth_of[j]
                evaluate(after, False)
                queue.append(after)
            targets.append(j)
            labels.append(aid[(action.rule, action.args)])
        offsets.append(len(targets))
        at += 1
        if progress is not None and time.monotonic() >= next_progress:
            next_progress = time.monotonic() + 3.0
            progress(f"explored {at:,}  distinct {len(table):,}  edges {len(targets):,}")
    fair = np.array([rule.fair for _ri, rule, _args in model.action_space], dtype=bool)
    as_np = lambda a, dt: np.frombuffer(a, dtype=dt).copy() if len(a) else np.zeros(0, dtype=dt)  # noqa: E731
    return StateGraph(actions, table, as_np(offsets, np.int64), as_np(targets, np.int32),
                      as_np(labels, np.uint16 if actions.typecode == "H" else np.uint32),
                      {k: as_np(v, np.uint64) for k, v in p_masks.items()},
                      {k: as_np(v, np.uint64) for k, v in q_masks.items()}, fair, max(depth_of),
                      _dict_bytes(index))


def _dict_bytes(d: dict) -> int:
    import sys
    # The dict's table plus its int keys and values (small ints are shared; fingerprints are 36-byte ints).
    return sys.getsizeof(d) + len(d) * (36 + 28)


class _Sub:
    """The not-Q(i) subgraph, as Python lists for fast iteration."""

    def __init__(self, g: StateGraph, bad: np.ndarray):
        self.g, self.bad = g, bad
        self.off = g.offsets.tolist()
        self.tgt = g.targets.tolist()
        self.lab = g.labels.tolist()
        self.fair = g.fair_action.tolist()

    def enabled_fair(self, s: int) -> set:
        fair, lab = self.fair, self.lab
        return {lab[e] for e in range(self.off[s], self.off[s + 1]) if fair[lab[e]]}

    def edges(self, s: int):
        """(target, action id) of s's edges that stay in not-Q."""
        bad, tgt, lab = self.bad, self.tgt, self.lab
        return [(tgt[e], lab[e]) for e in range(self.off[s], self.off[s + 1]) if bad[tgt[e]]]


def tarjan(sub: _Sub, roots: list) -> tuple[list, list]:
    """Iterative Tarjan over the not-Q subgraph from ``roots``: (component of each visited state, -1 elsewhere;
    the components in the order they complete: every component reachable from one completes before it)."""
    n = sub.g.n
    order = [-1] * n
    low = [0] * n
    comp = [-1] * n
    on_stack = [False] * n
    stack: list = []
    components: list = []
    counter = 0
    for root in roots:
        if order[root] != -1:
            continue
        work = [(root, iter(sub.edges(root)))]
        order[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack[root] = True
        while work:
            v, it = work[-1]
            for w, _a in it:
                if order[w] == -1:
                    order[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack[w] = True
                    work.append((w, iter(sub.edges(w))))
                    break
                if on_stack[w] and order[w] < low[v]:
                    low[v] = order[w]
            else:
                work.pop()
                if work:
                    u = work[-1][0]
                    if low[v] < low[u]:
                        low[u] = low[v]
                if low[v] == order[v]:
                    members = []
                    while True:
                        w = stack.pop()
                        on_stack[w] = False
                        comp[w] = len(components)
                        members.append(w)
                        if w == v:
                            break
                    components.append(members)
    return comp, components


def is_fair(sub: _Sub, comp: list, k: int, members: list) -> bool:
    """Every fair action enabled in all of the component's states labels an edge inside it."""
    always: set | None = None
    inside: set = set()
    for s in members:
        enabled = sub.enabled_fair(s)
        always = enabled if always is None else always & enabled
        inside.update(a for t, a in sub.edges(s) if comp[t] == k and sub.fair[a])
    assert always is not None, "a component has members"
    return always <= inside


def _bfs_path(sub: _Sub, start: int, allowed, goal) -> list:
    """The shortest path [(action id, state)] from start through allowed states to a state where goal(state)."""
    if goal(start):
        return []
    parent: dict[int, tuple[int, int] | None] = {start: None}
    queue = deque([start])
    while queue:
        v = queue.popleft()
        for w, a in sub.edges(v):
            if w not in parent and allowed(w):
                parent[w] = (v, a)
                if goal(w):
                    path = []
                    while (step := parent[w]) is not None:
                        v, a = step
                        path.append((a, w))
                        w = v
                    return path[::-1]
                queue.append(w)
    raise AssertionError("no path inside a strongly connected component")


def fair_cycle(sub: _Sub, comp: list, entry: int) -> list:
    """A cycle [(action id, state)] from entry back to entry inside entry's component that is fair: every fair
    action enabled in all of its states is taken on it (empty: stutter at entry, no fair action enabled)."""
    k = comp[entry]
    inside = lambda s: comp[s] == k  # noqa: E731
    labels: set = set()
    states, cur, cycle = [entry], entry, []
    while True:
        always = set.intersection(*(sub.enabled_fair(s) for s in states))
        missing = sorted(always - labels)
        if not missing:
            break
        a = missing[0]
        # A witness for a: a state of the component where a is disabled, or an a-edge inside it (then taken).
        takes = lambda s: any(b == a and inside(t) for t, b in sub.edges(s))  # noqa: E731
        path = _bfs_path(sub, cur, inside, lambda s: a not in sub.enabled_fair(s) or takes(s))
        cycle += path
        cur = path[-1][1] if path else cur
        if a in sub.enabled_fair(cur):
            t = next(t for t, b in sub.edges(cur) if b == a and inside(t))
            cycle.append((a, t))
            cur = t
        states += [s for _a, s in cycle]
        labels |= {b for b, _s in cycle}
    if cycle and cur != entry:
        cycle += _bfs_path(sub, cur, inside, lambda s: s == entry)
    elif not cycle:
        return []
    return cycle


def check_instance(g: StateGraph, prop, i: int):
    """None when P ~> Q holds for instance i, else (the P state, the stem to the cycle, the cycle)."""
    bit = np.uint64(1 << i)
    bad = (g.q_masks[prop.id] & bit) == 0
    premise = np.flatnonzero(((g.p_masks[prop.id] & bit) != 0) & bad)
    if len(premise) == 0:
        return None
    sub = _Sub(g, bad.tolist())
    comp, components = tarjan(sub, premise.tolist())
    doomed = [False] * len(components)
    fair = [False] * len(components)
    for k, members in enumerate(components):     # successors' components complete first
        fair[k] = is_fair(sub, comp, k, members)
        doomed[k] = fair[k] or any(doomed[comp[t]] for s in members for t, _a in sub.edges(s) if comp[t] != k)
    start = next((int(s) for s in premise if doomed[comp[s]]), None)   # the shallowest: BFS order
    if start is None:
        return None
    stem = _bfs_path(sub, start, lambda s: comp[s] != -1 and doomed[comp[s]], lambda s: fair[comp[s]])
    entry = stem[-1][1] if stem else start
    return start, stem, fair_cycle(sub, comp, entry)


def instances_of(g: StateGraph, prop) -> list[int]:
    seen = int(np.bitwise_or.reduce(g.p_masks[prop.id])) if g.n else 0
    return [i for i in range(64) if seen >> i & 1]


def lasso(model: Model, g: StateGraph, prop, i: int, found) -> LivenessViolation:
    start, stem, cycle = found
    prefix = g.table.path(start)
    action = g.actions.action
    steps = prefix + [action(a) for a, _s in stem] + [action(a) for a, _s in cycle]
    trace = rebuild_trace(model, steps)
    loop_start = len(prefix) + len(stem)
    if trace[loop_start][1] != trace[-1][1]:
        raise AssertionError("the lasso's cycle does not return to its first state")
    what = "eventually" if prop.kind == "eventually" else f"instance {i}"
    where = ("stays forever in a state where no fair step is enabled" if not cycle else
             f"repeats a fair cycle of {len(cycle)} step(s)")
    message = (f"{prop.id} ({what}) never reaches its goal: from step {len(prefix)} the behaviour {where} "
               f"(from step {loop_start}) without it")
    return LivenessViolation(prop, message, trace, loop_start=loop_start, stutters=not cycle, instance=i)


# Why `explore --liveness --por` explores without partial-order reduction (the CLI says it; the report's "por").
POR_NOTE = ("it preserves safety only (its reduced graph drops the cycles and enabled actions that weak fairness "
            "reads), so the whole graph is explored")

def relaxable_bounds(cfg) -> tuple[str, ...]:
    """The bounds whose 0 can leave a fair rule of an included feature without actions (e.g. the data path with
    max_records 0): the configuration's ``max_*`` fields, in its order."""
    return tuple(name for name in cfg.as_dict() if name.startswith("max_"))


def _raised(cfg, name: str):
    """cfg with the bound ``name`` raised from 0 to 1 (per partition: each 0), or None when it is not 0."""
    value = getattr(cfg, name)
    if isinstance(value, tuple):
        return attrs.evolve(cfg, **{name: tuple(v or 1 for v in value)}) if 0 in value else None
    return attrs.evolve(cfg, **{name: 1}) if value == 0 else None


def left_out_progress(model: Model, violation: LivenessViolation) -> dict:
    """The fair steps a lasso's end leaves out only because a bound of this configuration is 0: per such bound,
    the labels of the fair action instances that have no action here but that, with the bound raised to 1, are
    enabled in every state of the lasso's cycle (its last state when it stutters). Weak fairness would force such
    a step, so the lasso is not a fair behaviour of the model with that bound raised: it shows the bound, not the
    protocol (docs/model.md 9.1, "Lassos that need a step the configuration leaves out"). Empty: none."""
    states = [s for _a, s in violation.trace[violation.loop_start:]]
    states = states[:-1] or states           # the cycle's last state is its first
    configured = {(a[1].name, a[2]) for a in model.action_space}
    plugins = SimpleNamespace(features=model.plugin_features, invariants=())
    out: dict = {}
    for name in relaxable_bounds(model.cfg):
        cfg = _raised(model.cfg, name)
        if cfg is None:
            continue
        try:
            relaxed = Model(cfg, design=model.design, plugins=plugins)
        except ConfigError:
            continue
        always = None
        for state in states:
            enabled = {relaxed.rules[a.rule].label(a.args) for a, _after in relaxed.successors(state)
                       if relaxed.rules[a.rule].fair and (relaxed.rules[a.rule].name, a.args) not in configured}
            always = enabled if always is None else always & enabled
        if always:
            out[name] = sorted(always)
    return out


def check_liveness(model: Model, properties: list, progress=None) -> SearchResult:
    """Explore the whole graph and check each property; one lasso per failing property. A lasso that needs a
    step the configuration leaves out (``left_out_progress``) is not a violation: it goes to ``inconclusive``
    and the property's next instance is checked; the result is then "bounded" unless a real lasso is found."""
    if model.symmetry:
        raise ValueError("liveness checking needs a model without symmetry reduction")
    start = time.monotonic()
    counts = TransitionCounts(model)
    violations: list = []
    inconclusive: list = []
    reached = {"distinct": 1, "depth": 0}
    try:
        with interruptible(), gc_paused():
            g = explore_graph(model, properties, counts, progress, reached)
            for prop in properties:
                for i in instances_of(g, prop):
                    found = check_instance(g, prop, i)
                    if found is None:
                        continue
                    v = lasso(model, g, prop, i, found)
                    v.needs = left_out_progress(model, v)
                    if not v.needs:
                        violations.append(v)
                        break
                    inconclusive.append(v)
    except INTERRUPTS as e:
        signum = interrupt_signal(e)
        return SearchResult(engine="liveness", result=result_status(violations, False, signum),
                            distinct_states=reached["distinct"], states_generated=counts.generated,
                            depth=reached["depth"], elapsed_s=round(time.monotonic() - start, 3),
                            coverage=counts.coverage_dict(), violations=violations, signal=signum)
    status = "violation" if violations else "bounded" if inconclusive else "ok"
    result = SearchResult(engine="liveness", result=status, distinct_states=g.n, states_generated=counts.generated,
                          depth=g.depth, elapsed_s=round(time.monotonic() - start, 3),
                          coverage=counts.coverage_dict(), violations=violations, inconclusive=inconclusive)
    result.memory = {"graph_bytes": g.nbytes, "graph_states": g.n, "edges": len(g.targets)}
    return result


def cycle_is_fair(model: Model, trace: list, loop_start: int) -> bool:
    """Independent check of a lasso's cycle (tests, replay): every fair action enabled in every state of the cycle
    is taken on it; an empty cycle: no fair action is enabled in its state."""
    states = [s for _a, s in trace[loop_start:]]
    taken = {(a.rule, a.args) for a, _s in trace[loop_start + 1:]}

    def enabled(state):
        return {(a.rule, a.args) for a, _s in model.successors(state) if model.rules[a.rule].fair}

    always = set.intersection(*(enabled(s) for s in (states[:-1] or states)))
    return always <= taken


def lasso_breaks(model: Model, prop, trace: list, loop_start: int) -> str | None:
    """Whether a lasso (a replayed scenario with ``loop_start``) is a counterexample to a liveness property: its
    cycle is fair (cycle_is_fair) and, for some instance, the premise holds at a state from which the goal never
    holds again (every state after it and every state of the cycle, which the behaviour repeats for ever); for
    ``eventually``, the goal holds nowhere. Returns why, or None."""
    states = [s for _a, s in trace]
    goals = [_mask(prop.q(model, s)) for s in states]
    premises = [_mask(prop.p(model, s)) if prop.p is not None else 0 for s in states]
    if prop.p is None:
        premises[0] = 1
    for i in range(64):
        bit = 1 << i
        for j, premise in enumerate(premises):
            if premise & bit and not any(g & bit for g in goals[min(j, loop_start):]):
                break
        else:
            continue
        if not cycle_is_fair(model, trace, loop_start):
            return None
        what = "eventually" if prop.kind == "eventually" else f"instance {i}"
        return (f"{prop.id} ({what}) never reaches its goal: its premise holds at step {j} and the lasso repeats "
                f"the fair cycle from step {loop_start} without it")
    return None


def liveness_properties(model: Model, named: tuple) -> list:
    """The liveness properties a run checks: those selected by --invariant, else all of the model's."""
    chosen = [i for i in model.invariants if is_liveness(i)] if named else []
    return chosen or [i for i in model.all_invariants if is_liveness(i)]
