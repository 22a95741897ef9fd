"""Approval pauses and approval continuations (notes 5.3, 5.4).

Custom (host-tool ``user-approval``) and builtin (runtime-asked) approvals, step
batching with ``stepToolCallCount``, resuming through ``continue_stream`` and through a
trailing tool message, settlement order and parts, suppression of replayed parts and
the swallowed ``finish-step`` of the resumed step.

One idea: an approval pause and the continuation that settles it, for both kinds of
approval; each rule needs its own scripted turn, hence the length.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness_testkit.reference import ToolExecutionOptions, tool
from harness_testkit.spec import (
    ConsumerErrorPart,
    ConsumerFinishPart,
    ConsumerToolErrorPart,
    HarnessError,
    HarnessSessionStateError,
    HarnessTurnError,
    ToolContextValidationError,
)
from tests.narrowing import of_type
from tests.reference.scripted import (
    ScriptedHarness,
    WaitApproval,
    WaitResult,
    finish,
    finish_step,
    text_step,
    tool_call,
)
from tests.reference.test_agent_support import (
    BASH_SCHEMA,
    OBJECT,
    always_stop,
    approval_response,
    builtin,
    client_tool,
    continue_parts,
    framing_problems,
    kinds,
    only,
    opened,
    scripted,
    stream_parts,
    suspend,
)

pytestmark = pytest.mark.anyio

NO_APPROVAL_RESPONSES = (
    "Harness 'mock' emitted a built-in tool approval request but does not support "
    "approval responses."
)
TEXT = ["start-step", "text-start", "text-delta", "text-end", "finish-step"]


class Deploys:
    """A ``deploy`` host tool that records each execution."""

    def __init__(self, *, fail: bool = False) -> None:
        self.runs: list[Any] = []
        self.fail = fail

    def tool(self) -> Any:
        def execute(value: Any, options: ToolExecutionOptions) -> Any:
            self.runs.append(value)
            if self.fail:
                raise RuntimeError("deploy exploded")
            return {"deployed": value["env"]}

        return tool(description="deploy", input_schema=OBJECT, execute=execute)


def gated(deploys: Deploys, **extra: Any) -> dict[str, Any]:
    """Agent settings with ``deploy`` behind user approval."""
    return {
        "tools": {"deploy": deploys.tool(), **extra.pop("tools", {})},
        "tool_approval": {"deploy": "user-approval", **extra.pop("tool_approval", {})},
        **extra,
    }


def call(call_id: str, env: str = "prod", **extra: Any) -> dict[str, Any]:
    return tool_call(call_id, "deploy", f'{{"env": "{env}"}}', **extra)


def echo_of(call_id: str, name: str = "deploy", result: Any = "echo") -> dict[str, Any]:
    return {"type": "tool-result", "toolCallId": call_id, "toolName": name, "result": result}


def resumed_tail(call_id: str, text: str = "shipped") -> list[Any]:
    """What a runtime replays after a custom approval, then a closing text step."""
    return [
        WaitResult(call_id),
        call(call_id),
        echo_of(call_id),
        finish_step("tool-calls"),
        *text_step(text),
        finish(),
    ]


def approval_ids(parts: list[Any]) -> list[str]:
    return [p.approval_id for p in only(parts, "tool-approval-request")]


# -- 5.3.1 / 5.3.3 custom approval pause -----------------------------------------------------------


@pytest.mark.requirement(
    "APPROVAL-012", "APPROVAL-015", "APPROVAL-016", "APPROVAL-009", "MERGE-005"
)
async def test_custom_approval_pauses_before_anything_runs(tmp_path: Path) -> None:
    deploys = Deploys()
    calls_seen: list[Any] = []
    script = [call("c1", nativeName="Deploy"), *resumed_tail("c1")]
    async with opened(
        ScriptedHarness([script]),
        tmp_path,
        stop_when=always_stop(calls_seen),
        **gated(deploys),
    ) as (agent, session):
        result, parts = await stream_parts(agent, session=session, prompt="go")
        steps = await result.steps
        assert session.turn_state == "awaiting-approval"
        assert session.has_unfinished_turn()
        harness = scripted(agent)
        state = await suspend(session)
    assert kinds(parts) == [
        "start",
        "start-step",
        "tool-call",
        "tool-approval-request",
        "finish-step",
        "finish",
    ]
    request = parts[3].to_wire()
    (approval_id,) = approval_ids(parts)
    assert request == {
        "type": "tool-approval-request",
        "approvalId": approval_id,
        "toolCall": {
            "type": "tool-call",
            "toolCallId": "c1",
            "toolName": "deploy",
            "input": {"env": "prod"},
        },
    }
    assert of_type(ConsumerFinishPart, parts[-1]).finish_reason == "tool-calls"
    assert [p.type for p in steps[0].content] == ["tool-call", "tool-approval-request"]
    assert deploys.runs == []
    assert harness.recorder.results == []
    assert calls_seen == [], "stop conditions are not evaluated for a pause"
    assert harness.recorder.calls.count("do_suspend_turn") == 1
    (record,) = state.pending_tool_approvals or []
    assert record.to_wire() == {
        "approvalId": approval_id,
        "toolCallId": "c1",
        "toolName": "deploy",
        "input": '{"env": "prod"}',
        "kind": "custom",
        "providerExecuted": False,
        "nativeName": "Deploy",
    }


# -- 5.3.2 builtin approval pause ---------------------------------------------------------------------


def builtin_script(*, replay: bool = True) -> list[Any]:
    inputs = [
        {"type": "tool-input-start", "id": "b1", "toolName": "bash", "providerExecuted": True},
        {"type": "tool-input-delta", "id": "b1", "delta": '{"command": "ls"}'},
        {"type": "tool-input-end", "id": "b1"},
    ]
    first = [
        *inputs,
        tool_call("b1", "bash", '{"command": "ls"}', provider_executed=True, nativeName="Bash"),
        {"type": "tool-approval-request", "approvalId": "ap1", "toolCallId": "b1"},
        WaitApproval("ap1"),
    ]
    again = [
        *inputs,
        tool_call("b1", "bash", '{"command": "ls"}', provider_executed=True),
        {"type": "tool-approval-request", "approvalId": "ap1", "toolCallId": "b1"},
    ]
    rest = [
        echo_of("b1", "bash", "a.txt"),
        finish_step("tool-calls"),
        *text_step("listed"),
        finish(),
    ]
    return first + (again if replay else []) + rest


def approving_harness(script: list[Any], **extra: Any) -> ScriptedHarness:
    return ScriptedHarness(
        [script],
        builtin_tools={"bash": builtin(BASH_SCHEMA)},
        supports_builtin_tool_approvals=True,
        **extra,
    )


@pytest.mark.requirement("APPROVAL-013", "TRANSLATE-008", "MERGE-005")
async def test_builtin_approval_request_pauses_with_a_builtin_record(tmp_path: Path) -> None:
    harness = approving_harness(builtin_script())
    async with opened(harness, tmp_path) as (agent, session):
        _, parts = await stream_parts(agent, session=session, prompt="go")
        assert session.turn_state == "awaiting-approval"
        state = await suspend(session)
    assert kinds(parts)[-4:] == ["tool-call", "tool-approval-request", "finish-step", "finish"]
    assert parts[-3].to_wire() == {
        "type": "tool-approval-request",
        "approvalId": "ap1",
        "toolCall": {
            "type": "tool-call",
            "toolCallId": "b1",
            "toolName": "bash",
            "input": {"command": "ls"},
            "providerExecuted": True,
        },
    }
    (record,) = state.pending_tool_approvals or []
    assert record.to_wire() == {
        "approvalId": "ap1",
        "toolCallId": "b1",
        "toolName": "bash",
        "input": '{"command": "ls"}',
        "kind": "builtin",
        "providerExecuted": True,
        "nativeName": "Bash",
    }
    assert harness.recorder.approvals == []


@pytest.mark.requirement("APPROVAL-014")
async def test_builtin_approval_for_an_unknown_call_fails_the_turn(tmp_path: Path) -> None:
    script = [
        {"type": "tool-approval-request", "approvalId": "ap9", "toolCallId": "ghost"},
        finish(),
    ]
    async with opened(approving_harness(script), tmp_path) as (agent, session):
        _, parts = await stream_parts(agent, session=session, prompt="go")
        assert session.turn_state == "idle"
    assert kinds(parts) == ["start", "error"]
    assert str(of_type(ConsumerErrorPart, parts[-1]).error) == (
        "Harness 'mock' emitted approval request 'ap9' for unknown tool call 'ghost'."
    )


# -- 5.4.3 - 5.4.7 continue_stream settlement -----------------------------------------------------------


@pytest.mark.requirement(
    "APPROVAL-024",
    "APPROVAL-025",
    "APPROVAL-028",
    "APPROVAL-030",
    "APPROVAL-031",
    "APPROVAL-032",
    "STREAM-031",
)
async def test_approved_custom_tool_runs_once_with_one_result_part(tmp_path: Path) -> None:
    deploys = Deploys()
    script = [call("c1"), *resumed_tail("c1")]
    async with opened(ScriptedHarness([script]), tmp_path, **gated(deploys)) as (agent, session):
        _, first = await stream_parts(agent, session=session, prompt="go")
        (approval_id,) = approval_ids(first)
        result, parts = await continue_parts(
            agent,
            session=session,
            tool_approval_continuations=[approval_response(approval_id, True)],
        )
        steps = await result.steps
        assert session.turn_state == "idle"
        harness = scripted(agent)
    assert deploys.runs == [{"env": "prod"}]
    assert harness.recorder.results == [{"tool_call_id": "c1", "output": {"deployed": "prod"}}]
    assert kinds(parts) == ["start", "tool-approval-response", "tool-result", *TEXT, "finish"]
    rebuilt = {
        "type": "tool-call",
        "toolCallId": "c1",
        "toolName": "deploy",
        "input": {"env": "prod"},
        "providerExecuted": False,
    }
    assert parts[1].to_wire() == {
        "type": "tool-approval-response",
        "approvalId": approval_id,
        "toolCall": rebuilt,
        "approved": True,
        "providerExecuted": False,
    }
    assert parts[2].to_wire() == {
        "type": "tool-result",
        "toolCallId": "c1",
        "toolName": "deploy",
        "input": {"env": "prod"},
        "output": {"deployed": "prod"},
    }
    assert [step.text for step in steps] == ["shipped"], (
        "the resumed step's finish-step is swallowed"
    )
    assert framing_problems(parts) == []


@pytest.mark.requirement("APPROVAL-027", "APPROVAL-037")
async def test_denied_custom_tool_never_runs_and_emits_no_result(tmp_path: Path) -> None:
    deploys = Deploys()
    script = [call("c1"), *resumed_tail("c1", text="cancelled")]
    async with opened(ScriptedHarness([script]), tmp_path, **gated(deploys)) as (agent, session):
        _, first = await stream_parts(agent, session=session, prompt="go")
        (approval_id,) = approval_ids(first)
        result, parts = await continue_parts(
            agent,
            session=session,
            tool_approval_continuations=[approval_response(approval_id, False, "not today")],
        )
        assert await result.text == "cancelled"
        harness = scripted(agent)
    assert deploys.runs == []
    assert harness.recorder.results == [
        {"tool_call_id": "c1", "output": {"type": "execution-denied", "reason": "not today"}}
    ]
    assert kinds(parts) == ["start", "tool-approval-response", *TEXT, "finish"]
    response = parts[1].to_wire()
    assert (response["approved"], response["reason"]) == (False, "not today")


@pytest.mark.requirement("APPROVAL-028")
async def test_approved_custom_tool_failure_submits_error_and_emits_tool_error(
    tmp_path: Path,
) -> None:
    deploys = Deploys(fail=True)
    script = [call("c1"), *resumed_tail("c1")]
    async with opened(ScriptedHarness([script]), tmp_path, **gated(deploys)) as (agent, session):
        _, first = await stream_parts(agent, session=session, prompt="go")
        (approval_id,) = approval_ids(first)
        _, parts = await continue_parts(
            agent,
            session=session,
            tool_approval_continuations=[approval_response(approval_id, True)],
        )
        harness = scripted(agent)
    assert harness.recorder.results == [
        {
            "tool_call_id": "c1",
            "output": {"error": "RuntimeError: deploy exploded"},
            "is_error": True,
        }
    ]
    assert kinds(parts)[:3] == ["start", "tool-approval-response", "tool-error"]
    error_part = of_type(ConsumerToolErrorPart, parts[2])
    assert (error_part.tool_call_id, error_part.tool_name, error_part.input) == (
        "c1",
        "deploy",
        {"env": "prod"},
    )
    assert isinstance(error_part.error, RuntimeError)
    assert str(error_part.error) == "deploy exploded"


@pytest.mark.requirement("APPROVAL-029")
async def test_approved_tool_without_execute_becomes_a_pending_client_result(
    tmp_path: Path,
) -> None:
    script = [tool_call("c1", "confirm", "{}"), WaitResult("c1"), finish_step(), finish()]
    async with opened(
        ScriptedHarness([script]),
        tmp_path,
        tools={"confirm": client_tool()},
        tool_approval={"confirm": "user-approval"},
    ) as (agent, session):
        _, first = await stream_parts(agent, session=session, prompt="go")
        (approval_id,) = approval_ids(first)
        result, parts = await continue_parts(
            agent,
            session=session,
            tool_approval_continuations=[approval_response(approval_id, True)],
        )
        assert session.turn_state == "awaiting-tool-result"
        assert await result.steps == []
        harness = scripted(agent)
    assert kinds(parts) == ["start", "tool-approval-response", "finish"]
    assert of_type(ConsumerFinishPart, parts[-1]).finish_reason == "tool-calls"
    assert harness.recorder.results == []


@pytest.mark.requirement("APPROVAL-033", "STREAM-031")
async def test_settle_only_continuation_has_no_steps(tmp_path: Path) -> None:
    deploys = Deploys()
    script = [call("c1"), WaitResult("c1"), echo_of("c1"), finish_step("tool-calls"), finish()]
    async with opened(ScriptedHarness([script]), tmp_path, **gated(deploys)) as (agent, session):
        _, first = await stream_parts(agent, session=session, prompt="go")
        (approval_id,) = approval_ids(first)
        result, parts = await continue_parts(
            agent,
            session=session,
            tool_approval_continuations=[approval_response(approval_id, True)],
        )
        assert await result.steps == []
    assert kinds(parts) == ["start", "tool-approval-response", "tool-result", "finish"]
    assert framing_problems(parts) == []


# -- builtin settlement (5.4.5) -------------------------------------------------------------------------


@pytest.mark.requirement("APPROVAL-026", "APPROVAL-032", "TRANSLATE-008", "TRANSLATE-023")
async def test_approved_builtin_is_submitted_once_and_its_genuine_result_forwarded(
    tmp_path: Path,
) -> None:
    harness = approving_harness(builtin_script())
    async with opened(harness, tmp_path) as (agent, session):
        await stream_parts(agent, session=session, prompt="go")
        result, parts = await continue_parts(
            agent, session=session, tool_approval_continuations=[approval_response("ap1", True)]
        )
        assert await result.text == "listed"
    assert harness.recorder.approvals == [{"approval_id": "ap1", "approved": True, "reason": None}]
    assert not {"tool-input-start", "tool-input-delta", "tool-call", "tool-approval-request"} & set(
        kinds(parts)
    )
    (outcome,) = only(parts, "tool-result")
    assert outcome.to_wire() == {
        "type": "tool-result",
        "toolCallId": "b1",
        "toolName": "bash",
        "output": "a.txt",
    }
    response = only(parts, "tool-approval-response")[0].to_wire()
    assert response["providerExecuted"] is True
    assert response["toolCall"]["providerExecuted"] is True


@pytest.mark.requirement("APPROVAL-026", "STREAM-055")
async def test_builtin_settlement_frames_the_discarded_step_as_upstream(tmp_path: Path) -> None:
    harness = approving_harness(builtin_script())
    async with opened(harness, tmp_path) as (agent, session):
        await stream_parts(agent, session=session, prompt="go")
        _, parts = await continue_parts(
            agent, session=session, tool_approval_continuations=[approval_response("ap1", True)]
        )
    # The builtin's result opens the resumed step, which is discarded at the swallowed
    # finish-step without a finish-step; the text opens a new, recorded step.
    assert kinds(parts) == [
        "start",
        "tool-approval-response",
        "start-step",
        "tool-result",
        "start-step",
        "text-start",
        "text-delta",
        "text-end",
        "finish-step",
        "finish",
    ]
    # Apart from that discarded step, start-step and finish-step alternate.
    assert framing_problems(parts) == ["start-step inside an open step at 4"]


@pytest.mark.requirement("APPROVAL-026")
async def test_denied_builtin_is_submitted_with_its_reason(tmp_path: Path) -> None:
    harness = approving_harness(builtin_script(replay=False))
    async with opened(harness, tmp_path) as (agent, session):
        await stream_parts(agent, session=session, prompt="go")
        await continue_parts(
            agent,
            session=session,
            tool_approval_continuations=[approval_response("ap1", False, "too risky")],
        )
    assert harness.recorder.approvals == [
        {"approval_id": "ap1", "approved": False, "reason": "too risky"}
    ]


@pytest.mark.requirement("ADAPTER-047")
async def test_builtin_settlement_without_submit_tool_approval_fails(tmp_path: Path) -> None:
    harness = approving_harness(builtin_script(), supports_approval_responses=False)
    async with opened(harness, tmp_path) as (agent, session):
        await stream_parts(agent, session=session, prompt="go")
        _, parts = await continue_parts(
            agent, session=session, tool_approval_continuations=[approval_response("ap1", True)]
        )
        assert session.turn_state == "idle"
    assert kinds(parts)[-1] == "error"
    assert str(of_type(ConsumerErrorPart, parts[-1]).error) == NO_APPROVAL_RESPONSES
    # A plain error (name "Error"), not the capability error (ERROR-007).
    assert type(of_type(ConsumerErrorPart, parts[-1]).error) is HarnessTurnError


@pytest.mark.requirement("ADAPTER-047")
async def test_filter_auto_deny_without_submit_tool_approval_fails(tmp_path: Path) -> None:
    harness = approving_harness(builtin_script(), supports_approval_responses=False)
    async with opened(harness, tmp_path, active_tools=[]) as (agent, session):
        _, parts = await stream_parts(agent, session=session, prompt="go")
    assert kinds(parts)[-1] == "error"
    assert str(of_type(ConsumerErrorPart, parts[-1]).error) == NO_APPROVAL_RESPONSES
    # A plain error (name "Error"), not the capability error (ERROR-007).
    assert type(of_type(ConsumerErrorPart, parts[-1]).error) is HarnessTurnError


# -- 5.4.1 / 5.4.2 message-derived continuations -------------------------------------------------------


@pytest.mark.requirement("APPROVAL-020")
async def test_trailing_approval_message_continues_the_same_turn(tmp_path: Path) -> None:
    deploys = Deploys()
    script = [call("c1"), *resumed_tail("c1")]
    async with opened(ScriptedHarness([script]), tmp_path, **gated(deploys)) as (agent, session):
        first = await agent.generate(session=session, prompt="ship it")
        request = first.response_messages[0]["content"][1]
        assert request["type"] == "tool-approval-request"
        messages = [
            {"role": "user", "content": "ship it"},
            *first.response_messages,
            {"role": "tool", "content": [approval_response(request["approvalId"], True)]},
        ]
        second = await agent.generate(session=session, messages=messages)
        harness = scripted(agent)
    assert second.text == "shipped"
    assert deploys.runs == [{"env": "prod"}]
    assert harness.recorder.calls.count("do_prompt_turn") == 1
    assert harness.recorder.calls.count("do_continue_turn") == 1
    assert [options.prompt for options in harness.recorder.prompts] == ["ship it"]


@pytest.mark.parametrize(
    ("assistant", "response_id", "message"),
    [
        (
            [
                {"type": "tool-call", "toolCallId": "c1", "toolName": "deploy", "input": {}},
                {"type": "tool-approval-request", "approvalId": "a1", "toolCallId": "c1"},
            ],
            "zzz",
            "Tool approval response 'zzz' does not match a prior tool approval request.",
        ),
        (
            [{"type": "tool-approval-request", "approvalId": "a1", "toolCallId": "cX"}],
            "a1",
            "Tool approval request 'a1' references unknown tool call 'cX'.",
        ),
    ],
    ids=["unknown-approval", "unknown-tool-call"],
)
@pytest.mark.requirement("APPROVAL-021", "APPROVAL-022", "ERROR-007", "SESSION-026")
async def test_bad_approval_messages_raise_harness_error(
    tmp_path: Path, assistant: list[dict[str, Any]], response_id: str, message: str
) -> None:
    deploys = Deploys()
    script = [call("c1"), *resumed_tail("c1")]
    async with opened(ScriptedHarness([script]), tmp_path, **gated(deploys)) as (agent, session):
        await stream_parts(agent, session=session, prompt="go")
        messages = [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": assistant},
            {"role": "tool", "content": [approval_response(response_id, True)]},
        ]
        with pytest.raises(HarnessError) as caught:
            await agent.stream(session=session, messages=messages)
        assert session.turn_state == "awaiting-approval"
    assert str(caught.value) == message
    assert deploys.runs == []


@pytest.mark.requirement("APPROVAL-023")
async def test_approval_response_with_a_result_in_the_same_message_is_skipped(
    tmp_path: Path,
) -> None:
    deploys = Deploys()
    script = [call("c1"), *resumed_tail("c1")]
    async with opened(ScriptedHarness([script]), tmp_path, **gated(deploys)) as (agent, session):
        await stream_parts(agent, session=session, prompt="go")
        messages = [
            {"role": "user", "content": "go"},
            {
                "role": "assistant",
                "content": [
                    {"type": "tool-approval-request", "approvalId": "old", "toolCallId": "c0"}
                ],
            },
            {
                "role": "tool",
                "content": [
                    {
                        "type": "tool-result",
                        "toolCallId": "c0",
                        "toolName": "deploy",
                        "output": {"type": "json", "value": "done"},
                    },
                    approval_response("old", True),
                ],
            },
        ]
        # No error although tool call 'c0' is unknown: the response is already consumed.
        _, parts = await stream_parts(agent, session=session, messages=messages)
        assert session.turn_state == "awaiting-approval"
    assert "tool-approval-response" not in kinds(parts)
    assert deploys.runs == []


@pytest.mark.requirement("SESSION-020")
async def test_continuing_an_idle_session_is_refused(tmp_path: Path) -> None:
    async with opened(ScriptedHarness([[*text_step("hi"), finish()]]), tmp_path) as (
        agent,
        session,
    ):
        await agent.generate(session=session, prompt="go")
        with pytest.raises(HarnessSessionStateError) as caught:
            await agent.continue_stream(
                session=session, tool_approval_continuations=[approval_response("x", True)]
            )
    assert str(caught.value) == "Harness session s1 has no unfinished turn to continue."


# -- 5.4.8 / 5.4.10 replays and unknown continuations -----------------------------------------------


@pytest.mark.requirement("APPROVAL-030")
async def test_consumed_approval_is_never_reused_for_a_new_call(tmp_path: Path) -> None:
    deploys = Deploys()
    script = [
        call("c1"),
        WaitResult("c1"),
        call("c1"),
        echo_of("c1"),
        finish_step("tool-calls"),
        call("c2", env="staging"),
        WaitResult("c2"),
        finish_step(),
        finish(),
    ]
    async with opened(ScriptedHarness([script]), tmp_path, **gated(deploys)) as (agent, session):
        _, first = await stream_parts(agent, session=session, prompt="go")
        (first_id,) = approval_ids(first)
        _, parts = await continue_parts(
            agent, session=session, tool_approval_continuations=[approval_response(first_id, True)]
        )
        assert session.turn_state == "awaiting-approval"
    assert deploys.runs == [{"env": "prod"}]
    (second_id,) = approval_ids(parts)
    assert second_id != first_id
    assert kinds(parts) == [
        "start",
        "tool-approval-response",
        "tool-result",
        "start-step",
        "tool-call",
        "tool-approval-request",
        "finish-step",
        "finish",
    ]
    assert only(parts, "tool-call")[0].tool_call_id == "c2"


@pytest.mark.requirement("APPROVAL-032")
async def test_unmatched_approval_continuation_is_ignored(tmp_path: Path) -> None:
    deploys = Deploys()
    script = [call("c1"), *resumed_tail("c1")]
    async with opened(ScriptedHarness([script]), tmp_path, **gated(deploys)) as (agent, session):
        await stream_parts(agent, session=session, prompt="go")
        _, parts = await continue_parts(
            agent, session=session, tool_approval_continuations=[approval_response("nope", True)]
        )
        assert session.turn_state == "awaiting-approval"
        harness = scripted(agent)
    assert "tool-approval-response" not in kinds(parts)
    assert deploys.runs == []
    assert harness.recorder.results == []


# -- 5.3.4 step batching ---------------------------------------------------------------------------------


@pytest.mark.requirement("APPROVAL-017", "APPROVAL-025")
async def test_batched_step_registers_every_request_before_pausing(tmp_path: Path) -> None:
    deploys = Deploys()
    script = [
        call("c1", stepToolCallCount=2),
        call("c2", env="dev"),
        WaitResult("c1"),
        WaitResult("c2"),
        finish_step(),
        *text_step("both"),
        finish(),
    ]
    async with opened(ScriptedHarness([script]), tmp_path, **gated(deploys)) as (agent, session):
        result, parts = await stream_parts(agent, session=session, prompt="go")
        (step,) = await result.steps
        first_id, second_id = approval_ids(parts)
        # Answer in reverse order: settlement follows registration order.
        _, resumed = await continue_parts(
            agent,
            session=session,
            tool_approval_continuations=[
                approval_response(second_id, True),
                approval_response(first_id, True),
            ],
        )
    assert kinds(parts) == [
        "start",
        "start-step",
        "tool-call",
        "tool-approval-request",
        "tool-call",
        "tool-approval-request",
        "finish-step",
        "finish",
    ]
    assert [p.type for p in step.content] == [
        "tool-call",
        "tool-approval-request",
        "tool-call",
        "tool-approval-request",
    ]
    assert [p.approval_id for p in only(resumed, "tool-approval-response")] == [first_id, second_id]
    assert deploys.runs == [{"env": "prod"}, {"env": "dev"}]


@pytest.mark.requirement("APPROVAL-017")
async def test_batched_step_runs_executable_tools_while_collecting(tmp_path: Path) -> None:
    deploys = Deploys()
    echo = tool(description="echo", input_schema=OBJECT, execute=lambda v, o: "pong")
    script = [
        call("c1", stepToolCallCount=2),
        tool_call("c2", "ping", "{}"),
        WaitResult("c1"),
        finish_step(),
        finish(),
    ]
    async with opened(
        ScriptedHarness([script]), tmp_path, **gated(deploys, tools={"ping": echo})
    ) as (agent, session):
        _, parts = await stream_parts(agent, session=session, prompt="go")
        assert session.turn_state == "awaiting-approval"
        harness = scripted(agent)
    assert harness.recorder.results == [{"tool_call_id": "c2", "output": "pong"}]
    assert kinds(parts)[-2:] == ["finish-step", "finish"]
    assert kinds(parts).count("tool-call") == 2


@pytest.mark.requirement("APPROVAL-018")
async def test_builtin_request_pauses_a_batch_immediately(tmp_path: Path) -> None:
    deploys = Deploys()
    script = [
        call("c1", stepToolCallCount=3),
        tool_call("b1", "bash", '{"command": "ls"}', provider_executed=True),
        {"type": "tool-approval-request", "approvalId": "ap1", "toolCallId": "b1"},
        WaitApproval("ap1"),
        call("c3", env="dev"),
        finish_step(),
        finish(),
    ]
    harness = approving_harness(script)
    async with opened(harness, tmp_path, **gated(deploys)) as (agent, session):
        _, parts = await stream_parts(agent, session=session, prompt="go")
        state = await suspend(session)
    assert kinds(parts).count("tool-call") == 2
    assert kinds(parts)[-2:] == ["finish-step", "finish"]
    kinds_of_records = sorted(r.kind for r in state.pending_tool_approvals or [])
    assert kinds_of_records == ["builtin", "custom"]


@pytest.mark.requirement("APPROVAL-019")
async def test_batch_cut_short_by_finish_step_pauses_at_that_boundary(tmp_path: Path) -> None:
    deploys = Deploys()
    script = [
        call("c1", stepToolCallCount=2),
        finish_step("tool-calls"),
        WaitResult("c1"),
        finish(),
    ]
    async with opened(ScriptedHarness([script]), tmp_path, **gated(deploys)) as (agent, session):
        result, parts = await stream_parts(agent, session=session, prompt="go")
        steps = await result.steps
        assert session.turn_state == "awaiting-approval"
    assert kinds(parts) == [
        "start",
        "start-step",
        "tool-call",
        "tool-approval-request",
        "finish-step",
        "finish",
    ]
    assert len(steps) == 1
    assert steps[0].raw_finish_reason == "tool-calls", "closed by the adapter's own finish-step"
    assert of_type(ConsumerFinishPart, parts[-1]).finish_reason == "tool-calls"


@pytest.mark.requirement("APPROVAL-038")
async def test_partial_answer_settles_it_and_pauses_again(tmp_path: Path) -> None:
    deploys = Deploys()
    script = [
        call("c1", stepToolCallCount=2),
        call("c2", env="dev"),
        WaitResult("c1"),
        WaitResult("c2"),
        finish_step(),
        *text_step("all done"),
        finish(),
    ]
    async with opened(ScriptedHarness([script]), tmp_path, **gated(deploys)) as (agent, session):
        _, parts = await stream_parts(agent, session=session, prompt="go")
        first_id, second_id = approval_ids(parts)
        result, partial = await continue_parts(
            agent, session=session, tool_approval_continuations=[approval_response(second_id, True)]
        )
        assert session.turn_state == "awaiting-approval"
        assert await result.steps == []
        assert deploys.runs == [{"env": "dev"}]
        final, rest = await continue_parts(
            agent, session=session, tool_approval_continuations=[approval_response(first_id, False)]
        )
        assert await final.text == "all done"
        assert session.turn_state == "idle"
    assert kinds(partial) == ["start", "tool-approval-response", "tool-result", "finish"]
    assert of_type(ConsumerFinishPart, partial[-1]).finish_reason == "tool-calls"
    assert kinds(rest)[:2] == ["start", "tool-approval-response"]
    assert deploys.runs == [{"env": "dev"}]


# -- §8 / HOSTTOOL-004 on the approved-continuation path -----------------------------------------------


@pytest.mark.requirement("CONTEXT-004", "CONTEXT-006", "CONTEXT-007")
async def test_approved_tool_with_failing_context_is_not_run(tmp_path: Path) -> None:
    deploys = Deploys()
    gated_deploy = tool(
        description="deploy",
        input_schema=OBJECT,
        execute=lambda value, options: deploys.runs.append(value),
        context_schema={"type": "object", "required": ["token"]},
    )
    script = [call("c1"), *resumed_tail("c1")]
    async with opened(
        ScriptedHarness([script]),
        tmp_path,
        tools={"deploy": gated_deploy},
        tool_approval={"deploy": "user-approval"},
        tools_context={"deploy": {"secret": "TOPSECRET"}},
    ) as (agent, session):
        _, first = await stream_parts(agent, session=session, prompt="go")
        (approval_id,) = approval_ids(first)
        _, parts = await continue_parts(
            agent,
            session=session,
            tool_approval_continuations=[approval_response(approval_id, True)],
        )
        harness = scripted(agent)
    assert deploys.runs == []
    assert harness.recorder.results == [
        {
            "tool_call_id": "c1",
            "output": {"error": "Tool context validation failed."},
            "is_error": True,
        }
    ]
    (error_part,) = only(parts, "tool-error")
    assert isinstance(error_part.error, ToolContextValidationError)
    assert error_part.error.tool_name == "deploy"


@pytest.mark.requirement("HOSTTOOL-004")
async def test_approved_call_with_schema_invalid_input_is_not_run(tmp_path: Path) -> None:
    runs: list[Any] = []
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    numeric = tool(description="n", input_schema=schema, execute=lambda v, o: runs.append(v))
    script = [tool_call("c1", "num", '{"n": "two"}'), WaitResult("c1"), finish_step(), finish()]
    async with opened(
        ScriptedHarness([script]),
        tmp_path,
        tools={"num": numeric},
        tool_approval={"num": "user-approval"},
    ) as (agent, session):
        _, parts = await stream_parts(agent, session=session, prompt="go")
        for approval_id in approval_ids(parts):  # asking first is acceptable; running is not
            await continue_parts(
                agent,
                session=session,
                tool_approval_continuations=[approval_response(approval_id, True)],
            )
        harness = scripted(agent)
    assert runs == []
    ((record),) = harness.recorder.results
    assert record["is_error"] is True
