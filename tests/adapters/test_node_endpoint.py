"""A Node session's scripted endpoint: a resumed session gets its port back."""

from __future__ import annotations

import socket

import pytest

from harness_testkit.adapters.node._scripting import ScriptedEndpoint
from harness_testkit.fake_harness import Script

pytestmark = pytest.mark.anyio

SCRIPT = Script.model_validate({"turns": [{"steps": [{"actions": [{"text": "hi"}]}]}]})


async def _open(port: int = 0) -> ScriptedEndpoint:
    return await ScriptedEndpoint.open(SCRIPT, builtin_tools={}, work_dir="/work", port=port)


async def test_a_resumed_session_gets_its_endpoint_port_back() -> None:
    # A runtime left running by the detached session (a bridge's agent) still calls the
    # endpoint its config names; the endpoint of the resumed session must be there.
    first = await _open()
    port = first.port
    assert first.base_url == f"http://127.0.0.1:{port}"
    await first.close()
    again = await _open(port)
    try:
        assert again.port == port
    finally:
        await again.close()


async def test_a_taken_port_falls_back_to_a_free_one() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = int(taken.getsockname()[1])
        endpoint = await _open(port)
        try:
            assert endpoint.port != port
        finally:
            await endpoint.close()
