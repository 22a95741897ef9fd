"""Sessions and turns over time: pauses, suspension, continuation, resume, ending, abort."""

from __future__ import annotations

import json
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from harness_testkit.fake_harness import (
    FakeHarness,
    FakeHarnessError,
    LifecycleEvent,
    Script,
    ScriptMismatchError,
    SessionStarted,
    ToolExecuted,
    TurnAbortedError,
)
from harness_testkit.spec import (
    ContinueTurnOptions,
    ContinueTurnState,
    HarnessSessionStateError,
    InvalidLifecycleStateError,
    PromptTurnOptions,
    ResumeSessionState,
    parse_lifecycle_state,
)
from tests.fake_harness.support import (
    Collector,
    Responder,
    SandboxEnv,
    approving,
    continue_turn,
    drive,
    run_turn,
    start,
    wait_for,
)
from tests.narrowing import json_object

pytestmark = pytest.mark.anyio

HOST_SCRIPT = Script.model_validate(
    {
        "turns": [
            {
                "steps": [
                    {
                        "actions": [
                            "Let me check.",
                            {
                                "builtin": "write",
                                "id": "w",
                                "input": {"file_path": "n.txt", "content": "1"},
                            },
                            {"hostTool": "lookup", "id": "h1", "input": {"q": 1}},
                        ]
                    },
                    {"actions": ["Result: {{result:h1}}"]},
                ]
            },
            {"steps": [{"actions": ["Second turn."]}]},
        ]
    }
)


def round_trip(state: ContinueTurnState | ResumeSessionState) -> Any:
    """Serialize like a caller persisting the state, and read it back."""
    return parse_lifecycle_state(json.loads(json.dumps(state.to_wire())))


async def pause_on_host_tool(session: Any, collector: Collector) -> Any:
    """Start a turn and drive it until it waits for the host result of ``h1``."""
    control = await session.do_prompt_turn(PromptTurnOptions(prompt="go", emit=collector.emit))
    async with anyio.create_task_group() as group:
        group.start_soon(drive, control, collector, Responder(auto=False))
        await wait_for(lambda: session.turn.waiting_for == "tool-result:h1")
        group.cancel_scope.cancel()  # the agent releases its reader at a pause
    return control


async def suspend_before_part(session: Any, cut: int) -> tuple[Collector, ContinueTurnState]:
    """Start a turn, hold it before part ``cut`` and suspend it there."""
    first = Collector()
    control = await session.do_prompt_turn(PromptTurnOptions(prompt="hello", emit=first.emit))
    held = session.hold_before_part(cut)
    async with anyio.create_task_group() as group:
        group.start_soon(control.done)
        await held.wait()
        state = await session.do_suspend_turn()
    return first, state


async def uninterrupted(sandbox: SandboxEnv, profile: str) -> list[dict[str, Any]]:
    session = await start(FakeHarness(HOST_SCRIPT, profile=profile), sandbox, "ref")
    collected, _ = await run_turn(session)
    return collected.parts


@pytest.mark.parametrize("via", ["old", "new"])
async def test_continue_on_the_same_session_after_a_host_pause(
    sandbox: SandboxEnv, via: str
) -> None:
    harness = FakeHarness(HOST_SCRIPT)
    session = await start(harness, sandbox)
    first = Collector()
    old = await pause_on_host_tool(session, first)
    second = Collector()
    new = await session.do_continue_turn(ContinueTurnOptions(emit=second.emit))
    await old.done()  # superseded: settles cleanly
    await (old if via == "old" else new).submit_tool_result("h1", "sunny")
    assert await drive(new, second, Responder(auto=False)) is None
    assert second.types()[0] == "tool-result"
    assert second.parts[0]["result"] == "sunny"
    assert second.text() == "Result: sunny"
    assert second.types()[-1] == "finish"
    reference = await uninterrupted(sandbox, "claude-code")
    assert len(first.parts) + len(second.parts) == len(reference)
    assert len(harness.observations.of_kind(ToolExecuted, "s1")) == 1


async def test_suspend_in_process_and_continue_exactly(sandbox: SandboxEnv) -> None:
    session = await start(FakeHarness(HOST_SCRIPT, profile="pi"), sandbox)
    first = Collector()
    control = await pause_on_host_tool(session, first)
    state = await session.do_suspend_turn()
    await control.done()
    assert isinstance(state, ContinueTurnState)
    assert state.harness_id == "fake"
    with pytest.raises(HarnessSessionStateError, match="unfinished turn"):
        await session.do_prompt_turn(PromptTurnOptions(prompt="x", emit=first.emit))
    second = Collector()
    new = await session.do_continue_turn(ContinueTurnOptions(emit=second.emit))
    await new.submit_tool_result("h1", "rain")
    assert await drive(new, second) is None
    assert first.parts + second.parts != []
    # In process even a lossy profile attaches: nothing is repeated.
    assert "tool-call" not in second.types()
    assert second.text() == "Result: rain"


@pytest.mark.parametrize("profile", ["claude-code", "pi"])
async def test_continue_in_a_fresh_harness_waits_for_the_pending_result_again(
    sandbox: SandboxEnv, profile: str
) -> None:
    harness = FakeHarness(HOST_SCRIPT, profile=profile)
    session = await start(harness, sandbox)
    first = Collector()
    await pause_on_host_tool(session, first)
    detached = await session.do_detach()
    assert detached.continue_from is not None
    with pytest.raises(HarnessSessionStateError, match="has ended \\(detached\\)"):
        await session.do_prompt_turn(PromptTurnOptions(prompt="x", emit=first.emit))
    state = round_trip(detached.continue_from)
    fresh = FakeHarness(HOST_SCRIPT, profile=profile)
    continued = await start(fresh, sandbox, continue_from=state)
    assert continued.is_resume
    assert fresh.observations.of_kind(SessionStarted)[0].mode == "continue"
    # The host submits what its state says is pending (lossless: the call is not re-emitted).
    second, error = await continue_turn(
        continued, responder=Responder(auto=False), pending={"h1": "cloudy"}
    )
    assert error is None
    reference = await uninterrupted(sandbox, profile)
    reference_text = [json.dumps(p) for p in reference]
    combined = [json.dumps(p) for p in first.parts + second.parts]
    if profile == "claude-code":
        assert second.types()[0] == "tool-result"
        assert len(combined) == len(reference_text)
    else:
        # Lossy rerun: the in-flight step is emitted again from its start, except the
        # host call whose result the runtime already holds (it is not dispatched twice).
        assert second.types()[0] == "stream-start"
        again = [p for p in first.parts if p.get("toolCallId") != "h1"]
        assert second.parts[: len(again)] == again
        assert not [p for p in second.of_type("tool-call") if p["toolCallId"] == "h1"]
    # The write ran once, in the first process; the continuation answered it from the journal.
    assert not fresh.observations.of_kind(ToolExecuted)


async def test_suspend_at_an_exact_part_and_continue_losslessly_in_another_harness(
    sandbox: SandboxEnv,
) -> None:
    script = Script.model_validate(
        {
            "chunking": {"mode": "chars", "size": 2},
            "turns": [{"steps": [{"actions": ["abcdefghij"]}]}],
        }
    )
    reference, _ = await run_turn(await start(FakeHarness(script), sandbox, "ref"))
    for cut in range(1, len(reference.parts)):
        session = await start(FakeHarness(script), sandbox, f"cut{cut}")
        first, state = await suspend_before_part(session, cut)
        assert len(first.parts) == cut
        continued = await start(
            FakeHarness(script), sandbox, f"cut{cut}", continue_from=round_trip(state)
        )
        second, _ = await continue_turn(continued)
        assert first.parts + second.parts == reference.parts


async def test_a_long_replay_yields_now_and_then_not_after_every_part(
    sandbox: SandboxEnv,
) -> None:
    # A turn continued in another harness replays the parts the first slice emitted
    # (emitting nothing); other tasks still get to run during a long replay, but not
    # once per replayed part, which made a continued slice cost a loop turn per part.
    script = Script.model_validate(
        {"chunking": {"mode": "chars", "size": 1}, "turns": [{"steps": [{"actions": ["x" * 400]}]}]}
    )
    reference, _ = await run_turn(await start(FakeHarness(script), sandbox, "ref"))
    cut = 300
    first, state = await suspend_before_part(await start(FakeHarness(script), sandbox, "long"), cut)
    continued = await start(FakeHarness(script), sandbox, "long", continue_from=round_trip(state))
    second = Collector()
    ticks = 0

    async def count_until_the_first_part() -> None:
        nonlocal ticks
        while not second.parts:
            await anyio.lowlevel.checkpoint()
            ticks += 1

    async with anyio.create_task_group() as group:
        group.start_soon(count_until_the_first_part)
        _, error = await continue_turn(continued, collector=second)
    assert error is None
    assert first.parts + second.parts == reference.parts
    assert cut // 64 - 1 <= ticks <= cut // 4


async def test_lossy_rerun_restarts_the_in_flight_step(sandbox: SandboxEnv) -> None:
    script = Script.model_validate(
        {
            "chunking": {"mode": "whole"},
            "turns": [{"steps": [{"actions": ["one"]}, {"actions": ["two", "three"]}]}],
        }
    )
    reference, _ = await run_turn(await start(FakeHarness(script, profile="pi"), sandbox, "ref"))
    step_start = reference.types().index("finish-step") + 1
    cut = step_start + 4  # inside the second step
    session = await start(FakeHarness(script, profile="pi"), sandbox, "lossy")
    first, state = await suspend_before_part(session, cut)
    continued = await start(
        FakeHarness(script, profile="pi"), sandbox, "lossy", continue_from=round_trip(state)
    )
    second, _ = await continue_turn(continued)
    assert second.parts == reference.parts[step_start:]
    assert first.parts == reference.parts[:cut]


async def test_detach_and_resume_between_turns(sandbox: SandboxEnv) -> None:
    harness = FakeHarness(Script.from_texts("one", "two", "three"))
    session = await start(harness, sandbox)
    await run_turn(session)
    state = await session.do_detach()
    assert state.continue_from is None
    data = state.data
    assert isinstance(data, dict)
    assert json_object(data["conversation"])["turnCount"] == 1
    assert data["turn"] is None
    for call in (
        session.do_detach(),
        session.do_stop(),
        session.do_destroy(),
        session.do_compact(),
        session.do_suspend_turn(),
    ):
        with pytest.raises(HarnessSessionStateError, match="has ended"):
            await call
    resumed = await start(
        FakeHarness(Script.from_texts("one", "two", "three")),
        sandbox,
        resume_from=round_trip(state),
    )
    assert resumed.is_resume
    collected, _ = await run_turn(resumed)
    assert collected.text() == "two"
    stopped = await resumed.do_stop()
    assert isinstance(stopped, ResumeSessionState)
    again = await start(
        FakeHarness(Script.from_texts("x")), sandbox, resume_from=round_trip(stopped)
    )
    # Another script starts from its first turn; the context is kept.
    assert (await run_turn(again))[0].text() == "x"
    assert again.conversation.turn_count == 3
    events = [e.event for e in harness.observations.of_kind(LifecycleEvent)]
    assert events == ["finish", "detach"]


async def test_destroy_fails_an_unfinished_turn(sandbox: SandboxEnv) -> None:
    session = await start(FakeHarness(HOST_SCRIPT), sandbox)
    collector = Collector()
    control = await pause_on_host_tool(session, collector)
    await session.do_destroy()
    with pytest.raises(FakeHarnessError, match="destroyed"):
        await control.done()
    with pytest.raises(HarnessSessionStateError):
        await control.submit_tool_result("h1", "late")


async def test_abort_while_waiting_ends_the_turn_without_finish(sandbox: SandboxEnv) -> None:
    session = await start(FakeHarness(HOST_SCRIPT), sandbox)
    collector = Collector()
    abort = anyio.Event()
    control = await session.do_prompt_turn(
        PromptTurnOptions(prompt="go", emit=collector.emit, abort=abort)
    )
    async with anyio.create_task_group() as group:

        async def abort_when_waiting() -> None:
            await wait_for(
                lambda: session.turn is not None and session.turn.waiting_for == "tool-result:h1"
            )
            abort.set()

        group.start_soon(abort_when_waiting)
        with pytest.raises(TurnAbortedError):
            await control.done()
    assert "finish" not in collector.types()
    # The session is reusable after an aborted turn.
    assert (await run_turn(session))[0].text() == "Second turn."


async def test_abort_kills_a_running_command(sandbox: SandboxEnv) -> None:
    script = Script.model_validate(
        {
            "turns": [
                {
                    "steps": [
                        {
                            "actions": [
                                {"builtin": "bash", "id": "b", "input": {"command": "sleep 30"}}
                            ]
                        }
                    ]
                }
            ]
        }
    )
    session = await start(FakeHarness(script), sandbox)
    abort = anyio.Event()
    control = await session.do_prompt_turn(
        PromptTurnOptions(prompt="go", emit=Collector().emit, abort=abort)
    )
    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:

            async def fire() -> None:
                await anyio.sleep(0.2)
                abort.set()

            group.start_soon(fire)
            with pytest.raises(TurnAbortedError):
                await control.done()


async def test_abort_already_set(sandbox: SandboxEnv) -> None:
    session = await start(FakeHarness(), sandbox)
    abort = anyio.Event()
    abort.set()
    collected, error = await run_turn(session, abort=abort)
    assert isinstance(error, TurnAbortedError)
    assert collected.parts == []


async def test_suspend_after_the_turn_finished_captures_its_end(sandbox: SandboxEnv) -> None:
    session = await start(FakeHarness(Script.from_texts("done")), sandbox)
    await run_turn(session)
    state = await session.do_suspend_turn()
    data = state.data
    assert isinstance(data, dict)
    assert json_object(data["turn"])["ended"] is True
    collected, error = await continue_turn(session)
    assert error is None
    assert collected.parts == []
    continued = await start(
        FakeHarness(Script.from_texts("done")), sandbox, "c", continue_from=round_trip(state)
    )
    collected, error = await continue_turn(continued)
    assert error is None
    assert collected.parts == []


async def test_state_misuse_is_refused(sandbox: SandboxEnv) -> None:
    session = await start(FakeHarness(), sandbox)
    with pytest.raises(HarnessSessionStateError, match="no unfinished turn to continue"):
        await session.do_continue_turn(ContinueTurnOptions(emit=Collector().emit))
    with pytest.raises(HarnessSessionStateError, match="no unfinished turn to suspend"):
        await session.do_suspend_turn()
    with pytest.raises(HarnessSessionStateError, match="no running turn"):
        session.hold_before_part(0)
    control = await session.do_prompt_turn(PromptTurnOptions(prompt="x", emit=Collector().emit))
    with pytest.raises(HarnessSessionStateError, match="unfinished turn"):
        await session.do_prompt_turn(PromptTurnOptions(prompt="y", emit=Collector().emit))
    await control.done()


async def test_foreign_and_mismatched_states_are_refused(sandbox: SandboxEnv) -> None:
    session = await start(FakeHarness(HOST_SCRIPT), sandbox)
    await pause_on_host_tool(session, Collector())
    state = await session.do_suspend_turn()
    wire = state.to_wire()
    with pytest.raises(InvalidLifecycleStateError, match="produced by harness 'other'"):
        await start(
            FakeHarness(HOST_SCRIPT),
            sandbox,
            "a",
            continue_from=ContinueTurnState.model_validate({**wire, "harnessId": "other"}),
        )
    with pytest.raises(InvalidLifecycleStateError, match="fake profile 'claude-code'"):
        await start(FakeHarness(HOST_SCRIPT, profile="pi"), sandbox, "b", continue_from=state)
    with pytest.raises(ScriptMismatchError, match="another script or seed"):
        await start(FakeHarness(Script.from_texts("x")), sandbox, "c", continue_from=state)
    with pytest.raises(ScriptMismatchError):
        await start(FakeHarness(HOST_SCRIPT, seed=9), sandbox, "d", continue_from=state)
    with pytest.raises(InvalidLifecycleStateError, match="schema validation"):
        await start(
            FakeHarness(HOST_SCRIPT),
            sandbox,
            "e",
            continue_from=ContinueTurnState(harness_id="fake", data={"x": 1}),
        )
    with pytest.raises(ValueError, match="not fake-harness state data"):
        FakeHarness.lifecycle_state_schema({"format": "other"})
    named = FakeHarness(HOST_SCRIPT, harness_id="fake-two")
    with pytest.raises(InvalidLifecycleStateError, match="this agent uses 'fake-two'"):
        await start(named, sandbox, "f", continue_from=state)


async def test_resume_with_a_nested_continuation(sandbox: SandboxEnv) -> None:
    session = await start(FakeHarness(HOST_SCRIPT), sandbox)
    await pause_on_host_tool(session, Collector())
    detached = round_trip(await session.do_stop())
    assert isinstance(detached, ResumeSessionState)
    assert detached.continue_from is not None
    continued = await start(
        FakeHarness(HOST_SCRIPT),
        sandbox,
        resume_from=detached,
        continue_from=detached.continue_from,
    )
    collected, error = await continue_turn(continued, pending={"h1": "ok"})
    assert error is None
    assert collected.types()[0] == "tool-result"


async def test_set_script_affects_later_sessions_only(sandbox: SandboxEnv) -> None:
    harness = FakeHarness(Script.from_texts("old"))
    early = await start(harness, sandbox, "early")
    harness.set_script({"turns": [{"steps": [{"actions": ["new"]}]}]})
    late = await start(harness, sandbox, "late")
    assert (await run_turn(early))[0].text() == "old"
    assert (await run_turn(late))[0].text() == "new"
    assert harness.sessions["late"] is late
    assert harness.observations.session_ids() == ["early", "late"]


async def test_a_pending_approval_is_waited_for_again_in_another_harness(
    sandbox: SandboxEnv,
) -> None:
    script = Script.model_validate(
        {
            "turns": [
                {
                    "steps": [
                        {
                            "actions": [
                                {
                                    "builtin": "bash",
                                    "id": "b",
                                    "input": {"command": "touch approved"},
                                }
                            ]
                        }
                    ]
                }
            ]
        }
    )
    harness = FakeHarness(script, profile="claude-code")
    session = await start(harness, sandbox, permission_mode="allow-edits")
    first = Collector()
    control = await session.do_prompt_turn(PromptTurnOptions(prompt="go", emit=first.emit))
    async with anyio.create_task_group() as group:
        group.start_soon(drive, control, first, Responder(auto=False))
        await wait_for(
            lambda: session.turn is not None and session.turn.waiting_for == "approval:approval-b"
        )
        state = round_trip(await session.do_suspend_turn())
    assert first.types()[-1] == "tool-approval-request"
    fresh = FakeHarness(script, profile="claude-code")
    continued = await start(fresh, sandbox, permission_mode="allow-edits", continue_from=state)
    second = Collector()
    new = await continued.do_continue_turn(ContinueTurnOptions(emit=second.emit))
    await approving(new)("approval-b", True, None)
    assert await drive(new, second, Responder(auto=False)) is None
    assert second.types()[0] == "tool-result"
    assert await sandbox.read("approved") == ""
    (executed,) = fresh.observations.of_kind(ToolExecuted)
    assert executed.executed


@pytest.mark.requirement("DECISION-011")
async def test_a_state_resumed_under_another_session_id_is_a_fork(sandbox: SandboxEnv) -> None:
    original = await start(FakeHarness(Script.from_texts("one", "two")), sandbox, "s1")
    await run_turn(original)
    state = round_trip(await original.do_detach())
    # Two sessions from one state, neither with the id it was taken from: both accepted,
    # both continue the same conversation independently.
    forks = [
        await start(
            FakeHarness(Script.from_texts("one", "two")), sandbox, session_id, resume_from=state
        )
        for session_id in ("fork-a", "fork-b")
    ]
    for fork in forks:
        assert fork.is_resume
        assert (await run_turn(fork))[0].text() == "two"
        assert fork.conversation.turn_count == 2
