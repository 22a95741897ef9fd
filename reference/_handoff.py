"""``Handoff``: the unbounded FIFO that carries parts from one task to another, and
``Signal``, the wake-up it (and a stream result's readers) wait on.

An anyio memory stream checkpoints on every ``receive()``, so each part it carries costs
a trip through the event loop even when the next part is already waiting. A hand-off
awaits only when it is empty: a reader drains what is queued without yielding, and one
event (made only when a reader actually waits) wakes it when the next item arrives. The
event is the running loop's own (``asyncio.Event`` or ``trio.Event``, chosen once per
signal): an ``anyio.Event`` finds its backend again on every creation, which costs about
as much as the wait itself.
"""

from __future__ import annotations

import asyncio
import sys
from collections import deque
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

import anyio

__all__ = ["Handoff", "HandoffSink", "Signal"]

T = TypeVar("T")


class _Event(Protocol):
    def set(self) -> None: ...

    async def wait(self) -> object: ...


def _event_type() -> Callable[[], _Event]:
    """The running event loop's event class (trio's inside trio, else asyncio's)."""
    trio = sys.modules.get("trio")
    if trio is not None:
        try:
            trio.lowlevel.current_trio_token()
        except RuntimeError:
            pass  # not inside trio
        else:
            return trio.Event  # type: ignore[no-any-return]
    return asyncio.Event


class Signal:
    """Wakes the tasks waiting in :meth:`wait` when :meth:`fire` is called.

    The event is the running loop's own and is made only when a task actually waits, so a
    fire that nobody waits for costs one attribute test. Waiters loop on their own
    condition: a fire means "look again", not "your condition holds".
    """

    __slots__ = ("_event", "_new_event")

    def __init__(self) -> None:
        self._event: _Event | None = None
        self._new_event: Callable[[], _Event] | None = None

    def fire(self) -> None:
        """Wake every task waiting now (later waiters wait for the next fire)."""
        event = self._event
        if event is not None:
            self._event = None
            event.set()

    async def wait(self) -> None:
        """Wait (cancellably) for the next :meth:`fire`."""
        event = self._event
        if event is None:
            new_event = self._new_event
            if new_event is None:
                new_event = self._new_event = _event_type()
            event = self._event = new_event()
        await event.wait()


class Handoff(Generic[T]):
    """An unbounded FIFO between tasks: ``put`` never blocks, ``get`` waits only when empty.

    After :meth:`close`, queued items are still delivered; then ``get`` raises
    ``anyio.EndOfStream``. Several tasks may wait at once (all wake on a put; one gets the
    item, the others wait again).
    """

    __slots__ = ("_arrived", "_closed", "_items")

    def __init__(self) -> None:
        self._items: deque[T] = deque()
        self._arrived = Signal()
        self._closed = False

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    def __len__(self) -> int:
        return len(self._items)

    def put(self, item: T) -> None:
        """Append ``item`` and wake a waiting reader.

        Raises:
            anyio.ClosedResourceError: the hand-off was closed.
        """
        if self._closed:
            raise anyio.ClosedResourceError
        self._items.append(item)
        self._arrived.fire()

    def push_front(self, items: list[T]) -> None:
        """Re-queue ``items`` (in their order) ahead of everything queued."""
        self._items.extendleft(reversed(items))
        if items:
            self._arrived.fire()

    def close(self) -> None:
        """No more puts; readers get what is queued, then ``anyio.EndOfStream``."""
        self._closed = True
        self._arrived.fire()

    def clear(self) -> None:
        """Drop everything queued."""
        self._items.clear()

    def get_nowait(self) -> T:
        """The next item without waiting.

        Raises:
            anyio.WouldBlock: nothing is queued (and the hand-off is open).
            anyio.EndOfStream: nothing is queued and the hand-off is closed.
        """
        if self._items:
            return self._items.popleft()
        if self._closed:
            raise anyio.EndOfStream
        raise anyio.WouldBlock

    async def get(self) -> T:
        """The next item; waits (cancellably) only while nothing is queued.

        Raises:
            anyio.EndOfStream: the hand-off is closed and empty.
        """
        while not self._items:
            if self._closed:
                raise anyio.EndOfStream
            await self._arrived.wait()
        return self._items.popleft()


class HandoffSink(Generic[T]):
    """An async sink with a synchronous twin, :attr:`put`, and a room check.

    Code that receives a sink may call ``put`` directly when it cannot await (the turn
    engine translating a part inside the adapter's ``emit``), after asking
    ``has_room(n)`` whether ``n`` more items fit: a full sink must get its item through
    the awaited path, where refusing it fails the turn rather than the adapter's emit.
    """

    __slots__ = ("has_room", "put")

    def __init__(
        self, put: Callable[[T], None], has_room: Callable[[int], bool] | None = None
    ) -> None:
        self.put: Callable[[T], None] = put
        self.has_room: Callable[[int], bool] = has_room if has_room is not None else _always

    async def __call__(self, item: T) -> None:
        self.put(item)


def _always(count: int) -> bool:
    return True
