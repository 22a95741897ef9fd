"""What the Docker provider needs around the engine: the SDK check, its lock directory,
closing sockets a failed connection leaves, and the listing of the kit's resources.
"""

from __future__ import annotations

import os
import socket
import tempfile
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from harness_testkit.spec import SandboxUnavailableError

__all__ = ["KitResources", "close_sockets_of", "lock_directory", "require_docker_sdk"]


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
    """Fail early, naming the extra, when the docker SDK is not installed."""
    try:
        import docker  # noqa: F401
    except ImportError as error:
        raise SandboxUnavailableError(
            "The Docker sandbox needs the docker Python SDK, an optional extra: "
            "pip install 'harness-testkit[docker]' (the local sandbox needs none)."
        ) from error
