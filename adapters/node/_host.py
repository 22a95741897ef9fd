"""One adapter host process and its JSON-RPC connection, usable from any event loop.

The kit runs each check (and each property example) in an event loop of its own, in a
worker thread, on asyncio or trio; a host lives for the whole run. So the connection is
driven by plain threads: one reads the host's stdout (frames), one its stderr (kept as a
tail for failure messages), one writes. Callers hand in callbacks, which run on the
reader thread and must not block: :mod:`._bridge` turns them into wake-ups of the
caller's own event loop.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import json
import logging
import os
import queue
import signal
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness_testkit.spec import (
    HostProtocolError,
    parse_host_message,
)

__all__ = ["HostProcess", "Outcome"]

_log = logging.getLogger("harness_testkit.adapters.node")

#: How many of the host's last stderr lines a failure message quotes.
_STDERR_TAIL = 40
#: The longest a single frame may be (a bigger one is a protocol violation, not a hang).
_MAX_FRAME = 64 * 1024 * 1024


@dataclass(frozen=True)
class Outcome:
    """How a request ended: its result, or the error the host answered with.

    ``seq`` is the sequence number of the response frame: every frame routed before it
    (for example a turn's ``emit`` notifications) carries a smaller one.
    """

    result: Any = None
    error: dict[str, Any] | None = None
    failure: BaseException | None = None
    seq: int = 0


Router = Callable[[int, dict[str, Any]], None]


class HostProcess:
    """A started adapter host and the JSON-RPC connection over its stdio.

    Args:
        argv: The command (``node host.mjs``).
        env: Its whole environment (the caller scrubs it).
        cwd: Its working directory.
        label: How messages name it (the adapter's package and version).
    """

    def __init__(
        self, argv: Sequence[str], *, env: Mapping[str, str], cwd: str, label: str
    ) -> None:
        self.label = label
        self._ids = itertools.count(1)
        self._seq = itertools.count(1)
        self._lock = threading.Lock()
        self._pending: dict[int, tuple[str, Callable[[Outcome], None]]] = {}
        #: Requests the kit gave up on: their late answers are expected, not stray.
        self._forgotten: set[int] = set()
        self._routes: dict[str, Router] = {}
        self._stderr: collections.deque[str] = collections.deque(maxlen=_STDERR_TAIL)
        self._outbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._broken: HostProtocolError | None = None
        self._closed = False
        self._process = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env),
            cwd=cwd,
            # Its own process group, so closing kills whatever the adapter started too.
            start_new_session=True,
        )
        self._threads = [
            threading.Thread(target=self._read, name=f"host-reader-{self.pid}", daemon=True),
            threading.Thread(target=self._read_stderr, name=f"host-stderr-{self.pid}", daemon=True),
            threading.Thread(target=self._write, name=f"host-writer-{self.pid}", daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    # -- state ---------------------------------------------------------------------------

    @property
    def pid(self) -> int:
        """The host's process id."""
        return self._process.pid

    @property
    def broken(self) -> HostProtocolError | None:
        """Why the connection is unusable (the host died or broke the protocol), if it is."""
        return self._broken

    def stderr_tail(self) -> str:
        """The host's last stderr lines, for failure messages."""
        with self._lock:
            return "\n".join(self._stderr)

    # -- sending -------------------------------------------------------------------------

    def request(
        self, method: str, params: Mapping[str, Any], on_done: Callable[[Outcome], None]
    ) -> int:
        """Send a request; ``on_done`` runs on the reader thread when it is answered.

        Returns:
            The request's id (for ``$/cancelRequest``).
        """
        request_id = next(self._ids)
        with self._lock:
            broken = self._broken
            if broken is None:
                self._pending[request_id] = (method, on_done)
        if broken is not None:
            on_done(Outcome(failure=broken))
            return request_id
        self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": dict(params)})
        return request_id

    def forget(self, request_id: int) -> None:
        """Stop waiting for ``request_id`` (its caller gave up) and ask the host to cancel it."""
        with self._lock:
            pending = self._pending.pop(request_id, None)
            if pending is not None:
                self._forgotten.add(request_id)
        if pending is not None:
            self.notify("$/cancelRequest", {"id": request_id})

    def notify(self, method: str, params: Mapping[str, Any]) -> None:
        """Send a notification."""
        self._send({"jsonrpc": "2.0", "method": method, "params": dict(params)})

    def respond(
        self, request_id: int | str, result: Any = None, error: Mapping[str, Any] | None = None
    ) -> None:
        """Answer a request the host sent."""
        frame: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id}
        if error is not None:
            frame["error"] = dict(error)
        else:
            frame["result"] = result
        self._send(frame)

    def call(self, method: str, params: Mapping[str, Any], *, timeout: float) -> Any:
        """Send a request and block this thread until it is answered (outside event loops).

        Raises:
            HostProtocolError: the host died, broke the protocol or did not answer in time.
            HostAdapterError: (and the spec's own error classes) the adapter's error.
        """
        from ._bridge import raise_outcome

        box: list[Outcome] = []
        answered = threading.Event()

        def on_done(outcome: Outcome) -> None:
            box.append(outcome)
            answered.set()

        request_id = self.request(method, params, on_done)
        if not answered.wait(timeout):
            self.forget(request_id)
            raise HostProtocolError(
                "HOST-008",
                f"{self.label}: the adapter host did not answer '{method}' within {timeout:g} s"
                + self._tail_note(),
            )
        return raise_outcome(box[0], method, self)

    def _send(self, frame: Mapping[str, Any]) -> None:
        if self._closed:
            return
        self._outbox.put(json.dumps(frame, separators=(",", ":")).encode() + b"\n")

    def _write(self) -> None:
        stdin = self._process.stdin
        assert stdin is not None
        while True:
            data = self._outbox.get()
            if data is None:
                break
            try:
                stdin.write(data)
                stdin.flush()
            except (BrokenPipeError, OSError, ValueError):
                break
        with contextlib.suppress(OSError, ValueError):
            stdin.close()

    # -- routing -------------------------------------------------------------------------

    def route(self, key: str, router: Router) -> None:
        """Deliver frames for ``key`` (``turn:<id>``, ``session:<id>``, ``process:<id>``,
        ``request:<id>``) to ``router``, called on the reader thread with (seq, frame)."""
        with self._lock:
            self._routes[key] = router

    def unroute(self, key: str) -> None:
        """Stop delivering frames for ``key``."""
        with self._lock:
            self._routes.pop(key, None)

    # -- reading -------------------------------------------------------------------------

    def _read(self) -> None:
        stdout = self._process.stdout
        assert stdout is not None
        try:
            while True:
                line = stdout.readline(_MAX_FRAME + 1)
                if not line:
                    break
                if len(line) > _MAX_FRAME:
                    self._break(
                        HostProtocolError(
                            "HOST-001", f"{self.label}: a frame is larger than {_MAX_FRAME} bytes"
                        )
                    )
                    return
                if not line.strip():
                    continue
                try:
                    decoded = json.loads(line)
                except ValueError:
                    self._break(
                        HostProtocolError(
                            "HOST-001",
                            f"{self.label}: the host wrote a line on stdout that is not JSON: "
                            f"{line[:200]!r} (stdout carries protocol frames only; logs go to stderr)",
                        )
                    )
                    return
                try:
                    self._dispatch(decoded)
                except HostProtocolError as error:
                    self._break(error)
                    return
        finally:
            code = self._process.wait()
            # What the host wrote on stderr as it died is the best clue: read it all first.
            self._threads[1].join(timeout=2.0)
            if not self._closed:
                self._break(
                    HostProtocolError(
                        "HOST-009",
                        f"{self.label}: the adapter host exited with status {code} while the kit "
                        "still used it" + self._tail_note(),
                    )
                )

    def _dispatch(self, decoded: object) -> None:
        parse_host_message(decoded)
        seq = next(self._seq)
        frame: dict[str, Any] = decoded  # type: ignore[assignment]
        method = frame.get("method")
        if method is None:
            request_id = frame.get("id")
            with self._lock:
                pending = (
                    self._pending.pop(request_id, None) if isinstance(request_id, int) else None
                )
                if pending is None and request_id in self._forgotten:
                    self._forgotten.discard(request_id)
                    return
            if pending is None:
                raise HostProtocolError(
                    "HOST-003",
                    f"{self.label}: the host answered request {request_id!r}, which the kit "
                    "never sent or which was answered already",
                )
            error = frame.get("error")
            pending[1](Outcome(result=frame.get("result"), error=error, seq=seq))
            return
        params = frame.get("params") or {}
        if method == "log":
            level, text = str(params.get("level", "info")), str(params.get("message", ""))
            with self._lock:
                self._stderr.append(f"[{level}] {text}")
            _log.debug("%s: %s", self.label, text)
            return
        key = self._route_key(method, params, is_request="id" in frame)
        with self._lock:
            router = self._routes.get(key) if key else None
        if router is not None:
            router(seq, frame)
            return
        if "id" in frame:
            self.respond(
                frame["id"],
                error={
                    "code": -32602,
                    "message": f"the kit has no {key or method} for this request",
                    "data": {"name": "Error", "message": f"unknown target of '{method}'"},
                },
            )
        elif method != "$/cancelRequest":
            _log.debug("%s: dropped %s for %s", self.label, method, key)

    @staticmethod
    def _route_key(method: str, params: Mapping[str, Any], *, is_request: bool) -> str | None:
        if method == "emit":
            return f"turn:{params.get('turn')}"
        if method.startswith("sandbox/"):
            return f"session:{params.get('session')}"
        if method == "process/kill":
            return f"process:{params.get('process')}"
        if method == "$/cancelRequest" and not is_request:
            return f"request:{params.get('id')}"
        return None

    def _read_stderr(self) -> None:
        stderr = self._process.stderr
        assert stderr is not None
        for raw in stderr:
            text = raw.decode("utf-8", "replace").rstrip()
            with self._lock:
                self._stderr.append(text)

    def _tail_note(self) -> str:
        tail = self.stderr_tail()
        return f"; its last stderr lines:\n{tail}" if tail else " (it wrote nothing on stderr)"

    def _break(self, error: HostProtocolError) -> None:
        with self._lock:
            if self._broken is None:
                self._broken = error
            pending = list(self._pending.values())
            self._pending.clear()
            routes = list(self._routes.values())
        for _method, on_done in pending:
            on_done(Outcome(failure=error))
        # Waiters on the host's own requests (a turn's emits) learn it from their routers.
        for router in routes:
            with contextlib.suppress(Exception):
                router(0, {"method": "$/broken"})
        if not self._closed:
            self._terminate()

    # -- closing -------------------------------------------------------------------------

    def close(self, *, grace: float = 5.0) -> None:
        """End the host: close its stdin (it exits), then TERM and KILL its process group.

        Idempotent; waits at most ``grace`` seconds, then a little more for the kill.
        """
        if self._closed:
            return
        self._closed = True
        self._outbox.put(None)
        try:
            self._process.wait(grace)
        except subprocess.TimeoutExpired:
            self._terminate()
        else:
            # The host has gone; anything the adapter started in its group goes too.
            self._signal_group(signal.SIGKILL)
        for thread in self._threads:
            thread.join(timeout=2.0)
        for stream in (self._process.stdout, self._process.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()

    def _terminate(self) -> None:
        self._signal_group(signal.SIGTERM)
        try:
            self._process.wait(2.0)
        except subprocess.TimeoutExpired:
            self._signal_group(signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._process.wait(5.0)

    def _signal_group(self, signum: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._process.pid, signum)
