"""Docker sessions: the bare session (files and processes) and the full one (lifecycle).

Both act through their provider's blocking engine calls (``provider._call``), so a session
is only a view of its container (:class:`ContainerResource`).
"""

from __future__ import annotations

import posixpath
import uuid
from collections.abc import Mapping

import anyio

from harness_testkit.spec import RunResult, SandboxError, SandboxPathError

from ._common import aborted_error
from ._docker_process import PID_DIRECTORY, ContainerResource, DockerSandboxProcess
from ._session_base import NetworkSessionBase, SessionBase

__all__ = ["DockerSandboxSession", "DockerSandboxSessionBase"]


class DockerSandboxSessionBase(SessionBase[ContainerResource, DockerSandboxProcess]):
    """The bare Docker session (files and processes): what ``restricted()`` returns.

    Implements :class:`~harness_testkit.spec.SandboxSession`. Relative paths resolve
    against the default working directory; any container path may be named, and the
    container decides: its root filesystem is read-only and files are written as the
    session user.
    """

    @property
    def description(self) -> str:
        """What the container is, where to work, and its limits."""
        provider = self._resource.provider
        return (
            f"Docker sandbox session {self._resource.session_id!r}: container "
            f"{self._resource.container} from image {self._resource.image}, user "
            f"{provider.user}, working directory {provider.working_directory} (a "
            f"{provider.workspace_size} tmpfs; the rest of the filesystem is read-only "
            "except /tmp and the home directory). No network (loopback only); limits: "
            f"memory {provider.memory}, {provider.cpus:g} CPUs, {provider.pids_limit} "
            "processes. Commands run with " + " ".join(provider.shell) + "."
        )

    def _absolute(self, path: str) -> str:
        if "\0" in path:
            raise SandboxPathError(f"The path {path!r} contains a NUL character; remove it.")
        base = self._resource.provider.working_directory
        return posixpath.normpath(posixpath.join(base, path))

    # -- files ---------------------------------------------------------------------

    async def read_binary_file(self, path: str) -> bytes | None:
        """Read a regular file's bytes (symlinks are followed), streaming from the engine.

        Args:
            path: Absolute, or relative to the default working directory.

        Returns:
            The bytes, or ``None`` when the file does not exist.

        Raises:
            SandboxError: The path is a directory, FIFO, device or socket (refused before
                anything is transferred), or the engine failed.
        """
        self._resource.check_usable()
        provider = self._resource.provider
        return await provider._call(
            provider._read_file, self._resource.container, self._absolute(path), path
        )

    async def write_binary_file(self, path: str, content: bytes) -> None:
        """Write bytes as the session user, creating parent directories.

        Args:
            path: Absolute, or relative to the default working directory.
            content: The bytes to write.

        Raises:
            SandboxError: The file cannot be written: read-only filesystem, permission
                denied, workspace quota exceeded, a parent is a file, not a regular file.
        """
        self._resource.check_usable()
        provider = self._resource.provider
        await provider._call(
            provider._write_file,
            self._resource.container,
            self._absolute(path),
            bytes(content),
            path,
        )

    # -- processes -----------------------------------------------------------------

    async def _start(
        self,
        command: str,
        working_directory: str | None,
        env: Mapping[str, str] | None,
        abort: anyio.Event | None,
    ) -> DockerSandboxProcess:
        self._resource.check_usable()
        if abort is not None and abort.is_set():
            raise aborted_error(command)
        provider = self._resource.provider
        workdir = self._absolute(working_directory) if working_directory else None
        pid_file = f"{PID_DIRECTORY}/{uuid.uuid4().hex}.pid"
        exec_id, connection = await provider._call(
            provider._start_exec, self._resource.container, command, workdir, env, pid_file
        )
        process = DockerSandboxProcess(
            resource=self._resource,
            exec_id=exec_id,
            connection=connection,
            command=command,
            pid_file=pid_file,
            abort=abort,
        )
        self._resource.processes.add(process)
        return process

    async def _after_run(self, result: RunResult, working_directory: str | None) -> RunResult:
        if working_directory and result.exit_code in (126, 127, 128, 255):
            await self._explain_missing_directory(working_directory, result)
        return result

    async def _explain_missing_directory(self, working_directory: str, result: RunResult) -> None:
        # runc refuses to start an exec whose cwd is missing and only says so in the
        # output; turn that into the same error the local provider raises.
        if (
            "chdir" in result.stderr
            or "chdir" in result.stdout
            or "no such file" in (result.stderr + result.stdout).lower()
        ):
            absolute = self._absolute(working_directory)
            check = await self._resource.provider._call(
                self._resource.provider._exec_quiet,
                self._resource.container,
                ["/bin/sh", "-c", 'test -d "$1"', "check", absolute],
            )
            if check != 0:
                raise SandboxError(
                    f"The working directory {working_directory!r} ({absolute}) does not "
                    "exist or is not a directory; create it first (for example with "
                    "run('mkdir -p ...'))."
                )


class DockerSandboxSession(
    NetworkSessionBase[ContainerResource, DockerSandboxProcess, DockerSandboxSessionBase],
    DockerSandboxSessionBase,
):
    """A Docker session with identity and lifecycle (a ``NetworkSandboxSession``)."""

    _restricted_class = DockerSandboxSessionBase

    @property
    def container_name(self) -> str:
        """The container's name (``harness-testkit-<sanitized session id>``)."""
        return self._resource.container

    @property
    def default_working_directory(self) -> str:
        """The working directory inside the container (default ``/workspace``)."""
        return self._resource.provider.working_directory

    def _unexposed_reason(self) -> str:
        return (
            f"Docker sandbox {self._resource.container} runs without a network "
            "(network_mode none), so no port can be reached from outside"
        )

    async def stop(self) -> None:
        """Kill the session's commands and pause the container (its files stay); idempotent.

        The workspace is a tmpfs, so the container is paused rather than stopped:
        :meth:`DockerSandboxProvider.resume_session` unpauses it with its files.
        """
        if self._resource.state == "running":
            self._resource.state = "stopped"
        provider = self._resource.provider
        with anyio.CancelScope(shield=True):
            await self._release_processes()
            await provider._call(provider._pause_container, self._resource.container)

    async def destroy(self) -> None:
        """Remove the container, running or stopped; idempotent."""
        self._resource.state = "destroyed"
        provider = self._resource.provider
        with anyio.CancelScope(shield=True):
            await provider._call(provider._remove_container, self._resource.container)
            await self._release_processes()
