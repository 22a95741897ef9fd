"""The runtime thread: an event loop of its own where the CLI processes of a session run.

A turn's CLI process must keep running while no ``done()`` is awaited (between the
slices of a turn paused for host input), so it cannot live in a task of the caller's
event loop. Each session gets one thread with a blocking portal (asyncio) for it.
"""

from __future__ import annotations

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

    @classmethod
    async def open(cls) -> RuntimeThread:
        """Start the thread (its loop is running when this returns)."""
        runner = cls()
        ready: Future[BlockingPortal] = Future()

        async def serve() -> None:
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
