"""What a new user meets first: one version everywhere, a base install without the heavy optional parts, and
docs that match the commands they run (README, docs/cli.md)."""
from __future__ import annotations

import re
import subprocess
import sys
import tomllib

import explorer

from helpers import REPO


def jbodcheck(*args) -> str:
    p = subprocess.run([sys.executable, "-m", "explorer", *args], capture_output=True, text=True, cwd=REPO,
                       timeout=120, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_the_version_comes_from_one_place():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "explorer.__version__"}
    assert jbodcheck("--version").strip() == f"jbodcheck, version {explorer.__version__}"


def test_the_version_is_the_readmes_newest_changelog_entry():
    changelog = (REPO / "README.md").read_text().split("\n## Changelog\n", 1)[1]
    newest = re.search(r"^- (\d+\.\d+\.\d+)", changelog, re.M).group(1)
    assert newest == explorer.__version__


def test_docs_cli_names_the_version():
    assert f"the current version ({explorer.__version__}" in (REPO / "docs" / "cli.md").read_text()


def test_the_base_install_leaves_out_the_optional_parts():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    base = " ".join(project["dependencies"])
    extras = project["optional-dependencies"]
    for package, extra in (("pyspark", "spark"), ("z3-solver", "prove"), ("hypothesis", "fuzz")):
        assert package not in base
        assert any(d.startswith(package) for d in extras[extra])
    assert extras["all"] == ["jbodcheck[spark,prove,fuzz]"]
    assert "jbodcheck[all]" in extras["test"] and any(d.startswith("pytest-xdist") for d in extras["test"])


def test_docs_cli_shows_what_jbodcheck_presets_prints():
    doc = (REPO / "docs" / "cli.md").read_text()
    shown = doc.split("```console\n$ jbodcheck presets\n", 1)[1].split("```", 1)[0]
    assert shown == jbodcheck("presets")


def test_docs_cli_counts_and_names_every_preset():
    from explorer.catalog import PRESETS

    doc = (REPO / "docs" / "cli.md").read_text()
    words = dict(enumerate("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
                           "fifteen sixteen seventeen eighteen nineteen twenty twenty-one twenty-two twenty-three "
                           "twenty-four twenty-five".split()))
    assert f"The {words.get(len(PRESETS), len(PRESETS))} presets" in doc
    row = next(line for line in doc.splitlines() if line.startswith("| `--preset NAME`"))
    assert set(re.findall(r"`([a-z0-9-]+)`", row)) >= set(PRESETS)


def test_the_readme_starts_with_a_base_install():
    readme = (REPO / "README.md").read_text()
    first = re.search(r"```(?:console|sh|bash)?\n(.*?)```", readme, re.S).group(1)
    assert "pip install -e . && jbodcheck explore --preset tiny" in first
