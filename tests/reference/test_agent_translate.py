"""Harness part -> consumer part translation and stream framing (notes 2.2, 2.3).

Covers the translation table (2.3.1-2.3.12), start/start-step framing (2.2.1-2.2.3),
the unclosed-step failure (2.2.5), empty turns (2.2.9), work-dir stripping (2.2.10),
identifiers (2.2.11) and deferred tool outcomes (2.2.12-2.2.13).

One idea: the translation of harness parts into consumer parts, one test per row of the
table and per framing rule, kept together so the rows read side by side.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness_testkit.reference import Tool, strip_work_dir, tool
from harness_testkit.reference._strip import StreamingStripper
from harness_testkit.spec import ConsumerErrorPart, ConsumerFinishStepPart, NoSuchToolError
from tests.narrowing import of_type
from tests.reference.scripted import (
    Fail,
    ScriptedHarness,
    WaitResult,
    finish,
    finish_step,
    text_step,
    tool_call,
)
from tests.reference.test_agent_support import (
    BASH_SCHEMA,
    OBJECT,
    UNCLOSED,
    builtin,
    echo_tool,
    kinds,
    only,
    opened,
    scripted,
    stream_parts,
    wire,
)

pytestmark = pytest.mark.anyio

META = {"mock": {"trace": "abc"}}
SUFFIX = re.compile(r"^[A-Za-z0-9]{16}$")


def text_parts(kind: str, block: str = "b1") -> list[dict[str, Any]]:
    return [
        {"type": f"{kind}-start", "id": block, "harnessMetadata": META},
        {"type": f"{kind}-delta", "id": block, "delta": "one ", "harnessMetadata": META},
        {"type": f"{kind}-delta", "id": block, "delta": "two"},
        {"type": f"{kind}-end", "id": block},
    ]


def tool_result(call_id: str, name: str, result: Any, **extra: Any) -> dict[str, Any]:
    return {
        "type": "tool-result",
        "toolCallId": call_id,
        "toolName": name,
        "result": result,
        **extra,
    }


# -- 2.3.1 text and reasoning ---------------------------------------------------------------


@pytest.mark.parametrize("kind", ["text", "reasoning"])
@pytest.mark.requirement("TRANSLATE-001", "TRANSLATE-002")
async def test_text_and_reasoning_keep_ids_and_rename_metadata(tmp_path: Path, kind: str) -> None:
    harness = ScriptedHarness([[*text_parts(kind), finish_step(), finish()]])
    async with opened(harness, tmp_path) as (agent, session):
        _, parts = await stream_parts(agent, session=session, prompt="go")
    assert wire(parts)[2:6] == [
        {"type": f"{kind}-start", "id": "b1", "providerMetadata": META},
        {"type": f"{kind}-delta", "id": "b1", "text": "one ", "providerMetadata": META},
        {"type": f"{kind}-delta", "id": "b1", "text": "two"},
        {"type": f"{kind}-end", "id": "b1"},
    ]
    assert all("harnessMetadata" not in part for part in wire(parts))


@pytest.mark.requirement("RESULT-006", "RESULT-009")
async def test_reasoning_is_stored_as_step_content(tmp_path: Path) -> None:
    harness = ScriptedHarness([[*text_parts("reasoning"), *text_step("answer"), finish()]])
    async with opened(harness, tmp_path) as (agent, session):
        result = await agent.generate(session=session, prompt="go")
    (step,) = result.steps
    assert step.reasoning_text == "one two"
    assert step.text == "answer"
    assert result.reasoning_text == "one two"


@pytest.mark.requirement("STREAM-037")
async def test_text_deltas_coalesce_regardless_of_ids_and_missing_start(tmp_path: Path) -> None:
    script = [
        {"type": "text-delta", "id": "a", "delta": "Hel"},
        {"type": "text-delta", "id": "b", "delta": "lo"},
        finish_step(),
        finish(),
    ]
    async with opened(ScriptedHarness([script]), tmp_path) as (agent, session):
        result = await agent.generate(session=session, prompt="go")
    assert result.text == "Hello"


# -- 2.3.12 tool-input parts -------------------------------------------------------------------


@pytest.mark.requirement("TRANSLATE-021", "TRANSLATE-023", "STREAM-035")
async def test_tool_input_parts_pass_through_with_all_fields(tmp_path: Path) -> None:
    script = [
        {
            "type": "tool-input-start",
            "id": "c1",
            "toolName": "bash",
            "providerMetadata": META,
            "providerExecuted": True,
            "dynamic": True,
            "title": "Run a command",
        },
        {"type": "tool-input-delta", "id": "c1", "delta": '{"command": ', "providerMetadata": META},
        {"type": "tool-input-delta", "id": "c1", "delta": '"ls"}'},
        {"type": "tool-input-end", "id": "c1", "providerMetadata": META},
        tool_call("c1", "bash", '{"command": "ls"}', provider_executed=True),
        finish_step(),
        finish(),
    ]
    harness = ScriptedHarness([script], builtin_tools={"bash": builtin(BASH_SCHEMA)})
    async with opened(harness, tmp_path) as (agent, session):
        result, parts = await stream_parts(agent, session=session, prompt="go")
        steps = await result.steps
    assert wire(parts)[1:6] == [
        {"type": "start-step", "request": {}, "warnings": []},
        {
            "type": "tool-input-start",
            "id": "c1",
            "toolName": "bash",
            "providerMetadata": META,
            "providerExecuted": True,
            "dynamic": True,
            "title": "Run a command",
        },
        {"type": "tool-input-delta", "id": "c1", "delta": '{"command": ', "providerMetadata": META},
        {"type": "tool-input-delta", "id": "c1", "delta": '"ls"}'},
        {"type": "tool-input-end", "id": "c1", "providerMetadata": META},
    ]
    # Tool-input parts are never step content: only the tool call is.
    assert [part.type for part in steps[0].content] == ["tool-call"]


@pytest.mark.requirement("STREAM-053", "STREAM-035")
async def test_tool_input_parts_alone_open_a_step_that_stays_open(tmp_path: Path) -> None:
    script = [
        {"type": "tool-input-start", "id": "c9", "toolName": "bash"},
        {"type": "tool-input-end", "id": "c9"},
        finish(),
    ]
    async with opened(ScriptedHarness([script]), tmp_path) as (agent, session):
        result, parts = await stream_parts(agent, session=session, prompt="go")
        assert await result.steps == []
    assert kinds(parts) == ["start", "start-step", "tool-input-start", "tool-input-end", "finish"]


@pytest.mark.requirement("TRANSLATE-022", "STREAM-044")
async def test_streamed_tool_input_is_work_dir_stripped_across_deltas(tmp_path: Path) -> None:
    async with opened(ScriptedHarness(), tmp_path) as (agent, session):
        work_dir = session.session_work_dir
        chunks = ['{"path": "', work_dir[:6], work_dir[6:], "/src/main.py", '"}']
        session_harness = scripted(agent)
        session_harness.turns.append(
            [
                {"type": "tool-input-start", "id": "c1", "toolName": "read"},
                *({"type": "tool-input-delta", "id": "c1", "delta": c} for c in chunks),
                {"type": "tool-input-end", "id": "c1"},
                finish(),
            ]
        )
        _, parts = await stream_parts(agent, session=session, prompt="go")
    deltas = [part.delta for part in only(parts, "tool-input-delta")]
    assert "".join(deltas) == '{"path": "src/main.py"}'
    assert all(deltas), "a delta that ends up empty is dropped"
    assert kinds(parts)[-2:] == ["tool-input-end", "finish"]


@pytest.mark.requirement("TRANSLATE-022")
async def test_held_tool_input_text_is_flushed_right_before_its_end(tmp_path: Path) -> None:
    async with opened(ScriptedHarness(), tmp_path) as (agent, session):
        work_dir = session.session_work_dir
        scripted(agent).turns.append(
            [
                {"type": "tool-input-start", "id": "c1", "toolName": "bash"},
                {"type": "tool-input-delta", "id": "c1", "delta": "cd " + work_dir},
                {"type": "tool-input-end", "id": "c1"},
                finish(),
            ]
        )
        _, parts = await stream_parts(agent, session=session, prompt="go")
    assert wire(parts)[2:6] == [
        {"type": "tool-input-start", "id": "c1", "toolName": "bash"},
        {"type": "tool-input-delta", "id": "c1", "delta": "cd "},
        {"type": "tool-input-delta", "id": "c1", "delta": "."},
        {"type": "tool-input-end", "id": "c1"},
    ]


@pytest.mark.requirement("TRANSLATE-022")
async def test_streamed_work_dir_followed_by_a_held_slash_is_stripped(tmp_path: Path) -> None:
    # A delta that ends right after "<workdir>/" is the ordinary shape of streamed JSON.
    async with opened(ScriptedHarness(), tmp_path) as (agent, session):
        work_dir = session.session_work_dir
        scripted(agent).turns.append(
            [
                {"type": "tool-input-start", "id": "c1", "toolName": "read"},
                {"type": "tool-input-delta", "id": "c1", "delta": '{"path": "' + work_dir + "/"},
                {"type": "tool-input-delta", "id": "c1", "delta": 'src/a.py"}'},
                {"type": "tool-input-end", "id": "c1"},
                finish(),
            ]
        )
        _, parts = await stream_parts(agent, session=session, prompt="go")
    deltas = [part.delta for part in only(parts, "tool-input-delta")]
    assert "".join(deltas) == '{"path": "src/a.py"}'


# -- 2.3.2 tool-call validation ----------------------------------------------------------------


async def _calls(tmp_path: Path, *calls: dict[str, Any], **settings: Any) -> list[dict[str, Any]]:
    builtins = settings.pop("builtin_tools", {"bash": builtin(BASH_SCHEMA)})
    harness = ScriptedHarness([[*calls, finish_step(), finish()]], builtin_tools=builtins)
    async with opened(harness, tmp_path, **settings) as (agent, session):
        _, parts = await stream_parts(agent, session=session, prompt="go")
    return [part.to_wire() for part in only(parts, "tool-call")]


@pytest.mark.requirement("TRANSLATE-003")
async def test_valid_call_carries_parsed_input_flag_and_metadata(tmp_path: Path) -> None:
    (call,) = await _calls(
        tmp_path,
        tool_call("c1", "bash", '{"command": "ls"}', provider_executed=True, providerMetadata=META),
    )
    assert call == {
        "type": "tool-call",
        "toolCallId": "c1",
        "toolName": "bash",
        "input": {"command": "ls"},
        "providerExecuted": True,
        "providerMetadata": META,
    }


@pytest.mark.requirement("TRANSLATE-003")
async def test_absent_provider_executed_stays_absent(tmp_path: Path) -> None:
    (call,) = await _calls(
        tmp_path, tool_call("c1", "echo", '{"x": 1}'), tools={"echo": echo_tool()}
    )
    assert call == {"type": "tool-call", "toolCallId": "c1", "toolName": "echo", "input": {"x": 1}}


@pytest.mark.requirement("TRANSLATE-004")
async def test_schema_failure_marks_call_invalid_and_dynamic_with_parsed_input(
    tmp_path: Path,
) -> None:
    harness = ScriptedHarness(
        [[tool_call("c1", "bash", '{"cmd": 1}', provider_executed=True), finish_step(), finish()]],
        builtin_tools={"bash": builtin(BASH_SCHEMA)},
    )
    async with opened(harness, tmp_path) as (agent, session):
        _, parts = await stream_parts(agent, session=session, prompt="go")
    (call,) = only(parts, "tool-call")
    assert call.invalid is True
    assert call.dynamic is True
    assert call.input == {"cmd": 1}
    assert isinstance(call.error, Exception)


@pytest.mark.requirement("TRANSLATE-004")
async def test_non_json_input_is_invalid_and_kept_as_raw_string(tmp_path: Path) -> None:
    (call,) = await _calls(tmp_path, tool_call("c1", "bash", "{not json", provider_executed=True))
    assert call["invalid"] is True
    assert call["dynamic"] is True
    assert call["input"] == "{not json"


@pytest.mark.requirement("TRANSLATE-005", "ERROR-007")
async def test_unknown_tool_is_invalid_dynamic_with_no_such_tool_error(tmp_path: Path) -> None:
    harness = ScriptedHarness(
        [[tool_call("c1", "ghost", "{}", provider_executed=True), finish_step(), finish()]],
        builtin_tools={"bash": builtin(BASH_SCHEMA)},
    )
    async with opened(harness, tmp_path, tools={"echo": echo_tool()}) as (agent, session):
        _, parts = await stream_parts(agent, session=session, prompt="go")
    (call,) = only(parts, "tool-call")
    assert (call.invalid, call.dynamic) == (True, True)
    error = call.error
    assert isinstance(error, NoSuchToolError)
    assert error.tool_name == "ghost"
    assert error.available_tools == ["bash", "echo"]


@pytest.mark.parametrize(
    ("extra", "valid"),
    [
        ({"provider_executed": True, "dynamic": True}, True),
        ({"provider_executed": True}, False),
        ({"dynamic": True}, False),
    ],
    ids=["provider-executed-dynamic", "provider-executed-only", "dynamic-only"],
)
@pytest.mark.requirement("TRANSLATE-005", "TOOLSPEC-018")
async def test_undeclared_tool_is_valid_only_when_provider_executed_and_dynamic(
    tmp_path: Path, extra: dict[str, Any], valid: bool
) -> None:
    (call,) = await _calls(tmp_path, tool_call("m1", "mcp__search", '{"q": "x"}', **extra))
    assert call["dynamic"] is True
    assert call["input"] == {"q": "x"}
    assert ("invalid" in call) is not valid


@pytest.mark.requirement("TRANSLATE-006")
async def test_empty_input_is_treated_as_empty_object(tmp_path: Path) -> None:
    (call,) = await _calls(
        tmp_path,
        tool_call("c1", "look", "", provider_executed=True),
        builtin_tools={"look": builtin()},
    )
    assert call["input"] == {}
    assert "invalid" not in call


@pytest.mark.requirement("TRANSLATE-007", "MERGE-005")
async def test_native_name_and_step_tool_call_count_are_not_forwarded(tmp_path: Path) -> None:
    (call,) = await _calls(
        tmp_path,
        tool_call(
            "c1",
            "bash",
            '{"command": "ls"}',
            provider_executed=True,
            nativeName="Bash",
            stepToolCallCount=1,
        ),
    )
    assert "nativeName" not in call
    assert "stepToolCallCount" not in call


@pytest.mark.requirement("TRANSLATE-003")
async def test_dynamic_only_when_the_declared_tool_is_dynamic(tmp_path: Path) -> None:
    dynamic_tool = Tool(description="dyn", input_schema=OBJECT, dynamic=True)
    calls = await _calls(
        tmp_path,
        tool_call("c1", "dyn", "{}", provider_executed=True),
        tool_call("c2", "bash", '{"command": "ls"}', provider_executed=True),
        tools={"dyn": dynamic_tool},
    )
    assert [call.get("dynamic") for call in calls] == [True, None]


@pytest.mark.requirement("STREAM-044")
async def test_tool_call_input_is_work_dir_stripped_for_consumers(tmp_path: Path) -> None:
    async with opened(ScriptedHarness(builtin_tools={"read": builtin()}), tmp_path) as (
        agent,
        session,
    ):
        work_dir = session.session_work_dir
        scripted(agent).turns.append(
            [
                tool_call(
                    "c1", "read", f'{{"file_path": "{work_dir}/src/a.py"}}', provider_executed=True
                ),
                finish_step(),
                finish(),
            ]
        )
        _, parts = await stream_parts(agent, session=session, prompt="go")
    (call,) = only(parts, "tool-call")
    assert call.input == {"file_path": "src/a.py"}


# -- 2.3.4 / 2.3.5 tool-result vs tool-error ----------------------------------------------------


def _weather() -> Tool:
    return tool(description="weather", input_schema=OBJECT, execute=lambda value, options: "sunny")


@pytest.mark.parametrize(
    ("call_flag", "expected"),
    [(True, "tool-error"), (False, "tool-result"), (None, "tool-result"), ("unseen", "tool-error")],
    ids=["provider-executed", "host-false", "host-absent", "call-not-in-slice"],
)
@pytest.mark.requirement("TRANSLATE-009", "TRANSLATE-010", "TRANSLATE-011")
async def test_failed_result_classification(tmp_path: Path, call_flag: Any, expected: str) -> None:
    script: list[Any] = []
    if call_flag != "unseen":
        script.append(tool_call("c1", "weather", "{}", provider_executed=call_flag))
    failure = {"error": "Error: weather unavailable"}
    script += [tool_result("c1", "weather", failure, isError=True), finish_step(), finish()]
    harness = ScriptedHarness([script], builtin_tools={"weather": builtin()})
    async with opened(harness, tmp_path, tools={"weather": _weather()}) as (agent, session):
        _, parts = await stream_parts(agent, session=session, prompt="go")
    outcomes = [p for p in wire(parts) if p["type"] in ("tool-result", "tool-error")]
    assert [p["type"] for p in outcomes] == [expected]
    (outcome,) = outcomes
    if expected == "tool-error":
        assert outcome == {
            "type": "tool-error",
            "toolCallId": "c1",
            "toolName": "weather",
            "error": failure,
            "providerExecuted": True,
        }
    else:
        assert outcome == {
            "type": "tool-result",
            "toolCallId": "c1",
            "toolName": "weather",
            "output": failure,
        }


@pytest.mark.requirement("TRANSLATE-009")
async def test_tool_error_keeps_dynamic_and_provider_metadata(tmp_path: Path) -> None:
    script = [
        tool_result("x1", "mcp__db", "boom", isError=True, dynamic=True, providerMetadata=META),
        finish_step(),
        finish(),
    ]
    async with opened(ScriptedHarness([script]), tmp_path) as (agent, session):
        _, parts = await stream_parts(agent, session=session, prompt="go")
    (outcome,) = only(parts, "tool-error")
    assert outcome.to_wire() == {
        "type": "tool-error",
        "toolCallId": "x1",
        "toolName": "mcp__db",
        "error": "boom",
        "providerExecuted": True,
        "dynamic": True,
        "providerMetadata": META,
    }
    assert outcome.input is None


@pytest.mark.parametrize(
    "optional",
    [{}, {"preliminary": True}, {"dynamic": True}, {"providerMetadata": META}],
    ids=["none", "preliminary", "dynamic", "metadata"],
)
@pytest.mark.requirement("TRANSLATE-010")
async def test_tool_result_sets_optional_keys_only_when_given(
    tmp_path: Path, optional: dict[str, Any]
) -> None:
    script = [
        tool_call("c1", "bash", '{"command": "ls"}', provider_executed=True),
        tool_result("c1", "bash", {"stdout": "a.txt"}, **optional),
        finish_step(),
        finish(),
    ]
    harness = ScriptedHarness([script], builtin_tools={"bash": builtin(BASH_SCHEMA)})
    async with opened(harness, tmp_path) as (agent, session):
        _, parts = await stream_parts(agent, session=session, prompt="go")
    (outcome,) = only(parts, "tool-result")
    assert outcome.to_wire() == {
        "type": "tool-result",
        "toolCallId": "c1",
        "toolName": "bash",
        "output": {"stdout": "a.txt"},
        **optional,
    }


@pytest.mark.requirement("STREAM-044")
async def test_tool_result_strings_are_work_dir_stripped_at_any_depth(tmp_path: Path) -> None:
    async with opened(ScriptedHarness(builtin_tools={"grep": builtin()}), tmp_path) as (
        agent,
        session,
    ):
        wd = session.session_work_dir
        result = {
            "matches": [f"{wd}/a.py:1", {"file": f"{wd}/b/c.py"}],
            "cwd": wd,
            "log": f"searched {wd}/src\nthen {wd}/lib",
            "count": 2,
        }
        scripted(agent).turns.append(
            [
                tool_call("c1", "grep", "{}", provider_executed=True),
                tool_result("c1", "grep", result),
                finish_step(),
                finish(),
            ]
        )
        _, parts = await stream_parts(agent, session=session, prompt="go")
    (outcome,) = only(parts, "tool-result")
    assert outcome.output == {
        "matches": ["a.py:1", {"file": "b/c.py"}],
        "cwd": ".",
        "log": "searched src\nthen lib",
        "count": 2,
    }


# -- 2.3.6 - 2.3.8 file-change and compaction ---------------------------------------------------


@pytest.mark.requirement("TRANSLATE-013", "TRANSLATE-002", "STREAM-044")
async def test_file_change_becomes_a_dynamic_provider_executed_pair(tmp_path: Path) -> None:
    async with opened(ScriptedHarness(), tmp_path) as (agent, session):
        wd = session.session_work_dir
        scripted(agent).turns.append(
            [
                {
                    "type": "file-change",
                    "event": "modify",
                    "path": f"{wd}/notes.md",
                    "harnessMetadata": META,
                },
                finish_step(),
                finish(),
            ]
        )
        result, parts = await stream_parts(agent, session=session, prompt="go")
        (step,) = await result.steps
    call, outcome = (p.to_wire() for p in parts[2:4])
    call_id = call["toolCallId"]
    assert call_id.startswith("harness-file-change-")
    assert SUFFIX.match(call_id.removeprefix("harness-file-change-"))
    change = {"event": "modify", "path": "notes.md"}
    assert call == {
        "type": "tool-call",
        "toolCallId": call_id,
        "toolName": "fileChange",
        "input": change,
        "providerExecuted": True,
        "dynamic": True,
        "providerMetadata": META,
    }
    assert outcome == {
        "type": "tool-result",
        "toolCallId": call_id,
        "toolName": "fileChange",
        "input": change,
        "output": change,
        "providerExecuted": True,
        "dynamic": True,
        "providerMetadata": META,
    }
    assert [p.type for p in step.content] == ["tool-call", "tool-result"]


@pytest.mark.requirement("TRANSLATE-013", "STREAM-043")
async def test_file_change_of_the_work_dir_itself_reports_dot(tmp_path: Path) -> None:
    async with opened(ScriptedHarness(), tmp_path) as (agent, session):
        wd = session.session_work_dir
        scripted(agent).turns.append(
            [{"type": "file-change", "event": "create", "path": wd}, finish_step(), finish()]
        )
        _, parts = await stream_parts(agent, session=session, prompt="go")
    assert only(parts, "tool-call")[0].input == {"event": "create", "path": "."}


@pytest.mark.parametrize(
    ("tokens", "output_tokens"),
    [
        ({"tokensBefore": 900, "tokensAfter": 120}, {"tokensBefore": 900, "tokensAfter": 120}),
        ({"tokensBefore": 900}, {"tokensBefore": 900}),
        ({}, {}),
    ],
    ids=["both-tokens", "before-only", "no-tokens"],
)
@pytest.mark.requirement("TRANSLATE-014")
async def test_compaction_becomes_a_dynamic_provider_executed_pair(
    tmp_path: Path, tokens: dict[str, int], output_tokens: dict[str, int]
) -> None:
    part = {"type": "compaction", "trigger": "auto", "summary": "shorter", **tokens}
    async with opened(ScriptedHarness([[part, finish_step(), finish()]]), tmp_path) as (
        agent,
        session,
    ):
        _, parts = await stream_parts(agent, session=session, prompt="go")
    call, outcome = (p.to_wire() for p in parts[2:4])
    call_id = call["toolCallId"]
    assert SUFFIX.match(call_id.removeprefix("harness-compaction-"))
    assert call == {
        "type": "tool-call",
        "toolCallId": call_id,
        "toolName": "compaction",
        "input": {},
        "providerExecuted": True,
        "dynamic": True,
    }
    assert outcome == {
        "type": "tool-result",
        "toolCallId": call_id,
        "toolName": "compaction",
        "input": {},
        "output": {"trigger": "auto", "summary": "shorter", **output_tokens},
        "providerExecuted": True,
        "dynamic": True,
    }


@pytest.mark.requirement("TRANSLATE-013", "TRANSLATE-014", "STREAM-047")
async def test_each_synthetic_pair_gets_a_fresh_id(tmp_path: Path) -> None:
    script = [
        {"type": "file-change", "event": "create", "path": "a"},
        {"type": "file-change", "event": "delete", "path": "b"},
        {"type": "compaction", "trigger": "manual", "summary": "s"},
        finish_step(),
        finish(),
    ]
    async with opened(ScriptedHarness([script]), tmp_path) as (agent, session):
        _, parts = await stream_parts(agent, session=session, prompt="go")
    call_ids = [p.tool_call_id for p in only(parts, "tool-call")]
    result_ids = [p.tool_call_id for p in only(parts, "tool-result")]
    assert call_ids == result_ids
    assert len(set(call_ids)) == 3


@pytest.mark.parametrize(
    "content",
    [
        {"type": "file-change", "event": "create", "path": "a.txt"},
        {"type": "compaction", "trigger": "auto", "summary": "s"},
    ],
    ids=["file-change", "compaction"],
)
@pytest.mark.requirement("TRANSLATE-015", "STREAM-035")
async def test_synthetic_pairs_are_step_content_needing_a_finish_step(
    tmp_path: Path, content: dict[str, Any]
) -> None:
    async with opened(ScriptedHarness([[content, finish()]]), tmp_path) as (agent, session):
        _, parts = await stream_parts(agent, session=session, prompt="go")
    assert kinds(parts)[-1] == "error"
    assert str(of_type(ConsumerErrorPart, parts[-1]).error) == UNCLOSED


# -- 2.3.9 raw, 2.3.11 parts never forwarded ------------------------------------------------------


@pytest.mark.requirement("TRANSLATE-016", "STREAM-035")
async def test_raw_is_forwarded_and_opens_a_step_without_being_content(tmp_path: Path) -> None:
    script = [{"type": "raw", "rawValue": {"native": [1, 2]}}, finish_step(), finish()]
    async with opened(ScriptedHarness([script]), tmp_path) as (agent, session):
        result, parts = await stream_parts(agent, session=session, prompt="go")
        (step,) = await result.steps
    assert kinds(parts) == ["start", "start-step", "raw", "finish-step", "finish"]
    assert parts[2].to_wire() == {"type": "raw", "rawValue": {"native": [1, 2]}}
    assert step.content == ()


@pytest.mark.requirement("STREAM-053", "TRANSLATE-016")
async def test_trailing_raw_only_step_is_left_open_without_failing(tmp_path: Path) -> None:
    script = [*text_step("done"), {"type": "raw", "rawValue": "bye"}, finish()]
    async with opened(ScriptedHarness([script]), tmp_path) as (agent, session):
        result, parts = await stream_parts(agent, session=session, prompt="go")
        assert len(await result.steps) == 1
    assert kinds(parts)[-4:] == ["finish-step", "start-step", "raw", "finish"]


@pytest.mark.requirement("TRANSLATE-020", "STREAM-028", "STREAM-029")
async def test_stream_start_finish_step_and_finish_are_never_forwarded_as_such(
    tmp_path: Path,
) -> None:
    script = [
        {
            "type": "stream-start",
            "modelId": "runtime-model",
            "warnings": [{"type": "other", "message": "ignored"}],
        },
        *text_step("a"),
        finish(),
    ]
    async with opened(ScriptedHarness([script]), tmp_path) as (agent, session):
        _, parts = await stream_parts(agent, session=session, prompt="go")
    assert kinds(parts) == [
        "start",
        "start-step",
        "text-start",
        "text-delta",
        "text-end",
        "finish-step",
        "finish",
    ]
    assert parts[1].to_wire() == {"type": "start-step", "request": {}, "warnings": []}
    assert of_type(ConsumerFinishStepPart, parts[5]).response.model_id == "runtime-model"


# -- 2.2.1 - 2.2.3 framing -----------------------------------------------------------------------


@pytest.mark.requirement("STREAM-027", "STREAM-030", "RESULT-003")
async def test_multi_step_framing(tmp_path: Path) -> None:
    script = [*text_step("first"), finish_step("other"), *text_step("third"), finish()]
    async with opened(ScriptedHarness([script]), tmp_path) as (agent, session):
        result, parts = await stream_parts(agent, session=session, prompt="go")
        steps = await result.steps
    text = ["text-start", "text-delta", "text-end"]
    assert kinds(parts) == [
        "start",
        "start-step",
        *text,
        "finish-step",
        "start-step",
        "finish-step",
        "start-step",
        *text,
        "finish-step",
        "finish",
    ]
    assert [step.step_number for step in steps] == [0, 1, 2]
    assert steps[1].content == ()
    assert steps[1].finish_reason == "other"


@pytest.mark.requirement("STREAM-027", "ERROR-009", "SESSION-022")
async def test_a_failed_turn_start_still_begins_with_start(tmp_path: Path) -> None:
    harness = ScriptedHarness()
    harness.prompt_error = RuntimeError("runtime is down")
    async with opened(harness, tmp_path) as (agent, session):
        result, parts = await stream_parts(agent, session=session, prompt="go")
        assert session.turn_state == "idle"
    assert kinds(parts) == ["start", "error"]
    assert str(of_type(ConsumerErrorPart, parts[-1]).error) == "runtime is down"
    with pytest.raises(RuntimeError, match="runtime is down"):
        await result.text


# -- 2.2.12 / 2.2.13 deferred outcomes -----------------------------------------------------------


@pytest.mark.requirement("STREAM-049", "STREAM-050", "RESULT-006", "RESULT-007")
async def test_tool_outcomes_are_held_until_the_step_boundary(tmp_path: Path) -> None:
    script = [
        tool_call("c1", "bash", '{"command": "a"}', provider_executed=True),
        tool_result("c1", "bash", "A"),
        {"type": "text-delta", "id": "t", "delta": "between"},
        tool_call("c2", "bash", '{"command": "b"}', provider_executed=True),
        tool_result("c2", "bash", "B", isError=True),
        finish_step("tool-calls"),
        finish(),
    ]
    harness = ScriptedHarness([script], builtin_tools={"bash": builtin(BASH_SCHEMA)})
    async with opened(harness, tmp_path) as (agent, session):
        result, parts = await stream_parts(agent, session=session, prompt="go")
        (step,) = await result.steps
    assert kinds(parts) == [
        "start",
        "start-step",
        "tool-call",
        "text-delta",
        "tool-call",
        "tool-result",
        "tool-error",
        "finish-step",
        "finish",
    ]
    assert [p.type for p in step.content] == [
        "tool-call",
        "text",
        "tool-call",
        "tool-result",
        "tool-error",
    ]


@pytest.mark.requirement("STREAM-051", "STREAM-035")
async def test_outcome_after_the_last_finish_step_is_dropped_silently(tmp_path: Path) -> None:
    script = [
        tool_call("c1", "bash", '{"command": "a"}', provider_executed=True),
        finish_step("tool-calls"),
        tool_result("c1", "bash", "late"),
        finish(),
    ]
    harness = ScriptedHarness([script], builtin_tools={"bash": builtin(BASH_SCHEMA)})
    async with opened(harness, tmp_path) as (agent, session):
        result = await agent.generate(session=session, prompt="go")
    assert result.finish_reason == "tool-calls"  # generate(): the final step's reason
    assert [p.type for p in result.steps[0].content] == ["tool-call"]
    assert all(p.type != "tool-result" for p in result.content)


# -- 2.2.5 / 2.2.8 unclosed step -----------------------------------------------------------------


@pytest.mark.parametrize(
    "script",
    [
        [{"type": "text-delta", "id": "t", "delta": "half"}, finish()],
        [{"type": "text-delta", "id": "t", "delta": "half"}],
        [{"type": "reasoning-delta", "id": "r", "delta": "hmm"}, finish()],
        [tool_call("c1", "bash", '{"command": "ls"}', provider_executed=True), finish()],
        [*text_step("ok"), finish(), {"type": "text-delta", "id": "t", "delta": "late"}],
    ],
    ids=["text-then-finish", "text-then-close", "reasoning", "tool-call", "text-after-finish"],
)
@pytest.mark.requirement("STREAM-034", "STREAM-035", "STREAM-036", "STREAM-039", "SESSION-022")
async def test_unclosed_step_content_fails_the_turn(tmp_path: Path, script: list[Any]) -> None:
    harness = ScriptedHarness([script], builtin_tools={"bash": builtin(BASH_SCHEMA)})
    async with opened(harness, tmp_path) as (agent, session):
        result, parts = await stream_parts(agent, session=session, prompt="go")
        assert session.turn_state == "idle"
    assert kinds(parts).count("error") == 1
    assert kinds(parts)[-1] == "error"
    assert "finish" not in kinds(parts)
    assert str(of_type(ConsumerErrorPart, parts[-1]).error) == UNCLOSED
    with pytest.raises(Exception, match="unclosed step content"):
        await result.steps


# -- 2.2.9 empty turn ------------------------------------------------------------------------------


@pytest.mark.requirement("STREAM-041", "RESULT-008")
async def test_finish_only_turn_has_no_steps_and_empty_text(tmp_path: Path) -> None:
    async with opened(ScriptedHarness([[finish()]]), tmp_path) as (agent, session):
        result, parts = await stream_parts(agent, session=session, prompt="go")
        assert await result.steps == []
        assert await result.text == ""
    assert kinds(parts) == ["start", "finish"]


# -- 2.2.11 identifiers ----------------------------------------------------------------------------


@pytest.mark.requirement("STREAM-047", "STREAM-048", "SESSION-024")
async def test_response_ids_share_one_call_id_per_slice(tmp_path: Path) -> None:
    turns = [[*text_step("a"), *text_step("b"), finish()], [*text_step("c"), finish()]]
    async with opened(ScriptedHarness(turns), tmp_path) as (agent, session):
        first = await agent.generate(session=session, prompt="one")
        second = await agent.generate(session=session, prompt="two")
    call_id = first.steps[0].call_id
    assert [of_type(ConsumerFinishStepPart, s.response).response.id for s in first.steps] == [
        f"{call_id}-0",
        f"{call_id}-1",
    ]
    assert first.steps[1].call_id == call_id
    other = second.steps[0].call_id
    assert other != call_id
    assert of_type(ConsumerFinishStepPart, second.steps[0].response).response.id == f"{other}-0"


@pytest.mark.requirement("STREAM-046")
async def test_adapter_ids_pass_through_unchanged(tmp_path: Path) -> None:
    script = [
        *text_step("x", block="weird id/1"),
        tool_call("call 42!", "bash", '{"command": "ls"}', provider_executed=True),
        tool_result("call 42!", "bash", "ok"),
        finish_step(),
        finish(),
    ]
    harness = ScriptedHarness([script], builtin_tools={"bash": builtin(BASH_SCHEMA)})
    async with opened(harness, tmp_path) as (agent, session):
        _, parts = await stream_parts(agent, session=session, prompt="go")
    assert only(parts, "text-delta")[0].id == "weird id/1"
    assert only(parts, "tool-call")[0].tool_call_id == "call 42!"
    assert only(parts, "tool-result")[0].tool_call_id == "call 42!"


# -- 2.2.10 strip_work_dir / StreamingStripper ----------------------------------------------------

WD = "/sandbox/mock-s1"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"{WD}/src/a.ts", "src/a.ts"),
        (WD, "."),
        (f"cd {WD}", "cd ."),
        (f"cd {WD} && ls", "cd . && ls"),
        (f"--root={WD}/lib", "--root=lib"),
        (f'"{WD}"', '"."'),
        (f"'{WD}/x'", "'x'"),
        (f"`{WD}`", "`.`"),
        (f"a\t{WD}/b\n{WD}/c", "a\tb\nc"),
        (f"{WD};ls", ".;ls"),
        (f"{WD}|wc", ".|wc"),
        (f"{WD}&", ".&"),
        (f"{WD}<in", ".<in"),
        (f"{WD}>out", ".>out"),
        (f"{WD}(x)", ".(x)"),
        (f"{WD})", ".)"),
        (f"{WD}-old", f"{WD}-old"),
        (f"{WD}.bak", f"{WD}.bak"),
        (f"x{WD}/a", f"x{WD}/a"),
        (f"({WD})", f"({WD})"),
        (f"{WD}:1", f"{WD}:1"),
        (f"{WD}/src {WD}/lib", "src lib"),
        ("/sandbox/other/a", "/sandbox/other/a"),
    ],
)
@pytest.mark.requirement("STREAM-042", "STREAM-043")
def test_strip_work_dir_boundaries(text: str, expected: str) -> None:
    assert strip_work_dir(text, WD) == expected


@pytest.mark.requirement("STREAM-044")
def test_strip_work_dir_is_a_no_op_without_a_work_dir() -> None:
    assert strip_work_dir("/sandbox/mock-s1/a", "") == "/sandbox/mock-s1/a"
    assert StreamingStripper("").push("i", "/x") == "/x"


@pytest.mark.requirement("TRANSLATE-022")
def test_streaming_stripper_holds_a_possible_prefix_until_the_next_chunk() -> None:
    stripper = StreamingStripper(WD)
    assert stripper.push("i", "cat /sand") == "cat "
    assert stripper.push("i", "box/mock-s1/f.txt") == "f.txt"
    assert stripper.flush("i") == ""


@pytest.mark.requirement("TRANSLATE-022")
def test_streaming_stripper_keeps_ids_apart() -> None:
    stripper = StreamingStripper(WD)
    assert stripper.push("a", " /sandbox") == " "
    assert stripper.push("b", "x") == "x"
    assert stripper.push("a", "/mock-s1 ") == ". "
    assert stripper.flush("b") == ""


@pytest.mark.requirement("TRANSLATE-022", "STREAM-042")
def test_streaming_stripper_does_not_strip_after_a_non_boundary_char() -> None:
    stripper = StreamingStripper(WD)
    out = stripper.push("i", "x") + stripper.push("i", f"{WD}/a") + stripper.flush("i")
    assert out == f"x{WD}/a"


_FRAGMENTS = st.sampled_from(
    [WD, " ", '"', "=", "x", "-", ";", "\n", "src/a.py", WD[:5], "/sandbox", "/m", "(", ".bak"]
)


@pytest.mark.requirement("TRANSLATE-022")
@given(
    st.lists(_FRAGMENTS, max_size=8),
    st.lists(st.integers(min_value=0, max_value=200), max_size=4),
)
def test_streaming_stripper_matches_whole_string_stripping(
    fragments: list[str], cuts: list[int]
) -> None:
    text = "".join(fragments)
    positions = sorted({cut % (len(text) + 1) for cut in cuts})
    chunks = [text[a:b] for a, b in zip([0, *positions], [*positions, len(text)], strict=True)]
    stripper = StreamingStripper(WD)
    out = "".join(stripper.push("i", chunk) for chunk in chunks) + stripper.flush("i")
    assert out == strip_work_dir(text, WD)


@pytest.mark.parametrize("tail", ["/", "/s"])
@pytest.mark.requirement("TRANSLATE-022")
def test_streaming_stripper_work_dir_then_held_slash(tail: str) -> None:
    stripper = StreamingStripper(WD)
    out = (
        stripper.push("i", f"cat {WD}{tail}") + stripper.push("i", "rc/a.py") + stripper.flush("i")
    )
    assert out == strip_work_dir(f"cat {WD}{tail}rc/a.py", WD)


# -- host failures are error parts, not translations (1.4.4) --------------------------------------


@pytest.mark.requirement("ADAPTER-049", "STREAM-036")
async def test_done_raising_appends_one_error_part(tmp_path: Path) -> None:
    script = [*text_step("partial"), Fail(RuntimeError("runtime crashed"))]
    async with opened(ScriptedHarness([script]), tmp_path) as (agent, session):
        _, parts = await stream_parts(agent, session=session, prompt="go")
    assert kinds(parts)[-2:] == ["finish-step", "error"]
    assert str(of_type(ConsumerErrorPart, parts[-1]).error) == "runtime crashed"


@pytest.mark.requirement("STREAM-049", "HOSTTOOL-005")
async def test_parts_emitted_while_a_host_call_waits_keep_their_order(tmp_path: Path) -> None:
    script = [
        tool_call("c1", "echo", '{"v": 1}'),
        WaitResult("c1"),
        tool_result("c1", "echo", {"echoed": {"v": 1}}),
        *text_step("after"),
        finish(),
    ]
    async with opened(ScriptedHarness([script]), tmp_path, tools={"echo": echo_tool()}) as (
        agent,
        session,
    ):
        _, parts = await stream_parts(agent, session=session, prompt="go")
    assert kinds(parts) == [
        "start",
        "start-step",
        "tool-call",
        "text-start",
        "text-delta",
        "text-end",
        "tool-result",
        "finish-step",
        "finish",
    ]


@pytest.mark.requirement("TRANSLATE-022")
def test_streaming_stripper_emits_a_prefix_that_follows_no_boundary() -> None:
    stripper = StreamingStripper(WD)
    assert stripper.push("i", "echo x/sand") == "echo x/sand"
    assert stripper.push("i", "box/mock-s1 /sand") == "box/mock-s1 "
    assert stripper.push("i", "box/mock-s1/a") == "a"
