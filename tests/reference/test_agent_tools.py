"""Tool surfaces of the reference agent (notes §3, §4, 5.1-5.2, §6, §8).

Merging, filtering, permission mode, host-tool approval statuses, host execution,
tool context, client-side tools and the ``askUserQuestions`` question tool.

One idea: the tool surface the agent gives a turn and how each kind of tool call is
answered; each surface has its own scripted turns, hence the length.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from pydantic import BaseModel

from harness_testkit.reference import ToolExecutionOptions, tool
from harness_testkit.spec import (
    ConsumerFinishPart,
    HarnessCapabilityUnsupportedError,
    HarnessUsageError,
    NoSuchToolError,
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
    INACTIVE,
    OBJECT,
    builtin,
    client_tool,
    continue_parts,
    echo_tool,
    kinds,
    make_agent,
    only,
    opened,
    scripted,
    stream_parts,
    wire,
)

pytestmark = pytest.mark.anyio

RESERVED = "HarnessAgent tool name 'askUserQuestions' is reserved for harness question requests."
BOTH_LISTS = "HarnessAgent: pass either `activeTools` or `inactiveTools`, not both."
NO_FILTERING = "Harness 'mock' does not support built-in tool filtering controls."
NO_APPROVALS = (
    "Harness 'mock' does not support built-in tool approval requests; "
    "use permissionMode: 'allow-all'."
)
CONTEXT_FAILED = {"error": "Tool context validation failed."}


def three_builtins() -> dict[str, Any]:
    return {"read": builtin(), "bash": builtin(BASH_SCHEMA), "grep": builtin()}


def denied(name: str) -> dict[str, Any]:
    return {"type": "execution-denied", "reason": INACTIVE.format(name)}


class Calls:
    """Records host executions: ``(input, options)`` per call."""

    def __init__(self) -> None:
        self.seen: list[tuple[Any, ToolExecutionOptions]] = []

    def tool(self, result: Any = "ok", **settings: Any) -> Any:
        def execute(value: Any, options: ToolExecutionOptions) -> Any:
            self.seen.append((value, options))
            return result

        settings.setdefault("input_schema", OBJECT)
        return tool(description="recorded", execute=execute, **settings)


# -- §3 merging ------------------------------------------------------------------------------------


@pytest.mark.requirement("MERGE-003")
def test_agent_tools_is_empty_without_builtins_or_user_tools(tmp_path: Path) -> None:
    assert make_agent(ScriptedHarness(), tmp_path).tools == {}


@pytest.mark.requirement("MERGE-001", "MERGE-013")
def test_agent_tools_merges_builtins_and_user_tools_user_winning(tmp_path: Path) -> None:
    read, bash = builtin(), builtin(BASH_SCHEMA)
    mine, echo = echo_tool(), echo_tool()
    harness = ScriptedHarness(builtin_tools={"read": read, "bash": bash})
    agent = make_agent(harness, tmp_path, tools={"bash": mine, "echo": echo})
    assert list(agent.tools) == ["read", "bash", "echo"]
    assert agent.tools["read"] is read
    assert agent.tools["bash"] is mine
    assert agent.tools["echo"] is echo


@pytest.mark.requirement("MERGE-010", "MERGE-013", "MERGE-008")
async def test_user_tool_shadowing_a_builtin_is_sent_as_a_spec_and_runs_on_the_host(
    tmp_path: Path,
) -> None:
    calls = Calls()
    script = [
        tool_call("c1", "bash", '{"command": "ls"}'),
        tool_call("c2", "bash", '{"command": "pwd"}', provider_executed=True),
        finish_step(),
        finish(),
    ]
    harness = ScriptedHarness([script], builtin_tools={"bash": builtin(BASH_SCHEMA)})
    async with opened(harness, tmp_path, tools={"bash": calls.tool()}) as (agent, session):
        await agent.generate(session=session, prompt="go")
    assert [spec.name for spec in harness.recorder.prompts[0].tools] == ["bash"]
    assert [value for value, _ in calls.seen] == [{"command": "ls"}]
    assert harness.recorder.results == [{"tool_call_id": "c1", "output": "ok"}]


@pytest.mark.requirement("MERGE-011")
def test_reserved_question_tool_name_is_rejected_at_construction(tmp_path: Path) -> None:
    harness = ScriptedHarness(builtin_tools={"askUserQuestions": builtin()})
    with pytest.raises(HarnessUsageError) as caught:
        make_agent(harness, tmp_path, tools={"askUserQuestions": client_tool()})
    assert str(caught.value) == RESERVED


@pytest.mark.requirement("MERGE-011")
def test_question_tool_name_is_free_when_the_harness_does_not_declare_it(tmp_path: Path) -> None:
    agent = make_agent(ScriptedHarness(), tmp_path, tools={"askUserQuestions": client_tool()})
    assert "askUserQuestions" in agent.tools


@pytest.mark.requirement("MERGE-011", "ERROR-011")
def test_reserved_name_check_runs_before_filtering_and_permission_checks(tmp_path: Path) -> None:
    harness = ScriptedHarness(builtin_tools={"askUserQuestions": builtin(), "bash": builtin()})
    with pytest.raises(HarnessUsageError) as caught:
        make_agent(
            harness,
            tmp_path,
            tools={"askUserQuestions": client_tool()},
            active_tools=["nope"],
            permission_mode="allow-reads",
        )
    assert str(caught.value) == RESERVED


@pytest.mark.requirement("MERGE-012", "SESSION-026")
async def test_reserved_name_from_prepare_call_rejects_the_call_directly(tmp_path: Path) -> None:
    harness = ScriptedHarness(
        [[*text_step("x"), finish()]], builtin_tools={"askUserQuestions": builtin()}
    )

    def prepare(call: dict[str, Any]) -> dict[str, Any]:
        return {**call, "tools": {"askUserQuestions": client_tool()}}

    async with opened(harness, tmp_path, prepare_call=prepare) as (agent, session):
        with pytest.raises(HarnessUsageError) as caught:
            await agent.stream(session=session, prompt="go")
        assert session.turn_state == "idle"
    assert str(caught.value) == RESERVED
    assert harness.recorder.prompts == []


# -- §4 filtering ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("active", "inactive"), [([], []), (["echo"], ["bash"])], ids=["both-empty", "both-set"]
)
@pytest.mark.requirement("FILTER-001")
def test_active_and_inactive_tools_are_exclusive(
    tmp_path: Path, active: list[str], inactive: list[str]
) -> None:
    harness = ScriptedHarness(builtin_tools={"bash": builtin()})
    with pytest.raises(HarnessUsageError) as caught:
        make_agent(
            harness,
            tmp_path,
            tools={"echo": echo_tool()},
            active_tools=active,
            inactive_tools=inactive,
        )
    assert str(caught.value) == BOTH_LISTS


@pytest.mark.parametrize("setting", ["active_tools", "inactive_tools"])
@pytest.mark.requirement("FILTER-002", "ERROR-007")
def test_unknown_filter_name_raises_no_such_tool(tmp_path: Path, setting: str) -> None:
    harness = ScriptedHarness(
        builtin_tools={"bash": builtin()}, supports_builtin_tool_filtering=True
    )
    with pytest.raises(NoSuchToolError) as caught:
        make_agent(
            harness, tmp_path, tools={"echo": echo_tool()}, **{setting: ["echo", "ghost", "nope"]}
        )
    assert caught.value.tool_name == "ghost"
    assert caught.value.available_tools == ["bash", "echo"]


@pytest.mark.requirement("FILTER-002")
def test_duplicate_filter_names_are_accepted(tmp_path: Path) -> None:
    agent = make_agent(
        ScriptedHarness(), tmp_path, tools={"echo": echo_tool()}, active_tools=["echo", "echo"]
    )
    assert list(agent.tools) == ["echo"]


@pytest.mark.requirement("FILTER-003")
async def test_filter_names_are_checked_again_per_turn(tmp_path: Path) -> None:
    def prepare(call: dict[str, Any]) -> dict[str, Any]:
        return {**call, "tools": {"other": echo_tool()}}

    async with opened(
        ScriptedHarness(),
        tmp_path,
        tools={"echo": echo_tool()},
        active_tools=["echo"],
        prepare_call=prepare,
    ) as (agent, session):
        with pytest.raises(NoSuchToolError) as caught:
            await agent.stream(session=session, prompt="go")
    assert caught.value.tool_name == "echo"


@pytest.mark.parametrize(
    ("filters", "names"),
    [
        ({}, ["alpha", "beta", "gamma"]),
        ({"active_tools": ["gamma", "alpha"]}, ["alpha", "gamma"]),
        ({"inactive_tools": ["beta"]}, ["alpha", "gamma"]),
        ({"active_tools": []}, []),
        ({"inactive_tools": []}, ["alpha", "beta", "gamma"]),
    ],
    ids=["none", "active", "inactive", "active-empty", "inactive-empty"],
)
@pytest.mark.requirement("FILTER-004", "FILTER-005", "TOOLSPEC-003", "TOOLSPEC-004")
async def test_only_active_user_tools_are_sent_as_specs_in_key_order(
    tmp_path: Path, filters: dict[str, Any], names: list[str]
) -> None:
    tools = {name: echo_tool(description=f"{name} tool") for name in ("alpha", "beta", "gamma")}
    harness = ScriptedHarness(
        [[finish()]], builtin_tools={"bash": builtin()}, supports_builtin_tool_filtering=True
    )
    async with opened(harness, tmp_path, tools=tools, **filters) as (agent, session):
        await agent.generate(session=session, prompt="go")
    specs = [spec.to_wire() for spec in harness.recorder.prompts[0].tools]
    assert specs == [
        {"name": name, "description": f"{name} tool", "inputSchema": OBJECT} for name in names
    ]


@pytest.mark.requirement("TOOLSPEC-004")
async def test_spec_without_description_or_convertible_schema_is_sent_by_name(
    tmp_path: Path,
) -> None:
    bare = tool(input_schema=42, execute=lambda v, o: None)  # type: ignore[arg-type]  # deliberately no schema
    harness = ScriptedHarness([[finish()]])
    async with opened(harness, tmp_path, tools={"bare": bare}) as (agent, session):
        await agent.generate(session=session, prompt="go")
    (spec,) = harness.recorder.prompts[0].tools
    assert (spec.name, spec.description, spec.input_schema) == ("bare", None, None)


@pytest.mark.parametrize(
    "filters", [{"active_tools": ["echo"]}, {"inactive_tools": ["hidden"]}], ids=["allow", "deny"]
)
@pytest.mark.requirement("FILTER-005", "FILTER-015", "FILTER-016", "MERGE-006", "CONTEXT-003")
async def test_call_to_an_inactive_host_tool_is_denied_with_the_exact_reason(
    tmp_path: Path, filters: dict[str, Any]
) -> None:
    hidden = Calls()
    script = [tool_call("c1", "hidden", '{"a": 1}'), WaitResult("c1"), finish_step(), finish()]
    async with opened(
        ScriptedHarness([script]),
        tmp_path,
        tools={"echo": echo_tool(), "hidden": hidden.tool()},
        **filters,
    ) as (agent, session):
        _, parts = await stream_parts(agent, session=session, prompt="go")
        harness = scripted(agent)
    assert hidden.seen == []
    assert harness.recorder.results == [{"tool_call_id": "c1", "output": denied("hidden")}]
    (call,) = only(parts, "tool-call")
    assert call.invalid is None, "inactive tools still type their calls"
    assert kinds(parts) == ["start", "start-step", "tool-call", "finish-step", "finish"]


@pytest.mark.parametrize(
    ("name", "builtins"),
    [("ghost", {}), ("bash", {"bash": builtin(BASH_SCHEMA)})],
    ids=["declared-nowhere", "builtin-without-provider-executed"],
)
@pytest.mark.requirement("FILTER-015", "FILTER-017", "MERGE-008")
async def test_host_dispatched_call_without_an_active_tool_is_denied(
    tmp_path: Path, name: str, builtins: dict[str, Any]
) -> None:
    script = [tool_call("c1", name, '{"command": "ls"}'), WaitResult("c1"), finish_step(), finish()]
    harness = ScriptedHarness([script], builtin_tools=builtins)
    async with opened(harness, tmp_path) as (agent, session):
        _, parts = await stream_parts(agent, session=session, prompt="go")
    assert harness.recorder.results == [{"tool_call_id": "c1", "output": denied(name)}]
    assert kinds(parts).count("tool-call") == 1


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"active_tools": ["grep", "read"]}, {"mode": "allow", "toolNames": ["read", "grep"]}),
        ({"active_tools": []}, {"mode": "allow", "toolNames": []}),
        ({"inactive_tools": ["grep", "bash"]}, {"mode": "deny", "toolNames": ["bash", "grep"]}),
        ({"active_tools": ["grep", "bash", "read"]}, None),
        ({"inactive_tools": ["echo"]}, None),
        ({}, None),
    ],
    ids=["allow", "allow-none", "deny", "all-listed", "deny-no-builtin", "no-filter"],
)
@pytest.mark.requirement("FILTER-007", "FILTER-008", "ADAPTER-013", "APPROVAL-001")
async def test_builtin_filter_is_passed_to_do_start_in_builtin_key_order(
    tmp_path: Path, filters: dict[str, Any], expected: dict[str, Any] | None
) -> None:
    harness = ScriptedHarness(builtin_tools=three_builtins(), supports_builtin_tool_approvals=True)
    async with opened(harness, tmp_path, tools={"echo": echo_tool()}, **filters):
        pass
    (start,) = harness.recorder.starts
    got = start.builtin_tool_filtering
    assert (got.to_wire() if got is not None else None) == expected
    assert start.permission_mode == "allow-all"


@pytest.mark.requirement("FILTER-009", "ERROR-006")
def test_builtin_filter_needs_filtering_or_approval_support(tmp_path: Path) -> None:
    harness = ScriptedHarness(builtin_tools={"bash": builtin()})
    with pytest.raises(HarnessCapabilityUnsupportedError) as caught:
        make_agent(harness, tmp_path, active_tools=[])
    assert str(caught.value) == NO_FILTERING
    assert caught.value.harness_id == "mock"


@pytest.mark.parametrize(
    "support",
    [{"supports_builtin_tool_filtering": True}, {"supports_builtin_tool_approvals": True}],
    ids=["native-filtering", "approvals"],
)
@pytest.mark.requirement("FILTER-009")
def test_builtin_filter_is_accepted_with_either_capability(
    tmp_path: Path, support: dict[str, Any]
) -> None:
    make_agent(
        ScriptedHarness(builtin_tools={"bash": builtin()}, **support), tmp_path, active_tools=[]
    )


@pytest.mark.parametrize(
    ("filters", "native"),
    [
        ({"active_tools": ["read"]}, False),
        ({"inactive_tools": ["bash"]}, False),
        ({"inactive_tools": ["bash"]}, True),
    ],
    ids=["allow-mode", "deny-mode", "native-filtering-adapter"],
)
@pytest.mark.requirement("FILTER-012", "FILTER-013", "TRANSLATE-008")
async def test_approval_request_for_a_filtered_builtin_is_denied_silently(
    tmp_path: Path, filters: dict[str, Any], native: bool
) -> None:
    script = [
        tool_call("b1", "bash", '{"command": "rm -rf x"}', provider_executed=True),
        {"type": "tool-approval-request", "approvalId": "ap1", "toolCallId": "b1"},
        WaitApproval("ap1"),
        *text_step("carried on"),
        finish(),
    ]
    harness = ScriptedHarness(
        [script],
        builtin_tools=three_builtins(),
        supports_builtin_tool_approvals=True,
        supports_builtin_tool_filtering=native,
    )
    async with opened(harness, tmp_path, **filters) as (agent, session):
        result, parts = await stream_parts(agent, session=session, prompt="go")
        assert session.turn_state == "idle"
        assert await result.finish_reason == "stop"
    assert harness.recorder.approvals == [
        {"approval_id": "ap1", "approved": False, "reason": INACTIVE.format("bash")}
    ]
    assert not {"tool-approval-request", "tool-approval-response"} & set(kinds(parts))


@pytest.mark.requirement("FILTER-014")
async def test_approval_request_for_an_undeclared_runtime_tool_is_denied_in_allow_mode(
    tmp_path: Path,
) -> None:
    script = [
        tool_call("m1", "mcp__deploy", "{}", provider_executed=True, dynamic=True),
        {"type": "tool-approval-request", "approvalId": "ap1", "toolCallId": "m1"},
        WaitApproval("ap1"),
        finish_step(),
        finish(),
    ]
    harness = ScriptedHarness(
        [script], builtin_tools=three_builtins(), supports_builtin_tool_approvals=True
    )
    async with opened(harness, tmp_path, active_tools=["read"]) as (agent, session):
        await agent.generate(session=session, prompt="go")
    assert harness.recorder.approvals == [
        {"approval_id": "ap1", "approved": False, "reason": INACTIVE.format("mcp__deploy")}
    ]


# -- 5.1 permission mode -----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["allow-reads", "allow-edits"])
@pytest.mark.requirement("APPROVAL-006", "ERROR-006")
def test_permission_mode_needs_builtin_approval_support(tmp_path: Path, mode: str) -> None:
    harness = ScriptedHarness(builtin_tools={"bash": builtin()})
    with pytest.raises(HarnessCapabilityUnsupportedError) as caught:
        make_agent(harness, tmp_path, permission_mode=mode)
    assert str(caught.value) == NO_APPROVALS
    assert caught.value.harness_id == "mock"


@pytest.mark.parametrize(
    ("builtins", "support"),
    [({}, False), ({"bash": builtin()}, True)],
    ids=["no-builtins", "approval-capable"],
)
@pytest.mark.requirement("APPROVAL-007", "APPROVAL-001", "ADAPTER-012")
async def test_permission_mode_is_accepted_and_passed_to_do_start(
    tmp_path: Path, builtins: dict[str, Any], support: bool
) -> None:
    harness = ScriptedHarness(builtin_tools=builtins, supports_builtin_tool_approvals=support)
    async with opened(harness, tmp_path, permission_mode="allow-reads"):
        pass
    assert harness.recorder.starts[0].permission_mode == "allow-reads"


@pytest.mark.requirement("APPROVAL-007", "ERROR-011")
def test_filtering_capability_is_checked_before_approval_capability(tmp_path: Path) -> None:
    harness = ScriptedHarness(builtin_tools={"bash": builtin()})
    with pytest.raises(HarnessCapabilityUnsupportedError) as caught:
        make_agent(harness, tmp_path, active_tools=[], permission_mode="allow-edits")
    assert str(caught.value) == NO_FILTERING


# -- 5.2 tool_approval statuses --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "reason"),
    [("denied", None), ({"type": "denied", "reason": "Not on Fridays."}, "Not on Fridays.")],
    ids=["string", "object-with-reason"],
)
@pytest.mark.requirement(
    "APPROVAL-010", "APPROVAL-008", "APPROVAL-009", "CONTEXT-003", "RESULT-006"
)
async def test_denied_status_emits_automatic_request_and_response_and_denies(
    tmp_path: Path, status: Any, reason: str | None
) -> None:
    calls = Calls()
    script = [
        tool_call("c1", "deploy", '{"env": "prod"}'),
        WaitResult("c1"),
        *text_step("ok"),
        finish(),
    ]
    async with opened(
        ScriptedHarness([script]),
        tmp_path,
        tools={"deploy": calls.tool()},
        tool_approval={"deploy": status},
    ) as (agent, session):
        result, parts = await stream_parts(agent, session=session, prompt="go")
        steps = await result.steps
        harness = scripted(agent)
    assert calls.seen == []
    expected_output: dict[str, Any] = {"type": "execution-denied"}
    if reason is not None:
        expected_output["reason"] = reason
    assert harness.recorder.results == [{"tool_call_id": "c1", "output": expected_output}]
    request, response = (p.to_wire() for p in parts[3:5])
    call = {"type": "tool-call", "toolCallId": "c1", "toolName": "deploy", "input": {"env": "prod"}}
    approval_id = request["approvalId"]
    assert request == {
        "type": "tool-approval-request",
        "approvalId": approval_id,
        "toolCall": call,
        "isAutomatic": True,
    }
    expected_response = {
        "type": "tool-approval-response",
        "approvalId": approval_id,
        "toolCall": call,
        "approved": False,
        "providerExecuted": False,
    }
    if reason is not None:
        expected_response["reason"] = reason
    assert response == expected_response
    assert [p.type for p in steps[0].content] == [
        "tool-call",
        "tool-approval-request",
        "tool-approval-response",
        "text",
    ]
    assert await result.finish_reason == "stop"


@pytest.mark.parametrize(
    "approval",
    [{}, {"act": "not-applicable"}, {"act": "approved"}, {"act": {"type": "approved"}}],
    ids=["no-entry", "not-applicable", "approved", "approved-object"],
)
@pytest.mark.requirement("APPROVAL-008", "APPROVAL-009")
async def test_executable_statuses_run_the_tool(tmp_path: Path, approval: dict[str, Any]) -> None:
    calls = Calls()
    script = [tool_call("c1", "act", "{}"), WaitResult("c1"), finish_step(), finish()]
    async with opened(
        ScriptedHarness([script]),
        tmp_path,
        tools={"act": calls.tool({"done": True})},
        tool_approval=approval,
    ) as (agent, session):
        _, parts = await stream_parts(agent, session=session, prompt="go")
        harness = scripted(agent)
    assert len(calls.seen) == 1
    assert harness.recorder.results == [{"tool_call_id": "c1", "output": {"done": True}}]
    assert "tool-approval-request" not in kinds(parts)


@pytest.mark.requirement("APPROVAL-011")
async def test_approval_status_is_ignored_for_inactive_tools(tmp_path: Path) -> None:
    script = [tool_call("c1", "act", "{}"), WaitResult("c1"), finish_step(), finish()]
    async with opened(
        ScriptedHarness([script]),
        tmp_path,
        tools={"act": echo_tool(), "other": echo_tool()},
        active_tools=["other"],
        tool_approval={"act": "user-approval"},
    ) as (agent, session):
        _, parts = await stream_parts(agent, session=session, prompt="go")
        assert session.turn_state == "idle"
        harness = scripted(agent)
    assert harness.recorder.results == [{"tool_call_id": "c1", "output": denied("act")}]
    assert "tool-approval-request" not in kinds(parts)


# -- 6.1 host execution -----------------------------------------------------------------------------


@pytest.mark.requirement("HOSTTOOL-001", "HOSTTOOL-002")
async def test_host_tools_of_one_step_run_concurrently(tmp_path: Path) -> None:
    started = {"a": anyio.Event(), "b": anyio.Event()}

    def waiting_tool(me: str, other: str) -> Any:
        async def execute(value: Any, options: ToolExecutionOptions) -> Any:
            started[me].set()
            with anyio.fail_after(5):
                await started[other].wait()  # deadlocks if executions are serialized
            return me

        return tool(description=me, input_schema=OBJECT, execute=execute)

    script = [
        tool_call("c1", "a", "{}"),
        tool_call("c2", "b", "{}"),
        WaitResult("c1"),
        WaitResult("c2"),
        finish_step(),
        finish(),
    ]
    tools = {"a": waiting_tool("a", "b"), "b": waiting_tool("b", "a")}
    async with opened(ScriptedHarness([script]), tmp_path, tools=tools) as (agent, session):
        result = await agent.generate(session=session, prompt="go")
        harness = scripted(agent)
    assert result.finish_reason == "stop"
    assert sorted(r["output"] for r in harness.recorder.results) == ["a", "b"]


@pytest.mark.requirement("HOSTTOOL-003", "STREAM-045", "SANDBOX-021")
async def test_host_tool_gets_raw_unstripped_input_and_execution_options(tmp_path: Path) -> None:
    calls = Calls()
    async with opened(ScriptedHarness(), tmp_path, tools={"edit": calls.tool()}) as (
        agent,
        session,
    ):
        wd = session.session_work_dir
        raw = json.dumps({"file_path": f"{wd}/src/a.py", "line": 3})
        scripted(agent).turns.append(
            [tool_call("c7", "edit", raw), WaitResult("c7"), finish_step(), finish()]
        )
        _, parts = await stream_parts(agent, session=session, prompt="go")
        full_sandbox = session.sandbox_session
    ((value, options),) = calls.seen
    assert value == {"file_path": f"{wd}/src/a.py", "line": 3}
    assert only(parts, "tool-call")[0].input == {"file_path": "src/a.py", "line": 3}
    assert options.tool_call_id == "c7"
    assert isinstance(options.abort, anyio.Event)
    assert not options.abort.is_set()
    assert options.messages == []
    assert options.context is None
    assert options.sandbox is not full_sandbox
    assert not hasattr(options.sandbox, "destroy")


def _sync_plain(value: Any, options: Any) -> Any:
    return {"n": 3}


async def _async_plain(value: Any, options: Any) -> Any:
    await anyio.lowlevel.checkpoint()
    return {"n": 3}


def _sync_generator(value: Any, options: Any) -> Any:
    yield {"n": 1}
    yield {"n": 2}
    yield {"n": 3}


async def _async_generator(value: Any, options: Any) -> Any:
    for n in (1, 2, 3):
        await anyio.lowlevel.checkpoint()
        yield {"n": n}


@pytest.mark.parametrize(
    ("execute", "preliminary"),
    [(_sync_plain, 0), (_async_plain, 0), (_sync_generator, 3), (_async_generator, 3)],
    ids=["sync", "async", "generator", "async-generator"],
)
@pytest.mark.requirement("HOSTTOOL-005", "HOSTTOOL-008", "ADAPTER-045")
async def test_execute_forms_submit_the_final_value_and_hold_preliminaries(
    tmp_path: Path, execute: Any, preliminary: int
) -> None:
    script = [
        tool_call("c1", "count", "{}"),
        WaitResult("c1"),
        {"type": "text-delta", "id": "t", "delta": "counted"},
        finish_step(),
        finish(),
    ]
    counter = tool(description="count", input_schema=OBJECT, execute=execute)
    async with opened(ScriptedHarness([script]), tmp_path, tools={"count": counter}) as (
        agent,
        session,
    ):
        _, parts = await stream_parts(agent, session=session, prompt="go")
        harness = scripted(agent)
    assert harness.recorder.results == [{"tool_call_id": "c1", "output": {"n": 3}}]
    results = only(parts, "tool-result")
    assert [p.to_wire() for p in results] == [
        {
            "type": "tool-result",
            "toolCallId": "c1",
            "toolName": "count",
            "output": {"n": n},
            "preliminary": True,
        }
        for n in range(4 - preliminary, 4)
    ][:preliminary]
    expected = ["start", "start-step", "tool-call", "text-delta"]
    expected += ["tool-result"] * preliminary + ["finish-step", "finish"]
    assert kinds(parts) == expected


@pytest.mark.requirement("STREAM-044")
async def test_preliminary_results_are_work_dir_stripped(tmp_path: Path) -> None:
    where: dict[str, str] = {}

    def execute(value: Any, options: Any) -> Any:
        yield {"path": f"{where['wd']}/src/foo.ts"}

    finder = tool(description="find", input_schema=OBJECT, execute=execute)
    script = [tool_call("c1", "find", "{}"), WaitResult("c1"), finish_step(), finish()]
    harness = ScriptedHarness([script])
    async with opened(harness, tmp_path, tools={"find": finder}) as (agent, session):
        where["wd"] = session.session_work_dir
        _, parts = await stream_parts(agent, session=session, prompt="go")
    assert only(parts, "tool-result")[0].output == {"path": "src/foo.ts"}
    assert harness.recorder.results[0]["output"] == {"path": f"{where['wd']}/src/foo.ts"}


@pytest.mark.requirement("HOSTTOOL-009")
async def test_preliminary_results_are_not_tool_results_aggregates(tmp_path: Path) -> None:
    script = [
        tool_call("c1", "count", "{}"),
        WaitResult("c1"),
        {"type": "tool-result", "toolCallId": "c1", "toolName": "count", "result": {"n": 2}},
        finish_step(),
        finish(),
    ]
    counter = tool(description="count", input_schema=OBJECT, execute=_sync_generator)
    async with opened(ScriptedHarness([script]), tmp_path, tools={"count": counter}) as (
        agent,
        session,
    ):
        result = await agent.generate(session=session, prompt="go")
    assert [r.output for r in result.tool_results] == [{"n": 2}]
    assert [r.output for r in result.steps[0].tool_results] == [{"n": 2}]


@pytest.mark.requirement("HOSTTOOL-009")
async def test_preliminary_results_are_not_response_messages(tmp_path: Path) -> None:
    script = [tool_call("c1", "count", "{}"), WaitResult("c1"), finish_step(), finish()]
    counter = tool(description="count", input_schema=OBJECT, execute=_sync_generator)
    async with opened(ScriptedHarness([script]), tmp_path, tools={"count": counter}) as (
        agent,
        session,
    ):
        result = await agent.generate(session=session, prompt="go")
    assert all(m["role"] == "assistant" for m in result.response_messages)


@pytest.mark.requirement("HOSTTOOL-010", "CONTEXT-003")
async def test_failing_tool_submits_name_and_message_as_error(tmp_path: Path) -> None:
    def execute(value: Any, options: Any) -> Any:
        raise ValueError("weather unavailable")

    script = [tool_call("c1", "weather", "{}"), WaitResult("c1"), *text_step("sorry"), finish()]
    weather = tool(description="w", input_schema=OBJECT, execute=execute)
    async with opened(ScriptedHarness([script]), tmp_path, tools={"weather": weather}) as (
        agent,
        session,
    ):
        result = await agent.generate(session=session, prompt="go")
        harness = scripted(agent)
    assert harness.recorder.results == [
        {
            "tool_call_id": "c1",
            "output": {"error": "ValueError: weather unavailable"},
            "is_error": True,
        }
    ]
    assert result.text == "sorry"


class _FirstSuccessSubmissionFails(list[dict[str, Any]]):
    """A recorder list whose first non-error submission makes the adapter raise."""

    failed = False

    def append(self, item: dict[str, Any]) -> None:
        super().append(item)
        if not item.get("is_error") and not self.failed:
            self.failed = True
            raise RuntimeError("link down")


@pytest.mark.requirement("HOSTTOOL-011")
async def test_failed_submission_is_retried_as_an_error_submission(tmp_path: Path) -> None:
    harness = ScriptedHarness(
        [[tool_call("c1", "echo", '{"v": 1}'), WaitResult("c1"), *text_step("fine"), finish()]]
    )
    harness.recorder.results = _FirstSuccessSubmissionFails()
    async with opened(harness, tmp_path, tools={"echo": echo_tool()}) as (agent, session):
        result = await agent.generate(session=session, prompt="go")
    assert list(harness.recorder.results) == [
        {"tool_call_id": "c1", "output": {"echoed": {"v": 1}}},
        {"tool_call_id": "c1", "output": {"error": "RuntimeError: link down"}, "is_error": True},
    ]
    assert result.text == "fine"


@pytest.mark.requirement("HOSTTOOL-011", "HOSTTOOL-002")
async def test_turn_fails_only_after_all_concurrent_tools_settle(tmp_path: Path) -> None:
    slow_done = anyio.Event()

    async def slow(value: Any, options: Any) -> Any:
        await anyio.sleep(0.2)
        slow_done.set()
        return "slow"

    tools = {
        "fast": tool(description="fast", input_schema=OBJECT, execute=lambda v, o: "fast"),
        "slow": tool(description="slow", input_schema=OBJECT, execute=slow),
    }
    script = [tool_call("c1", "fast", "{}"), tool_call("c2", "slow", "{}"), finish_step(), finish()]
    harness = ScriptedHarness([script])
    harness.fail_submissions = True
    async with opened(harness, tmp_path, tools=tools) as (agent, session):
        result = await agent.stream(session=session, prompt="go")
        seen: list[str] = []
        async for part in result.full_stream:
            seen.append(part.type)
            if part.type == "error":
                assert slow_done.is_set()
                assert str(part.error) == "submission rejected"
        assert session.turn_state == "idle"
    assert seen[-1] == "error"
    assert "finish" not in seen
    submitted = [(r["tool_call_id"], r.get("is_error", False)) for r in harness.recorder.results]
    assert sorted(submitted) == [("c1", False), ("c1", True), ("c2", False), ("c2", True)]
    with pytest.raises(RuntimeError, match="submission rejected"):
        await result.finish_reason


@pytest.mark.requirement("HOSTTOOL-004")
async def test_host_call_with_schema_invalid_input_is_not_executed(tmp_path: Path) -> None:
    calls = Calls()
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    script = [tool_call("c1", "num", '{"n": "two"}'), WaitResult("c1"), finish_step(), finish()]
    async with opened(
        ScriptedHarness([script]), tmp_path, tools={"num": calls.tool(input_schema=schema)}
    ) as (agent, session):
        await agent.generate(session=session, prompt="go")
        harness = scripted(agent)
    assert calls.seen == []
    ((record),) = harness.recorder.results
    assert record["is_error"] is True
    assert isinstance(record["output"]["error"], str)


# -- §8 tool context ---------------------------------------------------------------------------------

TOKEN_SCHEMA = {
    "type": "object",
    "properties": {"token": {"type": "string"}},
    "required": ["token"],
}


class TokenContext(BaseModel):
    token: str


@pytest.mark.parametrize(
    ("schema", "expected"),
    [(TOKEN_SCHEMA, {"token": "t-1"}), (TokenContext, TokenContext(token="t-1"))],
    ids=["json-schema", "pydantic"],
)
@pytest.mark.requirement("CONTEXT-004", "CONTEXT-009")
async def test_validated_context_reaches_the_tool(
    tmp_path: Path, schema: Any, expected: Any
) -> None:
    calls = Calls()
    script = [tool_call("c1", "secure", "{}"), WaitResult("c1"), finish_step(), finish()]
    async with opened(
        ScriptedHarness([script]),
        tmp_path,
        tools={"secure": calls.tool(context_schema=schema)},
        tools_context={"secure": {"token": "t-1"}},
    ) as (agent, session):
        result = await agent.generate(session=session, prompt="go")
    ((_, options),) = calls.seen
    assert options.context == expected
    assert result.steps[0].tools_context == {"secure": {"token": "t-1"}}


@pytest.mark.requirement("CONTEXT-005")
async def test_tool_without_context_schema_gets_its_entry_unvalidated(tmp_path: Path) -> None:
    calls = Calls()
    script = [
        tool_call("c1", "plain", "{}"),
        tool_call("c2", "other", "{}"),
        WaitResult("c1"),
        WaitResult("c2"),
        finish_step(),
        finish(),
    ]
    async with opened(
        ScriptedHarness([script]),
        tmp_path,
        tools={"plain": calls.tool(), "other": calls.tool()},
        tools_context={"plain": [1, "anything"]},
    ) as (agent, session):
        await agent.generate(session=session, prompt="go")
    contexts = {options.tool_call_id: options.context for _, options in calls.seen}
    assert contexts == {"c1": [1, "anything"], "c2": None}


@pytest.mark.parametrize(
    "context",
    [{}, {"secure": {"token": 7, "leak": "TOPSECRET-42"}}, {"secure": "TOPSECRET-42"}],
    ids=["missing", "invalid-object", "wrong-type"],
)
@pytest.mark.parametrize("schema", [TOKEN_SCHEMA, TokenContext], ids=["json-schema", "pydantic"])
@pytest.mark.requirement("CONTEXT-006", "CONTEXT-003")
async def test_context_failure_submits_the_generic_payload_and_never_leaks(
    tmp_path: Path, context: dict[str, Any], schema: Any
) -> None:
    calls = Calls()
    script = [tool_call("c1", "secure", "{}"), WaitResult("c1"), *text_step("went on"), finish()]
    async with opened(
        ScriptedHarness([script]),
        tmp_path,
        tools={"secure": calls.tool(context_schema=schema)},
        tools_context=context,
    ) as (agent, session):
        result, parts = await stream_parts(agent, session=session, prompt="go")
        harness = scripted(agent)
        assert await result.text == "went on"
    assert calls.seen == []
    assert harness.recorder.results == [
        {"tool_call_id": "c1", "output": CONTEXT_FAILED, "is_error": True}
    ]
    everything = repr(harness.recorder) + json.dumps(wire(parts), default=str)
    assert "TOPSECRET" not in everything


# -- 6.2 client-side tools ----------------------------------------------------------------------------


@pytest.mark.requirement("HOSTTOOL-015", "APPROVAL-015", "RESULT-003", "SESSION-023")
async def test_client_tool_pauses_with_a_synthetic_tool_calls_step(tmp_path: Path) -> None:
    script = [
        tool_call("c1", "pick", '{"options": [1, 2]}'),
        WaitResult("c1"),
        finish_step(),
        finish(),
    ]
    async with opened(ScriptedHarness([script]), tmp_path, tools={"pick": client_tool()}) as (
        agent,
        session,
    ):
        result, parts = await stream_parts(agent, session=session, prompt="go")
        generated = await result.to_generate_result()
        assert session.turn_state == "awaiting-tool-result"
        assert session.has_unfinished_turn()
        harness = scripted(agent)
    assert kinds(parts) == ["start", "start-step", "tool-call", "finish-step", "finish"]
    finish_step_part = parts[3].to_wire()
    assert finish_step_part["finishReason"] == "tool-calls"
    assert "rawFinishReason" not in finish_step_part
    assert finish_step_part["usage"] == {"inputTokenDetails": {}, "outputTokenDetails": {}}
    assert of_type(ConsumerFinishPart, parts[-1]).finish_reason == "tool-calls"
    assert generated.finish_reason == "tool-calls"
    assert len(generated.steps) == 1
    assert harness.recorder.results == []


@pytest.mark.requirement("HOSTTOOL-015", "HOSTTOOL-017")
async def test_client_tool_stays_unfinished_after_suspend(tmp_path: Path) -> None:
    script = [
        tool_call("c1", "pick", '{"a": 1}', providerMetadata={"ui": {"k": 1}}),
        WaitResult("c1"),
    ]
    async with opened(ScriptedHarness([script]), tmp_path, tools={"pick": client_tool()}) as (
        agent,
        session,
    ):
        await stream_parts(agent, session=session, prompt="go")
        with anyio.fail_after(10):
            state = await session.suspend_turn()
        assert session.has_unfinished_turn()
    (pending,) = state.pending_tool_results or []
    assert pending.to_wire() == {
        "toolCallId": "c1",
        "toolName": "pick",
        "input": '{"a": 1}',
        "providerOptions": {"ui": {"k": 1}},
    }


@pytest.mark.requirement("HOSTTOOL-016")
async def test_provider_executed_call_to_a_client_tool_does_not_pause(tmp_path: Path) -> None:
    script = [tool_call("c1", "pick", "{}", provider_executed=True), finish_step(), finish()]
    async with opened(ScriptedHarness([script]), tmp_path, tools={"pick": client_tool()}) as (
        agent,
        session,
    ):
        result = await agent.generate(session=session, prompt="go")
        assert session.turn_state == "idle"
    assert result.finish_reason == "stop"


def _replayed_tail(call_id: str, name: str) -> list[Any]:
    return [
        WaitResult(call_id),
        tool_call(call_id, name, "{}"),
        {"type": "tool-result", "toolCallId": call_id, "toolName": name, "result": "echo"},
        finish_step("tool-calls"),
        *text_step("thanks"),
        finish(),
    ]


@pytest.mark.parametrize(
    ("continuation", "output", "is_error"),
    [
        ({"toolCallId": "c1", "output": {"picked": 2}}, {"picked": 2}, False),
        ({"tool_call_id": "c1", "output": "nope", "is_error": True}, "nope", True),
        (
            {
                "type": "tool-result",
                "toolCallId": "c1",
                "toolName": "pick",
                "output": {"type": "json", "value": [2]},
            },
            [2],
            False,
        ),
        (
            {
                "type": "tool-result",
                "toolCallId": "c1",
                "toolName": "pick",
                "output": {"type": "text", "value": "two"},
            },
            "two",
            False,
        ),
        (
            {
                "type": "tool-result",
                "toolCallId": "c1",
                "toolName": "pick",
                "output": {"type": "error-text", "value": "bad"},
            },
            "bad",
            True,
        ),
        (
            {
                "type": "tool-result",
                "toolCallId": "c1",
                "toolName": "pick",
                "output": {"type": "error-json", "value": {"e": 1}},
            },
            {"e": 1},
            True,
        ),
        (
            {
                "type": "tool-result",
                "toolCallId": "c1",
                "toolName": "pick",
                "output": {"type": "execution-denied", "reason": "user said no"},
            },
            {"type": "execution-denied", "reason": "user said no"},
            False,
        ),
        (
            {
                "type": "tool-result",
                "toolCallId": "c1",
                "toolName": "pick",
                "output": {"type": "content", "value": [{"type": "text", "text": "hi"}]},
            },
            {"type": "content", "value": [{"type": "text", "text": "hi"}]},
            False,
        ),
    ],
    ids=["raw", "raw-snake-error", "json", "text", "error-text", "error-json", "denied", "content"],
)
@pytest.mark.requirement(
    "HOSTTOOL-018", "HOSTTOOL-019", "HOSTTOOL-021", "HOSTTOOL-023", "DECISION-001"
)
async def test_client_result_continuation_is_unwrapped_and_submitted(
    tmp_path: Path, continuation: dict[str, Any], output: Any, is_error: bool
) -> None:
    script = [tool_call("c1", "pick", "{}"), *_replayed_tail("c1", "pick")]
    async with opened(ScriptedHarness([script]), tmp_path, tools={"pick": client_tool()}) as (
        agent,
        session,
    ):
        await stream_parts(agent, session=session, prompt="go")
        result, parts = await continue_parts(
            agent, session=session, tool_result_continuations=[continuation]
        )
        assert await result.text == "thanks"
        assert session.turn_state == "idle"
        harness = scripted(agent)
    ((record),) = harness.recorder.results
    assert record["tool_call_id"] == "c1"
    assert record["output"] == output
    assert record.get("is_error", False) is is_error
    assert kinds(parts) == [
        "start",
        "start-step",
        "text-start",
        "text-delta",
        "text-end",
        "finish-step",
        "finish",
    ]


@pytest.mark.requirement("HOSTTOOL-022", "ADAPTER-045")
async def test_part_form_continuation_travels_as_tool_result_with_record_name_and_options(
    tmp_path: Path,
) -> None:
    script = [
        tool_call("c1", "pick", "{}", providerMetadata={"ui": {"k": 1}}),
        *_replayed_tail("c1", "pick"),
    ]
    part = {
        "type": "tool-result",
        "toolCallId": "c1",
        "toolName": "x",
        "output": {"type": "json", "value": 1},
    }
    async with opened(ScriptedHarness([script]), tmp_path, tools={"pick": client_tool()}) as (
        agent,
        session,
    ):
        await stream_parts(agent, session=session, prompt="go")
        await continue_parts(agent, session=session, tool_result_continuations=[part])
        harness = scripted(agent)
    assert harness.recorder.results[0]["tool_result"] == {
        **part,
        "toolName": "pick",
        "providerOptions": {"ui": {"k": 1}},
    }


@pytest.mark.requirement("HOSTTOOL-020", "ADAPTER-045")
async def test_raw_form_continuation_is_submitted_without_tool_result(tmp_path: Path) -> None:
    script = [tool_call("c1", "pick", "{}"), *_replayed_tail("c1", "pick")]
    async with opened(ScriptedHarness([script]), tmp_path, tools={"pick": client_tool()}) as (
        agent,
        session,
    ):
        await stream_parts(agent, session=session, prompt="go")
        await continue_parts(
            agent, session=session, tool_result_continuations=[{"toolCallId": "c1", "output": None}]
        )
        harness = scripted(agent)
    assert harness.recorder.results == [{"tool_call_id": "c1", "output": None}]


@pytest.mark.requirement("HOSTTOOL-020", "SESSION-026")
async def test_part_form_with_an_unknown_output_type_is_rejected(tmp_path: Path) -> None:
    script = [tool_call("c1", "pick", "{}"), *_replayed_tail("c1", "pick")]
    bad = {
        "type": "tool-result",
        "toolCallId": "c1",
        "toolName": "pick",
        "output": {"type": "weird"},
    }
    async with opened(ScriptedHarness([script]), tmp_path, tools={"pick": client_tool()}) as (
        agent,
        session,
    ):
        await stream_parts(agent, session=session, prompt="go")
        with pytest.raises(HarnessUsageError, match="c1"):
            await agent.continue_stream(session=session, tool_result_continuations=[bad])
        assert session.turn_state == "awaiting-tool-result"


@pytest.mark.requirement("HOSTTOOL-018")
async def test_trailing_tool_message_continues_the_same_session(tmp_path: Path) -> None:
    script = [tool_call("c1", "pick", '{"q": 1}'), *_replayed_tail("c1", "pick")]
    async with opened(ScriptedHarness([script]), tmp_path, tools={"pick": client_tool()}) as (
        agent,
        session,
    ):
        first = await agent.generate(session=session, prompt="go")
        messages = [
            {"role": "user", "content": "go"},
            *first.response_messages,
            {
                "role": "tool",
                "content": [
                    {
                        "type": "tool-result",
                        "toolCallId": "c1",
                        "toolName": "pick",
                        "output": {"type": "json", "value": {"answer": 7}},
                    }
                ],
            },
        ]
        second = await agent.generate(session=session, messages=messages)
        harness = scripted(agent)
    assert second.text == "thanks"
    assert harness.recorder.calls.count("do_prompt_turn") == 1
    assert harness.recorder.calls.count("do_continue_turn") == 1
    assert harness.recorder.results[0]["output"] == {"answer": 7}


# -- 6.3 askUserQuestions ---------------------------------------------------------------------------

QUESTIONS_INPUT = {
    "allowPartialAnswers": False,
    "questions": [
        {"id": "q1", "question": "Which color?", "options": [{"id": "r", "label": "Red"}]}
    ],
}


def _questions_harness(script: list[Any], **extra: Any) -> ScriptedHarness:
    schema = {"type": "object", "required": ["questions"]}
    return ScriptedHarness(
        [script], builtin_tools={"askUserQuestions": builtin(schema), "bash": builtin()}, **extra
    )


@pytest.mark.requirement("HOSTTOOL-024", "HOSTTOOL-025")
async def test_host_dispatched_question_pauses_for_a_client_answer(tmp_path: Path) -> None:
    script = [
        tool_call("q1", "askUserQuestions", json.dumps(QUESTIONS_INPUT)),
        WaitResult("q1"),
        finish_step(),
        *text_step("red it is"),
        finish(),
    ]
    harness = _questions_harness(script)
    async with opened(harness, tmp_path, tool_approval={"askUserQuestions": "denied"}) as (
        agent,
        session,
    ):
        _, parts = await stream_parts(agent, session=session, prompt="go")
        assert session.turn_state == "awaiting-tool-result"
        (call,) = only(parts, "tool-call")
        assert call.to_wire() == {
            "type": "tool-call",
            "toolCallId": "q1",
            "toolName": "askUserQuestions",
            "input": QUESTIONS_INPUT,
        }
        assert harness.recorder.results == []
        answer = {"action": "answered", "answers": {"q1": {"optionIds": ["r"]}}}
        result, _ = await continue_parts(
            agent,
            session=session,
            tool_result_continuations=[{"toolCallId": "q1", "output": answer}],
        )
        assert await result.text == "red it is"
    assert harness.recorder.results[0]["output"] == answer


@pytest.mark.requirement("HOSTTOOL-025")
async def test_provider_executed_question_is_an_ordinary_builtin(tmp_path: Path) -> None:
    script = [
        tool_call("q1", "askUserQuestions", json.dumps(QUESTIONS_INPUT), provider_executed=True),
        finish_step(),
        finish(),
    ]
    harness = _questions_harness(script)
    async with opened(harness, tmp_path) as (agent, session):
        result = await agent.generate(session=session, prompt="go")
        assert session.turn_state == "idle"
    assert result.finish_reason == "stop"
    assert harness.recorder.results == []


@pytest.mark.requirement("HOSTTOOL-026")
async def test_filtered_out_question_is_denied_instead_of_pausing(tmp_path: Path) -> None:
    script = [
        tool_call("q1", "askUserQuestions", json.dumps(QUESTIONS_INPUT)),
        WaitResult("q1"),
        finish_step(),
        finish(),
    ]
    harness = _questions_harness(script, supports_builtin_tool_filtering=True)
    async with opened(harness, tmp_path, inactive_tools=["askUserQuestions"]) as (agent, session):
        await agent.generate(session=session, prompt="go")
        assert session.turn_state == "idle"
    assert harness.recorder.results == [
        {"tool_call_id": "q1", "output": denied("askUserQuestions")}
    ]
