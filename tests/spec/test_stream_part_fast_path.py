"""``parse_stream_part`` builds plain deltas, block boundaries, finish parts, tool calls and
tool results directly; the outcome must not change.

Every dict, valid or not, must give what the pydantic validator alone gives: an equal
model with the same fields set and repr, or a ``ValidationError`` with the same errors.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from harness_testkit.conformance import corrupted_stream_parts, stream_parts
from harness_testkit.spec import ToolResultPart, _stream_parts, find_non_json, parse_stream_part
from harness_testkit.spec._stream_parts import (
    _PLAIN_WALK_BUDGET,
    _STREAM_PART_ADAPTER,
    MAX_PART_DEPTH,
    _plainly_bounded,
    refuse_unbounded,
)


class _Text(str):
    """A ``str`` subclass: never taken by the fast path."""


def _validator_outcome(obj: Any) -> tuple[str, Any]:
    """The outcome of the path every part not taken by the fast path goes through."""
    try:
        refuse_unbounded(obj, "StreamPart")
        part = _STREAM_PART_ADAPTER.validate_python(obj, by_alias=True, by_name=False)
    except ValidationError as error:
        return "error", error.errors(include_url=False)
    return "part", part


def _outcome(obj: Any) -> tuple[str, Any]:
    try:
        part = parse_stream_part(obj)
    except ValidationError as error:
        return "error", error.errors(include_url=False)
    return "part", part


def _assert_same_fields_set(got: Any, expected: Any) -> None:
    """Nested models were given the same fields too (``==`` compares values only)."""
    if isinstance(expected, BaseModel):
        assert type(got) is type(expected)
        assert got.model_fields_set == expected.model_fields_set
        for name in type(expected).model_fields:
            _assert_same_fields_set(getattr(got, name), getattr(expected, name))


def _assert_same(obj: Any) -> None:
    kind, got = _outcome(obj)
    expected_kind, expected = _validator_outcome(obj)
    assert kind == expected_kind, obj
    if kind == "error":
        assert got == expected
        return
    assert type(got) is type(expected)
    assert got == expected
    _assert_same_fields_set(got, expected)
    assert repr(got) == repr(expected)
    assert got.to_wire() == expected.to_wire()
    try:
        expected_hash = hash(expected)
    except TypeError:  # a part holding a dict (metadata, usage) is not hashable
        return
    assert hash(got) == expected_hash


@pytest.mark.parametrize("kind", ["text-delta", "reasoning-delta", "tool-input-delta"])
def test_plain_delta_dicts_parse_as_the_validator_parses_them(kind: str) -> None:
    _assert_same({"type": kind, "id": "b-1", "delta": "hello "})
    _assert_same({"type": kind, "id": "", "delta": ""})


_BOUNDARIES = ["text-start", "text-end", "reasoning-start", "reasoning-end", "tool-input-end"]


@pytest.mark.parametrize("kind", _BOUNDARIES)
def test_plain_block_boundaries_parse_as_the_validator_parses_them(kind: str) -> None:
    _assert_same({"type": kind, "id": "b-1"})
    _assert_same({"type": kind, "id": ""})
    _assert_same({"type": kind, "id": 1})
    _assert_same({"type": kind, "id": "b", "delta": "x"})
    _assert_same({"type": kind, "id": _Text("b")})
    _assert_same({"type": kind, "harnessMetadata": None})


@pytest.mark.parametrize(
    "obj",
    [
        {"type": "text-delta", "id": "t", "delta": 3},
        {"type": "text-delta", "id": None, "delta": "x"},
        {"type": "text-delta", "id": "t"},
        {"type": "text-delta", "delta": "x", "extra": 1},
        {"type": "text-delta", "id": "t", "delta": "x", "extra": 1},
        {"type": "text-delta", "id": "t", "text": "x"},
        {"type": "reasoning-delta", "id": "r", "delta": b"bytes"},
        {"type": "tool-input-delta", "id": 1, "delta": "{"},
        {"type": "text-delta", "id": "t", "delta": "x", "harnessMetadata": "not-an-object"},
        {"type": "text-delta", "id": "t", "delta": "x", "harness_metadata": {}},
        {"type": ["text-delta"], "id": "t", "delta": "x"},
        {"type": "text-deltas", "id": "t", "delta": "x"},
        {"type": _Text("text-delta"), "id": "t", "delta": "x"},
        {"type": "text-delta", "id": _Text("t"), "delta": _Text("x")},
    ],
)
def test_invalid_or_unusual_delta_dicts_keep_the_validators_outcome(obj: dict[str, Any]) -> None:
    _assert_same(obj)


def test_invalid_delta_is_still_rejected_with_the_field_named() -> None:
    with pytest.raises(ValidationError) as caught:
        parse_stream_part({"type": "text-delta", "id": "t", "delta": 3})
    assert [error["loc"] for error in caught.value.errors()] == [("text-delta", "delta")]


def _finish(kind: str, **changes: Any) -> dict[str, Any]:
    part: dict[str, Any] = {
        "type": kind,
        "finishReason": {"unified": "stop", "raw": "end_turn"},
        "usage" if kind == "finish-step" else "totalUsage": {
            "inputTokens": {"total": 10, "noCache": 2, "cacheRead": None, "cacheWrite": 0},
            "outputTokens": {"total": 5, "text": 5, "reasoning": None},
        },
    }
    part.update(changes)
    return part


_CALL = {"type": "tool-call", "toolCallId": "c", "toolName": "bash", "input": "{}"}


@pytest.mark.parametrize(
    "obj",
    [
        _finish("finish-step"),
        _finish("finish"),
        _finish("finish-step", finishReason={"unified": "tool-calls"}),
        _finish("finish", finishReason={"unified": "other", "raw": None}),
        _finish("finish-step", finishReason={"unified": "stopped"}),
        _finish("finish-step", finishReason={"unified": "stop", "raw": 3}),
        _finish("finish-step", finishReason={"unified": _Text("stop")}),
        _finish("finish-step", finishReason={"unified": "stop", "extra": 1}),
        _finish("finish-step", finishReason=["stop"]),
        _finish("finish-step", usage={"inputTokens": {}, "outputTokens": {}}),
        _finish("finish-step", usage={"inputTokens": {"total": True}, "outputTokens": {}}),
        _finish("finish-step", usage={"inputTokens": {"total": 1.0}, "outputTokens": {}}),
        _finish("finish-step", usage={"inputTokens": {"total": "1"}, "outputTokens": {}}),
        _finish("finish-step", usage={"inputTokens": {"total": 2**53}, "outputTokens": {}}),
        _finish("finish-step", usage={"inputTokens": {"total": -(2**53)}, "outputTokens": {}}),
        _finish("finish-step", usage={"inputTokens": {"no_cache": 1}, "outputTokens": {}}),
        _finish("finish-step", usage={"inputTokens": {"total": 1}}),
        _finish("finish-step", usage={"inputTokens": {}, "outputTokens": {}, "raw": {"a": 1}}),
        _finish("finish-step", usage={"inputTokens": {}, "outputTokens": {}, "extra": 1}),
        _finish("finish-step", usage={"inputTokens": None, "outputTokens": {}}),
        _finish("finish-step", harnessMetadata={"h": {}}),
        _finish("finish-step", totalUsage={"inputTokens": {}, "outputTokens": {}}),
        _finish("finish", usage={"inputTokens": {}, "outputTokens": {}}),
        {"type": "finish-step", "finishReason": {"unified": "stop"}},
        {"type": _Text("finish"), "finishReason": {"unified": "stop"}, "totalUsage": {}},
        _CALL,
        {**_CALL, "providerExecuted": True, "dynamic": False, "nativeName": "Bash"},
        {**_CALL, "providerExecuted": None, "dynamic": None, "nativeName": None},
        {**_CALL, "providerExecuted": 1},
        {**_CALL, "input": {"command": "ls"}},
        {**_CALL, "toolCallId": None},
        {**_CALL, "toolName": _Text("bash")},
        {**_CALL, "stepToolCallCount": 2},
        {**_CALL, "stepToolCallCount": 0},
        {**_CALL, "providerMetadata": {"p": {"k": 1}}},
        {**_CALL, "tool_name": "bash"},
        {"type": "tool-call", "toolCallId": "c", "toolName": "bash"},
        {"type": "tool-call", "toolCallId": "c", "toolName": "bash", "input": "{}", "x": 1},
    ],
)
def test_finish_parts_and_tool_calls_keep_the_validators_outcome(obj: dict[str, Any]) -> None:
    _assert_same(obj)


_COUNT = st.one_of(st.none(), st.integers(), st.booleans(), st.floats(), st.text(max_size=2))
_TOKENS = st.dictionaries(
    st.sampled_from(["total", "noCache", "cacheRead", "cacheWrite", "text", "reasoning", "x"]),
    _COUNT,
    max_size=4,
)


@given(
    kind=st.sampled_from(["finish-step", "finish"]),
    unified=st.sampled_from(["stop", "length", "tool-calls", "error", "other", "nope"]),
    raw=st.one_of(st.none(), st.text(max_size=3), st.integers()),
    with_raw=st.booleans(),
    inputs=_TOKENS,
    outputs=_TOKENS,
    usage_key=st.sampled_from(["usage", "totalUsage"]),
)
def test_any_finish_like_dict_keeps_the_validators_outcome(
    kind: str,
    unified: str,
    raw: Any,
    with_raw: bool,
    inputs: dict[str, Any],
    outputs: dict[str, Any],
    usage_key: str,
) -> None:
    reason: dict[str, Any] = {"unified": unified}
    if with_raw:
        reason["raw"] = raw
    usage = {"inputTokens": inputs, "outputTokens": outputs}
    _assert_same({"type": kind, "finishReason": reason, usage_key: usage})


_CALL_KEYS = ["toolCallId", "toolName", "input", "providerExecuted", "dynamic", "nativeName"]
_CALL_KEYS += ["stepToolCallCount", "providerMetadata", "extra"]


@given(
    fields=st.dictionaries(
        st.sampled_from(_CALL_KEYS),
        st.one_of(st.none(), st.text(max_size=3), st.booleans(), st.integers(-1, 3)),
        max_size=7,
    )
)
def test_any_tool_call_like_dict_keeps_the_validators_outcome(fields: dict[str, Any]) -> None:
    _assert_same({"type": "tool-call", **fields})


_RESULT = {"type": "tool-result", "toolCallId": "c", "toolName": "bash"}


def _deep_list(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = [value]
    return value


@pytest.mark.parametrize(
    "obj",
    [
        _RESULT,
        {**_RESULT, "result": {"exitCode": 0, "stdout": "0\n", "stderr": ""}},
        {**_RESULT, "result": None, "isError": None, "preliminary": None, "dynamic": None},
        {**_RESULT, "result": [1, 2.5, True, None, "x", {"a": [[]]}], "isError": True},
        {**_RESULT, "result": "text", "preliminary": True, "dynamic": False},
        {**_RESULT, "result": float("inf")},
        {**_RESULT, "result": -0.0},
        {**_RESULT, "result": 2**53 - 1},
        {**_RESULT, "result": 2**53},
        {**_RESULT, "result": {"n": -(2**53)}},
        {**_RESULT, "result": (1, 2)},
        {**_RESULT, "result": {1: "x"}},
        {**_RESULT, "result": {_Text("k"): "x"}},
        {**_RESULT, "result": [_Text("x")]},
        {**_RESULT, "result": b"bytes"},
        {**_RESULT, "result": {"s": {1, 2}}},
        {**_RESULT, "result": _deep_list(MAX_PART_DEPTH - 2)},
        {**_RESULT, "result": _deep_list(MAX_PART_DEPTH - 1)},
        {**_RESULT, "result": _deep_list(MAX_PART_DEPTH)},
        {**_RESULT, "isError": 1},
        {**_RESULT, "isError": "yes"},
        {**_RESULT, "toolCallId": None},
        {**_RESULT, "toolName": 3},
        {**_RESULT, "providerMetadata": {"p": {"k": 1}}},
        {**_RESULT, "providerMetadata": None},
        {**_RESULT, "is_error": True},
        {**_RESULT, "output": 1},
        {"type": "tool-result", "toolCallId": "c", "result": 1},
        {"type": "tool-result", "toolName": "bash"},
    ],
)
def test_tool_results_keep_the_validators_outcome(obj: dict[str, Any]) -> None:
    _assert_same(obj)


def test_a_plain_tool_result_is_taken_by_the_fast_path_and_copies_its_value() -> None:
    value = {"stdout": ["a", {"b": 1}]}
    part = parse_stream_part({**_RESULT, "result": value})
    assert isinstance(part, ToolResultPart)
    assert part == _STREAM_PART_ADAPTER.validate_python(
        {**_RESULT, "result": value}, by_alias=True, by_name=False
    )
    # A copy, as the validator makes: the adapter may reuse or change its own dict.
    assert part.result == value
    assert part.result is not value
    assert part.result["stdout"] is not value["stdout"]


@pytest.mark.parametrize(
    "obj",
    [
        {"type": "text-delta", "id": "t", "delta": "x"},
        {"type": "text-end", "id": "t"},
        _finish("finish-step"),
        {**_CALL, "providerExecuted": True},
        {**_RESULT, "result": {"exitCode": 0, "stdout": "0\n", "stderr": ""}},
    ],
)
def test_plain_shapes_never_reach_the_validator(
    obj: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = _STREAM_PART_ADAPTER.validate_python(obj, by_alias=True, by_name=False)

    def refuse(*args: Any) -> None:
        raise AssertionError("the fast path declined a plain part")

    monkeypatch.setattr(_stream_parts, "refuse_unbounded", refuse)
    assert parse_stream_part(obj) == expected


def test_a_tool_result_containing_itself_is_still_refused_as_a_cycle() -> None:
    cyclic: dict[str, Any] = {}
    cyclic["self"] = cyclic
    with pytest.raises(ValidationError, match=r"contains itself \(a cycle\)"):
        parse_stream_part({**_RESULT, "result": cyclic})


_VALUES = st.one_of(
    st.text(max_size=5),
    st.integers(),
    st.none(),
    st.builds(_Text, st.text(max_size=3)),
    st.dictionaries(st.text(max_size=3), st.dictionaries(st.text(max_size=3), st.integers())),
)
_KEYS = st.sampled_from(
    ["id", "delta", "harnessMetadata", "providerMetadata", "toolName", "text", "extra"]
)


@given(
    kind=st.sampled_from(["text-delta", "reasoning-delta", "tool-input-delta", *_BOUNDARIES]),
    fields=st.dictionaries(_KEYS, _VALUES, max_size=4),
)
def test_any_delta_like_dict_keeps_the_validators_outcome(
    kind: str, fields: dict[str, Any]
) -> None:
    _assert_same({"type": kind, **fields})


@given(part=stream_parts())
def test_wire_dicts_of_every_part_parse_as_the_validator_parses_them(part: dict[str, Any]) -> None:
    _assert_same(part)


@given(part=corrupted_stream_parts())
def test_corrupted_parts_keep_the_validators_outcome(part: Any) -> None:
    _assert_same(part)


# -- refuse_unbounded: the plain walk decides only what the full check would decide ----


def _full_check_refuses(obj: Any) -> bool:
    """What refuse_unbounded decided before the plain walk: the full check alone."""
    problem = find_non_json(obj, "part", max_depth=MAX_PART_DEPTH, safe_integers=True)
    bounded = ("nested deeper", "(a cycle)", "JSON-safe range")
    return problem is not None and any(marker in problem for marker in bounded)


def _refuses(obj: Any) -> bool:
    try:
        refuse_unbounded(obj, "StreamPart")
    except ValidationError:
        return True
    return False


def _nested(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(levels):
        value = {"a": [value]}
    return value


_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=3),
    st.integers(min_value=-(2**60), max_value=2**60),
    st.sampled_from([2**53 - 1, 2**53, -(2**53)]),
    st.builds(_Text, st.text(max_size=3)),
    st.frozensets(st.integers(), max_size=2),
)
_TREES = st.recursive(
    _SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(st.text(max_size=2), children, max_size=3),
        st.tuples(children),
    ),
    max_leaves=12,
)


_RESULT_KEYS = ["toolCallId", "toolName", "result", "isError", "preliminary", "dynamic"]
_RESULT_KEYS += ["providerMetadata", "extra"]


@given(
    fields=st.dictionaries(
        st.sampled_from(_RESULT_KEYS),
        st.one_of(st.text(max_size=3), st.booleans(), st.none(), _TREES),
        max_size=6,
    )
)
def test_any_tool_result_like_dict_keeps_the_validators_outcome(fields: dict[str, Any]) -> None:
    _assert_same({"type": "tool-result", **fields})


@given(tree=st.dictionaries(st.text(max_size=2), _TREES, max_size=4))
def test_plain_walk_never_changes_what_is_refused(tree: dict[str, Any]) -> None:
    if _plainly_bounded(tree):
        assert not _full_check_refuses(tree)
    assert _refuses(tree) == _full_check_refuses(tree)


@pytest.mark.parametrize(
    "obj",
    [
        _nested(MAX_PART_DEPTH // 2 - 1),
        _nested(MAX_PART_DEPTH // 2),
        _nested(MAX_PART_DEPTH),
        {"type": "raw", "rawValue": [2**53]},
        {"type": "raw", "rawValue": {"n": -(2**53 - 1)}},
        {"type": "raw", "rawValue": [True, 1.5, None, "x"]},
        {"type": "raw", "rawValue": [[0] * 3] * (_PLAIN_WALK_BUDGET + 1)},
    ],
)
def test_deep_wide_and_unsafe_parts_keep_the_full_checks_decision(obj: Any) -> None:
    assert _refuses(obj) == _full_check_refuses(obj)


def test_a_part_containing_itself_is_still_refused_as_a_cycle() -> None:
    cyclic: dict[str, Any] = {"type": "raw", "rawValue": []}
    cyclic["rawValue"].append(cyclic)
    with pytest.raises(ValidationError, match=r"contains itself \(a cycle\)"):
        parse_stream_part(cyclic)
    assert not _plainly_bounded(cyclic)
