"""Symmetry reduction: the indices of a group member's indexed fields are interchangeable.

A feature says whether the reduction stays sound with it (``Feature.dir_symmetry``, None when it does), and each
invariant whether its verdict is the same on a whole orbit (``Invariant.symmetric``); the model uses the
reduction only when all do. The members themselves are not interchangeable.

Which member fields a permutation of the indices moves, and how, is read from the composed schema
(model/spec/schema.py ``Field.index``: "per-index" tuples, "index-mask" bitmasks, "item-index-masks" tuples of
bitmasks); the number of indices is the length of the first per-index field. The reduced search dedups states by
the fingerprint of a canonical representative: each member's indices sorted by the column of values they hold
in those fields, in declaration order. It explores the concrete state it met first, so traces stay real paths.

A model whose other components refer to members' indices (KRaft's controller names each broker's dir ids) provides
the hook ``permute_index_refs(model, state, orders) -> state``: the state with those references renamed as the
members' indices were permuted (``orders[b][i]``: member b's new index i was old index ``orders[b][i]``). Its
canonical form is then the members' canonical forms with the references renamed to match (ties between indices
equal in the member's own fields are not broken by the references: a state may have more than one canonical form,
which costs reduction, not soundness).
"""
from __future__ import annotations

from itertools import permutations


def _permute_mask(mask: int, order) -> int:
    return sum((mask >> d & 1) << i for i, d in enumerate(order))


class IndexSymmetry:
    """The index symmetry of a schema's group members: permutations, the canonical form and, with a model's
    caches, the fingerprint up to it."""

    def __init__(self, schema, model=None):
        fields = schema.fields[schema.group]
        self._make = schema.member_type._make
        self.group_index = schema.group_index
        self.per_index = tuple(i for i, f in enumerate(fields) if f.index == "per-index")
        self.masks = tuple(i for i, f in enumerate(fields) if f.index == "index-mask")
        self.item_masks = tuple(i for i, f in enumerate(fields) if f.index == "item-index-masks")
        self.indexed = tuple((i, f.index) for i, f in enumerate(fields) if f.index)
        self._fingerprint_with = schema.fingerprint_with
        self.model = model
        self.rewrite = getattr(model.hooks, "permute_index_refs", None) if model is not None else None
        if model is not None:
            from model.spec.schema import digest

            self.canonical_order = model.cached(self.canonical_order)
            self.canonical_member = model.cached(self.canonical_member)
            canonical = self.canonical_member
            # A member's digest up to the symmetry, remembered by the concrete member's value.
            self.canonical_digest = model.cached(lambda member: digest(canonical(member)), limit=1 << 18)

    def size(self, member) -> int:
        return len(member[self.per_index[0]])

    def permute(self, member, order):
        """The member with new index i being old index order[i], in every indexed field."""
        values = list(member)
        for i in self.per_index:
            values[i] = tuple(member[i][d] for d in order)
        for i in self.masks:
            values[i] = _permute_mask(member[i], order)
        for i in self.item_masks:
            values[i] = tuple(_permute_mask(m, order) for m in member[i])
        return self._make(values)

    def _column(self, member, d: int) -> tuple:
        """What index d holds, in declaration order of the indexed fields."""
        out = []
        for i, role in self.indexed:
            if role == "per-index":
                out.append(member[i][d])
            elif role == "index-mask":
                out.append(member[i] >> d & 1)
            else:
                out.append(tuple(m >> d & 1 for m in member[i]))
        return tuple(out)

    def canonical_order(self, member) -> tuple:
        return tuple(sorted(range(self.size(member)), key=lambda d: self._column(member, d)))

    def canonical_member(self, member):
        order = self.canonical_order(member)
        if order == tuple(range(len(order))):
            return member
        return self.permute(member, order)

    def permute_state(self, state, orders):
        """Every member's indices permuted by its order, and (``permute_index_refs``) the references to them."""
        state = self._with_members(state, [self.permute(b, o) for b, o in zip(state[self.group_index], orders)])
        return state if self.rewrite is None else self.rewrite(self.model, state, orders)

    def _with_members(self, state, members):
        values = list(state)
        values[self.group_index] = tuple(members)
        return type(state)._make(values)

    def canonical(self, state):
        members = state[self.group_index]
        canonical = self._with_members(state, map(self.canonical_member, members))
        if self.rewrite is None:
            return canonical
        return self.rewrite(self.model, canonical, tuple(map(self.canonical_order, members)))

    def orbit(self, state) -> set:
        """Every state reachable from this one by permuting each member's indices (for checks on small models)."""
        out = [()]
        for b in state[self.group_index]:
            out = [prefix + (order,) for prefix in out for order in permutations(range(self.size(b)))]
        return {self.permute_state(state, orders) for orders in out}

    def canonical_fingerprint(self, state) -> int:
        """The fingerprint of canonical(state), uncached (a model's search uses its own cached form)."""
        from model.spec.schema import digest

        if self.rewrite is not None:
            return self._fingerprint_with(digest, digest)(self.canonical(state))
        return self._fingerprint_with(lambda member: digest(self.canonical_member(member)), digest)(state)

    def fingerprint_with(self, other_digest):
        """The fingerprint of canonical(state), the other components digested by ``other_digest``."""
        if self.rewrite is not None:
            plain = self._fingerprint_with(other_digest, other_digest)
            return lambda state: plain(self.canonical(state))
        return self._fingerprint_with(self.canonical_digest, other_digest)


DirSymmetry = IndexSymmetry   # its name when it was the brokers' log dirs' only (docs/model.md, section 10)
