"""Effects remembered by the components they read (issue #20; docs/performance.md, "Effects memoised").

A rule that declares its footprint (model/spec/footprint.py) says which state components its effect reads and which
it writes. Its effect is then a function of the components it reads: the first time an action meets a given
combination of them, the effect runs and what it did to each written component is kept; the next time, the
kept changes are applied to the new state without running the effect. Controller events are the heavy effects
(a replica and partition state machine run, 80-300 us each on small) and the controller recurs across very
many states (medium's first 200,000 states hold about 330 distinct controllers), so they are the ones that
gain.

``appends=`` names the queues an effect only appends to (the controller's sends to the brokers' inboxes): the
change kept is the appended suffix, and the queue's content is left out of the key. The declarations are
checked on sampled reachable states of every preset (model/spec/footprint.py ``footprint_violations``; a wrong one
would make this memo wrong), and on a miss the effect's result is checked against its declared writes (an
effect that writes elsewhere, or rewrites a queue it declares it only appends to, is never memoised again).

An action whose memo hits seldom (after ``PROBATION`` look-ups, fewer than a quarter) runs its effect directly
from then on: successors are the same either way, only the time differs.
"""
from __future__ import annotations

UNCHANGED = object()
PROBATION = 2048       # look-ups before an action's hit rate is judged
LIMIT = 1 << 15        # remembered component combinations per action (the memo is cleared when full)


def _paths(comps, mask: int, ext_index: dict) -> list[tuple[tuple, int]]:
    """The components of a mask as (access path into a state, the components it covers): paths ("b", member,
    field index), ("b", member, None) for a whole member of the group record, ("c", root index, field index),
    ("c", root index, None) for a singleton record, ("s", root index) for a plain field, ("e", ext index).
    Whole units where a mask covers every field of a member or of a singleton record."""
    schema = comps.schema
    out = []
    for b in range(comps.members):
        whole = comps.member_mask(b)
        if mask & whole == whole:
            out.append((("b", b, None), whole))
        else:
            out.extend((("b", b, fi), comps.bit((comps.word, b, f))) for fi, f in enumerate(comps.member_fields)
                       if mask & comps.bit((comps.word, b, f)))
    for record, ri in zip(schema.singles, schema.single_index):
        whole = comps.single_mask(record)
        if mask & whole == whole:
            out.append((("c", ri, None), whole))
        else:
            out.extend((("c", ri, ci), comps.bit((record, f))) for ci, f in enumerate(schema.types[record]._fields)
                       if mask & comps.bit((record, f)))
    for key, i in comps.index.items():
        if mask >> i & 1 and len(key) == 1:
            out.append((("s", schema.root_names.index(key[0])), 1 << i))
        elif mask >> i & 1 and len(key) == 2 and key[0] == "ext":
            out.append((("e", ext_index[key[1]]), 1 << i))
    return out


def _expression(path, group: int, ext: int) -> str:
    """Python source reading a path from a state ``s``."""
    kind = path[0]
    if kind == "b":
        return f"s[{group}][{path[1]}]" + ("" if path[2] is None else f"[{path[2]}]")
    if kind == "c":
        return f"s[{path[1]}]" + ("" if path[2] is None else f"[{path[2]}]")
    if kind == "s":
        return f"s[{path[1]}]"
    return f"s[{ext}][{path[1]}]"


def _getter(paths, group: int, ext: int):
    """A function state -> the tuple of the paths' values (compiled once: it runs on every look-up)."""
    return eval("lambda s: (" + "".join(_expression(p, group, ext) + ", " for p in paths) + ")")  # noqa: S307


class MemoisedEffect:
    """One action's effect, remembered by the components it reads; called like the effect: (model, state, *args)."""

    def __init__(self, effect, key_paths, write_paths, appended: set, read_back: tuple, schema):
        self.effect = effect
        g, ext = schema.group_index, len(schema.root_names) - 1
        self._group, self._ext = g, ext
        self._member_type = schema.member_type
        self._single_types = {i: schema.types[r] for r, i in zip(schema.singles, schema.single_index)}
        self._root_width = len(schema.root_names)
        self.key = _getter(key_paths, g, ext)
        self.written = _getter(write_paths, g, ext)
        self.write_paths = write_paths
        self.appended = tuple(p in appended for p in write_paths)
        # "Unchanged" may be kept only for a written component that is also in the key: for the others the new
        # value is kept (a component the effect overwrites without reading it, e.g. a queue it empties).
        self.read_back = read_back
        # What the run-time check of a miss compares (_unwritten_differ): per broker the field indices written
        # (None: the whole member), each singleton record's, the plain fields' and the extension fields'.
        self.member_fields: dict = {}
        for p in write_paths:
            if p[0] == "b":
                self.member_fields.setdefault(p[1], set()).add(p[2])
        self.single_fields = {i: {p[2] for p in write_paths if p[0] == "c" and p[1] == i} for i in self._single_types}
        self.top_fields = {p[1] for p in write_paths if p[0] == "s"} | {g, ext, *self._single_types}
        self.ext_fields = {p[1] for p in write_paths if p[0] == "e"}
        self.memo: dict = {}
        self.replays: dict = {}
        self.lookups = self.hits = 0
        self.direct = False       # hits too seldom, or the effect broke its declaration: run it directly

    def __call__(self, model, state, *args):
        if self.direct:
            return self.effect(model, state, *args)
        key = self.key(state)
        change = self.memo.get(key)
        self.lookups += 1
        if change is not None:
            self.hits += 1
            return self._apply(state, change)
        after = self.effect(model, state, *args)
        change = self._change(state, after)
        if change is None:
            self.direct = True
        else:
            if len(self.memo) >= LIMIT:
                self.memo.clear()
            self.memo[key] = change
            if self.lookups >= PROBATION and self.hits * 4 < self.lookups:
                self.direct = True
                self.memo.clear()
        return after

    def replay(self, state, run):
        """``run()``, a function of what the effect reads at ``state`` (e.g. the effect replayed with its
        controller state changes recorded), remembered by the same key as the effect."""
        key = self.key(state)
        value = self.replays.get(key)
        if value is None:
            if len(self.replays) >= LIMIT:
                self.replays.clear()
            value = self.replays[key] = run()
        return value

    def _change(self, state, after):
        """What the effect did to each written component (UNCHANGED, the new value, or an appended suffix), or
        None if it changed a component it does not declare or rewrote a queue it declares it only appends to."""
        if self._unwritten_differ(state, after):
            return None
        out = []
        for old, new, append, read in zip(self.written(state), self.written(after), self.appended, self.read_back):
            if read and (new is old or new == old):
                out.append(UNCHANGED)
            elif append:
                if new[:len(old)] != old:
                    return None
                out.append(new[len(old):])
            else:
                out.append(new)
        return tuple(out)

    def _unwritten_differ(self, state, after) -> bool:
        """Whether the effect changed a component outside its declared writes (whole members, the singleton
        records and the plain fields compared as units, a field-level declaration field by field)."""
        g = self._group
        for b, (old, new) in enumerate(zip(state[g], after[g])):
            if old is new:
                continue
            fields = self.member_fields.get(b)
            if fields is None:
                if old != new:
                    return True
            elif None not in fields and any(o != n for i, (o, n) in enumerate(zip(old, new)) if i not in fields):
                return True
        for ri, fields in self.single_fields.items():
            if None not in fields and after[ri] is not state[ri] and any(
                    o != n for i, (o, n) in enumerate(zip(state[ri], after[ri])) if i not in fields):
                return True
        if any(state[i] != after[i] for i in range(self._root_width) if i not in self.top_fields):
            return True
        return any(o != n for i, (o, n) in enumerate(zip(state.ext, after.ext)) if i not in self.ext_fields)

    def _apply(self, state, change):
        fields = rows = whole = singles = None
        for path, value, append in zip(self.write_paths, change, self.appended):
            if value is UNCHANGED:
                continue
            if fields is None:
                fields, rows, whole, singles = list(state), {}, {}, {}
            kind = path[0]
            if kind == "b":
                if path[2] is None:
                    whole[path[1]] = value
                else:
                    row = rows.get(path[1])
                    if row is None:
                        row = rows[path[1]] = list(state[self._group][path[1]])
                    row[path[2]] = row[path[2]] + value if append else value
            elif kind == "c":
                if path[2] is None:
                    singles[path[1]] = value
                else:
                    record = singles.get(path[1])
                    if record is None:
                        record = singles[path[1]] = list(state[path[1]])
                    record[path[2]] = value
            elif kind == "s":
                fields[path[1]] = value
            else:
                ext = list(fields[self._ext])
                ext[path[1]] = value
                fields[self._ext] = tuple(ext)
        if fields is None:
            return state
        if rows or whole:
            g = self._group
            members = list(state[g])
            for b, member in whole.items():
                members[b] = member
            member_type = self._member_type
            for b, row in rows.items():
                members[b] = tuple.__new__(member_type, row)
            fields[g] = tuple(members)
        for ri, record in singles.items():
            fields[ri] = record if type(record) is not list else tuple.__new__(self._single_types[ri], record)
        return tuple.__new__(type(state), fields)


# The rules whose effects are memoised: those of the kinds the model's features name (``Feature.memo_kinds``;
# the ZooKeeper controller's events and the environment's, model/zk/schema.py MEMO_KINDS, where the measurements
# are).


def memoised_effects(model, comps) -> list:
    """Per action of ``model.action_space``: its effect, memoised when its rule is of a kind in ``model.memo_kinds``
    and declares what it reads and writes (``comps``: the model's components, model/spec/footprint.py)."""
    out = []
    kinds = model.memo_kinds
    for _, rule, args in model.action_space:
        if rule.reads is None or rule.writes is None or rule.kind not in kinds:
            out.append(rule.effect)
            continue
        reads = comps.mask(rule.reads, rule.params, args)
        writes = comps.mask(rule.writes, rule.params, args)
        appends = writes & (comps.mask(rule.appends, rule.params, args) if rule.appends else 0)
        keyed = reads & ~appends
        # A component appended to is kept field by field (its suffix); the others as whole units where possible.
        set_paths = _paths(comps, writes & ~appends, model.ext_index)
        appended = [p for p, _ in _paths(comps, appends, model.ext_index)]
        write_paths = [p for p, _ in set_paths] + appended
        read_back = tuple(covers & keyed == covers for _, covers in set_paths) + (True,) * len(appended)
        key_paths = [p for p, _ in _paths(comps, keyed, model.ext_index)]
        out.append(MemoisedEffect(rule.effect, key_paths, write_paths, set(appended), read_back, model.schema))
    return out


def channels_written(model, comps, rule, args, channel: str) -> tuple[int, ...]:
    """The group members whose field ``channel`` the action may write, by its declared writes (every member when
    undeclared)."""
    if rule.writes is None:
        return tuple(range(comps.members))
    writes = comps.mask(rule.writes, rule.params, args)
    return tuple(b for b in range(comps.members) if writes & comps.bit((comps.word, b, channel)))
