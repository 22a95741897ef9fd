"""Kit-level catalogue rules on parts and tools, checked on the contract models.

Wire shapes of harness and consumer parts (STREAM), tool specs, the built-in vocabulary
and the questions tool (TOOLSPEC), and the built-in filter predicate (FILTER). The
session-side rules (LIFECYCLE, PROMPT, BOOTSTRAP, ERROR) are in
``test_rules_kit_session.py``.
"""

from __future__ import annotations

import json
from typing import Any, get_args

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
    BuiltinToolFiltering,
    StreamPart,
    ToolSpec,
    common_tool,
    is_builtin_tool_included,
    is_execution_denied,
    parse_consumer_part,
    parse_stream_part,
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
    union, *_ = get_args(StreamPart)  # Annotated[<the union>, <discriminator>]
    union_members = get_args(union)
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


@requirement("HOSTTOOL-006")
@pytest.mark.parametrize(
    ("output", "denied"),
    [
        ({"type": "execution-denied"}, True),
        ({"type": "execution-denied", "reason": "no"}, True),
        ({"type": "execution-denied", "reason": "no", "providerOptions": {}}, True),
        ({"type": "execution-denied", "reason": "no", "value": 1}, False),
        ({"type": "error-text", "value": "no"}, False),
        ("execution-denied", False),
        (None, False),
    ],
)
def test_is_execution_denied_knows_the_denial_output(output: object, denied: bool) -> None:
    """A runtime delivers this output as a denial, never as a success (HOSTTOOL-006)."""
    assert is_execution_denied(output) is denied


@requirement("APPROVAL-001")
def test_permission_modes_vocabulary() -> None:
    assert set(PERMISSION_MODES) == {"allow-reads", "allow-edits", "allow-all"}
