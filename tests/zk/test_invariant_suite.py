"""The invariant suite (``pytest -m invariants``): every preset under every variant, exhausted by BFS, with the
expected outcome: KIP-112 clean, KIP-112 without its isNewReplica check
(kip112-no-isnew-check, formerly legacy) caught re-creating a lost replica.

Items are generated from the models: one per (preset, variant) for the search as a whole, and one per
(preset, variant, invariant) for every invariant the configuration's model checks (those of its features),
plugins included (JBODCHECK_PLUGINS, loaded by conftest.py before collection: helpers.PLUGINS). A failing item prints the counterexample as the explorer does.

Profiles (docs/testing.md): ``ci`` exhausts tiny under every variant (with every violation reported) and checks
that small-kip112-no-isnew-check is caught; ``thorough`` exhausts every preset, medium included, under every variant.
Besides the variants, the suite runs kip112 with unclean leader election, which must lose acknowledged data.
The feature presets run under kip112 only (the reassignment preset is expected to find its race).
"""
from __future__ import annotations

import functools

import pytest

from explorer.reports.render import trace_text
from explorer.search import SearchOptions, bfs
from model import VARIANTS, Model
from explorer.catalog import PRESETS, preset_config

from support import helpers
from support.profiles import THOROUGH
from explorer.catalog import build_model, builtin_invariants

pytestmark = pytest.mark.invariants

_DATA_LOSS = {"no_acked_record_lost", "consumer_sees_no_loss_or_duplicate", "reads_below_hw_are_committed"}
# setting -> the invariants that must be violated under it (every other registered invariant must hold).
EXPECTED = {
    "kip112": frozenset(),
    # KIP-112 without the isNewReplica check (its old name, legacy, is the same design: tests/zk/test_designs.py).
    "kip112-no-isnew-check": frozenset({"no_recreate_with_bad_dir"} | _DATA_LOSS),
    "unclean": frozenset(_DATA_LOSS),
    # KIP-112's draft (docs/model.md 12.1): kafka-log-dirs.sh run too early re-creates a replica whose log is on an
    # offline dir (and can then lose the acknowledged record); forgotten, a replaced disk's replica is refused.
    "kip112-draft": frozenset({"no_recreate_over_offline_copy", "refusal_only_for_a_lost_copy"} | _DATA_LOSS),
    # KIP-18 (docs/model.md 12.2): its broker re-creates a dropped replica on a good dir, as kip112-no-isnew-check does.
    "kip18": frozenset({"no_recreate_with_bad_dir", "isr_logs_agree_below_hw"} | _DATA_LOSS),
    # KIP-46 (docs/model.md 13.3): a broker failure no controller saw is never healed; its broker halts on a dir
    # failure, and one that halted as the last ISR member restarts on a replaced disk and leads an empty log.
    "kip46": frozenset({"dead_broker_is_scheduled_for_healing"} | _DATA_LOSS),
    # The broker before KIP-112 (docs/model.md 13.5) halts on a dir failure: one that halted as the last ISR member
    # restarts on a replaced disk and leads an empty log (as KIP-46's; KIP-112 needs a second crash for it).
    "pre-kip112": frozenset(_DATA_LOSS),
    # KRaft mode (docs/kraft.md, finding 1): a replica whose assignment a crash lost is re-created over its failed
    # dir (its presets' expectations are their own: PRESET_EXPECTED_ONLY).
    "kraft": frozenset({"no_recreate_over_offline_copy"}),
}
# setting -> model parameters over the preset's.
SETTINGS = {"kip112": {}, "kip112-no-isnew-check": {"variant": "kip112-no-isnew-check"},
            "unclean": {"unclean_election": True},
            "kip112-draft": {"variant": "kip112-draft"}, "kip18": {"variant": "kip18"}, "kip46": {"variant": "kip46"},
            "pre-kip112": {"variant": "pre-kip112"}, "kraft": {"variant": "kraft"}}
# Exhausted with every violation reported even in the ci profile (seconds each); tiny-unclean is checked to
# lose data (BFS to the first violation) and exhausted in the thorough profile.
CI_EXHAUSTIVE = {("tiny", "kip112"), ("tiny", "kip112-no-isnew-check"), ("tiny", "pre-kip112"),
                 ("kraft-future", "kraft")}   # kraft-tiny-faults (90 s): the thorough profile, docs/testing.md
# Variants whose first violation lies deep (pre-kip112: the replaced-disk loss, 15 steps and 809,345 states on
# small, about a minute): caught on tiny in the ci profile (exhaustive), on the larger presets in the thorough one.
DEEP_FIRST_VIOLATION = {"pre-kip112"}

# The feature presets run under kip112 only; the reassignment-race preset finds
# the completion race of docs/model.md 11.1 (finding 4), which also loses the acknowledged record, and the
# reassignment-deletion preset a copy that outlives its topic's deletion (finding 8).
FEATURE_PRESETS = ("saturation", "deletion", "reassignment", "reassignment-race", "reassignment-deletion",
                   "reassignment-saturation")
PRESET_EXPECTED = {
    "reassignment-race": frozenset({"reassignment_keeps_an_in_sync_copy", "no_acked_record_lost",
                               "reads_below_hw_are_committed"}),
    # docs/model.md 11.1, finding 8: the reassignment's completion counts the old replica deleted without waiting
    # for its StopReplica answer, and the topic's deletion completes while that copy still exists.
    "reassignment-deletion": frozenset({"deleted_replica_holds_no_data"}),
}

# The design presets run under their design only: kip18-lost-update finds KIP-18's lost /restart_partitions
# update (docs/model.md 12.2), a partition never restarted (exhausted in the thorough profile: minutes).
DESIGN_PRESETS = {"kip18-lost-update": "kip18", "kip46-heal": "kip46", "kraft-tiny-faults": "kraft", "kraft-tiny": "kraft",
                  "kraft-mv-upgrade": "kraft", "kraft-heartbeat": "kraft", "kraft-session-expiry": "kraft",
                  "kraft-future": "kraft", "kraft-controlled-shutdown": "kraft",
                  "kraft-controlled-shutdown-data": "kraft",
                  "kraft-small": "kraft"}
DESIGN_PRESETS.update({"kraft-deletion": "kraft", "kraft-reassignment": "kraft", "kraft-reassignment-move": "kraft"})
DESIGN_PRESETS["kraft-saturation"] = "kraft"
DESIGN_PRESETS["kraft-elr"] = "kraft"
PRESET_EXPECTED["kip18-lost-update"] = frozenset({"offline_replicas_are_known", "metadata_shows_offline_replicas",
                                                  "leader_is_live_isr_member"})

CONFIGS = [(preset, setting) for preset in PRESETS for setting in SETTINGS
           if (DESIGN_PRESETS[preset] == setting if preset in DESIGN_PRESETS
               else setting != "kraft" and (setting == "kip112" or preset not in FEATURE_PRESETS))]


# Presets whose expected violations are theirs alone (not their variant's as well): kip46-heal (docs/model.md 13.3)
# has no disk repair, so the halted broker never comes back on an empty disk to lose the record; only a topic
# created on a broker after its timer fired is never healed (exhausted in the thorough profile: two minutes).
PRESET_EXPECTED_ONLY = {"kip46-heal": frozenset({"dead_broker_is_scheduled_for_healing"}),
                        # KRaft (docs/kraft.md): finding 1 needs two faults, which kraft-tiny does not allow.
                        "kraft-tiny-faults": frozenset({"no_recreate_over_offline_copy"}),
                        "kraft-tiny": frozenset(),
                        # docs/kraft.md, "Presets": kraft-elr exhausted at 4.4 holds every invariant (about five
                        # minutes: the thorough profile)
                        "kraft-elr": frozenset(),
                        # docs/kraft.md: finding 1 on kraft-deletion, finding 6 on the reassignment presets, and
                        # kraft-core's quiescent invariants: on kraft-deletion (RF 1, a crash and a dir failure) the
                        # unfencing heartbeat elects broker 0 by the image before its own handleDirectoriesOffline;
                        # finding 6's UNASSIGNED entry hides the added replica's failed dir (not shown offline; a
                        # moved leader stays on it).
                        "kraft-deletion": frozenset({"no_recreate_over_offline_copy", "leader_is_live_isr_member"}),
                        "kraft-reassignment": frozenset({"kraft_directories_match_actual_dir",
                                                         "metadata_shows_offline_replicas"}),
                        "kraft-reassignment-move": frozenset({"kraft_directories_match_actual_dir",
                                                              "metadata_shows_offline_replicas",
                                                              "leader_is_live_isr_member"}),
                        # The metadata.version upgrade (docs/kraft.md): LeaderAcceptor's leadership holds without
                        # the bug switches; a replica created before the upgrade keeps MIGRATING (finding 7).
                        "kraft-mv-upgrade": frozenset({"kraft_directories_match_actual_dir"}),
                        # kraft-shutdown (docs/kraft.md "Controlled shutdown"): a stop on the timeout after a dir
                        # failure, then finding 1; with the record and no fault the data path's properties hold.
                        "kraft-controlled-shutdown": frozenset({"no_recreate_over_offline_copy"}),
                        "kraft-controlled-shutdown-data": frozenset(),
                        # kraft-sessions (docs/kraft.md): the dir failure timeout stops a broker, finding 1 follows.
                        "kraft-heartbeat": frozenset({"no_recreate_over_offline_copy"}),
                        "kraft-session-expiry": frozenset({"no_recreate_over_offline_copy"}),
                        # docs/kraft.md "Future replicas" and "Findings": findings 1 to 3 and what they lead to at
                        # quiescence, and finding 8 (a single-replica partition left leaderless with its data on a
                        # healthy dir: no_leaderless_partition_with_live_isr_copy, 14 steps).
                        "kraft-future": frozenset({"no_recreate_over_offline_copy", "kraft_directories_name_the_log_dir",
                                                   "kraft_leader_passes_leader_acceptor", "leader_is_live_isr_member",
                                                   "metadata_shows_offline_replicas",
                                                   "kraft_directories_match_actual_dir",
                                                   "no_leaderless_partition_with_live_isr_copy",
                                                   # at 4.4: a leader outside an empty ISR (docs/kraft.md,
                                                   # "Future replicas": finding 3 with ELR)
                                                   "kraft_elr_well_formed"}),
                        # finding 1 with RF 1 (exhausted in the thorough profile: minutes), and leader_is_live_isr_member:
                        # the unfencing heartbeat elects a broker by the image before its own handleDirectoriesOffline
                        # (as on kraft-deletion; integ's exhaustive run finds it too).
                        "kraft-small": frozenset({"no_recreate_over_offline_copy", "leader_is_live_isr_member"})}
# KIP-928 on KRaft (docs/kraft.md "KIP-928 saturation on KRaft"): RF 2, no dir failure: every property holds.
PRESET_EXPECTED_ONLY["kraft-saturation"] = frozenset()


def expected_of(preset: str, variant: str) -> frozenset:
    if preset in PRESET_EXPECTED_ONLY:
        return PRESET_EXPECTED_ONLY[preset]
    return EXPECTED[variant] | PRESET_EXPECTED.get(preset, frozenset())


def exhaustive(preset: str, variant: str) -> bool:
    return THOROUGH or (preset, variant) in CI_EXHAUSTIVE


def model_of(preset: str, variant: str) -> Model:
    """The configuration's model, with the plugins' invariants and features (no symmetry reduction)."""
    return build_model(preset_config(preset, **SETTINGS[variant]), plugins=helpers.PLUGINS)


@functools.cache
def exhaust(preset: str, variant: str):
    """BFS over the whole state space with every invariant of the model, reporting every violated one."""
    model = model_of(preset, variant)
    return model, bfs(model, model.invariants, SearchOptions(all_violations=True))


def first_violation(preset: str, variant: str):
    """BFS stopping at the first violation (cheap for a variant that is expected to be caught)."""
    model = model_of(preset, variant)
    return model, bfs(model, model.invariants, SearchOptions())


def explain(model, violation) -> str:
    return (f"{violation.invariant.id}: {violation.message}\n"
            f"Trace ({len(violation.trace) - 1} steps):\n{trace_text(model, violation.trace)}")


def test_every_variant_has_an_expected_outcome():
    assert set(VARIANTS) <= set(EXPECTED) == set(SETTINGS), "add the new variant's expected violations to EXPECTED"
    known = {i.id for i in builtin_invariants()}
    for variant, ids in EXPECTED.items():
        assert ids <= known, f"{variant}: unknown invariants {sorted(ids - known)}"


@pytest.mark.parametrize("preset, variant", CONFIGS, ids=[f"{p}-{v}" for p, v in CONFIGS])
@pytest.mark.long_run(ids=["medium-kip112-draft", "small-unclean"])
def test_preset_outcome(preset, variant):
    """The search ends (no bound) and finds exactly the expected violations."""
    expected = expected_of(preset, variant)
    if not exhaustive(preset, variant):
        if not expected:
            pytest.skip(f"{preset}-{variant} is exhausted only in the thorough profile (JBODCHECK_PROFILE=thorough)")
        if variant in DEEP_FIRST_VIOLATION and not THOROUGH:
            pytest.skip(f"{preset}-{variant}'s first violation is deep: the thorough profile (tiny is the ci check)")
        if preset == "medium" and variant == "unclean" and not THOROUGH:
            pytest.skip("medium-unclean is checked in the thorough profile (small-unclean is the ci check)")
        model, result = first_violation(preset, variant)
        assert result.violations, f"{preset}-{variant}: no violation found, expected one of {sorted(expected)}"
        v = result.violations[0]
        assert v.invariant.id in expected, f"unexpected violation of {explain(model, v)}"
        return
    model, result = exhaust(preset, variant)
    assert result.result != "bounded"
    found = {v.invariant.id: v for v in result.violations}
    unexpected = [found[i] for i in found if i not in expected]
    assert not unexpected, "unexpected violation of " + "\n\n".join(explain(model, v) for v in unexpected)
    assert set(found) == expected, f"{preset}-{variant}: expected violations {sorted(expected)}, found {sorted(found)}"
    if not expected:
        assert result.result == "ok"


def _invariant_items():
    return [pytest.param(p, v, i.id, id=f"{p}-{v}-{i.id}") for p, v in CONFIGS
            for i in build_model(preset_config(p, **SETTINGS[v]), plugins=helpers.PLUGINS).invariants]


@pytest.mark.parametrize("preset, variant, invariant_id", _invariant_items())
def test_invariant(preset, variant, invariant_id):
    """One item per invariant of the configuration's model: it holds on every reachable state and step, or (for the variants
    known to break it) is caught."""
    if not exhaustive(preset, variant):
        pytest.skip(f"{preset}-{variant} is exhausted only in the thorough profile (JBODCHECK_PROFILE=thorough)")
    model, result = exhaust(preset, variant)
    found = {v.invariant.id: v for v in result.violations}
    if invariant_id in expected_of(preset, variant):
        assert invariant_id in found, f"{preset}-{variant}: {invariant_id} was expected to be violated, it holds"
        trace = found[invariant_id].trace
        assert trace[0][0] is None and len(trace) > 1
    else:
        assert invariant_id not in found, "violation of " + explain(model, found[invariant_id])
