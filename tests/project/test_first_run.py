"""What a new user meets first: one version everywhere, a base install without the heavy optional parts, and
docs that match the commands they run (README, docs/cli.md)."""
from __future__ import annotations

import re
import subprocess
import sys
import tomllib

import explorer

from support.helpers import REPO


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


def test_the_version_is_the_changelogs_newest_entry():
    changelog = (REPO / "CHANGELOG.md").read_text()
    assert changelog.index("\n## [Unreleased]\n") < changelog.index("\n## [0.")
    newest = re.search(r"^## \[(\d+\.\d+\.\d+)\]", changelog, re.M).group(1)
    assert newest == explorer.__version__
    assert "## Changelog" not in (REPO / "README.md").read_text(), "the history lives in CHANGELOG.md"


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


def _readme_blocks() -> list[str]:
    readme = (REPO / "README.md").read_text()
    return re.findall(r"```(?:console|sh|bash)?\n(.*?)```", readme, re.S)


README_TEST_COMMAND = "python3 -m pytest -q -n 2 --dist loadfile"


def test_the_readmes_first_command_installs_in_a_venv_and_runs_a_real_check():
    """The guide's rule: on a fresh machine with a stock Python (PEP 668 refuses a bare `pip install` on Debian
    and Ubuntu), the README's first command installs into a virtual environment and runs a real check. Its check
    is run here, cut short by a bound, so a renamed preset or option fails this test."""
    first = _readme_blocks()[0].strip()
    assert first == "python3 -m venv .venv && . .venv/bin/activate && pip install -e . && jbodcheck explore --preset tiny"
    check = first.split(" && ")[-1].split()
    out = jbodcheck(*check[1:], "--max-states", "50", "-q")
    assert "Result: bounded. " in out, out[-500:]


def test_the_readmes_second_command_runs_the_suite_in_that_venv_and_ci_runs_the_same():
    second = _readme_blocks()[1].strip()
    assert second == f". .venv/bin/activate && pip install -e '.[test]' && {README_TEST_COMMAND}"
    ci = (REPO / ".ci" / "run").read_text()
    commands = [line.strip() for line in ci.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert '"$python" -m venv .venv' in commands and 'python=/usr/bin/python3' in ci
    at = commands.index(". .venv/bin/activate")
    assert commands[at + 1:at + 2] == ["pip install -e ."] and commands[-1] == README_TEST_COMMAND
    assert "pip install -e '.[test]'" in commands[at:]


def test_the_readme_is_a_front_door():
    readme = (REPO / "README.md").read_text()
    assert len(readme.splitlines()) <= 250
    assert "../shared" not in readme and "shared/" not in readme
    kraft, zk = readme.index("\n## KRaft mode"), readme.index("\n## The ZooKeeper-era designs")
    assert kraft < zk, "KRaft, the Kafka that ships, comes first"
    for cited in set(re.findall(r"(?<![\w/.-])((?:docs|scenarios|tests|realkafka|examples)/[\w./-]*[\w/])", readme)) | {
            "CHANGELOG.md", "CONTRIBUTING.md", "LICENSE", ".ci/run"}:
        assert (REPO / cited).exists(), f"the README names {cited}, which does not exist"
