"""The adapter's ``done()`` outlives a paused slice (APPROVAL-039, APPROVAL-041).

A slice that pauses for host input ends, but the adapter's turn goes on, as upstream's
does: ``done()`` keeps running, what it emits meanwhile stays queued for the next slice
(or for the continue state's ``bufferedParts``), and the agent stops it when the turn
continues, is captured or ends. These adapters emit a part well after the pausing one
(a ``Delay`` of many scheduling rounds), so the part is kept by design, not by timing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.reference.scripted import (
    Delay,
    ScriptedHarness,
    WaitResult,
    finish,
    finish_step,
    text_step,
    tool_call,
)
from tests.reference.test_agent_support import (
    LIMIT,
    client_tool,
    continue_parts,
    kinds,
    opened,
    stream_parts,
)

pytestmark = pytest.mark.anyio


def late_step_turn(delay: Delay) -> list[Any]:
    """A client call; its step's ``finish-step`` only after ``delay``; then the result."""
    return [
        tool_call("c1", "pick", "{}"),
        delay,
        finish_step("tool-calls"),
        WaitResult("c1"),
        *text_step("after"),
        finish(),
    ]


@pytest.mark.requirement("APPROVAL-041", "APPROVAL-039")
async def test_a_part_emitted_long_after_the_pause_is_buffered_at_stop(tmp_path: Path) -> None:
    delay = Delay(0.05)
    harness = ScriptedHarness([late_step_turn(delay)])
    async with opened(harness, tmp_path, tools={"pick": client_tool()}) as (agent, session):
        _, parts = await stream_parts(agent, session=session, prompt="go")
        assert kinds(parts)[-1] == "finish"  # paused for the client result
        with anyio.fail_after(LIMIT):
            await delay.passed.wait()  # done() still runs after the slice ended
            await anyio.sleep(0.01)  # and emits the finish-step
        state = await session.stop()
    assert state.continue_from is not None
    buffered = [part["type"] for part in state.continue_from.buffered_parts or []]
    assert buffered == ["finish-step"]


@pytest.mark.requirement("APPROVAL-041")
async def test_the_continuation_reads_what_was_emitted_during_the_pause(tmp_path: Path) -> None:
    delay = Delay(0.05)
    harness = ScriptedHarness([late_step_turn(delay)])
    async with opened(harness, tmp_path, tools={"pick": client_tool()}) as (agent, session):
        await stream_parts(agent, session=session, prompt="go")
        with anyio.fail_after(LIMIT):
            await delay.passed.wait()
            await anyio.sleep(0.01)
        result, parts = await continue_parts(
            agent, session=session, tool_result_continuations=[{"toolCallId": "c1", "output": 1}]
        )
        assert await result.text == "after"
        assert session.has_unfinished_turn() is False
    # The paused step's finish-step is the swallowed one (5.4.9): one new step, no
    # second finish-step of the paused step.
    assert kinds(parts).count("finish-step") == 1
    assert harness.recorder.results == [{"tool_call_id": "c1", "output": 1}]


@pytest.mark.requirement("APPROVAL-039")
async def test_destroying_a_paused_session_stops_its_done(tmp_path: Path) -> None:
    delay = Delay(30)  # done() sleeps far past the test: only a cancel ends it
    harness = ScriptedHarness([late_step_turn(delay)])
    async with opened(harness, tmp_path, tools={"pick": client_tool()}) as (agent, session):
        await stream_parts(agent, session=session, prompt="go")
        await anyio.sleep(0.01)
        assert not delay.cancelled.is_set()  # the pause left done() running
        await session.destroy()
        with anyio.fail_after(LIMIT):
            await delay.cancelled.wait()
    assert not delay.passed.is_set()
