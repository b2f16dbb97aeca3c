"""The model as engines see it: initial states, enabled actions, next states (after Stateright's Model)."""
from __future__ import annotations

from typing import Iterator, NamedTuple

from . import rules as _rules  # noqa: F401  (registers every rule)
from . import rules_data as _rules_data  # noqa: F401  (the data path's rules, after the others)
from . import rules_space as _rules_space  # noqa: F401  (KIP-928's disk space)
from . import rules_deletion as _rules_deletion  # noqa: F401  (topic deletion)
from . import rules_reassignment as _rules_reassignment  # noqa: F401  (partition reassignment)
from .config import ModelConfig
from .registry import RULES, Rule, rule_by_name
from .symmetry import canonical_fingerprint, dir_symmetry_sound
from .state import (
    BUDGET_FIELDS, D_NONE, GOOD, H_NONE, NO_LEADER, P_NONEXISTENT, R_NONEXISTENT, RA_NONE, UPDATE_METADATA, Broker,
    Controller, Partition, State,
    fingerprint, is_quiescent,
)


class Action(NamedTuple):
    rule: int          # index into Model.rules
    args: tuple
    settled: tuple = ()  # brokers whose UpdateMetadata was applied eagerly after the step, in order

    __repr__ = tuple.__repr__


class ActionDisabled(ValueError):
    """An action whose guard fails in the state it is applied to."""


class Model:
    def __init__(self, cfg: ModelConfig, symmetry: bool = False):
        self.cfg = cfg
        # Dedup by the fingerprint of a canonical representative when dir symmetry is sound (model/symmetry.py).
        self.symmetry = symmetry and dir_symmetry_sound(cfg)
        self.fingerprint = canonical_fingerprint if self.symmetry else fingerprint
        self.rules: tuple[Rule, ...] = tuple(RULES)
        self.rule_index = {r.name: i for i, r in enumerate(self.rules)}
        self._update_metadata = rule_by_name("BrokerUpdateMetadata")
        # KIP-928's reserved file: one unit of every dir, written at start-up (section 6.4).
        self.reserves = cfg.saturation and cfg.reserved_file
        self.bounds = tuple(getattr(cfg, name) for name in BUDGET_FIELDS)
        # Per partition: every broker that may hold a replica ("slots", the controller's replica states are kept
        # per slot): the assignment, then the brokers a reassignment adds. The current assignment is in the state.
        self.original = tuple(cfg.assignment(p) for p in range(cfg.partitions))
        self.targets = tuple(cfg.reassignment_target(p) for p in range(cfg.partitions))
        self.assignments = tuple(
            a + tuple(b for b in (t or ()) if b not in a) for a, t in zip(self.original, self.targets)
        )
        self.replicas_on = tuple(
            tuple((p, i) for p in range(cfg.partitions) for i, b in enumerate(self.assignments[p]) if b == broker)
            for broker in range(cfg.brokers)
        )
        # (rule index, rule, argument tuple) for every action the configuration can ever take.
        self.action_space = tuple(
            (ri, r, args) for ri, r in enumerate(self.rules) for args in r.domain(self)
        )
        self._space = tuple((ri, r.guard, r.effect, args) for ri, r, args in self.action_space)

    def init_states(self) -> list[State]:
        c, p = self.cfg, self.cfg.partitions
        broker = Broker(
            up=True, dirs=(GOOD,) * c.dirs, copies=(0,) * p, hosted=(H_NONE,) * p, epoch=(-1,) * p,
            meta=(None,) * p, inbox=(), replies=(), logs=((),) * p, hw=(0,) * p, isr=(0,) * p,
            used=(1 if self.reserves else 0,) * c.dirs, reserved=(1 << c.dirs) - 1 if self.reserves else 0,
            segs=(0,) * p, stop_replies=(),
        )
        controller = Controller(
            epoch=1, live=(1 << c.brokers) - 1, offline=(0,) * c.brokers,
            partitions=(Partition(P_NONEXISTENT, NO_LEADER, -1, 0),) * p,
            replicas=tuple((R_NONEXISTENT,) * len(a) for a in self.assignments), deletion=(D_NONE,) * p,
            assigned=self.original, reassigning=(RA_NONE,) * p,
        )
        return [State((broker,) * c.brokers, controller, 0, (0,) * len(BUDGET_FIELDS),
                      committed=((),) * p, acked=(0,) * p, consumed=((),) * p, wiped=0)]

    def successors(self, state: State) -> Iterator[tuple[Action, State]]:
        eager = self.cfg.eager_metadata
        for ri, guard, effect, args in self._space:
            if guard(self, state, *args) is None:
                after = effect(self, state, *args)
                if eager:
                    after, settled = self.settle(after)
                    yield Action(ri, args, settled), after
                else:
                    yield Action(ri, args), after

    def settle(self, state: State) -> tuple[State, tuple]:
        """Apply every UpdateMetadata that heads a broker's queue (eager metadata)."""
        settled = ()
        for b, broker in enumerate(state.brokers):
            inbox = broker.inbox
            while inbox and inbox[0].kind == UPDATE_METADATA:
                state = self._update_metadata.effect(self, state, b)
                inbox = state.brokers[b].inbox
                settled += (b,)
        return state, settled

    def step(self, state: State, rule_name: str, args: tuple) -> tuple[Action, State]:
        """Take one action by name (replay, Hypothesis); raises ActionDisabled with the guard's reason."""
        ri = self.rule_index[rule_name]
        r = self.rules[ri]
        reason = r.guard(self, state, *args)
        if reason is not None:
            raise ActionDisabled(f"{r.label(args)} is not enabled: {reason}")
        after = r.effect(self, state, *args)
        if self.cfg.eager_metadata:
            after, settled = self.settle(after)
            return Action(ri, args, settled), after
        return Action(ri, args), after

    def label(self, action: Action) -> str:
        text = self.rules[action.rule].label(action.args)
        if action.settled:
            text += " + UpdateMetadata at " + ", ".join(f"broker {b}" for b in action.settled)
        return text

    def rule(self, name: str) -> Rule:
        return rule_by_name(name)

    is_quiescent = staticmethod(is_quiescent)
