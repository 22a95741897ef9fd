"""The pure translator: single harness parts in, consumer parts out (no event loop)."""

from __future__ import annotations

from typing import Any

import pytest

from harness_testkit.reference import tool
from harness_testkit.reference._translate import (
    compaction_parts,
    consumer_call,
    file_change_parts,
    harness_outcome,
    host_outcome,
    text_like_part,
)
from harness_testkit.spec import ConsumerPart, parse_stream_part

WORK = "/sandbox/w"
META = {"h": {"k": 1}}


def part(**wire: Any) -> Any:
    return parse_stream_part(wire)


def wire(consumer: ConsumerPart) -> dict[str, Any]:
    return consumer.to_wire()


@pytest.mark.requirement("TRANSLATE-001", "TRANSLATE-002", "TRANSLATE-016")
@pytest.mark.parametrize(
    ("harness", "expected", "is_content"),
    [
        (
            {"type": "text-start", "id": "t", "harnessMetadata": META},
            {"type": "text-start", "id": "t", "providerMetadata": META},
            False,
        ),
        (
            {"type": "text-delta", "id": "t", "delta": "hi", "harnessMetadata": META},
            {"type": "text-delta", "id": "t", "text": "hi", "providerMetadata": META},
            True,
        ),
        ({"type": "text-end", "id": "t"}, {"type": "text-end", "id": "t"}, False),
        ({"type": "reasoning-start", "id": "r"}, {"type": "reasoning-start", "id": "r"}, False),
        (
            {"type": "reasoning-delta", "id": "r", "delta": "so"},
            {"type": "reasoning-delta", "id": "r", "text": "so"},
            True,
        ),
        ({"type": "reasoning-end", "id": "r"}, {"type": "reasoning-end", "id": "r"}, False),
        ({"type": "raw", "rawValue": {"x": 1}}, {"type": "raw", "rawValue": {"x": 1}}, False),
    ],
)
def test_text_reasoning_and_raw_parts(
    harness: dict[str, Any], expected: dict[str, Any], is_content: bool
) -> None:
    translated = text_like_part(part(**harness))
    assert translated is not None
    consumer, content = translated
    assert wire(consumer) == expected
    assert content is is_content


def test_other_parts_are_not_text_like() -> None:
    assert text_like_part(part(type="tool-input-end", id="c")) is None


@pytest.mark.requirement("TRANSLATE-003", "TRANSLATE-004", "TRANSLATE-006")
def test_consumer_call_parses_strips_and_validates() -> None:
    tools = {
        "read": tool(
            input_schema={
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"],
            }
        )
    }
    valid = consumer_call(
        part(type="tool-call", toolCallId="c", toolName="read", input=f'{{"path":"{WORK}/a"}}'),
        WORK,
        tools,
    )
    assert wire(valid) == {
        "type": "tool-call",
        "toolCallId": "c",
        "toolName": "read",
        "input": {"path": "a"},
    }
    invalid = consumer_call(
        part(type="tool-call", toolCallId="c", toolName="read", input=""), WORK, tools
    )
    assert invalid.invalid is True
    assert invalid.dynamic is True
    # Blank text validates as {} (the error shows it) but the invalid part keeps it raw.
    assert invalid.input == ""
    assert "Invalid input for tool read" in str(invalid.error)
    assert "Value: {}." in str(invalid.error)


@pytest.mark.requirement("TRANSLATE-009", "TRANSLATE-010", "TRANSLATE-011")
def test_harness_outcomes() -> None:
    failed = part(type="tool-result", toolCallId="c", toolName="bash", result="no", isError=True)
    assert wire(harness_outcome(failed, True, WORK)) == {
        "type": "tool-error",
        "toolCallId": "c",
        "toolName": "bash",
        "error": "no",
        "providerExecuted": True,
    }
    # A host-executed call's failed result stays a tool-result.
    assert harness_outcome(failed, False, WORK).type == "tool-result"
    ok = part(type="tool-result", toolCallId="c", toolName="bash", result=f"{WORK}/x")
    assert wire(harness_outcome(ok, True, WORK)) == {
        "type": "tool-result",
        "toolCallId": "c",
        "toolName": "bash",
        "output": "x",
    }


def test_host_outcomes_carry_the_call_input() -> None:
    result = host_outcome("c", "t", {"a": 1}, {"p": f"{WORK}/f"}, is_error=False, work_dir=WORK)
    assert wire(result) == {
        "type": "tool-result",
        "toolCallId": "c",
        "toolName": "t",
        "input": {"a": 1},
        "output": {"p": "f"},
    }
    error = host_outcome("c", "t", {"a": 1}, {"error": "x"}, is_error=True, work_dir=WORK)
    assert error.type == "tool-error"


@pytest.mark.requirement("TRANSLATE-013")
def test_file_change_pair() -> None:
    call, result = file_change_parts(
        part(type="file-change", event="create", path=f"{WORK}/a.txt"),
        "harness-file-change-x",
        WORK,
    )
    value = {"event": "create", "path": "a.txt"}
    common = {"toolCallId": "harness-file-change-x", "toolName": "fileChange", "dynamic": True}
    assert wire(call) == {"type": "tool-call", **common, "input": value, "providerExecuted": True}
    assert wire(result) == {
        "type": "tool-result",
        **common,
        "input": value,
        "output": value,
        "providerExecuted": True,
    }


@pytest.mark.requirement("TRANSLATE-014")
def test_compaction_pair_omits_unknown_token_counts() -> None:
    call, result = compaction_parts(
        part(type="compaction", trigger="auto", summary="s", tokensBefore=10),
        "harness-compaction-x",
    )
    assert call.input == {}
    assert result.output == {"trigger": "auto", "summary": "s", "tokensBefore": 10}
