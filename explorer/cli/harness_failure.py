"""What a real-cluster run's harness failure is for a command (reproduce in either controller mode): one line,
bad input or the tool's failure."""
from __future__ import annotations

from explorer.errors import JbodcheckFailure, one_line

from .exits import BadInput


def harness_failure(e: Exception) -> Exception:
    """What a real run's harness failure is for the command (either controller mode): bad input where the harness
    says so (no such release, an unusable cache), else the tool's failure (exit 3), in one line; a node that ended
    unasked says the run says nothing about Kafka."""
    text = " ".join(str(e).split()) or one_line(e)
    if getattr(e, "bad_input", False):
        return BadInput(str(e))
    if type(e).__name__ == "NodeDied":
        return JbodcheckFailure(f"a node of the cluster ended without jbodcheck ending it, so the run says nothing "
                                f"about Kafka: {text}")
    if type(e).__name__ == "TooManyCandidates":
        return JbodcheckFailure(str(e))
    return JbodcheckFailure(f"the real cluster failed: {text}")
