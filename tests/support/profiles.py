"""Hypothesis settings profiles for the test suite, chosen with JBODCHECK_PROFILE (docs/testing.md).

- ``ci`` (the default): fast and deterministic: derandomized, no example database, modest example counts;
  the invariant suite exhausts the tiny preset under every variant and checks that small-kip112-no-isnew-check is caught.
- ``thorough``: many long Hypothesis runs with fresh randomness, and the invariant suite exhausts every preset
  (tiny, small, medium) under every variant, reporting every violated invariant: over 20 minutes on 2 cores.
  Documented, not run in CI.
"""
from __future__ import annotations

import os

from hypothesis import HealthCheck, Phase, settings

PROFILE_ENV = "JBODCHECK_PROFILE"
PROFILES = ("ci", "thorough")

_COMMON = dict(
    database=None, deadline=None, print_blob=False,
    # No explain phase: it re-runs the failing example under a tracer (slow); the rendered trace says more.
    phases=(Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)
settings.register_profile("ci", derandomize=True, max_examples=40, stateful_step_count=50, **_COMMON)
settings.register_profile("thorough", max_examples=1000, stateful_step_count=200, **_COMMON)


def profile_name() -> str:
    return os.environ.get(PROFILE_ENV, "ci").strip() or "ci"


PROFILE = profile_name()
THOROUGH = PROFILE == "thorough"
