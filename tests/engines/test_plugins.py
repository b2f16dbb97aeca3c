"""Users' own invariants (docs/extending.md): a throwaway plugin module, registered through the documented
extension point, is reported by all three engines: BFS, the Hypothesis machine and the pytest invariant suite;
and by the CLI through --plugin and JBODCHECK_PLUGINS."""
from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from hypothesis import settings
from hypothesis.stateful import run_state_machine_as_test

import invariants
from explorer.fuzz import InvariantViolation, make_state_machine
from explorer.search import SearchOptions, bfs
from invariants.plugins import LOADED
from explorer.catalog import build_model, preset_config

from support.helpers import REPO

pytestmark = [pytest.mark.invariants, pytest.mark.stateful]

NAME = "jbodcheck_throwaway_plugin"
INVARIANT = "throwaway_no_topic_exists"
SOURCE = f'''
from invariants import invariant
from model.storage.state import P_NONEXISTENT


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


@pytest.mark.long_run
def test_every_engine_reports_a_plugin_invariant(plugin_dir, monkeypatch):
    monkeypatch.setenv(invariants.PLUGINS_ENV_VAR, NAME)
    # The extension point: JBODCHECK_PLUGINS, loaded by load_plugins(env=True) (as conftest.py and the CLI do),
    # whose invariants a model built with them checks.
    plugins = invariants.load_plugins(env=True)
    assert [i.id for i in plugins.invariants] == [INVARIANT] and not plugins.invariants[0].symmetric
    model = build_model(preset_config("tiny"), plugins=plugins)
    assert INVARIANT in {i.id for i in model.invariants}
    assert INVARIANT not in {i.id for i in build_model(preset_config("tiny")).invariants}, "no process-wide registry"

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
        [sys.executable, "-m", "pytest", "tests/zk/test_invariant_suite.py", "-m", "invariants", "-k", "tiny and kip112 and not isnew and not draft",
         "-q", "-p", "no:cacheprovider", "-rf"],
        capture_output=True, text=True, cwd=REPO, env=_env(plugin_dir, JBODCHECK_PLUGINS=NAME), timeout=600)
    assert run.returncode == 1, run.stdout[-3000:]
    assert f"FAILED tests/zk/test_invariant_suite.py::test_invariant[tiny-kip112-{INVARIANT}]" in run.stdout
    assert "FAILED tests/zk/test_invariant_suite.py::test_preset_outcome[tiny-kip112]" in run.stdout
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


# ---- plugin code that tries to end the run, and invariant ids that are taken (issue 29) -----------------------

def _cli(*args, cwd, timeout=600):
    """`python -m explorer ARGS` in ``cwd`` (where a checker failure's scenario file goes without --json)."""
    env = {k: v for k, v in os.environ.items() if k != invariants.PLUGINS_ENV_VAR}
    env["PYTHONPATH"] = str(REPO)
    return subprocess.run([sys.executable, "-m", "explorer", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=timeout)


def _one_line(run, code: int, *words) -> str:
    assert run.returncode == code, (run.returncode, run.stdout[-2000:], run.stderr[-2000:])
    assert "Traceback" not in run.stderr
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, run.stderr
    for w in words:
        assert w in lines[0], (w, lines[0])
    return lines[0]


@pytest.mark.parametrize("statement, shown", [
    ("import sys\nsys.exit(0)\n", "SystemExit(0)"),
    ("raise SystemExit(1)\n", "SystemExit(1)"),
    ("raise SystemExit('bye')\n", "SystemExit('bye')"),
    ("raise KeyboardInterrupt\n", "KeyboardInterrupt"),
])
def test_a_plugin_that_ends_the_run_at_import_is_a_checker_failure(tmp_path, statement, shown):
    plugin = tmp_path / "quits_at_import.py"
    plugin.write_text(statement)
    for command in (["explore", "--preset", "tiny", "-q"], ["invariants"], ["replay", "x.json"]):
        _one_line(_cli(*command, "--plugin", plugin, cwd=tmp_path), 3, "jbodcheck: failure:", str(plugin), shown)


EXITS_IN_A_CHECK = '''
import sys
from invariants import invariant


@invariant("quits_once_a_dir_failed", kind="{kind}", statement="ends the run once a dir failed", reference="test")
def quits(model, state, *rest):
    state = rest[-1] if rest else state
    if any(d != 0 for b in state.brokers for d in b.dirs):
        {statement}
    return None
'''


@pytest.mark.parametrize("statement", ["sys.exit(0)", "raise SystemExit(2)", "raise KeyboardInterrupt"])
@pytest.mark.parametrize("engine", [("--workers", "1"), ("--workers", "2"), ("--engine", "dfs"),
                                    ("--engine", "random", "--walks", "200"), ("fuzz",)])
def test_a_plugin_invariant_that_ends_the_run_is_a_checker_failure(tmp_path, statement, engine):
    plugin = tmp_path / "quits_in_a_check.py"
    plugin.write_text(EXITS_IN_A_CHECK.format(kind="state", statement=statement))
    if engine == ("fuzz",):
        command = ["fuzz", "--preset", "tiny", "--examples", "50"]
    else:
        command = ["explore", "--preset", "tiny", *engine]
    run = _cli(*command, "-q", "--plugin", plugin, "--json", tmp_path / "report.json", cwd=tmp_path)
    line = _one_line(run, 3, "quits_once_a_dir_failed", f"plugin {plugin}", "the checker failed")
    assert ("KeyboardInterrupt" if "Keyboard" in statement else "SystemExit") in line
    assert not (tmp_path / "report.json").exists()


def test_a_transition_invariant_that_exits_is_a_checker_failure(tmp_path):
    plugin = tmp_path / "quits_in_a_transition.py"
    plugin.write_text(EXITS_IN_A_CHECK.format(kind="transition", statement="sys.exit(0)"))
    _one_line(_cli("explore", "--preset", "tiny", "-q", "--workers", "2", "--plugin", plugin, cwd=tmp_path), 3,
              "quits_once_a_dir_failed", "SystemExit")


def test_a_real_ctrl_c_during_a_plugin_check_is_still_an_interrupt(tmp_path):
    """The user's SIGINT while a plugin's check runs ends the run as an interrupt (130), not a failure."""
    started = tmp_path / "started"
    plugin = tmp_path / "slow_check.py"
    plugin.write_text(f'''
import time
from invariants import invariant


@invariant("slow_once_a_dir_failed", kind="state", statement="waits", reference="test")
def slow(model, state):
    if any(d != 0 for b in state.brokers for d in b.dirs):
        open({str(started)!r}, "w").close()
        time.sleep(60)
    return None
''')
    env = {k: v for k, v in os.environ.items() if k != invariants.PLUGINS_ENV_VAR}
    env["PYTHONPATH"] = str(REPO)
    proc = subprocess.Popen([sys.executable, "-m", "explorer", "explore", "--preset", "tiny", "-q", "--workers", "1",
                             "--plugin", plugin], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(600):
            if started.exists() or proc.poll() is not None:
                break
            time.sleep(0.1)
        assert started.exists(), proc.communicate(timeout=60)
        proc.send_signal(2)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, (out, err)


# a core invariant, a data one, one of a feature tiny leaves out, a liveness property
@pytest.mark.parametrize("taken", ["no_recreate_with_bad_dir", "no_acked_record_lost", "deleted_replica_holds_no_data",
                                   "leader_eventually"])
def test_a_plugin_invariant_with_a_built_in_id_is_refused(tmp_path, taken):
    plugin = tmp_path / "takes_an_id.py"
    plugin.write_text(EXITS_IN_A_CHECK.format(kind="state", statement="pass").replace("quits_once_a_dir_failed", taken))
    for command in (["explore", "--preset", "tiny", "-q"], ["invariants"]):
        _one_line(_cli(*command, "--plugin", plugin, cwd=tmp_path), 2, "jbodcheck: error:", taken, "already has")


def test_two_plugins_with_one_invariant_id_are_refused(tmp_path):
    for name in ("first_plugin", "second_plugin"):
        (tmp_path / f"{name}.py").write_text(EXITS_IN_A_CHECK.format(kind="state", statement="pass"))
    line = _one_line(_cli("explore", "--preset", "tiny", "-q", "--plugin", tmp_path / "first_plugin.py",
                          "--plugin", tmp_path / "second_plugin.py", cwd=tmp_path), 2, "quits_once_a_dir_failed")
    assert "second_plugin.py" in line and "first_plugin.py" in line


def test_a_plugin_may_import_a_built_in_invariant(tmp_path):
    """Importing a built-in invariant's function declares nothing new: not a taken id."""
    plugin = tmp_path / "imports_one.py"
    plugin.write_text("from invariants.storage.safety import *  # noqa: F403\n")
    run = _cli("explore", "--preset", "tiny", "--max-states", "100", "-q", "--workers", "1", "--plugin", plugin, cwd=tmp_path)
    assert run.returncode == 0, run.stderr


THREAD_THAT_RAISES = '''
import threading


def _work():
    raise ValueError("the plugin's thread broke")


threading.Thread(target=_work, name="plugin-worker").start()
'''


def test_a_plugin_thread_that_raises_is_a_checker_failure_in_one_line(tmp_path):
    """Python printed the thread's traceback and the run exited 0 (issue 46)."""
    plugin = tmp_path / "raising_thread.py"
    plugin.write_text(THREAD_THAT_RAISES)
    run = _cli("explore", "--preset", "tiny", "-q", "--max-depth", "2", "--plugin", plugin, cwd=tmp_path)
    _one_line(run, 3, "jbodcheck: failure:", f"plugin '{plugin}'", "(plugin-worker)",
              "ValueError: the plugin's thread broke")
    assert "Exception in thread" not in run.stderr
