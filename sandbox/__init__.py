"""Sandbox providers: where the harness runtime's files and processes live.

``LocalSandboxProvider`` (the embedded default: a directory per session and host
processes) and ``DockerSandboxProvider`` (one container per session, built from the
kit's own busybox image, ``network_mode="none"``). Both implement the harness-v1
``SandboxProvider`` / ``NetworkSandboxSession`` protocols of ``harness_testkit.spec``.
The Docker SDK is imported only when a Docker session is created; without the ``docker``
extra, ``DockerSandboxProvider()`` and :func:`require_docker_sdk` raise
:class:`~harness_testkit.spec.MissingExtraError` naming it; :func:`require_docker_engine`
also raises :class:`~harness_testkit.spec.SandboxUnavailableError` when no engine answers.
"""

from ._common import extract_lines as extract_lines
from ._docker import DEFAULT_SANDBOX_IMAGE as DEFAULT_SANDBOX_IMAGE
from ._docker import LABEL_PREFIX as LABEL_PREFIX
from ._docker import DockerSandboxProcess as DockerSandboxProcess
from ._docker import DockerSandboxProvider as DockerSandboxProvider
from ._docker import DockerSandboxSession as DockerSandboxSession
from ._docker import find_static_busybox as find_static_busybox
from ._docker_engine import require_docker_engine as require_docker_engine
from ._docker_engine import require_docker_sdk as require_docker_sdk
from ._local import LocalSandboxProcess as LocalSandboxProcess
from ._local import LocalSandboxProvider as LocalSandboxProvider
from ._local import LocalSandboxSession as LocalSandboxSession
from ._local import default_local_base_dir as default_local_base_dir

__all__ = [
    "DEFAULT_SANDBOX_IMAGE",
    "LABEL_PREFIX",
    "DockerSandboxProcess",
    "DockerSandboxProvider",
    "DockerSandboxSession",
    "LocalSandboxProcess",
    "LocalSandboxProvider",
    "LocalSandboxSession",
    "default_local_base_dir",
    "extract_lines",
    "find_static_busybox",
    "require_docker_engine",
    "require_docker_sdk",
]
