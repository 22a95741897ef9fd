"""Shared pytest configuration: anyio backends, hypothesis profiles, sandbox providers."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from harness_testkit.sandbox import DockerSandboxProvider, LocalSandboxProvider

from .sandbox.support import docker_provider_or_skip, finish_docker_provider

# One place for the profiles: `smoke` (fast, local default), `standard` (CI), and
# `exhaustive` (nightly). Select with HYPOTHESIS_PROFILE.
settings.register_profile(
    "smoke",
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
settings.register_profile(
    "standard",
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
settings.register_profile(
    "exhaustive",
    max_examples=2000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "smoke"))


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Every async test runs on both anyio backends."""
    return str(request.param)


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
