"""Kit-level catalogue rules checked on the contract models and helpers.

Wire shapes of harness and consumer parts (STREAM), tool specs and the built-in
vocabulary (TOOLSPEC), lifecycle state shapes and validation order (LIFECYCLE), the
built-in filter predicate (FILTER), skill paths (PROMPT), bootstrap identities and
markers (BOOTSTRAP) and the shape of kit error messages (ERROR).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, ClassVar

import jsonschema
import pytest
from pydantic import ValidationError

from harness_testkit.spec import (
    BASELINE_INPUT_SCHEMAS,
    BUILTIN_TOOL_NAMES,
    PERMISSION_MODES,
    QUESTIONS_TOOL_INPUT_SCHEMA,
    QUESTIONS_TOOL_OUTPUT_SCHEMA,
    STREAM_PART_TYPES,
    Bootstrap,
    BootstrapCommand,
    BootstrapFile,
    BuiltinToolFiltering,
    ContinueTurnState,
    HarnessError,
    InvalidLifecycleStateError,
    PendingToolApproval,
    PendingToolResult,
    ResumeSessionState,
    Skill,
    SkillFile,
    StreamPart,
    ToolSpec,
    TurnSettings,
    bootstrap_marker_path,
    common_tool,
    is_builtin_tool_included,
    parse_consumer_part,
    parse_lifecycle_state,
    parse_stream_part,
    sandbox_bootstrap_identity,
)

requirement = pytest.mark.requirement

META = {"mock": {"trace": "t-1"}}
USAGE = {
    "inputTokens": {"total": 10, "noCache": 4, "cacheRead": 5, "cacheWrite": 1},
    "outputTokens": {"total": 40, "text": 30, "reasoning": 10},
    "raw": {"vendor": "x"},
}
EMPTY_USAGE: dict[str, Any] = {"inputTokens": {}, "outputTokens": {}}


def _round_trips(wire: dict[str, Any]) -> None:
    part = parse_stream_part(wire)
    assert part.to_wire() == wire
    assert part.model_dump(mode="json", by_alias=True, exclude_none=True) == wire
    assert parse_stream_part(json.loads(json.dumps(wire))) == part


# -- STREAM: the harness part vocabulary ----------------------------------------------------------


@requirement("STREAM-001")
def test_the_part_vocabulary_is_exactly_the_nineteen_types() -> None:
    expected = [
        "stream-start",
        "text-start",
        "text-delta",
        "text-end",
        "reasoning-start",
        "reasoning-delta",
        "reasoning-end",
        "tool-input-start",
        "tool-input-delta",
        "tool-input-end",
        "tool-call",
        "tool-approval-request",
        "tool-result",
        "finish-step",
        "finish",
        "file-change",
        "compaction",
        "error",
        "raw",
    ]
    assert list(STREAM_PART_TYPES) == expected
    union_members = StreamPart.__origin__.__args__  # type: ignore[attr-defined]
    assert sorted(m.model_fields["type"].default for m in union_members) == sorted(expected)


@requirement("STREAM-002")
@pytest.mark.parametrize(
    ("wire", "field"),
    [
        ({"type": "text-delta", "id": "t"}, "delta"),
        ({"type": "tool-call", "toolCallId": "c", "toolName": "t", "input": {}}, "input"),
        ({"type": "file-change", "event": "rename", "path": "a"}, "event"),
        (
            {
                "type": "tool-call",
                "toolCallId": "c",
                "toolName": "t",
                "input": "{}",
                "stepToolCallCount": -1,
            },
            "stepToolCallCount",
        ),
    ],
    ids=["missing-delta", "input-not-text", "bad-event", "negative-count"],
)
def test_parse_stream_part_names_the_offending_field(wire: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as caught:
        parse_stream_part(wire)
    assert field in str(caught.value)


def test_parse_stream_part_selects_the_variant_by_type() -> None:
    part = parse_stream_part({"type": "raw", "rawValue": [1]})
    assert type(part).__name__ == "RawPart"
    assert parse_stream_part(part) == part


# Each rule: full examples (every optional key set), minimal examples, and rejected shapes.
_SHAPE_TABLE: list[tuple[str, list[dict[str, Any]], list[dict[str, Any]]]] = [
    (
        "STREAM-006",
        [
            {
                "type": "stream-start",
                "modelId": "m",
                "warnings": [
                    {"type": "unsupported-setting", "setting": "temperature", "details": "d"},
                    {"type": "unsupported-tool", "tool": {"name": "x"}, "details": "d"},
                    {"type": "other", "message": "m"},
                ],
            },
            {"type": "stream-start"},
        ],
        [
            {"type": "stream-start", "warnings": [{"type": "other"}]},
            {"type": "stream-start", "warnings": [{"type": "deprecated", "message": "m"}]},
        ],
    ),
    (
        "STREAM-007",
        [
            *(
                {"type": f"{kind}-{edge}", "id": "b", "harnessMetadata": META}
                for kind in ("text", "reasoning")
                for edge in ("start", "end")
            ),
            *(
                {"type": f"{kind}-delta", "id": "b", "delta": "x", "harnessMetadata": META}
                for kind in ("text", "reasoning")
            ),
            {"type": "text-delta", "id": "b", "delta": ""},
        ],
        [{"type": "reasoning-delta", "id": "b"}, {"type": "text-start"}],
    ),
    (
        "STREAM-008",
        [
            {
                "type": "tool-call",
                "toolCallId": "c",
                "toolName": "bash",
                "input": '{"command": "ls"}',
                "providerExecuted": True,
                "dynamic": True,
                "providerMetadata": META,
                "nativeName": "Bash",
                "stepToolCallCount": 2,
            },
            {"type": "tool-call", "toolCallId": "c", "toolName": "t", "input": ""},
        ],
        [
            {"type": "tool-call", "toolCallId": "c", "toolName": "t", "input": {"a": 1}},
            {"type": "tool-call", "toolName": "t", "input": "{}"},
        ],
    ),
    (
        "STREAM-012",
        [
            {
                "type": "tool-approval-request",
                "approvalId": "a",
                "toolCallId": "c",
                "providerMetadata": META,
            },
            {"type": "tool-approval-request", "approvalId": "a", "toolCallId": "c"},
        ],
        [{"type": "tool-approval-request", "approvalId": "a"}],
    ),
    (
        "STREAM-014",
        [
            {
                "type": "tool-result",
                "toolCallId": "c",
                "toolName": "t",
                "result": {"any": ["json", 1, None]},
                "isError": True,
                "preliminary": True,
                "dynamic": True,
                "providerMetadata": META,
            },
            {"type": "tool-result", "toolCallId": "c", "toolName": "t", "result": "text"},
            {"type": "tool-result", "toolCallId": "c", "toolName": "t", "result": [1, 2.5]},
        ],
        [{"type": "tool-result", "toolCallId": "c", "result": 1}],
    ),
    (
        "STREAM-016",
        [
            *(
                {
                    "type": "finish-step",
                    "finishReason": {"unified": reason, "raw": f"raw-{reason}"},
                    "usage": USAGE,
                    "harnessMetadata": META,
                }
                for reason in ("stop", "length", "content-filter", "tool-calls", "error", "other")
            ),
            {
                "type": "finish",
                "finishReason": {"unified": "stop", "raw": "end_turn"},
                "totalUsage": USAGE,
                "harnessMetadata": META,
            },
            {"type": "finish", "finishReason": {"unified": "other"}, "totalUsage": EMPTY_USAGE},
        ],
        [
            {"type": "finish-step", "finishReason": {"unified": "done"}, "usage": EMPTY_USAGE},
            {"type": "finish", "finishReason": {"unified": "stop"}, "usage": EMPTY_USAGE},
            {"type": "finish-step", "finishReason": {"unified": "stop"}},
        ],
    ),
    (
        "STREAM-017",
        [
            *(
                {"type": "file-change", "event": event, "path": "a.txt", "harnessMetadata": META}
                for event in ("create", "modify", "delete")
            ),
            {"type": "file-change", "event": "create", "path": "/abs/b"},
        ],
        [{"type": "file-change", "event": "rename", "path": "a"}],
    ),
    (
        "STREAM-020",
        [
            {
                "type": "compaction",
                "trigger": "auto",
                "summary": "s",
                "tokensBefore": 900,
                "tokensAfter": 100,
                "harnessMetadata": META,
            },
            {"type": "compaction", "trigger": "manual", "summary": ""},
        ],
        [{"type": "compaction", "trigger": "scheduled", "summary": "s"}],
    ),
    (
        "STREAM-022",
        [
            {"type": "error", "error": {"message": "boom"}},
            {"type": "error", "error": "plain"},
            {"type": "raw", "rawValue": {"native": [1, 2]}},
            {"type": "raw", "rawValue": "anything"},
        ],
        [{"type": "raw", "value": 1}],
    ),
    (
        "STREAM-025",
        [
            {
                "type": "tool-input-start",
                "id": "c",
                "toolName": "bash",
                "providerMetadata": META,
                "providerExecuted": True,
                "dynamic": True,
                "title": "Run",
            },
            {"type": "tool-input-start", "id": "c", "toolName": "bash"},
            {"type": "tool-input-delta", "id": "c", "delta": "{", "providerMetadata": META},
            {"type": "tool-input-end", "id": "c", "providerMetadata": META},
        ],
        [
            {"type": "tool-input-start", "id": "c"},
            {"type": "tool-input-delta", "id": "c", "delta": "x", "title": "no"},
        ],
    ),
    (
        "STREAM-023",
        [
            {"type": "text-start", "id": "b", "harnessMetadata": META},
            {"type": "tool-input-end", "id": "c", "providerMetadata": META},
            {
                "type": "tool-approval-request",
                "approvalId": "a",
                "toolCallId": "c",
                "providerMetadata": META,
            },
        ],
        [
            {"type": "text-start", "id": "b", "providerMetadata": META},
            {"type": "reasoning-delta", "id": "b", "delta": "x", "providerMetadata": META},
            {
                "type": "finish-step",
                "finishReason": {"unified": "stop"},
                "usage": EMPTY_USAGE,
                "providerMetadata": META,
            },
            {"type": "file-change", "event": "create", "path": "a", "providerMetadata": META},
            {"type": "compaction", "trigger": "auto", "summary": "s", "providerMetadata": META},
            {
                "type": "tool-call",
                "toolCallId": "c",
                "toolName": "t",
                "input": "{}",
                "harnessMetadata": META,
            },
            {
                "type": "tool-result",
                "toolCallId": "c",
                "toolName": "t",
                "result": 1,
                "harnessMetadata": META,
            },
            {"type": "tool-input-start", "id": "c", "toolName": "t", "harnessMetadata": META},
            {"type": "text-start", "id": "b", "harnessMetadata": {"mock": "not an object"}},
        ],
    ),
]
SHAPES = {rule: (valid, invalid) for rule, valid, invalid in _SHAPE_TABLE}


@pytest.mark.parametrize(
    "rule",
    [
        pytest.param("STREAM-006", marks=requirement("STREAM-006")),
        pytest.param("STREAM-007", marks=requirement("STREAM-007")),
        pytest.param("STREAM-008", marks=requirement("STREAM-008")),
        pytest.param("STREAM-012", marks=requirement("STREAM-012")),
        pytest.param("STREAM-014", marks=requirement("STREAM-014")),
        pytest.param("STREAM-016", marks=requirement("STREAM-016")),
        pytest.param("STREAM-017", marks=requirement("STREAM-017")),
        pytest.param("STREAM-020", marks=requirement("STREAM-020")),
        pytest.param("STREAM-022", marks=requirement("STREAM-022")),
        pytest.param("STREAM-025", marks=requirement("STREAM-025")),
        pytest.param("STREAM-023", marks=requirement("STREAM-023")),
    ],
)
def test_harness_part_shapes(rule: str) -> None:
    valid, invalid = SHAPES[rule]
    for wire in valid:
        _round_trips(wire)
    for wire in invalid:
        with pytest.raises(ValidationError):
            parse_stream_part(wire)


CONSUMER_PARTS: list[dict[str, Any]] = [
    {"type": "start"},
    {"type": "start-step", "request": {}, "warnings": []},
    {"type": "text-delta", "id": "b", "text": "hi", "providerMetadata": META},
    {"type": "reasoning-end", "id": "b"},
    {"type": "tool-input-start", "id": "c", "toolName": "bash", "providerExecuted": True},
    {"type": "tool-input-delta", "id": "c", "delta": "{"},
    {
        "type": "tool-call",
        "toolCallId": "c",
        "toolName": "bash",
        "input": {"command": "ls"},
        "providerExecuted": True,
        "dynamic": True,
        "providerMetadata": META,
    },
    {
        "type": "tool-result",
        "toolCallId": "c",
        "toolName": "fileChange",
        "input": {"event": "create", "path": "a"},
        "output": {"event": "create", "path": "a"},
        "providerExecuted": True,
        "dynamic": True,
    },
    {"type": "tool-result", "toolCallId": "c", "toolName": "t", "output": [1], "preliminary": True},
    {
        "type": "tool-error",
        "toolCallId": "c",
        "toolName": "t",
        "error": "boom",
        "providerExecuted": True,
    },
    {
        "type": "tool-approval-request",
        "approvalId": "a",
        "toolCall": {"type": "tool-call", "toolCallId": "c", "toolName": "t", "input": {}},
        "isAutomatic": True,
    },
    {
        "type": "tool-approval-response",
        "approvalId": "a",
        "toolCall": {"type": "tool-call", "toolCallId": "c", "toolName": "t", "input": {}},
        "approved": False,
        "reason": "no",
        "providerExecuted": False,
    },
    {"type": "raw", "rawValue": {"x": 1}},
    {
        "type": "finish-step",
        "response": {
            "id": "call-0",
            "timestamp": "2024-01-01T00:00:00+00:00",
            "modelId": "m",
            "messages": [],
        },
        "usage": {
            "inputTokens": 1,
            "inputTokenDetails": {"noCacheTokens": 1},
            "outputTokens": 2,
            "outputTokenDetails": {"textTokens": 2},
            "totalTokens": 3,
        },
        "finishReason": "stop",
        "rawFinishReason": "end_turn",
        "providerMetadata": META,
        "performance": {
            "effectiveOutputTokensPerSecond": 0,
            "effectiveTotalTokensPerSecond": 0,
            "stepTimeMs": 0,
            "responseTimeMs": 0,
            "toolExecutionMs": {"c": 12},
        },
    },
    {
        "type": "finish",
        "finishReason": "tool-calls",
        "totalUsage": {"inputTokenDetails": {}, "outputTokenDetails": {}},
    },
    {"type": "abort", "reason": "stopped"},
]


@requirement("STREAM-003")
@pytest.mark.parametrize("wire", CONSUMER_PARTS, ids=lambda wire: wire["type"])
def test_consumer_parts_round_trip_through_camel_case_json(wire: dict[str, Any]) -> None:
    part = parse_consumer_part(wire)
    assert part.model_dump(mode="json", by_alias=True, exclude_none=True) == wire
    assert parse_consumer_part(json.loads(json.dumps(part.to_wire()))) == part


# -- TOOLSPEC: tool specs and the built-in vocabulary ---------------------------------------------


@requirement("TOOLSPEC-001")
def test_tool_spec_wire_shape() -> None:
    schema: dict[str, Any] = {"type": "object", "properties": {"q": {"type": "string"}}}
    spec = ToolSpec(name="search", description="Search", input_schema=schema)
    assert spec.to_wire() == {"name": "search", "description": "Search", "inputSchema": schema}
    assert ToolSpec(name="bare").to_wire() == {"name": "bare"}
    assert ToolSpec.model_validate({"name": "search", "inputSchema": schema}).input_schema == schema
    with pytest.raises(ValidationError):
        ToolSpec.model_validate(
            {"name": "search", "input_schema": schema}, by_alias=True, by_name=False
        )
    with pytest.raises(ValidationError):
        ToolSpec.model_validate({"name": ""})


@requirement("TOOLSPEC-006")
def test_builtin_tool_names_in_registry_order() -> None:
    assert BUILTIN_TOOL_NAMES == (
        "read",
        "write",
        "edit",
        "bash",
        "grep",
        "glob",
        "webSearch",
        "askUserQuestions",
    )


def _strings(*names: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {name: {"type": "string"} for name in names},
        "required": list(names),
    }


@requirement("TOOLSPEC-007")
@pytest.mark.parametrize(
    ("name", "fields"),
    [
        ("read", ["file_path"]),
        ("write", ["file_path", "content"]),
        ("edit", ["file_path", "old_string", "new_string"]),
        ("bash", ["command"]),
        ("grep", ["pattern"]),
        ("glob", ["pattern"]),
        ("webSearch", ["query"]),
    ],
)
def test_baseline_input_schemas(name: str, fields: list[str]) -> None:
    assert BASELINE_INPUT_SCHEMAS[name] == _strings(*fields)
    assert common_tool(name, native_name=f"Native{name}").output_schema is None


@requirement("TOOLSPEC-011")
def test_common_tool_sets_both_names_and_checks_the_baseline() -> None:
    built = common_tool("bash", native_name="Bash", tool_use_kind="bash", description="Shell")
    assert (built.common_name, built.native_name, built.tool_use_kind) == ("bash", "Bash", "bash")
    assert built.description == "Shell"
    assert built.input_schema == BASELINE_INPUT_SCHEMAS["bash"]
    extended = {
        "type": "object",
        "properties": {"command": {"type": "string"}, "timeout": {"type": "integer"}},
        "required": ["command"],
    }
    assert common_tool("bash", native_name="Bash", input_schema=extended).input_schema == extended
    with pytest.raises(ValueError, match="not a common built-in tool name"):
        common_tool("shell", native_name="Shell")
    with pytest.raises(ValueError, match=r"does not accept every baseline input.*timeout"):
        common_tool(
            "bash",
            native_name="Bash",
            input_schema={**extended, "required": ["command", "timeout"]},
        )
    with pytest.raises(ValueError, match="baseline input"):
        common_tool("read", native_name="Read", input_schema=_strings("path"))


QUESTION = {"id": "q1", "question": "Which color?"}


@requirement("TOOLSPEC-012")
@pytest.mark.parametrize(
    ("value", "valid"),
    [
        ({"allowPartialAnswers": False, "questions": [QUESTION]}, True),
        (
            {
                "allowPartialAnswers": True,
                "questions": [
                    {
                        **QUESTION,
                        "header": "Color",
                        "options": [
                            {"id": "r", "label": "Red", "description": "d", "preview": "p"}
                        ],
                        "allowMultiple": True,
                        "allowFreeForm": {"secret": True},
                    },
                    {**QUESTION, "id": "q2", "allowFreeForm": False},
                ],
            },
            True,
        ),
        ({"allowPartialAnswers": False, "questions": []}, False),
        ({"questions": [QUESTION]}, False),
        ({"allowPartialAnswers": False, "questions": [{**QUESTION, "id": ""}]}, False),
        ({"allowPartialAnswers": False, "questions": [{**QUESTION, "question": ""}]}, False),
        ({"allowPartialAnswers": False, "questions": [{"id": "q1"}]}, False),
        (
            {
                "allowPartialAnswers": False,
                "questions": [{**QUESTION, "options": [{"id": "r", "label": ""}]}],
            },
            False,
        ),
        (
            {
                "allowPartialAnswers": False,
                "questions": [{**QUESTION, "options": [{"label": "Red"}]}],
            },
            False,
        ),
        (
            {
                "allowPartialAnswers": False,
                "questions": [{**QUESTION, "allowFreeForm": {"hidden": True}}],
            },
            False,
        ),
    ],
)
def test_questions_input_schema(value: dict[str, Any], valid: bool) -> None:
    errors = list(jsonschema.Draft202012Validator(QUESTIONS_TOOL_INPUT_SCHEMA).iter_errors(value))
    assert (not errors) is valid
    assert BASELINE_INPUT_SCHEMAS["askUserQuestions"] == QUESTIONS_TOOL_INPUT_SCHEMA


ANSWERS = {"q1": {"optionIds": ["r"], "freeform": "crimson"}, "q2": {"optionIds": []}}


@requirement("TOOLSPEC-013")
@pytest.mark.parametrize(
    ("value", "valid"),
    [
        ({"action": "answered", "answers": ANSWERS}, True),
        ({"action": "partially-answered", "answers": {"q1": {"optionIds": ["r"]}}}, True),
        ({"action": "declined"}, True),
        ({"action": "cancelled"}, True),
        ({"action": "answered"}, False),
        ({"action": "answered", "answers": {"q1": {"freeform": "x"}}}, False),
        ({"action": "answered", "answers": {"q1": {"optionIds": [1]}}}, False),
        ({"action": "skipped"}, False),
    ],
)
def test_questions_output_schema(value: dict[str, Any], valid: bool) -> None:
    errors = list(jsonschema.Draft202012Validator(QUESTIONS_TOOL_OUTPUT_SCHEMA).iter_errors(value))
    assert (not errors) is valid


@requirement("TOOLSPEC-014")
def test_questions_builtin_has_the_questions_schemas_and_no_executor() -> None:
    questions = common_tool("askUserQuestions", native_name="AskUserQuestion")
    assert questions.input_schema == QUESTIONS_TOOL_INPUT_SCHEMA
    assert questions.output_schema == QUESTIONS_TOOL_OUTPUT_SCHEMA
    assert not hasattr(questions, "execute")


@requirement("TOOLSPEC-014")
def test_questions_builtin_has_the_upstream_description() -> None:
    questions = common_tool("askUserQuestions", native_name="AskUserQuestion")
    assert questions.description == "Ask the user one or more questions"


# -- FILTER-018 -------------------------------------------------------------------------------------


@requirement("FILTER-018")
@pytest.mark.parametrize(
    ("filtering", "name", "included"),
    [
        (None, "bash", True),
        (BuiltinToolFiltering(mode="allow", tool_names=["read"]), "read", True),
        (BuiltinToolFiltering(mode="allow", tool_names=["read"]), "bash", False),
        (BuiltinToolFiltering(mode="allow", tool_names=[]), "read", False),
        (BuiltinToolFiltering(mode="deny", tool_names=["bash"]), "bash", False),
        (BuiltinToolFiltering(mode="deny", tool_names=["bash"]), "read", True),
        (BuiltinToolFiltering(mode="deny", tool_names=[]), "mcp__x", True),
    ],
)
def test_is_builtin_tool_included(
    filtering: BuiltinToolFiltering | None, name: str, included: bool
) -> None:
    assert is_builtin_tool_included(filtering, name) is included


@requirement("APPROVAL-001")
def test_permission_modes_vocabulary() -> None:
    assert set(PERMISSION_MODES) == {"allow-reads", "allow-edits", "allow-all"}


# -- LIFECYCLE: state shapes and validation ----------------------------------------------------------

APPROVAL_RECORD = {
    "approvalId": "a1",
    "toolCallId": "c1",
    "toolName": "deploy",
    "input": '{"env": "prod"}',
    "kind": "custom",
    "providerExecuted": False,
    "nativeName": "Deploy",
}
RESULT_RECORD = {
    "toolCallId": "c2",
    "toolName": "pick",
    "input": "{}",
    "providerOptions": {"ui": {"k": 1}},
    "completedResult": {
        "output": {"picked": 2},
        "isError": True,
        "toolResult": {"type": "tool-result", "toolCallId": "c2"},
    },
}
SETTINGS = {
    "model": "m",
    "skills": [{"name": "review", "description": "Review", "content": "Look."}],
    "instructions": "be brief",
    "tools": [{"name": "pick", "description": "Pick", "inputSchema": {"type": "object"}}],
}
CONTINUE = {
    "type": "continue-turn",
    "harnessId": "mock",
    "specificationVersion": "harness-v1",
    "data": {"cursor": 3},
    "pendingToolApprovals": [APPROVAL_RECORD],
    "pendingToolResults": [RESULT_RECORD],
    "turnSettings": SETTINGS,
}
RESUME = {
    "type": "resume-session",
    "harnessId": "mock",
    "specificationVersion": "harness-v1",
    "data": ["any", "json"],
    "continueFrom": CONTINUE,
}


@requirement("LIFECYCLE-001", "LIFECYCLE-002", "LIFECYCLE-003", "LIFECYCLE-004")
@pytest.mark.parametrize("wire", [CONTINUE, RESUME], ids=["continue-turn", "resume-session"])
def test_lifecycle_state_wire_shapes_round_trip(wire: dict[str, Any]) -> None:
    state = parse_lifecycle_state(wire, harness_id="mock")
    assert state.to_wire() == wire
    again = parse_lifecycle_state(json.loads(json.dumps(state.to_wire())), harness_id="mock")
    assert again == state


@requirement("LIFECYCLE-002", "LIFECYCLE-003", "LIFECYCLE-004")
def test_lifecycle_records_and_settings_are_camel_case_models() -> None:
    approval = PendingToolApproval.model_validate(APPROVAL_RECORD)
    result = PendingToolResult.model_validate(RESULT_RECORD)
    settings = TurnSettings.model_validate(SETTINGS)
    assert approval.to_wire() == APPROVAL_RECORD
    assert result.to_wire() == RESULT_RECORD
    assert settings.to_wire() == SETTINGS
    assert TurnSettings().to_wire() == {"skills": [], "tools": []}
    minimal = {
        "type": "continue-turn",
        "harnessId": "mock",
        "specificationVersion": "harness-v1",
        "data": None,
    }
    assert ContinueTurnState(harness_id="mock").to_wire() == {
        k: v for k, v in minimal.items() if v is not None
    }
    assert ResumeSessionState(harness_id="mock", data={}).to_wire()["type"] == "resume-session"
    for kind in ("builtin", "custom"):
        PendingToolApproval.model_validate({**APPROVAL_RECORD, "kind": kind})
    with pytest.raises(ValidationError):
        PendingToolApproval.model_validate({**APPROVAL_RECORD, "kind": "host"})
    with pytest.raises(ValidationError):
        PendingToolResult.model_validate({**RESULT_RECORD, "input": {"parsed": True}})


def _base(kind: str, **extra: Any) -> dict[str, Any]:
    return {
        "type": kind,
        "harnessId": "mock",
        "specificationVersion": "harness-v1",
        "data": {"cursor": 1},
        **extra,
    }


def _reject_schema(data: Any) -> Any:
    raise ValueError("schema says no")


@requirement("LIFECYCLE-014")
@pytest.mark.parametrize(
    ("state", "message"),
    [
        (
            {
                **_base("nope"),
                "specificationVersion": "v0",
                "harnessId": "other",
                "pendingToolResults": [],
            },
            "unexpected type 'nope'",
        ),
        (
            {**_base("resume-session"), "specificationVersion": "v0", "harnessId": "other"},
            "unexpected specificationVersion 'v0'",
        ),
        (
            {**_base("resume-session"), "harnessId": "other", "pendingToolApprovals": []},
            "produced by harness 'other'",
        ),
        (
            {**_base("resume-session"), "pendingToolResults": [], "data": {"bad": 1}},
            "cannot contain pending tool results",
        ),
        (_base("resume-session"), "failed schema validation"),
        (
            {**_base("resume-session", continueFrom=_base("resume-session"))},
            "failed schema validation",
        ),
    ],
    ids=[
        "type-first",
        "version-second",
        "harness-third",
        "pending-fourth",
        "schema-fifth",
        "nested-last",
    ],
)
def test_lifecycle_validation_order(state: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidLifecycleStateError) as caught:
        parse_lifecycle_state(state, harness_id="mock", data_validator=_reject_schema)
    assert message in str(caught.value)
    assert isinstance(caught.value, HarnessError)
    assert caught.value.name == "AI_HarnessError"


@requirement("LIFECYCLE-014")
def test_nested_continue_from_is_validated_as_continue_turn() -> None:
    nested = _base("resume-session", continueFrom={**_base("continue-turn"), "harnessId": "x"})
    with pytest.raises(InvalidLifecycleStateError, match="produced by harness 'x'"):
        parse_lifecycle_state(nested, harness_id="mock")
    parsed = parse_lifecycle_state(
        _base("resume-session", continueFrom=_base("continue-turn")), harness_id="mock"
    )
    assert isinstance(parsed, ResumeSessionState)
    assert isinstance(parsed.continue_from, ContinueTurnState)


@requirement("LIFECYCLE-016")
@pytest.mark.parametrize(
    ("extra", "field"),
    [
        (
            {"pendingToolApprovals": [{**APPROVAL_RECORD, "kind": "host"}]},
            "pendingToolApprovals.0.kind",
        ),
        ({"pendingToolApprovals": [{"approvalId": "a"}]}, "pendingToolApprovals.0.toolCallId"),
        ({"pendingToolResults": [{**RESULT_RECORD, "input": 5}]}, "pendingToolResults.0.input"),
        (
            {"pendingToolResults": [{**RESULT_RECORD, "completedResult": {"isError": [1]}}]},
            "pendingToolResults.0.completedResult.isError",
        ),
        ({"turnSettings": {"tools": [{"description": "no name"}]}}, "turnSettings.tools.0.name"),
        ({"turnSettings": {"skills": "review"}}, "turnSettings.skills"),
    ],
    ids=[
        "approval-kind",
        "approval-missing",
        "result-input",
        "completed-result",
        "spec-name",
        "skills",
    ],
)
def test_framework_owned_parts_are_shape_checked(extra: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidLifecycleStateError) as caught:
        parse_lifecycle_state(_base("continue-turn", **extra), harness_id="mock")
    assert field in str(caught.value)


# -- PROMPT: skill file paths ---------------------------------------------------------------------------


@requirement("PROMPT-010", "PROMPT-011", "DECISION-001")
@pytest.mark.parametrize(
    "path",
    [
        "",
        "/etc/passwd",
        "a\\b",
        "a\0b",
        "..",
        "../x",
        "a/..",
        "a/../..",
        "a/../../b",
        "./..",
        "a/./../..",
    ],
)
def test_skill_file_rejects_unsafe_paths(path: str) -> None:
    with pytest.raises(ValidationError) as caught:
        SkillFile(path=path, content="x")
    assert "Invalid skill file path" in str(caught.value)
    with pytest.raises(ValidationError, match="Invalid skill file path"):
        Skill(name="s", description="d", content="c", files=[{"path": path, "content": "x"}])  # type: ignore[list-item]


@requirement("PROMPT-010")
@pytest.mark.parametrize("path", ["a.md", "docs/guide.md", "a/b/c.txt", "..hidden", "a..b/c"])
def test_skill_file_accepts_relative_posix_paths(path: str) -> None:
    assert SkillFile(path=path, content="x").path == path


# -- BOOTSTRAP: recipe identity, snapshot identity, marker -------------------------------------------


def _recipe(**overrides: Any) -> Bootstrap:
    fields: dict[str, Any] = {
        "harness_id": "claude-code",
        "bootstrap_dir": ".harness/claude-code",
        "files": [
            BootstrapFile(path="b/run.sh", content="echo run\n"),
            BootstrapFile(path="a.json", content="{}"),
        ],
        "commands": [BootstrapCommand(command="npm install"), BootstrapCommand(command="true")],
    }
    fields.update(overrides)
    return Bootstrap(**fields)


def _expected_identity(recipe: Bootstrap) -> str:
    digest = hashlib.sha256()
    fields = [recipe.harness_id, recipe.bootstrap_dir]
    for file in sorted(recipe.files, key=lambda f: f.path):
        fields += [file.path, file.content]
    fields.append(json.dumps([c.to_wire() for c in recipe.commands], separators=(",", ":")))
    fields.append("1")
    for field in fields:
        digest.update(field.encode("utf-8") + b"\0")
    return digest.hexdigest()[:16]


@requirement("BOOTSTRAP-009")
def test_recipe_identity_algorithm() -> None:
    recipe = _recipe()
    identity = recipe.identity()
    assert identity == _expected_identity(recipe)
    assert len(identity) == 16
    assert identity == identity.lower()
    int(identity, 16)


@requirement("BOOTSTRAP-010")
@pytest.mark.parametrize(
    "change",
    [
        {"harness_id": "codex"},
        {"bootstrap_dir": ".harness/other"},
        {
            "files": [
                BootstrapFile(path="a.json", content="{ }"),
                BootstrapFile(path="b/run.sh", content="echo run\n"),
            ]
        },
        {"commands": [BootstrapCommand(command="npm ci"), BootstrapCommand(command="true")]},
    ],
    ids=["harness-id", "bootstrap-dir", "file-content", "command"],
)
def test_recipe_identity_changes_with_any_field(change: dict[str, Any]) -> None:
    assert _recipe(**change).identity() != _recipe().identity()


@requirement("BOOTSTRAP-010")
def test_recipe_identity_ignores_file_order() -> None:
    reordered = _recipe(files=list(reversed(_recipe().files)))
    assert reordered.identity() == _recipe().identity()


def _hash(*fields: str) -> str:
    return hashlib.sha256(b"".join(f.encode() + b"\0" for f in fields)).hexdigest()[:16]


@requirement("BOOTSTRAP-012")
@pytest.mark.parametrize(
    ("recipe", "kwargs", "expected"),
    [
        ("r" * 16, {}, "r" * 16),
        (None, {}, None),
        ("r" * 16, {"bootstrap_hash": "h"}, "r" * 16),
        (None, {"work_dir": "repo"}, None),
        ("r" * 16, {"work_dir": "repo"}, _hash("1", "r" * 16, "", "repo")),
        (None, {"has_on_bootstrap": True, "bootstrap_hash": "h"}, _hash("1", "", "h", "")),
        (
            "r" * 16,
            {"has_on_bootstrap": True, "bootstrap_hash": "h", "work_dir": "repo"},
            _hash("1", "r" * 16, "h", "repo"),
        ),
    ],
    ids=[
        "recipe-only",
        "nothing",
        "hash-without-hook",
        "work-dir-only",
        "recipe-and-work-dir",
        "hook",
        "all",
    ],
)
def test_snapshot_identity(
    recipe: str | None, kwargs: dict[str, Any], expected: str | None
) -> None:
    assert sandbox_bootstrap_identity(recipe, **kwargs) == expected


@requirement("BOOTSTRAP-013")
@pytest.mark.parametrize(
    ("bootstrap_dir", "expected"),
    [
        (".harness/x", "/home/u/.harness/x/.bootstrap-0123456789abcdef.ok"),
        ("/opt/harness/", "/opt/harness/.bootstrap-0123456789abcdef.ok"),
        ("./tools/../cache", "/home/u/cache/.bootstrap-0123456789abcdef.ok"),
    ],
)
def test_marker_path(bootstrap_dir: str, expected: str) -> None:
    assert bootstrap_marker_path(bootstrap_dir, "0123456789abcdef", "/home/u") == expected


# -- ERROR-013: kit errors are full sentences naming the culprit -----------------------------------


def _raise_skill() -> None:
    Skill(name="a/b", description="d", content="c")


def _raise_builtin() -> None:
    common_tool("shell", native_name="Shell")


def _raise_state() -> None:
    parse_lifecycle_state(
        {
            "type": "continue-turn",
            "specificationVersion": "harness-v1",
            "harnessId": "h",
            "data": {1},
        }
    )


def _raise_bootstrap() -> None:
    from harness_testkit.reference import HarnessAgent, SandboxConfig

    class _Harness:
        specification_version = "harness-v1"
        harness_id = "h"
        builtin_tools: ClassVar[dict[str, Any]] = {}
        supports_builtin_tool_approvals = False
        supports_builtin_tool_filtering = False

    HarnessAgent(harness=_Harness(), sandbox_config=SandboxConfig(work_dir="../x"))  # type: ignore[arg-type]


def _raise_skill_file() -> None:
    SkillFile(path="../x", content="")


@requirement("ERROR-013")
@pytest.mark.parametrize(
    ("trigger", "culprit"),
    [
        (_raise_skill, "a/b"),
        (_raise_builtin, "shell"),
        (_raise_state, "data"),
        (_raise_bootstrap, "workDir"),
        (_raise_skill_file, "../x"),
    ],
    ids=["skill-name", "builtin-name", "lifecycle-data", "work-dir", "skill-file"],
)
def test_kit_errors_are_sentences_naming_the_culprit(trigger: Any, culprit: str) -> None:
    with pytest.raises((ValueError, InvalidLifecycleStateError)) as caught:
        trigger()
    error = caught.value
    if isinstance(error, ValidationError):
        message = str(error.errors()[0]["ctx"]["error"])
    else:
        message = str(error)
    assert culprit in message
    assert message.endswith(".")
    assert message[0].isupper() or message[0] in "'`"
