"""Parameters a model has no use for (issue 41, item 2; explorer/catalog.py ``unread_parameter``): a flag that no
included feature reads is refused in one line (exit 2) instead of running a model that ignores it while the report
names it; presets and scenario files, which carry every field, trip it only with a value that would mean something.
"""
from __future__ import annotations

import json

import pytest

from explorer.catalog import DESIGNS, PRESETS, configure, features, preset_config
from model import ConfigError, ModelConfig

from support.helpers import SCENARIOS, in_process

KRAFT_TINY = ("explore", "--preset", "kraft-tiny", "--max-depth", "1", "-q", "--workers", "1")


def _one_line_exit_2(code, out, err, *words):
    assert code == 2 and out == "" and "Traceback" not in err, (code, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("jbodcheck: error: "), err
    for w in words:
        assert w in lines[0], (w, lines[0])


@pytest.mark.parametrize("flag", [
    ("--unclean-election",), ("--no-eager-metadata",), ("--reassignment-procedure", "kafka-2.7"),
    ("--assignment", "live-brokers"), ("--no-probe-new-replicas",), ("--max-created-resets", "2"),
])
def test_zookeeper_only_flags_are_refused_with_kraft(capsys, flag):
    _one_line_exit_2(*in_process(capsys, *KRAFT_TINY, *flag), " ".join(flag), "not a parameter of --variant kraft")


@pytest.mark.parametrize("flag", [("--max-failovers", "1"), ("--max-failovers", "2")])
def test_failovers_need_kraft_sessions(capsys, flag):
    _one_line_exit_2(*in_process(capsys, *KRAFT_TINY, *flag), "--max-failovers", "kraft-sessions",
                     "turn it on with --preset kraft-heartbeat")


def test_failovers_with_kraft_sessions_are_a_bound(capsys):
    code, out, err = in_process(capsys, "explore", "--preset", "kraft-heartbeat", "--max-failovers", "1",
                                "--max-depth", "1", "-q", "--workers", "1")
    assert code == 0, err
    assert "failovers=1" in out      # named with the bounds: kraft-sessions reads it


@pytest.mark.parametrize("flag", [("--no-unclean-election",), ("--eager-metadata",), ("--max-failovers", "0"),
                                  ("--assignment", "any"), ("--max-created-resets", "0")])
def test_a_flag_at_its_idle_value_is_accepted(capsys, flag):
    """What a model without the feature does anyway (no event; the default): nothing is claimed that was not run."""
    code, out, err = in_process(capsys, *KRAFT_TINY, *flag)
    assert code == 0, err


@pytest.mark.parametrize("args, words", [
    (("--preset", "tiny", "--dir-capacity", "2"), ("--dir-capacity 2", "feature saturation", "--saturation")),
    (("--preset", "tiny", "--reassignment-procedure", "kafka-2.7"), ("reassignment-kafka-2.7", "--reassignment")),
    (("--preset", "tiny", "--max-created-resets", "2"), ("--max-created-resets 2", "kip112-draft")),
    (("--preset", "kraft-tiny", "--max-saturations", "1"), ("--max-saturations 1", "--saturation")),
    (("--preset", "tiny", "--max-saturations", "2"), ("--max-saturations 2", "feature saturation", "--saturation")),
])
def test_a_flag_of_a_feature_left_out_is_refused(capsys, args, words):
    _one_line_exit_2(*in_process(capsys, "explore", *args, "--max-depth", "1", "-q"), *words)


def test_a_preset_s_value_of_a_feature_switched_off_is_not_refused(capsys):
    """deletion's preset has dir_capacity 2; --no-saturation leaves it unread, but the user did not give it."""
    code, out, err = in_process(capsys, "explore", "--preset", "deletion", "--no-saturation", "--max-depth", "1", "-q")
    assert code == 0, err


def test_every_preset_and_every_scenario_file_is_accepted():
    for name in PRESETS:
        preset_config(name)
    from explorer.scenario import load_scenario

    for path in sorted(SCENARIOS.glob("*.json")):
        scenario = load_scenario(str(path))
        model = dict(scenario.model)
        configure(model.pop("preset", None), model)


@pytest.mark.parametrize("field, value", [("unclean_election", True), ("eager_metadata", False),
                                          ("assignment_policy", "live-brokers"), ("max_created_resets", 3)])
def test_a_scenario_file_with_a_zookeeper_value_for_kraft_is_refused(tmp_path, capsys, field, value):
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"model": {"preset": "kraft-tiny", field: value}, "steps": []}))
    _one_line_exit_2(*in_process(capsys, "replay", path), f"{field}={json.dumps(value)}",
                     "not a parameter of model.variant kraft")


def test_a_kraft_scenario_with_every_field_at_its_default_is_accepted(tmp_path, capsys):
    """As a report or --save-scenario writes it: every field, the ZooKeeper ones at their defaults."""
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"model": {"preset": "kraft-tiny", **preset_config("kraft-tiny").as_dict()},
                                "steps": ["CreateTopic(partition=0)"]}))
    code, out, err = in_process(capsys, "replay", path)
    assert code == 0, err


def _other_value(flag):
    default = getattr(ModelConfig(), flag.field)
    if flag.type == "switch":
        return not default
    if flag.type == "choice":
        return next(c for c in flag.choices if c != default)
    if flag.type in ("int", "per-partition"):
        return default + 1 if isinstance(default, int) else default
    return None


def _cases():
    fields = {f.field: f for feature in features() for f in feature.flags
              if f.field not in ("brokers", "dirs", "partitions", "rf")}     # the shape: every design's
    bounds = [n for n in ModelConfig().as_dict() if n.startswith("max_") and n not in fields]
    for name in DESIGNS:
        for field, flag in fields.items():
            yield name, field, _other_value(flag)
        for field in bounds:
            yield name, field, getattr(ModelConfig(), field) + 1


@pytest.mark.parametrize("variant, field, value", list(_cases()))
def test_every_flag_of_every_design_is_read_or_refused(variant, field, value):
    """Generally, not one flag at a time: a flag given away from its idle value is refused exactly when no
    feature the configuration includes lists it among its config_fields."""
    base = dict(variant=variant, brokers=3, rf=2, max_records=0 if variant == "kraft" else 1)
    params = {**base, field: value}
    try:
        cfg = configure(None, params, explicit={field})
    except ConfigError as e:
        if "would change nothing" in str(e) or "would ignore it" in str(e):
            design = DESIGNS[variant]
            cfg = ModelConfig(**params)
            readers = {f.name for f in design.included(cfg) if field in f.config_fields}
            assert not readers, f"{field} is read by {readers} yet refused: {e}"
        return                               # another refusal (e.g. KRaft's saturation recovery): not ours
    readers = {f.name for f in DESIGNS[variant].included(cfg) if field in f.config_fields}
    assert readers, f"{field}={value!r} with --variant {variant} is read by no included feature, yet accepted"


@pytest.mark.parametrize("args", [("--variant", "kraft", "--max-records", "0"),
                                  ("--preset", "kraft-tiny", "--loose-bounds")])
def test_fuzz_s_loose_bounds_are_not_flags(capsys, args):
    """fuzz's loose bounds (every max_* raised) go under the flags: KRaft without kraft-sessions, whose model reads
    no failover bound, is not refused for a bound the user did not give."""
    pytest.importorskip("hypothesis")
    code, out, err = in_process(capsys, "fuzz", *args, "--examples", "3", "-q")
    assert code in (0, 1) and "error" not in err, err
