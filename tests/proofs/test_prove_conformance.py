"""`jbodcheck prove` checks that the explicit model conforms to the z3 model before its verdict (issue 41): a bug
planted in the explicit model (a plugin's feature, a monkeypatched rule) and absent from the z3 model makes the
verdict say that the proof does not apply, and exit 1; --no-conformance makes it say that conformance was not
checked; a check that raises is the checker's failure (exit 3). Each run is bounded with
--conformance-max-states (the verdict says so): the planted bugs show within the first states of tiny."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from click.testing import CliRunner

from explorer.cli.prove import prove_command
from support.helpers import REPO, in_process

PLUGINS = {
    # a follower created with isNewReplica=false while a dir is offline (the broker's check dropped)
    "recreate_with_bad_dir": 'hooks={"may_create_log": lambda broker, is_new: True}',
    # the controller always sends isNewReplica=true
    "always_new_replica": 'hooks={"is_new_replica": lambda step, b, p, is_new: True}',
    # the re-creation bug only from leader epoch 2 on (the controller asks for a new replica then)
    "new_replica_from_epoch_2": 'hooks={"is_new_replica": lambda step, b, p, is_new: is_new or '
                                'step.partitions[p].leader_epoch >= 2}',
}


def plugin(tmp_path, name: str) -> str:
    path = tmp_path / f"prove_bug_{name}.py"
    path.write_text(textwrap.dedent(f'''\
        from model import Feature
        FEATURES = [Feature("{name.replace("_", "-")}", "a planted bug", {PLUGINS[name]})]
        '''))
    return str(path)


def prove(*args):
    run = CliRunner().invoke(prove_command, [str(a) for a in args], standalone_mode=False)
    assert run.exception is None, run.output
    return run.return_value, run.output


def test_a_plugin_planting_a_bug_is_not_told_all_proved(tmp_path):
    """The acceptance of issue 41 item 1, as a user runs it: the z3 model proves everything, the explicit model
    with the plugin does not conform to it, so the verdict is not "all proved" and the exit code is 1."""
    run = subprocess.run([sys.executable, "-m", "explorer", "prove", "--plugin", plugin(tmp_path, "recreate_with_bad_dir"),
                          "--property", "no_recreate_with_bad_dir", "--conformance-max-states", "100",
                          "--json", str(tmp_path / "r.json")], capture_output=True, text=True, cwd=REPO, timeout=600)
    assert run.returncode == 1, run.stderr
    result = run.stdout.strip().splitlines()[-1]
    assert result.startswith("Result: NOT established for this model: all proved for the z3 model, but the explicit "
                             "model does NOT conform to it (forward BrokerLeaderAndIsr"), result
    assert "the proof does not apply to the explicit model" in result
    assert "plugin features recreate-with-bad-dir" in run.stdout
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["result"] == "does not conform" and report["conformance"]["result"] == "does not conform"
    forward = [o for o in report["conformance"]["offences"] if o["check"] == "forward"]
    assert forward[0]["action"] == "BrokerLeaderAndIsr"
    assert forward[0]["conjuncts"] == ["each named partition as 6.1 says"]
    assert "no_recreate_with_bad_dir" in report["conformance"]["configurations"][0]["explicit_violations"]


@pytest.mark.parametrize("bug, check, action, conjunct", [
    ("always_new_replica", "forward", "ControllerFailover",
     "isNewReplica=true only for a partition getting its first record"),
    ("new_replica_from_epoch_2", "forward", "BrokerLeaderAndIsr",
     "an isNewReplica=true entry in flight is handled first, once"),
])
def test_a_plugin_planting_a_controller_bug_is_not_told_all_proved(tmp_path, bug, check, action, conjunct):
    code, out = prove("--plugin", plugin(tmp_path, bug), "--property", "create_only_on_good_dir",
                      "--conformance-max-states", 100, "--json", tmp_path / "r.json")
    assert code == 1 and "Result: NOT established for this model" in out.splitlines()[-1]
    offences = json.loads((tmp_path / "r.json").read_text())["conformance"]["offences"]
    assert any(o["check"] == check and o["action"] == action and conjunct in o["conjuncts"] for o in offences), offences


def test_a_controller_that_sends_to_a_crashed_broker_is_not_told_all_proved(tmp_path, monkeypatch):
    from model.zk import controller

    def send_to_any_live(self, broker, message):      # the check of the broker's state dropped
        if self.live >> broker & 1:
            self.inboxes[broker] = self.inboxes[broker] + (message,)
    monkeypatch.setattr(controller.ControllerStep, "_send", send_to_any_live)
    code, out = prove("--property", "create_only_on_good_dir", "--conformance-max-states", 100,
                      "--json", tmp_path / "r.json")
    assert code == 1 and "Result: NOT established for this model" in out.splitlines()[-1]
    offences = json.loads((tmp_path / "r.json").read_text())["conformance"]["offences"]
    assert offences[0]["check"] == "forward" and offences[0]["action"] == "CreateTopic"
    assert "sends only isNew=true entries for p" in offences[0]["conjuncts"]


def test_without_the_check_the_verdict_says_the_proof_is_about_the_z3_model_only(tmp_path):
    code, out = prove("--plugin", plugin(tmp_path, "recreate_with_bad_dir"), "--property",
                      "create_only_on_good_dir", "--no-conformance", "--json", tmp_path / "r.json")
    assert code == 0
    assert out.splitlines()[-1].startswith(
        "Result: all proved; for the z3 model only: its conformance to the explicit model was not checked "
        "(--no-conformance)")
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["conformance"] == {"checked": False, "result": "not checked", "why": "--no-conformance"}


def test_a_check_that_raises_is_the_checkers_failure(tmp_path, capsys):
    path = tmp_path / "prove_raising_rule.py"
    path.write_text(textwrap.dedent('''\
        from model import Feature
        def _boom(broker, is_new):
            raise RuntimeError("planted")
        FEATURES = [Feature("raising", "a hook that raises", hooks={"may_create_log": _boom})]
        '''))
    code, out, err = in_process(capsys, "prove", "--plugin", path, "--property", "create_only_on_good_dir",
                                "--conformance-max-states", 200)
    assert code == 3, err
    assert err.strip() == "jbodcheck: failure: the conformance check failed: RuntimeError: planted"


def test_prove_takes_every_model_option_another_command_takes():
    """So that whatever the MODEL options come to hold (a --fix, a feature's flag) names the model the conformance
    check runs on (prove's own --variant and --preset keep their defaults)."""
    from explorer.cli.explore import explore
    from explorer.cli.options import MODEL_PARAMS

    mine = {p.name for p in prove_command.params}
    assert set(MODEL_PARAMS) <= mine
    assert {p.name for p in explore.params if p.name in MODEL_PARAMS or p.name in ("preset", "plugins")} <= mine


def test_model_options_name_the_configuration_of_the_conformance_check(tmp_path, capsys):
    code, out = prove("--property", "create_only_on_good_dir", "--max-faults", 1, "--conformance-max-states", 100,
                      "--json", tmp_path / "r.json")
    assert code == 0, out
    assert "preset tiny (changed by the MODEL options)" in out and "at most 1 fault(s)" in out
    [cfg] = json.loads((tmp_path / "r.json").read_text())["conformance"]["configurations"]
    assert cfg["configuration"]["model"]["max_faults"] == 1
    code, _, err = in_process(capsys, "prove", "--property", "create_only_on_good_dir", "--rf", 5)
    assert code == 2 and len(err.strip().splitlines()) == 1, err      # bad input, before the proofs run


def test_bmc_with_a_contradictory_action_is_caught_by_the_vacuity_check(tmp_path, monkeypatch):
    """A z3 action made contradictory: bounded model checking alone finds "no violation" (nothing can happen),
    so --bmc runs the vacuity check too and names the action; the explicit model no longer conforms either."""
    import z3
    from proofs import system

    original = system.RELATIONS["BrokerLeaderAndIsr"]
    monkeypatch.setitem(system.RELATIONS, "BrokerLeaderAndIsr",
                        lambda *a: original(*a) + [("planted: false", z3.BoolVal(False))])
    code, out = prove("--bmc", 3, "--property", "create_only_on_good_dir", "--conformance-max-states", 100,
                      "--json", tmp_path / "r.json")
    assert code == 1, out
    assert "no violation up to depth 3" in out                   # the bounded search alone is fooled
    assert "BrokerLeaderAndIsr               NEVER ENABLED" in out
    verdict = out.splitlines()[-1]
    assert verdict.startswith("Result: NOT established"), verdict
    assert "action BrokerLeaderAndIsr never enabled (vacuous)" in verdict
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["mode"] == "bmc" and "BrokerLeaderAndIsr" in report["vacuity"]["never_enabled"]
    assert any(o["action"] == "BrokerLeaderAndIsr" for o in report["conformance"]["offences"])
