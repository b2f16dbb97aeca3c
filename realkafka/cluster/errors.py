"""The harness's errors: the harness itself failed (no JVM, a jar not fetched, a broker that would not start, a
wait that timed out), as one line that names the cause; and the two of them that are the user's input, not the
harness (``bad_input``: exit 2 from the CLI): a release Maven does not serve, a cache that cannot be used."""
from __future__ import annotations


class HarnessError(Exception):
    """One line: what the harness tried, and why it could not."""

    bad_input = False

    def __init__(self, message: str):
        super().__init__(" ".join(str(message).split()))


class BadRelease(HarnessError):
    """No such Kafka release: the registry does not serve it."""

    bad_input = True


class UnusableCache(HarnessError):
    """The Kafka cache (``$JBODCHECK_KAFKA_CACHE``) is not a directory where files can be written."""

    bad_input = True
