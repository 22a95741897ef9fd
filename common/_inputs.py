"""Bounded reading of the JSON and YAML files the kit takes from its users.

Every such file (capability declarations, expectations, baselines, replay bundles,
fake-harness and endpoint scripts) goes through :func:`read_structured` or
:func:`read_bounded_text`: only regular files (``/dev/zero`` or a FIFO is refused), at
most :data:`MAX_INPUT_BYTES`, nesting at most :data:`MAX_DEPTH` deep, no YAML aliases (no
"billion laughs"), integers inside the JSON-safe range and finite numbers only. Each
refusal is an :class:`InputError` naming the file and field.

Re-exported by :mod:`harness_testkit.common` for the conformance commands, the fake
harness and the model endpoint (their script files).
"""

from __future__ import annotations

import json
import math
import os
import stat
from pathlib import Path
from typing import Any

from harness_testkit.spec import HarnessUsageError, YamlError, load_yaml

__all__ = [
    "MAX_DEPTH",
    "MAX_INPUT_BYTES",
    "MAX_SAFE_INTEGER",
    "InputError",
    "bounded_copy",
    "check_json_value",
    "parse_structured",
    "read_bounded_text",
    "read_structured",
]

#: Largest file a command reads (bytes).
MAX_INPUT_BYTES = 16 * 1024 * 1024
#: Deepest nesting of lists and objects accepted in any input.
MAX_DEPTH = 64
#: Integers beyond this magnitude cannot round-trip through JSON peers (2**53 - 1).
MAX_SAFE_INTEGER = 2**53 - 1


class InputError(HarnessUsageError):
    """An input file or value is unusable; the message names it and what is wrong."""

    #: The name error parts and reports show for it (its own, not ``Error``).
    name = "InputError"


def read_bounded_text(path: Path, *, what: str, max_bytes: int = MAX_INPUT_BYTES) -> str:
    """The UTF-8 text of a regular file of at most ``max_bytes``.

    Raises:
        InputError: the path is missing, not a regular file, too large or not UTF-8.
    """
    try:
        info = os.stat(path)
    except OSError as error:
        raise InputError(f"cannot read {what} {path}: {error.strerror or error}") from error
    if not stat.S_ISREG(info.st_mode):
        raise InputError(f"{what} {path} is not a regular file")
    if info.st_size > max_bytes:
        raise InputError(f"{what} {path} is {info.st_size} bytes; the limit is {max_bytes}")
    try:
        with open(path, "rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError as error:
        raise InputError(f"cannot read {what} {path}: {error.strerror or error}") from error
    if len(data) > max_bytes:
        raise InputError(f"{what} {path} is larger than the limit of {max_bytes} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(f"{what} {path} is not UTF-8 text: {error}") from error


def _json_depth_ok(text: str) -> bool:
    # Cheap upper bound before json.loads (which would recurse): brackets outside strings.
    depth = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return False
        elif char in "]}":
            depth -= 1
    return True


def parse_structured(text: str, *, what: str, json_only: bool = False) -> Any:
    """Parse JSON (or YAML unless ``json_only``) within the limits; see the module docstring.

    Raises:
        InputError: naming ``what`` and the problem.
    """
    try:
        if json_only:
            if not _json_depth_ok(text):
                raise InputError(f"nesting deeper than {MAX_DEPTH} levels")
            value = json.loads(text, parse_constant=_refuse_constant)
        else:
            value = load_yaml(text, source=what, max_depth=MAX_DEPTH)
    except InputError as error:
        raise InputError(f"{what}: {error}") from None
    except YamlError as error:
        raise InputError(str(error)) from None
    except (ValueError, RecursionError) as error:
        kind = "JSON" if json_only else "YAML or JSON"
        first = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise InputError(f"{what} is not valid {kind}: {first}") from None
    check_json_value(value, what=what)
    return value


def _refuse_constant(name: str) -> Any:
    raise InputError(f"{name} is not a JSON number")


def read_structured(path: Path, *, what: str, json_only: bool = False) -> Any:
    """:func:`read_bounded_text` then :func:`parse_structured` (errors name the file)."""
    text = read_bounded_text(path, what=what)
    return parse_structured(text, what=f"{what} {path}", json_only=json_only)


def check_json_value(value: Any, *, what: str, max_depth: int = MAX_DEPTH) -> None:
    """Refuse values JSON peers cannot hold: deep nesting, unsafe integers, non-finite numbers.

    Iterative, so a deeply nested or circular value never raises ``RecursionError``.

    Raises:
        InputError: naming the field (``what`` plus a ``.key[index]`` path).
    """
    stack: list[tuple[Any, str, int, bool]] = [(value, what, 0, False)]
    on_path: set[int] = set()  # containers on the current path (a revisit is a cycle)
    done: set[int] = set()  # containers already checked (shared, not cyclic)
    while stack:
        item, where, depth, leaving = stack.pop()
        if leaving:
            on_path.discard(id(item))
            done.add(id(item))
            continue
        if isinstance(item, bool) or item is None or isinstance(item, str):
            continue
        if isinstance(item, int):
            if abs(item) > MAX_SAFE_INTEGER:
                raise InputError(
                    f"{where}: integer {_short(item)} is outside the JSON-safe range "
                    f"(±{MAX_SAFE_INTEGER})"
                )
            continue
        if isinstance(item, float):
            if not math.isfinite(item):
                raise InputError(f"{where}: {item} is not a finite JSON number")
            continue
        if isinstance(item, dict | list):
            if id(item) in on_path:
                raise InputError(f"{where}: the value contains itself (a cycle)")
            if id(item) in done:
                continue
            if depth >= max_depth:
                raise InputError(f"{where}: nesting deeper than {max_depth} levels")
            on_path.add(id(item))
            stack.append((item, where, depth, True))
            if isinstance(item, dict):
                for key, child in item.items():
                    if not isinstance(key, str):
                        raise InputError(f"{where}: key {key!r} is not a string")
                    stack.append((child, f"{where}.{key}", depth + 1, False))
            else:
                for index, child in enumerate(item):
                    stack.append((child, f"{where}[{index}]", depth + 1, False))
            continue
        raise InputError(f"{where}: {type(item).__name__} is not a JSON value")


def bounded_copy(value: Any, *, max_depth: int = MAX_DEPTH) -> Any:
    """A JSON-ready copy of ``value`` for evidence (bundles): subtrees deeper than
    ``max_depth`` and unsafe integers become a short note, other objects their ``repr``.

    The recursion is bounded by ``max_depth``, so it never raises ``RecursionError``.
    """

    def copy(item: Any, depth: int) -> Any:
        if item is None or isinstance(item, bool | str):
            return item
        if isinstance(item, int):
            return item if abs(item) <= MAX_SAFE_INTEGER else f"<integer {_short(item)}>"
        if isinstance(item, float):
            return item if math.isfinite(item) else repr(item)
        if isinstance(item, dict | list | tuple):
            if depth >= max_depth:
                return f"<nested deeper than {max_depth} levels>"
            if isinstance(item, dict):
                return {str(key): copy(child, depth + 1) for key, child in item.items()}
            return [copy(child, depth + 1) for child in item]
        return repr(item)[:2000]

    return copy(value, 0)


def _short(number: int) -> str:
    bits = abs(number).bit_length()
    return str(number) if bits <= 80 else f"of {bits} bits"
