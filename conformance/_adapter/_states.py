"""Black-box check: the adapter's own validation of the lifecycle states it is given.

The reference agent validates every state before an adapter sees it, so the agent-driven
checks never reach the adapter's own validation. This check hands corrupted states
(as the JSON a host restores) straight to ``do_start`` (a foreign ``harnessId``, another ``specificationVersion``,
``data`` that is not JSON, a state of the wrong type) and expects each to be refused.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from harness_testkit.spec import HarnessAdapter, HarnessSession, StartOptions

from .._checks import Check, CheckFailed, CheckSkipped, check
from .._context import CheckContext
from ._recording import RecordingAdapter

__all__ = ["CHECKS", "CORRUPTIONS"]


class _Capturing:
    """Forwards to an adapter and keeps the start options of every ``do_start``."""

    def __init__(self, inner: RecordingAdapter) -> None:
        self._inner = inner
        self.started: list[StartOptions] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def do_start(self, options: StartOptions) -> HarnessSession:
        """Remember ``options`` and start the wrapped adapter's session."""
        self.started.append(options)
        return await self._inner.do_start(options)


def _foreign(wire: dict[str, Any]) -> dict[str, Any]:
    return {**wire, "harnessId": f"{wire['harnessId']}-other"}


def _other_version(wire: dict[str, Any]) -> dict[str, Any]:
    return {**wire, "specificationVersion": "harness-v2"}


def _not_json(wire: dict[str, Any]) -> dict[str, Any]:
    data = wire.get("data")
    data = data if isinstance(data, dict) else {"value": data}
    return {**wire, "data": {**data, "openFiles": {"notes.md"}}}  # a set: not JSON


def _as_is(wire: dict[str, Any]) -> dict[str, Any]:
    return wire


#: name -> (how the state's wire form is corrupted, whether it goes in ``continue_from``).
CORRUPTIONS: Mapping[str, tuple[Callable[[dict[str, Any]], dict[str, Any]], bool]] = {
    "a foreign harnessId": (_foreign, False),
    "specificationVersion 'harness-v2'": (_other_version, False),
    "data that is not JSON": (_not_json, False),
    "a resume-session state as continue_from": (_as_is, True),
}


@check(
    "lifecycle.start-validates-states",
    title="do_start refuses states of another harness or version, non-JSON data, the wrong type",
    requirements=("ADAPTER-059",),
    depends_on=("lifecycle.detach-resume",),
)
async def start_validates_states(ctx: CheckContext) -> None:
    if not ctx.capabilities.resume:
        raise CheckSkipped("needs capability `resume` (the adapter accepts states at all)")
    adapter = ctx.adapter()
    capturing = _Capturing(adapter)
    agent = ctx.agent(capturing)
    session = await ctx.create_session(agent, session_id="conformance-states")
    state = await session.detach()
    (original,) = capturing.started
    for number, (what, (corrupt, as_continue)) in enumerate(CORRUPTIONS.items()):
        bad: Any = corrupt(state.to_wire())
        options = dataclasses.replace(
            original,
            session_id=f"conformance-states-{number}",
            resume_from=None if as_continue else bad,
            continue_from=bad if as_continue else None,
        )
        accepted = await _try_start(adapter, options)
        if accepted is not None:
            await _discard(accepted)
            raise CheckFailed(
                "ADAPTER-059",
                f"do_start accepted a state with {what} instead of refusing it",
                expected="an error naming what is wrong with the state",
                observed="a started adapter session",
            )


async def _try_start(adapter: HarnessAdapter, options: StartOptions) -> HarnessSession | None:
    try:
        return await adapter.do_start(options)
    except Exception:
        return None


async def _discard(session: HarnessSession) -> None:
    try:
        await session.do_destroy()
    except Exception:  # the verdict is already decided; teardown must not hide it
        pass


#: This module's checks, in order (listed by ``_registry.py``).
CHECKS: tuple[Check, ...] = (start_validates_states,)
