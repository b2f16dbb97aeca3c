"""What the CLI reports as "the checker itself failed" (exit code 3), as opposed to a violated property (1)
or bad input (2). Every such failure is one line on stderr, never a traceback (docs/cli.md, exit codes).

Plugin invariants are wrapped (``guard_invariants``) so that an exception in their check does not unwind the
search engine: the wrapped check returns a message starting with ``FAILURE_MARK`` instead, which every engine
records like a violation, with the path that reached the state (across worker processes too). The CLI then
takes such "violations" out of the result and reports a ``CheckerFailure`` naming the invariant, the depth
of the state and a scenario file that reaches it.
"""
from __future__ import annotations

import functools

import attrs


# A message no invariant writes: the first character is a NUL.
FAILURE_MARK = "\x00jbodcheck-checker-failure\x00"
_MAX_DETAIL = 300


class JbodcheckFailure(Exception):
    """The checker itself failed: exit code 3, the message as one line on stderr."""


class CheckerFailure(JbodcheckFailure):
    """An invariant's check raised an exception."""

    def __init__(self, message: str, invariant_id: str | None = None, depth: int | None = None,
                 scenario_path: str | None = None):
        super().__init__(message)
        self.invariant_id, self.depth, self.scenario_path = invariant_id, depth, scenario_path


class OutputError(JbodcheckFailure):
    """An output file (--json, --save-scenario, a failure scenario) could not be written."""


def one_line(error: BaseException) -> str:
    """``Type: message`` on one line, shortened."""
    detail = " ".join(str(error).split())
    text = f"{type(error).__name__}: {detail}" if detail else type(error).__name__
    return text if len(text) <= _MAX_DETAIL else text[:_MAX_DETAIL - 3] + "..."


def is_plugin(inv) -> bool:
    """An invariant registered by a plugin rather than by the built-in ``invariants`` package."""
    module = getattr(inv.check, "__module__", "") or ""
    return not (module == "invariants" or module.startswith("invariants."))


def guarded_check(check):
    """``check`` with any exception turned into a FAILURE_MARK message (see the module docstring): also
    SystemExit (``sys.exit()`` in a plugin must not end the run as if it had passed) and a KeyboardInterrupt
    the check raised itself. A real interrupt (SIGINT, or SIGTERM's SearchInterrupted) and MemoryError go on."""
    from invariants.plugins import sigints_received

    from .core import SearchInterrupted

    @functools.wraps(check)
    def guarded(*args):
        sigints = sigints_received()
        try:
            return check(*args)
        except (SearchInterrupted, MemoryError):
            raise
        except KeyboardInterrupt as e:
            if sigints_received() != sigints:
                raise
            return FAILURE_MARK + one_line(e)
        except BaseException as e:  # noqa: BLE001 - a plugin's bug, reported as the checker's failure
            return FAILURE_MARK + one_line(e)

    guarded.jbodcheck_guarded = True
    if hasattr(check, "member_check"):      # a per-member check (model/spec/engine.py): the Checker calls it per member
        guarded.member_check = guarded_check(check.member_check)
        guarded.members, guarded.combine = check.members, check.combine
    return guarded


def guard_invariants(invariants: list) -> list:
    """The invariants with every plugin invariant's check guarded; built-in ones are left as they are (their
    per-broker memoisation relies on attributes of the check, and an exception in them is an internal error)."""
    from invariants.plugins import install_sigint_counter

    install_sigint_counter()
    return [attrs.evolve(inv, check=guarded_check(inv.check))
            if is_plugin(inv) and not getattr(inv.check, "jbodcheck_guarded", False) else inv
            for inv in invariants]


def is_failure(message: str | None) -> bool:
    return isinstance(message, str) and message.startswith(FAILURE_MARK)


def failure_detail(message: str) -> str:
    return message[len(FAILURE_MARK):]
