"""Tasks no caller waits for: the eager slice and the adapter's ``done()`` watcher."""

from __future__ import annotations

import asyncio
import contextvars
import sys
from collections.abc import Callable, Coroutine
from typing import Any

__all__ = ["spawn_detached"]

_DETACHED: set[Any] = set()


def spawn_detached(function: Callable[[], Coroutine[Any, Any, None]]) -> None:
    """Start ``function`` in a task no caller waits for (trio system task or asyncio task).

    ``function`` must not raise (a trio system task that raises crashes the run); it is
    cancelled when the event loop shuts down. Used for work that outlives the call that
    started it: a slice runs whether or not anyone reads its result, and ``done()`` of an
    adapter that ignores cancellation keeps running there while the turn ends on time.
    """
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        # Not inside asyncio: trio (the other backend anyio runs on). As asyncio's tasks,
        # the task sees the caller's context variables.
        trio = sys.modules.get("trio")
        try:
            if trio is None:
                raise RuntimeError
            trio.lowlevel.current_trio_token()  # raises outside trio (any trio version)
        except RuntimeError:
            raise RuntimeError(
                "spawn_detached needs a running asyncio or trio event loop"
            ) from None
        trio.lowlevel.spawn_system_task(function, context=contextvars.copy_context())
        return
    # asyncio keeps weak references only: the set holds the task until it ends, and a
    # done callback takes it out. (Not a coroutine of ours around ``function``, which the
    # task would step through every time it resumes: once per part for done()'s task.
    # The callback is a built-in method: the task's repr, which anyio formats into the
    # reason of a cancel() made in the task, looks up no source for it.)
    task: asyncio.Task[None] = loop.create_task(function())
    _DETACHED.add(task)
    task.add_done_callback(_DETACHED.discard)
