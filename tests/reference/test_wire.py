"""The turn engine reads plain deltas, tool calls and results and ``finish-step``
straight from the adapter's wire dicts (``reference/_wire.py``); the outcome must be what
parsing the dict and translating the part gives.

For every dict, valid or not: when ``SliceMachine.quick_wire`` takes it, the parser takes
it too, and a machine in the same state that parses it and calls ``quick`` forwards,
holds and records exactly the same. When ``quick_wire`` declines, its machine has not
changed. The shapes adapters emit most (the benchmark's) are taken.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from harness_testkit.reference import tool
from harness_testkit.reference._part_queue import PartQueue
from harness_testkit.reference._translate import consumer_call
from harness_testkit.reference._turn_machine import SliceMachine
from harness_testkit.reference._wire import (
    wire_boundary,
    wire_delta,
    wire_finish,
    wire_finish_step,
    wire_tool_call,
    wire_tool_result,
)
from harness_testkit.spec import (
    MAX_PART_DEPTH,
    MAX_SAFE_INTEGER,
    BuiltinTool,
    ConsumerErrorPart,
    ConsumerToolErrorPart,
    ConsumerToolResultPart,
    parse_stream_part,
)
from tests.reference.scripted import ScriptedHarness, finish, finish_step, text_step, tool_call
from tests.reference.test_agent_support import opened, stream_parts
from tests.reference.test_trusted import _assert_same
from tests.reference.test_turn_machine import WORK_DIR, _call, _core


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
