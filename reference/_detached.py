"""Tasks no caller waits for (the eager slice and the adapter's ``done()`` watcher), the
cancel scope that watcher runs ``done()`` in, and the abort event a turn hands its adapter."""

from __future__ import annotations

import asyncio
import contextvars
import sys
from collections.abc import Callable, Coroutine
from types import TracebackType
from typing import Any, Protocol

import anyio

__all__ = ["DetachedScope", "detached_scope", "new_event", "spawn_detached"]

_DETACHED: set[Any] = set()


def spawn_detached(function: Callable[[], Coroutine[Any, Any, None]]) -> None:
    """Start ``function`` in a task no caller waits for (trio system task or asyncio task).

    ``function`` must not raise (a trio system task that raises crashes the run); it is
    cancelled when the event loop shuts down. Used for work that outlives the call that
    started it: a slice runs whether or not anyone reads its result, and ``done()`` of an
    adapter that ignores cancellation keeps running there while the turn ends on time.
    """
    loop = asyncio._get_running_loop()  # the C accessor: no exception outside asyncio
    if loop is None:
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
    # task would step through every time it resumes: once per part for done()'s task,
    # about 3% of a text-heavy turn. The callback is a built-in method: the task's repr,
    # which anyio formats into the reason of a cancel() made in the task, looks up no
    # source for it.)
    task: asyncio.Task[None] = loop.create_task(function())
    _DETACHED.add(task)
    task.add_done_callback(_DETACHED.discard)


class DetachedScope(Protocol):
    """What the ``done()`` watcher uses of a cancel scope."""

    def cancel(self) -> None: ...

    def __enter__(self) -> object: ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> bool | None: ...


#: anyio's cancel scope class for asyncio, once one was made (``anyio.CancelScope()``
#: looks its backend up on every call, which costs as much as the rest of the scope).
_asyncio_scope: Callable[[], DetachedScope] | None = None


def detached_scope() -> DetachedScope:
    """A cancel scope for the running backend: anyio's under asyncio (where it is anyio's
    own implementation), trio's under trio (anyio's is a thin wrapper around trio's, which
    costs about 3 us more a turn to make and enter). Call it inside the event loop."""
    global _asyncio_scope
    if asyncio._get_running_loop() is None:
        trio = sys.modules.get("trio")
        if trio is not None:
            scope: DetachedScope = trio.CancelScope()
            return scope
        return anyio.CancelScope()  # raises: no event loop
    if _asyncio_scope is None:
        made = anyio.CancelScope()
        _asyncio_scope = type(made)
        return made
    return _asyncio_scope()


#: anyio's event classes, once one was made on each backend (``anyio.Event()`` looks its
#: backend up on every call: about 0.9 us under asyncio against 0.3 us for the class
#: itself; under trio it also builds the wrapped ``trio.Event`` twice: 0.87 us against 0.44).
_asyncio_event: Callable[[], anyio.Event] | None = None
_trio_event: Callable[[], anyio.Event] | None = None


def new_event() -> anyio.Event:
    """``anyio.Event()`` for the running backend, made from anyio's class for that
    backend directly once one was made (the same kind of object anyio makes). Call it
    inside the event loop."""
    global _asyncio_event, _trio_event
    if asyncio._get_running_loop() is None:
        if _trio_event is None:
            made = anyio.Event()  # raises outside any event loop
            _trio_event = type(made)
            return made
        return _trio_event()
    if _asyncio_event is None:
        made = anyio.Event()
        _asyncio_event = type(made)
        return made
    return _asyncio_event()
