"""From the host's reader thread into the caller's event loop, and back.

A :class:`Port` belongs to one adapter session and the event loop it runs in. Frames the
host sends for that session (a turn's ``emit`` notifications, ``sandbox/*`` requests,
cancellations) are queued by the reader thread and handled, in order, by a server task
in that loop; :func:`call` sends a request and waits for its answer there. Every wake-up
crosses threads with the loop's own thread-safe hook (asyncio's ``call_soon_threadsafe``,
trio's ``run_sync_soon``), so nothing here blocks the reader thread.
"""

from __future__ import annotations

import asyncio
import collections
import contextvars
import threading
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import Any

import anyio

from harness_testkit.spec import (
    HarnessCapabilityUnsupportedError,
    HarnessError,
    HarnessSandboxAuthenticationError,
    HostAdapterError,
    HostProtocolError,
)

from ._host import HostProcess, Outcome

__all__ = ["Port", "call", "raise_outcome", "spawn_detached"]

_DETACHED: set[Any] = set()
#: JSON-RPC's own error codes: the host refused the frame itself, not the adapter.
_PROTOCOL_CODES = {-32700, -32600, -32601, -32602}


def _native_loop() -> object:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        import trio

        return trio.lowlevel.current_trio_token()


def _post(native: object, function: Callable[[], None]) -> None:
    """Run ``function`` soon in the loop behind ``native``; a loop that has ended is fine."""
    try:
        if isinstance(native, asyncio.AbstractEventLoop):
            native.call_soon_threadsafe(function)
        else:
            native.run_sync_soon(function)  # type: ignore[attr-defined]
    except RuntimeError:
        # The loop has ended (asyncio: closed; trio: RunFinishedError is a RuntimeError):
        # nobody is left to wake.
        pass


def spawn_detached(function: Callable[[], Coroutine[Any, Any, None]]) -> None:
    """Run ``function`` in a task of the running loop that no caller waits for (an asyncio
    task, or a trio system task); the loop cancels it when it ends."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        import trio

        trio.lowlevel.spawn_system_task(function, context=contextvars.copy_context())
        return
    task = loop.create_task(function())
    _DETACHED.add(task)
    task.add_done_callback(_DETACHED.discard)


def raise_outcome(outcome: Outcome, method: str, host: HostProcess) -> Any:
    """The outcome's result, or the error it stands for raised as the kit's own class."""
    if outcome.failure is not None:
        raise outcome.failure
    if outcome.error is None:
        return outcome.result
    error = outcome.error
    code = error.get("code")
    message = str(error.get("message", ""))
    raw_data = error.get("data")
    data: dict[str, Any] = raw_data if isinstance(raw_data, dict) else {}
    name = str(data.get("name", "Error"))
    if code in _PROTOCOL_CODES:
        raise HostProtocolError(
            "HOST-005",
            f"{host.label}: the adapter host refused '{method}' (JSON-RPC error {code}): {message}",
        )
    if name == "AI_HarnessCapabilityUnsupportedError":
        raise HarnessCapabilityUnsupportedError(message, harness_id=data.get("harnessId"))
    if name == "AI_HarnessSandboxAuthenticationError":
        raise HarnessSandboxAuthenticationError(
            message, sandbox_provider_id=str(data.get("sandboxProviderId", "unknown"))
        )
    if name == "AI_HarnessError":
        raise HarnessError(message)
    raise HostAdapterError(name, message, data)


class Port:
    """The inbound side of one adapter session in one event loop.

    Args:
        host: The host the session lives in.
        handlers: Method -> async handler of a host request (``sandbox/run``, ...); the
            handler's return value is the result.
        on_emit: Called in the loop, in order, with (turn id, part dict, its ``seq`` or
            ``None``, whether the host keeps an event checkpoint of it) per ``emit``.
    """

    def __init__(
        self,
        host: HostProcess,
        handlers: Mapping[str, Callable[[dict[str, Any]], Awaitable[Any]]],
        on_emit: Callable[[str, dict[str, Any], Any, bool], None],
    ) -> None:
        self._host = host
        self._handlers = dict(handlers)
        self._on_emit = on_emit
        self._lock = threading.Lock()
        self._queue: collections.deque[tuple[int, dict[str, Any]]] = collections.deque()
        self._native: object | None = None
        self._wake = anyio.Event()
        self._routed = 0
        self._handled = 0
        self._handled_event = anyio.Event()
        self._cancels: dict[str, anyio.CancelScope] = {}
        self._closed = False
        self._serving = False

    # -- reader thread side --------------------------------------------------------------

    def put(self, seq: int, frame: dict[str, Any]) -> None:
        """Queue a frame (called on the host's reader thread)."""
        with self._lock:
            self._queue.append((seq, frame))
            if seq:
                self._routed = seq
            native = self._native
        if native is not None:
            _post(native, self._wake.set)

    def routed_through(self) -> int:
        """The sequence number of the last frame queued here."""
        with self._lock:
            return self._routed

    # -- loop side -----------------------------------------------------------------------

    def start(self) -> None:
        """Bind to the running event loop and start serving there (idempotent per loop)."""
        native = _native_loop()
        if self._serving and native is self._native:
            return
        with self._lock:
            self._native = native
        self._wake = anyio.Event()
        self._handled_event = anyio.Event()
        self._serving = True
        spawn_detached(self._serve)
        if self._queue:
            self._wake.set()

    def close(self) -> None:
        """Stop serving (frames still queued are dropped)."""
        self._closed = True
        self._wake.set()

    async def delivered(self, seq: int) -> None:
        """Wait until every frame queued here up to sequence number ``seq`` is handled."""
        while self._handled < seq and not self._closed:
            if not self._serving:
                self.start()
            self._handled_event = event = anyio.Event()
            if self._handled >= seq:
                break
            await event.wait()

    async def _serve(self) -> None:
        try:
            async with anyio.create_task_group() as group:
                while not self._closed:
                    await self._wake.wait()
                    self._wake = anyio.Event()
                    while True:
                        with self._lock:
                            if not self._queue:
                                break
                            seq, frame = self._queue.popleft()
                        self._handle(group, frame)
                        if seq:
                            self._handled = max(self._handled, seq)
                    self._handled_event.set()
                group.cancel_scope.cancel()
        except Exception:  # pragma: no cover - a detached task must never raise
            pass
        finally:
            self._serving = False
            self._handled_event.set()

    def _handle(self, group: anyio.abc.TaskGroup, frame: dict[str, Any]) -> None:
        method = frame.get("method")
        params = frame.get("params") or {}
        if method == "emit":
            part = params.get("part")
            self._on_emit(
                str(params.get("turn")),
                part if isinstance(part, dict) else {},
                params.get("seq"),
                params.get("checkpoint") is True,
            )
            return
        if method == "$/broken":
            self._on_emit("", {"$broken": True}, None, False)
            return
        if method == "$/cancelRequest":
            scope = self._cancels.get(str(params.get("id")))
            if scope is not None:
                scope.cancel()
            return
        if "id" in frame:
            group.start_soon(self._answer, frame)

    async def _answer(self, frame: dict[str, Any]) -> None:
        request_id = frame["id"]
        method = str(frame.get("method"))
        handler = self._handlers.get(method)
        key = f"request:{request_id}"
        if handler is None:
            self._host.respond(
                request_id,
                error={"code": -32601, "message": f"the kit does not serve '{method}'"},
            )
            return
        with anyio.CancelScope() as scope:
            self._cancels[str(request_id)] = scope
            self._host.route(key, self.put)
            try:
                result = await handler(frame.get("params") or {})
            except Exception as error:
                self._host.respond(
                    request_id,
                    error={
                        "code": -32000,
                        "message": str(error) or type(error).__name__,
                        "data": {
                            "name": getattr(error, "name", type(error).__name__),
                            "message": str(error),
                        },
                    },
                )
            else:
                self._host.respond(request_id, result=result)
            finally:
                self._cancels.pop(str(request_id), None)
                self._host.unroute(key)
        if scope.cancelled_caught:
            self._host.respond(
                request_id,
                error={
                    "code": -32800,
                    "message": f"'{method}' was cancelled by the host",
                    "data": {"name": "AbortError", "message": "This operation was aborted"},
                },
            )


async def call(
    host: HostProcess,
    method: str,
    params: Mapping[str, Any],
    *,
    timeout: float,
    port: Port | None = None,
    on_sent: Callable[[int], None] | None = None,
) -> Any:
    """Send a request from the running event loop and wait (at most ``timeout`` s) for it.

    With ``port``, the frames the host sent that session before its answer are handled
    before this returns (a turn's last parts come before its ``done``).

    Raises:
        HostProtocolError: the host died, broke the protocol or did not answer in time.
        HostAdapterError: (or the spec's own class) the error the adapter raised.
    """
    native = _native_loop()
    if port is not None:
        port.start()
    answered = anyio.Event()
    box: list[Outcome] = []
    routed: list[int] = []

    def on_done(outcome: Outcome) -> None:
        # On the reader thread, as the answer is read: the frames routed to the port so
        # far are exactly those the host wrote before its answer.
        routed.append(port.routed_through() if port is not None else 0)
        box.append(outcome)
        _post(native, answered.set)

    request_id = host.request(method, params, on_done)
    if on_sent is not None:
        on_sent(request_id)
    try:
        with anyio.fail_after(timeout):
            await answered.wait()
    except TimeoutError:
        host.forget(request_id)
        raise HostProtocolError(
            "HOST-008",
            f"{host.label}: the adapter host did not answer '{method}' within {timeout:g} s",
        ) from None
    except BaseException:
        # Cancelled by the caller: the host aborts the request's signal too.
        host.forget(request_id)
        raise
    outcome = box[0]
    if port is not None and routed[0]:
        with anyio.fail_after(timeout):
            await port.delivered(routed[0])
    return raise_outcome(outcome, method, host)
