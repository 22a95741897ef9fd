"""Tool input validation: one validator per tool schema, ``jsonschema.validate``'s outcome."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness_testkit.reference import Tool, tool
from harness_testkit.reference import _tool as tool_module
from harness_testkit.reference._tool import parse_tool_call_input, validate_json_schema
from harness_testkit.spec import BuiltinTool

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "command": {"type": "string", "minLength": 1},
        "timeout": {"type": "integer", "minimum": 0},
    },
    "required": ["command"],
    "additionalProperties": False,
}


def _expected_error(value: Any, schema: dict[str, Any]) -> str | None:
    try:
        jsonschema.validate(value, schema)
    except jsonschema.ValidationError as error:
        return error.message
    return None


def test_a_tools_validator_is_built_once(monkeypatch: pytest.MonkeyPatch) -> None:
    cache: OrderedDict[int, Any] = OrderedDict()
    monkeypatch.setattr(tool_module, "_VALIDATORS", cache)
    checked: list[object] = []
    real = jsonschema.Draft202012Validator.check_schema

    def counting(schema: Any, *args: Any, **kwargs: Any) -> None:
        checked.append(schema)
        real(schema, *args, **kwargs)

    monkeypatch.setattr(jsonschema.Draft202012Validator, "check_schema", counting)
    bash = BuiltinTool(input_schema=dict(SCHEMA), common_name="bash", native_name="Bash")
    host = tool(input_schema=dict(SCHEMA))
    tools: dict[str, Tool | BuiltinTool] = {"bash": bash, "host": host}
    for index in range(5):
        for name in tools:
            parsed = parse_tool_call_input(
                name, f'{{"command": "echo {index}"}}', tools, provider_executed=None, dynamic=None
            )
            assert not parsed.invalid
    assert len(checked) == 2  # one metaschema check per tool schema, not one per call
    assert [schema for schema, _ in cache.values()] == [bash.input_schema, host.input_schema]


def test_an_equal_but_distinct_schema_gets_its_own_validator() -> None:
    first = {"type": "object", "required": ["a"]}
    second = {"type": "object", "required": ["b"]}
    validate_json_schema({"a": 1}, first)
    with pytest.raises(jsonschema.ValidationError, match="'b' is a required property"):
        validate_json_schema({"a": 1}, second)


def test_an_invalid_schema_still_raises_schema_error() -> None:
    with pytest.raises(jsonschema.SchemaError):
        validate_json_schema({}, {"type": "no-such-type"})
    with pytest.raises(jsonschema.SchemaError):  # not cached as valid on a second call
        validate_json_schema({}, {"type": "no-such-type"})


_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.text(max_size=3),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["command", "timeout", "x"]), inner, max_size=3)
    ),
    max_leaves=6,
)


@given(value=_VALUES)
def test_outcome_and_message_match_jsonschema_validate(value: Any) -> None:
    expected = _expected_error(value, SCHEMA)
    if expected is None:
        validate_json_schema(value, SCHEMA)
    else:
        with pytest.raises(jsonschema.ValidationError) as caught:
            validate_json_schema(value, SCHEMA)
        assert caught.value.message == expected


def test_invalid_tool_input_keeps_its_error_text() -> None:
    tools = {"bash": BuiltinTool(input_schema=SCHEMA, common_name="bash", native_name="Bash")}
    parsed = parse_tool_call_input(
        "bash", '{"command": 3}', tools, provider_executed=True, dynamic=None
    )
    assert parsed.invalid
    # The AI SDK's InvalidToolInputError text (the oracle's committed official outputs).
    assert str(parsed.error) == (
        "Invalid input for tool bash: AI_TypeValidationError: Type validation failed: "
        "Value: {\"command\":3}.\nError message: 3 is not of type 'string'"
    )
