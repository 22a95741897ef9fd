"""Turn-level rules of the reference agent not covered by the ``test_agent_*`` modules.

Adapter capability flags and prompt-control handling (1.1, 1.3, 1.4), consumer
``finish-step``/``finish`` parts and minted ids (2.2), MCP calls (decision 3), echoed
results on denial paths, results and their streams (§9) and the absence of a runtime
context option (8.2).
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path
from typing import Any

import anyio
import pytest

from harness_testkit.fake_harness import FakeHarness
from harness_testkit.reference import IdGenerator, tool
from harness_testkit.spec import (
    HarnessCapabilityUnsupportedError,
    PromptTurnOptions,
    TextDeltaPart,
)
from tests.reference.scripted import (
    Hang,
    ScriptedHarness,
    ScriptedSession,
    WaitResult,
    finish,
    finish_step,
    text_step,
    tool_call,
)
from tests.reference.test_agent_support import (
    BASH_SCHEMA,
    LIMIT,
    OBJECT,
    approval_response,
    builtin,
    client_tool,
    continue_parts,
    echo_tool,
    kinds,
    make_agent,
    only,
    opened,
    stream_parts,
    wire,
)

pytestmark = pytest.mark.anyio
requirement = pytest.mark.requirement

META = {"mock": {"k": 1}}
INACTIVE = "Tool '{}' is inactive due to the HarnessAgent tool filtering policy."


# -- 1.1.4 / 1.1.5: capability flags ------------------------------------------------------------------


@requirement("ADAPTER-006")
@pytest.mark.parametrize("flag", [1, "yes", None, False])
@pytest.mark.parametrize(
    "attribute", ["supports_builtin_tool_filtering", "supports_builtin_tool_approvals"]
)
def test_capability_flags_count_only_when_exactly_true(
    tmp_path: Path, attribute: str, flag: Any
) -> None:
    harness = ScriptedHarness(builtin_tools={"bash": builtin()})
    setattr(harness, attribute, flag)
    with pytest.raises(HarnessCapabilityUnsupportedError):
        make_agent(harness, tmp_path, active_tools=[])
    if attribute == "supports_builtin_tool_approvals":
        with pytest.raises(HarnessCapabilityUnsupportedError):
            make_agent(harness, tmp_path, permission_mode="allow-reads")


@requirement("ADAPTER-006")
@pytest.mark.parametrize(
    "attribute", ["supports_builtin_tool_filtering", "supports_builtin_tool_approvals"]
)
def test_a_missing_capability_flag_means_unsupported(tmp_path: Path, attribute: str) -> None:
    harness = ScriptedHarness(builtin_tools={"bash": builtin()})
    delattr(harness, attribute)
    with pytest.raises(HarnessCapabilityUnsupportedError):
        make_agent(harness, tmp_path, active_tools=[])


@requirement("ADAPTER-007")
@pytest.mark.parametrize("native", [True, False])
async def test_host_tool_approvals_are_always_handled_by_the_agent(
    tmp_path: Path, native: bool
) -> None:
    script = [tool_call("c1", "deploy", "{}"), WaitResult("c1"), finish_step(), finish()]
    harness = ScriptedHarness([script], supports_builtin_tool_approvals=native)
    async with opened(
        harness,
        tmp_path,
        tools={"deploy": echo_tool()},
        tool_approval={"deploy": "user-approval"},
    ) as (agent, session):
        _, parts = await stream_parts(agent, session=session, prompt="go")
        assert session.turn_state == "awaiting-approval"
        (record,) = session.pending_tool_approvals
    assert record.kind == "custom"
    assert kinds(parts).count("tool-approval-request") == 1
    assert harness.recorder.approvals == []
    assert harness.recorder.results == []


# -- 1.3.10 / 1.4.4 / 1.4.5: emit and the prompt control --------------------------------------------------


class EagerHarness(ScriptedHarness):
    """Emits the first parts synchronously inside ``do_prompt_turn``, before returning."""

    async def do_start(self, options: Any) -> Any:
        session = await super().do_start(options)
        original = session.do_prompt_turn

        async def do_prompt_turn(options: PromptTurnOptions) -> Any:
            options.emit({"type": "text-start", "id": "early"})
            options.emit(TextDeltaPart(id="early", delta="first "))
            control = await original(options)
            self.saved_emit = options.emit
            return control

        session.do_prompt_turn = do_prompt_turn  # type: ignore[method-assign]  # patch this instance only
        return session


@requirement("ADAPTER-043", "ADAPTER-049")
async def test_parts_emitted_inside_do_prompt_turn_come_first_and_late_parts_are_dropped(
    tmp_path: Path,
) -> None:
    rest = [
        {"type": "text-delta", "id": "early", "delta": "second"},
        {"type": "text-end", "id": "early"},
        finish_step(),
        finish(),
    ]
    harness = EagerHarness([rest, [*text_step("next"), finish()]])
    async with opened(harness, tmp_path) as (agent, session):
        result, parts = await stream_parts(agent, session=session, prompt="go")
        assert await result.text == "first second"
        harness.saved_emit({"type": "text-delta", "id": "late", "delta": "dropped"})
        harness.saved_emit({"not": "even a part"})
        assert session.turn_state == "idle"
        again = await agent.generate(session=session, prompt="again")
    assert kinds(parts)[:4] == ["start", "start-step", "text-start", "text-delta"]
    assert again.text == "first next", "the late delta never reaches the next turn"
    assert "dropped" not in str(wire(result.parts))


@requirement("ADAPTER-051")
async def test_submissions_use_the_prompt_control_the_adapter_returned(tmp_path: Path) -> None:
    used: list[Any] = []
    returned: list[Any] = []

    class Watching(ScriptedHarness):
        async def do_start(self, options: Any) -> ScriptedSession:
            session = await super().do_start(options)
            original = session.do_prompt_turn

            async def do_prompt_turn(options: PromptTurnOptions) -> Any:
                control = await original(options)
                returned.append(control)
                submit = control.submit_tool_result

                async def watched(*args: Any, **kwargs: Any) -> None:
                    used.append(control)
                    await submit(*args, **kwargs)

                control.submit_tool_result = watched  # type: ignore[method-assign]  # patch this instance only
                return control

            session.do_prompt_turn = do_prompt_turn  # type: ignore[method-assign]  # patch this instance only
            return session

    script = [
        tool_call("c1", "echo", "{}"),
        tool_call("c2", "ghost", "{}"),
        WaitResult("c1"),
        WaitResult("c2"),
        finish_step(),
        finish(),
    ]
    harness = Watching([script])
    async with opened(harness, tmp_path, tools={"echo": echo_tool()}) as (agent, session):
        await agent.generate(session=session, prompt="go")
    assert len(harness.recorder.results) == 2
    assert len(used) == 2
    assert all(control is returned[0] for control in used)


# -- 2.2.4 / 2.2.6: consumer finish-step and finish ----------------------------------------------------------


@requirement("STREAM-032", "STREAM-036", "TRANSLATE-002", "RESULT-004", "STREAM-029")
async def test_consumer_finish_step_and_finish_parts(tmp_path: Path) -> None:
    step = {
        "type": "finish-step",
        "finishReason": {"unified": "tool-calls", "raw": "tool_use"},
        "usage": {"inputTokens": {"total": 3}, "outputTokens": {"total": 4, "text": 4}},
        "harnessMetadata": META,
    }
    end = {
        "type": "finish",
        "finishReason": {"unified": "stop", "raw": "end_turn"},
        "totalUsage": {"inputTokens": {"total": 30}, "outputTokens": {"total": 40}},
        "harnessMetadata": {"mock": {"end": True}},
    }
    script = [
        {"type": "stream-start", "warnings": [{"type": "other", "message": "ignored"}]},
        {"type": "text-delta", "id": "t", "delta": "a"},
        step,
        end,
    ]
    context = {"echo": {"tenant": "t1"}}
    async with opened(
        ScriptedHarness([script]),
        tmp_path,
        model="m1",
        tools={"echo": echo_tool()},
        tools_context=context,
    ) as (agent, session):
        result, parts = await stream_parts(agent, session=session, prompt="go")
        (only_step,) = await result.steps
    finish_step_part = only(parts, "finish-step")[0].to_wire()
    response = finish_step_part.pop("response")
    assert finish_step_part == {
        "type": "finish-step",
        "usage": {
            "inputTokens": 3,
            "inputTokenDetails": {},
            "outputTokens": 4,
            "outputTokenDetails": {"textTokens": 4},
            "totalTokens": 7,
        },
        "finishReason": "tool-calls",
        "rawFinishReason": "tool_use",
        "providerMetadata": META,
        "performance": {
            "effectiveOutputTokensPerSecond": 0,
            "effectiveTotalTokensPerSecond": 0,
            "stepTimeMs": 0,
            "responseTimeMs": 0,
            "toolExecutionMs": {},
        },
    }
    assert response["id"] == f"{only_step.call_id}-0"
    assert response["modelId"] == "m1"
    assert response["messages"] == []
    assert re.match(r"^\d{4}-\d\d-\d\dT", response["timestamp"])
    assert parts[-1].to_wire() == {
        "type": "finish",
        "finishReason": "stop",
        "rawFinishReason": "end_turn",
        "totalUsage": {
            "inputTokens": 30,
            "inputTokenDetails": {},
            "outputTokens": 40,
            "outputTokenDetails": {},
            "totalTokens": 70,
        },
        "providerMetadata": {"mock": {"end": True}},
    }
    assert parts[1].to_wire() == {"type": "start-step", "request": {}, "warnings": []}
    assert only_step.provider == "harness:mock"
    assert only_step.tools_context == context
    assert not getattr(only_step, "warnings", None)


@requirement("STREAM-032")
async def test_consumer_finish_step_carries_performance(tmp_path: Path) -> None:
    async with opened(ScriptedHarness([[*text_step("a"), finish()]]), tmp_path) as (
        agent,
        session,
    ):
        _, parts = await stream_parts(agent, session=session, prompt="go")
    assert only(parts, "finish-step")[0].to_wire()["performance"] == {
        "effectiveOutputTokensPerSecond": 0,
        "effectiveTotalTokensPerSecond": 0,
        "stepTimeMs": 0,
        "responseTimeMs": 0,
        "toolExecutionMs": {},
    }


# -- 2.2.11: ids the agent mints ------------------------------------------------------------------------


class CountingIds(IdGenerator):
    def __init__(self) -> None:
        super().__init__(seed=7)
        self.minted: list[str] = []

    def __call__(self) -> str:
        value = super().__call__()
        self.minted.append(value)
        return value


@requirement("STREAM-047", "STREAM-048")
async def test_the_agent_mints_ids_for_its_own_parts_and_one_call_id_per_slice(
    tmp_path: Path,
) -> None:
    ids = CountingIds()
    script = [
        tool_call("c1", "gate", "{}"),
        tool_call("c2", "nope", "{}"),
        {"type": "file-change", "event": "create", "path": "a"},
        {"type": "compaction", "trigger": "auto", "summary": "s"},
        WaitResult("c2"),
        finish_step(),
        *text_step("second step"),
        finish(),
    ]
    harness = ScriptedHarness([script])
    agent = make_agent(
        harness,
        tmp_path,
        id_generator=ids,
        tools={"gate": echo_tool(), "nope": echo_tool()},
        tool_approval={"gate": "user-approval", "nope": "denied"},
    )
    with anyio.fail_after(LIMIT):
        session = await agent.create_session()
    try:
        assert session.session_id == ids.minted[0]
        _, parts = await stream_parts(agent, session=session, prompt="go")
    finally:
        await session.destroy()
    minted = ids.minted[1:]
    requests = only(parts, "tool-approval-request")
    assert {p.approval_id for p in requests} <= set(minted)
    synthetic = [p.tool_call_id for p in only(parts, "tool-call")][2:]
    assert [s.split("-")[-1] for s in synthetic] == [
        m for m in minted if any(m in s for s in synthetic)
    ]
    steps = [p for p in parts if p.type == "finish-step"]
    call_ids = {p.response.id.rsplit("-", 1)[0] for p in steps}
    assert len(call_ids) == 1
    assert call_ids <= set(minted)


# -- decision 3: MCP tools ---------------------------------------------------------------------------------


MCP_SCRIPT = {
    "version": 1,
    "mcpServers": {"docs": {"tools": {"search": {"result": {"hits": ["README.md"]}}}}},
    "turns": [
        {
            "steps": [
                {"actions": [{"mcp": "docs/search", "id": "m1", "input": {"query": "x"}}]},
                {"actions": [{"text": "found"}]},
            ]
        }
    ],
}


@requirement("TOOLSPEC-018", "TOOLSPEC-019", "DECISION-001", "HOSTTOOL-016")
async def test_mcp_calls_run_in_the_runtime_and_surface_as_valid_dynamic_calls(
    tmp_path: Path,
) -> None:
    harness = FakeHarness(script=MCP_SCRIPT)
    # A client tool of the same name: a provider-executed call never becomes pending.
    async with opened(harness, tmp_path, tools={"mcp__docs__search": client_tool()}) as (
        agent,
        session,
    ):
        result, parts = await stream_parts(agent, session=session, prompt="look it up")
        assert session.turn_state == "idle"
        assert session.pending_tool_results == []
        assert await result.text == "found"
    (call,) = [p for p in only(parts, "tool-call") if p.tool_call_id == "m1"]
    assert call.tool_name == "mcp__docs__search"
    assert call.provider_executed is True
    assert call.invalid is None
    (outcome,) = [p for p in only(parts, "tool-result") if p.tool_call_id == "m1"]
    assert outcome.output == {"hits": ["README.md"]}


@requirement("TOOLSPEC-018")
async def test_undeclared_mcp_call_is_a_valid_dynamic_tool_call(tmp_path: Path) -> None:
    script = [
        tool_call(
            "m1", "mcp__db__query", '{"sql": "select 1"}', provider_executed=True, dynamic=True
        ),
        {
            "type": "tool-result",
            "toolCallId": "m1",
            "toolName": "mcp__db__query",
            "result": [1],
            "dynamic": True,
        },
        finish_step(),
        finish(),
    ]
    harness = ScriptedHarness([script])
    async with opened(harness, tmp_path) as (agent, session):
        _, parts = await stream_parts(agent, session=session, prompt="go")
        assert session.pending_tool_results == []
    (call,) = only(parts, "tool-call")
    assert call.to_wire() == {
        "type": "tool-call",
        "toolCallId": "m1",
        "toolName": "mcp__db__query",
        "input": {"sql": "select 1"},
        "providerExecuted": True,
        "dynamic": True,
    }
    assert harness.recorder.results == []


# -- ambiguity 14: echoed results on the denial paths --------------------------------------------------------


@requirement("APPROVAL-037")
@pytest.mark.parametrize("path", ["automatic-deny", "inactive"])
async def test_echoed_results_of_denied_calls_are_regular_tool_results(
    tmp_path: Path, path: str
) -> None:
    denied = {"type": "execution-denied", "reason": "no"}
    script = [
        tool_call("c1", "deploy", "{}"),
        WaitResult("c1"),
        {"type": "tool-result", "toolCallId": "c1", "toolName": "deploy", "result": denied},
        finish_step(),
        finish(),
    ]
    settings: dict[str, Any] = {"tools": {"deploy": echo_tool(), "other": echo_tool()}}
    if path == "automatic-deny":
        settings["tool_approval"] = {"deploy": "denied"}
    else:
        settings["active_tools"] = ["other"]
    async with opened(ScriptedHarness([script]), tmp_path, **settings) as (agent, session):
        _, parts = await stream_parts(agent, session=session, prompt="go")
    assert "tool-output-denied" not in kinds(parts)
    (echo,) = only(parts, "tool-result")
    assert echo.to_wire() == {
        "type": "tool-result",
        "toolCallId": "c1",
        "toolName": "deploy",
        "output": denied,
    }


# -- 3.6 / 4.5: a user tool shadowing a built-in ----------------------------------------------------------------


@requirement("MERGE-010")
@pytest.mark.parametrize(
    ("active", "filtering", "specs"),
    [(["echo"], {"mode": "allow", "toolNames": []}, ["echo"]), (["bash"], None, ["bash"])],
    ids=["shadow-inactive", "shadow-active"],
)
async def test_a_shadowed_builtin_still_takes_part_in_builtin_filtering(
    tmp_path: Path, active: list[str], filtering: dict[str, Any] | None, specs: list[str]
) -> None:
    harness = ScriptedHarness(
        [[finish()]],
        builtin_tools={"bash": builtin(BASH_SCHEMA)},
        supports_builtin_tool_filtering=True,
    )
    async with opened(
        harness, tmp_path, tools={"bash": echo_tool(), "echo": echo_tool()}, active_tools=active
    ) as (agent, session):
        await agent.generate(session=session, prompt="go")
    got = harness.recorder.starts[0].builtin_tool_filtering
    assert (got.to_wire() if got is not None else None) == filtering
    assert [spec.name for spec in harness.recorder.prompts[0].tools] == specs


# -- §9 results --------------------------------------------------------------------------------------------------


@requirement("RESULT-001")
async def test_stream_returns_once_the_turn_is_ready(tmp_path: Path) -> None:
    async with opened(ScriptedHarness([[*text_step("a"), Hang()]]), tmp_path, abort_grace=0.1) as (
        agent,
        session,
    ):
        abort = anyio.Event()
        with anyio.fail_after(LIMIT):
            result = await agent.stream(session=session, prompt="go", abort=abort)
        assert session.turn_state == "running"
        assert session._link.control is not None, "the prompt control is available"
        seen: list[str] = []
        async for part in result.full_stream:
            seen.append(part.type)
            if part.type == "finish-step":
                abort.set()
    assert seen[:3] == ["start", "start-step", "text-start"]
    assert seen[-1] == "abort"


@requirement("RESULT-009")
async def test_generate_reasoning_text_is_the_final_steps(tmp_path: Path) -> None:
    script = [
        {"type": "reasoning-delta", "id": "r", "delta": "first thought"},
        *text_step("a"),
        {"type": "reasoning-delta", "id": "r", "delta": "final thought"},
        *text_step("b"),
        finish(),
    ]
    async with opened(ScriptedHarness([script]), tmp_path) as (agent, session):
        result = await agent.generate(session=session, prompt="go")
    assert result.reasoning_text == "final thought"


@requirement("RESULT-009")
async def test_reasoning_accessors_of_both_results(tmp_path: Path) -> None:
    script = [{"type": "reasoning-delta", "id": "r", "delta": "hm"}, *text_step("a"), finish()]
    async with opened(ScriptedHarness([script, script]), tmp_path) as (agent, session):
        generated = await agent.generate(session=session, prompt="go")
        streamed, _ = await stream_parts(agent, session=session, prompt="again")
    assert [part["text"] for part in generated.reasoning] == ["hm"]
    assert await streamed.reasoning == []
    assert await streamed.reasoning_text is None


@requirement("RESULT-016")
async def test_continue_generate_of_a_slice_without_steps(tmp_path: Path) -> None:
    script = [tool_call("c1", "pick", "{}"), WaitResult("c1"), finish("length", 2, 3)]
    async with opened(ScriptedHarness([script]), tmp_path, tools={"pick": client_tool()}) as (
        agent,
        session,
    ):
        await agent.generate(session=session, prompt="go")
        result = await agent.continue_generate(
            session=session, tool_result_continuations=[{"toolCallId": "c1", "output": 1}]
        )
    assert (result.text, result.steps, result.finish_reason) == ("", (), "length")
    assert result.usage.total_tokens == 5


# -- 8.2: no runtime context -----------------------------------------------------------------------------------


@requirement("CONTEXT-002")
@pytest.mark.parametrize("method", ["stream", "generate", "continue_stream", "continue_generate"])
async def test_there_is_no_runtime_context_call_option(tmp_path: Path, method: str) -> None:
    agent = make_agent(ScriptedHarness(), tmp_path)
    parameters = inspect.signature(getattr(agent, method)).parameters
    assert not [name for name in parameters if "runtime" in name or "context" in name]
    with pytest.raises(TypeError):
        await getattr(agent, method)(session=None, runtime_context={"x": 1})


# -- 11.8: adapter failures when a turn starts ----------------------------------------------------------------


@requirement("ERROR-009")
async def test_a_failing_do_continue_turn_settles_as_an_error_part(tmp_path: Path) -> None:
    class Failing(ScriptedHarness):
        async def do_start(self, options: Any) -> ScriptedSession:
            session = await super().do_start(options)

            async def do_continue_turn(options: Any) -> Any:
                raise RuntimeError("runtime lost the turn")

            session.do_continue_turn = do_continue_turn  # type: ignore[method-assign]  # patch this instance only
            return session

    script = [tool_call("c1", "pick", "{}"), WaitResult("c1")]
    async with opened(Failing([script]), tmp_path, tools={"pick": client_tool()}) as (
        agent,
        session,
    ):
        await agent.generate(session=session, prompt="go")
        result, parts = await continue_parts(
            agent, session=session, tool_result_continuations=[{"toolCallId": "c1", "output": 1}]
        )
        assert session.turn_state == "idle"
        with pytest.raises(RuntimeError, match="runtime lost the turn"):
            await result.text
    assert kinds(parts) == ["start", "error"]


# -- 2.2.10: continuation outcomes are stripped for consumers ----------------------------------------------------


@requirement("STREAM-044", "STREAM-045")
async def test_an_approved_continuation_outcome_is_work_dir_stripped(tmp_path: Path) -> None:
    where: dict[str, str] = {}

    def execute(value: Any, options: Any) -> Any:
        return {"wrote": f"{where['wd']}/out/report.md"}

    writer = tool(description="write", input_schema=OBJECT, execute=execute)
    script = [tool_call("c1", "write", "{}"), WaitResult("c1"), finish_step(), finish()]
    harness = ScriptedHarness([script])
    async with opened(
        harness, tmp_path, tools={"write": writer}, tool_approval={"write": "user-approval"}
    ) as (agent, session):
        where["wd"] = session.session_work_dir
        _, first = await stream_parts(agent, session=session, prompt="go")
        (approval_id,) = [p.approval_id for p in only(first, "tool-approval-request")]
        _, parts = await continue_parts(
            agent,
            session=session,
            tool_approval_continuations=[approval_response(approval_id, True)],
        )
    (outcome,) = only(parts, "tool-result")
    assert outcome.output == {"wrote": "out/report.md"}
    assert harness.recorder.results[0]["output"] == {"wrote": f"{where['wd']}/out/report.md"}


@requirement("RESULT-006")
async def test_step_content_holds_coalesced_text(tmp_path: Path) -> None:
    script = [
        {"type": "text-delta", "id": "t", "delta": "Hel"},
        {"type": "text-delta", "id": "t", "delta": "lo"},
        finish_step(),
        finish(),
    ]
    async with opened(ScriptedHarness([script]), tmp_path) as (agent, session):
        result = await agent.generate(session=session, prompt="go")
    (step,) = result.steps
    texts = [part for part in step.content if part.type in ("text", "text-delta")]
    assert len(texts) == 1
    assert getattr(texts[0], "text", None) == "Hello"


@requirement("RESULT-019")
async def test_partial_output_re_chunks_the_first_text_block(tmp_path: Path) -> None:
    script = [
        {"type": "text-start", "id": "t"},
        *[{"type": "text-delta", "id": "t", "delta": d} for d in ['{"a"', ": [1", ",", " 2]}"]],
        {"type": "text-end", "id": "t"},
        finish_step(),
        finish(),
    ]
    async with opened(ScriptedHarness([script]), tmp_path, output={"type": "object"}) as (
        agent,
        session,
    ):
        result, parts = await stream_parts(agent, session=session, prompt="go")
        partials = [value async for value in result.partial_output_stream]
        assert await result.output == {"a": [1, 2]}
    # "," changes no partial: its text waits and leaves merged with the next delta.
    assert [p.text for p in parts if p.type == "text-delta"] == ['{"a"', ": [1", ", 2]}"]
    assert partials == [{}, {"a": [1]}, {"a": [1, 2]}]


@requirement("RESULT-021")
async def test_output_without_an_output_setting_says_it_is_not_implemented(
    tmp_path: Path,
) -> None:
    async with opened(ScriptedHarness([[*text_step("hi"), finish()]]), tmp_path) as (
        agent,
        session,
    ):
        result, _ = await stream_parts(agent, session=session, prompt="go")
        with pytest.raises(Exception, match="not implemented yet") as caught:
            await result.output
        assert [value async for value in result.partial_output_stream] == []
    assert str(caught.value) == (
        "HarnessAgent: structured output is not implemented yet. "
        "Track the foundation review for follow-up."
    )
