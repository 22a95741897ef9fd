"""``Handoff``: the unbounded FIFO that carries parts from one task to another, and
``Signal``, the wake-up it (and a stream result's readers) wait on.

An anyio memory stream checkpoints on every ``receive()``, so each part it carries costs
a trip through the event loop even when the next part is already waiting. A hand-off
awaits only when it is empty: a reader drains what is queued without yielding, and a
signal wakes it when the next item arrives. A signal parks its waiters on the running
loop's own primitives (an asyncio future, a trio task): an ``anyio.Event`` finds its
backend again on every creation.
"""

from __future__ import annotations

import asyncio
import functools
import sys
from collections import deque
from collections.abc import Awaitable, Callable, Sized
from typing import Any, Generic, TypeVar

import anyio

__all__ = ["Flag", "Handoff", "HandoffSink", "Signal"]

T = TypeVar("T")


#: The fewest waiters at which :meth:`Signal.wait` drops the cancelled ones (without a
#: fire between, repeated cancelled waits would otherwise pile up).
_PRUNE_AT = 8


def _is_done(waiter: Any) -> bool:
    """Whether a waiter is gone: a finished asyncio future (trio waiters remove
    themselves when cancelled)."""
    return isinstance(waiter, asyncio.Future) and waiter.done()


class Signal:
    """Wakes the tasks waiting in :meth:`wait` when :meth:`fire` is called.

    Each waiter parks on the running loop's cheapest primitive: under asyncio a bare
    future of its own (an ``asyncio.Event`` makes the same future behind two more calls),
    under trio the task itself (``wait_task_rescheduled``, what ``trio.Event`` does behind
    a parking lot). A fire that nobody waits for costs two attribute tests. Waiters loop
    on their own condition: a fire means "look again", not "your condition holds".
    """

    __slots__ = ("_trio", "_waiters")

    def __init__(self) -> None:
        # Made when a task first waits (a turn makes several signals; most never wait).
        self._waiters: list[Any] | None = None
        self._trio = False

    def fire(self) -> None:
        """Wake every task waiting now (later waiters wait for the next fire)."""
        waiters = self._waiters
        if waiters:
            self._waiters = None
            if self._trio:
                reschedule = _trio_lowlevel().reschedule
                for task in waiters:
                    reschedule(task)
                return
            for future in waiters:
                if not future.done():
                    future.set_result(None)

    def wait(self) -> Awaitable[None]:
        """An awaitable (cancellable) that completes at the next :meth:`fire`.

        Under asyncio it is the waiter's future itself (no coroutine in between: readers
        wait once per part). A cancelled waiter's future is cancelled with it, so a fire
        skips it; the cancelled ones are dropped at the next fire, or here once a few
        have piled up without one. Under trio it is trio's own wait for the task, which
        is registered by this call: await the result at once.
        """
        waiters = self._waiters
        if waiters is None:
            waiters = self._waiters = []
        elif len(waiters) >= _PRUNE_AT and not len(waiters) & (len(waiters) - 1):
            # At 8, 16, 32... waiters: amortized constant time with many live ones.
            waiters[:] = [waiter for waiter in waiters if not _is_done(waiter)]
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._trio = True
            return _trio_wait(waiters)
        future: asyncio.Future[None] = loop.create_future()
        waiters.append(future)
        return future


def _trio_wait(waiters: list[Any]) -> Awaitable[None]:
    """Park the current trio task among ``waiters``: trio's own wait, with no coroutine
    of ours around it (the caller awaits it at once, as every ``await signal.wait()``
    does: a fire reschedules the task it registered)."""
    lowlevel = _trio_lowlevel()
    task = lowlevel.current_task()
    waiters.append(task)
    wait: Awaitable[None] = lowlevel.wait_task_rescheduled(
        functools.partial(_trio_abort, waiters, task)
    )
    return wait


def _trio_abort(waiters: list[Any], task: Any, raise_cancel: object) -> Any:
    # Called only while the task still waits, so fire has not taken it.
    waiters.remove(task)
    return _trio_lowlevel().Abort.SUCCEEDED


def _trio_lowlevel() -> Any:
    """``trio.lowlevel`` (trio is running: a signal is waited for under trio; not imported
    at file level, as trio is an optional backend)."""
    return sys.modules["trio"].lowlevel


class Flag:
    """A one-shot event for the turn's own bookkeeping (``set``, ``is_set``, ``wait``).

    What ``anyio.Event`` does, on a :class:`Signal`: no backend lookup when it is made
    (a slice makes several, and most are never waited for). ``wait`` returns at once,
    without a checkpoint, when the flag is already set.
    """

    __slots__ = ("_set", "_signal")

    def __init__(self, value: bool = False) -> None:
        self._set = value
        self._signal = Signal()

    def set(self) -> None:
        """Set the flag and wake every task waiting for it."""
        if not self._set:
            self._set = True
            self._signal.fire()

    def is_set(self) -> bool:
        """Whether :meth:`set` was called."""
        return self._set

    async def wait(self) -> None:
        """Wait (cancellably) until the flag is set."""
        while not self._set:
            await self._signal.wait()


class Handoff(Generic[T]):
    """An unbounded FIFO between tasks: ``put`` never blocks, ``get`` waits only when empty.

    After :meth:`close`, queued items are still delivered; then ``get`` raises
    ``anyio.EndOfStream``. Several tasks may wait at once (all wake on a put; one gets the
    item, the others wait again).
    """

    __slots__ = ("_arrived", "_closed", "_items", "queued")

    def __init__(self) -> None:
        self._items: deque[T] = deque()
        #: The queued items themselves, for a cheap emptiness test on a hot path (read
        #: only: change them through the methods).
        self.queued = self._items
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
    A bounded sink names what it fills (:attr:`log`, the items put so far) and how many
    it takes (:attr:`capacity`), so a hot path can make the same check without a call.
    """

    __slots__ = ("capacity", "log", "put")

    def __init__(
        self, put: Callable[[T], None], log: Sized | None = None, capacity: int = 0
    ) -> None:
        self.put: Callable[[T], None] = put
        #: What ``put`` appends to (``None``: unbounded), and the most it may hold.
        self.log = log
        self.capacity = capacity

    def has_room(self, count: int) -> bool:
        """Whether ``count`` more items fit."""
        return self.log is None or len(self.log) + count <= self.capacity

    async def __call__(self, item: T) -> None:
        self.put(item)
