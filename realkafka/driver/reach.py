"""The states a model's own steps reach from a set of states: the search every real-cluster judgement shares (the
KRaft tracker, validate.py; the ZooKeeper-mode driver, zk/run.py). Model-generic: it reads each rule's guard and
effect and knows no controller mode."""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

MAX_REACHABLE = 200_000   # states in one step's graph: more means the cluster's own steps do not settle


class TooManyCandidates(Exception):
    """The model states the cluster's own steps reach from the candidates exceed MAX_REACHABLE: the harness cannot
    judge the run (a harness limit, exit 3)."""


@dataclass
class Graph:
    """The states reachable from ``starts`` through the cluster's own steps: each state's successors with the
    steps' labels."""
    starts: frozenset
    edges: dict = field(default_factory=dict)    # state -> ((label, next state), ...)

    def forward(self, sources, without: str | None = None) -> set:
        """The states reachable from ``sources`` (``without``: through no step of that rule)."""
        seen = set(sources)
        queue = deque(seen)
        while queue:
            for label, nxt in self.edges.get(queue.popleft(), ()):
                if nxt not in seen and (without is None or rule_of(label) != without):
                    seen.add(nxt)
                    queue.append(nxt)
        return seen

    def necessary(self, sources, targets) -> list[str]:
        """The rules every path from ``sources`` to ``targets`` takes a step of: what reaching ``targets`` proves
        happened (none when a source is a target)."""
        targets = set(targets)
        if targets & set(sources):
            return []
        rules = {rule_of(label) for s in self.forward(sources) for label, _ in self.edges.get(s, ())}
        return sorted(r for r in rules if not targets & self.forward(sources, without=r))


def rule_of(label: str) -> str:
    """The rule's name in a step's label (``BrokerHeartbeat(broker=0)``)."""
    return label.split("(", 1)[0]


def reach(model, starts, steps, blocked=lambda rule, args: False) -> Graph:
    """Every state the ``steps`` ((rule, args) each: the cluster's own, the timed ones) reach from ``starts``, a
    step ``blocked`` stops left out; a step that changes nothing is no edge. Any controller mode's model: the
    ZooKeeper-mode driver reads it too."""
    graph = Graph(frozenset(starts))
    queue = deque(graph.starts)
    seen = set(graph.starts)
    while queue:
        state = queue.popleft()
        succ = []
        for rule, args in steps:
            if not blocked(rule, args) and rule.guard(model, state, *args) is None:
                _, nxt = model.step(state, rule.name, args)
                if nxt != state:
                    succ.append((rule.label(args), nxt))
        graph.edges[state] = tuple(succ)
        for _, nxt in succ:
            if nxt not in seen:
                if len(seen) >= MAX_REACHABLE:
                    raise TooManyCandidates(f"the cluster's own steps reach more than {MAX_REACHABLE:,} model states "
                                            "from one observation: the run cannot be judged")
                seen.add(nxt)
                queue.append(nxt)
    return graph


__all__ = ["Graph", "reach", "rule_of", "TooManyCandidates", "MAX_REACHABLE"]
