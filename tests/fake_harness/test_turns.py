"""What a turn emits and does, action kind by action kind, across profiles."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from harness_testkit.fake_harness import (
    ApprovalRequested,
    CompactionPerformed,
    FakeHarness,
    FakeHarnessError,
    Script,
    ToolExecuted,
    TurnStarted,
    UserMessageReceived,
    VirtualClock,
    WorkspaceMutated,
    profiles,
)
from harness_testkit.spec import (
    BuiltinToolFiltering,
    HarnessCapabilityUnsupportedError,
    HarnessSession,
    HarnessSessionStateError,
    JsonResponseFormat,
    PromptControl,
    PromptTurnOptions,
    Skill,
    ToolSpec,
    parse_stream_part,
)
from tests.fake_harness.support import (
    Collector,
    Responder,
    SandboxEnv,
    drive,
    run_turn,
    start,
    steering,
    wait_for,
)

pytestmark = pytest.mark.anyio


def one_turn(*steps: dict[str, Any], **turn: Any) -> Script:
    return Script.model_validate({"turns": [{"steps": list(steps), **turn}]})


@pytest.mark.parametrize("profile", profiles())
async def test_text_turn_frames_steps_on_every_profile(sandbox: SandboxEnv, profile: str) -> None:
    harness = FakeHarness(
        one_turn({"actions": ["Hello there, friend.", {"reasoning": "why"}]}), profile=profile
    )
    session = await start(harness, sandbox)
    assert isinstance(session, HarnessSession)
    control = await session.do_prompt_turn(PromptTurnOptions(prompt="x", emit=Collector().emit))
    assert isinstance(control, PromptControl)
    await control.done()
    collected, error = await run_turn(session)
    assert error is None
    types = collected.types()
    expected_head = ["stream-start"] if harness.profile.emits_stream_start else []
    assert types[: len(expected_head)] == expected_head
    assert types[-2:] == ["finish-step", "finish"]
    assert collected.text() == "Hello there, friend."
    for part in collected.parts:
        parse_stream_part(part)
    assert session.is_resume is False
    assert session.session_id == "s1"


async def test_chunking_is_deterministic_per_seed(sandbox: SandboxEnv) -> None:
    text = "one two three four five six seven eight nine ten eleven twelve"
    script = Script.model_validate(
        {"chunking": {"mode": "words", "maxWords": 3}, "turns": [{"steps": [{"actions": [text]}]}]}
    )

    async def deltas(seed: int, session_id: str) -> list[str]:
        session = await start(FakeHarness(script, seed=seed), sandbox, session_id)
        collected, _ = await run_turn(session)
        return [part["delta"] for part in collected.of_type("text-delta")]

    assert await deltas(1, "a") == await deltas(1, "b")
    assert "".join(await deltas(2, "c")) == text
    baseline = await deltas(1, "z")
    assert any([await deltas(seed, f"s{seed}") != baseline for seed in range(3, 8)])
    chars = Script.model_validate(
        {
            "chunking": {"mode": "chars", "size": 5},
            "turns": [{"steps": [{"actions": ["abcdefghijkl"]}]}],
        }
    )
    collected, _ = await run_turn(await start(FakeHarness(chars), sandbox, "ch"))
    assert [part["delta"] for part in collected.of_type("text-delta")] == ["abcde", "fghij", "kl"]


async def test_builtin_calls_execute_for_real_and_report_outcomes(sandbox: SandboxEnv) -> None:
    script = one_turn(
        {
            "actions": [
                {"builtin": "write", "id": "w", "input": {"file_path": "f.txt", "content": "hi\n"}},
                {"builtin": "read", "id": "r", "input": {"file_path": "missing.txt"}},
                {
                    "builtin": "bash",
                    "id": "b",
                    "input": {"command": "cat f.txt"},
                    "streamInput": True,
                },
            ]
        }
    )
    harness = FakeHarness(script, profile="claude-code")
    collected, error = await run_turn(await start(harness, sandbox))
    assert error is None
    calls = {part["toolCallId"]: part for part in collected.of_type("tool-call")}
    assert calls["w"]["providerExecuted"] is True
    assert calls["w"]["nativeName"] == "Write"
    assert json.loads(calls["w"]["input"]) == {"file_path": "f.txt", "content": "hi\n"}
    results = {part["toolCallId"]: part for part in collected.of_type("tool-result")}
    assert results["w"].get("isError") is None
    assert "Wrote 3 characters" in results["w"]["result"]
    assert results["r"]["isError"] is True
    assert results["b"]["result"] == {"exitCode": 0, "stdout": "hi\n", "stderr": ""}
    types = collected.types()
    # Input streaming precedes the call; every call precedes every result of the step.
    assert (
        types.index("tool-input-start")
        < types.index("tool-input-end")
        < max(i for i, t in enumerate(types) if t == "tool-call")
        < types.index("tool-result")
    )
    assert await sandbox.read("f.txt") == "hi\n"
    executed = harness.observations.of_kind(ToolExecuted, "s1")
    assert [(e.tool_call_id, e.executed, e.is_error) for e in executed] == [
        ("w", True, False),
        ("r", True, True),
        ("b", True, False),
    ]


async def test_script_answered_builtins_and_unknown_builtins(sandbox: SandboxEnv) -> None:
    script = Script.model_validate(
        {
            "webSearch": [{"queryMatches": "python", "results": [{"url": "https://python.org"}]}],
            "turns": [
                {
                    "steps": [
                        {
                            "actions": [
                                {
                                    "builtin": "webSearch",
                                    "id": "s",
                                    "input": {"query": "python docs"},
                                },
                                {
                                    "builtin": "TodoWrite",
                                    "id": "t",
                                    "input": {},
                                    "result": {"value": {"todos": 1}},
                                },
                                {"builtin": "teleport", "id": "x", "input": {}},
                            ]
                        }
                    ]
                }
            ],
        }
    )
    collected, _ = await run_turn(await start(FakeHarness(script), sandbox))
    results = {part["toolCallId"]: part for part in collected.of_type("tool-result")}
    assert results["s"]["result"] == [{"url": "https://python.org"}]
    assert results["t"]["result"] == {"todos": 1}
    assert results["x"]["isError"] is True
    assert "not available" in results["x"]["result"]
    call = next(p for p in collected.of_type("tool-call") if p["toolCallId"] == "s")
    assert call["nativeName"] == "WebSearch"


async def test_host_tool_waits_for_the_result_and_echoes_it(sandbox: SandboxEnv) -> None:
    script = one_turn(
        {"actions": [{"hostTool": "lookup", "id": "h1", "input": {"q": "x"}}]},
        {"when": {"toolCallId": "h1", "isError": True}, "actions": ["failed"]},
        {"when": {"toolCallId": "h1", "outputMatches": "echo"}, "actions": ["got {{result:h1}}"]},
    )
    harness = FakeHarness(script)
    session = await start(harness, sandbox)
    collected, error = await run_turn(session, tools=[ToolSpec(name="lookup")])
    assert error is None
    call = collected.of_type("tool-call")[0]
    assert "providerExecuted" not in call
    assert call["toolName"] == "lookup"
    result = collected.of_type("tool-result")[0]
    assert result["isError"] is False
    assert result["result"]["echo"] == {"q": "x"}
    types = collected.types()
    assert types.index("tool-result") < types.index("finish-step")
    assert collected.text().startswith("got {")
    failing = Responder(results=lambda part: ({"error": "down"}, True))
    collected, _ = await run_turn(session, responder=failing)
    assert collected.text() == "failed"
    assert collected.of_type("tool-result")[0]["isError"] is True
    received = harness.observations.of_kind(TurnStarted, "s1")[0]
    assert [tool.name for tool in received.tools] == ["lookup"]


def _outcome_branches(call_id: str) -> list[dict[str, Any]]:
    # One step per outcome a script can branch on; each says which one ran.
    return [
        {"when": {"toolCallId": call_id, "isError": False}, "actions": ["success "]},
        {"when": {"toolCallId": call_id, "isError": True, "denied": False}, "actions": ["error "]},
        {"when": {"toolCallId": call_id, "denied": True}, "actions": ["denied "]},
        {"when": {"toolCallId": call_id, "isError": True}, "actions": ["failed"]},
    ]


@pytest.mark.requirement("DECISION-018")
@pytest.mark.parametrize(
    ("answer", "branches"),
    [
        (({"ok": True}, False), "success "),
        (({"error": "down"}, True), "error failed"),
        (({"type": "execution-denied", "reason": "no"}, False), "denied failed"),
        (({"type": "execution-denied"}, False), "denied failed"),
        # Not a denial: a tool may well return an object with other keys.
        (({"type": "execution-denied", "detail": 1}, False), "success "),
    ],
)
async def test_a_host_tool_answered_execution_denied_branches_as_denied(
    sandbox: SandboxEnv, answer: tuple[Any, bool], branches: str
) -> None:
    script = one_turn(
        {"actions": [{"hostTool": "deploy", "id": "dep-1"}]}, *_outcome_branches("dep-1")
    )
    session = await start(FakeHarness(script), sandbox)
    collected, error = await run_turn(
        session, responder=Responder(results=lambda part: answer), tools=[ToolSpec(name="deploy")]
    )
    assert error is None
    assert collected.text() == branches
    # The echo carries what the host submitted, as before.
    echo = collected.of_type("tool-result")[0]
    assert (echo["result"], echo["isError"]) == answer


@pytest.mark.requirement("DECISION-018")
async def test_a_denied_builtin_branches_as_denied(sandbox: SandboxEnv) -> None:
    script = one_turn(
        {"actions": [{"builtin": "write", "id": "w", "input": {"file_path": "d", "content": "1"}}]},
        *_outcome_branches("w"),
    )
    session = await start(FakeHarness(script, profile="pi"), sandbox, permission_mode="allow-reads")
    deny = Responder(approve=lambda part: (False, "Not today."))
    collected, _ = await run_turn(session, responder=deny)
    assert collected.text() == "denied failed"


def test_denied_needs_the_call_it_refers_to() -> None:
    with pytest.raises(ValueError, match="isError, denied and outputMatches need the toolCallId"):
        one_turn({"when": {"denied": True, "userMessageMatches": "x"}, "actions": ["no"]})


@pytest.mark.parametrize(
    ("mode", "gated"),
    [("allow-all", set()), ("allow-edits", {"bash"}), ("allow-reads", {"write", "bash"})],
)
async def test_permission_modes_gate_builtins(
    sandbox: SandboxEnv, mode: Any, gated: set[str]
) -> None:
    script = one_turn(
        {
            "actions": [
                {"builtin": "read", "id": "read", "input": {"file_path": "x"}},
                {"builtin": "write", "id": "write", "input": {"file_path": "x", "content": "1"}},
                {"builtin": "bash", "id": "bash", "input": {"command": "echo 1"}},
            ]
        }
    )
    harness = FakeHarness(script, profile="claude-code")
    collected, _ = await run_turn(await start(harness, sandbox, permission_mode=mode))
    asked = {part["toolCallId"] for part in collected.of_type("tool-approval-request")}
    assert asked == gated
    for part in collected.of_type("tool-approval-request"):
        assert part["approvalId"] == f"approval-{part['toolCallId']}"
    assert {e.tool_call_id for e in harness.observations.of_kind(ToolExecuted) if e.executed} == {
        "read",
        "write",
        "bash",
    }


async def test_denied_builtin_is_not_executed(sandbox: SandboxEnv) -> None:
    script = one_turn(
        {
            "actions": [
                {"builtin": "write", "id": "w", "input": {"file_path": "d.txt", "content": "1"}}
            ]
        }
    )
    harness = FakeHarness(script, profile="pi")
    deny = Responder(approve=lambda part: (False, "Not today."))
    collected, _ = await run_turn(
        await start(harness, sandbox, permission_mode="allow-reads"), responder=deny
    )
    result = collected.of_type("tool-result")[0]
    assert result == {
        "type": "tool-result",
        "toolCallId": "w",
        "toolName": "write",
        "result": "Not today.",
        "isError": True,
    }
    assert await sandbox.read("d.txt") is None
    (executed,) = harness.observations.of_kind(ToolExecuted)
    assert (executed.executed, executed.reason) == (False, "denied")


async def test_native_filtering_hides_inactive_builtins(sandbox: SandboxEnv) -> None:
    script = one_turn(
        {
            "actions": [
                {"builtin": "bash", "id": "b", "input": {"command": "touch ran"}},
                {"builtin": "read", "id": "r", "input": {"file_path": "ran"}},
            ]
        }
    )
    harness = FakeHarness(script, profile="claude-code")
    filtering = BuiltinToolFiltering(mode="allow", tool_names=["read"])
    collected, _ = await run_turn(await start(harness, sandbox, builtin_tool_filtering=filtering))
    results = {part["toolCallId"]: part for part in collected.of_type("tool-result")}
    assert results["b"]["isError"] is True
    assert "not available" in results["b"]["result"]
    assert not collected.of_type("tool-approval-request")
    assert await sandbox.read("ran") is None
    assert results["r"]["isError"] is True  # the file was never created


async def test_approval_based_filtering_routes_inactive_builtins_through_approvals(
    sandbox: SandboxEnv,
) -> None:
    script = one_turn(
        {"actions": [{"builtin": "bash", "id": "b", "input": {"command": "touch ran"}}]}
    )
    harness = FakeHarness(script, profile="opencode")
    filtering = BuiltinToolFiltering(mode="deny", tool_names=["bash"])
    deny = Responder(
        approve=lambda part: (
            False,
            "Tool 'bash' is inactive due to the HarnessAgent tool filtering policy.",
        )
    )
    collected, _ = await run_turn(
        await start(harness, sandbox, builtin_tool_filtering=filtering), responder=deny
    )
    assert len(collected.of_type("tool-approval-request")) == 1
    assert harness.observations.of_kind(ApprovalRequested)[0].because == "filtering"
    assert collected.of_type("tool-result")[0]["isError"] is True
    assert await sandbox.read("ran") is None


@pytest.mark.parametrize("profile", ["codex", "minimal"])
async def test_profiles_without_filtering_or_approvals_refuse_filters(
    sandbox: SandboxEnv, profile: str
) -> None:
    harness = FakeHarness(profile=profile)
    with pytest.raises(
        HarnessCapabilityUnsupportedError, match="does not support built-in tool filtering controls"
    ):
        await start(
            harness,
            sandbox,
            builtin_tool_filtering=BuiltinToolFiltering(mode="allow", tool_names=[]),
        )


async def test_codex_refuses_gated_permission_modes_but_minimal_accepts_them(
    sandbox: SandboxEnv,
) -> None:
    with pytest.raises(HarnessCapabilityUnsupportedError, match="allow-all"):
        await start(FakeHarness(profile="codex"), sandbox, permission_mode="allow-reads")
    session = await start(
        FakeHarness(profile="minimal"), sandbox, "m", permission_mode="allow-reads"
    )
    assert (await run_turn(session))[1] is None


async def test_mcp_tools_are_runtime_executed_and_dynamic(sandbox: SandboxEnv) -> None:
    script = one_turn(
        {
            "actions": [
                {"mcp": "docs/search", "id": "m1", "input": {"q": "a"}},
                {"mcp": "docs/write", "id": "m2"},
                {"mcp": "nowhere/x", "id": "m3"},
                {
                    "mcp": "docs/search",
                    "id": "m4",
                    "result": {"value": "override", "isError": True},
                },
            ]
        }
    )
    servers = {
        "docs": {
            "tools": {
                "search": {"result": {"hits": 2}, "toolUseKind": "readonly"},
                "write": {"result": "saved"},
            }
        }
    }
    harness = FakeHarness(script, profile="claude-code", mcp_servers=servers)
    deny = Responder(approve=lambda part: (False, None))
    collected, _ = await run_turn(
        await start(harness, sandbox, permission_mode="allow-reads"), responder=deny
    )
    call = collected.of_type("tool-call")[0]
    assert (call["toolName"], call["providerExecuted"], call["dynamic"]) == (
        "mcp__docs__search",
        True,
        True,
    )
    results = {part["toolCallId"]: part for part in collected.of_type("tool-result")}
    assert results["m1"]["result"] == {"hits": 2}
    assert results["m1"]["dynamic"] is True
    # `write` has no tool kind: treated as `edit`, gated under allow-reads, denied here.
    assert [p["toolCallId"] for p in collected.of_type("tool-approval-request")] == ["m2"]
    assert results["m2"]["isError"] is True
    assert results["m3"]["isError"] is True
    assert "not available" in results["m3"]["result"]
    assert (results["m4"]["result"], results["m4"]["isError"]) == ("override", True)
    surfaces = {
        e.tool_call_id: (e.surface, e.executed) for e in harness.observations.of_kind(ToolExecuted)
    }
    assert surfaces["m1"] == ("mcp", True)
    assert surfaces["m3"] == ("mcp", False)


@pytest.mark.parametrize(
    ("profile", "events"),
    [
        ("codex", ["create", "modify", "delete"]),
        ("opencode", ["modify", "modify", "modify"]),
        ("claude-code", []),
    ],
)
async def test_opaque_mutations_change_files_and_report_per_profile(
    sandbox: SandboxEnv, profile: str, events: list[str]
) -> None:
    script = one_turn(
        {"actions": [{"fileChange": [{"path": "o.txt", "content": "1"}]}]},
        {
            "actions": [
                {
                    "fileChange": [
                        {"path": "o.txt", "content": "2"},
                        {"path": "o.txt", "delete": True},
                    ]
                }
            ]
        },
    )
    harness = FakeHarness(script, profile=profile)
    collected, _ = await run_turn(await start(harness, sandbox))
    changes = collected.of_type("file-change")
    assert [change["event"] for change in changes] == events
    assert all(change["path"] == f"{sandbox.work_dir}/o.txt" for change in changes)
    assert not collected.of_type("tool-call")
    assert await sandbox.read("o.txt") is None
    assert len(harness.observations.of_kind(WorkspaceMutated)) == 3


async def test_pi_reports_file_changes_of_visible_writes(sandbox: SandboxEnv) -> None:
    script = one_turn(
        {
            "actions": [
                {"builtin": "write", "id": "w", "input": {"file_path": "p.txt", "content": "1"}}
            ]
        }
    )
    collected, _ = await run_turn(await start(FakeHarness(script, profile="pi"), sandbox))
    types = collected.types()
    assert types.index("file-change") < types.index("tool-result")


async def test_raw_error_delay_usage_and_finish_reasons(sandbox: SandboxEnv) -> None:
    clock = VirtualClock()
    script = one_turn(
        {
            "actions": [
                {"raw": {"k": 1}},
                {"delay": 2.5},
                {"error": "soft", "endTurn": False},
                "abcdefgh",
            ],
            "usage": {"inputTokens": 7, "outputTokens": 3},
        },
        {"actions": ["x"], "finishReason": "length"},
        finishReason="other",
    )
    collected, error = await run_turn(await start(FakeHarness(script, clock=clock), sandbox))
    assert error is None
    assert clock.now() == 2.5
    assert collected.of_type("raw")[0]["rawValue"] == {"k": 1}
    assert collected.of_type("error")[0]["error"] == "soft"
    steps = collected.of_type("finish-step")
    assert steps[0]["usage"]["inputTokens"]["total"] == 7
    assert steps[0]["usage"]["outputTokens"]["total"] == 3
    assert steps[1]["finishReason"] == {"unified": "length", "raw": "max_tokens"}
    finish = collected.of_type("finish")[0]
    assert finish["finishReason"] == {"unified": "other", "raw": "other"}
    total = sum(step["usage"]["outputTokens"]["total"] for step in steps)
    assert finish["totalUsage"]["outputTokens"]["total"] == total


async def test_an_ending_error_action_stops_the_turn_cleanly(sandbox: SandboxEnv) -> None:
    script = one_turn({"actions": ["before", {"error": {"message": "fatal"}}, "after"]})
    collected, error = await run_turn(await start(FakeHarness(script), sandbox))
    assert error is None
    assert collected.types()[-1] == "error"
    assert "finish" not in collected.types()
    assert collected.text() == "before"


async def test_json_response_format(sandbox: SandboxEnv) -> None:
    schema = JsonResponseFormat.model_validate({"type": "json", "schema": {"type": "object"}})
    script = one_turn({"actions": ["draft"]}, {"actions": ["not json"]}, jsonOutput={"answer": 42})
    collected, _ = await run_turn(await start(FakeHarness(script), sandbox), response_format=schema)
    assert json.loads(collected.text().removeprefix("draft")) == {"answer": 42}
    fallback = one_turn({"actions": ["plain words"]})
    collected, _ = await run_turn(
        await start(FakeHarness(fallback), sandbox, "f"), response_format=schema
    )
    assert json.loads(collected.text()) == {"text": "plain words"}
    session = await start(FakeHarness(fallback), sandbox, "g")
    with pytest.raises(HarnessCapabilityUnsupportedError, match="only with a JSON Schema"):
        await session.do_prompt_turn(
            PromptTurnOptions(
                prompt="x", emit=Collector().emit, response_format=JsonResponseFormat()
            )
        )
    pi = await start(FakeHarness(fallback, profile="pi"), sandbox, "p")
    with pytest.raises(
        HarnessCapabilityUnsupportedError, match="does not support JSON response formats"
    ):
        await pi.do_prompt_turn(
            PromptTurnOptions(prompt="x", emit=Collector().emit, response_format=schema)
        )


async def test_turn_settings_are_recorded_and_visible_to_the_script(sandbox: SandboxEnv) -> None:
    script = one_turn({"actions": ["{{model}}|{{instructions}}|{{skills}}|{{prompt}}|{{unknown}}"]})
    harness = FakeHarness(script)
    skill = Skill(name="pdf", description="PDFs", content="use it")
    session = await start(
        harness, sandbox, skills=[Skill(name="base", description="b", content="c")]
    )
    collected, _ = await run_turn(
        session,
        {"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "image"}]},
        model="m-1",
        instructions="be brief",
        skills=[skill],
        tools=[ToolSpec(name="t")],
    )
    assert collected.text() == "m-1|be brief|base, pdf|hi|{{unknown}}"
    assert collected.parts[0] == {"type": "stream-start", "modelId": "m-1"}
    turn = harness.observations.of_kind(TurnStarted)[0]
    assert (turn.model, turn.instructions, turn.skills) == ("m-1", "be brief", ["base", "pdf"])


async def test_turn_selection(sandbox: SandboxEnv) -> None:
    script = Script.model_validate(
        {
            "turns": [
                {"steps": [{"actions": ["first"]}]},
                {"promptMatches": "weather", "steps": [{"actions": ["matched"]}]},
                {"steps": [{"actions": ["second"]}]},
            ]
        }
    )
    session = await start(FakeHarness(script), sandbox)
    texts = [
        (await run_turn(session, prompt))[0].text() for prompt in ["a", "the weather", "b", "c"]
    ]
    assert texts == ["first", "matched", "second", "second"]
    cycle = script.model_copy(update={"when_exhausted": "cycle"})
    session = await start(FakeHarness(cycle), sandbox, "c")
    assert [(await run_turn(session, p))[0].text() for p in "abc"] == ["first", "second", "first"]
    strict = script.model_copy(update={"when_exhausted": "error"})
    session = await start(FakeHarness(strict), sandbox, "e")
    await run_turn(session)
    await run_turn(session)
    with pytest.raises(FakeHarnessError, match="no turn left"):
        await session.do_prompt_turn(PromptTurnOptions(prompt="x", emit=Collector().emit))


@pytest.mark.parametrize("profile", profiles())
async def test_steering_exists_exactly_where_the_profile_supports_it(
    sandbox: SandboxEnv, profile: str
) -> None:
    session = await start(FakeHarness(one_turn({"actions": ["x"]}), profile=profile), sandbox)
    control = await session.do_prompt_turn(PromptTurnOptions(prompt="x", emit=Collector().emit))
    harness_profile = FakeHarness(profile=profile).profile
    assert hasattr(control, "submit_user_message") is harness_profile.supports_user_messages
    assert (
        hasattr(control, "submit_tool_approval") is harness_profile.supports_builtin_tool_approvals
    )
    await control.done()


async def test_user_messages_are_taken_at_step_boundaries(sandbox: SandboxEnv) -> None:
    script = one_turn(
        {"actions": [{"hostTool": "lookup", "id": "h"}]},
        {"when": {"userMessageMatches": "stop"}, "actions": ["stopping"]},
        onUserMessage=[{"actions": ["reacting to {{user_message}}. "]}],
    )
    harness = FakeHarness(script, profile="claude-code")
    session = await start(harness, sandbox)
    collector = Collector()
    control = await session.do_prompt_turn(PromptTurnOptions(prompt="go", emit=collector.emit))
    async with anyio.create_task_group() as group:
        group.start_soon(drive, control, collector, Responder(auto=False))
        await wait_for(
            lambda: session.turn is not None and session.turn.waiting_for == "tool-result:h"
        )
        await steering(control)("please stop")
        await control.submit_tool_result("h", "ok")
    assert collector.text() == "reacting to please stop. stopping"
    assert [m.text for m in harness.observations.of_kind(UserMessageReceived)] == ["please stop"]


async def test_wait_for_user_message_blocks_until_one_arrives(sandbox: SandboxEnv) -> None:
    script = one_turn({"actions": [{"waitUserMessage": True}, "heard {{user_message}}"]})
    session = await start(FakeHarness(script, profile="pi"), sandbox)
    collector = Collector()
    control = await session.do_prompt_turn(PromptTurnOptions(prompt="go", emit=collector.emit))
    async with anyio.create_task_group() as group:
        group.start_soon(drive, control, collector)
        await wait_for(
            lambda: session.turn is not None and session.turn.waiting_for == "user-message:None"
        )
        await steering(control)("hello")
    assert collector.text() == "heard hello"
    with pytest.raises(HarnessSessionStateError, match="has ended"):
        await steering(control)("late")


async def test_wait_for_user_message_times_out_on_the_clock(sandbox: SandboxEnv) -> None:
    clock = VirtualClock()
    script = one_turn({"actions": [{"type": "wait-user-message", "timeout": 30}, "gave up"]})
    collected, _ = await run_turn(
        await start(FakeHarness(script, profile="codex", clock=clock), sandbox)
    )
    assert collected.text() == "gave up"
    assert clock.now() >= 30


async def test_automatic_compaction_over_budget(sandbox: SandboxEnv) -> None:
    script = Script.model_validate(
        {
            "contextBudget": 10,
            "turns": [
                {
                    "steps": [
                        {"actions": ["a fairly long answer that fills the context window quickly"]},
                        {"actions": ["after"]},
                    ]
                }
            ],
        }
    )
    pi = FakeHarness(script, profile="pi")
    collected, _ = await run_turn(await start(pi, sandbox), "a prompt that is long enough to count")
    (part,) = collected.of_type("compaction")
    assert part["trigger"] == "auto"
    assert part["tokensAfter"] < part["tokensBefore"]
    # The compaction is content of the second step: a finish-step follows it.
    types = collected.types()
    assert "finish-step" in types[types.index("compaction") :]
    # Codex compacts silently: observed, but no part.
    codex = FakeHarness(script, profile="codex")
    collected, _ = await run_turn(
        await start(codex, sandbox, "c"), "a prompt that is long enough to count"
    )
    assert not collected.of_type("compaction")
    (observed,) = codex.observations.of_kind(CompactionPerformed)
    assert (observed.trigger, observed.emitted) == ("auto", False)


async def test_manual_compaction_between_turns_surfaces_on_the_next_turn(
    sandbox: SandboxEnv,
) -> None:
    harness = FakeHarness(Script.from_texts("one", "two"), profile="pi")
    session = await start(harness, sandbox)
    await run_turn(session)
    await session.do_compact("keep names")
    (observed,) = harness.observations.of_kind(CompactionPerformed)
    assert observed.turn is None
    assert observed.custom_instructions == "keep names"
    collected, _ = await run_turn(session)
    (part,) = collected.of_type("compaction")
    assert part["trigger"] == "manual"
    assert "Focus: keep names" in part["summary"]
    assert session.conversation.compactions == 1


async def test_manual_compaction_during_a_turn_happens_at_the_next_step(
    sandbox: SandboxEnv,
) -> None:
    script = one_turn({"actions": [{"hostTool": "lookup", "id": "h"}]}, {"actions": ["done"]})
    harness = FakeHarness(script, profile="claude-code")
    session = await start(harness, sandbox)
    collector = Collector()
    control = await session.do_prompt_turn(PromptTurnOptions(prompt="x", emit=collector.emit))
    async with anyio.create_task_group() as group:
        group.start_soon(drive, control, collector, Responder(auto=False))
        await wait_for(lambda: "tool-call" in collector.types())
        await session.do_compact("mid-turn")
        await control.submit_tool_result("h", "ok")
    (observed,) = harness.observations.of_kind(CompactionPerformed)
    assert (observed.turn, observed.trigger, observed.emitted) == (0, "manual", True)
    assert len(collector.of_type("compaction")) == 1
    types = collector.types()
    assert types.index("tool-result") < types.index("compaction") < types.index("finish")


async def test_manual_compaction_capabilities(sandbox: SandboxEnv) -> None:
    for profile in ("codex", "minimal"):
        session = await start(FakeHarness(profile=profile), sandbox, profile)
        with pytest.raises(
            HarnessCapabilityUnsupportedError, match=f"fake profile '{profile}'.*manual compaction"
        ):
            await session.do_compact()
    script = one_turn({"actions": [{"hostTool": "lookup", "id": "h"}]})
    opencode = await start(FakeHarness(script, profile="opencode"), sandbox, "o")
    with pytest.raises(HarnessCapabilityUnsupportedError, match="custom compaction instructions"):
        await opencode.do_compact("focus")
    await opencode.do_compact()
    control = await opencode.do_prompt_turn(PromptTurnOptions(prompt="x", emit=Collector().emit))
    with pytest.raises(HarnessCapabilityUnsupportedError, match="only between turns"):
        await opencode.do_compact()
    await control.submit_tool_result("h", "ok")
    await control.done()
