"""Serving the kit's script from the scripted model endpoint (one per session)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness_testkit.fake_harness import Script

__all__ = ["open_scripted_endpoint"]


async def open_scripted_endpoint(script: Script) -> tuple[str, Callable[[], Any] | None]:
    """Start a model endpoint serving ``script``; return its base URL and its closer."""
    raise NotImplementedError("pending: the model endpoint's Script converter")
