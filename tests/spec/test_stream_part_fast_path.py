"""``parse_stream_part`` builds plain delta dicts directly; the outcome must not change.

Every dict, valid or not, must give what the pydantic validator alone gives: an equal
model with the same fields set and repr, or a ``ValidationError`` with the same errors.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from harness_testkit.conformance import corrupted_stream_parts, stream_parts
from harness_testkit.spec import parse_stream_part
from harness_testkit.spec._stream_parts import _STREAM_PART_ADAPTER, refuse_unbounded


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


def _assert_same(obj: Any) -> None:
    kind, got = _outcome(obj)
    expected_kind, expected = _validator_outcome(obj)
    assert kind == expected_kind, obj
    if kind == "error":
        assert got == expected
        return
    assert type(got) is type(expected)
    assert got == expected
    assert got.model_fields_set == expected.model_fields_set
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
    kind=st.sampled_from(["text-delta", "reasoning-delta", "tool-input-delta", "text-start"]),
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
