"""The contract models: round trips, generated valid instances, rejected corruptions."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from pydantic import ValidationError

from harness_testkit.conformance._adapter._strategies import (
    consumer_parts,
    corrupted_stream_parts,
    lifecycle_states,
    stream_parts,
    tool_specs,
)
from harness_testkit.spec import (
    STREAM_PART_TYPES,
    ContinueTurnState,
    ErrorPart,
    InvalidLifecycleStateError,
    ResumeSessionState,
    ToolCallPart,
    ToolSpec,
    parse_consumer_part,
    parse_lifecycle_state,
    parse_stream_part,
)


def _through_json(value: dict[str, Any]) -> Any:
    return json.loads(json.dumps(value))


@pytest.mark.requirement("STREAM-001")
def test_there_are_nineteen_stream_part_types() -> None:
    assert len(STREAM_PART_TYPES) == len(set(STREAM_PART_TYPES)) == 19


@pytest.mark.requirement("STREAM-002", "STREAM-003")
@given(stream_parts())
def test_every_generated_part_validates_and_round_trips(wire: dict[str, Any]) -> None:
    part = parse_stream_part(wire)
    again = parse_stream_part(_through_json(part.to_wire()))
    assert again == part
    assert again.to_wire() == part.to_wire()


@pytest.mark.parametrize("part_type", STREAM_PART_TYPES)
@pytest.mark.requirement("STREAM-002")
def test_each_type_round_trips(part_type: str) -> None:
    from hypothesis import find

    wire = find(stream_parts(part_type), lambda _: True)
    assert parse_stream_part(wire).type == part_type


@pytest.mark.requirement("STREAM-002")
@given(corrupted_stream_parts())
def test_corrupted_parts_are_rejected_with_a_readable_error(wire: dict[str, Any]) -> None:
    with pytest.raises(ValidationError) as caught:
        parse_stream_part(wire)
    message = str(caught.value)
    assert "validation error" in message


@pytest.mark.requirement("STREAM-003", "STREAM-008")
def test_wire_names_are_camel_case_and_snake_case_keys_are_refused() -> None:
    part = ToolCallPart(tool_call_id="c1", tool_name="read", input="{}", provider_executed=True)
    assert part.to_wire() == {
        "type": "tool-call",
        "toolCallId": "c1",
        "toolName": "read",
        "input": "{}",
        "providerExecuted": True,
    }
    with pytest.raises(ValidationError, match="toolCallId"):
        parse_stream_part(
            {"type": "tool-call", "tool_call_id": "c1", "toolName": "r", "input": "{}"}
        )
    with pytest.raises(ValidationError, match="provider_executed"):
        parse_stream_part(
            {
                "type": "tool-call",
                "toolCallId": "c1",
                "toolName": "r",
                "input": "{}",
                "provider_executed": True,
            }
        )


def test_error_parts_serialize_exceptions_by_name_and_message() -> None:
    wire = ErrorPart(error=RuntimeError("boom")).to_wire()
    assert wire == {"type": "error", "error": {"name": "RuntimeError", "message": "boom"}}


@pytest.mark.requirement("STREAM-002")
def test_step_tool_call_count_must_be_positive() -> None:
    with pytest.raises(ValidationError, match="stepToolCallCount"):
        parse_stream_part(
            {
                "type": "tool-call",
                "toolCallId": "c",
                "toolName": "t",
                "input": "{}",
                "stepToolCallCount": 0,
            }
        )


@pytest.mark.requirement("LIFECYCLE-004")
@given(lifecycle_states("fake"))
def test_generated_lifecycle_states_validate_and_round_trip(wire: dict[str, Any]) -> None:
    state = parse_lifecycle_state(wire, harness_id="fake")
    again = parse_lifecycle_state(_through_json(state.to_wire()), harness_id="fake")
    assert again == state


@pytest.mark.requirement("TOOLSPEC-001")
@given(tool_specs)
def test_tool_specs_round_trip(wire: dict[str, Any]) -> None:
    spec = ToolSpec.model_validate(wire, by_alias=True, by_name=False)
    assert ToolSpec.model_validate(_through_json(spec.to_wire())) == spec


_BASE = {"harnessId": "fake", "specificationVersion": "harness-v1", "data": {"cursor": 1}}


@pytest.mark.parametrize(
    ("state", "kwargs", "message"),
    [
        (
            {**_BASE, "type": "resume-session"},
            {"expected_type": "continue-turn"},
            "Lifecycle state has unexpected type 'resume-session'; expected 'continue-turn'.",
        ),
        (
            {**_BASE, "type": "nope"},
            {},
            "Lifecycle state has unexpected type 'nope'; expected 'resume-session' or 'continue-turn'.",
        ),
        (
            {**_BASE, "type": "continue-turn", "specificationVersion": "harness-v2"},
            {},
            "Lifecycle state has unexpected specificationVersion 'harness-v2'; expected 'harness-v1'.",
        ),
        (
            {**_BASE, "type": "continue-turn", "harnessId": "codex"},
            {"harness_id": "fake"},
            "Lifecycle state was produced by harness 'codex' but this agent uses 'fake'.",
        ),
        (
            {**_BASE, "type": "resume-session", "pendingToolApprovals": []},
            {},
            "Resume session state cannot contain pending tool approvals; unfinished turns must be stored as `continueFrom`.",
        ),
        (
            {**_BASE, "type": "resume-session", "pendingToolResults": []},
            {},
            "Resume session state cannot contain pending tool results; unfinished turns must be stored as `continueFrom`.",
        ),
    ],
)
@pytest.mark.requirement(
    "LIFECYCLE-008", "LIFECYCLE-009", "LIFECYCLE-010", "LIFECYCLE-011", "LIFECYCLE-012"
)
def test_lifecycle_validation_messages(
    state: dict[str, Any], kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidLifecycleStateError) as caught:
        parse_lifecycle_state(state, **kwargs)
    assert str(caught.value) == message


@pytest.mark.requirement("LIFECYCLE-015")
def test_non_object_state_and_non_json_data_are_refused_naming_the_field() -> None:
    with pytest.raises(InvalidLifecycleStateError, match="must be a JSON object"):
        parse_lifecycle_state(["not", "a", "state"])
    with pytest.raises(InvalidLifecycleStateError, match=r"data is a set"):
        parse_lifecycle_state({**_BASE, "type": "continue-turn", "data": {1, 2}})
    with pytest.raises(InvalidLifecycleStateError, match=r"harnessId"):
        parse_lifecycle_state({"type": "continue-turn", "specificationVersion": "harness-v1"})


@pytest.mark.requirement("LIFECYCLE-013", "LIFECYCLE-014")
def test_nested_continuation_is_validated_recursively_and_schema_failures_are_wrapped() -> None:
    nested = {
        **_BASE,
        "type": "resume-session",
        "continueFrom": {**_BASE, "type": "resume-session"},
    }
    with pytest.raises(InvalidLifecycleStateError, match="expected 'continue-turn'"):
        parse_lifecycle_state(nested)

    def schema(data: Any) -> Any:
        if not isinstance(data, dict) or "cursor" not in data:
            raise ValueError("cursor is required")
        return {"cursor": int(data["cursor"])}

    with pytest.raises(InvalidLifecycleStateError) as caught:
        parse_lifecycle_state({**_BASE, "type": "continue-turn", "data": {}}, data_validator=schema)
    assert (
        str(caught.value)
        == "Lifecycle state failed schema validation for harness 'fake': cursor is required"
    )
    assert isinstance(caught.value.cause, ValueError)


@pytest.mark.requirement("LIFECYCLE-017")
def test_canonical_copy_drops_unknown_keys_and_keeps_parsed_data() -> None:
    state = parse_lifecycle_state(
        {**_BASE, "type": "continue-turn", "unknown": 1}, data_validator=lambda d: {"cursor": 2}
    )
    assert isinstance(state, ContinueTurnState)
    assert state.to_wire() == {**_BASE, "type": "continue-turn", "data": {"cursor": 2}}
    resume = ResumeSessionState(harness_id="fake", data={"a": 1})
    assert resume.to_wire()["specificationVersion"] == "harness-v1"


@given(consumer_parts())
def test_every_generated_consumer_part_validates_and_round_trips(wire: dict[str, Any]) -> None:
    part = parse_consumer_part(wire)
    again = parse_consumer_part(_through_json(part.to_wire()))
    assert again == part
    assert again.to_wire() == part.to_wire()


def test_unknown_consumer_part_type_is_rejected() -> None:
    with pytest.raises(ValidationError, match="does not match any of the expected tags"):
        parse_consumer_part({"type": "text", "text": "hi"})
