"""JSON value typing and checks shared by every wire model."""

from __future__ import annotations

import json
import math
from typing import Any

from pydantic import ConfigDict, JsonValue
from pydantic.alias_generators import to_camel

__all__ = ["WIRE_CONFIG", "JSONValue", "dump_json", "find_non_json", "is_json_value"]

#: Any JSON value (null, bool, number, string, array, object), validated by pydantic.
JSONValue = JsonValue

#: Model configuration for every wire model: camelCase aliases on the wire, snake_case in
#: Python, frozen instances. Python callers may build models by field name; wire parsing
#: (``parse_*`` helpers) accepts aliases only, so a misspelt wire key is never accepted.
WIRE_CONFIG = ConfigDict(
    alias_generator=to_camel,
    validate_by_name=True,
    validate_by_alias=True,
    serialize_by_alias=True,
    frozen=True,
    extra="forbid",
)


def find_non_json(value: Any, path: str = "$") -> str | None:
    """Return the JSON path of the first value that is not plain JSON, or ``None``.

    Plain JSON means ``None``, ``bool``, ``int``, finite ``float``, ``str``, ``list`` of
    JSON and ``dict`` with ``str`` keys and JSON values. Tuples, sets, bytes, NaN and
    arbitrary objects are not JSON.

    Args:
        value: The value to inspect.
        path: The path prefix used in the returned location.

    Returns:
        ``None`` when ``value`` is plain JSON, else a description such as
        ``"$.data.items[2] is a set"``.
    """
    if value is None or isinstance(value, bool | str):
        return None
    if isinstance(value, int):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{path} is a non-finite float ({value!r})"
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = find_non_json(item, f"{path}[{index}]")
            if found is not None:
                return found
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"{path} has a non-string key {key!r}"
            found = find_non_json(item, f"{path}.{key}")
            if found is not None:
                return found
        return None
    return f"{path} is a {type(value).__name__}, not a JSON value"


def is_json_value(value: Any) -> bool:
    """Return whether ``value`` is plain JSON (see :func:`find_non_json`)."""
    return find_non_json(value) is None


def dump_json(value: Any) -> str:
    """Serialize plain JSON compactly, the way ``JSON.stringify`` does.

    Args:
        value: A plain JSON value.

    Returns:
        Compact JSON text with non-ASCII characters kept as they are.
    """
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
