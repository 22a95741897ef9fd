"""Boundary-aware removal of the session work dir from what consumers see.

Only display values are rewritten; host tools still receive absolute paths. An
occurrence of the work dir counts when it is preceded by the start of the string,
whitespace, a quote, a backtick or ``=``, and followed by the end of the string, ``/``,
whitespace, a quote, a backtick or one of ``; | & < > ( )``. ``<dir>/src/a.py`` becomes
``src/a.py``; a bare ``<dir>`` becomes ``.``; ``<dir>-old`` is left alone.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["StreamingStripper", "strip_value", "strip_work_dir"]

_BEFORE = "\"'`="
_AFTER = "\"'`;|&<>()"


def _pattern(work_dir: str) -> re.Pattern[str]:
    before = rf"(?:(?<=^)|(?<=[\s{re.escape(_BEFORE)}]))"
    after = rf"(?=$|/|[\s{re.escape(_AFTER)}])"
    return re.compile(before + re.escape(work_dir) + after)


def strip_work_dir(text: str, work_dir: str) -> str:
    """Rewrite qualifying occurrences of ``work_dir`` in ``text`` (see module docstring)."""
    if not work_dir or work_dir not in text:
        return text
    pattern = _pattern(work_dir)
    out: list[str] = []
    position = 0
    for match in pattern.finditer(text):
        out.append(text[position : match.start()])
        end = match.end()
        if text.startswith("/", end):
            position = end + 1
        else:
            out.append(".")
            position = end
    out.append(text[position:])
    return "".join(out)


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

    Trailing text that could still begin a qualifying occurrence is held back and
    prepended to the next chunk of the same id; :meth:`flush` releases it (before the
    id's ``tool-input-end``).
    """

    def __init__(self, work_dir: str) -> None:
        self._work_dir = work_dir
        self._held: dict[str, str] = {}
        self._previous_char: dict[str, str] = {}

    def push(self, stream_id: str, chunk: str) -> str:
        """Return the part of ``chunk`` that can be emitted now (possibly empty)."""
        if not self._work_dir:
            return chunk
        text = self._held.pop(stream_id, "") + chunk
        cut = self._hold_point(text)
        ready, held = text[:cut], text[cut:]
        if held:
            self._held[stream_id] = held
        return self._emit(stream_id, ready)

    def flush(self, stream_id: str) -> str:
        """Release held text of ``stream_id`` (stripped), or ``""``."""
        held = self._held.pop(stream_id, "")
        out = self._emit(stream_id, held) if held else ""
        self._previous_char.pop(stream_id, None)
        return out

    def _emit(self, stream_id: str, ready: str) -> str:
        if not ready:
            return ""
        context = self._previous_char.get(stream_id, "")
        stripped = strip_work_dir(context + ready, self._work_dir)
        if context:
            # The context character was emitted before; it is never rewritten because
            # only the work dir itself (which follows it) is replaced.
            stripped = stripped[len(context) :]
        self._previous_char[stream_id] = ready[-1]
        return stripped

    def _hold_point(self, text: str) -> int:
        """Index from which ``text`` may still become (part of) an occurrence."""
        work_dir = self._work_dir
        cut = len(text)
        for start in range(max(0, len(text) - len(work_dir)), len(text)):
            if work_dir.startswith(text[start:]):
                cut = start
                break
        # A complete occurrence right before the cut still needs its terminator (which
        # decides between "<dir>/x" -> "x" and "<dir>" -> "."), so hold it too.
        while cut > 0 and text[:cut].endswith(work_dir):
            cut -= len(work_dir)
        return cut
