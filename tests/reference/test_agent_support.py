"""Shared helpers of the ``test_agent_*`` modules (this module holds no tests).

Every helper drives the reference ``HarnessAgent`` against the scripted adapter of
``tests.reference.scripted`` inside a local temp-dir sandbox, bounds every wait, and
always destroys what it created.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal, overload

import anyio

from harness_testkit.reference import (
    AgentSession,
    HarnessAgent,
    LocalSandboxProvider,
    StreamResult,
    Tool,
    tool,
)
from harness_testkit.spec import (
    BuiltinTool,
    ConsumerFinishStepPart,
    ConsumerPart,
    ConsumerTextDeltaPart,
    ConsumerToolApprovalRequestPart,
    ConsumerToolApprovalResponsePart,
    ConsumerToolCallPart,
    ConsumerToolErrorPart,
    ConsumerToolInputDeltaPart,
    ConsumerToolResultPart,
    ContinueTurnState,
    HarnessAdapter,
)
from tests.narrowing import of_type
from tests.reference.scripted import ScriptedHarness

#: Upper bound of any single test scenario (seconds).
LIMIT = 10

INACTIVE = "Tool '{}' is inactive due to the HarnessAgent tool filtering policy."
UNCLOSED = (
    "HarnessAgent: received terminal finish with unclosed step content. "
    "Harness adapters must emit `finish-step` before `finish`."
)

OBJECT = {"type": "object"}


def make_agent(harness: HarnessAdapter, tmp_path: Path, **settings: Any) -> HarnessAgent:
    """A ``HarnessAgent`` over ``harness`` with a local sandbox rooted in ``tmp_path``."""
    return HarnessAgent(
        harness=harness, sandbox=LocalSandboxProvider(root_dir=tmp_path / "sbx"), **settings
    )


@asynccontextmanager
async def opened(
    harness: HarnessAdapter, tmp_path: Path, *, session_id: str = "s1", **settings: Any
) -> AsyncIterator[tuple[HarnessAgent, AgentSession]]:
    """An agent and one session; the session (and its sandbox) is always torn down."""
    agent = make_agent(harness, tmp_path, **settings)
    with anyio.fail_after(LIMIT):
        session = await agent.create_session(session_id=session_id)
    try:
        with anyio.fail_after(LIMIT):
            yield agent, session
    finally:
        with anyio.CancelScope(shield=True), anyio.move_on_after(LIMIT):
            await teardown(session)


async def teardown(session: AgentSession) -> None:
    """Destroy the session; a handle ended by suspend/detach still owns a sandbox."""
    if session.status == "active":
        await session.destroy()
        return
    destroy = getattr(session.sandbox_session, "destroy", None)
    if destroy is not None:
        await destroy()


async def drain(result: StreamResult) -> list[ConsumerPart]:
    """Every consumer part of ``result``, in order."""
    with anyio.fail_after(LIMIT):
        return [part async for part in result.full_stream]


async def stream_parts(agent: HarnessAgent, **call: Any) -> tuple[StreamResult, list[ConsumerPart]]:
    """``agent.stream(**call)`` drained."""
    with anyio.fail_after(LIMIT):
        result = await agent.stream(**call)
    return result, await drain(result)


async def continue_parts(
    agent: HarnessAgent, **call: Any
) -> tuple[StreamResult, list[ConsumerPart]]:
    """``agent.continue_stream(**call)`` drained."""
    with anyio.fail_after(LIMIT):
        result = await agent.continue_stream(**call)
    return result, await drain(result)


def scripted(agent: HarnessAgent) -> ScriptedHarness:
    """The agent's adapter, asserted to be the scripted one (its recorder and turns)."""
    return of_type(ScriptedHarness, agent.harness)


def kinds(parts: Sequence[ConsumerPart]) -> list[str]:
    """The ``type`` of each part."""
    return [part.type for part in parts]


def wire(parts: Sequence[ConsumerPart]) -> list[dict[str, Any]]:
    """The camelCase wire dicts of ``parts``."""
    return [part.to_wire() for part in parts]


# Overloads for the kinds the tests pick, so each list has its part class.
@overload
def only(
    parts: Sequence[ConsumerPart], kind: Literal["text-delta"]
) -> list[ConsumerTextDeltaPart]: ...
@overload
def only(
    parts: Sequence[ConsumerPart], kind: Literal["tool-input-delta"]
) -> list[ConsumerToolInputDeltaPart]: ...
@overload
def only(
    parts: Sequence[ConsumerPart], kind: Literal["tool-call"]
) -> list[ConsumerToolCallPart]: ...
@overload
def only(
    parts: Sequence[ConsumerPart], kind: Literal["tool-result"]
) -> list[ConsumerToolResultPart]: ...
@overload
def only(
    parts: Sequence[ConsumerPart], kind: Literal["tool-error"]
) -> list[ConsumerToolErrorPart]: ...
@overload
def only(
    parts: Sequence[ConsumerPart], kind: Literal["tool-approval-request"]
) -> list[ConsumerToolApprovalRequestPart]: ...
@overload
def only(
    parts: Sequence[ConsumerPart], kind: Literal["tool-approval-response"]
) -> list[ConsumerToolApprovalResponsePart]: ...
@overload
def only(
    parts: Sequence[ConsumerPart], kind: Literal["finish-step"]
) -> list[ConsumerFinishStepPart]: ...
@overload
def only(parts: Sequence[ConsumerPart], kind: str) -> list[ConsumerPart]: ...
def only(parts: Sequence[ConsumerPart], kind: str) -> Sequence[ConsumerPart]:
    """The parts of one ``type`` (typed as that part's class for the kinds above)."""
    return [part for part in parts if part.type == kind]


def always_stop(seen: list[Any]) -> Callable[[Any], bool]:
    """A ``stop_when`` predicate that records each context it is asked about and says stop."""

    def predicate(context: Any) -> bool:
        seen.append(context)
        return True

    return predicate


def echo_tool(**overrides: Any) -> Tool:
    """A host tool returning ``{"echoed": input}``."""
    settings: dict[str, Any] = {
        "description": "Echo the input",
        "input_schema": OBJECT,
        "execute": lambda value, options: {"echoed": value},
    }
    settings.update(overrides)
    return tool(**settings)


def client_tool(**overrides: Any) -> Tool:
    """A client-side tool (no ``execute``)."""
    settings: dict[str, Any] = {"description": "Answered by the client", "input_schema": OBJECT}
    settings.update(overrides)
    return tool(**settings)


def builtin(schema: dict[str, Any] | None = None, **fields: Any) -> BuiltinTool:
    """A builtin tool declaration."""
    return BuiltinTool(description="runtime tool", input_schema=schema or dict(OBJECT), **fields)


BASH_SCHEMA = {
    "type": "object",
    "properties": {"command": {"type": "string"}},
    "required": ["command"],
}


async def suspend(session: AgentSession) -> ContinueTurnState:
    """``session.suspend_turn()``, bounded."""
    with anyio.fail_after(LIMIT):
        return await session.suspend_turn()


def approval_response(
    approval_id: str, approved: bool, reason: str | None = None
) -> dict[str, Any]:
    """An AI SDK ``tool-approval-response`` part."""
    part: dict[str, Any] = {
        "type": "tool-approval-response",
        "approvalId": approval_id,
        "approved": approved,
    }
    if reason is not None:
        part["reason"] = reason
    return part


def framing_problems(parts: Sequence[ConsumerPart]) -> list[str]:
    """Framing defects of a consumer stream (2.2.1, 2.2.3, 2.2.6).

    ``start`` first, exactly one terminal part and it is last, and ``start-step`` /
    ``finish-step`` alternate (a trailing step may stay open, STREAM-053).
    """
    problems: list[str] = []
    types = kinds(parts)
    if not types or types[0] != "start":
        problems.append("does not begin with start")
    terminals = [i for i, t in enumerate(types) if t in ("finish", "error", "abort")]
    if terminals != [len(types) - 1]:
        problems.append(f"terminal parts at {terminals} of {len(types)}")
    open_step = False
    for index, kind in enumerate(types):
        if kind == "start-step":
            if open_step:
                problems.append(f"start-step inside an open step at {index}")
            open_step = True
        elif kind == "finish-step":
            if not open_step:
                problems.append(f"finish-step without start-step at {index}")
            open_step = False
    return problems
