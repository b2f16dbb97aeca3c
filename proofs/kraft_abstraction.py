"""The abstraction of an explicit KRaft state into the z3 vocabulary (proofs/kraft_system.py; docs/proofs.md 9.1),
and the equalities that pin a z3 state to one: shared by both directions of the conformance check
(proofs/kraft_conformance.py, proofs/kraft_reverse.py)."""
from __future__ import annotations

from model.kraft.metadata import LOST, MIGRATING, RESERVED, UNASSIGNED, dir_disk, dir_slot
from model.storage.state import NO_LEADER

from .kraft_system import FIELD_BY_NAME, StateVars, dir_ref_sort


class OutsideCore(ValueError):
    """A state the z3 model does not cover (a feature beyond kraft-core)."""


def dir_elements(m) -> int:
    """How many elements the z3 universe's dir sort has: a dir id names a disk of a dir (docs/kraft.md, "State"),
    the first or one of at most ``max_fixes`` replacements, each its own element."""
    return m.cfg.dirs * (1 + m.cfg.max_fixes)


def element(m, dir_id: int) -> int:
    """The z3 dir element of a dir id (its index in the universe's dirs; dir d's first disk is element d); a
    reserved id stays as it is."""
    return dir_id if dir_id in RESERVED else dir_slot(dir_id) + m.cfg.dirs * dir_disk(dir_id)


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
                        bool(reg.fenced) if reg else False, tuple(element(m, d) for d in reg.dirs) if reg else ()))
    parts = []
    for p, part in enumerate(c.partitions):
        if part.adding or part.removing:
            raise OutsideCore(f"partition {p} is being reassigned (kraft-reassignment)")
        dirs = tuple(element(m, part.dirs[part.replicas.index(b)]) if b in part.replicas else UNASSIGNED
                     for b in range(m.cfg.brokers))
        parts.append((part.leader_epoch >= 0, tuple(part.replicas), part.isr, part.leader, dirs,
                      part.leader_epoch, part.partition_epoch))
    return tuple(brokers), tuple(parts)


def dir_ref(u, value):
    """A Directories entry (a dir element, ``element``, or a reserved id) as a z3 DirRef."""
    R = dir_ref_sort(u)
    reserved = {UNASSIGNED: R.unassigned, MIGRATING: R.migrating, LOST: R.lost}
    return reserved[value] if value in reserved else R.dir(u.dirs[value])


def term(st: StateVars, field: str, idx: tuple):
    """``st``'s field applied to the elements at indices ``idx``, built once per state vocabulary (the conformance
    check pins and reads the same few terms for every state: building them, not solving, was its cost)."""
    terms = st.__dict__.setdefault("_terms", {})
    key = (field, idx)
    hit = terms.get(key)
    if hit is None:
        u = st.u
        elements = {"B": u.brokers, "D": u.dirs, "P": u.partitions}
        hit = terms[key] = getattr(st, field)(*(elements[srt][i] for srt, i in zip(FIELD_BY_NAME[field].args, idx)))
    return hit


def atom(st: StateVars, field: str, idx: tuple, value):
    """``term(st, field, idx) == value``, built once; ``value`` as the abstract state has it (a bool, an int, a
    broker or dir index, a Directories entry)."""
    atoms = st.__dict__.setdefault("_atoms", {})
    key = (field, idx, value)
    hit = atoms.get(key)
    if hit is None:
        u, rng = st.u, FIELD_BY_NAME[field].range
        z = (u.brokers[value] if rng == "B" else u.dirs[value] if rng == "D" else
             dir_ref(u, value) if rng == "DirRef" else value)
        hit = atoms[key] = term(st, field, idx) == z
    return hit


def pin(u, st: StateVars, key) -> list:
    """Equalities that make ``st`` the abstract state ``key`` (some_dir: the first registered dir)."""
    brokers, parts = key
    D = range(len(u.dirs))
    out = []
    for b, (up, registered, reg, fenced, dirs) in enumerate(brokers):
        out += [atom(st, "up", (b,), up), atom(st, "registered", (b,), registered), atom(st, "reg", (b,), reg),
                atom(st, "fenced", (b,), fenced), atom(st, "some_dir", (b,), dirs[0] if dirs else 0)]
        out += [atom(st, "regdir", (b, d), d in dirs) for d in D]
    for p, (exists, replicas, isr, leader, dirs, lepoch, pepoch) in enumerate(parts):
        out += [atom(st, "exists", (p,), exists), atom(st, "has_leader", (p,), leader != NO_LEADER),
                atom(st, "leader_epoch", (p,), lepoch), atom(st, "partition_epoch", (p,), pepoch)]
        if leader != NO_LEADER:
            out.append(atom(st, "leader", (p,), leader))
        for b in range(len(u.brokers)):
            out += [atom(st, "replica", (p, b), b in replicas), atom(st, "isr", (p, b), bool(isr >> b & 1)),
                    atom(st, "dirs", (p, b), dirs[b])]
    return out
