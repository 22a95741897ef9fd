"""Narrowing helpers for tests: a value of a union (JSON, a stream part) asserted to be one type.

``of_type(str, outcome["result"]).strip()`` fails the test with the value it saw when the
value is not a ``str``, and tells mypy what the test expects, instead of an ignore comment.
"""

from __future__ import annotations

from typing import Any, TypeVar

T = TypeVar("T")


def of_type(kind: type[T], value: object) -> T:
    """``value`` itself, asserted to be an instance of ``kind``."""
    assert isinstance(value, kind), (
        f"expected {kind.__name__}, got {type(value).__name__}: {value!r}"
    )
    return value


def json_object(value: object) -> dict[str, Any]:
    """``value`` asserted to be a JSON object (a ``dict`` with string keys)."""
    assert isinstance(value, dict), f"expected a JSON object, got {type(value).__name__}: {value!r}"
    assert all(isinstance(key, str) for key in value), f"non-string keys in {value!r}"
    return value


def json_array(value: object) -> list[Any]:
    """``value`` asserted to be a JSON array (a ``list``)."""
    assert isinstance(value, list), f"expected a JSON array, got {type(value).__name__}: {value!r}"
    return value
