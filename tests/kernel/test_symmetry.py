"""Dir symmetry: the canonical form, where it is used, and that the reduced search finds exactly the classes
of the reachable states (checked against a plain search of the same model)."""
from __future__ import annotations

import pytest

from model import ModelConfig
from explorer.catalog import preset_config
from model.storage.state import GOOD, OFFLINE, fingerprint
from model.spec.symmetry import IndexSymmetry

from support.helpers import bfs_states, created_topic, deliver_all, step
from explorer.catalog import build_model


def dir_symmetry_sound(cfg) -> bool:
    return build_model(cfg, symmetry=True).symmetry


@pytest.mark.parametrize("params", [
    dict(brokers=2, dirs=2, partitions=1, rf=2, max_faults=1),
    dict(brokers=2, dirs=2, partitions=2, rf=1, max_faults=1),
    dict(brokers=2, dirs=2, partitions=2, rf=2, max_faults=1, max_records=0, max_failovers=0),
    dict(brokers=2, dirs=3, partitions=1, rf=2, max_faults=1, max_saturations=0),
], ids=["1-partition", "2-partitions-rf1", "2-partitions-rf2", "3-dirs"])
def test_reduced_search_finds_exactly_the_classes_of_the_reachable_states(params):
    plain = build_model(ModelConfig(**params))
    reduced = build_model(ModelConfig(**params), symmetry=True)
    assert reduced.symmetry
    states = bfs_states(plain, fingerprint)
    sym = IndexSymmetry(plain.schema)
    canonical_fingerprint, orbit = sym.canonical_fingerprint, sym.orbit
    classes = {canonical_fingerprint(s) for s in states.values()}
    # The reduced search: dedup by model.fingerprint, expanding the first concrete state met in each class.
    assert len(bfs_states(reduced, reduced.fingerprint)) == len(classes)
    assert len(classes) < len(states), "the reduction merges some states"
    # Every class is a union of real orbits' members: each member's orbit lands in one class.
    some = list(states.values())[:200]
    for s in some:
        assert {canonical_fingerprint(t) for t in orbit(s)} == {canonical_fingerprint(s)}


def test_canonical_form_sorts_each_brokers_dirs_and_moves_the_logs_with_them():
    m = build_model(preset_config("tiny"), symmetry=True)
    s = created_topic(m)
    sym = IndexSymmetry(m.schema)
    canonical, permute_dirs = sym.canonical, sym.permute
    b0 = s.brokers[0]
    assert b0.copies == (0b01,)
    swapped = s._replace(brokers=(permute_dirs(b0, (1, 0)),) + s.brokers[1:])
    assert swapped.brokers[0].copies == (0b10,)
    assert canonical(swapped) == canonical(s)
    assert m.fingerprint(swapped) == m.fingerprint(s)
    assert fingerprint(swapped) != fingerprint(s)


def test_states_that_differ_by_more_than_a_dir_swap_stay_apart():
    """The dir that holds the log failing and the empty dir failing are not a dir swap of each other: the
    reduction must keep them apart (and apart from the healthy state), with or without the controller's
    reaction."""
    m = build_model(preset_config("tiny"), symmetry=True)
    assert m.symmetry
    permute_dirs = IndexSymmetry(m.schema).permute
    s = created_topic(m)
    assert s.brokers[0].copies == (0b01,)
    log_dir_failed = step(m, s, "DirFail", 0, 0)
    empty_dir_failed = step(m, s, "DirFail", 0, 1)
    assert log_dir_failed.brokers[0].dirs == (OFFLINE, GOOD) and log_dir_failed.brokers[0].copies == (0b01,)
    assert empty_dir_failed.brokers[0].dirs == (GOOD, OFFLINE) and empty_dir_failed.brokers[0].copies == (0b01,)
    # Swapping the dirs of one does not give the other (the log would sit on the offline dir, or on the good one).
    swapped = empty_dir_failed._replace(brokers=(permute_dirs(empty_dir_failed.brokers[0], (1, 0)),)
                                        + empty_dir_failed.brokers[1:])
    assert swapped.brokers[0].dirs == log_dir_failed.brokers[0].dirs
    assert swapped.brokers[0].copies != log_dir_failed.brokers[0].copies
    assert len({m.fingerprint(x) for x in (s, log_dir_failed, empty_dir_failed)}) == 3
    delivered = [deliver_all(m, x) for x in (log_dir_failed, empty_dir_failed)]
    assert delivered[0].brokers[0].hosted != delivered[1].brokers[0].hosted  # offline vs still leading
    assert len({m.fingerprint(x) for x in (s, *delivered)}) == 3


def test_symmetry_is_used_only_where_sound():
    assert dir_symmetry_sound(ModelConfig(brokers=3, dirs=2, partitions=1, rf=3))
    assert dir_symmetry_sound(ModelConfig(brokers=3, dirs=2, partitions=2, rf=2))
    assert dir_symmetry_sound(ModelConfig(brokers=3, dirs=3, partitions=1, rf=3))
    assert not dir_symmetry_sound(ModelConfig(brokers=3, dirs=3, partitions=2, rf=2))
    assert not dir_symmetry_sound(ModelConfig(brokers=3, dirs=1, partitions=1, rf=3))
    m = build_model(ModelConfig(brokers=3, dirs=3, partitions=2, rf=2), symmetry=True)
    assert not m.symmetry and m.fingerprint(m.init_states()[0]) == fingerprint(m.init_states()[0])


def test_symmetry_is_off_with_disk_space():
    """KIP-928's units in use and reserved file are per dir and not permuted by the canonical form."""
    assert dir_symmetry_sound(ModelConfig(brokers=2, dirs=2, partitions=1, rf=2))
    assert not dir_symmetry_sound(ModelConfig(brokers=2, dirs=2, partitions=1, rf=2, saturation=True))
    m = build_model(preset_config("tiny", saturation=True), symmetry=True)
    assert not m.symmetry and m.fingerprint(m.init_states()[0]) == fingerprint(m.init_states()[0])


def test_a_feature_adds_a_broker_field_and_the_dir_symmetry_moves_it():
    """A feature from outside declares a per-dir broker field (model/spec/schema.py Field, index "per-index"):
    brokers carry it after the built-in fields, a crash keeps it (durable), symmetry stays on and permutes it
    with the dirs, so the canonical form of two states that differ by a dir swap is the same."""
    from invariants.plugins import Plugins
    from model import Feature
    from model.spec.schema import Field

    marks = Feature("dir-marks", "A mark per log dir (a test feature)", fields=(
        Field("marks", "brokers", lambda m: tuple(range(m.cfg.dirs)), index="per-index"),))
    m = build_model(preset_config("tiny"), symmetry=True, plugins=Plugins(features=(marks,)))
    assert m.symmetry
    s = created_topic(m)
    b0 = s.brokers[0]
    assert type(b0)._fields[-1] == "marks" and b0.marks == (0, 1)
    assert m.crashed(b0).marks == (0, 1)
    sym = IndexSymmetry(m.schema)
    swapped = s._replace(brokers=(sym.permute(b0, (1, 0)),) + s.brokers[1:])
    assert swapped.brokers[0].marks == (1, 0) and swapped.brokers[0].copies == (0b10,)
    assert m.fingerprint(swapped) == m.fingerprint(s) and fingerprint(swapped) != fingerprint(s)
    # The same design without the feature: its brokers have no such field.
    assert "marks" not in type(created_topic(build_model(preset_config("tiny"))).brokers[0])._fields
