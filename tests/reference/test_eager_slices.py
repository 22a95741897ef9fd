"""Eager slices: a slice runs whether or not anyone reads; full_stream tees; bounded retention."""

from __future__ import annotations

import gc
import io
import weakref
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from harness_testkit.reference import PartLimitExceededError, StreamResult, TurnState
from harness_testkit.reference._slice_runner import SliceRunner
from harness_testkit.reference._turn_machine import SliceMachine
from harness_testkit.spec import HarnessUsageError, PromptTurnOptions
from tests.reference.scripted import (
    Fail,
    Hang,
    ScriptedHarness,
    ScriptedSession,
    Stubborn,
    WaitResult,
    finish,
    finish_step,
    text_step,
    tool_call,
)
from tests.reference.test_agent_support import (
    LIMIT,
    client_tool,
    echo_tool,
    kinds,
    make_agent,
    opened,
)

pytestmark = pytest.mark.anyio


def host_tool_turn() -> list[object]:
    return [
        tool_call("c1", "echo", '{"x": 1}'),
        WaitResult("c1"),
        finish_step("tool-calls"),
        *text_step("done"),
        finish(),
    ]


async def settled(session: object, state: TurnState) -> None:
    """Wait (bounded) until the session's turn reaches ``state``.

    Polls on purpose: the point is to observe the slice without touching its result (any
    await on the result would wait for the slice).
    """
    with anyio.fail_after(LIMIT):
        while session.turn_state is not state:  # type: ignore[attr-defined]  # noqa: ASYNC110
            await anyio.sleep(0.005)


@pytest.mark.requirement("RESULT-027")
async def test_an_unread_slice_runs_host_tools_and_finishes(tmp_path: Path) -> None:
    harness = ScriptedHarness([host_tool_turn()])
    async with opened(harness, tmp_path, tools={"echo": echo_tool()}) as (agent, session):
        result = await agent.stream(session=session, prompt="go")
        # Nobody reads: the tool still runs, its result reaches the adapter and the turn
        # ends (the adapter only emits the rest once it has the result).
        await settled(session, TurnState.IDLE)
        assert harness.recorder.results == [{"tool_call_id": "c1", "output": {"echoed": {"x": 1}}}]
        late = [part async for part in result.full_stream]
    assert kinds(late)[0] == "start"
    assert kinds(late)[-3:] == ["text-end", "finish-step", "finish"]
    assert await result.text == "done"


@pytest.mark.requirement("RESULT-027")
async def test_an_unread_slice_records_its_pending_result(tmp_path: Path) -> None:
    harness = ScriptedHarness([[tool_call("c1", "pick"), WaitResult("c1"), *text_step("x")]])
    async with opened(harness, tmp_path, tools={"pick": client_tool()}) as (agent, session):
        result = await agent.stream(session=session, prompt="go")
        await settled(session, TurnState.AWAITING_TOOL_RESULT)
        assert [p.tool_call_id for p in session.pending_tool_results] == ["c1"]
        assert await result.finish_reason == "tool-calls"


@pytest.mark.requirement("RESULT-028")
async def test_concurrent_and_late_readers_see_the_same_parts(tmp_path: Path) -> None:
    harness = ScriptedHarness([[*text_step("one two"), finish()]])
    async with opened(harness, tmp_path) as (agent, session):
        result = await agent.stream(session=session, prompt="go")
        seen: list[list[str]] = [[], []]

        async def read(into: list[str]) -> None:
            async for part in result.full_stream:
                into.append(part.type)

        async with anyio.create_task_group() as group:
            group.start_soon(read, seen[0])
            group.start_soon(read, seen[1])
        late = [part.type async for part in result.full_stream]
        texts = [text async for text in result.text_stream]
    assert seen[0] == seen[1] == late
    assert late[0] == "start"
    assert late[-1] == "finish"
    assert texts == ["one two"]


@pytest.mark.requirement("RESULT-028")
async def test_leaving_one_reader_early_ends_only_that_reader(tmp_path: Path) -> None:
    harness = ScriptedHarness([host_tool_turn()])
    async with opened(harness, tmp_path, tools={"echo": echo_tool()}) as (agent, session):
        result = await agent.stream(session=session, prompt="go")
        async for part in result.full_stream:
            if part.type == "tool-call":
                break
        # The turn was not aborted: it runs to its end and another reader sees it all.
        full = [part.type async for part in result.full_stream]
        assert full[-1] == "finish"
        assert session.turn_state is TurnState.IDLE


async def test_aclose_aborts_a_running_unread_slice(tmp_path: Path) -> None:
    harness = ScriptedHarness([[*text_step("x")[:2], Hang()]])
    async with opened(harness, tmp_path, abort_grace=2.0) as (agent, session):
        result = await agent.stream(session=session, prompt="go")
        await result.aclose()
        assert kinds(result.parts)[-1] == "abort"
        assert session.turn_state is TurnState.IDLE


async def test_a_slice_past_the_part_limit_fails_with_an_error_naming_it(tmp_path: Path) -> None:
    harness = ScriptedHarness([[*text_step("a"), *text_step("b", block="t2"), finish()]])
    async with opened(harness, tmp_path, max_stream_parts=4) as (agent, session):
        result: StreamResult = await agent.stream(session=session, prompt="go")
        parts = [part async for part in result.full_stream]
        assert len(parts) == 5  # four retained parts, then the terminal error part
        assert kinds(parts)[-1] == "error"
        with pytest.raises(PartLimitExceededError, match="more than 4 consumer parts"):
            await result.text


@pytest.mark.parametrize("value", [1, 0, 2.5, True, "10"])
def test_max_stream_parts_is_validated(tmp_path: Path, value: object) -> None:
    with pytest.raises(HarnessUsageError, match="max_stream_parts"):
        make_agent(ScriptedHarness([]), tmp_path, max_stream_parts=value)


async def test_a_caller_cancelled_while_awaiting_a_result_field_aborts_the_turn(
    tmp_path: Path,
) -> None:
    harness = ScriptedHarness([[*text_step("x")[:2], Hang()]])
    async with opened(harness, tmp_path, abort_grace=2.0) as (agent, session):
        result = await agent.stream(session=session, prompt="go")
        with anyio.move_on_after(0.2):
            await result.text
        # The caller gave up: the turn was aborted and the session released.
        assert kinds(result.parts)[-1] == "abort"
        assert session.turn_state is TurnState.IDLE


# -- the reader starts only when something needs it ------------------------------------------
#
# A prompt slice with no deadline and no abort event of the caller's starts the adapter's
# done() at once and its reader only when a part emit cannot handle (a host call, a stop
# condition's step) or an abort needs one; when neither came, done()'s own task reads the
# end of the turn. These pin what that must not change.


@pytest.mark.requirement("RESULT-013")
async def test_an_unread_slice_aborted_while_done_ignores_it_ends_within_the_grace(
    tmp_path: Path,
) -> None:
    stubborn = Stubborn()
    harness = ScriptedHarness([[*text_step("x")[:2], stubborn]])
    try:
        async with opened(harness, tmp_path, abort_grace=0.2) as (agent, session):
            result = await agent.stream(session=session, prompt="go")
            await stubborn.reached.wait()  # done() runs with nobody reading
            with anyio.fail_after(5):  # far above the 0.2 s grace
                await result.aclose()  # the abort starts a reader; it waits out the grace
            assert kinds(result.parts)[-1] == "abort"
            assert not stubborn.release.is_set()  # done() still sits in its shield
            assert session.turn_state is TurnState.IDLE
    finally:
        stubborn.release.set()


@pytest.mark.requirement("RESULT-027")
async def test_a_host_call_emitted_while_nobody_reads_starts_the_reader_in_order(
    tmp_path: Path,
) -> None:
    turn = [*text_step("before")[:3], tool_call("c1", "echo", '{"x": 1}'), WaitResult("c1")]
    turn += [finish_step("tool-calls"), *text_step("after", block="t2"), finish()]
    harness = ScriptedHarness([turn])
    async with opened(harness, tmp_path, tools={"echo": echo_tool()}) as (agent, session):
        result = await agent.stream(session=session, prompt="go")
        # Nobody read while it ran; the adapter emits what follows the call only once it
        # has the host's result.
        await settled(session, TurnState.IDLE)
        assert kinds(result.parts) == [
            "start",
            "start-step",
            "text-start",
            "text-delta",
            "text-end",
            "tool-call",  # (the host's result goes to the adapter, not the stream)
            "finish-step",
            "start-step",
            "text-start",
            "text-delta",
            "text-end",
            "finish-step",
            "finish",
        ]


@pytest.mark.requirement("RESULT-027")
async def test_a_host_call_emitted_before_done_is_read_without_waiting_for_more(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A runtime that streams as soon as the turn starts: the call arrives in
    # do_prompt_turn, before done() is awaited, and done() then waits for its result.
    # Nothing emitted later would start a reader: the one queued part must.
    original = ScriptedSession.do_prompt_turn

    async def emitting_first(self: ScriptedSession, options: PromptTurnOptions) -> Any:
        control = await original(self, options)
        turn = self.turn
        assert turn is not None
        options.emit(turn.steps[0])
        turn.cursor = 1
        return control

    monkeypatch.setattr(ScriptedSession, "do_prompt_turn", emitting_first)
    harness = ScriptedHarness([host_tool_turn()])
    async with opened(harness, tmp_path, tools={"echo": echo_tool()}) as (agent, session):
        with anyio.fail_after(5):
            result = await agent.stream(session=session, prompt="go")
            await settled(session, TurnState.IDLE)
        assert kinds(result.parts)[-1] == "finish"
        assert harness.recorder.results[0]["tool_call_id"] == "c1"


async def test_a_session_destroyed_while_nobody_reads_ends_the_stream(tmp_path: Path) -> None:
    # Its queue closes with no reader started yet: one starts, sees the end and fails the
    # slice, as a reader waiting on that queue would (the adapter's done() never returns).
    hang = Hang()
    harness = ScriptedHarness([[*text_step("x")[:2], hang]])
    async with opened(harness, tmp_path, error_log=None) as (agent, session):
        result = await agent.stream(session=session, prompt="go")
        await hang.reached.wait()
        await session.destroy()
        with anyio.fail_after(5):
            parts = [part.type async for part in result.full_stream]
        assert parts == ["start", "start-step", "text-start", "text-delta", "error"]


@pytest.mark.parametrize("kind", ["text", "host call", "aborted"])
async def test_a_turn_leaves_no_reference_cycles(tmp_path: Path, kind: str) -> None:
    # The result, its sink, the runner and the queue refer to each other while the slice
    # runs; each link is dropped when it ends, so a turn's objects go with their last
    # reference instead of waiting for the garbage collector (a cycle per turn made the
    # collector's work grow with the turns).
    turns = {
        "text": [*text_step("x"), finish()],
        "host call": host_tool_turn(),
        "aborted": [*text_step("x")[:2], Hang()],
    }
    harness = ScriptedHarness([turns[kind]] * 3)
    async with opened(harness, tmp_path, tools={"echo": echo_tool()}, abort_grace=1.0) as (
        agent,
        session,
    ):

        async def one_turn() -> weakref.ref[StreamResult]:
            result = await agent.stream(session=session, prompt="go")
            if kind == "aborted":
                await result.aclose()
            else:
                await result.consume()
            await settled(session, TurnState.IDLE)
            for _ in range(3):
                await anyio.lowlevel.checkpoint()  # the turn's tasks finish
            return weakref.ref(result)

        await one_turn()  # the first turn makes what lives as long as the session
        gc.collect()
        gc.set_debug(gc.DEBUG_SAVEALL)  # what a collection finds is kept, to be looked at
        try:
            # Gone with its last reference: nothing (the adapter keeps the turn's emit,
            # that is its queue) holds the result, and no cycle does.
            assert (await one_turn())() is None
            gc.collect()
            # (the scripted adapter's control refers to itself: only the agent's count)
            ours = [
                type(item).__qualname__
                for item in gc.garbage
                if type(item).__module__.startswith("harness_testkit.")
            ]
            assert ours == []
        finally:
            gc.set_debug(0)
            gc.garbage.clear()


# -- the end of a slice nobody read: performed in done()'s task, as the read loop would ------

_ENDINGS = {
    "finished": lambda: [*text_step("x"), finish()],
    "done() raised": lambda: [*text_step("x"), Fail(RuntimeError("adapter broke"))],
    "step left open": lambda: text_step("x")[:3],
}


async def _ended_turn(
    tmp_path: Path, steps: list[object], *, read_at_once: bool
) -> tuple[list[dict[str, Any]], str, TurnState]:
    """The consumer parts (wire, ids and times left out), what the error log got and the
    session's state after the turn. ``read_at_once``: the caller passes an abort event of
    its own, so the reader starts with the slice and reads the end of the stream itself."""
    harness = ScriptedHarness([steps])
    log = io.StringIO()
    async with opened(harness, tmp_path, error_log=log) as (agent, session):
        abort = anyio.Event() if read_at_once else None
        result = await agent.stream(session=session, prompt="go", abort=abort)
        await result.consume()
        parts = [
            {key: value for key, value in part.to_wire().items() if key != "response"}
            for part in result.parts
        ]
        return parts, log.getvalue(), session.turn_state


@pytest.mark.parametrize("ending", list(_ENDINGS))
async def test_an_unread_slice_ends_as_the_read_loop_ends_it(tmp_path: Path, ending: str) -> None:
    lazily = await _ended_turn(tmp_path / "lazy", _ENDINGS[ending](), read_at_once=False)
    at_once = await _ended_turn(tmp_path / "read", _ENDINGS[ending](), read_at_once=True)
    assert lazily == at_once
    parts, log, state = lazily
    assert state is TurnState.IDLE
    assert parts[-1]["type"] == ("finish" if ending == "finished" else "error")
    assert ("turn failed" in log) is (ending != "finished")


async def test_an_unread_slice_ends_without_the_read_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The point of ending it in done()'s task: none of the read loop's awaits at a short
    # turn's end. A slice read at once still goes through it.
    loops: list[bool] = []
    original = SliceRunner._read_loop

    async def counted(self: SliceRunner) -> None:
        loops.append(True)
        await original(self)

    monkeypatch.setattr(SliceRunner, "_read_loop", counted)
    await _ended_turn(tmp_path / "lazy", _ENDINGS["finished"](), read_at_once=False)
    assert loops == []
    await _ended_turn(tmp_path / "read", _ENDINGS["finished"](), read_at_once=True)
    assert loops == [True]


async def test_a_closing_step_that_raises_fails_the_turn_either_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A bug in the machine's end must not lose the turn: it becomes the turn's error.
    def broken(self: SliceMachine, reason: object) -> Any:
        if reason is not None:  # (always: the reason pair)
            raise RuntimeError("closing broke")
        yield from ()  # a generator, as the machine's steps are

    monkeypatch.setattr(SliceMachine, "_finish_result", broken)
    for read_at_once in (False, True):
        parts, log, state = await _ended_turn(
            tmp_path / str(read_at_once), [*text_step("x"), finish()], read_at_once=read_at_once
        )
        assert parts[-1]["error"] == {"name": "RuntimeError", "message": "closing broke"}, (
            read_at_once
        )
        assert "closing broke" in log
        assert state is TurnState.IDLE
