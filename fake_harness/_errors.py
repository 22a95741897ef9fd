"""Errors the fake runtime raises from ``done()`` and from its own API.

::

    HarnessError                         (spec)
     +-- FakeHarnessError                a fake-runtime failure
          +-- FakeHarnessCrashError      the ``crash`` fault fired (done raises it)
          +-- TurnAbortedError           the caller's abort event ended the turn
          +-- ScriptMismatchError        a lifecycle state does not fit the script

Session-state misuse (a call after ``do_detach``, a prompt while a turn is unfinished)
raises the spec's :class:`~harness_testkit.spec.HarnessSessionStateError`; unsupported
capabilities raise :class:`~harness_testkit.spec.HarnessCapabilityUnsupportedError`.
"""

from __future__ import annotations

from harness_testkit.spec import HarnessError

__all__ = [
    "FakeHarnessCrashError",
    "FakeHarnessError",
    "ScriptMismatchError",
    "TurnAbortedError",
]


class FakeHarnessError(HarnessError):
    """A failure of the fake runtime itself (raised by ``done()`` of a failed turn)."""

    name = "AI_FakeHarnessError"


class FakeHarnessCrashError(FakeHarnessError):
    """The scripted ``crash`` fault fired: the runtime died mid-turn.

    You see it from ``done()`` of the turn the fault was scripted on.
    """

    name = "AI_FakeHarnessCrashError"


class TurnAbortedError(FakeHarnessError):
    """The turn's ``abort`` event was set; the runtime stopped and killed its commands.

    ``done()`` of an aborted turn raises it; no ``finish`` part is emitted.
    """

    name = "AI_FakeHarnessTurnAbortedError"


class ScriptMismatchError(FakeHarnessError):
    """A ``continue-turn`` state was produced under another script, seed or profile.

    The continued turn is replayed from the script, so it must be the same one; start
    the session with the script (and seed, profile) that produced the state.
    """

    name = "AI_FakeHarnessScriptMismatchError"
