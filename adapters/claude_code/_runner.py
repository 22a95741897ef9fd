"""The runtime thread: an event loop of its own where the CLI processes of a session run.

A turn's CLI process must keep running while no ``done()`` is awaited (between the
slices of a turn paused for host input), so it cannot live in a task of the caller's
event loop. Each session gets one thread with a blocking portal (asyncio) for it.

Work on the thread that waits for the host (an approval, a host tool's result, a stop
request) waits in :meth:`RuntimeThread.wait_until`, which the writer wakes with
:meth:`RuntimeThread.notify` from either thread: no polling.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from typing import Any

import anyio
from anyio.from_thread import BlockingPortal

__all__ = ["RuntimeThread"]

#: How long starting or stopping the thread may take (seconds).
_JOIN_TIMEOUT = 30.0


class RuntimeThread:
    """One event-loop thread; :meth:`close` cancels what still runs and joins it.

    The thread is a daemon: a session its owner never destroyed must not keep the Python
    process alive at exit (the portal's own worker threads are joined at exit).
    """

    def __init__(self) -> None:
        self._portal: BlockingPortal | None = None
        self._thread: threading.Thread | None = None
        self._futures: list[Future[Any]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        # asyncio's own event: the thread's loop is asyncio whatever the caller runs, and
        # a callback posted from a trio caller would make anyio pick trio's.
        self._changed: asyncio.Event | None = None

    @classmethod
    async def open(cls) -> RuntimeThread:
        """Start the thread (its loop is running when this returns)."""
        runner = cls()
        ready: Future[BlockingPortal] = Future()

        async def serve() -> None:
            runner._loop = asyncio.get_running_loop()
            runner._changed = asyncio.Event()
            async with BlockingPortal() as portal:
                ready.set_result(portal)
                await portal.sleep_until_stopped()

        def run() -> None:
            try:
                anyio.run(serve, backend="asyncio")
            except BaseException as error:  # reported to the opener
                if not ready.done():
                    ready.set_exception(error)

        runner._thread = threading.Thread(target=run, name="claude-code-runtime", daemon=True)
        runner._thread.start()
        runner._portal = await anyio.to_thread.run_sync(ready.result, _JOIN_TIMEOUT)
        return runner

    def start(self, function: Callable[..., Awaitable[Any]], *args: Any) -> None:
        """Run ``function(*args)`` on the thread's loop (returns at once)."""
        if self._portal is None:
            raise RuntimeError("the runtime thread is closed")
        self._futures = [future for future in self._futures if not future.done()]
        self._futures.append(self._portal.start_task_soon(function, *args))

    def notify(self) -> None:
        """Wake :meth:`wait_until` waiters to re-check their condition (any thread)."""
        loop = self._loop
        if loop is None:
            return
        if threading.current_thread() is self._thread:
            self._bump()
        else:
            # A loop that already stopped has no waiters left.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._bump)

    def _bump(self) -> None:
        changed, self._changed = self._changed, asyncio.Event()
        if changed is not None:
            changed.set()

    async def wait_until(
        self, predicate: Callable[[], bool], timeout: float | None, *, recheck: float | None = None
    ) -> bool:
        """Wait on the thread's loop until ``predicate()`` holds (``False``: timed out).

        The condition is re-checked after each :meth:`notify`, and every ``recheck``
        seconds when given (for a condition no notify reports).
        """
        with anyio.move_on_after(timeout):
            while True:
                # Taken before the check: a notify after it sets this very event.
                changed = self._changed
                if predicate():
                    return True
                assert changed is not None
                with anyio.move_on_after(recheck):
                    await changed.wait()
        return False

    async def close(self) -> None:
        """Cancel running work and stop the thread (bounded: a stuck loop is left)."""
        portal, self._portal = self._portal, None
        thread, self._thread = self._thread, None
        if portal is None or thread is None:
            return
        for future in self._futures:
            future.cancel()

        def stop() -> None:
            with contextlib.suppress(RuntimeError):
                portal.call(portal.stop, True)
            thread.join(_JOIN_TIMEOUT)

        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(stop)
