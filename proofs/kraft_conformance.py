"""The KRaft z3 model (proofs/kraft_system.py) against the explicit model (model/kraft/), on every reachable state
of a configuration (docs/proofs.md, "KRaft"):

- **initial**: the explicit initial state, abstracted, satisfies the z3 initial condition;
- **forward** (soundness of the proofs): every explicit transition, abstracted, satisfies the z3 relation of the
  action that stands for its rule (one z3 call per distinct abstract triple);
- **reverse** (proofs/kraft_reverse.py): from every reachable state, each z3 action with its free choices pinned
  to the explicit ones allows exactly the explicit successors of its rules, and is disabled where they are;
- **properties**: on every reachable state (transition) each z3 property holds exactly when its explicit
  invariant does (invariants/kraft/image.py, invariants/kraft/safety.py).

The abstraction keeps the controller's image and each broker's ``up`` and ``registered``; it refuses a state
outside kraft-core (a reassignment in progress, a controlled shutdown), which the z3 model does not cover.
"""
from __future__ import annotations

import random
import time

import z3

from invariants.kraft import image as explicit_image, safety as explicit_safety
from model.kraft.metadata import LOST, MIGRATING, UNASSIGNED, Registration
from model.storage.state import NO_LEADER

from model.kraft.controller import elr_enabled
from model.kraft.release import text as release_text, version_of

from .kraft_abstraction import abstract, dir_elements, pin
# The release the z3 model follows (proofs/kraft_system.py): 3.9's controller, before ELR and before 4.0's records
# at a registration (docs/proofs.md, section 9; docs/kraft.md, "What changed from 3.9 to 4.4").
from .kraft_configurations import Z3_RELEASE
from .kraft_properties import LEMMAS, PROPERTIES
from .kraft_reverse import Reverse
from .kraft_system import ACTION_BY_NAME, StateVars, conj, initial, relation, well_formed
from .system import Finite

# The explicit rules that write the controller's image or a broker's up/registered, by z3 action; every other
# rule of kraft-core, the data path and the faults is a BrokerLocal step unless it changes the image (an ISR
# change: AlterPartition).
CONTROLLER_RULES = ("CreateTopic", "BrokerRegister", "BrokerCrash", "BrokerRestart", "BrokerHeartbeat",
                    "ControllerFenceBroker", "ControllerAssignReplicasToDirs")
EXPLICIT = {
    "kraft_isr_within_replicas": explicit_image.kraft_isr_within_replicas,
    "kraft_leader_in_isr_or_none": explicit_image.kraft_leader_in_isr_or_none,
    "kraft_directories_never_lost": explicit_image.kraft_directories_never_lost,
    "kraft_epochs_monotone": explicit_image.kraft_epochs_monotone,
    "kraft_leader_passes_leader_acceptor": explicit_safety.kraft_leader_passes_leader_acceptor,
}


def release_refusal(m) -> str | None:
    """Why the conformance check cannot run on this explicit model (one line), or None: it compares the z3 model
    with the explicit one at Kafka 3.7 to 3.9 only (--kafka 3.9)."""
    if version_of(m) >= (4, 0, 0):
        return (f"the z3 KRaft model follows Kafka {Z3_RELEASE}'s controller (no ELR, no handleBrokerShutdown at a "
                f"registration): check it against a model with --kafka {Z3_RELEASE}, not {version_of(m)[0]}."
                f"{version_of(m)[1]}")
    return None


def action_of(m, rule: str, args: tuple, pre_key, post_key):
    """The z3 action and its arguments that stand for an explicit step."""
    params = dict(zip(m.rules[m.rule_index[rule]].params, args))
    if rule in CONTROLLER_RULES:
        action = ACTION_BY_NAME[rule]
        return action, tuple(params[name] for name, _ in action.params)
    if pre_key[1] != post_key[1] and "partition" in params:
        return ACTION_BY_NAME["AlterPartition"], (params["partition"],)
    return ACTION_BY_NAME["BrokerLocal"], (params.get("broker", 0),)


class Check:
    """One finite universe with a pre- and a post-state, and a solver per question."""

    def __init__(self, m, mutation=None):
        self.m, self.mutation = m, mutation
        self.u = Finite(m.cfg.brokers, dir_elements(m), m.cfg.partitions)
        self.s, self.t = StateVars(self.u, "conf.pre"), StateVars(self.u, "conf.post")
        self._formulas: dict = {}     # built once per action and arguments (or property): building is the cost

    def _pin(self, st, key) -> list:
        # one conjunction per abstract state, asserted whole: asserting its equalities one by one was the cost
        return self._formula(("pin", st.prefix, key), lambda: [z3.And(pin(self.u, st, key))])

    def _formula(self, key, build):
        if key not in self._formulas:
            self._formulas[key] = build()
        return self._formulas[key]

    def _sat(self, *formulas) -> bool:
        solver = z3.Solver()
        solver.add(*formulas)
        result = solver.check()
        if result == z3.unknown:
            raise RuntimeError(f"z3 answered unknown: {solver.reason_unknown()}")
        return result == z3.sat

    def elem(self, sort_letter, i):
        return {"B": self.u.brokers, "P": self.u.partitions}[sort_letter][i]

    def step(self, action, args, pre_key, post_key):
        """(the relation holds, the z3 kraft_leader_passes_leader_acceptor holds for every way it does)."""
        zargs = tuple(self.elem(srt, a) for (_, srt), a in zip(action.params, args))

        def build():
            rel, elected_ok = relation(self.u, action, self.s, self.t, zargs, "conf." + action.name, self.mutation)
            return conj(rel), z3.Not(elected_ok)
        def solver():
            rel, refused = build()
            out = z3.Solver()
            out.add(rel)
            return out, refused
        # one solver per action and arguments, the relation asserted once; the states are pinned in a scope
        solver, refused = self._formula(("step", action.name, args), solver)
        solver.push()
        try:
            solver.add(*self._pin(self.s, pre_key), *self._pin(self.t, post_key))
            allowed = self._check(solver)
            passes = allowed and not self._check(solver, refused)
        finally:
            solver.pop()
        return allowed, passes

    @staticmethod
    def _check(solver, *extra) -> bool:
        if extra:
            solver.push()
            solver.add(*extra)
        try:
            result = solver.check()
        finally:
            if extra:
                solver.pop()
        if result == z3.unknown:
            raise RuntimeError(f"z3 answered unknown: {solver.reason_unknown()}")
        return result == z3.sat

    def initial(self, key) -> bool:
        return self._sat(*self._pin(self.s, key), conj(self.initial_condition()))

    def initial_condition(self) -> list:
        """The z3 initial condition, on a universe whose dir elements beyond the configured dirs are replacement
        disks (``kraft_abstraction.element``, with repairs): none of them is registered at the start, where the z3
        initial state registers every dir. Such a state is one the z3 model reaches from its initial state: no
        partition exists, so a heartbeat per broker naming those elements offline (the z3 heartbeat may name any)
        writes only the registration change that drops them."""
        labelled = initial(self.u, self.s)
        first = self.m.cfg.dirs
        if len(self.u.dirs) == first:
            return labelled
        D, s = self.u.dirs, self.s
        registered = z3.And([z3.And([s.regdir(b, D[d]) == (d < first) for d in range(len(D))])
                             for b in self.u.brokers])
        return [(name, registered) if name == "every dir registered" else (name, f) for name, f in labelled]

    def _satisfiable_with(self, key, build, *pins) -> bool:
        """Whether the formula ``build()`` (asserted once in its own solver, named by ``key``) is satisfiable with
        the pins (in a scope)."""
        solver = self._formula(("solver",) + key, lambda: _solver_with(build()))
        solver.push()
        try:
            solver.add(*pins)
            return self._check(solver)
        finally:
            solver.pop()

    def state_property(self, prop, key) -> bool:
        return not self._satisfiable_with(("state", prop.id, prop.formula), lambda: z3.And(
            well_formed(self.u, self.s), z3.Not(prop.formula(self.u, self.s))), *self._pin(self.s, key))

    def lemma(self, name, key) -> bool:
        return not self._satisfiable_with(("lemma", name, LEMMAS[name].formula), lambda: z3.And(
            well_formed(self.u, self.s), z3.Not(LEMMAS[name].formula(self.u, self.s))), *self._pin(self.s, key))

    def transition_property(self, prop, pre_key, post_key) -> bool:
        return not self._satisfiable_with(("transition", prop.id, prop.formula), lambda: z3.Not(
            prop.formula(self.u, self.s, self.t, z3.BoolVal(True))), *self._pin(self.s, pre_key),
            *self._pin(self.t, post_key))


def _solver_with(formula):
    solver = z3.Solver()
    solver.add(formula)
    return solver


def reachable(m, limit: int | None = None):
    """Every reachable state (breadth first), with its successors: (state, [(rule name, args, next)])."""
    start = m.init_states()[0]
    seen = {start}
    frontier = [start]
    while frontier:
        nxt = []
        for s in frontier:
            succ = [(m.rules[a.rule].name, a.args, t) for a, t in m.successors(s)]
            yield s, succ
            for _, _, t in succ:
                if t not in seen and (limit is None or len(seen) < limit):
                    seen.add(t)
                    nxt.append(t)
        frontier = nxt


BEYOND_SAMPLES = 1_000     # changed states (and as many changed transitions) beyond the reachable ones
BASE_SAMPLE = 2_000        # reachable transitions kept (a seeded reservoir) to build them from


def check(m, mutation=None, limit: int | None = None, max_offences: int = 5, reverse: bool = True,
          beyond: int = BEYOND_SAMPLES, seed: int = 0) -> dict:
    """Run the conformance check on model ``m`` (``limit``: at most that many states, breadth-first, for a quick
    look; ``reverse``: also the reverse direction, proofs/kraft_reverse.py; ``beyond``: how many changed states
    and transitions the properties are compared on beyond the reachable ones, ``changed``). The z3 model is Kafka
    3.9's controller (no ELR, no records at a registration): a model of a 4.x release is refused (ValueError). The
    result names the model's release (``kafka``) and whether ELR is on (``elr``): what the verdict says was checked."""
    refusal = release_refusal(m)
    if refusal is not None:
        raise ValueError(refusal)
    start = time.monotonic()
    ck = Check(m, mutation)
    rev = Reverse(m, mutation) if reverse else None
    states = transitions = 0
    triples: dict = {}
    state_verdicts: dict = {}
    offences: list = []
    fired: dict = {}
    violations: dict = {}      # property id -> [explicit states or transitions breaking it, the first's step]
    rng = random.Random(seed)
    base: list = []
    init_key = abstract(m, m.init_states()[0])
    if not ck.initial(init_key):
        offences.append({"check": "initial", "state": init_key})
    for s, succ in reachable(m, limit):
        states += 1
        pre = abstract(m, s)
        for pid, prop in PROPERTIES.items():
            if prop.kind != "state":
                continue
            explicit = EXPLICIT[pid](m, s) is None
            if not explicit:
                violations.setdefault(pid, [0, f"a state reached after {states:,} states"])[0] += 1
            z3_holds = state_verdicts.get((pid, pre))
            if z3_holds is None:
                z3_holds = state_verdicts[(pid, pre)] = ck.state_property(prop, pre)
            if z3_holds != explicit:
                offences.append({"check": "property", "property": pid, "explicit": explicit, "z3": z3_holds,
                                 "state": pre})
        mapped = []
        for rule, args, t in succ:
            transitions += 1
            if beyond:
                if len(base) < BASE_SAMPLE:
                    base.append((s, t))
                elif (j := rng.randrange(transitions)) < BASE_SAMPLE:
                    base[j] = (s, t)
            post = abstract(m, t)
            action, zargs = action_of(m, rule, args, pre, post)
            mapped.append((action.name, zargs, t, post))
            fired[action.name] = fired.get(action.name, 0) + 1
            key = (action.name, zargs, pre, post)
            if key not in triples:
                allowed, passes = ck.step(action, zargs, pre, post)
                monotone = ck.transition_property(PROPERTIES["kraft_epochs_monotone"], pre, post)
                triples[key] = (allowed, passes, monotone)
            allowed, passes, monotone = triples[key]
            if not allowed:
                offences.append({"check": "forward", "rule": rule, "args": args, "action": action.name,
                                 "pre": pre, "post": post})
            for pid, z3_holds in (("kraft_leader_passes_leader_acceptor", passes),
                                  ("kraft_epochs_monotone", monotone)):
                explicit = EXPLICIT[pid](m, s, None, t) is None
                if not explicit:
                    violations.setdefault(pid, [0, f"{rule}{args}"])[0] += 1
                if allowed and z3_holds != explicit:
                    offences.append({"check": "property", "property": pid, "explicit": explicit, "z3": z3_holds,
                                     "rule": rule, "args": args, "pre": pre, "post": post})
        if rev is not None:
            offences += rev.visit(s, pre, mapped)
        if len(offences) >= max_offences:
            break
    outside = None
    if beyond and base and len(offences) < max_offences:
        outside = beyond_reachable(ck, base, beyond, seed)
        offences += outside.pop("disagreements")
    return {"kafka": release_text(m), "elr": bool(elr_enabled(m)), "states": states, "transitions": transitions,
            "abstract_triples": len(triples),
            "abstract_states": len({k for _, k in state_verdicts}), "actions_fired": fired,
            "reverse": rev.figures() if rev is not None else None, "beyond": outside,
            "explicit_violations": {pid: {"count": n, "first": where} for pid, (n, where) in violations.items()},
            "offences": offences[:max_offences], "result": "ok" if not offences else "offences",
            "elapsed_s": round(time.monotonic() - start, 3)}


# ---- beyond the reachable states -------------------------------------------------------------------------------
_REFS = (UNASSIGNED, MIGRATING, LOST)


def changed(m, state, rng):
    """``state`` with some of what the abstraction reads changed at random: each broker's up and registered, its
    registration (none, fenced or not, any dirs), each existing partition's ISR, leader, Directories and epochs
    (Replicas kept; a missing partition stays as the model has one: no leader, ISR or replica, epochs -1). A value
    of the model's state schema, most often one no search reaches."""
    c, B, D = state.controller, m.cfg.brokers, m.cfg.dirs
    brokers = tuple(br._replace(up=rng.random() < 0.7, registered=rng.random() < 0.6) if rng.random() < 0.3 else br
                    for br in state.brokers)
    regs = []
    for reg in c.registrations:
        if rng.random() < 0.6:
            regs.append(reg)
        elif rng.random() < 0.2:
            regs.append(None)
        else:
            regs.append(Registration(0 if reg is None else reg.epoch, rng.random() < 0.5,
                                     tuple(d for d in range(D) if rng.random() < 0.6)))
    parts = []
    for part in c.partitions:
        if part.leader_epoch < 0 or rng.random() < 0.4:
            parts.append(part)
            continue
        lepoch = rng.randrange(3)
        parts.append(part._replace(
            isr=rng.randrange(1 << B), leader=rng.choice((NO_LEADER, *range(B))), leader_epoch=lepoch,
            partition_epoch=lepoch + rng.randrange(2),
            dirs=tuple(rng.choice(_REFS + tuple(range(D))) if rng.random() < 0.5 else d for d in part.dirs)))
    return state._replace(brokers=brokers, controller=c._replace(registrations=tuple(regs), partitions=tuple(parts)))


def beyond_reachable(ck: Check, base: list, samples: int, seed: int) -> dict:
    """Each state property and kraft_epochs_monotone against its explicit invariant on ``samples`` changed states
    and as many changed transitions, built from ``base`` (reachable (state, next) pairs). Not compared here:
    kraft_leader_passes_leader_acceptor, whose z3 side is a property of an action's records (the reachable
    transitions compare it; its explicit side states LeaderAcceptor on its own: invariants/kraft/safety.py)."""
    m, rng = ck.m, random.Random(seed)
    seen: dict = {}
    disagreements: list = []
    failures: dict = {}
    props = [(pid, prop) for pid, prop in PROPERTIES.items() if prop.kind == "state"]
    monotone = PROPERTIES["kraft_epochs_monotone"]
    for _ in range(samples):
        s, t = base[rng.randrange(len(base))]
        st = changed(m, s, rng)
        key = abstract(m, st)
        for pid, prop in props:
            holds = EXPLICIT[pid](m, st) is None
            failures[pid] = failures.get(pid, 0) + (not holds)
            if (pid, key) not in seen:
                seen[(pid, key)] = ck.state_property(prop, key)
            if seen[(pid, key)] != holds:
                disagreements.append({"check": "beyond", "property": pid, "explicit": holds,
                                      "z3": seen[(pid, key)], "state": key})
        pre = changed(m, s, rng)
        post = changed(m, t if rng.random() < 0.5 else pre, rng)
        pre_key, post_key = abstract(m, pre), abstract(m, post)
        holds = EXPLICIT[monotone.id](m, pre, None, post) is None
        failures[monotone.id] = failures.get(monotone.id, 0) + (not holds)
        tkey = (monotone.id, pre_key, post_key)
        if tkey not in seen:
            seen[tkey] = ck.transition_property(monotone, pre_key, post_key)
        if seen[tkey] != holds:
            disagreements.append({"check": "beyond", "property": monotone.id, "explicit": holds, "z3": seen[tkey],
                                  "pre": pre_key, "post": post_key})
    return {"samples": samples, "seed": seed, "distinct": len(seen), "explicit_failures": failures,
            "compared": [pid for pid, _ in props] + [monotone.id], "disagreements": disagreements}
