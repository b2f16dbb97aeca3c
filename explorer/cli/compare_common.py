"""What `jbodcheck compare` and `jbodcheck compare --fixes` (explorer/cli/compare_fixes.py) share."""
from __future__ import annotations

import os

from explorer.errors import OutputError

# The data path's invariants: vacuous on a configuration without a record.
DATA_INVARIANTS = ("no_acked_record_lost", "isr_logs_agree_below_hw", "consumer_sees_no_loss_or_duplicate",
                   "reads_below_hw_are_committed")


def make_directory(path: str) -> None:
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise OutputError(f"cannot write the scenarios to {path}: {e.strerror or e}") from None


def interrupted_note(data: dict, what: str) -> list[str]:
    """The Markdown lines that say a comparison a signal stopped is partial (none when it was not stopped)."""
    if not data.get("signal"):
        return []
    return [f"**Interrupted** (signal {data['signal']}): {what} is partial; the cells marked interrupted or not "
            f"reached were not checked.", ""]
