"""``parse_stream_part`` names the field that failed and refuses parts it cannot bound
(too deep, containing themselves, unsafe integers) before any recursive validation."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from harness_testkit.spec import MAX_PART_DEPTH, ToolResultPart, parse_stream_part


def _nested(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(levels):
        value = {"a": [value]}
    return value


def test_an_invalid_delta_is_rejected_with_the_field_named() -> None:
    with pytest.raises(ValidationError) as caught:
        parse_stream_part({"type": "text-delta", "id": "t", "delta": 3})
    assert [error["loc"] for error in caught.value.errors()] == [("text-delta", "delta")]


def test_a_tool_result_keeps_a_copy_of_its_value() -> None:
    rows = [1, 2]
    value = {"rows": rows, "ok": True}
    part = parse_stream_part(
        {"type": "tool-result", "toolCallId": "c", "toolName": "t", "result": value}
    )
    assert isinstance(part, ToolResultPart)
    assert part.result == value
    rows.append(3)
    assert part.result == {"rows": [1, 2], "ok": True}


def test_a_tool_result_containing_itself_is_refused_as_a_cycle() -> None:
    cyclic: dict[str, Any] = {}
    cyclic["self"] = cyclic
    with pytest.raises(ValidationError, match=r"contains itself \(a cycle\)"):
        parse_stream_part(
            {"type": "tool-result", "toolCallId": "c", "toolName": "t", "result": cyclic}
        )


def test_a_part_containing_itself_is_refused_as_a_cycle() -> None:
    cyclic: dict[str, Any] = {"type": "raw", "rawValue": []}
    cyclic["rawValue"].append(cyclic)
    with pytest.raises(ValidationError, match=r"contains itself \(a cycle\)"):
        parse_stream_part(cyclic)


def test_a_part_nested_deeper_than_the_limit_is_refused() -> None:
    parse_stream_part({"type": "raw", "rawValue": _nested(MAX_PART_DEPTH // 2 - 1)})
    with pytest.raises(ValidationError, match="nested deeper"):
        parse_stream_part({"type": "raw", "rawValue": _nested(MAX_PART_DEPTH)})


@pytest.mark.parametrize("number", [2**53, -(2**53)])
def test_an_integer_outside_the_json_safe_range_is_refused(number: int) -> None:
    with pytest.raises(ValidationError, match="JSON-safe range"):
        parse_stream_part({"type": "raw", "rawValue": [number]})
    parse_stream_part({"type": "raw", "rawValue": [number - 1 if number > 0 else number + 1]})
