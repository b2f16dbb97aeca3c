"""The harness's one error type: the harness itself failed (no JVM, a jar not fetched, a broker that would not
start, a wait that timed out), as one line that names the cause."""
from __future__ import annotations


class HarnessError(Exception):
    """One line: what the harness tried, and why it could not."""

    def __init__(self, message: str):
        super().__init__(" ".join(str(message).split()))
