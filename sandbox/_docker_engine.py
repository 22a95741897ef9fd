"""What the Docker provider needs around the engine: the SDK check, its lock directory,
closing sockets a failed connection leaves, requests past a stale pause, and the listing
of the kit's resources.
"""

from __future__ import annotations

import os
import socket
import tempfile
import time
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from harness_testkit.spec import MissingExtraError

__all__ = [
    "KitResources",
    "call_past_stale_pause",
    "close_sockets_of",
    "lock_directory",
    "require_docker_engine",
    "require_docker_sdk",
]

_T = TypeVar("_T")

#: How long, and how often, a request refused because the container "is paused" is tried
#: again (:func:`call_past_stale_pause`).
PAUSED_SETTLE_SECONDS = 5.0
PAUSED_RETRY_INTERVAL = 0.05


@dataclass(frozen=True)
class KitResources:
    """Containers and images that carry the kit's labels (see :meth:`DockerSandboxProvider.prune`).

    Attributes:
        containers: Container names.
        images: Snapshot image tags (or ids when untagged).
    """

    containers: tuple[str, ...] = ()
    images: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.containers or self.images)


def close_sockets_of(error: BaseException) -> None:
    """Close sockets left open in the frames of a failed connection attempt.

    docker-py's unix-socket connection does not close its socket when ``connect`` fails;
    the socket would surface later as a ResourceWarning in unrelated code.
    """
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        traceback = current.__traceback__
        while traceback is not None:
            for value in traceback.tb_frame.f_locals.values():
                if isinstance(value, socket.socket):
                    with suppress(OSError):
                        value.close()
            traceback = traceback.tb_next
        current = current.__cause__ or current.__context__


def lock_directory() -> Path:
    return Path(tempfile.gettempdir()) / f"harness-testkit-locks-{os.getuid()}"


def require_docker_sdk() -> None:
    """Fail early, naming the extra, when the docker SDK is not installed.

    Raises:
        MissingExtraError: ``docker`` cannot be imported (a set-up error: the console
            script exits 2 with its one sentence).
    """
    try:
        import docker  # noqa: F401
    except ImportError as error:
        raise MissingExtraError("The Docker sandbox", "docker", missing="docker") from error


def call_past_stale_pause(function: Callable[..., _T], args: Sequence[Any]) -> _T:
    """``function(*args)``, tried again for :data:`PAUSED_SETTLE_SECONDS` while the engine
    refuses it with 409 "is paused".

    After an unpause, the engine can still apply the containerd event of the earlier
    pause and mark the running container paused until the resume event follows (moby
    handles those events asynchronously): an exec right after ``resume_session`` was
    refused so. The refusal comes before anything runs, so trying again is safe; a
    container that stays paused, and every other error, is raised as it came.
    """
    import docker.errors

    deadline: float | None = None
    while True:
        try:
            return function(*args)
        except docker.errors.APIError as error:
            explanation = str(getattr(error, "explanation", None) or error)
            if error.status_code != 409 or "is paused" not in explanation:
                raise
            now = time.monotonic()
            if deadline is None:
                deadline = now + PAUSED_SETTLE_SECONDS
            if now >= deadline:
                raise
            time.sleep(PAUSED_RETRY_INTERVAL)


def require_docker_engine(*, timeout: float = 5.0) -> None:
    """Fail early, with one sentence on what to do, when a Docker sandbox cannot run here.

    The commands call it before their first check or session, so that a missing SDK or
    engine is a set-up error (exit 2) instead of one error per check.

    Args:
        timeout: Seconds the engine has to answer.

    Raises:
        MissingExtraError: The ``docker`` extra is not installed.
        SandboxUnavailableError: No engine answered; the message says how to start one.
    """
    import anyio

    from ._docker import DockerSandboxProvider  # it builds on this module

    provider = DockerSandboxProvider(engine_timeout=timeout)
    try:
        anyio.run(provider.check_engine)
    finally:
        provider.close()
