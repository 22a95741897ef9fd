"""Shared pytest configuration: anyio backends, hypothesis profiles, sandbox providers."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from harness_testkit.sandbox import DockerSandboxProvider, LocalSandboxProvider

from .sandbox.support import LeakWatch, docker_provider_or_skip, finish_docker_provider

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


def _exhaustive_selected(config: pytest.Config) -> bool:
    return (
        os.environ.get("HYPOTHESIS_PROFILE") == "exhaustive"
        or os.environ.get("HARNESS_TESTKIT_EXHAUSTIVE") == "1"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Sweeps marked ``exhaustive`` (every mutant at every seed ...) run only on request.

    They take about fifteen minutes on one of two shared cores, so the default run and CI
    skip them with a reason that says how to run them (``HARNESS_TESTKIT_EXHAUSTIVE=1`` or
    ``HYPOTHESIS_PROFILE=exhaustive``); the default run keeps a sample of each sweep.
    """
    if _exhaustive_selected(config):
        return
    skip = pytest.mark.skip(
        reason="exhaustive sweep: run with HARNESS_TESTKIT_EXHAUSTIVE=1 (or HYPOTHESIS_PROFILE=exhaustive)"
    )
    for item in items:
        if item.get_closest_marker("exhaustive") is not None:
            item.add_marker(skip)


@pytest.fixture(scope="session", autouse=True)
def no_sandbox_leaks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Fail the run when a local sandbox leaves a process, cgroup or directory behind.

    The default local base directory points at a fresh directory of this run; leaks are
    removed before the run fails (tests/sandbox/support.py, ``LeakWatch``).
    """
    watch = LeakWatch(tmp_path_factory.mktemp("harness-testkit-local"))
    watch.start()
    yield
    leaks = watch.finish()
    if leaks:
        pytest.fail(
            "The tests left sandbox resources behind (removed now): " + "; ".join(leaks) + ". "
            "A test or fixture is missing a destroy() (or a kill of a spawned process)."
        )


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
