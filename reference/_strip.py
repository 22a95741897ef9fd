"""Boundary-aware removal of the session work dir from what consumers see.

Only display values are rewritten; host tools still receive absolute paths. An
occurrence of the work dir counts when it is preceded by the start of the string,
whitespace, a quote, a backtick or ``=``, and followed by the end of the string, ``/``,
whitespace, a quote, a backtick or one of ``; | & < > ( )``. ``<dir>/src/a.py`` becomes
``src/a.py``; a bare ``<dir>`` becomes ``.``; ``<dir>-old`` is left alone.
"""

from __future__ import annotations

from typing import Any

__all__ = ["StreamingStripper", "strip_value", "strip_work_dir"]

_BEFORE = "\"'`="
_AFTER = "\"'`;|&<>()"


def strip_work_dir(text: str, work_dir: str) -> str:
    """Rewrite qualifying occurrences of ``work_dir`` in ``text`` (see module docstring)."""
    if not work_dir or work_dir not in text:
        return text
    return _strip_stream(text, work_dir, None, final=True)[0]


def strip_value(value: Any, work_dir: str) -> Any:
    """Strip every string nested in a JSON-like value (dicts, lists, strings).

    Dicts and lists (subclasses included) come back as new plain ones; other values as
    they are.
    """
    if not work_dir:
        return value
    return _strip(value, work_dir)


#: Values :func:`_strip` returns as they are without a call (exact types).
_KEPT = frozenset({int, float, bool, type(None)})


def _strip(value: Any, work_dir: str) -> Any:
    kind = type(value)
    if kind is dict:
        # The common items (numbers, strings without the work dir) are decided inline:
        # a JSON result has many of them, and a call each is most of the cost.
        return {
            key: item
            if type(item) in _KEPT or (type(item) is str and work_dir not in item)
            else _strip(item, work_dir)
            for key, item in value.items()
        }
    if kind is list:
        return [
            item
            if type(item) in _KEPT or (type(item) is str and work_dir not in item)
            else _strip(item, work_dir)
            for item in value
        ]
    if isinstance(value, str):
        return strip_work_dir(value, work_dir)
    if isinstance(value, list):
        return [_strip(item, work_dir) for item in value]
    if isinstance(value, dict):
        return {key: _strip(item, work_dir) for key, item in value.items()}
    return value


class StreamingStripper:
    """Strips the work dir from text that arrives in chunks (``tool-input-delta``).

    A tail is held back only when it could still become a qualifying occurrence: it is a
    prefix of the work dir *and* it starts at a path boundary (the start of the input,
    whitespace, a quote, a backtick or ``=``), or it is a whole occurrence at a boundary
    that still needs its terminator. So ``echo x/sand`` is emitted at once while
    ``echo /sand`` holds ``/sand``. Held text is prepended to the next chunk of the same
    id; :meth:`flush` releases it (before the id's ``tool-input-end``).
    """

    def __init__(self, work_dir: str) -> None:
        self._work_dir = work_dir
        self._held: dict[str, str] = {}
        #: The raw character before the held text (or before the next chunk), per id;
        #: absent at the start of an input, which counts as a boundary.
        self._previous_char: dict[str, str] = {}

    def push(self, stream_id: str, chunk: str) -> str:
        """Return the part of ``chunk`` that can be emitted now (possibly empty)."""
        if not self._work_dir:
            return chunk
        text = self._held.pop(stream_id, "") + chunk
        before = self._previous_char.get(stream_id)
        out, held = _strip_stream(text, self._work_dir, before, final=False)
        if held:
            self._held[stream_id] = held
        cut = len(text) - len(held)
        if cut > 0:
            self._previous_char[stream_id] = text[cut - 1]
        return out

    def flush(self, stream_id: str) -> str:
        """Release held text of ``stream_id`` (stripped), or ``""``."""
        held = self._held.pop(stream_id, "")
        before = self._previous_char.pop(stream_id, None)
        if not held:
            return ""
        return _strip_stream(held, self._work_dir, before, final=True)[0]


def _boundary(text: str, index: int, before: str | None) -> bool:
    """Whether an occurrence at ``index`` follows a path boundary (``before`` precedes text)."""
    character = text[index - 1] if index > 0 else before
    return character is None or character.isspace() or character in _BEFORE


def _terminated(text: str, index: int) -> bool:
    return (
        index == len(text) or text[index] == "/" or text[index].isspace() or text[index] in _AFTER
    )


def _strip_stream(text: str, work_dir: str, before: str | None, *, final: bool) -> tuple[str, str]:
    """``(output, held)``: ``text`` stripped, and the tail that must wait for more text.

    ``before`` is the raw character before ``text`` (``None`` at the start of an input).
    Boundaries are judged on raw characters: after an occurrence that is not a path the
    scan resumes behind it, so an occurrence never starts inside another. With ``final``
    nothing is held.
    """
    out: list[str] = []
    position = 0
    while True:
        found = text.find(work_dir, position)
        if found < 0:
            break
        end = found + len(work_dir)
        at_boundary = _boundary(text, found, before)
        if at_boundary and end == len(text) and not final:
            out.append(text[position:found])
            return "".join(out), text[found:]
        if not (at_boundary and _terminated(text, end)):
            out.append(text[position:end])
            position = end
            continue
        out.append(text[position:found])
        if text.startswith("/", end):
            position = end + 1
        else:
            out.append(".")
            position = end
    rest = text[position:]
    if final or not rest:
        return "".join(out) + rest, ""
    held = min(len(rest), len(work_dir) - 1)
    while held > 0:
        start = len(text) - held
        if work_dir.startswith(text[start:]) and _boundary(text, start, before):
            break
        held -= 1
    cut = len(text) - held
    return "".join(out) + text[position:cut], text[cut:]
