"""The embedded default sandbox: one host directory per session, host subprocesses.

:class:`LocalSandboxProvider` needs nothing but the host. Each session is a directory
under a base dir, named from the session id, so another process can
:meth:`~LocalSandboxProvider.resume_session` it.

What it enforces, and what it does not:

- **The file API is confined** (``path_confinement``): every path resolves beneath the
  session root without a race (``openat2`` with ``RESOLVE_BENEATH``, else a walk with
  directory descriptors and ``O_NOFOLLOW``; see ``_confine``). Escapes through ``..``,
  absolute paths and symlinks are refused with
  :class:`~harness_testkit.spec.SandboxPathError`, as are reads of files with more than
  one hard link; FIFOs, devices and sockets are refused without blocking; writes replace
  files instead of writing through them.
- **Commands are not confined, by design**: they run as the current user on the host,
  with its network and without resource limits. They are tracked, though: each runs with
  ``bash -c`` (``sh -c`` without bash) in its own process group and with an environment
  marker, and, where cgroup v2 allows it, in a child cgroup of its own (see ``_cgroup``),
  so a kill, an abort, a timeout, ``stop()`` and ``destroy()`` take down the whole tree,
  ``setsid`` descendants included, and in a cgroup also those that cleared their
  environment (``env -i``). Without a usable cgroup the marker sweep of ``_tree`` does it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

import anyio
import anyio.abc
from anyio.abc import ByteReceiveStream

from harness_testkit.spec import (
    HarnessCapabilityUnsupportedError,
    OnFirstCreate,
    SandboxError,
    SandboxUnavailableError,
)

from ._cgroup import (
    CgroupSupport,
    enter_command,
    kill_cgroup,
    kill_session_cgroups,
    new_command_cgroup,
    probe,
)
from ._common import (
    DEFAULT_KILL_TIMEOUT,
    DEFAULT_LOCK_TIMEOUT,
    LoopLocalLocks,
    aborted_error,
    file_lock,
    merge_env,
    sanitize_name,
)
from ._confine import Root
from ._session_base import NetworkSessionBase, ProcessBase, ResourceBase, SessionBase
from ._tree import MARKER_VARIABLE, marker, sweep

_T = TypeVar("_T")

#: How a local provider tracks its commands' process trees.
ProcessTracking = Literal["auto", "cgroup", "sweep"]

__all__ = [
    "LOCAL_DIR_VARIABLE",
    "LocalSandboxProcess",
    "LocalSandboxProvider",
    "LocalSandboxSession",
    "LocalSandboxSessionBase",
    "ProcessTracking",
]


#: Names the default base directory of local providers when set (an absolute path).
LOCAL_DIR_VARIABLE = "HARNESS_TESTKIT_LOCAL_DIR"


def default_local_base_dir() -> Path:
    """Return the default base directory.

    ``$HARNESS_TESTKIT_LOCAL_DIR`` when set, else ``harness-testkit-local`` in the system
    temp dir.

    Raises:
        ValueError: The variable is set to a relative path.
    """
    configured = os.environ.get(LOCAL_DIR_VARIABLE)
    if configured:
        if not os.path.isabs(configured):
            raise ValueError(
                f"{LOCAL_DIR_VARIABLE}={configured!r} must be an absolute path; unset it to "
                "use the system temp dir"
            )
        return Path(configured)
    return Path(tempfile.gettempdir()) / "harness-testkit-local"


def _default_shell() -> tuple[str, ...]:
    bash = shutil.which("bash")
    return (bash, "-c") if bash else ("/bin/sh", "-c")


def _guarded(operation: Callable[..., _T], shown: str, *args: Any) -> _T:
    """Run a confined file operation, turning OS errors into named sandbox errors."""
    try:
        return operation(*args)
    except (SandboxError, HarnessCapabilityUnsupportedError):
        raise
    except IsADirectoryError as error:
        raise SandboxError(
            f"Cannot use {shown!r}: it is a directory; pass the path of a file."
        ) from error
    except OSError as error:
        raise SandboxError(f"Cannot use {shown!r}: {error.strerror or error}.") from error


@dataclass(kw_only=True)
class _SessionResource(ResourceBase["LocalSandboxProcess"]):
    """What a session and its restricted views share: the directory and live processes."""

    root: Path
    shell: tuple[str, ...]
    base_env: Mapping[str, str] | None
    confined: Root
    #: Marks every process of this session (derived from the root, so a session resumed
    #: by another provider instance sweeps the processes of the original too).
    token: str
    #: Where command cgroups are created (``None``: the process-group kill and sweep).
    cgroups: CgroupSupport

    @classmethod
    def open(
        cls,
        *,
        session_id: str,
        root: Path,
        shell: tuple[str, ...],
        base_env: Mapping[str, str] | None,
        kill_timeout: float,
        cgroups: CgroupSupport,
    ) -> _SessionResource:
        return cls(
            session_id=session_id,
            provider_name="LocalSandboxProvider",
            label=f"directory {root}",
            kill_timeout=kill_timeout,
            root=root,
            shell=shell,
            base_env=base_env,
            confined=Root(root),
            token=hashlib.sha256(os.fsencode(root)).hexdigest()[:16],
            cgroups=cgroups,
        )

    def tracking_text(self) -> str:
        """How this session's process trees are tracked, for its description."""
        if self.cgroups.base is not None:
            return (
                f"each command runs in a cgroup v2 of its own beneath {self.cgroups.base}, "
                "killed with cgroup.kill (setsid and env -i descendants included)"
            )
        return (
            "each command's process group is killed and /proc swept for its environment "
            f"marker (no cgroup: {self.cgroups.reason}; a descendant that both leaves the "
            "group and clears its environment escapes)"
        )


class LocalSandboxProcess(ProcessBase):
    """A command started by :meth:`LocalSandboxSessionBase.spawn`, in its own process group.

    Implements :class:`~harness_testkit.spec.SandboxProcess`. Killing it kills its process
    group and then its cgroup (``cgroup.kill``) where the session has cgroups, else every
    process carrying its environment marker (``setsid`` descendants).
    """

    def __init__(
        self,
        process: anyio.abc.Process,
        *,
        command: str,
        resource: _SessionResource,
        abort: anyio.Event | None,
        tree_marker: str,
        cgroup: Path | None,
    ) -> None:
        super().__init__(command=command, abort=abort)
        self._process = process
        self._resource = resource
        self._marker = tree_marker
        self._cgroup = cgroup
        self._killed = False
        # open_process was called with pipes for both, so neither is None.
        assert process.stdout is not None
        assert process.stderr is not None
        self._stdout: ByteReceiveStream = process.stdout
        self._stderr: ByteReceiveStream = process.stderr

    @property
    def pid(self) -> int | None:
        """The host process id (also the id of its process group)."""
        return self._process.pid

    @property
    def stdout(self) -> ByteReceiveStream:
        """The command's standard output, streamed as it is written."""
        return self._stdout

    @property
    def stderr(self) -> ByteReceiveStream:
        """The command's standard error, streamed as it is written."""
        return self._stderr

    @property
    def returncode(self) -> int | None:
        """The exit code once the process has exited, else ``None``."""
        return self._process.returncode

    async def wait_exit(self) -> int:
        """Wait for the exit code, ignoring ``abort`` (the run collector handles it)."""
        return await self._process.wait()

    async def kill(self) -> None:
        """Kill the process, its process group and its cgroup or marked descendants; idempotent."""
        if not self._killed:
            self._killed = True
            # start_new_session made the process a group leader: its pid is the group id.
            with suppress(ProcessLookupError, PermissionError):
                os.killpg(self._process.pid, signal.SIGKILL)
            with anyio.CancelScope(shield=True):
                if self._cgroup is not None:
                    await anyio.to_thread.run_sync(
                        kill_cgroup, self._cgroup, self._resource.kill_timeout
                    )
                else:
                    await anyio.to_thread.run_sync(sweep, self._marker)
        with anyio.move_on_after(self._resource.kill_timeout):
            await self.wait_exit()

    async def aclose(self) -> None:
        """Kill the process tree if it still runs and release the pipes."""
        await self.kill()
        with anyio.move_on_after(self._resource.kill_timeout):
            # Unread output keeps asyncio's pipe transports paused short of EOF, and a
            # transport that never sees EOF is never closed (a ResourceWarning later).
            for stream in (self._stdout, self._stderr):
                # Best effort: the stream may be at its end, closed, or being read by the
                # caller's own task at this very moment (then that task drains it).
                with suppress(Exception):
                    while True:
                        await stream.receive()
            await self._process.aclose()
        self._resource.processes.discard(self)


class LocalSandboxSessionBase(SessionBase[_SessionResource, LocalSandboxProcess]):
    """The bare local session (files and processes): what ``restricted()`` returns.

    Implements :class:`~harness_testkit.spec.SandboxSession`. Relative paths resolve
    against the session root; every path must resolve beneath it (see ``_confine``).
    """

    @property
    def description(self) -> str:
        """Where the session lives and what it is (and is not)."""
        return (
            f"Local sandbox session {self._resource.session_id!r}: a host directory at "
            f"{self._resource.root} (the working directory; file paths must stay inside "
            f"it). Commands run on the host with {self._resource.shell[0]} and are not "
            "confined (no network or resource isolation); their process trees are tracked: "
            f"{self._resource.tracking_text()}."
        )

    @property
    def process_tracking(self) -> Literal["cgroup", "sweep"]:
        """``"cgroup"`` when commands run in cgroups of their own, else ``"sweep"``."""
        return "cgroup" if self._resource.cgroups.base is not None else "sweep"

    async def _confined(self, operation: Callable[..., _T], path: str, *args: Any) -> _T:
        self._resource.check_usable()
        return await anyio.to_thread.run_sync(_guarded, operation, path, path, *args)

    # -- files ---------------------------------------------------------------------

    async def read_binary_file(self, path: str) -> bytes | None:
        """Read a regular file's bytes.

        Args:
            path: Relative to the session root, or absolute inside it.

        Returns:
            The bytes, or ``None`` when the file does not exist.

        Raises:
            SandboxPathError: The path resolves outside the session root, or the file has
                more than one hard link.
            SandboxError: The path is a directory, FIFO, device or socket, or cannot be read.
        """
        return await self._confined(self._resource.confined.read, path)

    async def write_binary_file(self, path: str, content: bytes) -> None:
        """Write bytes, creating parent directories and replacing any existing file.

        The file is replaced (a new file renamed over the name), never written through:
        a hard link to a file outside the root stays untouched.

        Args:
            path: Relative to the session root, or absolute inside it.
            content: The bytes to write.

        Raises:
            SandboxPathError: The path resolves outside the session root.
            SandboxError: The file cannot be written (for example a parent is a file).
        """
        await self._confined(self._resource.confined.write, path, bytes(content))

    async def make_directory(self, path: str) -> None:
        """Create a directory and its parents (``mkdir -p``) without starting a shell.

        The agent prefers this to running ``mkdir -p`` when a session offers it.

        Raises:
            SandboxPathError: The path resolves outside the session root.
            SandboxError: The directory cannot be created (for example a parent is a file).
        """
        await self._confined(self._resource.confined.make_directory, path)

    # -- processes -----------------------------------------------------------------

    async def _start(
        self,
        command: str,
        working_directory: str | None,
        env: Mapping[str, str] | None,
        abort: anyio.Event | None,
    ) -> LocalSandboxProcess:
        self._resource.check_usable()
        if abort is not None and abort.is_set():
            raise aborted_error(command)
        cwd = (
            str(self._resource.root)
            if working_directory is None
            else await self._confined(self._resource.confined.directory, working_directory)
        )
        if self._resource.base_env is not None:
            base = dict(self._resource.base_env)
        else:
            base = dict(os.environ)
            # The file API reaches only the session root, so HOME is in it too: what a
            # command writes under $HOME can be read back through the session. It is not
            # created up front (a fresh session's root stays empty): a runtime that keeps
            # files there makes it, as it would a new user's home.
            base["HOME"] = str(self._resource.root / SESSION_HOME)
        # The host's PWD names the host's directory; shells trust a matching PWD.
        base["PWD"] = cwd
        process_token = uuid.uuid4().hex[:16]
        tree_marker = marker(self._resource.token, process_token)
        environment = merge_env(base, env)
        environment[MARKER_VARIABLE] = tree_marker
        argv = [*self._resource.shell, command]
        cgroup: Path | None = None
        cgroup_base = self._resource.cgroups.base
        if cgroup_base is not None:
            cgroup = await anyio.to_thread.run_sync(
                new_command_cgroup, cgroup_base, self._resource.token, process_token
            )
            argv = enter_command(cgroup, argv)
        try:
            process = await anyio.open_process(
                argv, cwd=cwd, env=environment, stdin=subprocess.DEVNULL, start_new_session=True
            )
        except BaseException:
            if cgroup is not None:
                with anyio.CancelScope(shield=True):
                    await anyio.to_thread.run_sync(kill_cgroup, cgroup, self._resource.kill_timeout)
            raise
        handle = LocalSandboxProcess(
            process,
            command=command,
            resource=self._resource,
            abort=abort,
            tree_marker=tree_marker,
            cgroup=cgroup,
        )
        self._resource.processes.add(handle)
        return handle


class LocalSandboxSession(
    NetworkSessionBase[_SessionResource, LocalSandboxProcess, LocalSandboxSessionBase],
    LocalSandboxSessionBase,
):
    """A local session with identity and lifecycle (a ``NetworkSandboxSession``)."""

    _restricted_class = LocalSandboxSessionBase

    @property
    def default_working_directory(self) -> str:
        """The session root, an absolute host path."""
        return str(self._resource.root)

    def _unexposed_reason(self) -> str:
        return (
            "local sandbox sessions expose no ports; use a sandbox provider that exposes "
            "ports for bridge adapters"
        )

    async def _kill_all(self) -> None:
        await self._release_processes()
        # Descendants of processes whose handles are already closed (or that another
        # provider instance started in this directory) are in the session's cgroups and
        # carry the session's marker.
        resource = self._resource
        await anyio.to_thread.run_sync(
            _kill_leftovers, resource.cgroups.base, resource.token, resource.kill_timeout
        )

    async def stop(self) -> None:
        """Kill every process this session started and mark it stopped; idempotent.

        The directory is kept: :meth:`LocalSandboxProvider.resume_session` reopens it.
        """
        if self._resource.state == "running":
            self._resource.state = "stopped"
        with anyio.CancelScope(shield=True):
            await self._kill_all()

    async def destroy(self) -> None:
        """Stop the session and delete its directory; idempotent."""
        await self.stop()
        self._resource.state = "destroyed"
        root = self._resource.root
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(_remove_tree, root)


#: The folder inside a session root that is ``$HOME`` for its commands (unless the
#: provider was given a ``base_env``, or a command's ``env`` sets ``HOME``).
SESSION_HOME = ".home"


class LocalSandboxProvider:
    """Creates local sandbox sessions: directories under ``root_dir`` plus host processes.

    The default sandbox of the reference agent. Constructing it does no I/O.

    Args:
        root_dir: The base directory holding sessions, identity templates and locks
            (default: :func:`default_local_base_dir`). Tests pass
            ``tmp_path``.
        base_env: The environment commands start from (default: ``os.environ`` at the
            time of each call, with ``HOME`` set to the session root's ``.home`` folder,
            so files written under ``$HOME`` are inside the root the file API reaches);
            a command's ``env`` merges over it.
        shell: The shell invocation, the command is appended (default ``bash -c``, or
            ``/bin/sh -c`` when bash is missing).
        lock_timeout: Longest wait, in seconds, for another process that is baking the
            same identity.
        kill_timeout: Longest wait, in seconds, for a killed process to be gone.
        process_tracking: ``"auto"`` (default): a cgroup v2 per command where this process
            may create and enter child cgroups (root, or a delegated subtree), else the
            process-group kill and environment-marker sweep; ``"cgroup"``: cgroups or
            :class:`~harness_testkit.spec.SandboxUnavailableError` at session creation;
            ``"sweep"``: never cgroups.
    """

    def __init__(
        self,
        root_dir: str | os.PathLike[str] | None = None,
        *,
        base_env: Mapping[str, str] | None = None,
        shell: Sequence[str] | None = None,
        lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
        kill_timeout: float = DEFAULT_KILL_TIMEOUT,
        process_tracking: ProcessTracking = "auto",
    ) -> None:
        if process_tracking not in ("auto", "cgroup", "sweep"):
            raise ValueError(
                f"process_tracking={process_tracking!r}: use 'auto', 'cgroup' or 'sweep'"
            )
        base = Path(root_dir) if root_dir is not None else default_local_base_dir()
        self._base = Path(os.path.abspath(base))
        self._base_env = dict(base_env) if base_env is not None else None
        self._shell = tuple(shell) if shell is not None else _default_shell()
        self._lock_timeout = lock_timeout
        self._kill_timeout = kill_timeout
        self._process_tracking = process_tracking
        self._cgroups: CgroupSupport | None = None
        self._identity_locks = LoopLocalLocks()

    specification_version: Literal["harness-sandbox-v1"] = "harness-sandbox-v1"

    @property
    def provider_id(self) -> str:
        """``"local"``."""
        return "local"

    @property
    def capabilities(self) -> dict[str, bool | int | None]:
        """What this provider enforces, by the provider suite's capability names.

        Paths are confined beneath the session root and a command's process tree is
        killed (cgroup or sweep, see ``process_tracking``); commands themselves run on the
        host unconfined by design, so no network isolation, resource limits, system-file
        protection or disk quota is claimed. ``harness-testkit check-sandbox`` reads it.
        """
        return {
            "resume": True,
            "snapshots": True,
            "path_confinement": True,
            "kills_process_tree": True,
            "host_directory": True,
        }

    @property
    def base_dir(self) -> Path:
        """The base directory (sessions, templates and locks live under it)."""
        return self._base

    def session_root(self, session_id: str) -> Path:
        """The directory of session ``session_id`` (whether or not it exists).

        Args:
            session_id: The session id.

        Returns:
            ``<base>/sessions/<sanitized id>``.
        """
        return self._base / "sessions" / sanitize_name(session_id)

    def _template_dir(self, identity: str) -> Path:
        return self._base / "templates" / sanitize_name(identity)

    async def cgroup_support(self) -> CgroupSupport:
        """Where this provider's commands get cgroups (``base``), or why not (``reason``).

        Raises:
            SandboxUnavailableError: ``process_tracking="cgroup"`` and cgroups are unusable.
        """
        if self._process_tracking == "sweep":
            return CgroupSupport(None, "process_tracking='sweep' was chosen")
        support = self._cgroups
        if support is None:
            support = self._cgroups = await anyio.to_thread.run_sync(probe)
        if support.base is None and self._process_tracking == "cgroup":
            raise SandboxUnavailableError(
                f"LocalSandboxProvider(process_tracking='cgroup'): {support.reason}. Run as "
                "root or in a delegated cgroup v2 subtree, or use process_tracking='auto'."
            )
        return support

    async def _session(self, session_id: str, root: Path) -> LocalSandboxSession:
        return LocalSandboxSession(
            _SessionResource.open(
                session_id=session_id,
                root=root,
                shell=self._shell,
                base_env=self._base_env,
                kill_timeout=self._kill_timeout,
                cgroups=await self.cgroup_support(),
            )
        )

    async def create_session(
        self,
        *,
        session_id: str | None = None,
        identity: str | None = None,
        on_first_create: OnFirstCreate | None = None,
    ) -> LocalSandboxSession:
        """Create a session directory, from the identity's template when there is one.

        With ``identity`` and ``on_first_create``, the first creation for that identity
        runs ``on_first_create`` once in a fresh template directory (guarded by an
        in-process lock and a lock file, so concurrent creations run it once); every
        session of the identity starts as a copy of that template. Without an identity,
        ``on_first_create`` runs on the new session itself.

        Templates are relocated by copying: absolute paths or absolute symlinks that
        ``on_first_create`` bakes into files keep pointing at the template directory.

        Args:
            session_id: Names the directory so :meth:`resume_session` finds it; a random
                id when omitted.
            identity: Snapshot identity.
            on_first_create: Setup run once per identity on a restricted session.

        Returns:
            The new session.

        Raises:
            SandboxError: A session with this id already exists, or setup failed.
        """
        session_id = session_id if session_id is not None else uuid.uuid4().hex
        root = self.session_root(session_id)
        await self.cgroup_support()  # fails before anything is created
        template: Path | None = None
        if identity is not None and on_first_create is not None:
            template = await self._ensure_template(identity, on_first_create)
        root = await anyio.to_thread.run_sync(self._make_root, root, session_id, template)
        session = await self._session(session_id, root)
        if template is None and on_first_create is not None:
            try:
                await on_first_create(session.restricted())
            except BaseException:
                with anyio.CancelScope(shield=True):
                    await session.destroy()
                raise
        return session

    def _make_root(self, root: Path, session_id: str, template: Path | None) -> Path:
        root.parent.mkdir(parents=True, exist_ok=True)
        if root.exists():
            raise SandboxError(
                f"A local sandbox session with id {session_id!r} already exists at {root}; "
                "resume it with resume_session(), destroy it, or pick another session id."
            )
        if template is None:
            root.mkdir()
        else:
            shutil.copytree(template, root, symlinks=True)
        # The physical path: what `pwd` prints inside the session, even when the base
        # directory sits behind a symlink (macOS /var -> /private/var).
        return Path(os.path.realpath(root))

    async def _ensure_template(self, identity: str, on_first_create: OnFirstCreate) -> Path:
        template = self._template_dir(identity)
        lock = self._identity_locks.get(identity)
        async with lock:
            if await anyio.to_thread.run_sync(template.is_dir):
                return template
            lock_path = self._base / "locks" / f"identity-{template.name}.lock"
            async with file_lock(
                lock_path,
                wait_limit=self._lock_timeout,
                what=f"the local snapshot of identity {identity!r}",
            ):
                if await anyio.to_thread.run_sync(template.is_dir):
                    return template
                building = template.parent / f".building-{template.name}-{uuid.uuid4().hex}"
                await anyio.to_thread.run_sync(lambda: building.mkdir(parents=True, exist_ok=False))
                building = Path(await anyio.to_thread.run_sync(os.path.realpath, building))
                builder = await self._session(f"template:{identity}", building)
                try:
                    await on_first_create(builder.restricted())
                    await builder.stop()
                    # The rename publishes the finished template atomically: a crash
                    # mid-setup leaves only a .building directory, never a half template.
                    await anyio.to_thread.run_sync(building.rename, template)
                except BaseException:
                    with anyio.CancelScope(shield=True):
                        await builder.destroy()
                    raise
        return template

    async def resume_session(self, session_id: str) -> LocalSandboxSession:
        """Reopen an existing session directory (possibly created by another process).

        Args:
            session_id: The id the session was created with.

        Returns:
            The session.

        Raises:
            SandboxError: No session with that id exists under the base directory.
        """
        root = self.session_root(session_id)
        real = await anyio.to_thread.run_sync(_real_directory, root)  # one worker hop
        if real is None:
            raise SandboxError(
                f"No local sandbox session {session_id!r} exists under {self._base} "
                f"(looked for {root}); it was destroyed or never created here. Create it "
                "with create_session(session_id=...) or check the provider's root_dir."
            )
        return await self._session(session_id, Path(real))

    async def forget_identity(self, identity: str) -> None:
        """Delete the template of ``identity`` so the next creation bakes it again.

        Args:
            identity: The snapshot identity.
        """
        await anyio.to_thread.run_sync(_remove_tree, self._template_dir(identity))


# -- blocking helpers (run in worker threads) -------------------------------------------


def _kill_leftovers(cgroup_base: Path | None, token: str, kill_timeout: float) -> None:
    """Kill what a session's processes left: its cgroups (when it has them), then every
    process carrying its marker. One worker hop for both."""
    if cgroup_base is not None:
        kill_session_cgroups(cgroup_base, token, kill_timeout)
    sweep(f"{token}/")


def _real_directory(path: Path) -> str | None:
    """``path`` with its symlinks resolved when it is a directory, else ``None``."""
    return os.path.realpath(path) if path.is_dir() else None


def _remove_tree(path: Path) -> None:
    def make_writable_and_retry(function: object, failed: str, _error: object) -> None:
        # A session may leave read-only directories behind (chmod -w); rmtree needs
        # write permission on a directory to empty it.
        parent = os.path.dirname(failed)
        os.chmod(parent, 0o700)
        if os.path.isdir(failed) and not os.path.islink(failed):
            os.chmod(failed, 0o700)
            shutil.rmtree(failed, ignore_errors=True)
        else:
            os.unlink(failed)

    if path.is_symlink():
        path.unlink()
    elif not path.exists():
        return
    elif sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=make_writable_and_retry)
    else:
        shutil.rmtree(path, onerror=make_writable_and_retry)
