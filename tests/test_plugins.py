"""Users' own invariants (docs/extending.md): a throwaway plugin module, registered through the documented
extension point, is reported by all three engines: BFS, the Hypothesis machine and the pytest invariant suite;
and by the CLI through --plugin and JBODCHECK_PLUGINS."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hypothesis import settings
from hypothesis.stateful import run_state_machine_as_test

import invariants
from explorer.fuzz import InvariantViolation, make_state_machine
from explorer.search import SearchOptions, bfs
from invariants.plugins import LOADED
from model import Model
from model.presets import preset_config

from helpers import REPO

pytestmark = [pytest.mark.invariants, pytest.mark.stateful]

NAME = "jbodcheck_throwaway_plugin"
INVARIANT = "throwaway_no_topic_exists"
SOURCE = f'''
from invariants import invariant
from model.state import P_NONEXISTENT


@invariant("{INVARIANT}", kind="state",
           statement="No topic is ever created (a throwaway invariant that fails as soon as one exists).",
           reference="KIP-112 scenario 1 (topic gets created)")
def check(model, state):
    for p, part in enumerate(state.controller.partitions):
        if part.state != P_NONEXISTENT:
            return f"partition {{p}} exists"
    return None
'''


def _forget() -> None:
    for key in [k for k in LOADED if NAME in k]:
        del LOADED[key]
    for key in [k for k in sys.modules if NAME in k]:
        del sys.modules[key]


@pytest.fixture
def plugin_dir(tmp_path, monkeypatch):
    (tmp_path / f"{NAME}.py").write_text(SOURCE)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    _forget()  # other tests must not see the throwaway invariant


def _env(plugin_dir, **extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k != invariants.PLUGINS_ENV_VAR}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(plugin_dir), env.get("PYTHONPATH", "")]))
    env.update(extra)
    return env


def test_every_engine_reports_a_plugin_invariant(plugin_dir, monkeypatch):
    monkeypatch.setenv(invariants.PLUGINS_ENV_VAR, NAME)
    # The extension point: JBODCHECK_PLUGINS, loaded by load_plugins(env=True) (as conftest.py and the CLI do),
    # whose invariants a model built with them checks.
    plugins = invariants.load_plugins(env=True)
    assert [i.id for i in plugins.invariants] == [INVARIANT] and not plugins.invariants[0].symmetric
    model = Model(preset_config("tiny"), plugins=plugins)
    assert INVARIANT in {i.id for i in model.invariants}
    assert INVARIANT not in {i.id for i in Model(preset_config("tiny")).invariants}, "no process-wide registry"

    # 1. BFS: the shortest trace is the topic's creation.
    result = bfs(model, model.invariants, SearchOptions())
    assert [v.invariant.id for v in result.violations] == [INVARIANT]
    assert len(result.violations[0].trace) == 2

    # 2. The Hypothesis machine (built with the default invariants: the model's) shrinks to that step.
    with pytest.raises(InvariantViolation) as info:
        run_state_machine_as_test(make_state_machine(model), settings=settings(report_multiple_bugs=False))
    assert info.value.invariant.id == INVARIANT
    assert info.value.steps[-1].startswith("CreateTopic(")
    assert info.value.minimal().steps == ["CreateTopic(partition=0)"]

    # 3. The pytest invariant suite, run with the plugin in JBODCHECK_PLUGINS, has items for it, which fail.
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "tests/test_invariant_suite.py", "-m", "invariants", "-k", "tiny and kip112",
         "-q", "-p", "no:cacheprovider", "-rf"],
        capture_output=True, text=True, cwd=REPO, env=_env(plugin_dir, JBODCHECK_PLUGINS=NAME), timeout=600)
    assert run.returncode == 1, run.stdout[-3000:]
    assert f"FAILED tests/test_invariant_suite.py::test_invariant[tiny-kip112-{INVARIANT}]" in run.stdout
    assert "FAILED tests/test_invariant_suite.py::test_preset_outcome[tiny-kip112]" in run.stdout
    assert f"violation of {INVARIANT}: partition 0 exists" in run.stdout


@pytest.mark.parametrize("how", ["--plugin module", "--plugin file", "JBODCHECK_PLUGINS"])
def test_the_cli_reports_a_plugin_invariant(plugin_dir, how):
    if how == "--plugin module":
        args, env = ["--plugin", NAME], _env(plugin_dir)
    elif how == "--plugin file":
        args, env = ["--plugin", str(plugin_dir / f"{NAME}.py")], _env(plugin_dir)
    else:
        args, env = [], _env(plugin_dir, JBODCHECK_PLUGINS=f" {NAME} ,")
    run = subprocess.run([sys.executable, "-m", "explorer", "explore", "--preset", "tiny", "-q", *args],
                         capture_output=True, text=True, cwd=REPO, env=env, timeout=600)
    assert run.returncode == 1, run.stderr
    assert f"VIOLATION of {INVARIANT}" in run.stdout and "Trace (1 steps)" in run.stdout
    listed = subprocess.run([sys.executable, "-m", "explorer", "invariants", "--json", *args],
                            capture_output=True, text=True, cwd=REPO, env=env, timeout=600)
    assert INVARIANT in listed.stdout


def test_an_unimportable_plugin_is_bad_input(tmp_path):
    broken = tmp_path / "broken_plugin.py"
    broken.write_text("raise RuntimeError('boom')\n")
    cases = [
        (["explore", "--preset", "tiny", "--plugin", "no_such_module_xyz"], {}),
        (["replay", "x.json", "--plugin", str(broken)], {}),
        (["invariants"], {invariants.PLUGINS_ENV_VAR: "no_such_module_xyz"}),
    ]
    for args, env in cases:
        run = subprocess.run([sys.executable, "-m", "explorer", *args], capture_output=True, text=True,
                             cwd=REPO, env={**os.environ, **env}, timeout=600)
        assert run.returncode == 2, (args, run.stderr)
        lines = run.stderr.strip().splitlines()
        assert len(lines) == 1 and "cannot import plugin" in lines[0], run.stderr


def test_load_plugins_reports_one_line(tmp_path):
    with pytest.raises(invariants.PluginError, match="cannot import plugin 'no_such_module_xyz'"):
        invariants.load_plugins(["no_such_module_xyz"])
    with pytest.raises(invariants.PluginError, match="no such file"):
        invariants.load_plugins([str(tmp_path / "missing.py")])
