"""Serving the kit's script from the scripted model endpoint (one per session)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from harness_testkit.fake_harness import Script

__all__ = ["open_scripted_endpoint"]


def _endpoint_script(script: Script) -> Any:
    from harness_testkit.model_endpoint import EndpointScript

    # Development scaffolding: text-only turns (replaced by the endpoint's converter).
    replies = []
    for turn in script.turns:
        for step in turn.steps:
            replies.append(
                {
                    "content": [
                        {"type": "text", "text": a.text} for a in step.actions if a.type == "text"
                    ]
                }
            )
    return EndpointScript.model_validate({"replies": replies, "repeatFrom": len(replies) - 1})


async def open_scripted_endpoint(
    script: Script,
) -> tuple[str, Callable[[], Awaitable[None]] | None]:
    """Start a model endpoint serving ``script``; return its base URL and its closer."""
    from harness_testkit.model_endpoint import ModelEndpoint

    endpoint = ModelEndpoint(_endpoint_script(script))
    await anyio.to_thread.run_sync(endpoint.start)

    async def close() -> None:
        await anyio.to_thread.run_sync(endpoint.stop)

    return endpoint.base_url, close
