"""0.3.x's module paths keep working for plugins until 0.6.0 (issue 41, item 5; model/moved.py): each old module
imports with a MovedModuleWarning naming its new path, reads its names from there (or where a name went alone),
and a name that no longer exists says what replaces it. docs/extending.md lists them."""
from __future__ import annotations

import importlib
import subprocess
import sys
import warnings

import pytest

from support.helpers import REPO

# 0.3.1's modules (git show 0.3.1's tree: model/*.py, invariants/*.py, explorer/*.py) that moved in 0.4.0, with
# the new home of each, and a name that 0.3.x's docs/extending.md or examples imported from it.
MOVED = {
    "model.broker": ("model.storage.broker", "get_or_create_log"),
    "model.config": ("model.storage.config", "ModelConfig"),
    "model.controller": ("model.zk.controller", "ControllerStep"),
    "model.data": ("model.storage.data", None),
    "model.deletion": ("model.zk.deletion", None),
    "model.memo": ("model.spec.memo", None),
    "model.model": ("model.spec.model", "Model"),
    "model.presets": ("explorer.catalog", "preset_config"),
    "model.reassignment": ("model.zk.reassignment", None),
    "model.registry": ("model.spec.rule", "Rule"),
    "model.rules": ("model.zk.rules", "dir_fail"),
    "model.rules_data": ("model.storage.rules_data", None),
    "model.rules_deletion": ("model.zk.rules_deletion", None),
    "model.rules_reassignment": ("model.zk.rules_reassignment", None),
    "model.rules_space": ("model.storage.rules_space", None),
    "model.state": ("model.storage.state", "LIVE_DIR"),
    "model.symmetry": ("model.spec.symmetry", None),
    "invariants.durability": ("invariants.storage.durability", None),
    "invariants.kip928": ("invariants.storage.kip928", None),
    "invariants.registry": ("model.spec.invariant", "invariant"),
    "invariants.safety": ("invariants.storage.safety", None),
    "explorer.render": ("explorer.reports.render", "state_dict"),
    "explorer.report": ("explorer.reports.report", "report_dict"),
}


def _fresh_import(name: str):
    sys.modules.pop(name, None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        __import__(name)                     # as an import statement does: the warning names this line
    return sys.modules[name], caught


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_module_imports_with_a_warning_naming_its_new_path(old):
    from model.moved import MovedModuleWarning

    new, name = MOVED[old]
    module, caught = _fresh_import(old)
    ours = [w for w in caught if issubclass(w.category, MovedModuleWarning)]
    assert len(ours) == 1 and issubclass(ours[0].category, DeprecationWarning)
    assert f"{old} is deprecated" in str(ours[0].message) and f"import {new} instead" in str(ours[0].message)
    assert "0.6.0" in str(ours[0].message)
    assert ours[0].filename == __file__, "the warning points at the importer's line"
    target = importlib.import_module(new)
    for public in (n for n in vars(target) if not n.startswith("_")):
        assert getattr(module, public) is getattr(target, public)
    if name is not None:
        assert getattr(module, name) is not None


def test_0_3_s_documented_plugin_runs_unchanged(tmp_path):
    """0.3.x's docs/extending.md example, as it was written (from model.state import LIVE_DIR, bits), through the
    CLI: it runs, and one line says what to import instead."""
    plugin = tmp_path / "old_plugin.py"
    plugin.write_text('''from invariants import invariant
from model.state import LIVE_DIR, bits
from model.presets import preset_config


@invariant("old_at_most_one_live_copy", kind="state", statement="At most one live copy of a partition a broker.",
           reference="0.3.x's docs/extending.md")
def old_at_most_one_live_copy(model, state):
    for b, broker in enumerate(state.brokers):
        for p, mask in enumerate(broker.copies):
            if len([d for d in bits(mask) if LIVE_DIR[broker.dirs[d]]]) > 1:
                return f"broker {b} has two live copies of partition {p}"
    return None
''')
    p = subprocess.run([sys.executable, "-m", "explorer", "explore", "--preset", "tiny", "--max-depth", "3", "-q",
                        "--workers", "1", "--plugin", str(plugin)], capture_output=True, text=True, cwd=REPO,
                       timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    lines = p.stderr.strip().splitlines()
    assert lines == [
        "jbodcheck: warning: old_plugin.py:2: model.state is deprecated since 0.4.0 and will be removed in 0.6.0: "
        "import model.storage.state instead",
        "jbodcheck: warning: old_plugin.py:3: model.presets is deprecated since 0.4.0 and will be removed in "
        "0.6.0: import explorer.catalog instead"], lines


def test_a_name_that_no_longer_exists_says_what_replaces_it():
    module, _ = _fresh_import("model.state")
    with pytest.raises(AttributeError, match="is_quiescent no longer exists since 0.4.0: model.is_quiescent"):
        _ = module.is_quiescent
    with pytest.raises(AttributeError, match="model.state \\(now model.storage.state\\) has no attribute 'nope'"):
        _ = module.nope


def test_names_that_went_elsewhere_are_found_there():
    from model.spec.engine import fingerprint_of
    from model.storage.faults import dir_fail
    from model.zk.config import ModelConfig
    from model.zk.requests import handle_leader_and_isr

    assert _fresh_import("model.state")[0].fingerprint_of is fingerprint_of
    assert _fresh_import("model.rules")[0].dir_fail is dir_fail
    assert _fresh_import("model.config")[0].ModelConfig is ModelConfig
    assert _fresh_import("model.broker")[0].handle_leader_and_isr is handle_leader_and_isr


def test_the_docs_list_every_moved_module():
    text = (REPO / "docs" / "extending.md").read_text()
    for old, (new, _) in MOVED.items():
        assert f"`{old}`" in text and f"`{new}`" in text, old
