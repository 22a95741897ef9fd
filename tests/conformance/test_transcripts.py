"""Snapshots of canonical transcripts of the reference agent on the fake harness.

Volatile fields are replaced by the declared normaliser (``VOLATILE_FIELDS``), so a
snapshot diff shows only behaviour changes. Update with ``pytest --snapshot-update``.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from syrupy.assertion import SnapshotAssertion

from harness_testkit.conformance import normalize_transcript
from harness_testkit.fake_harness import FakeHarness, Script, load_example
from harness_testkit.reference import HarnessAgent, LocalSandboxProvider, tool
from harness_testkit.spec import ConsumerPart

pytestmark = pytest.mark.anyio


@pytest.fixture
def sandbox_root() -> Iterator[Path]:
    """A sandbox root whose path length never changes (token estimates count the work dir
    path, and pytest's tmp_path differs in length between plain and xdist runs)."""
    root = Path(tempfile.mkdtemp(prefix="htk-snap-", dir="/tmp"))
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _weather(value: dict[str, Any], options: object) -> dict[str, Any]:
    return {"city": value.get("city"), "forecast": "sunny"}


async def _collect(result: Any) -> list[ConsumerPart]:
    return [part async for part in result.full_stream]


async def test_hello_example_on_claude_code(
    sandbox_root: Path, snapshot: SnapshotAssertion
) -> None:
    agent = HarnessAgent(
        harness=FakeHarness(script=load_example("hello"), profile="claude-code"),
        sandbox=LocalSandboxProvider(root_dir=sandbox_root),
        tools={
            "weather": tool(
                description="Weather", input_schema={"type": "object"}, execute=_weather
            )
        },
        tool_approval={"weather": "user-approval"},
    )
    parts: list[ConsumerPart] = []
    with anyio.fail_after(20):
        session = await agent.create_session(session_id="snapshot")
        try:
            parts += await _collect(await agent.stream(session=session, prompt="Hello there"))
            (pending,) = session.pending_tool_approvals
            approval = {
                "type": "tool-approval-response",
                "approvalId": pending.approval_id,
                "approved": True,
            }
            parts += await _collect(
                await agent.continue_stream(session=session, tool_approval_continuations=[approval])
            )
            parts += await _collect(await agent.stream(session=session, prompt="Search the docs"))
        finally:
            await session.destroy()
    assert normalize_transcript(parts) == snapshot


async def test_denied_and_automatic_approvals_on_pi(
    sandbox_root: Path, snapshot: SnapshotAssertion
) -> None:
    script = Script.model_validate(
        {
            "turns": [
                {
                    "steps": [
                        {
                            "actions": [
                                {"hostTool": "weather", "id": "w1", "input": {"city": "Oslo"}},
                                {"hostTool": "forbidden", "id": "f1", "input": {}},
                                {"builtin": "bash", "id": "b1", "input": {"command": "echo hi"}},
                            ],
                        },
                        {"actions": [{"text": "All done."}]},
                    ]
                }
            ]
        }
    )
    agent = HarnessAgent(
        harness=FakeHarness(script=script, profile="pi"),
        sandbox=LocalSandboxProvider(root_dir=sandbox_root),
        tools={
            "weather": tool(
                description="Weather", input_schema={"type": "object"}, execute=_weather
            ),
            "forbidden": tool(
                description="Never", input_schema={"type": "object"}, execute=_weather
            ),
        },
        tool_approval={"weather": "user-approval", "forbidden": "denied"},
        permission_mode="allow-edits",
    )
    parts: list[ConsumerPart] = []
    with anyio.fail_after(20):
        session = await agent.create_session(session_id="snapshot-pi")
        try:
            parts += await _collect(await agent.stream(session=session, prompt="go"))
            for _ in range(3):
                if not session.has_unfinished_turn():
                    break
                answers = [
                    {
                        "type": "tool-approval-response",
                        "approvalId": p.approval_id,
                        "approved": p.tool_name == "weather",
                    }
                    for p in session.pending_tool_approvals
                ]
                parts += await _collect(
                    await agent.continue_stream(
                        session=session, tool_approval_continuations=answers
                    )
                )
        finally:
            await session.destroy()
    assert normalize_transcript(parts) == snapshot


def test_the_normaliser_is_stable_across_runs() -> None:
    from harness_testkit.spec import ConsumerFinishStepPart, LanguageModelUsage, StepResponse

    def part(call: str, stamp: str) -> ConsumerFinishStepPart:
        return ConsumerFinishStepPart(
            response=StepResponse(id=f"{call}-0", timestamp=stamp, model_id="m"),
            usage=LanguageModelUsage(),
            finish_reason="stop",
        )

    first = normalize_transcript([part("aaaaaaaaaaaaaaaa", "2026-01-01T00:00:00")])
    second = normalize_transcript([part("bbbbbbbbbbbbbbbb", "2027-02-02T00:00:00")])
    assert first == second
    assert first[0]["response"] == {
        "id": "<call-1>-0",
        "timestamp": "<timestamp>",
        "modelId": "m",
        "messages": [],
    }
