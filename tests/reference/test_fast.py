"""The fast paths of ``reference/_fast.py`` give exactly what the plain paths give.

One idea: every fast path next to its plain path, on generated values.

- Trusted construction: the models the agent builds from validated values without
  re-validating them equal, dump, repr and copy as the constructor's (usages, block
  boundaries, tool calls, tool outcomes, the consumer ``finish-step``, step records,
  settings and turn options).
- Wire readers: the turn engine reads plain deltas, tool calls and results and
  ``finish-step`` straight from the adapter's wire dicts; the outcome must be what parsing
  the dict and translating the part gives. For every dict, valid or not: when
  ``SliceMachine.quick_wire`` takes it, the parser takes it too, and a machine in the
  same state that parses it and calls ``quick`` forwards, holds and records exactly the
  same. When ``quick_wire`` declines, its machine has not changed. The shapes adapters
  emit most (the benchmark's) are taken.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from benchmarks.fast_paths import switched_off
from harness_testkit.reference import _fast as fast_module
from harness_testkit.reference import tool
from harness_testkit.reference._agent import _turn_settings
from harness_testkit.reference._fast import (
    PLAIN_PATHS,
    usage_of_totals,
    wire_boundary,
    wire_delta,
    wire_finish,
    wire_finish_step,
    wire_tool_call,
    wire_tool_result,
)
from harness_testkit.reference._ids import IdGenerator
from harness_testkit.reference._part_queue import PartQueue
from harness_testkit.reference._results import (
    StepResult,
    TextContent,
    add_usage,
    normalize_usage,
    step_result,
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
from harness_testkit.reference._turn_machine import SliceMachine
from harness_testkit.reference._turn_state import FrozenTurn
from harness_testkit.spec import (
    MAX_PART_DEPTH,
    MAX_SAFE_INTEGER,
    BuiltinTool,
    ConsumerErrorPart,
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
from tests.reference.scripted import ScriptedHarness, finish, finish_step, text_step, tool_call
from tests.reference.test_agent_support import opened, stream_parts
from tests.reference.test_turn_machine import WORK_DIR, _call, _core

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


class _Text(str):
    """A ``str`` subclass: valid for the validator, never taken by a plain reader."""


def _deep(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = {"k": value}
    return value


#: Values that break a plain shape in every way the readers must notice.
_ODD = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**60), max_value=2**60),
    st.sampled_from([MAX_SAFE_INTEGER, MAX_SAFE_INTEGER + 1, -MAX_SAFE_INTEGER - 1]),
    st.floats(allow_nan=False),
    st.text(max_size=6),
    st.just(_Text("sub")),
    st.just((1, 2)),
    st.just({1: "non-str key"}),
    st.just(b"bytes"),
    st.sampled_from([_deep(MAX_PART_DEPTH - 2), _deep(MAX_PART_DEPTH - 1), _deep(MAX_PART_DEPTH)]),
    st.sampled_from(["stop", "tool-calls", "other", "nope"]),
    st.just(f"{WORK_DIR}/src/a.py"),
)
_JSON = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**54), max_value=2**54),
        st.floats(allow_nan=False),
        st.sampled_from(["x", f"{WORK_DIR}/notes.txt", f"cd {WORK_DIR} && ls", WORK_DIR]),
    ),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=3), children, max_size=3)
    ),
    max_leaves=8,
)
_COUNTS = st.one_of(st.none(), st.integers(min_value=0, max_value=10**6))


def _tokens(keys: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    return st.dictionaries(st.sampled_from(keys), _COUNTS, max_size=len(keys))


def _finishing(kind: str, usage_key: str) -> st.SearchStrategy[dict[str, Any]]:
    """A plain ``finish-step`` or ``finish``: a known reason and a usage of counts."""
    return st.fixed_dictionaries(
        {
            "type": st.just(kind),
            "finishReason": st.fixed_dictionaries(
                {"unified": st.sampled_from(["stop", "tool-calls", "length"])},
                optional={"raw": st.one_of(st.none(), st.text(max_size=4))},
            ),
            usage_key: st.fixed_dictionaries(
                {
                    "inputTokens": _tokens(["total", "noCache", "cacheRead", "cacheWrite"]),
                    "outputTokens": _tokens(["total", "text", "reasoning"]),
                }
            ),
        }
    )


_BASES: dict[str, st.SearchStrategy[dict[str, Any]]] = {
    "text-delta": st.fixed_dictionaries(
        {"type": st.just("text-delta"), "id": st.text(max_size=3), "delta": st.text(max_size=5)}
    ),
    "reasoning-delta": st.fixed_dictionaries(
        {"type": st.just("reasoning-delta"), "id": st.just("r"), "delta": st.text(max_size=5)}
    ),
    "tool-result": st.fixed_dictionaries(
        {"type": st.just("tool-result"), "toolCallId": st.just("c1"), "toolName": st.just("bash")},
        optional={
            "result": _JSON,
            "isError": st.one_of(st.none(), st.booleans()),
            "preliminary": st.one_of(st.none(), st.booleans()),
            "dynamic": st.one_of(st.none(), st.booleans()),
        },
    ),
    "tool-call": st.fixed_dictionaries(
        {
            "type": st.just("tool-call"),
            "toolCallId": st.sampled_from(["c1", "c2"]),
            "toolName": st.sampled_from(["bash", "unknown"]),
            "input": st.sampled_from(['{"x": 1}', "", "{", f'{{"p": "{WORK_DIR}/a"}}']),
        },
        optional={
            "providerExecuted": st.one_of(st.none(), st.booleans(), st.just(True)),
            "dynamic": st.one_of(st.none(), st.booleans()),
            "nativeName": st.one_of(st.none(), st.just("Bash")),
        },
    ),
    **{
        kind: st.fixed_dictionaries({"type": st.just(kind), "id": st.sampled_from(["t", ""])})
        for kind in ("text-start", "text-end", "reasoning-start", "reasoning-end")
    },
    "finish": _finishing("finish", "totalUsage"),
    "finish-step": _finishing("finish-step", "usage"),
}
_EXTRA_KEYS = ["harnessMetadata", "providerMetadata", "raw", "extra", "id", "result", "isError"]
_EXTRA_KEYS += ["stepToolCallCount", "input"]


@st.composite
def _wire_dicts(draw: st.DrawFn) -> dict[str, Any]:
    """A plain hot-shape dict, then perhaps broken: a key dropped or added, a value (at
    the top or one level down) replaced by an odd one (a copy: the odd values are shared
    and a later break may change the dict it lands in)."""
    obj = draw(st.sampled_from(sorted(_BASES)).flatmap(lambda kind: _BASES[kind]))
    for _ in range(draw(st.integers(min_value=0, max_value=2))):
        action = draw(st.sampled_from(["drop", "add", "replace", "nested"]))
        if action == "drop" and obj:
            del obj[draw(st.sampled_from(sorted(obj)))]
        elif action == "add":
            obj[draw(st.sampled_from(_EXTRA_KEYS))] = copy.deepcopy(draw(_ODD))
        elif action == "replace" and obj:
            obj[draw(st.sampled_from(sorted(obj)))] = copy.deepcopy(draw(_ODD))
        elif action == "nested":
            inner = [value for value in obj.values() if type(value) is dict]
            if inner:
                target = draw(st.sampled_from(inner))
                keys = sorted(target, key=repr) or ["total"]
                target[draw(st.sampled_from([*keys, "extra"]))] = copy.deepcopy(draw(_ODD))
    return obj


def _machine(*, step_open: bool, executed: bool | None) -> SliceMachine:
    """A machine the driver lets close steps in ``quick``; with ``executed`` not None it
    has seen call ``c1`` (provider-executed or not)."""
    machine = SliceMachine(core=_core(bash=tool()), continuing=False, stop_conditions=False)
    if executed is not None:
        call = _call("c1", "bash", executed=executed)
        machine._note_call(call, consumer_call(call, machine.work_dir, machine.frozen.merged_tools))
    machine.step_open = step_open
    return machine


def _comparable(part: Any) -> Any:
    """A consumer part as a value: an invalid call's error (an exception, equal only to
    itself) by its type and message."""
    error = getattr(part, "error", None)
    if isinstance(error, BaseException):
        return (part.model_copy(update={"error": None}), type(error), str(error))
    return part


def _state(machine: SliceMachine) -> Any:
    seen = {
        call_id: (
            call.harness.tool_call_id,
            call.harness.tool_name,
            call.harness.input,
            call.harness.provider_executed,
            call.harness.native_name,
            _comparable(call.consumer),
            call.provider_executed,
        )
        for call_id, call in machine.seen_calls.items()
    }
    return (
        machine.step_open,
        machine.step_has_content,
        [_comparable(part) for part in machine.step_content.parts()],
        [(_comparable(part), in_step) for part, in_step in machine.held],
        list(machine.outcome.steps),
        seen,
        machine.seen_in_step,
        machine.expected_calls,
        machine.outcome.finish,
    )


def _assert_parts_same(got: list[Any], expected: list[Any]) -> None:
    assert len(got) == len(expected)
    for built, wanted in zip(got, expected, strict=True):
        if isinstance(getattr(wanted, "error", None), BaseException):
            assert _comparable(built) == _comparable(wanted)
            built, wanted = _comparable(built)[0], _comparable(wanted)[0]
        _assert_same(built, wanted)


@settings(max_examples=300)
@given(
    obj=_wire_dicts(),
    step_open=st.booleans(),
    executed=st.sampled_from([None, True, False]),
)
def test_a_dict_taken_from_the_wire_ends_as_the_parsed_part_would(
    obj: dict[str, Any], step_open: bool, executed: bool | None
) -> None:
    wired = _machine(step_open=step_open, executed=executed)
    parsed = _machine(step_open=step_open, executed=executed)
    before = copy.deepcopy(obj)
    untouched = _state(wired)
    got = wired.quick_wire(obj)
    assert obj == before, "the adapter's dict is never changed"
    if got is None:
        assert _state(wired) == untouched, "a declined dict changes nothing"
        return
    try:
        part = parse_stream_part(obj)
    except ValidationError as error:  # pragma: no cover - the assertion names the case
        pytest.fail(f"quick_wire took a dict the parser rejects: {obj!r}: {error}")
    expected = parsed.quick(part)
    assert expected is not None, "quick_wire took a part quick would not take"
    _assert_parts_same(got, expected)
    held, held_expected = wired.held, parsed.held
    assert [in_step for _, in_step in held] == [in_step for _, in_step in held_expected]
    _assert_parts_same([p for p, _ in held], [p for p, _ in held_expected])
    assert _state(wired) == _state(parsed)
    if wired.outcome.finish is not None:
        assert parsed.outcome.finish is not None
        _assert_same(wired.outcome.finish.usage, parsed.outcome.finish.usage)
    for step, step_expected in zip(wired.outcome.steps, parsed.outcome.steps, strict=True):
        _assert_same(step.usage, step_expected.usage)
        assert step.response is not None
        assert step_expected.response is not None
        _assert_same(step.response, step_expected.response)


@pytest.mark.parametrize("executed", [None, True, False])
@pytest.mark.parametrize("is_error", [None, True, False])
def test_a_failed_result_is_a_tool_error_only_for_a_provider_executed_call(
    executed: bool | None, is_error: bool | None
) -> None:
    obj: dict[str, Any] = {"type": "tool-result", "toolCallId": "c1", "toolName": "bash"}
    obj["isError"] = is_error
    obj["result"] = {"path": f"{WORK_DIR}/a.txt"}
    wired = _machine(step_open=True, executed=executed)
    parsed = _machine(step_open=True, executed=executed)
    assert wired.quick_wire(obj) == parsed.quick(parse_stream_part(obj)) == []
    (outcome, _), (expected, _) = wired.held[0], parsed.held[0]
    _assert_same(outcome, expected)
    failed = is_error is True and executed is not False
    if failed:
        assert isinstance(outcome, ConsumerToolErrorPart)
        assert outcome.error == {"path": "a.txt"}
    else:
        assert isinstance(outcome, ConsumerToolResultPart)
        assert outcome.output == {"path": "a.txt"}


@pytest.mark.parametrize(
    "obj",
    [
        {"type": "text-delta", "id": "txt-0", "delta": "alpha "},
        {"type": "reasoning-delta", "id": "r", "delta": ""},
        {
            "type": "tool-result",
            "toolCallId": "call-1",
            "toolName": "bash",
            "result": {"exitCode": 0, "stdout": "1\n", "stderr": ""},
        },
        {"type": "tool-result", "toolCallId": "c", "toolName": "t", "isError": True},
        {
            "type": "tool-call",
            "toolCallId": "call-1",
            "toolName": "bash",
            "input": '{"command":"echo 1"}',
            "providerExecuted": True,
        },
        {
            "type": "tool-call",
            "toolCallId": "call-2",
            "toolName": "bash",
            "input": "{}",
            "providerExecuted": True,
            "dynamic": None,
            "nativeName": "Bash",
        },
        {
            "type": "finish-step",
            "finishReason": {"unified": "tool-calls", "raw": "tool_use"},
            "usage": {"inputTokens": {"total": 10}, "outputTokens": {"total": 5}},
        },
        {
            "type": "finish-step",
            "finishReason": {"unified": "stop"},
            "usage": {
                "inputTokens": {"total": 9, "noCache": 1, "cacheRead": 2, "cacheWrite": None},
                "outputTokens": {"total": 3, "text": 2, "reasoning": 1},
            },
        },
        {"type": "text-start", "id": "txt-0"},
        {"type": "text-end", "id": "txt-0"},
        {
            "type": "finish",
            "finishReason": {"unified": "stop", "raw": "end_turn"},
            "totalUsage": {"inputTokens": {"total": 10}, "outputTokens": {"total": 5}},
        },
        {"type": "reasoning-start", "id": "r"},
        {"type": "reasoning-end", "id": "r"},
    ],
)
def test_the_common_shapes_are_taken_from_the_wire(obj: dict[str, Any]) -> None:
    machine = _machine(step_open=True, executed=True)
    assert machine.quick_wire(obj) is not None


@pytest.mark.parametrize(
    "obj",
    [
        {"type": "text-delta", "id": "t", "delta": "x", "harnessMetadata": {"h": {}}},
        {"type": "text-delta", "id": _Text("t"), "delta": "x"},
        {"type": "tool-result", "toolCallId": "c", "toolName": "t", "result": MAX_SAFE_INTEGER + 1},
        {"type": "tool-result", "toolCallId": "c", "toolName": "t", "result": (1,)},
        {"type": "tool-result", "toolCallId": "c", "toolName": "t", "result": [{"a": {2: 1}}]},
        {
            "type": "tool-result",
            "toolCallId": "c",
            "toolName": "t",
            "result": _deep(MAX_PART_DEPTH),
        },
        {"type": "tool-result", "toolCallId": "c", "toolName": "t", "isError": 1},
        {"type": "tool-result", "toolCallId": "c", "toolName": "t", "providerMetadata": {}},
        {
            "type": "finish-step",
            "finishReason": {"unified": "stop"},
            "usage": {"inputTokens": {"total": True}, "outputTokens": {}},
        },
        {
            "type": "finish-step",
            "finishReason": {"unified": "stop"},
            "usage": {"inputTokens": {}, "outputTokens": {}, "raw": {"x": 1}},
        },
        {
            "type": "finish-step",
            "finishReason": {"unified": "stop"},
            "usage": {"inputTokens": {"total": MAX_SAFE_INTEGER + 1}, "outputTokens": {"total": 1}},
        },
        {
            "type": "finish",
            "finishReason": {"unified": "stop"},
            "totalUsage": {"inputTokens": {"total": 1}, "outputTokens": {"total": 1.0}},
        },
        {
            "type": "finish",
            "finishReason": {"unified": "stop"},
            "totalUsage": {"inputTokens": {"total": 1}, "outputTokens": {"totals": 1}},
        },
        {"type": "finish-step", "finishReason": {"unified": "done"}, "usage": {}},
        {
            "type": "tool-call",
            "toolCallId": "c",
            "toolName": "bash",
            "input": "{}",
            "providerExecuted": True,
            "stepToolCallCount": 1,
        },
        {"type": "tool-call", "toolCallId": "c", "toolName": "bash", "input": {}},
        {"type": "tool-call", "toolCallId": "c", "toolName": "bash", "providerExecuted": True},
        {"type": "tool-call", "toolName": "bash", "input": "{}", "providerExecuted": True},
        {"type": "tool-call", "toolCallId": "c", "input": "{}", "providerExecuted": True},
        {"type": "tool-result", "toolName": "bash", "result": 1},
        {"type": ["text-delta"], "id": "t", "delta": "x"},
        {"type": ["text-start"], "id": "t"},
        {"type": "text-start", "id": _Text("t")},
        {"type": "text-start", "id": "t", "providerMetadata": None},
        {"type": "text-end", "id": 1},
        {"type": "tool-start", "id": "t"},
        {
            "type": "finish",
            "finishReason": {"unified": "stop"},
            "totalUsage": {"inputTokens": {}, "outputTokens": {}},
            "harnessMetadata": {"h": {}},
        },
        {"type": "finish", "finishReason": {"unified": "stop"}, "usage": {}},
    ],
)
def test_anything_unusual_is_left_to_the_parser(obj: dict[str, Any]) -> None:
    assert wire_boundary(obj) is None
    assert wire_finish(obj) is None
    assert wire_delta(obj) is None
    assert wire_tool_result(obj, WORK_DIR) is None
    assert wire_finish_step(obj) is None
    assert wire_tool_call(obj) is None
    assert _machine(step_open=True, executed=True).quick_wire(obj) is None


def test_a_boundary_while_a_pause_is_requested_is_left_to_the_parser() -> None:
    machine = _machine(step_open=True, executed=True)
    machine.pause_requested = True
    assert machine.quick_wire({"type": "text-start", "id": "t"}) is None
    assert machine.quick(parse_stream_part({"type": "text-start", "id": "t"})) is None


def test_a_self_containing_result_is_left_to_the_parser() -> None:
    looped: dict[str, Any] = {}
    looped["self"] = looped
    obj = {"type": "tool-result", "toolCallId": "c", "toolName": "t", "result": looped}
    assert wire_tool_result(obj, WORK_DIR) is None
    with pytest.raises(ValidationError):
        parse_stream_part(obj)


@pytest.mark.anyio
@pytest.mark.parametrize("as_dict", [True, False])
async def test_a_call_whose_translation_raises_fails_the_turn_as_the_parsed_call_does(
    tmp_path: Path, as_dict: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A built-in with a broken schema makes translating its call raise. Read from the
    wire inside ``emit``, the error must not reach the adapter: the turn fails with it,
    as for the same call emitted as a model."""
    raised: list[BaseException] = []
    original = PartQueue.emit

    def recording(self: PartQueue, part: Any) -> None:
        try:
            original(self, part)
        except BaseException as error:
            raised.append(error)
            raise

    monkeypatch.setattr(PartQueue, "emit", recording)
    call = tool_call("c1", "bash", '{"command": "ls"}', provider_executed=True)
    broken = BuiltinTool(input_schema={"type": "no-such-type"}, common_name="bash")
    harness = ScriptedHarness(
        [
            [
                *text_step("before"),
                call if as_dict else parse_stream_part(call),
                finish_step("tool-calls"),
                finish(),
            ]
        ],
        builtin_tools={"bash": broken},
    )
    async with opened(harness, tmp_path) as (agent, session):
        _, parts = await stream_parts(agent, session=session, prompt="go")
    assert raised == [], "emit never raises into the adapter"
    error = parts[-1]
    assert isinstance(error, ConsumerErrorPart)
    assert isinstance(error.error, jsonschema.SchemaError)


# -- every path switched off: the same turn ----------------------------------------------------


def _without_clock(value: Any) -> Any:
    """A wire value with its timestamps dropped (two runs never share a clock)."""
    if isinstance(value, dict):
        return {k: _without_clock(v) for k, v in value.items() if k != "timestamp"}
    if isinstance(value, list):
        return [_without_clock(item) for item in value]
    return value


def _mixed_turn() -> list[Any]:
    """A turn of every shape the wire readers take, and some they leave to the parser."""
    return [
        {"type": "reasoning-start", "id": "r1"},
        {"type": "reasoning-delta", "id": "r1", "delta": "think"},
        {"type": "reasoning-end", "id": "r1", "harnessMetadata": {"h": {"k": 1}}},
        *text_step("before"),
        tool_call("c1", "bash", '{"command": "ls"}', provider_executed=True),
        {
            "type": "tool-result",
            "toolCallId": "c1",
            "toolName": "bash",
            "result": {"output": "a\nb", "n": [1, 2.5, None, True]},
        },
        finish_step("tool-calls"),
        *text_step("after", block="t2"),
        finish(),
    ]


async def _turn_parts(tmp_path: Path) -> list[Any]:
    harness = ScriptedHarness([_mixed_turn(), _mixed_turn()])
    async with opened(harness, tmp_path, id_generator=IdGenerator(seed=7)) as (agent, session):
        parts: list[Any] = []
        for _ in range(2):
            _, turn = await stream_parts(agent, session=session, prompt="go")
            parts += [_without_clock(part.to_wire()) for part in turn]
    return parts


@pytest.mark.anyio
@pytest.mark.parametrize("path", sorted(PLAIN_PATHS))
async def test_a_turn_with_a_fast_path_switched_off_streams_the_same_parts(
    tmp_path: Path, path: str
) -> None:
    """What the benchmark measures: the agent with one path's plain twins in place streams
    exactly what the shipped agent streams."""
    shipped = await _turn_parts(tmp_path / "shipped")
    with switched_off(path):
        for name, twin in PLAIN_PATHS[path].items():
            assert getattr(fast_module, name) is twin
        plain = await _turn_parts(tmp_path / "plain")
    assert all(getattr(fast_module, name) is not twin for name, twin in PLAIN_PATHS[path].items())
    assert plain == shipped
    assert [part["type"] for part in shipped].count("tool-call") == 2
