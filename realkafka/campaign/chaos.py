"""Real -> model runs (Jepsen's shape: a client's workload, a nemesis's faults, a checker): a topic, then random
faults and a producer (acks=all) and consumer at the cluster's own timing, nothing held, each observation checked
as a behaviour of the model by trace validation (realkafka/driver/validate.py) and the violation checks judged on
the real views (checks.py): an acknowledged record lost on the real cluster is a finding candidate whether or not
the model predicted it.

Roles: the *nemesis* picks the next action among those the model enables in some candidate state (a fault: a dir
failure, a crash, a restart, a controlled shutdown; or the client's produce or consume), weighted toward the
actions taken least; the *client* is the reproduce driver's (its producer waits for the acknowledgement); the
*checker* is the tracker (every observation) and the checks (every view). Between two actions the run watches the
cluster for a random time, so actions land wherever the cluster is, not where it settled.
"""
from __future__ import annotations

import random
import time
from collections import Counter
from dataclasses import dataclass, field
from types import SimpleNamespace

from realkafka.driver.checks import judge
from realkafka.driver.mapping import handler
from realkafka.driver.plan import Plan
from realkafka.driver.run import Driver, do_act

from .generate import drivable, pick

WORKLOAD = ("Produce", "Consume")


@dataclass
class ChaosResult:
    actions: list = field(default_factory=list)       # the labels of what was done, in order
    observations: int = 0
    disagreement: object | None = None                # validate.Disagreement
    checks: dict = field(default_factory=dict)        # check id -> (action index, what it says), first shown
    rules: Counter = field(default_factory=Counter)   # rule -> times driven
    observed: Counter = field(default_factory=Counter)  # rule -> observations that prove a step of it (the cluster's own)


class ChaosRun:
    def __init__(self, model, cluster, rng: random.Random, *, quiet: float = 20.0, still: float = 10.0,
                 poll: float = 0.5, cluster_has=lambda m: True):
        self.model, self.cluster, self.rng = model, cluster, rng
        self.quiet, self.still, self.poll = quiet, still, poll
        empty = Plan([], {}, {}, ())
        self.driver = Driver(cluster, model, empty, timeout=3600.0, still=still, poll=poll, quiet=quiet)
        self.driver.produce_timeout = 20.0     # a produce the ISR cannot take ends in 20 s (its outcome unknown)
        self.tracker = self.driver.tracker
        self.faulted: set = set()
        self.actions = [(r, a) for r, a in drivable(model, cluster_has) if r.name != "ControllerAssignReplicasToDirs"]
        self.result = ChaosResult()
        self.history: list = []

    def _expected(self):
        return SimpleNamespace(faulted=frozenset(self.faulted), quiet=False)

    def _judge(self, real) -> None:
        self.history.append(real)
        for cid, why in judge(self.history).items():
            self.result.checks.setdefault(cid, (len(self.result.actions), why))

    def watch(self, seconds: float, until_quiet: bool = False) -> bool:
        """Observe for ``seconds`` (``until_quiet``: until the view is a behaviour of the model and unchanged for
        ``still``), narrowing the candidates on views seen twice in a row; False on a disagreement (a view no
        candidate shows, unchanged for ``quiet``)."""
        start = last_change = time.monotonic()
        last, found = None, True
        while True:
            real = self.driver.observe(self._expected())
            self.result.observations += 1
            now = time.monotonic()
            stable = real == last
            if not stable:
                last, last_change = real, now
            else:
                found = bool(self.tracker.narrow(real, frozenset(self.faulted)))
                if found:
                    self._judge(real)
                if self.driver.read:
                    self.driver.read = {}    # a consumer's read is one observation, judged on its own view
            unchanged = now - last_change
            if stable and not found and unchanged >= self.quiet:
                self._disagree(real)
                return False
            if until_quiet and stable and found and (unchanged >= self.still or (
                    unchanged >= min(self.still, 3.0)
                    and self.tracker.settled(self.tracker.states, real, frozenset(self.faulted)))):
                return True
            if not until_quiet and now - start >= seconds and (found or not stable):
                return True
            time.sleep(self.poll)

    def _disagree(self, real, says: str | None = None) -> None:
        d = self.tracker.disagreement(len(self.result.actions), real, frozenset(self.faulted))
        if says is not None:
            d.says = says
        exits = getattr(self.cluster, "exits", lambda: [])()
        if exits:                       # a broker that ended by itself: what it said, for the one who triages
            d.says += "; " + "; ".join(exits)
        self.result.disagreement = d

    def _pick(self):
        states = self.tracker.extended()
        enabled = [(r, a) for r, a in self.actions
                   if any(r.guard(self.model, s, *a) is None for s in states)]
        if not enabled:
            return None
        return pick(self.rng, enabled, self.result.rules)

    def act(self, rule, args) -> bool:
        """Do one action on the cluster and in the tracker; False when the run left the model."""
        why, unknown = do_act(handler(rule.name).act, self.driver, *args)
        refused = why is not None
        if rule.name == "DirFail":
            self.faulted.add(tuple(args))
        self.result.actions.append(rule.label(args) + (" (refused)" if refused else " (outcome unknown)" if unknown
                                                       else ""))
        self.result.rules[rule.name] += 1
        left = self.tracker.drive(rule.name, tuple(args), refused=refused, maybe=unknown)
        if left is not None:
            self._disagree(self.driver.observe(self._expected()), left)
            return False
        self.tracker.open(frozenset())
        return True

    def run(self, faults: int, gap: tuple = (0.0, 4.0)) -> ChaosResult:
        self.result.observed = self.tracker.proven
        self.tracker.open(frozenset())
        if not self.watch(0.0, until_quiet=True):
            return self.result
        create = self.model.rule("CreateTopic")
        for p in range(self.model.cfg.partitions):
            if not self.act(create, (p,)) or not self.watch(0.0, until_quiet=True):
                return self.result
        for _ in range(faults):
            picked = self._pick()
            if picked is None or not self.act(*picked) or not self.watch(self.rng.uniform(*gap)):
                return self.result
        if self.watch(0.0, until_quiet=True):
            for topic, offsets in self.driver.acked().items():
                if offsets:
                    self.driver.read_topic(topic)
            self.watch(0.0, until_quiet=True)
        return self.result


__all__ = ["ChaosRun", "ChaosResult", "WORKLOAD"]
