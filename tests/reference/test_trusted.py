"""Models the agent builds from validated values without re-validating them (``from_trusted``)
equal, dump, repr and copy as the constructor's: usages, block boundaries, tool calls,
tool outcomes and the consumer ``finish-step``."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from harness_testkit.reference import tool
from harness_testkit.reference._agent import _turn_settings
from harness_testkit.reference._part_queue import PartQueue
from harness_testkit.reference._results import (
    StepResult,
    TextContent,
    add_usage,
    normalize_usage,
    step_result,
    usage_of_totals,
)
from harness_testkit.reference._session import _turn_options
from harness_testkit.reference._strip import strip_value, strip_work_dir
from harness_testkit.reference._tool import parse_json_text, parse_tool_call_input
from harness_testkit.reference._translate import (
    consumer_call,
    finish_step_part,
    harness_outcome,
    text_like_part,
    wire_outcome,
)
from harness_testkit.reference._turn_state import FrozenTurn
from harness_testkit.reference._wire import wire_tool_result
from harness_testkit.spec import (
    ConsumerFinishStepPart,
    ConsumerReasoningEndPart,
    ConsumerReasoningStartPart,
    ConsumerTextEndPart,
    ConsumerTextStartPart,
    ConsumerToolCallPart,
    ConsumerToolErrorPart,
    ConsumerToolResultPart,
    ContinueTurnOptions,
    FinishReason,
    InputTokenDetails,
    JsonResponseFormat,
    LanguageModelUsage,
    OutputTokenDetails,
    PromptTurnOptions,
    Skill,
    StepResponse,
    TextStartPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
    TurnSettings,
    Usage,
    WireModel,
    parse_stream_part,
)

_COUNTS = st.one_of(st.none(), st.integers(min_value=0, max_value=10**9))


def _assert_same(built: WireModel, expected: WireModel) -> None:
    assert type(built) is type(expected)
    assert built == expected
    assert repr(built) == repr(expected)
    assert built.to_wire() == expected.to_wire()
    assert built.model_fields_set == expected.model_fields_set
    assert built.model_dump(exclude_unset=True) == expected.model_dump(exclude_unset=True)
    assert built.model_copy(deep=True) == expected.model_copy(deep=True)


def _expected_usage(usage: Usage) -> LanguageModelUsage:
    """normalize_usage as the validating constructors compute it."""
    inputs, outputs = usage.input_tokens, usage.output_tokens
    total = (
        None
        if inputs.total is None and outputs.total is None
        else (inputs.total or 0) + (outputs.total or 0)
    )
    return LanguageModelUsage(
        input_tokens=inputs.total,
        input_token_details=InputTokenDetails(
            no_cache_tokens=inputs.no_cache,
            cache_read_tokens=inputs.cache_read,
            cache_write_tokens=inputs.cache_write,
        ),
        output_tokens=outputs.total,
        output_token_details=OutputTokenDetails(
            text_tokens=outputs.text, reasoning_tokens=outputs.reasoning
        ),
        total_tokens=total,
        raw=usage.raw,
    )


_USAGES = st.builds(
    lambda i, nc, cr, cw, o, t, r, raw: Usage.model_validate(
        {
            "inputTokens": {"total": i, "noCache": nc, "cacheRead": cr, "cacheWrite": cw},
            "outputTokens": {"total": o, "text": t, "reasoning": r},
            "raw": raw,
        }
    ),
    *([_COUNTS] * 7),
    st.one_of(st.none(), st.just({"vendor": {"n": 1}})),
)


@given(usage=_USAGES)
def test_normalized_usage_is_the_constructors(usage: Usage) -> None:
    _assert_same(normalize_usage(usage), _expected_usage(usage))
    _assert_same(normalize_usage(None), LanguageModelUsage())


@given(
    inputs=st.integers(min_value=-(2**53 - 1), max_value=2**53 - 1),
    outputs=st.integers(min_value=-(2**53 - 1), max_value=2**53 - 1),
)
def test_a_usage_of_totals_only_is_the_constructors(inputs: int, outputs: int) -> None:
    # What a finish with only token totals is read as, straight from the wire.
    usage = Usage.model_validate(
        {"inputTokens": {"total": inputs}, "outputTokens": {"total": outputs}}
    )
    _assert_same(usage_of_totals(inputs, outputs), _expected_usage(usage))


def test_usages_without_details_share_one_immutable_instance_of_each() -> None:
    first = normalize_usage(Usage.model_validate({"inputTokens": {"total": 1}, "outputTokens": {}}))
    second = add_usage(first, first)
    assert first.input_token_details is second.input_token_details
    assert first.output_token_details is second.output_token_details
    assert first.input_token_details == InputTokenDetails()
    shared = first.input_token_details
    with pytest.raises(ValidationError, match="frozen"):
        shared.no_cache_tokens = 3  # the point: it cannot change
    assert shared.model_copy(update={"no_cache_tokens": 3}) is not shared
    # A usage with details gets its own.
    cached = normalize_usage(
        Usage.model_validate({"inputTokens": {"total": 2, "cacheRead": 1}, "outputTokens": {}})
    )
    assert cached.input_token_details is not shared
    assert cached.input_token_details.cache_read_tokens == 1


def _add(left: int | None, right: int | None) -> int | None:
    return None if left is None and right is None else (left or 0) + (right or 0)


@given(left=_USAGES, right=_USAGES)
def test_summed_usage_is_the_constructors(left: Usage, right: Usage) -> None:
    a, b = normalize_usage(left), normalize_usage(right)
    ai, bi, ao, bo = (
        a.input_token_details,
        b.input_token_details,
        a.output_token_details,
        b.output_token_details,
    )
    expected = LanguageModelUsage(
        input_tokens=_add(a.input_tokens, b.input_tokens),
        input_token_details=InputTokenDetails(
            no_cache_tokens=_add(ai.no_cache_tokens, bi.no_cache_tokens),
            cache_read_tokens=_add(ai.cache_read_tokens, bi.cache_read_tokens),
            cache_write_tokens=_add(ai.cache_write_tokens, bi.cache_write_tokens),
        ),
        output_tokens=_add(a.output_tokens, b.output_tokens),
        output_token_details=OutputTokenDetails(
            text_tokens=_add(ao.text_tokens, bo.text_tokens),
            reasoning_tokens=_add(ao.reasoning_tokens, bo.reasoning_tokens),
        ),
        total_tokens=_add(a.total_tokens, b.total_tokens),
    )
    _assert_same(add_usage(a, b), expected)


_BOUNDARY_MODELS: dict[str, Any] = {
    "text-start": ConsumerTextStartPart,
    "text-end": ConsumerTextEndPart,
    "reasoning-start": ConsumerReasoningStartPart,
    "reasoning-end": ConsumerReasoningEndPart,
}


class _OwnTextStart(TextStartPart):
    """A subclass an adapter might emit as a model: still a text start."""


@given(
    kind=st.sampled_from(sorted(_BOUNDARY_MODELS)),
    block_id=st.text(max_size=5),
    metadata=st.one_of(st.none(), st.just({"h": {"k": "v"}})),
)
def test_block_boundaries_are_the_constructors(
    kind: str, block_id: str, metadata: dict[str, Any] | None
) -> None:
    wire: dict[str, Any] = {"type": kind, "id": block_id}
    if metadata is not None:
        wire["harnessMetadata"] = metadata
    translated = text_like_part(parse_stream_part(wire))
    assert translated is not None
    built, is_content = translated
    assert not is_content
    _assert_same(built, _BOUNDARY_MODELS[kind](id=block_id, provider_metadata=metadata))


def test_a_boundary_subclass_is_translated_as_its_base() -> None:
    translated = text_like_part(_OwnTextStart(id="t"))
    assert translated is not None
    _assert_same(translated[0], ConsumerTextStartPart(id="t", provider_metadata=None))


@given(
    result=st.one_of(
        st.none(),
        st.integers(-(2**53) + 1, 2**53 - 1),
        st.text(max_size=3),
        st.just({"a": [1, "/w/x"]}),
    ),
    is_error=st.sampled_from([None, True, False]),
    preliminary=st.sampled_from([None, True, False]),
    dynamic=st.sampled_from([None, True, False]),
    metadata=st.one_of(st.none(), st.just({"p": {"k": 1}})),
    provider_executed=st.booleans(),
)
def test_harness_outcomes_are_the_constructors(
    result: Any,
    is_error: bool | None,
    preliminary: bool | None,
    dynamic: bool | None,
    metadata: dict[str, Any] | None,
    provider_executed: bool,
) -> None:
    wire: dict[str, Any] = {"type": "tool-result", "toolCallId": "c", "toolName": "t"}
    wire.update(result=result, isError=is_error, preliminary=preliminary, dynamic=dynamic)
    wire["providerMetadata"] = metadata
    part = parse_stream_part(wire)
    assert isinstance(part, ToolResultPart)
    value = strip_value(result, "/w")
    expected: WireModel
    if is_error is True and provider_executed:
        expected = ConsumerToolErrorPart(
            tool_call_id="c",
            tool_name="t",
            error=value,
            provider_executed=True,
            dynamic=dynamic,
            provider_metadata=metadata,
        )
    else:
        expected = ConsumerToolResultPart(
            tool_call_id="c",
            tool_name="t",
            output=value,
            preliminary=preliminary,
            dynamic=dynamic,
            provider_metadata=metadata,
        )
    _assert_same(harness_outcome(part, provider_executed, "/w"), expected)
    if metadata is None:  # a plain result, read straight from the wire
        read = wire_tool_result({k: v for k, v in wire.items() if k != "providerMetadata"}, "/w")
        assert read is not None
        _assert_same(wire_outcome(read, provider_executed), expected)


_BASH = tool(input_schema={"type": "object", "properties": {"command": {"type": "string"}}})


@given(
    name=st.sampled_from(["bash", "unknown"]),
    text=st.sampled_from(['{"command": "ls"}', '{"command": 1}', "not json", ""]),
    provider_executed=st.sampled_from([None, True, False]),
    dynamic=st.sampled_from([None, True, False]),
    metadata=st.one_of(st.none(), st.just({"p": {"k": 1}})),
)
def test_consumer_calls_are_the_constructors(
    name: str,
    text: str,
    provider_executed: bool | None,
    dynamic: bool | None,
    metadata: dict[str, Any] | None,
) -> None:
    part = ToolCallPart(
        tool_call_id="c",
        tool_name=name,
        input=text,
        provider_executed=provider_executed,
        dynamic=dynamic,
        provider_metadata=metadata,
    )
    tools = {"bash": _BASH}
    parsed = parse_tool_call_input(
        name, text, tools, provider_executed=provider_executed, dynamic=dynamic
    )
    expected = ConsumerToolCallPart(
        tool_call_id="c",
        tool_name=name,
        input=parsed.input,
        provider_executed=provider_executed,
        dynamic=True if parsed.dynamic else None,
        provider_metadata=metadata,
        invalid=True if parsed.invalid else None,
        error=parsed.error,
    )
    built = consumer_call(part, "/w", tools)
    # The error objects are equal by message, not identity.
    assert repr(built.error) == repr(expected.error)
    _assert_same(
        built.model_copy(update={"error": None}), expected.model_copy(update={"error": None})
    )


@given(
    usage=_USAGES,
    unified=st.sampled_from(["stop", "tool-calls", "length", "other"]),
    raw=st.one_of(st.none(), st.text(max_size=4)),
    model_id=st.sampled_from(["", "model-1"]),
    metadata=st.one_of(st.none(), st.just({"h": {"k": [1, {"n": None}]}})),
)
def test_finish_step_parts_are_the_constructors(
    usage: Usage,
    unified: str,
    raw: str | None,
    model_id: str,
    metadata: dict[str, Any] | None,
) -> None:
    reason = FinishReason.model_validate({"unified": unified, "raw": raw})
    consumer_usage = normalize_usage(usage)
    timestamp = "2026-01-01T00:00:00+00:00"
    built = finish_step_part(
        "call-3", timestamp, model_id, consumer_usage, reason.unified, reason.raw, metadata
    )
    expected = ConsumerFinishStepPart(
        response=StepResponse(id="call-3", timestamp=timestamp, model_id=model_id),
        usage=consumer_usage,
        finish_reason=reason.unified,
        raw_finish_reason=reason.raw,
        provider_metadata=metadata,
    )
    _assert_same(built, expected)
    _assert_same(built.response, expected.response)
    # Fresh mutable defaults per part, as the constructor makes them.
    other = finish_step_part(
        "call-4", timestamp, model_id, consumer_usage, reason.unified, reason.raw, metadata
    )
    assert other.response.messages is not built.response.messages
    assert other.performance is not built.performance
    assert other.performance["toolExecutionMs"] is not built.performance["toolExecutionMs"]
    if metadata is not None:
        assert built.provider_metadata is not metadata  # copied, as the constructor copies


def _strip_reference(value: Any, work_dir: str) -> Any:
    """strip_value as first written: every nested string stripped, containers rebuilt."""
    if not work_dir:
        return value
    if isinstance(value, str):
        return strip_work_dir(value, work_dir)
    if isinstance(value, list):
        return [_strip_reference(item, work_dir) for item in value]
    if isinstance(value, dict):
        return {key: _strip_reference(item, work_dir) for key, item in value.items()}
    return value


class _Name(str):
    """A ``str`` subclass (stripped like a string)."""


class _Items(list[Any]):
    """A ``list`` subclass (rebuilt as a plain list)."""


_STRIPPED_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.sampled_from(["/w", "/w/a.py", "cd /w && ls", "/w-old", "x", "", "'/w'"]),
    st.builds(_Name, st.sampled_from(["/w/b", "plain"])),
)
_STRIPPED_TREES = st.recursive(
    _STRIPPED_LEAVES,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.builds(_Items, st.lists(children, max_size=2)),
        st.dictionaries(st.text(max_size=2), children, max_size=3),
        st.tuples(children),
    ),
    max_leaves=10,
)


def _types(value: Any) -> Any:
    if isinstance(value, dict):
        return (type(value), {key: _types(item) for key, item in value.items()})
    if isinstance(value, list | tuple):
        return (type(value), [_types(item) for item in value])
    return type(value)


@given(value=_STRIPPED_TREES, work_dir=st.sampled_from(["/w", ""]))
def test_stripped_values_are_the_plain_definitions(value: Any, work_dir: str) -> None:
    stripped = strip_value(value, work_dir)
    expected = _strip_reference(value, work_dir)
    assert stripped == expected
    assert _types(stripped) == _types(expected)  # the same container and string types
    if work_dir and isinstance(value, list | dict):
        assert stripped is not value  # a new container, as before


def _json_text_reference(text: str) -> tuple[bool, Any]:
    """parse_json_text as first written: ``json.loads`` decides everything."""
    if text.strip() == "":
        return True, {}
    try:
        return True, json.loads(text)
    except ValueError:
        return False, text


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=4),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=3), children, max_size=3)
    ),
    max_leaves=6,
)


@given(
    text=st.one_of(
        st.text(max_size=12),
        st.tuples(
            st.sampled_from(["", " ", "\n", "\u00a0", "\ufeff"]),
            _JSON_VALUES.map(json.dumps),
            st.sampled_from(["", " ", "x", "}", "{}", "\t\n"]),
        ).map("".join),
        _JSON_VALUES.map(json.dumps).map(lambda text: text[: len(text) // 2]),
    )
)
def test_json_text_parses_as_json_loads_decides(text: str) -> None:
    got, expected = parse_json_text(text), _json_text_reference(text)
    assert repr(got) == repr(expected)


def test_a_step_built_from_values_is_the_constructors() -> None:
    usage = normalize_usage(Usage.of(3, 4))
    response = finish_step_part(
        "call-0", "2026-01-01T00:00:00+00:00", "m", usage, "stop", None, None
    )
    values: dict[str, Any] = {
        "step_number": 0,
        "call_id": "call",
        "provider": "harness:mock",
        "model_id": "m",
        "content": (TextContent(text="hi"),),
        "finish_reason": "stop",
        "raw_finish_reason": None,
        "usage": usage,
        "provider_metadata": {"mock": {"k": 1}},
        "tools_context": {"t": {}},
        "response": response,
    }
    built, expected = step_result(*values.values()), StepResult(**values)
    assert built == expected
    assert repr(built) == repr(expected)
    assert dataclasses.asdict(built) == dataclasses.asdict(expected)
    assert [field.name for field in dataclasses.fields(StepResult)] == list(values)
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.step_number = 1  # type: ignore[misc]  # frozen, as the constructor's


_SKILL = Skill(name="review", description="Reviews code.", content="Look closely.")
_SPEC = ToolSpec(name="weather", description="Weather", input_schema={"type": "object"})


@given(
    model=st.one_of(st.none(), st.text(max_size=5)),
    instructions=st.one_of(st.none(), st.text(max_size=5)),
    skills=st.lists(st.just(_SKILL), max_size=2),
    tools=st.lists(st.just(_SPEC), max_size=2),
)
def test_an_agents_own_turn_settings_are_the_constructors(
    model: str | None, instructions: str | None, skills: list[Skill], tools: list[ToolSpec]
) -> None:
    built = _turn_settings(model, list(skills), instructions, list(tools))
    expected = TurnSettings(model=model, skills=skills, instructions=instructions, tools=tools)
    _assert_same(built, expected)


def test_turn_settings_of_other_values_are_validated() -> None:
    # What prepare_call may return: a skill as a dict becomes a Skill, a model that is no
    # string is refused, as the constructor does.
    skill = {"name": "review", "description": "Reviews code.", "content": "Look closely."}
    settings = _turn_settings(None, [skill], None, [])
    assert settings.skills == [_SKILL]
    with pytest.raises(ValidationError, match="model"):
        _turn_settings(42, [], None, [])
    with pytest.raises(ValidationError, match="instructions"):
        _turn_settings(None, [], {"content": "x"}, [])


@pytest.mark.parametrize("kind", [PromptTurnOptions, ContinueTurnOptions])
def test_turn_options_are_the_constructors(kind: type[ContinueTurnOptions]) -> None:
    settings = TurnSettings(model="m", skills=[_SKILL], instructions="Be brief.", tools=[_SPEC])
    frozen = FrozenTurn(
        settings=settings,
        merged_tools={},
        executable_tools={},
        tools_context={},
        builtin_filter=None,
        response_format=JsonResponseFormat(),
    )
    queue, abort = PartQueue(), anyio.Event()
    prompt = {"prompt": "go"} if kind is PromptTurnOptions else {}
    built = _turn_options(kind, frozen, queue, abort, **prompt)
    expected = kind(
        emit=queue.emit,
        tools=(_SPEC,),
        instructions="Be brief.",
        response_format=JsonResponseFormat(),
        skills=(_SKILL,),
        model="m",
        abort=abort,
        **prompt,
    )
    assert type(built) is kind
    # Every field set on the instance (a field missing there would read its default).
    assert set(vars(built)) == {field.name for field in dataclasses.fields(kind)}
    assert built == expected
    assert repr(built) == repr(expected)
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.model = "other"  # type: ignore[misc]  # assigning is what must fail
