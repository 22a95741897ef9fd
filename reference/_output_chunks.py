"""Text deltas re-chunked by the partial structured output (RESULT-019, notes 9.9).

With an ``output`` setting the official agent pipes its full stream through a
transform: the deltas of the *first* text block of the result are held until the
partial output parsed from the text so far changes, then re-emitted merged as one
delta that carries the new partial output; text that does not parse yet (partial JSON
that cannot be repaired) waits until the block ends or the step finishes. Other text
blocks and every other part pass through unchanged. ``partial_output_stream`` yields the
partial outputs the merged deltas carry, in order.

The partial JSON repair follows the AI SDK's ``parsePartialJson``: the text is parsed
as it is, else after closing what is open (strings, arrays, objects, a literal's
remaining letters) and cutting what cannot be completed (a dangling key, a number's
trailing ``.``/``e``/``-``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from harness_testkit.spec import (
    ConsumerFinishStepPart,
    ConsumerPart,
    ConsumerTextDeltaPart,
    ConsumerTextEndPart,
    ConsumerTextStartPart,
    JsonResponseFormat,
    TextResponseFormat,
)

__all__ = ["NO_PARTIAL", "OutputChunker", "parse_partial_json", "repair_json"]

#: Marks a part that carries no partial output (``None`` is a valid JSON partial).
NO_PARTIAL: Any = object()

_LITERALS = ("true", "false", "null")

# Parser states (a stack; the top is the innermost construct).
_ROOT, _DONE = "root", "done"
_OBJ_START, _OBJ_KEY, _OBJ_AFTER_KEY = "obj-start", "obj-key", "obj-after-key"
_OBJ_BEFORE_VALUE, _OBJ_AFTER_VALUE, _OBJ_AFTER_COMMA = "obj-before", "obj-after", "obj-comma"
_ARR_START, _ARR_AFTER_VALUE, _ARR_AFTER_COMMA = "arr-start", "arr-after", "arr-comma"
_STRING, _ESCAPE, _UNICODE = "string", "escape", "unicode"
_NUMBER, _LITERAL = "number", "literal"

_CLOSERS = {
    _STRING: '"',
    **dict.fromkeys(
        (
            _OBJ_START,
            _OBJ_KEY,
            _OBJ_AFTER_KEY,
            _OBJ_BEFORE_VALUE,
            _OBJ_AFTER_VALUE,
            _OBJ_AFTER_COMMA,
        ),
        "}",
    ),
    **dict.fromkeys((_ARR_START, _ARR_AFTER_VALUE, _ARR_AFTER_COMMA), "]"),
}
_HEX = frozenset("0123456789abcdefABCDEF")


class _Repair:
    """One pass over a JSON prefix: what is kept (``last``) and what stays open (``stack``)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.stack: list[str] = [_ROOT]
        self.last = -1  # index of the last character that is kept
        self.literal_start = 0
        self.hex_digits = 0

    def _open_value(self, char: str, index: int, after: str) -> None:
        """``char`` may start a value; the enclosing state becomes ``after``."""
        if char == "-":
            inner = _NUMBER  # a lone sign is not kept
        elif char == '"':
            inner = _STRING
        elif char in "ftn":
            inner = _LITERAL
            self.literal_start = index
        elif char.isdigit() and char.isascii():
            inner = _NUMBER
        elif char == "{":
            inner = _OBJ_START
        elif char == "[":
            inner = _ARR_START
        else:
            return  # whitespace or junk: nothing starts
        if char != "-":
            self.last = index
        self.stack[-1] = after
        self.stack.append(inner)

    def _after_value(self, char: str, index: int, closer: str, comma_state: str) -> None:
        if char == ",":
            self.stack[-1] = comma_state
        elif char == closer:
            self.last = index
            self.stack.pop()

    def _after_object_value(self, char: str, index: int) -> None:
        self._after_value(char, index, "}", _OBJ_AFTER_COMMA)

    def _after_array_value(self, char: str, index: int) -> None:
        self._after_value(char, index, "]", _ARR_AFTER_COMMA)

    def _end_scalar(self, char: str, index: int) -> None:
        """A number or literal ended at ``char``: the enclosing container reads it."""
        self.stack.pop()
        if self.stack[-1] == _OBJ_AFTER_VALUE:
            self._after_object_value(char, index)
        elif self.stack[-1] == _ARR_AFTER_VALUE:
            self._after_array_value(char, index)

    def step(self, char: str, index: int) -> None:
        state = self.stack[-1]
        if state == _ROOT:
            self._open_value(char, index, _DONE)
        elif state in (_OBJ_START, _OBJ_AFTER_COMMA):
            if char == '"':
                self.stack[-1] = _OBJ_KEY
            elif char == "}" and state == _OBJ_START:
                self.last = index
                self.stack.pop()
        elif state == _OBJ_KEY:
            if char == '"':
                self.stack[-1] = _OBJ_AFTER_KEY
        elif state == _OBJ_AFTER_KEY:
            if char == ":":
                self.stack[-1] = _OBJ_BEFORE_VALUE
        elif state == _OBJ_BEFORE_VALUE:
            self._open_value(char, index, _OBJ_AFTER_VALUE)
        elif state == _OBJ_AFTER_VALUE:
            self._after_object_value(char, index)
        elif state == _STRING:
            if char == '"':
                self.stack.pop()
                self.last = index
            elif char == "\\":
                self.stack.append(_ESCAPE)
            else:
                self.last = index
        elif state == _ARR_START:
            if char == "]":
                self.last = index
                self.stack.pop()
            else:
                self.last = index
                self._open_value(char, index, _ARR_AFTER_VALUE)
        elif state == _ARR_AFTER_VALUE:
            if char == ",":
                self.stack[-1] = _ARR_AFTER_COMMA
            elif char == "]":
                self.last = index
                self.stack.pop()
            else:
                self.last = index
        elif state == _ARR_AFTER_COMMA:
            self._open_value(char, index, _ARR_AFTER_VALUE)
        elif state == _ESCAPE:
            self.stack.pop()
            if char == "u":
                self.hex_digits = 0
                self.stack.append(_UNICODE)
            else:
                self.last = index
        elif state == _UNICODE:
            if char in _HEX:
                self.hex_digits += 1
                if self.hex_digits == 4:
                    self.stack.pop()
                    self.last = index
        elif state == _NUMBER:
            if char.isdigit() and char.isascii():
                self.last = index
            elif char in "eE-.":
                pass  # kept only once a digit follows
            elif char in ",}]":
                self._end_scalar(char, index)
            else:
                self.stack.pop()
        elif state == _LITERAL:
            word = self.text[self.literal_start : index + 1]
            if any(literal.startswith(word) for literal in _LITERALS):
                self.last = index
            else:
                self._end_scalar(char, index)

    def result(self) -> str:
        out = [self.text[: self.last + 1]]
        for state in reversed(self.stack):
            if state == _LITERAL:
                word = self.text[self.literal_start :]
                for literal in _LITERALS:
                    if literal.startswith(word):
                        out.append(literal[len(word) :])
                        break
            else:
                out.append(_CLOSERS.get(state, ""))
        return "".join(out)


def repair_json(text: str) -> str:
    """Close a JSON prefix so that it parses, cutting what cannot be completed."""
    repair = _Repair(text)
    for index, char in enumerate(text):
        repair.step(char, index)
    return repair.result()


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _loads(text: str) -> tuple[bool, Any]:
    try:
        return True, json.loads(text, parse_constant=_no_constant)
    except ValueError:
        return False, None


def parse_partial_json(text: str) -> tuple[bool, Any]:
    """``(ok, value)``: ``text`` parsed as JSON, else repaired and parsed."""
    ok, value = _loads(text)
    if ok:
        return ok, value
    return _loads(repair_json(text))


def _js_equal_key(value: Any) -> str:
    """What ``JSON.stringify`` would print, as far as comparing partials goes (``1.0``
    and ``1`` are one JavaScript number)."""
    return json.dumps(_js_numbers(value), separators=(",", ":"), ensure_ascii=False)


def _js_numbers(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_js_numbers(item) for item in value]
    if isinstance(value, dict):
        return {key: _js_numbers(item) for key, item in value.items()}
    return value


class OutputChunker:
    """Re-chunks a result's first text block as the official output transform does.

    :meth:`feed` takes each consumer part in order and yields the parts to emit, each
    with the partial output it carries (:data:`NO_PARTIAL` for none).
    """

    def __init__(self, output_format: TextResponseFormat | JsonResponseFormat) -> None:
        self._text_mode = isinstance(output_format, TextResponseFormat)
        self._block: str | None = None  # the first text block's id
        self._text = ""  # all of that block's text so far
        self._pending = ""  # its text not emitted yet
        self._metadata: Any = None  # its latest delta provider metadata
        self._published = ""  # the last published partial, compared as text

    def _partial(self) -> tuple[bool, Any]:
        if self._text_mode:
            return True, self._text
        return parse_partial_json(self._text)

    def _flush(self, partial: Any = NO_PARTIAL) -> tuple[ConsumerPart, Any]:
        assert self._block is not None
        part = ConsumerTextDeltaPart(
            id=self._block, text=self._pending, provider_metadata=self._metadata
        )
        self._pending = ""
        return part, partial

    def feed(self, part: ConsumerPart) -> Iterator[tuple[ConsumerPart, Any]]:
        """The parts to emit for ``part`` (none while its text is held)."""
        if isinstance(part, ConsumerFinishStepPart) and self._pending:
            yield self._flush()
        if not isinstance(
            part, ConsumerTextStartPart | ConsumerTextDeltaPart | ConsumerTextEndPart
        ):
            yield part, NO_PARTIAL
            return
        if self._block is None:
            self._block = part.id
        elif part.id != self._block:
            yield part, NO_PARTIAL
            return
        if isinstance(part, ConsumerTextStartPart):
            yield part, NO_PARTIAL
            return
        if isinstance(part, ConsumerTextEndPart):
            if self._pending:
                yield self._flush()
            yield part, NO_PARTIAL
            return
        self._text += part.text
        self._pending += part.text
        if part.provider_metadata is not None:
            self._metadata = part.provider_metadata
        if not part.text and part.provider_metadata is not None:
            yield part, NO_PARTIAL  # a metadata-only delta passes as it is
            return
        ok, value = self._partial()
        if not ok:
            return  # held until the text parses, the block ends or the step finishes
        key = value if isinstance(value, str) else _js_equal_key(value)
        if key != self._published:
            self._published = key
            yield self._flush(value)
