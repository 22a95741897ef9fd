"""The runtime thread: an event loop of its own where the CLI processes of a session run.

A turn's CLI process must keep running while no ``done()`` is awaited (between the
slices of a turn paused for host input), so it cannot live in a task of the caller's
event loop. Each session gets one thread with a blocking portal (asyncio) for it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from typing import Any

import anyio
from anyio.from_thread import BlockingPortal, start_blocking_portal

__all__ = ["RuntimeThread"]


class RuntimeThread:
    """One event-loop thread; :meth:`close` cancels what still runs and joins it."""

    def __init__(self) -> None:
        self._stack = contextlib.ExitStack()
        self._portal: BlockingPortal | None = None
        self._futures: list[Future[Any]] = []

    @classmethod
    async def open(cls) -> RuntimeThread:
        """Start the thread (its loop is running when this returns)."""
        runner = cls()
        runner._portal = await anyio.to_thread.run_sync(
            runner._stack.enter_context, start_blocking_portal("asyncio")
        )
        return runner

    def start(self, function: Callable[..., Awaitable[Any]], *args: Any) -> None:
        """Run ``function(*args)`` on the thread's loop (returns at once)."""
        if self._portal is None:
            raise RuntimeError("the runtime thread is closed")
        self._futures = [future for future in self._futures if not future.done()]
        self._futures.append(self._portal.start_task_soon(function, *args))

    async def close(self) -> None:
        """Cancel running work and stop the thread."""
        portal, self._portal = self._portal, None
        if portal is None:
            return
        for future in self._futures:
            future.cancel()
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(self._stack.close)
