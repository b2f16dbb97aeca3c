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


@pytest.hookimpl(tryfirst=True)   # before -m selects: `-m long_run` takes exactly the long runs
def pytest_collection_modifyitems(config, items):
    """The longest files first (LONGEST_FIRST; a stable sort keeps each file's order). The long runs (the marker
    ``long_run`` on the test; ``long_run(ids=[...])`` for those parametrizations only) run in the thorough profile
    only: skipped otherwise. An id the marker names that no parametrization of its test has is an error, so a
    renamed parametrization cannot leave both profiles unnoticed."""
    items.sort(key=_rank)
    ids_of: dict[str, set] = {}
    for item in items:
        ids_of.setdefault(item.nodeid.split("[")[0], set()).add(getattr(getattr(item, "callspec", None), "id", None))
    for item in items:
        mark = item.get_closest_marker("long_run")
        if mark is None:
            continue
        only = mark.kwargs.get("ids")
        if only is not None:
            unknown = set(only) - ids_of[item.nodeid.split("[")[0]]
            if unknown and not _deselected_by_keyword(config):
                raise pytest.UsageError(f"{item.nodeid.split('[')[0]}: long_run(ids=...) names {sorted(unknown)}, "
                                        "which are not parametrizations of it")
            if getattr(getattr(item, "callspec", None), "id", None) not in only:
                item.own_markers = [m for m in item.own_markers if m.name != "long_run"]
                continue
        if not THOROUGH:
            item.add_marker(pytest.mark.skip(
                reason="a long run: JBODCHECK_PROFILE=thorough (the long_run marker; docs/testing.md)"))


def _deselected_by_keyword(config) -> bool:
    """A node id on the command line collects some parametrizations of a test only (-k and -m deselect after
    this hook, so they leave the check whole)."""
    return any("::" in str(arg) for arg in config.args)
