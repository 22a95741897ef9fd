"""StreamResult: early exit, replay by a second reader, aggregates without iteration."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from harness_testkit.fake_harness import FakeHarness, Script
from harness_testkit.reference import HarnessAgent, LocalSandboxProvider, TurnState

pytestmark = pytest.mark.anyio

TEXT = "one two three four five six seven eight"


def _agent(tmp_path: Path) -> HarnessAgent:
    return HarnessAgent(
        harness=FakeHarness(script=Script.from_texts(TEXT), profile="minimal"),
        sandbox=LocalSandboxProvider(root_dir=tmp_path),
    )


async def test_leaving_the_stream_early_through_aclose_aborts_the_turn_cleanly(
    tmp_path: Path,
) -> None:
    agent = _agent(tmp_path)
    with anyio.fail_after(10):
        session = await agent.create_session()
        try:
            async with await agent.stream(session=session, prompt="x") as result:
                async for part in result.full_stream:
                    if part.type == "text-delta":
                        break
            assert session.turn_state is TurnState.IDLE
            again = await agent.generate(session=session, prompt="again")
            assert again.text == TEXT
        finally:
            await session.destroy()


async def test_a_second_reader_replays_the_whole_stream(tmp_path: Path) -> None:
    agent = _agent(tmp_path)
    with anyio.fail_after(10):
        session = await agent.create_session()
        try:
            result = await agent.stream(session=session, prompt="x")
            first = [part.type async for part in result.full_stream]
            second = [part.type async for part in result.full_stream]
            assert first == second
            assert first[0] == "start"
            assert first[-1] == "finish"
        finally:
            await session.destroy()


async def test_aggregates_consume_the_stream_when_nobody_iterates(tmp_path: Path) -> None:
    agent = _agent(tmp_path)
    with anyio.fail_after(10):
        session = await agent.create_session()
        try:
            result = await agent.stream(session=session, prompt="x")
            assert await result.text == TEXT
            assert await result.finish_reason == "stop"
            assert len(await result.steps) == 1
            assert [p.type for p in result.parts][-1] == "finish"
        finally:
            await session.destroy()


async def test_cancelling_the_consumer_aborts_and_releases_the_session(tmp_path: Path) -> None:
    agent = HarnessAgent(
        harness=FakeHarness(
            script={
                "turns": [{"steps": [{"actions": [{"text": "wait"}, {"waitUserMessage": None}]}]}]
            },
            profile="minimal",
        ),
        sandbox=LocalSandboxProvider(root_dir=tmp_path),
    )
    with anyio.fail_after(10):
        session = await agent.create_session()
        try:
            result = await agent.stream(session=session, prompt="x")
            with anyio.move_on_after(0.3):
                async for _ in result.full_stream:
                    pass
            assert session.turn_state is TurnState.IDLE
        finally:
            await session.destroy()
