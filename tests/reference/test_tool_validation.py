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
from harness_testkit.reference._tool import (
    _plain_check,
    parse_tool_call_input,
    validate_json_schema,
)
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


def _count_schema_checks(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The schemas checked against the metaschema from now on (the caches emptied)."""
    monkeypatch.setattr(tool_module, "_BY_CONTENT", OrderedDict())
    checked: list[object] = []
    real = jsonschema.Draft202012Validator.check_schema

    def counting(schema: Any, *args: Any, **kwargs: Any) -> None:
        checked.append(schema)
        real(schema, *args, **kwargs)

    monkeypatch.setattr(jsonschema.Draft202012Validator, "check_schema", counting)
    return checked


def test_a_tools_validator_is_built_once(monkeypatch: pytest.MonkeyPatch) -> None:
    cache: OrderedDict[int, Any] = OrderedDict()
    monkeypatch.setattr(tool_module, "_VALIDATORS", cache)
    checked = _count_schema_checks(monkeypatch)
    bash = BuiltinTool(input_schema=dict(SCHEMA), common_name="bash", native_name="Bash")
    host = tool(input_schema=dict(SCHEMA))
    tools: dict[str, Tool | BuiltinTool] = {"bash": bash, "host": host}
    for index in range(5):
        for name in tools:
            parsed = parse_tool_call_input(
                name, f'{{"command": "echo {index}"}}', tools, provider_executed=None, dynamic=None
            )
            assert not parsed.invalid
    # One metaschema check for the two equal schemas, not one per call or per tool.
    assert len(checked) == 1
    assert [entry[0] for entry in cache.values()] == [bash.input_schema, host.input_schema]
    first, second = cache.values()
    assert first[1] is second[1], "equal schemas share one validator"


def test_schemas_of_other_content_are_checked_on_their_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(tool_module, "_VALIDATORS", OrderedDict())
    checked = _count_schema_checks(monkeypatch)
    schemas = [
        {"type": "object", "properties": {"n": {"const": 1}}},
        {"type": "object", "properties": {"n": {"const": 1.0}}},
        {"type": "object", "properties": {"n": {"const": True}}},
        # The first in another key order: jsonschema's best match follows the order.
        {"properties": {"n": {"const": 1}}, "type": "object"},
        {"type": "object", "properties": {"n": {"const": 1}}},  # the first again
    ]
    for schema, value in zip(schemas, [1, 1, True, 1, 1], strict=True):
        validate_json_schema({"n": value}, schema)
    assert len(checked) == 4
    with pytest.raises(jsonschema.ValidationError):
        validate_json_schema({"n": 1}, schemas[2])  # True is not 1 in JSON Schema
    not_json: dict[Any, Any] = {"type": "object", 1: "a key JSON cannot hold"}
    validate_json_schema({}, not_json)  # validated, never shared
    assert len(checked) == 5


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


# -- the plain check: a quick "valid" for the common tool-schema shape -----------------

_TYPE_NAMES = ["string", "boolean", "integer", "number", "object", "array", "null"]
_PLAIN_SCHEMAS = st.fixed_dictionaries(
    {
        "type": st.just("object"),
        "properties": st.dictionaries(
            st.sampled_from(["a", "b", "c"]),
            st.one_of(
                st.builds(lambda kind: {"type": kind}, st.sampled_from(_TYPE_NAMES)),
                st.just({"description": "anything"}),
            ),
            max_size=3,
        ),
    },
    optional={
        "required": st.lists(st.sampled_from(["a", "b", "c", "d"]), unique=True, max_size=3),
        "additionalProperties": st.booleans(),
        "description": st.text(max_size=3),
    },
)
_JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([1.0, -2.0, 0.5])
    | st.text(max_size=2),
    lambda inner: (
        st.lists(inner, max_size=2)
        | st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), inner, max_size=4)
    ),
    max_leaves=6,
)


@given(schema=_PLAIN_SCHEMAS, value=_JSON_VALUES)
def test_the_plain_check_decides_json_values_as_jsonschema_does(
    schema: dict[str, Any], value: Any
) -> None:
    check = _plain_check(schema)
    assert check is not None
    # On parsed JSON the verdict is exact (so valid input never pays for jsonschema);
    # validate_json_schema relies only on "True means valid".
    assert check(value) == (_expected_error(value, schema) is None), (schema, value)


@pytest.mark.parametrize(
    "schema",
    [
        SCHEMA,  # minLength, minimum
        {"type": "object", "properties": {"a": {"type": ["string", "null"]}}},
        {"$schema": "http://json-schema.org/draft-04/schema#", "type": "object"},
        {"type": "object", "patternProperties": {"^x": {"type": "string"}}},
        {"type": "array"},
        {"type": "object", "additionalProperties": {"type": "string"}},
    ],
)
def test_other_schemas_are_left_to_jsonschema(schema: dict[str, Any]) -> None:
    assert _plain_check(schema) is None


def test_a_plain_schema_still_rejects_with_jsonschemas_message() -> None:
    schema = {
        "type": "object",
        "properties": {"command": {"type": "string"}},
        "required": ["command"],
        "additionalProperties": False,
    }
    validate_json_schema({"command": "ls"}, schema)
    for value, message in [
        ({"command": 3}, "3 is not of type 'string'"),
        ({}, "'command' is a required property"),
        ({"command": "ls", "x": 1}, "Additional properties are not allowed ('x' was unexpected)"),
    ]:
        with pytest.raises(jsonschema.ValidationError) as caught:
            validate_json_schema(value, schema)
        assert caught.value.message == message


def test_a_shared_validator_keeps_its_own_copy_of_the_schema(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(tool_module, "_VALIDATORS", OrderedDict())
    checked = _count_schema_checks(monkeypatch)
    first: dict[str, Any] = {"type": "object", "properties": {"n": {"type": "integer"}}}
    second = {"type": "object", "properties": {"n": {"type": "integer"}}}
    validate_json_schema({"n": 1}, first)
    first["properties"]["n"]["type"] = "string"  # its owner changes the first schema
    validate_json_schema({"n": 1}, second)
    with pytest.raises(jsonschema.ValidationError):  # the second's "n" is still an integer
        validate_json_schema({"n": "x"}, second)
    assert len(checked) == 1
