"""What the rules of every feature share: their usual domains, bounded environment events and the event budget,
and replacing a broker in a state."""
from __future__ import annotations

from model.storage.state import (
    B_CRASHES, B_DIR_FAILURES, B_FAILOVERS, B_FIXES, B_RESTARTS, B_SATURATIONS, BUDGET_FIELDS, State,
    replace_at, with_broker,
)


def brokers(m):
    return [(b,) for b in range(m.cfg.brokers)]


def broker_dirs(m):
    return [(b, d) for b in range(m.cfg.brokers) for d in range(m.cfg.dirs)]


def partitions(m):
    return [(p,) for p in range(m.cfg.partitions)]


def nothing(m):
    return [()]


def bounded(domain, field: str, fault: bool = True):
    """An environment event's domain, empty when its bound is 0 (for a fault, also when --max-faults is 0): the
    configuration leaves the event out, and the coverage report lists it as not in the configuration rather than
    as never fired."""
    def bounded_domain(m):
        possible = getattr(m.cfg, field) > 0 and (m.cfg.max_faults > 0 or not fault)
        return domain(m) if possible else []
    bounded_domain.__name__ = f"{domain.__name__}_if_{field}"
    return bounded_domain


_RECOVERIES = (B_RESTARTS, B_FIXES)


def budget_left(m, s: State, index: int) -> str | None:
    """None when one more event of BUDGET_FIELDS[index] is within its bound (and, for a fault, --max-faults)."""
    budget = s.budget
    if budget[index] >= m.bounds[index]:
        field = BUDGET_FIELDS[index]
        return f"the bound --{field.replace('_', '-')} {m.bounds[index]} is used up"
    if index not in _RECOVERIES and (
            budget[B_DIR_FAILURES] + budget[B_SATURATIONS] + budget[B_CRASHES] + budget[B_FAILOVERS]
            >= m.cfg.max_faults):
        return f"the bound --max-faults {m.cfg.max_faults} is used up"
    return None


def spend(s: State, index: int) -> tuple:
    return replace_at(s.budget, index, s.budget[index] + 1)


def set_broker(s: State, b: int, broker, budget=None) -> State:
    """The state with broker b replaced (and, if given, the budget)."""
    s = with_broker(s, b, broker)
    return s if budget is None else s._replace(budget=budget)
