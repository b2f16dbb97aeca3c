"""Test-suite setup: users' plugins named by JBODCHECK_PLUGINS are loaded before collection (helpers.PLUGINS,
invariants/plugins.py), so the invariant suite builds its models with them and checks their invariants too."""
from __future__ import annotations

import invariants
import pytest

pytest.register_assert_rewrite("support")   # the shared helpers' asserts explain a failure as the tests' own do

from support import helpers  # noqa: E402

helpers.PLUGINS = invariants.load_plugins((), env=True)

# Hypothesis settings profiles (tests/support/profiles.py, docs/testing.md): JBODCHECK_PROFILE=ci (default) | thorough.
from hypothesis import settings  # noqa: E402

from long_runs import LONG_RUNS  # noqa: E402
from support.profiles import PROFILE, PROFILE_ENV, PROFILES, THOROUGH  # noqa: E402


def pytest_configure(config):
    if PROFILE not in PROFILES:
        raise pytest.UsageError(f"{PROFILE_ENV}={PROFILE!r} is not a profile (known: {', '.join(PROFILES)})")
    settings.load_profile(PROFILE)


def pytest_report_header(config):
    plugins = ", ".join(invariants.plugins.env_plugins()) or "none"
    return f"jbodcheck: Hypothesis profile {PROFILE} ({PROFILE_ENV}); invariant plugins (JBODCHECK_PLUGINS): {plugins}"


# The files that take longest (minutes each) are handed out first: pytest-xdist's --dist loadfile gives each
# process the next file in collection order, so a long file collected last would leave the other process idle.
LONGEST_FIRST = ("test_proofs_kraft.py", "test_proofs.py", "test_proof_mutations.py", "test_invariant_suite.py",
                 "test_findings.py", "test_signals.py", "test_spark.py", "test_prove_conformance.py",
                 "test_plugins.py", "test_realkafka.py", "test_reproduce_real.py", "test_fixes.py",
                 "test_kraft_combinations.py", "test_kraft_engines.py")


def _rank(item) -> int:
    name = item.nodeid.split("::")[0].rsplit("/", 1)[-1]
    return LONGEST_FIRST.index(name) if name in LONGEST_FIRST else len(LONGEST_FIRST)


def pytest_collection_modifyitems(config, items):
    """The longest files first (LONGEST_FIRST; a stable sort keeps each file's order). The long runs
    (tests/long_runs.py) run in the thorough profile only; an entry that names no test of a collected file is an
    error, so a renamed test cannot leave both profiles unnoticed."""
    items.sort(key=_rank)
    collected_files = {item.nodeid.split("::")[0] for item in items}
    for run in LONG_RUNS:
        matching = [item for item in items if _names(run.test, item.nodeid)]
        if not matching:
            if run.test.split("::")[0] in collected_files and not _deselected_by_keyword(config):
                raise pytest.UsageError(f"tests/long_runs.py names {run.test}, which is not a test")
            continue
        if not THOROUGH:
            for item in matching:
                item.add_marker(pytest.mark.skip(
                    reason="a long run: JBODCHECK_PROFILE=thorough (tests/long_runs.py; docs/testing.md)"))


def _names(test: str, nodeid: str) -> bool:
    return nodeid == test or ("[" not in test and nodeid.startswith(test + "["))


def _deselected_by_keyword(config) -> bool:
    """-k, -m or a node id on the command line select some tests of a file: an entry may be left out."""
    return bool(config.getoption("keyword") or config.getoption("markexpr")
                or any("::" in str(arg) for arg in config.args))
