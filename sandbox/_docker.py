"""The real sandbox: one Docker container per session, driven through the Docker SDK.

:class:`DockerSandboxProvider` talks to the engine with the ``docker`` Python SDK (never
the CLI). Blocking SDK calls run in worker threads, so the provider works on asyncio and
trio alike. Containers never get a network (``network_mode="none"``: loopback only), run
as a non-root user with memory, CPU and process-count limits, and carry labels so the kit
can find and reap its own resources (``harness-testkit sandbox prune``).

No image registry is assumed reachable: unless told to use another image, the provider
builds its own ``FROM scratch`` image around the host's static busybox (Debian package
``busybox-static``) the first time it needs it.

Commands run as ``<shell> <command>`` (busybox ``sh -c`` by default) inside a small
wrapper that makes the command a session leader and records its process group, so a kill,
an abort or a timeout takes the whole group down (Docker has no API to kill an exec).
"""

from __future__ import annotations

import os
import posixpath
import re
import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from typing import Any, Literal, TypeVar

import anyio
import anyio.lowlevel

from harness_testkit.spec import (
    HarnessCapabilityUnsupportedError,
    OnFirstCreate,
    SandboxError,
    SandboxUnavailableError,
)

from . import _docker_engine
from ._common import (
    DEFAULT_KILL_TIMEOUT,
    DEFAULT_LOCK_TIMEOUT,
    LoopLocalLocks,
    file_lock,
    sanitize_name,
)
from ._docker_engine import KitResources, close_sockets_of, lock_directory, require_docker_sdk
from ._docker_files import engine_error, read_file, write_file
from ._docker_image import (
    DEFAULT_PATH,
    DEFAULT_SANDBOX_IMAGE,
    SANDBOX_HOME,
    SANDBOX_UID,
    SANDBOX_WORKSPACE,
    SNAPSHOT_SEED,
    build_context,
    find_static_busybox,
)
from ._docker_process import (
    EXEC_WRAPPER,
    PID_DIRECTORY,
    ContainerResource,
    DockerSandboxProcess,
    tree_marker_of,
)
from ._docker_session import DockerSandboxSession, DockerSandboxSessionBase

__all__ = [
    "DEFAULT_SANDBOX_IMAGE",
    "LABEL_PREFIX",
    "DockerSandboxProcess",
    "DockerSandboxProvider",
    "DockerSandboxSession",
    "DockerSandboxSessionBase",
    "KitResources",
    "find_static_busybox",
]

_T = TypeVar("_T")

#: Every label the kit puts on containers and images starts with this.
LABEL_PREFIX = "harness-testkit"
_KIND = f"{LABEL_PREFIX}.kind"
_SESSION_ID = f"{LABEL_PREFIX}.session-id"
_IDENTITY = f"{LABEL_PREFIX}.identity"
_OWNER = f"{LABEL_PREFIX}.owner"

_SNAPSHOT_REPOSITORY = "harness-testkit-snapshot"

#: PID 1 of every container: sleeps forever, exits at once on SIGTERM. ``init=True`` puts
#: Docker's tini above it, which reaps the orphans that killed commands leave behind.
_KEEPALIVE = ("/bin/sh", "-c", "trap 'exit 0' TERM INT; while :; do sleep 3600 & wait $!; done")

_ENGINE_HELP = (
    "Start a Docker engine (for example `sudo systemctl start docker`, or "
    "`sudo dockerd --bridge=none --iptables=false &`, as .ci/docker-up does) or point "
    "DOCKER_HOST at one; Docker tests are skipped without an engine."
)


# -- provider --------------------------------------------------------------------------


class DockerSandboxProvider:
    """Creates Docker sandbox sessions: one labelled container per session.

    Constructing it does no I/O (it fails with ``MissingExtraError`` naming the
    ``docker`` extra when the SDK is missing); the engine is contacted on first use (or by
    :meth:`check_engine`). Call :meth:`aclose` (or :meth:`close`) when done with it.

    Args:
        image: The image to run; default: the kit's busybox image, built when missing.
        user: ``uid:gid`` (or a name the image knows) commands and files belong to.
        working_directory: The default working directory (must exist in the image and be
            writable by ``user``).
        shell: The shell invocation, the command is appended (default ``sh -c``).
        environment: Default environment of every command (merged over the image's).
        memory: Memory limit (Docker syntax, e.g. ``"512m"``); swap is disabled.
        cpus: CPU limit.
        pids_limit: Maximum number of processes in a container.
        workspace_size: The disk quota of the working directory, a size-limited tmpfs
            (Docker size syntax, e.g. ``"512m"``); writing more fails with "No space left
            on device". tmpfs pages count against ``memory`` too.
        tmp_size: Size of the ``/tmp`` and home-directory tmpfs mounts (each).
        container_prefix: Prefix of container names.
        init: Run Docker's init (tini) as PID 1 so orphans of killed commands are reaped;
            turn off only for engines without ``docker-init``.
        busybox: The static busybox used to build the default image.
        engine_timeout: Seconds to wait for the engine to answer when connecting.
        api_timeout: Seconds any single engine request may take.
        lock_timeout: Longest wait for another process building an image or snapshot.
        kill_timeout: Longest wait for a killed command to be gone.
        client: An existing ``docker.DockerClient`` (the provider then does not close it).
    """

    def __init__(
        self,
        *,
        image: str | None = None,
        user: str = f"{SANDBOX_UID}:{SANDBOX_UID}",
        working_directory: str = SANDBOX_WORKSPACE,
        shell: Sequence[str] = ("/bin/sh", "-c"),
        environment: Mapping[str, str] | None = None,
        memory: str = "512m",
        cpus: float = 1.0,
        pids_limit: int = 256,
        workspace_size: str = "512m",
        tmp_size: str = "256m",
        container_prefix: str = LABEL_PREFIX,
        init: bool = True,
        busybox: str | os.PathLike[str] | None = None,
        engine_timeout: float = 5.0,
        api_timeout: float = 120.0,
        lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
        kill_timeout: float = DEFAULT_KILL_TIMEOUT,
        client: Any | None = None,
    ) -> None:
        if client is None:
            require_docker_sdk()
        if not posixpath.isabs(working_directory):
            raise ValueError(
                f"working_directory must be an absolute container path, got "
                f"{working_directory!r}; pass for example '/workspace'."
            )
        self.image = image or DEFAULT_SANDBOX_IMAGE
        self._builds_own_image = image is None
        self.user = user
        self.working_directory = working_directory
        self.shell = tuple(shell)
        self.environment = dict(environment or {})
        self.memory = memory
        self.cpus = cpus
        self.pids_limit = pids_limit
        self.workspace_size = workspace_size
        self.tmp_size = tmp_size
        self.container_prefix = container_prefix
        self.init = init
        self._busybox = busybox
        self._engine_timeout = engine_timeout
        self._api_timeout = api_timeout
        self._lock_timeout = lock_timeout
        self.kill_timeout = kill_timeout
        self._client: Any | None = client
        self._owns_client = client is None
        self._client_lock = threading.Lock()
        #: Labels every resource created by this instance, so a test run reaps only its own.
        self.owner = uuid.uuid4().hex
        self._locks = LoopLocalLocks()
        self._image_ready = False
        self._user_ids: tuple[int, int] | None = None

    specification_version: Literal["harness-sandbox-v1"] = "harness-sandbox-v1"

    @property
    def provider_id(self) -> str:
        """``"docker"``."""
        return "docker"

    @property
    def capabilities(self) -> dict[str, bool | int | None]:
        """What this provider enforces, by the provider suite's capability names (the
        quota from ``workspace_size``; system files only while the user is not root)."""
        return {
            "resume": True,
            "snapshots": True,
            "kills_process_tree": True,
            "network_isolation": True,
            "resource_limits": True,
            "protects_system_files": self.user.split(":", 1)[0] not in ("0", "root"),
            "disk_quota": _size_in_bytes(self.workspace_size),
        }

    # -- engine --------------------------------------------------------------------

    def _connect(self) -> Any:
        with self._client_lock:
            if self._client is not None:
                return self._client
            import docker

            host = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
            if host.startswith("unix://") and not os.path.exists(host[len("unix://") :]):
                raise SandboxUnavailableError(
                    f"No Docker engine: its socket {host[len('unix://') :]} does not exist. "
                    + _ENGINE_HELP
                )
            try:
                probe = docker.from_env(timeout=max(1, round(self._engine_timeout)))
            except Exception as error:
                close_sockets_of(error)
                raise SandboxUnavailableError(
                    f"Cannot reach a Docker engine ({error}). {_ENGINE_HELP}"
                ) from error
            try:
                probe.ping()
            except Exception as error:
                close_sockets_of(error)
                probe.close()
                raise SandboxUnavailableError(
                    f"No Docker engine answered within {self._engine_timeout:g} s "
                    f"({type(error).__name__}: {error}). {_ENGINE_HELP}"
                ) from error
            probe.close()
            self._client = docker.from_env(timeout=round(self._api_timeout))
            return self._client

    @property
    def _api(self) -> Any:
        return self._connect().api

    async def _call(self, function: Callable[..., _T], *args: Any) -> _T:
        """Run a blocking SDK call in a worker thread, mapping engine errors."""
        return await anyio.to_thread.run_sync(self._guarded, function, *args)

    def _guarded(self, function: Callable[..., _T], *args: Any) -> _T:
        import docker.errors
        import requests.exceptions

        try:
            return _docker_engine.call_past_stale_pause(function, args)
        except (SandboxError, HarnessCapabilityUnsupportedError):
            raise
        except requests.exceptions.ConnectionError as error:
            raise SandboxUnavailableError(
                f"Lost the connection to the Docker engine ({error}). {_ENGINE_HELP}"
            ) from error
        except docker.errors.APIError as error:
            raise engine_error(error) from error
        except docker.errors.DockerException as error:
            raise SandboxError(f"The Docker engine refused a request: {error}") from error

    async def check_engine(self) -> None:
        """Connect to the engine now.

        Raises:
            SandboxUnavailableError: No engine answered; the message says how to start one.
        """
        await anyio.to_thread.run_sync(self._connect)

    def close(self) -> None:
        """Close the engine connection (sessions stay as they are); idempotent."""
        with self._client_lock:
            if self._client is not None and self._owns_client:
                self._client.close()
            self._client = None

    async def aclose(self) -> None:
        """Close the engine connection; idempotent."""
        await anyio.to_thread.run_sync(self.close)

    # -- image ---------------------------------------------------------------------

    async def ensure_image(self) -> str:
        """Make sure the sandbox image exists, building the kit's image when missing.

        Safe to call concurrently, also from several processes (pytest-xdist workers):
        the build runs under a lock file and is skipped when another process finished it.

        Returns:
            The image reference.

        Raises:
            SandboxUnavailableError: No engine, no static busybox to build from, or a
                user-named image that is not present (no registry is pulled from).
        """
        if self._image_ready:
            return self.image
        async with self._locks.get("image"):
            if await self._call(self._image_exists, self.image):
                self._image_ready = True
                return self.image
            if not self._builds_own_image:
                raise SandboxUnavailableError(
                    f"The sandbox image {self.image!r} is not present on the Docker engine "
                    "and the kit does not pull images; build or load it first (for example "
                    "`docker pull` or `docker load`), or omit image= to use the kit's image."
                )
            lock = lock_directory() / f"docker-image-{sanitize_name(self.image)}.lock"
            async with file_lock(
                lock, wait_limit=self._lock_timeout, what=f"building {self.image}"
            ):
                if not await self._call(self._image_exists, self.image):
                    await self._call(self._build_image, self.image, self._busybox)
            self._image_ready = True
            return self.image

    def _image_exists(self, reference: str) -> bool:
        import docker.errors

        try:
            self._api.inspect_image(reference)
        except docker.errors.ImageNotFound:
            return False
        return True

    def build_image_blocking(
        self, tag: str | None = None, busybox: str | os.PathLike[str] | None = None
    ) -> str:
        """Build the kit's busybox sandbox image now (blocking; the CLI's ``build-image``).

        Args:
            tag: The tag to build (default: the provider's image).
            busybox: The static busybox to put in it (default: found on the host).

        Returns:
            The image id.

        Raises:
            SandboxUnavailableError: No engine or no static busybox.
            SandboxError: The build failed.
        """
        return self._guarded(self._build_image, tag, busybox)

    def _build_image(self, tag: str | None, busybox: str | os.PathLike[str] | None) -> str:
        import docker.errors

        binary = find_static_busybox(busybox)
        client = self._connect()
        try:
            image, _logs = client.images.build(
                fileobj=build_context(binary),
                custom_context=True,
                tag=tag or self.image,
                rm=True,
                forcerm=True,
                network_mode="none",
                labels={_KIND: "sandbox-image"},
            )
        except docker.errors.BuildError as error:
            log = "".join(
                str(entry.get("stream", entry.get("error", ""))) for entry in error.build_log
            )
            raise SandboxError(
                f"Building the sandbox image {tag or self.image} failed: {error.msg}\n{log}"
            ) from error
        return str(image.id)

    # -- blocking engine operations (worker threads) -------------------------------

    def _container_name(self, session_id: str) -> str:
        return f"{self.container_prefix}-{sanitize_name(session_id)}"

    def _snapshot_tag(self, identity: str) -> str:
        return f"{_SNAPSHOT_REPOSITORY}:{sanitize_name(identity, max_length=100)}"

    def _tmpfs_mounts(self, *, workspace: bool) -> dict[str, str]:
        uid, _, gid = self.user.partition(":")
        owner = f"uid={uid},gid={gid or uid}" if uid.isdigit() and (gid or uid).isdigit() else ""
        mounts = {"/tmp": f"rw,exec,nosuid,nodev,size={self.tmp_size},mode=1777"}
        if self._builds_own_image:
            mounts[SANDBOX_HOME] = f"rw,exec,nosuid,nodev,size={self.tmp_size},mode=0755,{owner}"
        if workspace:
            mounts[self.working_directory] = (
                f"rw,exec,nosuid,nodev,size={self.workspace_size},mode=0755,{owner}"
            )
        return {path: options.rstrip(",") for path, options in mounts.items()}

    def _create_container(
        self, name: str, image: str, labels: dict[str, str], read_only: bool = True
    ) -> None:
        """Create and start a container; ``read_only=False`` only for snapshot builders."""
        import docker.errors

        api = self._api
        host_config = api.create_host_config(
            network_mode="none",
            mem_limit=self.memory,
            memswap_limit=self.memory,
            nano_cpus=int(self.cpus * 1e9),
            pids_limit=self.pids_limit,
            init=self.init,
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            read_only=read_only,
            tmpfs=self._tmpfs_mounts(workspace=read_only),
        )
        environment = {"HOME": SANDBOX_HOME, "PATH": DEFAULT_PATH} if self._builds_own_image else {}
        environment.update(self.environment)
        try:
            api.create_container(
                image,
                command=list(_KEEPALIVE),
                name=name,
                user=self.user,
                working_dir=self.working_directory,
                environment=environment,
                labels={**labels, _OWNER: self.owner},
                host_config=host_config,
            )
        except docker.errors.APIError as error:
            if error.status_code == 409:
                raise SandboxError(
                    f"A container named {name} already exists, so the session cannot be "
                    "created; resume it with resume_session(), destroy it (or run "
                    "`harness-testkit sandbox prune`), or pick another session id."
                ) from error
            raise
        try:
            api.start(name)
        except Exception:
            with suppress(Exception):
                api.remove_container(name, force=True)
            raise

    def _pause_container(self, name: str) -> None:
        import docker.errors

        with suppress(docker.errors.NotFound):
            details = self._api.inspect_container(name)
            state = details.get("State", {})
            if state.get("Running") and not state.get("Paused"):
                with suppress(docker.errors.APIError):  # paused meanwhile, or exiting
                    self._api.pause(name)

    def _remove_container(self, name: str) -> None:
        import docker.errors

        with suppress(docker.errors.NotFound):
            with suppress(docker.errors.APIError):
                self._api.unpause(name)  # a paused container is not always removable
            self._api.remove_container(name, force=True, v=True)
        # A removal already in progress (409) finishes on its own.

    def _exec_quiet(self, container: str, argv: list[str]) -> int:
        """Run a helper command to completion, discarding its output; return its exit code."""
        api = self._api
        created = api.exec_create(container, argv, stdout=True, stderr=True, user=self.user)
        api.exec_start(created["Id"], stream=False)
        code = api.exec_inspect(created["Id"]).get("ExitCode")
        return int(code) if code is not None else -1

    def _start_exec(
        self,
        container: str,
        command: str,
        workdir: str | None,
        env: Mapping[str, str] | None,
        pid_file: str,
    ) -> tuple[str, Any]:
        import docker.errors

        api = self._api
        argv = [
            "/bin/sh",
            "-c",
            f"[ -d {PID_DIRECTORY} ] || mkdir -p -m 1777 {PID_DIRECTORY}; " + EXEC_WRAPPER,
        ]
        argv += [pid_file, *self.shell, command]
        try:
            created = api.exec_create(
                container,
                argv,
                stdout=True,
                stderr=True,
                stdin=False,
                tty=False,
                environment=dict(env or {}, **dict([tree_marker_of(pid_file).split("=", 1)])),
                workdir=workdir,
                user=self.user,
            )
        except docker.errors.APIError as error:
            if error.status_code == 409:
                raise SandboxError(
                    f"The container {container} is not running, so the command cannot "
                    "start; resume the session with resume_session()."
                ) from error
            raise
        exec_id = str(created["Id"])
        connection = api.exec_start(exec_id, socket=True)
        # Long silent commands are normal: reads must not time out.
        raw = getattr(connection, "_sock", connection)
        if hasattr(raw, "settimeout"):
            raw.settimeout(None)
        return exec_id, connection

    def _user_id_pair(self, container: str) -> tuple[int, int]:
        if self._user_ids is None:
            uid_text, _, gid_text = self.user.partition(":")
            if uid_text.isdigit() and (not gid_text or gid_text.isdigit()):
                self._user_ids = (int(uid_text), int(gid_text or uid_text))
            else:
                created = self._api.exec_create(
                    container, ["/bin/sh", "-c", "id -u; id -g"], user=self.user
                )
                text = self._api.exec_start(created["Id"]).decode().split()
                self._user_ids = (int(text[0]), int(text[1]))
        return self._user_ids

    def _read_file(self, container: str, absolute: str, shown: str) -> bytes | None:
        return read_file(
            self._api, container, self.user, absolute, shown, timeout=self._api_timeout
        )

    def _write_file(self, container: str, absolute: str, content: bytes, shown: str) -> None:
        write_file(
            self._api, container, self.user, absolute, content, shown, timeout=self._api_timeout
        )

    def _seed_workspace(self, container: str) -> None:
        code = self._exec_quiet(
            container,
            ["/bin/sh", "-c", 'cp -a "$1/." "$2/"', "seed", SNAPSHOT_SEED, self.working_directory],
        )
        if code != 0:
            raise SandboxError(
                f"Cannot fill the workspace of {container} from its snapshot (exit {code}); "
                "the snapshot may exceed the workspace quota (workspace_size)."
            )

    def _find_session_container(self, session_id: str) -> tuple[str, str]:
        import docker.errors

        name = self._container_name(session_id)
        try:
            details = self._api.inspect_container(name)
        except docker.errors.NotFound:
            raise SandboxError(
                f"No Docker sandbox session {session_id!r} exists (no container named "
                f"{name}); it was destroyed or never created on this engine. Create it with "
                "create_session(session_id=...)."
            ) from None
        labels = details.get("Config", {}).get("Labels") or {}
        if labels.get(_KIND) != "session":
            raise SandboxError(
                f"The container {name} was not created by harness-testkit (it lacks the "
                f"{_KIND}=session label); remove or rename it, or pick another session id."
            )
        state = details.get("State", {})
        if state.get("Paused"):
            self._api.unpause(name)
        elif not state.get("Running"):
            # Stopped outside the kit: its tmpfs workspace is gone, the container restarts
            # with an empty one.
            self._api.start(name)
        return name, str(details.get("Config", {}).get("Image", self.image))

    def _commit_snapshot(self, container: str, identity: str, tag: str) -> None:
        repository, _, version = tag.partition(":")
        # Sessions get a fresh tmpfs workspace: keep the baked one where they copy it from.
        code = self._exec_quiet(
            container,
            ["/bin/sh", "-c", 'cp -a "$1/." "$2/"', "seed", self.working_directory, SNAPSHOT_SEED],
        )
        if code != 0:
            raise SandboxError(
                f"Cannot snapshot identity {identity!r}: copying the workspace to "
                f"{SNAPSHOT_SEED} failed (exit {code}); the image must have a writable "
                f"{SNAPSHOT_SEED} (the kit's image has)."
            )
        self._api.stop(container, timeout=2)
        self._api.commit(
            container,
            repository=repository,
            tag=version,
            conf={
                "Labels": {
                    _KIND: "snapshot",
                    _IDENTITY: identity,
                    _OWNER: self.owner,
                },
            },
        )

    # -- sessions ------------------------------------------------------------------

    def _session(self, session_id: str, container: str, image: str) -> DockerSandboxSession:
        return DockerSandboxSession(
            ContainerResource.open(
                provider=self, session_id=session_id, container=container, image=image
            )
        )

    async def create_session(
        self,
        *,
        session_id: str | None = None,
        identity: str | None = None,
        on_first_create: OnFirstCreate | None = None,
    ) -> DockerSandboxSession:
        """Create and start a container for a new session.

        With ``identity`` and ``on_first_create``, the first creation for that identity
        runs ``on_first_create`` once in a builder container and commits it as the local
        image ``harness-testkit-snapshot:<identity>``; every session of the identity starts
        from that image. Concurrent first creations (in this process or others) run it
        once. Without an identity, ``on_first_create`` runs on the new session itself.

        Args:
            session_id: Names the container so :meth:`resume_session` finds it; random
                when omitted.
            identity: Snapshot identity.
            on_first_create: Setup run once per identity on a restricted session.

        Returns:
            The running session.

        Raises:
            SandboxUnavailableError: No engine, or the image cannot be built.
            SandboxError: A container with this session's name exists, or setup failed.
        """
        session_id = session_id if session_id is not None else uuid.uuid4().hex
        image = await self.ensure_image()
        from_snapshot = identity is not None and on_first_create is not None
        if identity is not None and on_first_create is not None:
            image = await self._ensure_snapshot(identity, on_first_create, image)
        name = self._container_name(session_id)
        labels = {_KIND: "session", _SESSION_ID: session_id}
        if identity is not None:
            labels[_IDENTITY] = identity
        await self._call(self._create_container, name, image, labels)
        session = self._session(session_id, name, image)
        if from_snapshot:
            try:
                await self._call(self._seed_workspace, name)
            except BaseException:
                with anyio.CancelScope(shield=True):
                    await session.destroy()
                raise
        if not from_snapshot and on_first_create is not None:
            try:
                await on_first_create(session.restricted())
            except BaseException:
                with anyio.CancelScope(shield=True):
                    await session.destroy()
                raise
        return session

    async def _ensure_snapshot(
        self, identity: str, on_first_create: OnFirstCreate, base: str
    ) -> str:
        tag = self._snapshot_tag(identity)
        lock = self._locks.get(f"identity:{identity}")
        async with lock:
            if await self._call(self._image_exists, tag):
                return tag
            lock_path = lock_directory() / f"docker-identity-{sanitize_name(identity)}.lock"
            async with file_lock(
                lock_path,
                wait_limit=self._lock_timeout,
                what=f"the snapshot of identity {identity!r}",
            ):
                if await self._call(self._image_exists, tag):
                    return tag
                builder_name = f"{self.container_prefix}-snapshot-{uuid.uuid4().hex[:12]}"
                await self._call(
                    self._create_container,
                    builder_name,
                    base,
                    {_KIND: "snapshot-build", _IDENTITY: identity},
                    False,
                )
                builder = self._session(f"snapshot:{identity}", builder_name, base)
                try:
                    await on_first_create(builder.restricted())
                    await builder._release_processes()
                    await self._call(self._commit_snapshot, builder_name, identity, tag)
                finally:
                    with anyio.CancelScope(shield=True):
                        await builder.destroy()
        return tag

    async def resume_session(self, session_id: str) -> DockerSandboxSession:
        """Reattach to a session's container (possibly created by another process).

        A stopped container is started again.

        Args:
            session_id: The id the session was created with.

        Returns:
            The running session.

        Raises:
            SandboxError: No container of that session exists on the engine.
        """
        name, image = await self._call(self._find_session_container, session_id)
        return self._session(session_id, name, image)

    async def forget_identity(self, identity: str) -> None:
        """Remove the snapshot image of ``identity`` so the next creation bakes it again.

        Args:
            identity: The snapshot identity.
        """
        await self._call(self._remove_image, self._snapshot_tag(identity))

    def _remove_image(self, reference: str) -> None:
        import docker.errors

        with suppress(docker.errors.ImageNotFound, docker.errors.NotFound):
            self._api.remove_image(reference, force=True)

    # -- housekeeping --------------------------------------------------------------

    def list_kit_resources(self, *, owner: str | None = None) -> KitResources:
        """List containers and snapshot images that carry the kit's labels (blocking).

        Args:
            owner: Only those created by the provider instance with this :attr:`owner`.

        Returns:
            The container names and snapshot image references.
        """
        return self._guarded(self._list_kit_resources, owner)

    def _list_kit_resources(self, owner: str | None) -> KitResources:
        container_filters = [f"{_KIND}"]
        image_filters = [f"{_KIND}=snapshot"]
        if owner is not None:
            container_filters.append(f"{_OWNER}={owner}")
            image_filters.append(f"{_OWNER}={owner}")
        api = self._api
        containers = api.containers(all=True, filters={"label": container_filters})
        images = api.images(filters={"label": image_filters})
        return KitResources(
            containers=tuple(
                sorted(
                    str(entry["Names"][0]).lstrip("/") for entry in containers if entry.get("Names")
                )
            ),
            images=tuple(
                sorted((entry.get("RepoTags") or [str(entry["Id"])])[0] for entry in images)
            ),
        )

    def prune(self, *, owner: str | None = None, dry_run: bool = False) -> KitResources:
        """Remove the kit's containers and snapshot images (blocking).

        Args:
            owner: Only those created by the provider instance with this :attr:`owner`.
            dry_run: List what would be removed without removing it.

        Returns:
            What was (or would be) removed.
        """
        return self._guarded(self._prune, owner, dry_run)

    def _prune(self, owner: str | None, dry_run: bool) -> KitResources:
        found = self._list_kit_resources(owner)
        if not dry_run:
            for name in found.containers:
                self._remove_container(name)
            for reference in found.images:
                self._remove_image(reference)
        return found


_SIZE = re.compile(r"(\d+)([bkmg]?)", re.IGNORECASE)


def _size_in_bytes(size: str) -> int | None:
    """Bytes of a Docker size string (``"512m"``: binary units, as the engine reads them);
    ``None`` when it is not one (no quota is claimed then)."""
    match = _SIZE.fullmatch(size.strip())
    if match is None:
        return None
    shift = {"": 0, "b": 0, "k": 10, "m": 20, "g": 30}[match.group(2).lower()]
    return int(match.group(1)) << shift
