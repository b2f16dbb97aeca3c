"""Features and designs: how a model is assembled.

A ``Feature`` is one protocol concern in one module: the rules it adds (guard + effect, in order), the
invariants it claims, the named procedures (*hooks*) it provides or overrides, the rules it replaces, its
options and presets, the records and fields it brings to the state schema (model/spec/schema.py) and its
extension state fields, the constants it derives from the configuration, the rule it applies eagerly after
every step (``Eager``), and what it does to dir symmetry. A ``Design`` is an ordered
set of features (KIP-112 as adopted, KIP-112 without its isNewReplica check, ...), as a TLA+ module ``EXTENDS`` a base and
redefines an action. ``model.Model`` turns a design and a configuration into a model value; nothing is
registered process-wide, so several models (of different designs) coexist in one process.

A feature is *included* in a model when its ``enabled(cfg)`` says so (its switch, e.g. ``--saturation``) or
when an included feature ``requires`` it. Rules of a design's features that the configuration leaves out are
still reported (with no action: ``rules_not_in_configuration``), so the report lists the same rules for every
configuration of a design.
"""
from __future__ import annotations

from typing import Any, Callable

import attrs

from model.spec.footprint import check_declaration
from model.spec.rule import Rule


def always(cfg) -> bool:
    return True


@attrs.frozen
class Option:
    """A configuration value that a feature brings (``cfg.options``; ``--option NAME=VALUE`` on the CLI, an
    ``"options"`` object in scenario files and presets). The built-in features' options are ModelConfig fields
    (listed in ``Feature.config_fields``); an option is for a feature added from outside, e.g. by a plugin."""
    name: str
    default: Any
    help: str
    check: Callable[[Any], "str | None"] = lambda value: None  # None when the value is acceptable, else why not
    # The reports name the option with the model's bounds when it is not at its default (a bug switch: what was
    # checked is another protocol).
    in_bounds: bool = False
    # (model) -> value: the reports always name the option with the bounds, with this value (what the model runs:
    # KRaft's release and whether ELR is on, default or not).
    shown: Callable[[Any], Any] | None = None


@attrs.frozen
class Flag:
    """A command-line flag for a ModelConfig field that a feature owns (explorer/cli/options.py builds the option)."""
    field: str
    decl: str                 # "--saturation/--no-saturation" (a switch) or "--dir-capacity"
    help: str
    type: str = "switch"      # "switch", "int", "per-partition" (N or N,N,...), "choice" or "text"
    choices: tuple = ()
    metavar: str | None = None


@attrs.frozen
class StateField:
    """An extension state component a feature adds (``State.ext``): immutable, hashable, its initial value given.
    ``pending``: a value other than the initial one means something is in flight (the state is not quiescent)."""
    name: str
    initial: Any
    doc: str
    pending: bool = False


@attrs.frozen
class Eager:
    """A rule applied eagerly after every step, while it is ready, to each member whose ``channel`` the step may
    write (in increasing order): its firings are recorded in the step's ``Action.settled`` and counted under the
    rule (``Model.eager_rule``). ``ready(member)``: whether the rule applies to the member now (its guard's
    condition, fast); ``touches``: the member fields the eager firings read and write (the step's footprint
    grows by them); ``enabled(cfg)``: whether the configuration asks for it; ``label(members)``: what a step's
    label says of its settled members."""
    rule: str
    channel: str
    ready: Callable[[Any], bool]
    touches: tuple[str, ...]
    enabled: Callable[[Any], bool] = always
    label: Callable[[tuple], str] = lambda members: " + " + ", ".join(map(str, members))


@attrs.define(eq=False)
class Feature:
    name: str
    summary: str
    enabled: Callable[[Any], bool] = always
    requires: tuple = ()
    # ModelConfig fields this feature owns (documentation, `jbodcheck presets`) and its click option decorators.
    config_fields: tuple[str, ...] = ()
    flags: tuple[Flag, ...] = ()
    options: tuple[Option, ...] = ()
    state_fields: tuple[StateField, ...] = ()
    # The records and fields it brings to the state schema (model/spec/schema.py Record, Field), and the model
    # constants it derives from the configuration (name -> function of the model, set as model attributes).
    fields: tuple = ()
    constants: dict = attrs.field(factory=dict)
    # A rule applied eagerly after every step (Eager), if any.
    eager: Eager | None = None
    # The kinds of rules whose effects the model memoises (model/spec/effect_memo.py): the heavy effects that
    # recur across states.
    memo_kinds: tuple[str, ...] = ()
    presets: dict = attrs.field(factory=dict)          # name -> (description, model parameters)
    hooks: dict = attrs.field(factory=dict)            # name -> procedure (a later feature's wins)
    rules: list = attrs.field(factory=list)            # Rule, in the order the engines enumerate them
    replaces: dict = attrs.field(factory=dict)         # rule name -> Rule that takes its place
    invariants: list = attrs.field(factory=list)
    # None when dir symmetry stays sound with this feature in cfg, else a one-line reason why it does not.
    dir_symmetry: Callable[[Any], "str | None"] = lambda cfg: None
    # Extra quiescence conditions (model, state) -> bool, beyond the declared channels and pending fields.
    quiescent: Callable | None = None
    # (model, state) -> dict: how the feature's extension state fields read in traces and JSON state dumps.
    render: Callable | None = None
    # name -> formatter (model, value) -> JSON-ready value: the formatters its fields' views name (Show.fmt), for
    # the models that include the feature; one with the name of a report's built-in formatter takes its place in
    # those models (the readable state, explorer/reports/render.py; never called by a search).
    formats: dict = attrs.field(factory=dict)

    def rule(self, name: str, *, params: tuple[str, ...], domain, guard, reference: str, kind: str,
             replaces: str | None = None, fair: bool | None = None, reads=None, writes=None, guard_reads=None,
             needs_message: bool = False, spends: int | None = None, footprint_at=None, appends=None):
        """Add the decorated effect function as a rule of this feature (or, with ``replaces``, as the rule that
        takes an earlier feature's rule's place); its docstring is the rule's description. ``fair``: weakly fair
        (model/spec/rule.py; default by kind: environment and client rules are not). ``reads``, ``writes`` and
        ``guard_reads``: the state components it reads and writes (model/spec/footprint.py; none: everything);
        ``needs_message``, ``spends``, ``footprint_at``: what partial-order reduction may use (model/spec/rule.py);
        ``appends``: the queues among ``writes`` it only appends to (the effect memo, model/spec/effect_memo.py)."""
        for declared in (reads, writes, guard_reads, appends):
            if declared is not None:
                check_declaration(declared, params)

        def add(effect):
            extra = {} if fair is None else {"fair": fair}
            extra.update(reads=None if reads is None else tuple(reads), writes=None if writes is None else tuple(writes),
                         guard_reads=None if guard_reads is None else tuple(guard_reads),
                         needs_message=needs_message, spends=spends, footprint_at=footprint_at,
                         appends=None if appends is None else tuple(appends))
            r = Rule(name, params, domain, guard, effect, reference, " ".join((effect.__doc__ or "").split()), kind,
                     **extra)
            if replaces is None:
                self.rules.append(r)
            else:
                self.replaces[replaces] = r
            return effect
        return add

    def add_invariants(self, *invariants) -> "Feature":
        """Claim invariants (``invariants.Invariant`` values, or checks decorated with ``@invariant``)."""
        for inv in invariants:
            self.invariants.append(getattr(inv, "invariant", inv))
        return self

    def __repr__(self) -> str:
        return f"Feature({self.name!r})"


@attrs.frozen
class Design:
    """A protocol design: an ordered set of features, and the invariants it claims for them (``claims``: feature
    name -> invariants, checked on a model that includes that feature, after the feature's own)."""
    name: str
    summary: str
    features: tuple[Feature, ...]
    claims: dict = attrs.field(factory=dict, kw_only=True)

    def extended(self, *features: Feature, name: str | None = None, summary: str | None = None) -> "Design":
        """This design with more features (after its own)."""
        return Design(name or self.name, summary or self.summary, self.features + tuple(features),
                      claims=self.claims)

    def claiming(self, claims: dict) -> "Design":
        """This design with ``claims`` (feature name -> invariants) added to its own."""
        merged = dict(self.claims)
        for name, invs in claims.items():
            merged[name] = tuple(merged.get(name, ())) + tuple(getattr(i, "invariant", i) for i in invs)
        return attrs.evolve(self, claims=merged)

    def claims_of(self, feature: Feature) -> tuple:
        """The invariants checked on a model that includes ``feature``: its own, then the design's claims for it."""
        return tuple(feature.invariants) + tuple(self.claims.get(feature.name, ()))

    def included(self, cfg) -> list[Feature]:
        """The features a configuration includes (enabled, or required by an included one), in the design's
        order; a required feature the design does not list comes just before the first feature requiring it."""
        wanted: set = set()

        def want(f: Feature) -> None:
            if f not in wanted:
                wanted.add(f)
                for needed in f.requires:
                    want(needed)

        for f in self.features:
            if f.enabled(cfg):
                want(f)
        out: list[Feature] = []

        def place(f: Feature) -> None:
            for needed in f.requires:
                if needed not in self.features and needed not in out:
                    place(needed)
            out.append(f)

        for f in self.features:
            if f in wanted:
                place(f)
        return out
