"""Commands in a Docker sandbox: execs whose output streams to the event loop.

Docker has no API to kill an exec, so every command runs inside a small wrapper that
makes it a session leader and records its process group in a pid file; ``kill`` runs a
second exec that kills that group. Output is read from the exec's socket by a daemon
thread and handed to the event loop through memory object streams.
"""

from __future__ import annotations

import socket
import threading
import time
from contextlib import suppress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
import anyio.from_thread
import anyio.lowlevel
from anyio.abc import ByteReceiveStream
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from ._session_base import ProcessBase, ResourceBase
from ._tree import MARKER_VARIABLE

if TYPE_CHECKING:
    from ._docker import DockerSandboxProvider

__all__ = [
    "EXEC_WRAPPER",
    "KILL_SCRIPT",
    "PID_DIRECTORY",
    "ContainerResource",
    "DockerSandboxProcess",
    "tree_marker_of",
]

#: Runs the command as a session leader whose pid (= its process-group id) is written to
#: the pid file ($0) first, then removes the pid file once the group leader is gone. The
#: wrapper itself stays outside the group so a group kill still lets it clean up.
EXEC_WRAPPER = (
    'p="$0"; '
    'if command -v setsid >/dev/null 2>&1; then s=setsid; else s=""; fi; '
    '$s /bin/sh -c \'echo $$ >"$0"; exec "$@"\' "$p" "$@"; '
    'rc=$?; rm -f "$p"; exit $rc'
)

#: Kills the process group recorded in the pid file ($1), waiting briefly for a command
#: that was killed right after it started and has not written the file yet; then kills,
#: round after round, every process whose environment carries the command's marker ($2),
#: which reaches descendants that left the group with ``setsid``.
KILL_SCRIPT = (
    'p="$1"; m="$2"; i=0; '
    'while [ ! -s "$p" ] && [ $i -lt 20 ]; do sleep 0.05; i=$((i+1)); done; '
    'if [ -s "$p" ]; then g=$(cat "$p"); kill -9 -"$g" 2>/dev/null || kill -9 "$g"; fi; '
    '[ -n "$m" ] || exit 0; '
    "r=0; while [ $r -lt 50 ]; do f=0; "
    "for e in /proc/[0-9]*/environ; do "
    # busybox grep stops at a NUL: one variable per line first.
    "if tr '\\0' '\\n' <\"$e\" 2>/dev/null | grep -qxF \"$m\"; then "
    'q=${e#/proc/}; kill -9 "${q%/environ}" 2>/dev/null && f=1; fi; done; '
    "[ $f = 0 ] && break; r=$((r+1)); done; "
    "exit 0"
)
PID_DIRECTORY = "/tmp/.harness-testkit"


def tree_marker_of(pid_file: str) -> str:
    """The marker entry (``NAME=value``) of the command whose pid file is ``pid_file``."""
    return f"{MARKER_VARIABLE}={pid_file.rsplit('/', 1)[-1].removesuffix('.pid')}"


# -- streams ---------------------------------------------------------------------------


class _ChunkStream(ByteReceiveStream):
    """A byte stream fed by the exec reader thread through a memory object stream."""

    def __init__(self, receive: MemoryObjectReceiveStream[bytes]) -> None:
        self._receive = receive
        self._pending = b""

    async def receive(self, max_bytes: int = 65536) -> bytes:
        if not self._pending:
            try:
                self._pending = await self._receive.receive()
            except anyio.EndOfStream:
                # Closing at EOF releases the stream even when nobody calls aclose().
                self._receive.close()
                raise
        chunk, self._pending = self._pending[:max_bytes], self._pending[max_bytes:]
        return chunk

    async def aclose(self) -> None:
        self._receive.close()


@dataclass(kw_only=True)
class ContainerResource(ResourceBase["DockerSandboxProcess"]):
    """What a session and its restricted views share: the container and live execs."""

    provider: DockerSandboxProvider
    container: str
    image: str

    @classmethod
    def open(
        cls, *, provider: DockerSandboxProvider, session_id: str, container: str, image: str
    ) -> ContainerResource:
        return cls(
            session_id=session_id,
            provider_name="DockerSandboxProvider",
            label=f"container {container}",
            kill_timeout=provider.kill_timeout,
            provider=provider,
            container=container,
            image=image,
        )


class DockerSandboxProcess(ProcessBase):
    """A command started by :meth:`DockerSandboxSessionBase.spawn` (a Docker exec).

    Implements :class:`~harness_testkit.spec.SandboxProcess`. Output is read by a daemon
    thread and handed to the event loop as it arrives.
    """

    def __init__(
        self,
        *,
        resource: ContainerResource,
        exec_id: str,
        connection: Any,
        command: str,
        pid_file: str,
        abort: anyio.Event | None,
    ) -> None:
        super().__init__(command=command, abort=abort)
        self._resource = resource
        self._exec_id = exec_id
        self._connection = connection
        self._pid_file = pid_file
        self._killed = False
        self._exit_code: int | None = None
        self._done = anyio.Event()
        out_send, out_receive = anyio.create_memory_object_stream[bytes](float("inf"))
        err_send, err_receive = anyio.create_memory_object_stream[bytes](float("inf"))
        self._stdout = _ChunkStream(out_receive)
        self._stderr = _ChunkStream(err_receive)
        self._token = anyio.lowlevel.current_token()
        # A daemon thread, not an anyio worker: a command that outlives the event loop
        # must not keep the interpreter from exiting.
        self._reader = threading.Thread(
            target=self._read_frames,
            args=(out_send, err_send),
            name=f"harness-testkit exec reader {exec_id[:12]}",
            daemon=True,
        )
        self._reader.start()

    @property
    def tree_marker(self) -> str:
        """The environment entry that marks this command and its descendants."""
        return tree_marker_of(self._pid_file)

    @property
    def pid(self) -> int | None:
        """Not known: Docker does not report an exec's pid inside the container."""
        return None

    @property
    def stdout(self) -> ByteReceiveStream:
        """The command's standard output, streamed as it arrives."""
        return self._stdout

    @property
    def stderr(self) -> ByteReceiveStream:
        """The command's standard error, streamed as it arrives."""
        return self._stderr

    def _socket(self) -> socket.socket | None:
        raw = getattr(self._connection, "_sock", self._connection)
        return raw if isinstance(raw, socket.socket) else None

    def _read_frames(
        self, out_send: MemoryObjectSendStream[bytes], err_send: MemoryObjectSendStream[bytes]
    ) -> None:
        from docker.utils.socket import frames_iter

        def deliver(stream: MemoryObjectSendStream[bytes], data: bytes) -> None:
            # A reader that closed its end no longer wants data; keep draining the socket.
            with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                stream.send_nowait(data)

        def finish() -> None:
            out_send.close()
            err_send.close()
            self._done.set()

        try:
            for stream_id, data in frames_iter(self._connection, tty=False):
                target = err_send if stream_id == 2 else out_send
                anyio.from_thread.run_sync(deliver, target, bytes(data), token=self._token)
        except Exception:
            pass  # a broken or shut-down socket ends the stream like EOF
        finally:
            self._close_connection()
            with suppress(Exception):
                # Fails only when the event loop is gone, and then nobody is waiting.
                anyio.from_thread.run_sync(finish, token=self._token)

    def _close_connection(self) -> None:
        # docker-py parks the HTTP response on the socket; closing the response first
        # releases the connection cleanly, then the socket itself is closed.
        response = getattr(self._connection, "_response", None)
        if response is not None:
            with suppress(Exception):
                response.close()
        with suppress(Exception):
            self._connection.close()
        raw = self._socket()
        if raw is not None:
            with suppress(Exception):
                raw.close()

    async def _exit_status(self) -> int:
        """Ask the engine for the exit code once the exec is over (bounded polling)."""
        api = self._resource.provider._api
        deadline = time.monotonic() + self._resource.provider.kill_timeout

        def inspect() -> int:
            while True:
                details = api.exec_inspect(self._exec_id)
                if not details.get("Running") or time.monotonic() > deadline:
                    code = details.get("ExitCode")
                    return int(code) if code is not None else -1
                time.sleep(0.02)

        return await self._resource.provider._call(inspect)

    async def wait_exit(self) -> int:
        """Wait for the exit code, ignoring ``abort`` (the run collector handles it)."""
        if self._exit_code is None:
            await self._done.wait()
            self._exit_code = await self._exit_status()
        return self._exit_code

    async def kill(self) -> None:
        """Kill the command's whole process group; idempotent."""
        if self._done.is_set():
            return
        if not self._killed:
            self._killed = True
            provider = self._resource.provider
            with suppress(Exception):
                # The container may be gone already; then so is the command.
                await provider._call(
                    provider._exec_quiet,
                    self._resource.container,
                    ["/bin/sh", "-c", KILL_SCRIPT, "kill", self._pid_file, self.tree_marker],
                )
        with anyio.move_on_after(self._resource.provider.kill_timeout):
            await self._done.wait()
        if not self._done.is_set():
            # Something outside the group still holds the output open: stop reading.
            raw = self._socket()
            if raw is not None:
                with suppress(OSError):
                    raw.shutdown(socket.SHUT_RDWR)
            with anyio.move_on_after(self._resource.provider.kill_timeout):
                await self._done.wait()

    async def aclose(self) -> None:
        """Kill the command if it still runs and release its streams."""
        await self.kill()
        await self._stdout.aclose()
        await self._stderr.aclose()
        self._resource.processes.discard(self)
