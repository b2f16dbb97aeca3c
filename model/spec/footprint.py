"""What a rule reads and writes, in terms of the state's components (docs/model.md, section 7, "Read and write sets").

A *component* is one field of one member of the state's group record (``broker[2].inbox``, with the group's
member word, model/spec/schema.py ``Record.member``), one field of a singleton record (``controller.live``),
one of the state's plain fields (``budget``) or one extension field (``ext.created``). A rule declares, with
``reads=``, ``writes=`` and (optionally) ``guard_reads=`` in ``@FEATURE.rule(...)``, patterns over them:

- ``<member>[<param>].<field>``: that field of the member named by the rule's parameter ``<param>``
  (``<member>[2].<field>``: of member 2, in a footprint computed at a state: ``footprint_at``);
  ``<member>[*].<field>``: of any member; ``<member>[<param>]`` / ``<member>[*]``: every field of it / of all;
- ``<record>.<field>`` / ``<record>`` for a singleton record; ``ext.<name>`` / ``ext``; a plain field by its name;
- ``*``: everything;
- ``@<hook>.reads`` / ``@<hook>.writes``: what the model's hook ``<hook>`` (``model.hooks``) declares it reads / writes
  (``@declares(reads=..., writes=...)`` on the hook's implementation), so a layer that calls a hook whose
  implementation another layer provides (the storage layer's rules and a controller mode's hooks,
  model/storage/mode.py) declares it without naming that layer's state. A hook's patterns name its own
  parameters, which its callers must have under the same names; an implementation without a declaration reads
  and writes everything.

``reads`` covers what the guard and the effect read (``guard_reads``, default ``reads``, is what the guard
alone reads: the necessary-enabling sets of partial-order reduction use it). A rule without declarations
reads and writes everything, so it is dependent on every other action (sound, never reduced).

When a rule is applied eagerly after every step (model/spec/feature.py ``Eager``; ``Model.settle``), a step's
footprint also reads and writes the eager rule's ``touches`` fields of every member whose ``channel`` it
writes. (In a reachable state of an eager model no channel is ready for the eager rule, so ``settle`` touches no
other member.)

Patterns are checked for their form and parameters when a rule is declared, and against the composed schema
when a model resolves them. ``Footprints(model)`` resolves every action of ``model.action_space`` into bitmasks
over the model's components.
"""
from __future__ import annotations

import inspect
import re

EVERYTHING = ("*",)
_PATTERN = re.compile(r"^(?:(?P<group>[A-Za-z_]\w*)\[(?P<who>[A-Za-z_*][A-Za-z_0-9]*|\d+)\](?:\.(?P<mfield>\w+))?"
                      r"|(?P<head>[A-Za-z_]\w*)(?:\.(?P<field>\w+))?|(?P<all>\*)"
                      r"|@(?P<hook>[A-Za-z_]\w*)\.(?P<role>reads|writes))$")
ROLES = ("reads", "writes")


def declares(reads=EVERYTHING, writes=EVERYTHING):
    """Decorate a hook's implementation with what it reads and writes (patterns of this module, over its own
    parameters): what ``@<hook>.reads`` and ``@<hook>.writes`` stand for in its callers' declarations."""
    def mark(fn):
        params = tuple(inspect.signature(fn).parameters)
        for declared in (reads, writes):
            check_declaration(declared, params)
            if any(_PATTERN.match(text)["hook"] for text in declared):
                raise FootprintError(f"hook {fn.__name__}: its declaration names another hook's ({declared})")
        fn.footprint = {"reads": tuple(reads), "writes": tuple(writes)}
        return fn
    return mark


def hook_footprints(hooks) -> dict:
    """(hook name, "reads" | "writes") -> patterns, for every hook of a model's ``hooks`` namespace (an
    implementation without a declaration: everything)."""
    out = {}
    for name, fn in vars(hooks).items():
        declared = getattr(fn, "footprint", None)
        for role in ROLES:
            out[name, role] = EVERYTHING if declared is None else declared[role]
    return out


class FootprintError(ValueError):
    """A declaration names no component of the state schema, or a parameter the rule does not have."""


def check_declaration(patterns, params: tuple[str, ...], ext_names=None, schema=None) -> None:
    """Raise FootprintError if a pattern is malformed, names a parameter the rule lacks or (given the model's
    composed schema and extension field names) a component the state does not have."""
    for text in patterns:
        m = _PATTERN.match(text)
        if m is None:
            raise FootprintError(f"{text!r} is not a component pattern")
        if m["who"] is not None and m["who"] != "*" and not m["who"].isdigit() and m["who"] not in params:
            raise FootprintError(f"{text!r}: the rule has no parameter {m['who']!r} (parameters: {params})")
        head = m["head"]
        if head == "ext":
            if m["field"] is not None and ext_names is not None and m["field"] not in ext_names:
                raise FootprintError(f"{text!r}: the model has no extension field {m['field']!r}")
            continue
        if schema is None:
            continue
        if m["group"] is not None:
            if m["group"] != schema.member_word:
                raise FootprintError(f"{text!r}: the state has no group of {m['group']!r} members")
            names = schema.types[schema.group]._fields
            if m["mfield"] is not None and m["mfield"] not in names:
                raise FootprintError(f"{text!r}: {schema.records[schema.group].type_name} has no field {m['mfield']!r}")
        elif head in schema.singles:
            if m["field"] is not None and m["field"] not in schema.types[head]._fields:
                raise FootprintError(f"{text!r}: {schema.records[head].type_name} has no field {m['field']!r}")
        elif head is not None and (head not in schema.plain or m["field"] is not None):
            raise FootprintError(f"{text!r}: the state has no field {head!r}")


class Components:
    """The components of one model's states, numbered: bit i of a footprint mask is component i. Keys:
    (member word, member, field), (singleton record, field), (plain field,), ("ext", name)."""

    def __init__(self, schema, members: int, ext_names: tuple[str, ...], hooks: dict | None = None):
        self.schema = schema
        self.hooks = hooks          # (hook, role) -> patterns (``hook_footprints``); None: ``@hook`` is everything
        self.members = members
        self.word = schema.member_word
        self.member_fields = schema.types[schema.group]._fields if schema.group else ()
        self.ext_names = ext_names
        self.names: list[str] = []
        self.index: dict[tuple, int] = {}
        for b in range(members):
            for f in self.member_fields:
                self._add((self.word, b, f), f"{self.word}[{b}].{f}")
        for r in schema.singles:
            for f in schema.types[r]._fields:
                self._add((r, f), f"{r}.{f}")
        for f in schema.plain:
            self._add((f,), f)
        for e in ext_names:
            self._add(("ext", e), f"ext.{e}")
        self.all = (1 << len(self.names)) - 1

    @classmethod
    def of(cls, model) -> "Components":
        """The components of a model's states."""
        schema = model.schema
        members = len(model.init_states()[0][schema.group_index]) if schema.group else 0
        return cls(schema, members, tuple(sf.name for sf in model.ext_fields), hook_footprints(model.hooks))

    def _add(self, key: tuple, name: str) -> None:
        self.index[key] = len(self.names)
        self.names.append(name)

    def bit(self, key: tuple) -> int:
        return 1 << self.index[key]

    def member_mask(self, b: int, fields=None) -> int:
        return sum(self.bit((self.word, b, f)) for f in (self.member_fields if fields is None else fields))

    def single_mask(self, record: str, fields=None) -> int:
        names = self.schema.types[record]._fields if fields is None else fields
        return sum(self.bit((record, f)) for f in names)

    def mask(self, patterns, params: tuple[str, ...] = (), args: tuple = ()) -> int:
        """The components a declaration names, for an action with these arguments."""
        if patterns is None:
            return self.all
        patterns = self.expand(patterns, params)
        check_declaration(patterns, params, self.ext_names, self.schema)
        named = dict(zip(params, args))
        out = 0
        for text in patterns:
            m = _PATTERN.match(text)
            if m["all"]:
                return self.all
            if m["who"] is not None:
                who = (range(self.members) if m["who"] == "*" else (int(m["who"]),) if m["who"].isdigit()
                       else (named[m["who"]],))
                fields = None if m["mfield"] is None else (m["mfield"],)
                for b in who:
                    out |= self.member_mask(b, fields)
            elif m["head"] == "ext":
                names = self.ext_names if m["field"] is None else (m["field"],)
                out |= sum(self.bit(("ext", e)) for e in names)
            elif m["head"] in self.schema.singles:
                out |= self.single_mask(m["head"], None if m["field"] is None else (m["field"],))
            else:
                out |= self.bit((m["head"],))
        return out

    def expand(self, patterns, params: tuple[str, ...] = ()) -> tuple[str, ...]:
        """The patterns with every ``@<hook>.<role>`` replaced by what the model's hook declares."""
        out = []
        for text in patterns:
            m = _PATTERN.match(text)
            if m is None or m["hook"] is None:
                out.append(text)
                continue
            if self.hooks is None:
                return EVERYTHING
            if (m["hook"], m["role"]) not in self.hooks:
                raise FootprintError(f"{text!r}: the model has no hook {m['hook']!r}")
            declared = self.hooks[m["hook"], m["role"]]
            try:
                check_declaration(declared, params, self.ext_names, self.schema)
            except FootprintError as e:
                raise FootprintError(f"{text!r} (the hook's declaration {declared}): {e}") from None
            out.extend(declared)
        return tuple(out)

    def describe(self, mask: int) -> list[str]:
        return [n for i, n in enumerate(self.names) if mask >> i & 1]

    # ---- values: what the footprint checker compares and swaps ------------------------------------------
    def keys(self):
        return self.index.keys()

    def get(self, state, key: tuple, ext_index: dict):
        if len(key) == 3:
            return getattr(state[self.schema.group_index][key[1]], key[2])
        if key[0] == "ext":
            return state.ext[ext_index[key[1]]]
        if len(key) == 2:
            return getattr(getattr(state, key[0]), key[1])
        return getattr(state, key[0])

    def put(self, state, values: dict, ext_index: dict):
        """The state with the components in ``values`` (key -> value) replaced."""
        g = self.schema.group_index
        members = list(state[g]) if g is not None else []
        singles = {r: getattr(state, r) for r in self.schema.singles}
        top, ext = {}, list(state.ext)
        for key, value in values.items():
            if len(key) == 3:
                members[key[1]] = members[key[1]]._replace(**{key[2]: value})
            elif key[0] == "ext":
                ext[ext_index[key[1]]] = value
            elif len(key) == 2:
                singles[key[0]] = singles[key[0]]._replace(**{key[1]: value})
            else:
                top[key[0]] = value
        if g is not None:
            top[self.schema.group] = tuple(members)
        return state._replace(ext=tuple(ext), **singles, **top)


class Footprints:
    """Per action of ``model.action_space`` (by position): the components its guard reads, the components it
    reads (guard and effect, with eager metadata's settling) and those it writes, as bitmasks."""

    def __init__(self, model):
        self.components = c = Components.of(model)
        self._eager = model.eager
        self.guard_reads, self.reads, self.writes = [], [], []
        self.declared = []
        for _, rule, args in model.action_space:
            gr = c.mask(rule.guard_reads if rule.guard_reads is not None else rule.reads, rule.params, args)
            r = c.mask(rule.reads, rule.params, args) | gr
            w = c.mask(rule.writes, rule.params, args)
            r, w = self._settled(r, w)
            self.guard_reads.append(gr)
            self.reads.append(r)
            self.writes.append(w)
            self.declared.append(rule.reads is not None and rule.writes is not None)
        self._space = [(rule, args) for _, rule, args in model.action_space]
        self._masks: dict[tuple, int] = {}
        # Partial-order reduction's other facts (model/spec/rule.py): the actions never enabled in a quiescent
        # state, the budget each environment event spends, the actions whose footprint depends on the state.
        self.needs_message = sum(1 << i for i, (r, _) in enumerate(self._space) if r.needs_message)
        self.spends = [(i, r.spends) for i, (r, _) in enumerate(self._space) if r.spends is not None]
        self.dynamic = [i for i, (r, _) in enumerate(self._space) if r.footprint_at is not None]
        n = len(self.reads)
        # Dependent pairs (as bitmasks over action positions): one writes what the other reads or writes.
        self.dependent = [0] * n
        touches = [self.reads[i] | self.writes[i] for i in range(n)]
        for i in range(n):
            wi, ti = self.writes[i], touches[i]
            mask = 0
            for j in range(n):
                if wi & touches[j] or self.writes[j] & ti:
                    mask |= 1 << j
            self.dependent[i] = mask
        # Necessary enabling sets: the actions that write something the guard of action i reads.
        self.enablers = [0] * n
        for i in range(n):
            gr, mask = self.guard_reads[i], 0
            for j in range(n):
                if self.writes[j] & gr:
                    mask |= 1 << j
            self.enablers[i] = mask


    def _settled(self, reads: int, writes: int) -> tuple[int, int]:
        """An eager rule (model/spec/feature.py Eager): an action that writes a member's channel also settles it
        (reads and writes the fields the eager rule touches)."""
        c = self.components
        if self._eager is not None:
            for b in range(c.members):
                if writes & c.bit((c.word, b, self._eager.channel)):
                    settled = c.member_mask(b, self._eager.touches)
                    reads |= settled
                    writes |= settled
        return reads, writes

    def dependent_on(self, pos: int, reads: int, writes: int) -> int:
        """The actions dependent on the action at ``pos`` when it reads and writes these (its footprint at a state;
        the others' static ones): one writes what the other reads or writes. The action itself included."""
        touches = reads | writes
        return sum(1 << j for j in range(len(self.reads))
                   if writes & (self.reads[j] | self.writes[j]) or self.writes[j] & touches) | 1 << pos

    def at(self, model, state, pos: int) -> tuple[int, int]:
        """(reads, writes) of the enabled action at ``pos`` at this state: its ``footprint_at`` if it declares
        one, else its static footprint."""
        rule, args = self._space[pos]
        if rule.footprint_at is None:
            return self.reads[pos], self.writes[pos]
        patterns = rule.footprint_at(model, state, *args)
        key = (pos, patterns)
        if key not in self._masks:
            c = self.components
            self._masks[key] = self._settled(c.mask(patterns[0], rule.params, args), c.mask(patterns[1], rule.params, args))
        r, w = self._masks[key]
        return r, w


# ---- the checker: declarations against the rules' behaviour on sampled states ----------------------------------

def _enabled(model, rule, state, args) -> bool:
    return rule.guard(model, state, *args) is None


def footprint_violations(model, states, donors_per_state: int = 2, seed: int = 0, rules=None,
                         budgets=None) -> list[str]:
    """Run every action of the model (of the named ``rules`` only, when given) on the given (reachable) states and
    report, one line each, where a rule writes a component outside its declared writes, where its guard's verdict
    or what it writes changes when the components outside its (guard) reads are swapped for another sampled
    state's (donors), and likewise for the footprint it computes at the state (``footprint_at``, which must not
    change either); where a ``needs_message`` rule is enabled in a quiescent state, a rule is enabled with the
    budget it ``spends`` used up, or an action lowers a budget (budgets must only grow). Whether a budget is left
    is the model's ``budget_left`` hook, as partial-order reduction asks it (none declared: always left);
    ``budgets(state)``: the budgets, which must only grow (the storage layer's ``State.budget``)."""
    import random

    budget_left = getattr(model.hooks, "budget_left", lambda model, state, index: None)

    fp = Footprints(model)
    comps, ext_index = fp.components, model.ext_index
    keys = list(comps.keys())
    bit = {k: comps.bit(k) for k in keys}
    rng = random.Random(seed)
    problems: dict[tuple, str] = {}

    def values(state):
        return {k: comps.get(state, k, ext_index) for k in keys}

    def swapped(state_values, donor_values, keep: int):
        return {k: donor_values[k] for k in keys if not keep & bit[k] and donor_values[k] != state_values[k]}

    def names(ks) -> list[str]:
        return sorted(comps.names[comps.index[k]] for k in ks)

    def report(rule, why: str) -> None:
        problems.setdefault((rule.name, why.split(":")[0]), f"{rule.name}: {why}")

    def enabled_hybrid(rule, args, state, change: dict, why: str):
        """The state with ``change`` swapped in, or None (reported: ``why``, the swapped components) if that
        disables the action."""
        hybrid = comps.put(state, change, ext_index)
        if _enabled(model, rule, hybrid, args):
            return hybrid
        report(rule, f"{why}: {names(change)}")
        return None

    def check_effect(rule, args, state, sv, av, dv, r: int, w: int, where: str, at=None) -> None:
        """Swap what the action does not read (r) for the donor's: it must stay enabled, write the same values
        where it writes (w), leave the rest alone, and (``at``) compute the same footprint."""
        change = swapped(sv, dv, r)
        if not change:
            return
        hybrid = enabled_hybrid(rule, args, state, change, f"guard reads outside reads{where}")
        if hybrid is None:
            return
        if at is not None and rule.footprint_at(model, hybrid, *args) != at:
            report(rule, f"footprint_at reads outside its reads: it changes when {names(change)} change")
        hv, before = values(model.step(hybrid, rule.name, args)[1]), values(hybrid)
        differ = [comps.names[comps.index[k]] for k in keys if w & bit[k] and hv[k] != av[k]]
        if differ:
            report(rule, f"effect reads outside reads{where}: writes {differ} differently when {names(change)} change")
        outside = [comps.names[comps.index[k]] for k in keys if not w & bit[k] and hv[k] != before[k]]
        if outside:
            report(rule, f"writes outside writes{where} when {names(change)} change: {outside}")

    def check_appends(rule, args, state, sv, w: int, appended: list) -> None:
        """An ``appends`` queue: the effect (before eager metadata's settling, as the effect memo runs it) leaves
        the queue's content at its head, and what it appends (and every other write) stays the same when the
        queue holds something else (another sampled state's)."""
        av = values(rule.effect(model, state, *args))
        for k in appended:
            if av[k][:len(sv[k])] != sv[k]:
                report(rule, f"appends: rewrites {comps.names[comps.index[k]]} instead of appending to it")
                return
        for _ in range(donors_per_state):
            _, dv, _ = samples[rng.randrange(len(samples))]
            change = {k: dv[k] for k in appended if dv[k] != sv[k]}
            if not change:
                continue
            hybrid = enabled_hybrid(rule, args, state, change, "appends: its guard reads")
            if hybrid is None:
                return
            hv = values(rule.effect(model, hybrid, *args))
            differ = [comps.names[comps.index[k]] for k in keys
                      if (hv[k] != dv[k] + av[k][len(sv[k]):] if k in change else w & bit[k] and hv[k] != av[k])]
            if differ:
                report(rule, f"appends: {differ} depend on what {names(change)} hold")
                return

    samples = [(s, values(s), model.is_quiescent(s)) for s in states]
    for pos, (_, rule, args) in enumerate(model.action_space):
        if rules is not None and rule.name not in rules:
            continue
        gr, r, w = fp.guard_reads[pos], fp.reads[pos], fp.writes[pos]
        appended = []
        if rule.appends:
            am = comps.mask(rule.appends, rule.params, args)
            if am & ~comps.mask(rule.writes, rule.params, args):
                report(rule, f"appends names components outside its writes: {comps.describe(am & ~comps.mask(rule.writes, rule.params, args))}")
            appended = [k for k in keys if am & bit[k]]
        for state, sv, quiet in samples:
            on = _enabled(model, rule, state, args)
            if on and rule.needs_message and quiet:
                report(rule, "needs_message, but enabled in a quiescent state")
            if on and rule.spends is not None and budget_left(model, state, rule.spends) is not None:
                report(rule, "enabled with the budget it spends used up")
            after = model.step(state, rule.name, args)[1] if on else None
            at = dr = dw = None
            if on:
                av = values(after)
                if budgets is not None and any(a < b for a, b in zip(budgets(after), budgets(state))):
                    report(rule, "lowers a budget")
                for k in keys:
                    if not w & bit[k] and av[k] != sv[k]:
                        report(rule, f"writes {comps.names[comps.index[k]]}, not declared")
                if appended:
                    check_appends(rule, args, state, sv, w, appended)
                if rule.footprint_at is not None:
                    at = rule.footprint_at(model, state, *args)
                    dr, dw = fp.at(model, state, pos)
                    for k in keys:
                        if not dw & bit[k] and av[k] != sv[k]:
                            report(rule, f"writes {comps.names[comps.index[k]]}, not in footprint_at")
            for _ in range(donors_per_state):
                _, dv, _ = samples[rng.randrange(len(samples))]
                change = swapped(sv, dv, gr)
                if change:
                    hybrid = comps.put(state, change, ext_index)
                    if _enabled(model, rule, hybrid, args) != on:
                        report(rule, f"guard reads outside guard_reads: {names(change)}")
                if on:
                    check_effect(rule, args, state, sv, av, dv, r, w, "")
                    if at is not None:
                        check_effect(rule, args, state, sv, av, dv, dr, dw, " (footprint_at)", at)
    return sorted(problems.values())


def _undeclared(model, reads) -> tuple:
    """(components, extension index, the component keys outside ``reads``): what a read check swaps."""
    comps = Components.of(model)
    keep = comps.mask(reads)
    return comps, model.ext_index, [k for k in comps.keys() if not keep & comps.bit(k)]


def read_violations(model, check, reads, states, donors_per_state: int = 2, seed: int = 0) -> list[str]:
    """Where ``check(model, state)`` (an invariant's check) gives another answer when the components outside
    ``reads`` (patterns) are swapped for another sampled state's: the reads it declares miss something."""
    import random

    comps, ext_index, keys = _undeclared(model, reads)
    rng = random.Random(seed)
    problems = set()
    for state in states:
        verdict = check(model, state)
        for _ in range(donors_per_state):
            donor = states[rng.randrange(len(states))]
            change = {k: comps.get(donor, k, ext_index) for k in keys
                      if comps.get(donor, k, ext_index) != comps.get(state, k, ext_index)}
            if change and check(model, comps.put(state, change, ext_index)) != verdict:
                problems.add(f"reads outside {tuple(reads)}: {sorted(comps.names[comps.index[k]] for k in change)}")
    return sorted(problems)


def transition_read_violations(model, check, reads, states, donors_per_state: int = 2, seed: int = 0) -> list[str]:
    """Where a transition invariant's ``check(model, state, action, after)`` gives another answer when the
    components outside ``reads`` are, before and after the step alike, another sampled state's: it compares
    something it does not declare."""
    import random

    comps, ext_index, keys = _undeclared(model, reads)
    rng = random.Random(seed)
    problems = set()
    for state in states:
        for action, after in model.successors(state):
            verdict = check(model, state, action, after)
            for _ in range(donors_per_state):
                donor = states[rng.randrange(len(states))]
                change = {k: comps.get(donor, k, ext_index) for k in keys}
                swapped = check(model, comps.put(state, change, ext_index), action,
                                comps.put(after, change, ext_index))
                if swapped != verdict:
                    problems.add(f"reads outside {tuple(reads)}: {model.label(action)}")
    return sorted(problems)
