"""The state schema: records and fields that features declare, composed into one model's state types.

A state is a tuple of *root fields*: records (a group of members, one record each, e.g. the nodes of a
cluster; or a singleton record), plain fields, and last ``ext`` (the extension fields of model/spec/feature.py
``StateField``). Every feature declares the records and fields it brings (``Feature.fields``: ``Record`` and
``Field`` values); a model composes the fields of all the features of its design (included by its
configuration or not: a rule that reads a field of a switched-off feature sees its constant initial value), in
declaration order, a field with ``after=`` placed right after the field it names. Each record's type is a
NamedTuple made from its fields (``member.field``, ``record._replace(...)``), whose ``repr`` is the plain tuple
``repr``: the canonical encoding the fingerprint digests (docs/model.md, section 10).

A field's roles (what a crash, a failover, quiescence, the index symmetry and the readable state derive from):

- ``lifetime``: "durable" (a member's crash keeps it) or "volatile" (back to its initial value, or to
  ``crash_value``, when the member crashes or halts);
- ``channel``: a channel of messages between the singleton side and this member: emptied by ``without_channels``
  (a failover) and, while not empty, the state is not quiescent;
- ``pending``: a root field that, while it differs from its initial value, holds something in flight;
- ``index``: how the field is indexed by the member's interchangeable index (model/spec/symmetry.py): ""
  (not), "per-index" (a tuple, one value an index), "index-mask" (a bitmask of indices), "item-index-masks"
  (a tuple of bitmasks of indices);
- ``show``: how it reads in traces and state dumps (``Show``).
"""
from __future__ import annotations

import struct
import sys
from collections import namedtuple
from typing import Any, Callable, NamedTuple

import attrs
import xxhash

from model.spec.errors import ConfigError

INDEX_ROLES = ("", "per-index", "index-mask", "item-index-masks")
LIFETIMES = ("durable", "volatile")


class _Initial:
    """crash_value's default, "the initial value": one object, also after a field travels by pickle (Spark ships
    a design to its executors), so that ``is _INITIAL`` still recognises it there."""

    def __repr__(self) -> str:
        return "INITIAL"

    def __reduce__(self) -> str:
        return "_INITIAL"


_INITIAL = _Initial()


class Show(NamedTuple):
    """How a field reads in traces and JSON state dumps: under ``key``, formatted by the formatter named ``fmt``
    (one of the reports' own, or one a feature of the model declares: ``Feature.formats``); ``scope`` "top" (the
    record's own key), "partition" (one value per item, under the record's per-item entries) or "responses"
    (joined into one list); shown only when the model includes ``feature`` (None: the feature that declares the
    field; "" always)."""
    key: str
    fmt: str = "plain"
    scope: str = "top"
    feature: str | None = None


@attrs.frozen
class Field:
    """A field of a record (``record``: the root field that holds the record) or of the state itself
    (``record=""``). ``initial(model)``: its initial value (the model's configuration is ``model.cfg``)."""
    name: str
    record: str
    initial: Callable[[Any], Any]
    lifetime: str = "durable"
    crash_value: Any = _INITIAL
    channel: bool = False
    pending: bool = False
    index: str = ""
    show: Show | None = None
    after: str | None = None
    doc: str = ""

    def __attrs_post_init__(self):
        if self.lifetime not in LIFETIMES:
            raise ValueError(f"field {self.name}: lifetime {self.lifetime!r} is not one of {LIFETIMES}")
        if self.index not in INDEX_ROLES:
            raise ValueError(f"field {self.name}: index {self.index!r} is not one of {INDEX_ROLES}")


@attrs.frozen
class Record:
    """A record of the state, held by the root field ``name``: a group (``members(model)`` records, addressed in
    footprints as ``<member>[i].<field>``) or, with ``members`` None, a singleton (``<name>.<field>``)."""
    name: str
    type_name: str
    member: str | None = None
    members: Callable[[Any], int] | None = None
    after: str | None = None
    doc: str = ""
    doc_index: str = "its members' indices"     # what the index symmetry permutes, in words (its notes say it)


# ---- the record types ----------------------------------------------------------------------------------------
_TYPES: dict = {}


def record_type(type_name: str, names: tuple[str, ...], defaults: tuple = ()) -> type:
    """The NamedTuple type with these fields (one per composition: models of one design share it). Its ``repr``
    is the plain tuple ``repr``; it is reachable as an attribute of this module, so states pickle by reference
    (a process that builds the same model finds the same type)."""
    key = (type_name, names, defaults)
    cls = _TYPES.get(key)
    if cls is None:
        qualname = f"{type_name}_{xxhash.xxh3_64_hexdigest(repr(key).encode())[:10]}"
        cls = namedtuple(qualname, names, defaults=defaults or None, module=__name__)
        cls.__repr__ = tuple.__repr__
        setattr(sys.modules[__name__], qualname, cls)
        _TYPES[key] = cls
    return cls


def _ordered(entries, where: str) -> list:
    """Entries (with ``name`` and ``after``) in declaration order, each ``after=`` one right after its anchor."""
    out: list = []
    for e in entries:
        if e.name in (x.name for x in out):
            raise ConfigError(f"{where} {e.name} is declared twice")
        if e.after is None:
            out.append(e)
            continue
        at = [i for i, x in enumerate(out) if x.name == e.after]
        if not at:
            raise ConfigError(f"{where} {e.name} is declared after {e.after}, which no earlier declaration has")
        out.insert(at[0] + 1, e)
    return out


class Schema:
    """One model's composed state schema: the record types, the initial state, and what follows from the fields'
    roles (a crash, the loss of the channels, quiescence)."""

    def __init__(self, declared, owners: dict | None = None):
        """declared: the Record and Field values of the design's features, in order (owners: declaration ->
        the name of the feature that declares it, for ``Show.feature``)."""
        owners = owners or {}
        records = [d for d in declared if isinstance(d, Record)]
        fields = [d for d in declared if isinstance(d, Field)]
        record_names = {r.name for r in records}
        for f in fields:
            if f.record and f.record not in record_names:
                raise ConfigError(f"field {f.name} belongs to {f.record}, which no feature declares")
        root = _ordered([*records, *(f for f in fields if not f.record)], "state field")
        self.records = {r.name: r for r in records}
        self.fields = {r.name: tuple(_ordered([f for f in fields if f.record == r.name], f"{r.name} field"))
                       for r in records}
        self.root = tuple(root)
        self.root_names = tuple(e.name for e in root) + ("ext",)
        self.owner = {id(d): owners.get(id(d)) for d in declared}
        self.types = {r.name: record_type(r.type_name, tuple(f.name for f in self.fields[r.name])) for r in records}
        self.State = record_type("State", self.root_names, ((),))
        self.groups = tuple(r.name for r in root if isinstance(r, Record) and r.members is not None)
        self.singles = tuple(r.name for r in root if isinstance(r, Record) and r.members is None)
        if len(self.groups) > 1:
            raise ConfigError(f"the state has more than one group record ({', '.join(self.groups)})")
        self.group = self.groups[0] if self.groups else None
        self.member_word = self.records[self.group].member if self.group else None
        self.member_type = self.types.get(self.group)
        self.group_index = self.root_names.index(self.group) if self.group else None
        self.single_index = tuple(self.root_names.index(n) for n in self.singles)
        # The plain root fields (not records, not ext), in order; the fingerprint digests them as one tuple.
        self.plain = tuple(e.name for e in root if isinstance(e, Field))
        self.plain_from = len(self.groups) + len(self.singles)
        if tuple(self.root_names[:self.plain_from]) != self.groups + self.singles:
            raise ConfigError("the state's records must come before its plain fields")
        member_fields = self.fields.get(self.group, ())
        self.channels = tuple(i for i, f in enumerate(member_fields) if f.channel)
        self.pending = tuple(self.root_names.index(f.name) for f in root if isinstance(f, Field) and f.pending)
        self._crash_fields = tuple((i, f) for i, f in enumerate(member_fields) if f.lifetime == "volatile")
        self.crash_values = ()
        self.pending_ext = ()
        self.quiescent_checks = ()

    # ---- the readable views ---------------------------------------------------------------------------------
    def view(self, record: str | None) -> tuple:
        """(field name, Show) of a record (None: the state's plain fields), in order, for the fields that have a
        ``Show``; a Show's ``feature`` None becomes its declaring feature's name."""
        fields = self.fields[record] if record is not None else [e for e in self.root if isinstance(e, Field)]
        out = []
        for f in fields:
            if f.show is None:
                continue
            show = f.show
            if show.feature is None:
                show = show._replace(feature=self.owner.get(id(f)))
            out.append((f.name, show._replace(feature=show.feature or None)))
        return tuple(out)

    # ---- the initial state -------------------------------------------------------------------------------------
    def bind(self, model, ext_initial: tuple, pending_ext: tuple[int, ...], quiescent_checks) -> tuple:
        """The initial state of ``model``; also sets what a crash resets to and what quiescence checks."""
        values = []
        for entry in self.root:
            if isinstance(entry, Record):
                cls = self.types[entry.name]
                one = cls._make(f.initial(model) for f in self.fields[entry.name])
                values.append(one if entry.members is None else (one,) * entry.members(model))
            else:
                values.append(entry.initial(model))
        init = self.State._make((*values, tuple(ext_initial)))
        if self.group is not None:
            fresh = init[self.group_index][0] if init[self.group_index] else None
            self.crash_values = tuple(
                (i, fresh[i] if f.crash_value is _INITIAL else f.crash_value) for i, f in self._crash_fields)
        self.pending_ext = tuple((i, ext_initial[i]) for i in pending_ext)
        self.pending_values = tuple((i, init[i]) for i in self.pending)
        self.quiescent_checks = tuple(quiescent_checks)
        return init

    # ---- what the roles imply ------------------------------------------------------------------------------------
    def crashed(self, member):
        """What survives a member's crash or halt: its durable fields; the volatile ones are back to their initial
        value (or their ``crash_value``)."""
        values = list(member)
        for i, v in self.crash_values:
            values[i] = v
        return self.member_type._make(values)

    def without_channels(self, member):
        """The member with its channels emptied (a failover loses them)."""
        if not any(member[i] for i in self.channels):
            return member
        values = list(member)
        for i in self.channels:
            values[i] = ()
        return self.member_type._make(values)

    def is_quiescent(self, model, state) -> bool:
        """No message in any channel, no pending field away from its initial value, and every feature's own
        condition holds."""
        for i, initial in self.pending_values:
            if state[i] != initial:
                return False
        for i, initial in self.pending_ext:
            if state.ext[i] != initial:
                return False
        if self.group is not None:
            channels = self.channels
            for member in state[self.group_index]:
                for i in channels:
                    if member[i]:
                        return False
        return all(check(model, state) for check in self.quiescent_checks)

    # ---- the fingerprint -----------------------------------------------------------------------------------------
    def fingerprint_with(self, member_digest, other_digest):
        """state -> its fingerprint: xxh3-64 of the little-endian 64-bit digests of each group member, of each
        singleton record and of the tuple of the remaining root fields (ext included), in that order."""
        g, singles, rest = self.group_index, self.single_index, self.plain_from
        pack, h = struct.pack, xxhash.xxh3_64_intdigest
        if g == 0 and singles == (1,) and rest == 2:   # the common layout, without the loops
            def fingerprint(state):
                members = state[0]
                return h(pack(f"<{len(members) + 2}Q", *map(member_digest, members), other_digest(state[1]),
                              other_digest(state[2:])))
            return fingerprint

        def fingerprint(state):
            members = state[g] if g is not None else ()
            return h(pack(f"<{len(members) + len(singles) + 1}Q", *map(member_digest, members),
                          *(other_digest(state[i]) for i in singles), other_digest(state[rest:])))
        return fingerprint


def digest(value) -> int:
    """xxh3-64 of a value's plain tuple ``repr`` (UTF-8): stable across processes and machines."""
    return xxhash.xxh3_64_intdigest(repr(value).encode())


def replace_at(values: tuple, index: int, value) -> tuple:
    return values[:index] + (value,) + values[index + 1:]
