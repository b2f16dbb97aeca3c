"""KRaft mode's features two by two (tests/kraft/test_kraft_combinations.py explores the pairs, tests/kraft/test_fixes.py
checks the fixes on them): how a configuration turns each feature on, and the pairs."""
from __future__ import annotations

import itertools

from explorer.catalog import preset_config

# feature -> how a configuration turns it on (kraft-tiny-faults' cluster: no record, which deletion needs;
# reassignment with records has its own pairs below; mv-upgrade needs one dir per broker, so it has its own preset
# and is left out here).
TURN_ON = {
    "kraft-deletion": dict(deletion=True),
    "kraft-reassignment": dict(reassignment=True, rf=1),   # a broker outside the assignment to add
    "kraft-future": dict(options={"alter_log_dirs": 1}),
    "kraft-sessions": dict(options={"max_lost_heartbeats": 1, "max_session_expiries": 1}),
    "kraft-shutdown": dict(options={"max_controlled_shutdowns": 1}),
    "kraft-saturation": dict(saturation=True, saturation_recovery="restart", dir_capacity=2, max_saturations=1),
    # ELR is on at the default release (4.4); min ISR 2 makes a broker that leaves the ISR join the ELR (with min
    # ISR 1 it fills only when the ISR empties). The other pairs turn it off: each pair is two features.
    "kraft-elr": dict(min_isr=2),
}
# kraft-future with saturation is refused (a -future log takes no space: tests/kraft/test_kraft_future.py).
REFUSED = {("kraft-future", "kraft-saturation")}
PAIRS = [pair for pair in itertools.combinations(TURN_ON, 2) if pair not in REFUSED]


def pair_config(a: str, b: str, **extra):
    """kraft-tiny-faults with one fault and features ``a`` and ``b`` on (ELR off unless it is one of them)."""
    params = {**TURN_ON[a], **TURN_ON[b], **extra}
    params["options"] = {**TURN_ON[a].get("options", {}), **TURN_ON[b].get("options", {})}
    if "kraft-elr" not in (a, b):
        params["options"]["elr"] = False
    elif params.get("rf") == 1:   # min ISR is at most RF: with RF 1 the fencing empties the ISR into the ELR
        params.pop("min_isr")
    return preset_config("kraft-tiny-faults", max_faults=1, **params)
