"""The scripting extension: how a conformance suite drives an adapter through a script.

The fake harness implements it; a real adapter with a scriptable model (a replay
proxy, a stub model server) can implement the same two members and run the suites that
need scripted behaviour.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from ._observations import ObservationLog
from ._script import Script

__all__ = ["ScriptableHarness", "is_scriptable"]


@runtime_checkable
class ScriptableHarness(Protocol):
    """An adapter whose model can be scripted and whose runtime can be observed.

    ``set_script(script)`` affects sessions started afterwards; ``observations`` logs
    what the runtime received (start options, turn settings, submissions) and did
    (executions, approvals asked, compactions, lifecycle events).
    """

    def set_script(self, script: Script) -> None:
        """Use ``script`` for sessions started from now on."""
        ...

    @property
    def observations(self) -> ObservationLog:
        """The observation log."""
        ...


def is_scriptable(adapter: object) -> bool:
    """Whether ``adapter`` offers the scripting extension."""
    return isinstance(adapter, ScriptableHarness)
