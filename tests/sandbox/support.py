"""Helpers shared by the sandbox tests (reference and conformance): the Docker engine.

Docker tests skip with a reason when no engine answers, except under ``CI=true``, where
a missing engine is a failure. Every Docker provider used by the tests is checked for
leaked containers and snapshot images at the end of the run: leaks are removed and the
run fails loudly.
"""

from __future__ import annotations

import os
from typing import Any

import anyio
import pytest

from harness_testkit.sandbox._docker import DockerSandboxProvider
from harness_testkit.spec import SandboxUnavailableError

__all__ = ["docker_provider_or_skip", "finish_docker_provider"]


def docker_provider_or_skip(**options: Any) -> DockerSandboxProvider:
    """A Docker provider with its image ready, or skip (fail under ``CI=true``)."""
    provider = DockerSandboxProvider(**options)
    try:
        # Builds the sandbox image on first use, under a lock file (xdist-safe).
        anyio.run(provider.ensure_image)
    except SandboxUnavailableError as error:
        provider.close()
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true requires the Docker sandbox to work: {error}")
        pytest.skip(f"Docker sandbox unavailable here: {error}")
    return provider


def finish_docker_provider(provider: DockerSandboxProvider) -> None:
    """Remove and report anything the provider's sessions left behind, then close it."""
    try:
        leaked = provider.prune(owner=provider.owner)
    finally:
        provider.close()
    if leaked:
        pytest.fail(
            "The Docker tests leaked resources (removed now): "
            f"containers {list(leaked.containers)}, images {list(leaked.images)}. A test "
            "or fixture is missing a destroy() in a finally block."
        )
