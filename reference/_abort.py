"""The turn's abort signal: an ``anyio.Event`` that also tells its listeners when it is set.

A turn's reader waits on the part queue, and an abort must wake it. With a plain
``anyio.Event`` that takes a watcher task per slice (one task, one cancel scope and one
cancellation per turn, a measurable share of a short turn). When the caller gives no
abort event, the session makes an :class:`AbortSignal` instead: whoever sets it (the
caller through the result, a deadline, the adapter, a tool) wakes the reader directly.
An event the caller passed in is still watched by a task.
"""

from __future__ import annotations

from collections.abc import Callable

import anyio

__all__ = ["AbortSignal"]


class AbortSignal(anyio.Event):
    """An ``anyio.Event`` (``isinstance`` holds) that calls its listeners once, when set."""

    def __new__(cls) -> AbortSignal:
        # anyio.Event.__new__ returns the backend's own class; this one wraps it.
        return object.__new__(cls)

    def __init__(self) -> None:
        self._event = anyio.Event()
        self._listeners: list[Callable[[], None]] = []

    def listen(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call ``listener`` when the signal is set (at once if it already is).

        Returns:
            A function that removes the listener (a no-op once it has been called).
        """
        if self._event.is_set():
            listener()
            return _nothing
        self._listeners.append(listener)

        def remove() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return remove

    def set(self) -> None:
        """Set the signal and call every listener (each once)."""
        if self._event.is_set():
            return
        self._event.set()
        listeners, self._listeners = self._listeners, []
        for listener in listeners:
            listener()

    def is_set(self) -> bool:
        """Whether the signal was set."""
        return self._event.is_set()

    async def wait(self) -> None:
        """Wait until the signal is set."""
        await self._event.wait()

    def statistics(self) -> anyio.EventStatistics:
        """The wrapped event's statistics (tasks waiting)."""
        return self._event.statistics()


def _nothing() -> None:
    pass
