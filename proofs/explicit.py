"""The explicit side of KIP-112's proofs: for each z3 property and lemma, the explicit invariant with the same
statement, taken from where it is defined (invariants/), not from what a design claims. The conformance check
(proofs/conformance.py) compares each pair on every reachable state, and on states beyond them (proofs/beyond.py),
whichever design's model it checks: a design that does not claim an invariant (e.g. ``kip112`` and
``no_recreate_over_offline_copy``) still has it evaluated."""
from __future__ import annotations

from invariants.storage.safety import (
    create_only_on_good_dir, no_recreate_with_bad_dir, no_serving_from_offline_dir, offline_broker_serves_nothing,
)
from invariants.zk.designs import no_recreate_over_offline_copy
from invariants.zk.lemmas import LEMMAS

# z3 property id (proofs/properties.py PROPERTIES) -> its explicit invariant (the same id)
PROPERTIES = {check.invariant.id: check.invariant for check in (
    no_recreate_with_bad_dir, create_only_on_good_dir, no_recreate_over_offline_copy, no_serving_from_offline_dir,
    offline_broker_serves_nothing)}

__all__ = ["PROPERTIES", "LEMMAS"]
