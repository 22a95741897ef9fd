"""JSON value typing and checks shared by every wire model."""

from __future__ import annotations

import json
import math
from typing import Any

import yaml
from pydantic import ConfigDict, JsonValue
from pydantic.alias_generators import to_camel

__all__ = [
    "MAX_SAFE_INTEGER",
    "WIRE_CONFIG",
    "JSONValue",
    "dump_json",
    "find_non_json",
    "is_json_value",
    "safe_load_bounded",
]

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


#: Integers a JSON peer (JavaScript) can represent exactly: ``±(2**53 - 1)``.
MAX_SAFE_INTEGER = 2**53 - 1


def find_non_json(
    value: Any,
    path: str = "$",
    *,
    max_depth: int | None = None,
    safe_integers: bool = False,
) -> str | None:
    """Return the JSON path of the first value that is not plain JSON, or ``None``.

    Plain JSON means ``None``, ``bool``, ``int``, finite ``float``, ``str``, ``list`` of
    JSON and ``dict`` with ``str`` keys and JSON values. Tuples, sets, bytes, NaN and
    arbitrary objects are not JSON; neither is a value that contains itself. The walk
    is iterative, so deep or circular values never raise ``RecursionError``.

    Args:
        value: The value to inspect.
        path: The path prefix used in the returned location.
        max_depth: Refuse lists and objects nested deeper than this.
        safe_integers: Refuse integers beyond :data:`MAX_SAFE_INTEGER` in magnitude.

    Returns:
        ``None`` when ``value`` is plain JSON, else a description such as
        ``"$.data.items[2] is a set"``.
    """
    if _is_plain(value, max_depth, safe_integers):
        return None  # the common case, decided without building a path per value
    return _first_problem(value, path, max_depth, safe_integers)


def _first_problem(value: Any, path: str, max_depth: int | None, safe_integers: bool) -> str | None:
    """:func:`find_non_json`'s walk, naming the first value that is not plain JSON."""
    # (value, path, depth, leaving): containers are left after their children.
    stack: list[tuple[Any, str, int, bool]] = [(value, path, 0, False)]
    on_path: set[int] = set()
    while stack:
        item, where, depth, leaving = stack.pop()
        if leaving:
            on_path.discard(id(item))
            continue
        if item is None or isinstance(item, bool | str):
            continue
        if isinstance(item, int):
            if safe_integers and abs(item) > MAX_SAFE_INTEGER:
                return f"{where} is an integer outside the JSON-safe range (±{MAX_SAFE_INTEGER})"
            continue
        if isinstance(item, float):
            if math.isfinite(item):
                continue
            return f"{where} is a non-finite float ({item!r})"
        if not isinstance(item, list | dict):
            return f"{where} is a {type(item).__name__}, not a JSON value"
        if id(item) in on_path:
            return f"{where} contains itself (a cycle), not a JSON value"
        if max_depth is not None and depth >= max_depth:
            return f"{where} is nested deeper than {max_depth} levels"
        on_path.add(id(item))
        stack.append((item, where, depth, True))
        children: list[tuple[Any, str, int, bool]] = []
        if isinstance(item, list):
            children = [(child, f"{where}[{i}]", depth + 1, False) for i, child in enumerate(item)]
        else:
            for key, child in item.items():
                if not isinstance(key, str):
                    return f"{where} has a non-string key {key!r}"
                children.append((child, f"{where}.{key}", depth + 1, False))
        stack.extend(reversed(children))
    return None


def _is_plain(value: Any, max_depth: int | None, safe_integers: bool) -> bool:
    """Whether :func:`find_non_json` finds nothing, decided without paths.

    The same walk and the same tests, but leaves are checked in place (most values are
    leaves) and no path is built: a state or tool result of thousands of values is read
    once, cheaply. Only a refused value pays for the walk that names where it is. The
    exact built-in types are told apart by identity first (a lifecycle state is walked
    several times per suspension and continuation); subclasses take the ``isinstance``
    tests, with the same verdicts.
    """
    if not isinstance(value, list | dict):
        return _plain_leaf(value, safe_integers)
    limit = math.inf if max_depth is None else max_depth
    on_path: set[int] = set()
    # (container, depth); depth -1 marks leaving a container after its children.
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth < 0:
            on_path.discard(id(item))
            continue
        if depth >= limit or id(item) in on_path:
            return False
        on_path.add(id(item))
        stack.append((item, -1))
        if type(item) is dict or isinstance(item, dict):
            for key in item:
                if type(key) is not str and not isinstance(key, str):
                    return False
            children: Any = item.values()
        else:
            children = item
        depth += 1
        for child in children:
            kind = type(child)
            if kind is str or child is None or kind is bool:
                continue
            if kind is dict or kind is list:
                stack.append((child, depth))
            elif kind is int:
                if safe_integers and not -MAX_SAFE_INTEGER <= child <= MAX_SAFE_INTEGER:
                    return False
            elif kind is float:
                if not math.isfinite(child):
                    return False
            elif isinstance(child, list | dict):
                stack.append((child, depth))
            elif not _plain_leaf(child, safe_integers):
                return False
    return True


def _plain_leaf(value: Any, safe_integers: bool) -> bool:
    """Whether a value that is not a list or dict is plain JSON (as find_non_json says)."""
    if value is None or isinstance(value, bool | str):
        return True
    if isinstance(value, int):
        return not safe_integers or abs(value) <= MAX_SAFE_INTEGER
    if isinstance(value, float):
        return math.isfinite(value)
    return False


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


class _BoundedLoader(yaml.SafeLoader):
    """A safe YAML loader refusing aliases and nesting deeper than ``max_depth``."""

    def __init__(self, stream: str, max_depth: int) -> None:
        super().__init__(stream)
        self._depth = 0
        self._max_depth = max_depth

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()  # type: ignore[no-untyped-call]
            raise yaml.YAMLError(
                f"YAML aliases are not accepted (alias at line {event.start_mark.line + 1})"
            )
        self._depth += 1
        try:
            if self._depth > self._max_depth:
                event = self.peek_event()  # type: ignore[no-untyped-call]
                raise yaml.YAMLError(
                    f"nesting deeper than {self._max_depth} levels "
                    f"(line {event.start_mark.line + 1})"
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def safe_load_bounded(text: str, *, max_depth: int) -> Any:
    """``yaml.safe_load`` without aliases (no "billion laughs") and bounded nesting.

    Raises:
        yaml.YAMLError: invalid YAML, an alias, or nesting deeper than ``max_depth``.
    """
    loader = _BoundedLoader(text, max_depth)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()
