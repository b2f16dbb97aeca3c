"""The model as a value: a design's features, assembled for one configuration (after Stateright's Model).

``Model(cfg, design=...)`` assembles a design for a configuration; ``plugins=`` adds users' features and
invariants. (The catalog above the model, explorer/catalog.py ``build_model(cfg)``, takes the design that
``cfg.variant`` names, with the invariants its features claim.) Nothing is registered
process-wide: every model owns its rules, invariants, hooks and caches, so models of different designs or
configurations coexist in one process.
"""
from __future__ import annotations

import inspect
from functools import partial
from types import SimpleNamespace
from typing import Iterator, NamedTuple

from model.spec.invariant import SAFETY_KINDS

from model.spec.errors import ConfigError
from model.spec.effect_memo import MemoisedEffect, channels_written, memoised_effects
from model.spec.footprint import Components
from model.spec.feature import Design
from model.spec.memo import by_args, by_value
from model.spec.rule import Rule
from model.spec.schema import Schema, digest
from model.spec.symmetry import IndexSymmetry


class Action(NamedTuple):
    rule: int          # index into Model.rules
    args: tuple
    settled: tuple = ()  # the members the eager rule (Model.eager_rule) was applied to after the step, in order

    __repr__ = tuple.__repr__


class ActionDisabled(ValueError):
    """An action whose guard fails in the state it is applied to."""


class Model:
    def __init__(self, cfg, symmetry: bool = False, *, design: Design | None = None, plugins=None,
                 invariants=None, memo_effects: bool = True):
        """invariants: the invariants this model is checked with (ids or Invariant values; default all of its
        features' and plugins'). Symmetry reduction is used when asked for, sound for the features in this
        configuration, and every checked invariant is declared symmetric (``symmetry_note`` says why not).
        memo_effects: the effects of rules that declare their footprint are remembered by what they read
        (model/spec/effect_memo.py; successors are the same without)."""
        if design is None:
            raise TypeError("Model needs its design (a Design value): build models of the built-in designs with "
                            "explorer.catalog.build_model")
        self.cfg = cfg
        self.design = design
        extra = tuple(plugins.features) if plugins is not None else ()
        self.plugin_features = extra
        catalog = self.design.extended(*extra) if extra else self.design
        self.features = tuple(catalog.included(cfg))
        self.feature_names = frozenset(f.name for f in self.features)
        self.rules: tuple[Rule, ...] = self._assemble_rules()
        included_rules = {r.name for r in self.rules}
        # Rules of the design's features that this configuration leaves out: reported as not in it.
        self.absent_rules = tuple(
            r.name for f in catalog.features if f not in self.features for r in f.rules if r.name not in included_rules
        )
        self.rule_index = {r.name: i for i, r in enumerate(self.rules)}
        # Every rule of the design, in order, whether this configuration includes its feature or not (reports).
        self.reported_rules = tuple(dict.fromkeys(
            [r.name for f in catalog.features for r in f.rules] + [r.name for r in self.rules]))
        self.hooks = SimpleNamespace(**{k: v for f in self.features for k, v in f.hooks.items()})
        # How the fields' views format their values (Feature.formats; a later feature's wins): reports only.
        self.formats = {k: v for f in self.features for k, v in f.formats.items()}
        self.all_invariants = tuple(i for f in self.features for i in catalog.claims_of(f)) + (
            tuple(plugins.invariants) if plugins is not None else ())
        self.invariants = self.select(invariants)
        self._options = self._resolve_options()
        self._memos: dict = {}
        # The rule applied eagerly after every step (model/spec/feature.py Eager), if the configuration asks for it.
        eager = [f.eager for f in self.features if f.eager is not None]
        self.eager = eager[-1] if eager and eager[-1].enabled(cfg) else None
        self.eager_rule = self.rule_index[self.eager.rule] if self.eager is not None else None
        self._eager_effect = self.rules[self.eager_rule].effect if self.eager is not None else None
        # Constants the features derive from the configuration (every feature of the design's: a rule may read
        # them while its feature is off).
        composed: list = []

        def compose(f) -> None:
            for needed in f.requires:
                compose(needed)
            if f not in composed:
                composed.append(f)

        for f in catalog.features:
            compose(f)
        for f in composed:
            for name, value in f.constants.items():
                setattr(self, name, value(self))
        self.memo_kinds = tuple(dict.fromkeys(k for f in self.features for k in f.memo_kinds))
        self.ext_fields = tuple(sf for f in self.features for sf in f.state_fields)
        self.ext_index = {sf.name: i for i, sf in enumerate(self.ext_fields)}
        # The state schema, composed over every feature of the design (model/spec/schema.py).
        declared = [(d, f.name) for f in composed for d in f.fields]
        owners: dict = {}
        for d, name in declared:
            owners.setdefault(id(d), name)
        self.schema = Schema(tuple(dict.fromkeys(d for d, _ in declared)), owners)
        self.State = self.schema.State
        self._init = self.schema.bind(
            self, tuple(sf.initial for sf in self.ext_fields),
            tuple(i for i, sf in enumerate(self.ext_fields) if sf.pending),
            [f.quiescent for f in self.features if f.quiescent is not None],
        )
        # Dedup by the fingerprint of a canonical representative when dir symmetry is sound (model/spec/symmetry.py).
        self.symmetry_note = self._symmetry_note() if symmetry else None
        self.symmetry = symmetry and self.symmetry_note is None
        self.dir_symmetry = IndexSymmetry(self.schema, self) if self.symmetry else None
        component_digest = self.cached(digest, limit=1 << 18)
        if self.symmetry:
            self.fingerprint = self.dir_symmetry.fingerprint_with(component_digest)
        else:
            self.fingerprint = self.schema.fingerprint_with(component_digest, component_digest)
        # (rule index, rule, argument tuple) for every action the configuration can ever take.
        self.action_space = tuple(
            (ri, r, args) for ri, r in enumerate(self.rules) for args in r.domain(self)
        )
        comps = Components.of(self)
        effects = memoised_effects(self, comps) if memo_effects else [r.effect for _, r, _ in self.action_space]
        self._space = tuple((ri, r.guard, effect, args) for (ri, r, args), effect in zip(self.action_space, effects))
        self._effect_of = {(ri, args): effect for (ri, _, args), effect in zip(self.action_space, effects)}
        # Per action: the members whose channel it may write, the only ones the eager rule can apply to after it
        # (in a reachable state of an eager model no channel is ready for it: docs/model.md 7); by its declared writes.
        self._settles = tuple(channels_written(self, comps, r, args, self.eager.channel) if self.eager else ()
                              for _, r, args in self.action_space)

    # ---- assembly ----------------------------------------------------------------------------------------
    def _assemble_rules(self) -> tuple[Rule, ...]:
        rules: list[Rule] = []
        for f in self.features:
            rules.extend(f.rules)
            for name, replacement in f.replaces.items():
                at = [i for i, r in enumerate(rules) if r.name == name]
                if not at:
                    raise ConfigError(f"feature {f.name} replaces rule {name}, which no earlier feature has")
                rules[at[0]] = replacement
        names = [r.name for r in rules]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ConfigError(f"rule(s) {', '.join(twice)} are added by two features")
        return tuple(rules)

    def _resolve_options(self) -> dict:
        declared = {o.name: o for f in self.features for o in f.options}
        given = dict(self.cfg.options)
        unknown = sorted(set(given) - set(declared))
        if unknown:
            known = ", ".join(sorted(declared)) or "none"
            raise ConfigError(f"unknown option(s) {', '.join(unknown)} (options of this model's features: {known})")
        values = {}
        for name, option in declared.items():
            value = given.get(name, option.default)
            why = option.check(value)
            if why is not None:
                raise ConfigError(f"option {name}: {why}")
            values[name] = value
        return values

    def select(self, ids=None) -> tuple:
        """The invariants named by ids (Invariant values pass through; all of the model's safety invariants when
        ids is empty or None: liveness properties are checked only when named, or by ``explore --liveness``); an
        unknown id raises KeyError with the unknown ids."""
        if not ids:
            return tuple(i for i in self.all_invariants if i.kind in SAFETY_KINDS)
        known = {i.id: i for i in self.all_invariants}
        unknown = [i for i in ids if isinstance(i, str) and i not in known]
        if unknown:
            raise KeyError(", ".join(unknown))
        return tuple(known[i] if isinstance(i, str) else i for i in ids)

    def _symmetry_note(self) -> str | None:
        """None when the dir symmetry reduction can be used, else why not (one line)."""
        for f in self.features:
            reason = f.dir_symmetry(self.cfg)
            if reason is not None:
                return reason
        asymmetric = [i.id for i in self.invariants if not i.symmetric]
        if asymmetric:
            where = self.schema.records[self.schema.group].doc_index if self.schema.group else "the state"
            return (f"invariant(s) {', '.join(asymmetric)} are not declared symmetric in {where}, so the "
                    f"reduction could hide a violation of them")
        return None

    # ---- what features and rules use -----------------------------------------------------------------------
    def cached(self, fn, limit: int = 1 << 16, bind: bool = False):
        """fn remembered by value (model/spec/memo.py) in this model's own cache. fn must be a pure function of its
        arguments and of this model's constants (its configuration and hooks; with ``bind`` it gets the model as
        its first argument): the key is what it reads, its arguments (the argument itself for a one-argument
        function), and a model with another configuration or design has other caches."""
        memo = self._memos.get(fn)
        if memo is None:
            target = partial(fn, self) if bind else fn
            one = len(inspect.signature(target).parameters) == 1
            memo = self._memos[fn] = (by_value if one else by_args)(target, limit)
        return memo

    def option(self, name: str):
        """The value of an option declared by one of this model's features (model/spec/feature.py Option)."""
        return self._options[name]

    def ext(self, state, name: str):
        """An extension state field's value."""
        return state.ext[self.ext_index[name]]

    def with_ext(self, state, **values):
        ext = list(state.ext)
        for name, value in values.items():
            ext[self.ext_index[name]] = value
        return state._replace(ext=tuple(ext))

    def crashed(self, member):
        """A group member after a crash (model/spec/schema.py Schema.crashed)."""
        return self.schema.crashed(member)

    def is_quiescent(self, state) -> bool:
        """No message in flight (the declared channels), no pending field set, and every feature's own
        condition."""
        return self.schema.is_quiescent(self, state)

    # ---- what engines use ---------------------------------------------------------------------------------
    def init_states(self) -> list:
        return [self._init]

    def successors(self, state) -> Iterator[tuple[Action, object]]:
        eager = self.eager is not None
        for (ri, guard, effect, args), inboxes in zip(self._space, self._settles):
            if guard(self, state, *args) is None:
                after = effect(self, state, *args)
                if eager:
                    after, settled = self.settle(after, inboxes)
                    yield Action(ri, args, settled), after
                else:
                    yield Action(ri, args), after

    def settle(self, state, members=None) -> tuple[object, tuple]:
        """Apply the eager rule to every member it is ready for, while it is (model/spec/feature.py Eager); to
        the given members only, in increasing order, when given (those whose channel the step wrote)."""
        settled = ()
        ready, effect, g = self.eager.ready, self._eager_effect, self.schema.group_index
        for b in range(len(state[g])) if members is None else members:
            while ready(state[g][b]):
                state = effect(self, state, b)
                settled += (b,)
        return state, settled

    def step(self, state, rule_name: str, args: tuple) -> tuple[Action, object]:
        """Take one action by name (replay, Hypothesis); raises ActionDisabled with the guard's reason."""
        ri = self.rule_index[rule_name]
        r = self.rules[ri]
        reason = r.guard(self, state, *args)
        if reason is not None:
            raise ActionDisabled(f"{r.label(args)} is not enabled: {reason}")
        after = r.effect(self, state, *args)
        if self.eager is not None:
            after, settled = self.settle(after)
            return Action(ri, args, settled), after
        return Action(ri, args), after

    def by_effect_key(self, action: Action, state, compute):
        """``compute()``, a function of what the action's effect reads at ``state`` (e.g. the effect replayed with
        its controller state changes recorded): remembered by the effect memo's key where the effect is memoised
        (model/spec/effect_memo.py), else computed."""
        effect = self._effect_of.get((action.rule, action.args))
        return effect.replay(state, compute) if isinstance(effect, MemoisedEffect) else compute()

    def label(self, action: Action) -> str:
        text = self.rules[action.rule].label(action.args)
        if action.settled:
            text += self.eager.label(action.settled)
        return text

    def rule(self, name: str) -> Rule:
        return self.rules[self.rule_index[name]]

    def has_feature(self, name: str) -> bool:
        return name in self.feature_names
