"""Time for the fake runtime: an injectable clock, virtual by default.

The fake harness never reads the wall clock. Every delay it scripts (``delay`` actions,
``delay-part`` faults, user-message wait timeouts) goes through a :class:`Clock`, so
tests run in milliseconds and replay identically.
"""

from __future__ import annotations

from typing import TypeAlias

import anyio
import anyio.lowlevel

from harness_testkit.spec import Clock as _SpecClock

__all__ = ["Clock", "EventLoopClock", "VirtualClock"]


#: The kit's one clock protocol (``harness_testkit.spec.Clock``), under its old name.
Clock: TypeAlias = _SpecClock


class VirtualClock:
    """A clock whose time only moves when the runtime sleeps (the default).

    ``sleep`` advances the time at once and yields to the event loop a single time, so
    scripted delays order events without slowing tests down.

    Args:
        start: The initial time in seconds.
    """

    def __init__(self, start: float = 0.0) -> None:
        self._now = float(start)

    def now(self) -> float:
        """The virtual time."""
        return self._now

    async def sleep(self, seconds: float) -> None:
        """Advance the virtual time by ``seconds`` (negative values count as zero)."""
        self._now += max(0.0, float(seconds))
        await anyio.lowlevel.checkpoint()

    def advance(self, seconds: float) -> None:
        """Move the time forward without sleeping (for tests that steer time).

        Args:
            seconds: How far; negative values are refused.

        Raises:
            ValueError: when ``seconds`` is negative.
        """
        if seconds < 0:
            raise ValueError(f"A virtual clock only moves forward; got {seconds} seconds.")
        self._now += seconds


class EventLoopClock:
    """The event loop's clock: real delays on asyncio, virtual under trio's ``MockClock``.

    Use it for robustness suites that need an agent-side timeout to actually fire while
    the runtime is delayed.
    """

    def now(self) -> float:
        """``anyio.current_time()``."""
        return anyio.current_time()

    async def sleep(self, seconds: float) -> None:
        """``anyio.sleep(seconds)``."""
        await anyio.sleep(max(0.0, seconds))
