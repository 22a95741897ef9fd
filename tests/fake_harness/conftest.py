"""Fixtures of the fake harness tests: both anyio backends and a real local sandbox."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from harness_testkit.sandbox import LocalSandboxProvider
from tests.fake_harness.support import SandboxEnv


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Run every ``@pytest.mark.anyio`` test on both anyio backends."""
    return str(request.param)


@pytest.fixture
async def sandbox(tmp_path: Path) -> AsyncIterator[SandboxEnv]:
    """A fresh local sandbox session with a session work dir inside it."""
    provider = LocalSandboxProvider(tmp_path / "sandboxes")
    env = await SandboxEnv.create(provider, "s1")
    try:
        yield env
    finally:
        await env.session.destroy()
