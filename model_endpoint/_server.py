"""``ModelEndpoint``: the scripted model served over real HTTP on ``127.0.0.1``.

uvicorn runs the application on its own asyncio loop in a dedicated thread, so the
endpoint works the same from synchronous code, under asyncio and under trio. The socket
is bound before the thread starts (the port is known at once); every start and stop wait
has a timeout; stopping closes the socket and joins the thread.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from types import TracebackType
from typing import Self

import anyio

from harness_testkit.spec import MissingExtraError

try:
    import starlette  # noqa: F401  (imported here only to name the missing extra)
    import uvicorn
except ImportError as missing:  # tests/test_packaging.py runs this without the extra
    raise MissingExtraError(
        "The scripted model endpoint", "model-endpoint", missing=missing.name
    ) from missing

from ._app import StreamCutError, build_app
from ._engine import Engine
from ._records import EndpointError, RecordedRequest, UnforeseenRequestError
from ._script import EndpointScript

__all__ = ["ModelEndpoint"]

_HOST = "127.0.0.1"


def _is_stream_cut(error: BaseException | None) -> bool:
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, StreamCutError):
            return True
        if isinstance(error, BaseExceptionGroup):
            return any(_is_stream_cut(inner) for inner in error.exceptions)
        error = error.__cause__ or error.__context__
    return False


class _HideScriptedCuts(logging.Filter):
    """Drops uvicorn's "Exception in ASGI application" record for scripted cuts."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and _is_stream_cut(record.exc_info[1]))


def _install_log_filter() -> None:
    logger = logging.getLogger("uvicorn.error")
    if not any(isinstance(f, _HideScriptedCuts) for f in logger.filters):
        logger.addFilter(_HideScriptedCuts())


class ModelEndpoint:
    """A scripted model endpoint on ``127.0.0.1``, for the duration of a ``with`` block.

    Use it as a context manager, synchronous (``with ModelEndpoint(script) as ep:``) or
    asynchronous (``async with``, on asyncio or trio); or call :meth:`start` and
    :meth:`stop`. Point a runtime at :attr:`base_url` (Anthropic) or
    :attr:`openai_base_url` (OpenAI SDKs, which expect the ``/v1`` prefix).

    Args:
        script: What to answer (``None``: an empty script; every request is unforeseen).
        port: TCP port (0, the default: any free port).
        raise_on_error: On leaving the ``with`` block normally, raise
            :class:`UnforeseenRequestError` if any request got an endpoint error
            (unforeseen, invalid, unknown route).
        start_timeout: Seconds to wait for the server to accept connections.
        stop_timeout: Seconds to wait for the server thread to finish (open streams are
            cancelled after half of it).
    """

    def __init__(
        self,
        script: EndpointScript | None = None,
        *,
        port: int = 0,
        raise_on_error: bool = False,
        start_timeout: float = 10.0,
        stop_timeout: float = 10.0,
    ) -> None:
        if not 0 <= port <= 65535:
            raise ValueError(f"port must be between 0 and 65535, got {port}")
        self._engine = Engine(script if script is not None else EndpointScript())
        self._requested_port = port
        self._raise_on_error = raise_on_error
        self._start_timeout = start_timeout
        self._stop_timeout = stop_timeout
        self._socket: socket.socket | None = None
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._failure: BaseException | None = None
        self._port: int | None = None

    # -- what tests read ----------------------------------------------------------------

    @property
    def port(self) -> int:
        """The bound port. Raises ``RuntimeError`` before :meth:`start`."""
        if self._port is None:
            raise RuntimeError("the model endpoint is not running; use it in a `with` block")
        return self._port

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>`` (``ANTHROPIC_BASE_URL``)."""
        return f"http://{_HOST}:{self.port}"

    @property
    def openai_base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1`` (``OPENAI_BASE_URL``)."""
        return f"{self.base_url}/v1"

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every model request received so far, in order (a copy)."""
        return self._engine.requests

    @property
    def errors(self) -> list[EndpointError]:
        """Every request answered with an endpoint error instead of a scripted reply."""
        return self._engine.errors

    def set_script(self, script: EndpointScript) -> None:
        """Serve ``script`` from its first reply on (records and errors are kept)."""
        self._engine.set_script(script)

    def check(self) -> None:
        """Raise :class:`UnforeseenRequestError` if any request got an endpoint error."""
        errors = self.errors
        if errors:
            raise UnforeseenRequestError(errors)

    # -- lifecycle ----------------------------------------------------------------------

    def start(self) -> None:
        """Bind, start the server thread and wait until it accepts connections.

        Raises:
            RuntimeError: when already started, or when the server failed to start.
            TimeoutError: when it did not start within ``start_timeout`` seconds.
            OSError: when the port cannot be bound.
        """
        if self._thread is not None:
            raise RuntimeError("the model endpoint is already running")
        _install_log_filter()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((_HOST, self._requested_port))
        except OSError:
            sock.close()
            raise
        config = uvicorn.Config(
            build_app(self._engine),
            log_config=None,
            log_level="warning",
            access_log=False,
            lifespan="off",
            http="h11",
            ws="none",
            loop="asyncio",
            timeout_graceful_shutdown=max(1, round(self._stop_timeout / 2)),
        )
        server = uvicorn.Server(config)
        self._socket, self._server, self._failure = sock, server, None
        self._port = int(sock.getsockname()[1])
        self._thread = threading.Thread(
            target=self._serve, name=f"model-endpoint-{self._port}", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + self._start_timeout
        while not server.started:
            if not self._thread.is_alive():
                self._cleanup()
                raise RuntimeError(f"the model endpoint failed to start: {self._failure!r}")
            if time.monotonic() > deadline:
                self.stop()
                raise TimeoutError(
                    f"the model endpoint did not start within {self._start_timeout} s"
                )
            time.sleep(0.01)

    def _serve(self) -> None:
        assert self._server is not None
        assert self._socket is not None
        try:
            self._server.run(sockets=[self._socket])
        except BaseException as error:  # reported by start(), never lost in the thread
            self._failure = error

    def stop(self) -> None:
        """Stop serving, join the thread, close the socket (idempotent).

        Raises:
            TimeoutError: when the server thread did not finish within ``stop_timeout``.
        """
        thread, server = self._thread, self._server
        if thread is None or server is None:
            return
        server.should_exit = True
        thread.join(self._stop_timeout)
        if thread.is_alive():
            server.force_exit = True
            thread.join(self._stop_timeout)
        alive = thread.is_alive()
        self._cleanup()
        if alive:
            raise TimeoutError(f"the model endpoint did not stop within {self._stop_timeout} s")

    def _cleanup(self) -> None:
        if self._socket is not None:
            self._socket.close()
        self._socket, self._server, self._thread, self._port = None, None, None, None

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()
        if exc_type is None and self._raise_on_error:
            self.check()

    async def __aenter__(self) -> Self:
        await anyio.to_thread.run_sync(self.start)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(self.stop)
        if exc_type is None and self._raise_on_error:
            self.check()
