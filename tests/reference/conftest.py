"""Fixtures of the sandbox provider tests: providers and the Docker engine.

The ``anyio_backend`` fixture (asyncio and trio) comes from ``tests/conftest.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from harness_testkit.reference._docker_sandbox import DockerSandboxProvider
from harness_testkit.reference._local_sandbox import LocalSandboxProvider

from .sandbox_support import docker_provider_or_skip, finish_docker_provider


@pytest.fixture
def local_provider(tmp_path: Path) -> LocalSandboxProvider:
    """A local provider whose sessions live under the test's temporary directory."""
    return LocalSandboxProvider(tmp_path / "sandboxes")


@pytest.fixture(scope="session")
def docker_provider_session() -> Iterator[DockerSandboxProvider]:
    """One Docker provider for the run; fails the run if containers or images leaked."""
    provider = docker_provider_or_skip()
    yield provider
    finish_docker_provider(provider)


@pytest.fixture
def docker_provider(docker_provider_session: DockerSandboxProvider) -> DockerSandboxProvider:
    """The Docker provider (skips without an engine, fails without one under CI=true)."""
    return docker_provider_session
