"""Lifecycle rules of the reference agent (notes 7.3-7.7, 6.1.7-6.1.8, 10.5, 1.3.6).

detach / stop / suspend_turn / destroy on idle, unfinished and ended sessions; the
continue state they build (pending records, frozen turn settings, buffered parts,
completed results captured during suspension); validation of adapter-returned states;
frozen turn settings on the same handle and on recreated sessions; steering and
compaction.

One idea: what each lifecycle call does to a session and the state it leaves behind;
each call is checked on idle, unfinished and ended sessions, hence the length.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from pydantic import BaseModel

from harness_testkit.reference import AgentSession, HarnessAgent, StreamResult, tool
from harness_testkit.spec import (
    ConsumerErrorPart,
    ConsumerPart,
    ContinueTurnState,
    HarnessCapabilityUnsupportedError,
    HarnessError,
    HarnessSessionStateError,
    HarnessUsageError,
    InvalidLifecycleStateError,
    ResumeSessionState,
    Skill,
)
from tests.narrowing import of_type
from tests.reference.scripted import (
    Hang,
    ScriptedHarness,
    WaitResult,
    finish,
    finish_step,
    text_step,
    tool_call,
)
from tests.reference.test_agent_support import (
    LIMIT,
    OBJECT,
    approval_response,
    client_tool,
    continue_parts,
    drain,
    echo_tool,
    kinds,
    make_agent,
    only,
    opened,
    scripted,
    stream_parts,
    suspend,
    teardown,
)
from tests.reference.test_rules_support import RecordingProvider

pytestmark = pytest.mark.anyio
requirement = pytest.mark.requirement

SKILL_A = Skill(name="alpha", description="A", content="Use A.")
SKILL_B = Skill(name="beta", description="B", content="Use B.")


def paused_turn(name: str = "pick") -> list[Any]:
    """A turn that pauses for a client result, then (after it) says 'after'."""
    return [
        tool_call("c1", name, '{"q": 1}'),
        WaitResult("c1"),
        {"type": "tool-result", "toolCallId": "c1", "toolName": name, "result": "echo"},
        finish_step("tool-calls"),
        *text_step("after"),
        finish(),
    ]


def suspendable(text: str = "one") -> list[Any]:
    """A step, the first part of the next one (the lookahead), then a wait."""
    return [*text_step(text), {"type": "text-start", "id": "t2"}, WaitResult("never")]


def patch_suspend(harness: ScriptedHarness, **extra: Any) -> None:
    """Make the adapter's last session return extra wire keys from do_suspend_turn."""
    session = harness.sessions[-1]
    original = session.do_suspend_turn

    async def patched() -> Any:
        state = await original()
        return {**state.to_wire(), **extra}

    session.do_suspend_turn = patched  # type: ignore[method-assign]  # patch this instance only


def after_suspend(harness: ScriptedHarness, hook: Callable[[], None]) -> None:
    """Run ``hook`` right after the adapter's ``do_suspend_turn`` returned."""
    session = harness.sessions[-1]
    original = session.do_suspend_turn

    async def patched() -> ContinueTurnState:
        state = await original()
        hook()
        return state

    session.do_suspend_turn = patched  # type: ignore[method-assign]  # patch this instance only


async def read_into(result: StreamResult, parts: list[ConsumerPart], stepped: anyio.Event) -> None:
    """Drain ``result`` into ``parts``; set ``stepped`` at the first ``finish-step``."""
    with anyio.fail_after(LIMIT):
        async for part in result.full_stream:
            parts.append(part)
            if part.type == "finish-step":
                stepped.set()


async def recreate(agent: HarnessAgent, state: Any, **extra: Any) -> AgentSession:
    with anyio.fail_after(LIMIT):
        return await agent.create_session(session_id="s1", continue_from=state, **extra)


# -- 7.4.1 - 7.4.3: detach, stop, destroy ------------------------------------------------------------


@requirement("LIFECYCLE-022", "LIFECYCLE-024", "LIFECYCLE-027", "LIFECYCLE-026", "SANDBOX-031")
@pytest.mark.parametrize("method", ["detach", "stop"])
async def test_ending_an_idle_session_returns_the_adapters_state(
    tmp_path: Path, method: str
) -> None:
    harness = ScriptedHarness([[*text_step("x"), finish()]], state_data={"cursor": 4})
    provider = RecordingProvider(tmp_path / "rec")
    agent = HarnessAgent(harness=harness, sandbox=provider)
    try:
        with anyio.fail_after(LIMIT):
            session = await agent.create_session(session_id="s1")
            await agent.generate(session=session, prompt="go")
            state = await getattr(session, method)()
        assert isinstance(state, ResumeSessionState)
        assert state.to_wire() == {
            "type": "resume-session",
            "harnessId": "mock",
            "specificationVersion": "harness-v1",
            "data": {"cursor": 4},
        }
        assert harness.recorder.calls[-1] == f"do_{method}"
        assert "do_suspend_turn" not in harness.recorder.calls
        assert session.status == ("detached" if method == "detach" else "stopped")
        assert provider.calls("destroy") == []
        assert provider.calls("stop") == ([] if method == "detach" else [("stop", "s1")])
        if method == "detach":
            assert (await provider.sessions[0].run("echo alive")).stdout == "alive\n"
    finally:
        await provider.cleanup()


@requirement("LIFECYCLE-023", "LIFECYCLE-026", "LIFECYCLE-046")
@pytest.mark.parametrize("method", ["detach", "stop"])
async def test_ending_an_unfinished_turn_wraps_its_continue_state(
    tmp_path: Path, method: str
) -> None:
    harness = ScriptedHarness([paused_turn()], state_data={"cursor": 9})
    async with opened(harness, tmp_path, tools={"pick": client_tool()}, model="m1") as (
        agent,
        session,
    ):
        await agent.generate(session=session, prompt="go")
        state = await getattr(session, method)()
        assert session.status == ("detached" if method == "detach" else "stopped")
    assert f"do_{method}" not in harness.recorder.calls
    assert harness.recorder.calls.count("do_suspend_turn") == 1
    wire = state.to_wire()
    nested = wire["continueFrom"]
    assert {k: wire[k] for k in ("type", "harnessId", "specificationVersion", "data")} == {
        "type": "resume-session",
        "harnessId": "mock",
        "specificationVersion": "harness-v1",
        "data": {"cursor": 9},
    }
    assert nested["type"] == "continue-turn"
    assert nested["data"] == {"cursor": 9}
    assert [r["toolCallId"] for r in nested["pendingToolResults"]] == ["c1"]
    assert nested["turnSettings"]["model"] == "m1"
    assert [t["name"] for t in nested["turnSettings"]["tools"]] == ["pick"]


@requirement("LIFECYCLE-038")
async def test_detach_from_the_finish_handler_is_a_plain_detach(tmp_path: Path) -> None:
    harness = ScriptedHarness([[*text_step("x"), finish()]])
    async with opened(harness, tmp_path) as (agent, session):
        result = await agent.stream(session=session, prompt="go")
        state: ResumeSessionState | None = None
        async for part in result.full_stream:
            if part.type == "finish":
                state = await session.detach()
    assert state is not None
    assert state.continue_from is None
    assert "do_suspend_turn" not in harness.recorder.calls
    assert harness.recorder.calls[-1] == "do_detach"


@requirement("LIFECYCLE-021", "LIFECYCLE-025", "LIFECYCLE-031", "LIFECYCLE-029")
@pytest.mark.parametrize("ending", ["detach", "stop", "destroy"])
async def test_ended_sessions_refuse_lifecycle_calls_except_destroy(
    tmp_path: Path, ending: str
) -> None:
    async with opened(ScriptedHarness(), tmp_path) as (_, session):
        await getattr(session, ending)()
        calls = list(scripted(session._agent).recorder.calls)
        for method, verb in (
            ("detach", "detached"),
            ("stop", "stopped"),
            ("suspend_turn", "suspended"),
        ):
            with pytest.raises(HarnessSessionStateError) as caught:
                await getattr(session, method)()
            assert str(caught.value) == f"Harness session s1 is not active and cannot be {verb}."
        await session.destroy()
        await session.destroy()
        assert scripted(session._agent).recorder.calls == calls


@requirement("LIFECYCLE-030", "LIFECYCLE-029")
@pytest.mark.parametrize("failing", [False, True], ids=["clean", "everything-raises"])
async def test_destroy_ends_the_handle_first_and_swallows_errors(
    tmp_path: Path, failing: bool
) -> None:
    statuses: list[str] = []
    handles: list[AgentSession] = []

    class Destroying(ScriptedHarness):
        async def do_start(self, options: Any) -> Any:
            session = await super().do_start(options)
            original = session.do_destroy

            async def do_destroy() -> None:
                statuses.append(handles[0].status)
                await original()
                if failing:
                    raise RuntimeError("runtime already gone")

            session.do_destroy = do_destroy  # type: ignore[method-assign]  # patch this instance only
            return session

    harness = Destroying()
    provider = RecordingProvider(tmp_path / "rec")
    agent = HarnessAgent(harness=harness, sandbox=provider)
    try:
        with anyio.fail_after(LIMIT):
            handles.append(await agent.create_session(session_id="s1"))
            if failing:
                sandbox = provider.sessions[0]

                async def broken_destroy() -> None:
                    provider.log.append(("destroy", "s1"))
                    raise RuntimeError("sandbox API down")

                sandbox.destroy = broken_destroy  # type: ignore[method-assign]  # patch this instance only
            await handles[0].destroy()
            await handles[0].destroy()
        assert statuses == ["destroyed"]
        assert harness.recorder.calls == ["do_destroy"]
        assert provider.calls("destroy") == [("destroy", "s1")]
        assert provider.calls("stop") == []
    finally:
        await provider.cleanup()


@requirement("LIFECYCLE-037", "ADAPTER-036", "SESSION-016", "PROMPT-021")
@pytest.mark.parametrize("ending", ["detach", "stop", "suspend_turn", "destroy"])
async def test_ended_sessions_refuse_turns_and_calls_reach_no_adapter(
    tmp_path: Path, ending: str
) -> None:
    harness = ScriptedHarness([[tool_call("c1", "pick", "{}"), WaitResult("c1")]])
    async with opened(harness, tmp_path, tools={"pick": client_tool()}) as (agent, session):
        await agent.generate(session=session, prompt="go")
        await getattr(session, ending)()
        calls = list(harness.recorder.calls)
        attempts: list[Callable[[], Awaitable[Any]]] = [
            lambda: agent.generate(session=session, prompt="go"),
            lambda: agent.stream(session=session, prompt="go"),
            lambda: agent.continue_stream(session=session),
            lambda: agent.continue_generate(session=session),
            lambda: session.compact(),
        ]
        for attempt in attempts:
            with pytest.raises(HarnessSessionStateError) as caught:
                await attempt()
            assert str(caught.value) == "Harness session s1 has ended and cannot be reused."
        assert isinstance(session.has_unfinished_turn(), bool)
        assert session.is_resume is False
        assert harness.recorder.calls == calls


@requirement("LIFECYCLE-037")
async def test_steering_an_ended_session_reports_it_ended(tmp_path: Path) -> None:
    async with opened(ScriptedHarness(supports_steering=True), tmp_path) as (_, session):
        await session.detach()
        with pytest.raises(HarnessSessionStateError) as caught:
            await session.experimental_steer_turn("hello")
    assert str(caught.value) == "Harness session s1 has ended and cannot be reused."


# -- 7.4.4 / 7.4.5: suspend_turn and the continue state it builds --------------------------------------


@requirement("LIFECYCLE-032")
async def test_suspending_an_idle_turn_is_refused(tmp_path: Path) -> None:
    async with opened(ScriptedHarness(), tmp_path) as (_, session):
        with pytest.raises(HarnessSessionStateError) as caught:
            await session.suspend_turn()
        assert session.status == "active"
    assert str(caught.value) == "Harness session s1 has no unfinished turn to suspend."


@requirement("LIFECYCLE-033", "SESSION-023")
async def test_suspend_turn_drains_the_slice_and_ends_the_handle(tmp_path: Path) -> None:
    harness = ScriptedHarness([suspendable("partial")])
    async with opened(harness, tmp_path, model="m1") as (agent, session):
        result = await agent.stream(session=session, prompt="go")
        parts: list[ConsumerPart] = []
        async with anyio.create_task_group() as group:
            stepped = anyio.Event()
            group.start_soon(read_into, result, parts, stepped)
            await stepped.wait()
            state = await suspend(session)
            assert result.parts[-1].type == "finish", "the slice drained before returning"
        assert session.status == "detached"
        assert session.turn_state == "suspended"
        assert session.has_unfinished_turn()
        assert await session.sandbox_session.read_text_file("missing") is None
    assert harness.recorder.calls.count("do_suspend_turn") == 1
    assert state.turn_settings is not None
    assert state.turn_settings.model == "m1"
    assert kinds(parts)[-1] == "finish"


async def _time_out_suspension(
    tmp_path: Path, method: str, check: Callable[[AgentSession, BaseException], None]
) -> None:
    hang = Hang()
    harness = ScriptedHarness([[*text_step("a"), hang]])
    async with opened(harness, tmp_path, drain_timeout=0.1, abort_grace=0.1) as (agent, session):
        abort = anyio.Event()
        result = await agent.stream(session=session, prompt="go", abort=abort)
        try:
            async with anyio.create_task_group() as group:
                stepped = anyio.Event()
                group.start_soon(read_into, result, [], stepped)
                await stepped.wait()
                # done() must be in its hang: a suspension that comes while it is still
                # between the step's last part and the hang would let it end at once.
                await hang.reached.wait()
                with pytest.raises(HarnessError) as caught:
                    await getattr(session, method)()
                abort.set()
            check(session, caught.value)
        finally:
            queue = session._link.queue
            if queue is not None:
                queue.close()


@requirement("LIFECYCLE-034")
@pytest.mark.parametrize("method", ["suspend_turn", "detach", "stop"])
async def test_a_turn_that_never_closes_makes_suspension_time_out(
    tmp_path: Path, method: str
) -> None:
    def check(session: AgentSession, error: BaseException) -> None:
        assert "'mock'" in str(error)
        assert "suspending session s1" in str(error)

    await _time_out_suspension(tmp_path, method, check)


@requirement("LIFECYCLE-034")
@pytest.mark.parametrize("method", ["detach", "stop"])
async def test_a_timed_out_detach_releases_the_turn_queue(tmp_path: Path, method: str) -> None:
    def check(session: AgentSession, error: BaseException) -> None:
        assert session.status != "active"
        queue = session._link.queue
        assert queue is None or queue.closed

    await _time_out_suspension(tmp_path, method, check)


@requirement("LIFECYCLE-035", "LIFECYCLE-036")
async def test_adapter_pending_lists_are_dropped_when_the_session_has_none(
    tmp_path: Path,
) -> None:
    harness = ScriptedHarness([suspendable()])
    foreign = [{"toolCallId": "zz", "toolName": "ghost", "input": "{}"}]
    async with opened(harness, tmp_path, stop_when=lambda c: True) as (agent, session):
        patch_suspend(
            harness,
            pendingToolResults=foreign,
            pendingToolApprovals=[
                {
                    "approvalId": "a",
                    "toolCallId": "zz",
                    "toolName": "ghost",
                    "input": "{}",
                    "kind": "custom",
                }
            ],
        )
        await agent.generate(session=session, prompt="go")
        state = await suspend(session)
    wire = state.to_wire()
    assert "pendingToolResults" not in wire
    assert "pendingToolApprovals" not in wire
    assert wire["turnSettings"] == {"skills": [], "tools": []}
    assert set(wire) <= {
        "type",
        "harnessId",
        "specificationVersion",
        "data",
        "turnSettings",
        "bufferedParts",
    }


@requirement("LIFECYCLE-035")
async def test_session_pending_lists_override_the_adapters(tmp_path: Path) -> None:
    harness = ScriptedHarness([[tool_call("c1", "pick", "{}"), WaitResult("c1")]])
    async with opened(harness, tmp_path, tools={"pick": client_tool()}) as (agent, session):
        await agent.generate(session=session, prompt="go")
        patch_suspend(
            harness, pendingToolResults=[{"toolCallId": "zz", "toolName": "g", "input": "{}"}]
        )
        state = await suspend(session)
    assert [r.tool_call_id for r in state.pending_tool_results or []] == ["c1"]


@requirement("LIFECYCLE-042", "LIFECYCLE-046")
@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        (
            {},
            {
                "skills": [],
                "tools": [
                    {"name": "pick", "description": "Answered by the client", "inputSchema": OBJECT}
                ],
            },
        ),
        (
            {"model": "m1", "instructions": "Be brief.", "skills": [SKILL_A]},
            {
                "model": "m1",
                "instructions": "Be brief.",
                "skills": [SKILL_A.to_wire()],
                "tools": [
                    {"name": "pick", "description": "Answered by the client", "inputSchema": OBJECT}
                ],
            },
        ),
    ],
    ids=["undefined-model-and-instructions", "all-set"],
)
async def test_continue_state_carries_the_captured_turn_settings(
    tmp_path: Path, settings: dict[str, Any], expected: dict[str, Any]
) -> None:
    harness = ScriptedHarness([[tool_call("c1", "pick", "{}"), WaitResult("c1")]])
    async with opened(harness, tmp_path, tools={"pick": client_tool()}, **settings) as (
        agent,
        session,
    ):
        await agent.generate(session=session, prompt="go")
        assert session._core.frozen is not None, "kept while paused"
        state = await suspend(session)
    assert state.to_wire()["turnSettings"] == expected


@requirement("LIFECYCLE-042")
async def test_captured_settings_are_cleared_when_the_turn_ends(tmp_path: Path) -> None:
    turns = [[*text_step("ok"), finish()], [{"type": "error", "error": "boom"}]]
    async with opened(ScriptedHarness(turns), tmp_path, model="m") as (agent, session):
        await agent.generate(session=session, prompt="go")
        assert session._core.frozen is None
        with pytest.raises(Exception, match="boom"):
            await agent.generate(session=session, prompt="again")
        assert session._core.frozen is None


# -- 7.3.5: the agent validates what the adapter returns ---------------------------------------------


class Cursor(BaseModel):
    cursor: int


@requirement("LIFECYCLE-018", "LIFECYCLE-013", "LIFECYCLE-017")
@pytest.mark.parametrize("method", ["detach", "stop", "suspend_turn"])
async def test_adapter_states_are_validated_with_the_lifecycle_schema(
    tmp_path: Path, method: str
) -> None:
    turn = [tool_call("c1", "pick", "{}"), WaitResult("c1")] if method == "suspend_turn" else []
    harness = ScriptedHarness([turn], state_data={"cursor": "7", "extra": True})
    harness.lifecycle_state_schema = Cursor  # type: ignore[attr-defined]  # optional member, this instance only
    async with opened(harness, tmp_path, tools={"pick": client_tool()}) as (agent, session):
        if turn:
            await agent.generate(session=session, prompt="go")
        state = await getattr(session, method)()
    assert state.data == {"cursor": 7}

    broken = ScriptedHarness([turn], state_data={"cursor": "seven"})
    broken.lifecycle_state_schema = Cursor  # type: ignore[attr-defined]  # optional member, this instance only
    async with opened(broken, tmp_path / "b", tools={"pick": client_tool()}) as (agent, session):
        if turn:
            await agent.generate(session=session, prompt="go")
        with pytest.raises(InvalidLifecycleStateError) as caught:
            await getattr(session, method)()
    assert str(caught.value).startswith(
        "Lifecycle state failed schema validation for harness 'mock': "
    )
    assert caught.value.cause is not None


@requirement("LIFECYCLE-018")
@pytest.mark.parametrize("method", ["detach", "stop", "suspend_turn"])
async def test_adapter_states_of_another_harness_are_refused(tmp_path: Path, method: str) -> None:
    turn = [tool_call("c1", "pick", "{}"), WaitResult("c1")] if method == "suspend_turn" else []
    harness = ScriptedHarness([turn], state_data={"free": ["form", {"n": None}]})
    async with opened(harness, tmp_path, tools={"pick": client_tool()}) as (agent, session):
        if turn:
            await agent.generate(session=session, prompt="go")
        state = await getattr(session, method)()
        assert state.data == {"free": ["form", {"n": None}]}, "no schema: data unchanged"

    other = ScriptedHarness([turn])
    async with opened(other, tmp_path / "o", tools={"pick": client_tool()}) as (agent, session):
        if turn:
            await agent.generate(session=session, prompt="go")
        other.harness_id = "codex"
        with pytest.raises(InvalidLifecycleStateError, match="produced by harness 'codex'"):
            await getattr(session, method)()


# -- 6.1.7 / 6.1.8: host results computed while suspending ------------------------------------------


class Gate:
    """A host tool that blocks until released; records every run."""

    def __init__(self, outcome: Any = "done", *, fail: bool = False) -> None:
        self.started = anyio.Event()
        self.release = anyio.Event()
        self.runs = 0
        self.outcome = outcome
        self.fail = fail

    def tool(self) -> Any:
        async def execute(value: Any, options: Any) -> Any:
            self.runs += 1
            self.started.set()
            await self.release.wait()
            if self.fail:
                raise RuntimeError("tool broke")
            return self.outcome

        return tool(description="gated", input_schema=OBJECT, execute=execute)


async def suspend_during_execution(
    agent: HarnessAgent, session: AgentSession, gate: Gate, result: StreamResult
) -> tuple[ContinueTurnState, list[ConsumerPart]]:
    """Suspend while ``gate``'s execution runs; the tool finishes after do_suspend_turn."""
    parts: list[ConsumerPart] = []
    after_suspend(scripted(agent), gate.release.set)
    async with anyio.create_task_group() as group:

        async def read() -> None:
            parts.extend(await drain(result))

        group.start_soon(read)
        with anyio.fail_after(LIMIT):
            await gate.started.wait()
        state = await suspend(session)
    return state, parts


@requirement("HOSTTOOL-012", "LIFECYCLE-033")
@pytest.mark.parametrize("fail", [False, True], ids=["success", "error"])
async def test_a_result_computed_while_suspending_is_stored_not_sent(
    tmp_path: Path, fail: bool
) -> None:
    gate = Gate({"rows": 3}, fail=fail)
    harness = ScriptedHarness([[tool_call("c1", "slow", '{"n": 1}'), WaitResult("c1")]])
    async with opened(harness, tmp_path, tools={"slow": gate.tool()}) as (agent, session):
        result = await agent.stream(session=session, prompt="go")
        state, parts = await suspend_during_execution(agent, session, gate, result)
        assert session.turn_state == "awaiting-tool-result"
    assert harness.recorder.results == []
    (pending,) = state.pending_tool_results or []
    expected = (
        {"output": {"error": "RuntimeError: tool broke"}, "isError": True}
        if fail
        else {"output": {"rows": 3}}
    )
    assert pending.to_wire() == {
        "toolCallId": "c1",
        "toolName": "slow",
        "input": '{"n": 1}',
        "completedResult": expected,
    }
    outcome = [p for p in parts if p.type in ("tool-result", "tool-error")]
    assert [p.type for p in outcome] == ["tool-error" if fail else "tool-result"]
    assert kinds(parts)[-1] == "finish"


@requirement("HOSTTOOL-014", "APPROVAL-031", "ADAPTER-045")
async def test_a_stored_result_is_submitted_first_on_the_next_continuation(
    tmp_path: Path,
) -> None:
    gate = Gate({"rows": 3})
    first = [tool_call("c1", "slow", "{}"), WaitResult("c1")]
    resumed = [
        WaitResult("c1"),
        {"type": "tool-result", "toolCallId": "c1", "toolName": "slow", "result": {"rows": 3}},
        finish_step("tool-calls"),
        *text_step("after"),
        finish(),
    ]
    harness = ScriptedHarness([first, resumed])
    agent = make_agent(harness, tmp_path, tools={"slow": gate.tool()})
    with anyio.fail_after(LIMIT):
        session = await agent.create_session(session_id="s1")
        result = await agent.stream(session=session, prompt="go")
    state, _ = await suspend_during_execution(agent, session, gate, result)
    recreated = await recreate(agent, json.loads(json.dumps(state.to_wire())))
    try:
        assert recreated.turn_state == "awaiting-tool-result"
        final, parts = await continue_parts(agent, session=recreated)
        steps = await final.steps
    finally:
        await teardown(recreated)
    assert gate.runs == 1, "the stored result is replayed, the tool does not run again"
    assert harness.recorder.results == [{"tool_call_id": "c1", "output": {"rows": 3}}]
    assert len(steps) == 2, "replaying a stored result does not swallow the next finish-step"
    assert [s.text for s in steps] == ["", "after"]
    assert "tool-result" not in kinds(parts), "the replayed echo of a settled call is suppressed"


@requirement("HOSTTOOL-014")
async def test_an_explicit_result_wins_over_the_stored_one(tmp_path: Path) -> None:
    gate = Gate({"rows": 3})
    first = [tool_call("c1", "slow", "{}"), WaitResult("c1")]
    resumed = [WaitResult("c1"), finish_step(), finish()]
    harness = ScriptedHarness([first, resumed])
    agent = make_agent(harness, tmp_path, tools={"slow": gate.tool()})
    with anyio.fail_after(LIMIT):
        session = await agent.create_session(session_id="s1")
        result = await agent.stream(session=session, prompt="go")
    state, _ = await suspend_during_execution(agent, session, gate, result)
    recreated = await recreate(agent, state)
    try:
        await continue_parts(
            agent,
            session=recreated,
            tool_result_continuations=[{"toolCallId": "c1", "output": "explicit"}],
        )
    finally:
        await teardown(recreated)
    assert harness.recorder.results == [{"tool_call_id": "c1", "output": "explicit"}]


@requirement("LIFECYCLE-020")
async def test_a_non_json_completed_result_makes_suspension_fail(tmp_path: Path) -> None:
    gate = Gate({"when": {1, 2}})
    harness = ScriptedHarness([[tool_call("c1", "slow", "{}"), WaitResult("c1")]])
    async with opened(harness, tmp_path, tools={"slow": gate.tool()}) as (agent, session):
        result = await agent.stream(session=session, prompt="go")
        with pytest.RaisesGroup(
            InvalidLifecycleStateError, allow_unwrapped=True, flatten_subgroups=True
        ) as caught:
            await suspend_during_execution(agent, session, gate, result)
    message = str(
        caught.value.exceptions[0] if isinstance(caught.value, BaseExceptionGroup) else caught.value
    )
    assert "'c1' (slow)" in message
    assert "output.when" in message


@requirement("HOSTTOOL-013", "ERROR-008")
async def test_a_suspension_time_result_for_an_unknown_call_fails_the_slice(
    tmp_path: Path,
) -> None:
    gate = Gate("deployed")
    script = [tool_call("c1", "deploy", "{}"), WaitResult("c1"), finish_step(), finish()]
    harness = ScriptedHarness([script])
    async with opened(
        harness,
        tmp_path,
        tools={"deploy": gate.tool()},
        tool_approval={"deploy": "user-approval"},
    ) as (agent, session):
        _, first = await stream_parts(agent, session=session, prompt="go")
        (approval_id,) = [p.approval_id for p in only(first, "tool-approval-request")]
        # The approved execution runs in the continuation slice, whose record is already
        # consumed and whose call was seen in the earlier slice.
        result = await agent.continue_stream(
            session=session, tool_approval_continuations=[approval_response(approval_id, True)]
        )
        _, parts = await suspend_during_execution(agent, session, gate, result)
    assert kinds(parts)[-1] == "error"
    assert str(of_type(ConsumerErrorPart, parts[-1]).error) == "Unknown suspended tool call 'c1'."
    assert harness.recorder.results == []


# -- 7.5.2 / 1.3.5: the lookahead at a stop condition is dropped ------------------------------------------


@requirement("STOP-008", "STOP-007")
async def test_the_lookahead_is_dropped_and_the_state_carries_no_parts(tmp_path: Path) -> None:
    continued = [
        {"type": "text-start", "id": "t3"},
        {"type": "text-delta", "id": "t3", "delta": "two"},
        {"type": "text-end", "id": "t3"},
        finish_step(),
        finish(),
    ]
    harness = ScriptedHarness([suspendable(), continued])
    agent = make_agent(harness, tmp_path, stop_when=lambda c: True)
    with anyio.fail_after(LIMIT):
        session = await agent.create_session(session_id="s1")
        await agent.generate(session=session, prompt="go")
        assert session.turn_state == "suspended"
        state = await suspend(session)
    assert harness.recorder.calls.count("do_suspend_turn") == 1
    assert state.buffered_parts is None
    recreated = await recreate(agent, json.loads(json.dumps(state.to_wire())))
    try:
        result, parts = await continue_parts(agent, session=recreated)
        assert await result.text == "two"
    finally:
        await teardown(recreated)
    # The runtime's own replay is all the continued turn shows: no "t2" start kept.
    assert kinds(parts)[:4] == ["start", "start-step", "text-start", "text-delta"]
    assert [p.id for p in parts if p.type == "text-start"] == ["t3"]


# -- 7.7: frozen turn settings --------------------------------------------------------------------------------


@requirement(
    "LIFECYCLE-043",
    "TOOLSPEC-005",
    "ADAPTER-029",
    "PROMPT-008",
    "PROMPT-006",
    "MERGE-007",
    "PROMPT-023",
)
async def test_a_same_handle_continuation_reuses_the_captured_settings(tmp_path: Path) -> None:
    seen: list[Any] = []

    def execute(value: Any, options: Any) -> Any:
        seen.append(options.context)
        return "pong"

    ping = tool(description="ping", input_schema=OBJECT, execute=execute)
    script = [
        tool_call("c1", "pick", "{}"),
        WaitResult("c1"),
        tool_call("c2", "ping", "{}"),
        WaitResult("c2"),
        finish_step(),
        finish(),
    ]
    harness = ScriptedHarness([script])
    async with opened(
        harness,
        tmp_path,
        tools={"pick": client_tool(), "ping": ping},
        tools_context={"ping": "frozen-context"},
        model="m1",
        instructions="i1",
        skills=[SKILL_A],
    ) as (agent, session):
        await agent.generate(session=session, prompt="go")
        # The agent's configuration changes while the turn is paused.
        agent.model, agent.instructions, agent.skills = "m2", "i2", [SKILL_B]
        agent.user_tools = {"other": echo_tool()}
        agent.tools_context = {"ping": "new-context"}
        result, parts = await continue_parts(
            agent, session=session, tool_result_continuations=[{"toolCallId": "c1", "output": 1}]
        )
        assert await result.finish_reason == "stop"
    (options,) = harness.recorder.continues
    assert (options.model, options.instructions, list(options.skills)) == ("m1", "i1", [SKILL_A])
    assert [spec.name for spec in options.tools] == ["pick", "ping"]
    assert seen == ["frozen-context"]
    assert harness.recorder.results[-1] == {"tool_call_id": "c2", "output": "pong"}
    assert only(parts, "tool-call")[0].invalid is None


def _recreated_script() -> list[Any]:
    return [
        WaitResult("c1"),
        tool_call("c2", "echo", '{"a": 1}'),
        tool_call("c3", "extra", '{"b": 2}'),
        WaitResult("c2"),
        WaitResult("c3"),
        finish_step(),
        finish(),
    ]


async def _paused_state(tmp_path: Path, harness: ScriptedHarness) -> ContinueTurnState:
    agent = make_agent(
        harness,
        tmp_path,
        tools={"pick": client_tool(), "echo": echo_tool()},
        model="m1",
        instructions="i1",
        skills=[SKILL_A],
    )
    with anyio.fail_after(LIMIT):
        session = await agent.create_session(session_id="s1")
        await agent.generate(session=session, prompt="go")
        return await suspend(session)


@requirement(
    "LIFECYCLE-044", "FILTER-006", "MERGE-007", "PROMPT-009", "PROMPT-008", "LIFECYCLE-039"
)
@pytest.mark.parametrize("persisted", [True, False], ids=["turn-settings", "no-turn-settings"])
async def test_a_recreated_session_continues_with_the_persisted_settings(
    tmp_path: Path, persisted: bool
) -> None:
    harness = ScriptedHarness(
        [[tool_call("c1", "pick", "{}"), WaitResult("c1")], _recreated_script()]
    )
    state = await _paused_state(tmp_path, harness)
    if not persisted:
        state = state.model_copy(update={"turn_settings": None})
    current = make_agent(
        harness,
        tmp_path,
        tools={"pick": client_tool(), "echo": echo_tool(), "extra": echo_tool()},
        model="m2",
        instructions="i2",
        skills=[SKILL_B],
    )
    session = await recreate(current, state)
    try:
        _, parts = await continue_parts(
            current, session=session, tool_result_continuations=[{"toolCallId": "c1", "output": 1}]
        )
    finally:
        await teardown(session)
    assert list(harness.recorder.starts[-1].skills) == [SKILL_B], "session skills: current agent"
    (options,) = harness.recorder.continues
    calls = {p.tool_call_id: p for p in only(parts, "tool-call")}
    assert calls["c3"].invalid is None, "validated against the current merged set"
    results = {r["tool_call_id"]: r["output"] for r in harness.recorder.results}
    assert results["c2"] == {"echoed": {"a": 1}}
    if persisted:
        assert (options.model, options.instructions, list(options.skills)) == (
            "m1",
            "i1",
            [SKILL_A],
        )
        assert [spec.name for spec in options.tools] == ["pick", "echo"]
        assert results["c3"] == {
            "type": "execution-denied",
            "reason": "Tool 'extra' is inactive due to the HarnessAgent tool filtering policy.",
        }
    else:
        assert (options.model, options.instructions, list(options.skills)) == (
            "m2",
            "i2",
            [SKILL_B],
        )
        assert [spec.name for spec in options.tools] == ["pick", "echo", "extra"]
        assert results["c3"] == {"echoed": {"b": 2}}


@requirement("LIFECYCLE-045")
async def test_a_persisted_tool_that_disappeared_blocks_the_continuation(tmp_path: Path) -> None:
    harness = ScriptedHarness(
        [[tool_call("c1", "pick", "{}"), WaitResult("c1")], _recreated_script()]
    )
    state = await _paused_state(tmp_path, harness)
    current = make_agent(harness, tmp_path, tools={"pick": client_tool()})
    session = await recreate(current, state)
    try:
        with pytest.raises(HarnessUsageError) as caught:
            await current.continue_stream(
                session=session, tool_result_continuations=[{"toolCallId": "c1", "output": 1}]
            )
        assert session.turn_state == "awaiting-tool-result"
    finally:
        await teardown(session)
    assert str(caught.value) == (
        "HarnessAgent cannot continue turn because tool 'echo' is no longer available."
    )


# -- 7.6: steering --------------------------------------------------------------------------------------------


@requirement("STOP-009")
async def test_agent_level_steering_delegates_to_the_session(tmp_path: Path) -> None:
    harness = ScriptedHarness([[Hang()]], supports_steering=True)
    async with opened(harness, tmp_path, abort_grace=0.1) as (agent, session):
        abort = anyio.Event()
        result = await agent.stream(session=session, prompt="go", abort=abort)
        try:
            await agent.experimental_steer(session, "also check the tests")
        finally:
            abort.set()
            await drain(result)
    assert harness.recorder.user_messages == ["also check the tests"]


@requirement("STOP-010", "STOP-012", "ERROR-006")
@pytest.mark.parametrize("supported", [True, False])
async def test_steering_needs_a_running_turn_and_adapter_support(
    tmp_path: Path, supported: bool
) -> None:
    harness = ScriptedHarness(
        [[Hang()], [tool_call("c1", "gate", "{}"), WaitResult("c1")]], supports_steering=supported
    )
    no_turn = "Harness session s1 has no running turn to steer."
    async with opened(
        harness,
        tmp_path,
        abort_grace=0.1,
        tools={"gate": echo_tool()},
        tool_approval={"gate": "user-approval"},
    ) as (agent, session):
        with pytest.raises(HarnessSessionStateError) as idle:
            await session.experimental_steer_turn("x")
        assert str(idle.value) == no_turn
        abort = anyio.Event()
        result = await agent.stream(session=session, prompt="go", abort=abort)
        try:
            if supported:
                await session.experimental_steer_turn("look at the tests too")
            else:
                with pytest.raises(HarnessCapabilityUnsupportedError) as caught:
                    await session.experimental_steer_turn("look at the tests too")
                assert str(caught.value) == "Harness 'mock' does not support steering active turns."
                assert caught.value.harness_id == "mock"
        finally:
            abort.set()
            await drain(result)
        await agent.generate(session=session, prompt="second")
        assert session.turn_state == "awaiting-approval"
        with pytest.raises(HarnessSessionStateError) as paused:
            await session.experimental_steer_turn("x")
        assert str(paused.value) == no_turn
    assert harness.recorder.user_messages == (["look at the tests too"] if supported else [])


# -- 10.5: compaction -------------------------------------------------------------------------------------


@requirement("PROMPT-021", "PROMPT-022")
async def test_compact_is_forwarded_whatever_the_turn_state(tmp_path: Path) -> None:
    harness = ScriptedHarness([[Hang()], [tool_call("c1", "pick", "{}"), WaitResult("c1")]])
    async with opened(harness, tmp_path, abort_grace=0.1, tools={"pick": client_tool()}) as (
        agent,
        session,
    ):
        await session.compact()
        abort = anyio.Event()
        result = await agent.stream(session=session, prompt="go", abort=abort)
        await session.compact("keep the plan")
        abort.set()
        await drain(result)
        await agent.generate(session=session, prompt="pause")
        assert session.turn_state == "awaiting-tool-result"
        await session.compact("paused")
    assert harness.recorder.compactions == [None, "keep the plan", "paused"]
    assert harness.recorder.calls.count("do_compact") == 3


@requirement("PROMPT-021")
async def test_compact_errors_propagate(tmp_path: Path) -> None:
    harness = ScriptedHarness(supports_compaction=False)
    async with opened(harness, tmp_path) as (_, session):
        with pytest.raises(HarnessCapabilityUnsupportedError, match="no manual compaction"):
            await session.compact()
