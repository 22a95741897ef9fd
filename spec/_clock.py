"""The one clock protocol of the kit: read the time and wait for it.

The fake runtime (``fake_harness.Clock``) and the workflow runners
(``reference.WorkflowClock``) take any object with these two methods, so one virtual
clock can drive both and timeouts and slices are testable in milliseconds.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

__all__ = ["Clock"]


@runtime_checkable
class Clock(Protocol):
    """Time as the kit needs it: read it and wait for it."""

    def now(self) -> float:
        """Return the current time in seconds (any epoch; only differences matter)."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Wait ``seconds``; must be cancellable (an abort interrupts it)."""
        ...
