"""The abstraction of an explicit KRaft state into the z3 vocabulary (proofs/kraft_system.py; docs/proofs.md 9.1),
and the equalities that pin a z3 state to one: shared by both directions of the conformance check
(proofs/kraft_conformance.py, proofs/kraft_reverse.py)."""
from __future__ import annotations

from model.kraft.metadata import LOST, MIGRATING, UNASSIGNED
from model.storage.state import NO_LEADER

from .kraft_system import StateVars, dir_ref_sort


class OutsideCore(ValueError):
    """A state the z3 model does not cover (a feature beyond kraft-core)."""


def abstract(m, state) -> tuple:
    """The abstract state: (per broker (up, registered, reg, fenced, dirs), per partition (exists, replicas,
    isr, leader, Directories per broker, leader epoch, partition epoch))."""
    c = state.controller
    brokers = []
    for b, broker in enumerate(state.brokers):
        reg = c.registrations[b]
        if reg is not None and reg.in_controlled_shutdown:
            raise OutsideCore(f"broker {b} is in controlled shutdown (kraft-shutdown)")
        brokers.append((bool(broker.up), bool(broker.registered), reg is not None,
                        bool(reg.fenced) if reg else False, tuple(reg.dirs) if reg else ()))
    parts = []
    for p, part in enumerate(c.partitions):
        if part.adding or part.removing:
            raise OutsideCore(f"partition {p} is being reassigned (kraft-reassignment)")
        dirs = tuple(part.dirs[part.replicas.index(b)] if b in part.replicas else UNASSIGNED
                     for b in range(m.cfg.brokers))
        parts.append((part.leader_epoch >= 0, tuple(part.replicas), part.isr, part.leader, dirs,
                      part.leader_epoch, part.partition_epoch))
    return tuple(brokers), tuple(parts)


def dir_ref(u, value):
    """A Directories entry (a dir index or a reserved id) as a z3 DirRef."""
    R = dir_ref_sort(u)
    reserved = {UNASSIGNED: R.unassigned, MIGRATING: R.migrating, LOST: R.lost}
    return reserved[value] if value in reserved else R.dir(u.dirs[value])


def pin(u, st: StateVars, key) -> list:
    """Equalities that make ``st`` the abstract state ``key`` (some_dir: the first registered dir)."""
    brokers, parts = key
    B, D = u.brokers, u.dirs
    out = []
    for b, (up, registered, reg, fenced, dirs) in enumerate(brokers):
        out += [st.up(B[b]) == up, st.registered(B[b]) == registered, st.reg(B[b]) == reg,
                st.fenced(B[b]) == fenced, st.some_dir(B[b]) == D[dirs[0] if dirs else 0]]
        out += [st.regdir(B[b], D[d]) == (d in dirs) for d in range(len(D))]
    for p, (exists, replicas, isr, leader, dirs, lepoch, pepoch) in enumerate(parts):
        P = u.partitions[p]
        out += [st.exists(P) == exists, st.has_leader(P) == (leader != NO_LEADER),
                st.leader_epoch(P) == lepoch, st.partition_epoch(P) == pepoch]
        if leader != NO_LEADER:
            out.append(st.leader(P) == B[leader])
        for b in range(len(B)):
            out += [st.replica(P, B[b]) == (b in replicas), st.isr(P, B[b]) == bool(isr >> b & 1),
                    st.dirs(P, B[b]) == dir_ref(u, dirs[b])]
    return out
