"""Test-suite setup: users' plugins named by JBODCHECK_PLUGINS are loaded before collection (helpers.PLUGINS,
invariants/plugins.py), so the invariant suite builds its models with them and checks their invariants too."""
from __future__ import annotations

import invariants

import helpers

helpers.PLUGINS = invariants.load_plugins((), env=True)

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
