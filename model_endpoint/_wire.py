"""Helpers shared by the wire protocols: content text, SSE framing, request checks."""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from harness_testkit.spec import JSONValue

from ._records import RecordedMessage, RecordedRequest, WireProtocol

if TYPE_CHECKING:
    from ._engine import ResolvedReply

__all__ = [
    "Codec",
    "InvalidRequestError",
    "ParsedRequest",
    "as_json",
    "clean_headers",
    "compact_json",
    "content_text",
    "last_user_text",
    "parse_arguments",
    "require_list",
    "require_object",
    "result_text",
    "settings_of",
    "sse",
]

_SECRET_HEADERS = frozenset(
    {"authorization", "x-api-key", "api-key", "cookie", "proxy-authorization"}
)
_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.S)
_TEXT_PART_TYPES = frozenset(
    {"text", "input_text", "output_text", "summary_text", "reasoning_text"}
)


class InvalidRequestError(Exception):
    """The body is not a valid request of its protocol (answered with HTTP 400)."""


def compact_json(value: Any) -> str:
    """``value`` as compact JSON (the form tool arguments travel in)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def sse(event: str | None, data: Mapping[str, Any] | str) -> bytes:
    """One server-sent event (``event:`` line only when named)."""
    payload = data if isinstance(data, str) else compact_json(data)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n".encode()


def content_text(content: Any) -> str:
    """The text of a message ``content``: a string, or the text parts of a part list."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    texts = [
        part["text"]
        for part in content
        if isinstance(part, Mapping)
        and part.get("type", "text") in _TEXT_PART_TYPES
        and isinstance(part.get("text"), str)
    ]
    return "".join(texts)


def result_text(content: Any) -> str:
    """A tool result's text: a string as is, text parts joined, anything else as JSON."""
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    if isinstance(content, list) and all(
        isinstance(part, Mapping) and part.get("type") in _TEXT_PART_TYPES for part in content
    ):
        return content_text(content)
    return compact_json(content)


def parse_arguments(raw: Any) -> Any:
    """Tool-call arguments sent as JSON text, parsed (kept as text when not JSON)."""
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw


def require_object(body: Any, what: str) -> dict[str, Any]:
    """``body`` when it is a JSON object, else :class:`InvalidRequestError`."""
    if not isinstance(body, dict):
        raise InvalidRequestError(f"{what} must be a JSON object, got {type(body).__name__}")
    return body


def require_list(body: Mapping[str, Any], key: str, what: str) -> list[Any]:
    """``body[key]`` when it is a list, else :class:`InvalidRequestError`."""
    value = body.get(key)
    if not isinstance(value, list):
        raise InvalidRequestError(f"{what}: `{key}` must be a list")
    return value


def last_user_text(messages: Iterable[RecordedMessage]) -> str | None:
    """The text of the last user message that has text of the user's own.

    Context a runtime injects into user messages (Claude Code's ``<system-reminder>``
    blocks) is not the user's text: it is left out, and a message with nothing else
    does not count.
    """
    found: str | None = None
    for message in messages:
        if message.role == "user":
            text = _REMINDER.sub("", message.text).strip()
            if text:
                found = text
    return found


def clean_headers(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Request headers with credentials dropped (lower-case names)."""
    return {name.lower(): value for name, value in headers if name.lower() not in _SECRET_HEADERS}


def as_json(value: Any) -> JSONValue:
    """``value`` round-tripped through JSON (what the recorded models store)."""
    loaded: JSONValue = json.loads(compact_json(value))
    return loaded


@dataclass
class ParsedRequest:
    """What a codec reads from a request body (the rest of a record comes from HTTP)."""

    model: str | None
    stream: bool
    system: str | None
    messages: list[RecordedMessage]
    tools: list[str]
    settings: dict[str, JSONValue] = field(default_factory=dict)


class Codec(ABC):
    """One wire protocol: reads requests, writes replies, events and error bodies."""

    #: The protocol's name in records.
    protocol: WireProtocol

    @abstractmethod
    def parse(self, body: Any) -> ParsedRequest:
        """Read a request body. Raises :class:`InvalidRequestError` when it is not one."""

    @abstractmethod
    def render(self, reply: ResolvedReply, request: RecordedRequest) -> dict[str, Any]:
        """The non-streaming response body."""

    @abstractmethod
    def events(self, reply: ResolvedReply, request: RecordedRequest) -> list[list[bytes]]:
        """The streamed response as server-sent events, in ``len(reply.blocks) + 2``
        segments: the opening events, one segment per block, the closing events (the
        error event instead when the reply has a ``stream_error``)."""

    @abstractmethod
    def error_body(self, status: int, message: str, error_type: str | None) -> dict[str, Any]:
        """The provider's error body for an HTTP error."""


def settings_of(body: Mapping[str, Any], consumed: Iterable[str]) -> dict[str, JSONValue]:
    """The top-level request fields a codec did not consume itself."""
    skip = set(consumed)
    return {key: as_json(value) for key, value in body.items() if key not in skip}
