"""Test-suite setup: users' invariant plugins named by JBODCHECK_PLUGINS join the registry before the tests
import it (invariants/plugins.py), so the search and scenario tests check them too."""
from __future__ import annotations

import invariants

_load = getattr(invariants, "load_plugins", None)
if _load is not None:
    _load((), env=True)

# Hypothesis settings profiles (tests/profiles.py, docs/testing.md): JBODCHECK_PROFILE=ci (default) | thorough.
import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

from profiles import PROFILE, PROFILE_ENV, PROFILES  # noqa: E402


def pytest_configure(config):
    if PROFILE not in PROFILES:
        raise pytest.UsageError(f"{PROFILE_ENV}={PROFILE!r} is not a profile (known: {', '.join(PROFILES)})")
    settings.load_profile(PROFILE)


def pytest_report_header(config):
    plugins = ", ".join(invariants.plugins.env_plugins()) or "none"
    return f"jbodcheck: Hypothesis profile {PROFILE} ({PROFILE_ENV}); invariant plugins (JBODCHECK_PLUGINS): {plugins}"
