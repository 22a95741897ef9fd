"""The sandbox conformance suite against both of the kit's providers.

One fixture, ``sandbox_target``, plugs a provider in; everything else is the suite's.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from harness_testkit.conformance._sandbox._checks import (
    SANDBOX_CHECKS,
    SandboxCapabilities,
    SandboxCheck,
    SandboxCheckSkipped,
    SandboxTarget,
    run_sandbox_check,
)
from harness_testkit.conformance._sandbox._model import skip_reason
from harness_testkit.sandbox import DockerSandboxProvider, LocalSandboxProvider
from tests.sandbox.support import docker_provider_or_skip, finish_docker_provider

LOCAL_CAPABILITIES = SandboxCapabilities(
    resume=True,
    snapshots=True,
    path_confinement=True,
    kills_process_tree=True,
    host_directory=True,
)
#: The suite's Docker provider has a small workspace so the quota check stays fast.
DOCKER_WORKSPACE_MIB = 8
DOCKER_CAPABILITIES = SandboxCapabilities(
    resume=True,
    snapshots=True,
    kills_process_tree=True,
    network_isolation=True,
    resource_limits=True,
    protects_system_files=True,
    disk_quota=DOCKER_WORKSPACE_MIB << 20,
)
CAPABILITIES = {"local": LOCAL_CAPABILITIES, "docker": DOCKER_CAPABILITIES}


@pytest.fixture(scope="session")
def suite_docker_provider() -> Iterator[DockerSandboxProvider]:
    """The Docker provider of the suite run; leaks fail the run."""
    provider = docker_provider_or_skip(workspace_size=f"{DOCKER_WORKSPACE_MIB}m")
    yield provider
    finish_docker_provider(provider)


@pytest.fixture(
    params=[
        pytest.param("local", id="local"),
        pytest.param("docker", id="docker", marks=pytest.mark.docker),
    ]
)
def sandbox_target(request: pytest.FixtureRequest, tmp_path: Path) -> SandboxTarget:
    """The provider under test, its capabilities, and how to replay a check."""
    if request.param == "local":
        root = tmp_path / "sandboxes"
        return SandboxTarget(
            provider=LocalSandboxProvider(root),
            capabilities=LOCAL_CAPABILITIES,
            fresh_provider=lambda: LocalSandboxProvider(root),
            max_examples=15,
            replay="pytest tests/conformance/test_sandbox_suite.py -k 'local and {check}'",
        )
    docker: DockerSandboxProvider = request.getfixturevalue("suite_docker_provider")
    return SandboxTarget(
        provider=docker,
        capabilities=DOCKER_CAPABILITIES,
        fresh_provider=lambda: DockerSandboxProvider(workspace_size=f"{DOCKER_WORKSPACE_MIB}m"),
        max_examples=6,
        replay="pytest tests/conformance/test_sandbox_suite.py -k 'docker and {check}'",
    )


@pytest.mark.anyio
@pytest.mark.parametrize("check", SANDBOX_CHECKS, ids=lambda check: check.name)
async def test_sandbox_check(check: SandboxCheck, sandbox_target: SandboxTarget) -> None:
    """Each check passes; a check of an unclaimed capability must be skipped by the suite."""
    if skip_reason(check, sandbox_target.capabilities) is not None:
        with pytest.raises(SandboxCheckSkipped):
            await run_sandbox_check(check, sandbox_target)
        return
    await run_sandbox_check(check, sandbox_target)


def test_claimed_capabilities_leave_nothing_unchecked() -> None:
    """Every capability a kit provider claims has checks, and the kit providers claim
    everything they enforce: only the capabilities named here stay unclaimed."""
    unclaimed = {
        "local": {"network_isolation", "resource_limits", "protects_system_files", "disk_quota"},
        "docker": {"path_confinement", "host_directory"},
    }
    for provider, capabilities in CAPABILITIES.items():
        claimed = {name for name in SandboxCapabilities.names() if getattr(capabilities, name)}
        assert claimed | unclaimed[provider] == set(SandboxCapabilities.names()), provider
        for name in claimed - {"host_directory"}:
            assert any(check.capability == name for check in SANDBOX_CHECKS), name


def test_every_check_names_its_requirement_or_capability() -> None:
    """Uncatalogued checks are capability-gated kit decisions."""
    capability_names = set(SandboxCapabilities.names())
    for check in SANDBOX_CHECKS:
        assert check.requirements or check.capability, check.name
        assert check.capability is None or check.capability in capability_names, check.name
    assert len({check.name for check in SANDBOX_CHECKS}) == len(SANDBOX_CHECKS)


def test_the_kit_providers_declare_what_the_suite_runs_them_with() -> None:
    """`check-sandbox` on the kit's own providers runs every check the tests above run."""
    from harness_testkit.conformance import sandbox_target_from

    local = sandbox_target_from(LocalSandboxProvider, where="LocalSandboxProvider")
    assert local.capabilities == LOCAL_CAPABILITIES
    docker = DockerSandboxProvider(workspace_size=f"{DOCKER_WORKSPACE_MIB}m")
    assert sandbox_target_from(docker, where="docker").capabilities == DOCKER_CAPABILITIES
    as_root = DockerSandboxProvider(user="0:0", workspace_size="1g")
    claimed = sandbox_target_from(as_root, where="docker as root").capabilities
    assert not claimed.protects_system_files
    assert claimed.disk_quota == 1 << 30
