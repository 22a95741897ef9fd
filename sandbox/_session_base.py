"""What the local and Docker sessions share: one process wrapper, one session shape.

- :class:`ProcessBase` is the abort/wait half of a sandbox process (``wait()`` raises
  :class:`~harness_testkit.spec.SandboxAbortedError` after an abort killed it, and a
  detached watcher kills a spawned process when its abort event is set); providers add
  how to wait for the exit, kill and release.
- :class:`SessionBase` is the bare session (``restricted()`` returns one): text files over
  the provider's binary file API, and ``run``/``spawn`` over the provider's ``_start``.
- :class:`NetworkSessionBase` adds what both providers' full sessions answer alike: no
  exposed ports, ``restricted()``, and releasing tracked processes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic, Literal, Protocol, TypeVar

import anyio
from anyio.abc import ByteReceiveStream

from harness_testkit.spec import (
    HarnessCapabilityUnsupportedError,
    PortEndpoint,
    RunResult,
    SandboxError,
)

from ._common import aborted_error, collect_process, extract_lines, start_detached

__all__ = [
    "NetworkSessionBase",
    "ProcessBase",
    "ResourceBase",
    "SessionBase",
]

State = Literal["running", "stopped", "destroyed"]


class _Releasable(Protocol):
    async def aclose(self) -> None: ...


_P = TypeVar("_P", bound="ProcessBase")


@dataclass(kw_only=True)
class ResourceBase(Generic[_P]):
    """What a session and its restricted views share: identity, state, live processes.

    Attributes:
        session_id: The session id.
        provider_name: The provider's class name, for messages.
        label: How messages name the resource (``container x``, a directory...).
        kill_timeout: Longest wait for a killed process to be gone (seconds).
    """

    session_id: str
    provider_name: str
    label: str
    kill_timeout: float
    state: State = "running"
    processes: set[_P] = field(default_factory=set)

    def check_usable(self) -> None:
        """Raise :class:`SandboxError` unless the session is running."""
        if self.state != "running":
            remedy = (
                f"resume it with {self.provider_name}.resume_session() to use it again."
                if self.state == "stopped"
                else f"create a new session with {self.provider_name}.create_session()."
            )
            raise SandboxError(
                f"The sandbox session {self.session_id!r} ({self.label}) is {self.state}; " + remedy
            )


class ProcessBase:
    """The abort and wait semantics every sandbox process shares.

    Subclasses implement :meth:`wait_exit`, :meth:`kill`, :meth:`aclose` and the streams.
    """

    def __init__(self, *, command: str, abort: anyio.Event | None) -> None:
        self._command = command
        self._abort = abort
        self._aborted = False

    @property
    def stdout(self) -> ByteReceiveStream:
        """The command's standard output, streamed as it is written."""
        raise NotImplementedError

    @property
    def stderr(self) -> ByteReceiveStream:
        """The command's standard error, streamed as it is written."""
        raise NotImplementedError

    async def wait_exit(self) -> int:
        """Wait for the exit code, ignoring ``abort`` (the run collector handles it)."""
        raise NotImplementedError

    async def kill(self) -> None:
        """Kill the process and its descendants; idempotent."""
        raise NotImplementedError

    async def aclose(self) -> None:
        """Kill the process if it still runs and release its resources."""
        raise NotImplementedError

    async def wait(self) -> int:
        """Wait for the exit code.

        Returns:
            The exit code.

        Raises:
            SandboxAbortedError: The spawn's ``abort`` event was set; the process was killed.
        """
        if self._abort is None:
            return await self.wait_exit()
        await self.watch_abort()
        if self._aborted:
            raise aborted_error(self._command)
        return await self.wait_exit()

    async def watch_abort(self) -> None:
        """Kill the process when its abort event is set, until the process ends."""
        if self._abort is None:
            return
        async with anyio.create_task_group() as group:

            async def on_abort(event: anyio.Event) -> None:
                await event.wait()
                self._aborted = True
                await self.kill()
                group.cancel_scope.cancel()

            group.start_soon(on_abort, self._abort)
            await self.wait_exit()
            group.cancel_scope.cancel()


_R = TypeVar("_R", bound=ResourceBase)  # type: ignore[type-arg]


class SessionBase(Generic[_R, _P]):
    """The bare session over a provider's resource: what ``restricted()`` returns.

    Providers implement ``read_binary_file``, ``write_binary_file`` and ``_start``.
    """

    def __init__(self, resource: _R) -> None:
        self._resource = resource

    async def read_binary_file(self, path: str) -> bytes | None:
        """Read a file's bytes; ``None`` when it does not exist."""
        raise NotImplementedError

    async def write_binary_file(self, path: str, content: bytes) -> None:
        """Write bytes, creating parent directories."""
        raise NotImplementedError

    async def _start(
        self,
        command: str,
        working_directory: str | None,
        env: Mapping[str, str] | None,
        abort: anyio.Event | None,
    ) -> _P:
        raise NotImplementedError

    async def _after_run(self, result: RunResult, working_directory: str | None) -> RunResult:
        """A provider's chance to turn a result into a clearer error (default: keep it)."""
        return result

    async def read_text_file(
        self,
        path: str,
        *,
        start_line: int | None = None,
        end_line: int | None = None,
        encoding: str = "utf-8",
    ) -> str | None:
        """Read a text file, optionally only lines ``start_line..end_line`` (1-based, inclusive).

        Args:
            path: Relative to the default working directory, or absolute.
            start_line: First line (clamped to at least 1).
            end_line: Last line (clamped to the line count).
            encoding: The file's encoding; undecodable bytes become U+FFFD.

        Returns:
            The text, or ``None`` when the file does not exist.
        """
        data = await self.read_binary_file(path)
        if data is None:
            return None
        return extract_lines(data.decode(encoding, "replace"), start_line, end_line)

    async def write_text_file(self, path: str, content: str, *, encoding: str = "utf-8") -> None:
        """Write text (no newline translation), creating parent directories.

        Args:
            path: Relative to the default working directory, or absolute.
            content: The text to write.
            encoding: How to encode it.
        """
        await self.write_binary_file(path, content.encode(encoding))

    async def run(
        self,
        command: str,
        *,
        working_directory: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        abort: anyio.Event | None = None,
    ) -> RunResult:
        """Run ``command`` with the session's shell and collect its output.

        Args:
            command: A shell command line.
            working_directory: Where to run it (default: the default working directory).
            env: Variables merged over the base environment (these win).
            timeout: Seconds before the command and its descendants are killed.
            abort: Kills the command and its descendants when set.

        Returns:
            Exit code, stdout and stderr; a non-zero exit is not an exception.

        Raises:
            SandboxTimeoutError: The timeout passed; the command was killed.
            SandboxAbortedError: ``abort`` was set; the command was killed.
            SandboxError: The session is stopped, the working directory is missing, or
                the provider failed.
        """
        process = await self._start(command, working_directory, env, abort)
        try:
            result = await collect_process(
                process,
                command=command,
                time_limit=timeout,
                abort=abort,
                kill_timeout=self._resource.kill_timeout,
            )
        finally:
            self._resource.processes.discard(process)
        return await self._after_run(result, working_directory)

    async def spawn(
        self,
        command: str,
        *,
        working_directory: str | None = None,
        env: Mapping[str, str] | None = None,
        abort: anyio.Event | None = None,
    ) -> _P:
        """Start ``command`` and return at once with a handle streaming its output.

        Args:
            command: A shell command line.
            working_directory: Where to run it (default: the default working directory).
            env: Variables merged over the base environment (these win).
            abort: Kills the command and its descendants when set; ``wait()`` then raises
                :class:`~harness_testkit.spec.SandboxAbortedError`.

        Returns:
            The process handle.

        Raises:
            SandboxAbortedError: ``abort`` was already set.
            SandboxError: The session is stopped, or the working directory is missing.
        """
        process = await self._start(command, working_directory, env, abort)
        if abort is not None:
            start_detached(process.watch_abort)
        return process


_B = TypeVar("_B", bound=SessionBase)  # type: ignore[type-arg]


class NetworkSessionBase(SessionBase[_R, _P], Generic[_R, _P, _B]):
    """A full session: identity, no exposed ports, ``restricted()``, process release."""

    #: The bare class ``restricted()`` builds over the same resource.
    _restricted_class: type[_B]

    @property
    def id(self) -> str:
        """The session id: the provider's ``resume_session`` finds it by this."""
        return self._resource.session_id

    @property
    def ports(self) -> Sequence[int]:
        """Always empty: the kit's sandboxes expose no ports."""
        return ()

    def _unexposed_reason(self) -> str:
        raise NotImplementedError

    async def get_port_endpoint(
        self, port: int, protocol: Literal["http", "https", "ws"] | None = None
    ) -> PortEndpoint:
        """Always raises: the kit's sandboxes expose no ports.

        Raises:
            HarnessCapabilityUnsupportedError: Always, naming the port.
        """
        raise HarnessCapabilityUnsupportedError(
            f"Port {port} is not exposed: {self._unexposed_reason()} (exposed ports: [])."
        )

    def restricted(self) -> _B:
        """The bare session over the same resource, without lifecycle members."""
        return self._restricted_class(self._resource)

    async def _release_processes(self) -> None:
        for process in list(self._resource.processes):
            await process.aclose()
        self._resource.processes.clear()
