"""Anthropic Messages: ``POST /v1/messages`` (JSON or SSE) and ``/v1/messages/count_tokens``.

Shapes follow the API reference and the ``anthropic`` SDK's types (``Message``,
``RawMessageStreamEvent``): a stream is ``message_start``, then per content block
``content_block_start`` / ``content_block_delta``... / ``content_block_stop`` (a ``ping``
after the first block start), then ``message_delta`` (stop reason, usage) and
``message_stop``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ._records import RecordedMessage, RecordedRequest, RecordedToolCall, RecordedToolResult
from ._wire import (
    Codec,
    InvalidRequestError,
    ParsedRequest,
    as_json,
    compact_json,
    content_text,
    require_list,
    require_object,
    result_text,
    settings_of,
    sse,
)

if TYPE_CHECKING:
    from ._engine import ResolvedReply

__all__ = ["AnthropicMessages", "anthropic_error_type"]

_STOP_REASONS = {
    "end-turn": "end_turn",
    "tool-use": "tool_use",
    "max-tokens": "max_tokens",
    "stop-sequence": "stop_sequence",
    "refusal": "refusal",
    "pause-turn": "pause_turn",
}

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}


def anthropic_error_type(status: int) -> str:
    """The Anthropic error ``type`` for an HTTP status."""
    return _ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")


def _message(raw: Any, position: int) -> RecordedMessage:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("role"), str):
        raise InvalidRequestError(f"messages.{position}: a message needs a string `role`")
    content = raw.get("content")
    calls: list[RecordedToolCall] = []
    results: list[RecordedToolResult] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, Mapping):
            continue
        if block.get("type") == "tool_use":
            calls.append(
                RecordedToolCall(
                    id=str(block.get("id", "")),
                    name=str(block.get("name", "")),
                    input=as_json(block.get("input")),
                )
            )
        elif block.get("type") == "tool_result":
            results.append(
                RecordedToolResult(
                    tool_call_id=str(block.get("tool_use_id", "")),
                    content=result_text(block.get("content")),
                    is_error=bool(block.get("is_error", False)),
                )
            )
    return RecordedMessage(
        role=raw["role"],
        text=content_text(content),
        tool_calls=calls,
        tool_results=results,
        raw=as_json(raw),
    )


def _usage(input_tokens: int, output_tokens: int) -> dict[str, Any]:
    return {
        "input_tokens": input_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": output_tokens,
    }


class AnthropicMessages(Codec):
    """The Anthropic Messages protocol."""

    protocol = "anthropic-messages"

    def parse(self, body: Any) -> ParsedRequest:
        body = require_object(body, "an Anthropic Messages request")
        messages = require_list(body, "messages", "an Anthropic Messages request")
        system = body.get("system")
        tools = body.get("tools") if isinstance(body.get("tools"), list) else []
        return ParsedRequest(
            model=str(body["model"]) if body.get("model") is not None else None,
            stream=bool(body.get("stream", False)),
            system=None if system is None else content_text(system),
            messages=[_message(raw, position) for position, raw in enumerate(messages)],
            tools=[str(tool.get("name")) for tool in tools if isinstance(tool, Mapping)],
            settings=settings_of(body, ("model", "messages", "system", "tools", "stream")),
        )

    def count_tokens(self, body: Any) -> dict[str, Any]:
        """The ``count_tokens`` answer: about four characters a token of the request."""
        body = require_object(body, "an Anthropic count_tokens request")
        require_list(body, "messages", "an Anthropic count_tokens request")
        counted = {key: body.get(key) for key in ("system", "messages", "tools")}
        return {"input_tokens": max(1, len(json.dumps(counted, ensure_ascii=False)) // 4)}

    def render(self, reply: ResolvedReply, request: RecordedRequest) -> dict[str, Any]:
        from ._engine import ResolvedText, ResolvedThinking

        content: list[dict[str, Any]] = []
        for block in reply.blocks:
            if isinstance(block, ResolvedText):
                content.append({"type": "text", "text": block.text})
            elif isinstance(block, ResolvedThinking):
                content.append(
                    {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
                )
            else:
                content.append(
                    {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
                )
        return {
            "id": reply.message_id,
            "type": "message",
            "role": "assistant",
            "model": reply.model,
            "content": content,
            "stop_reason": _STOP_REASONS[reply.stop_reason],
            "stop_sequence": None,
            "usage": _usage(reply.input_tokens, reply.output_tokens),
        }

    def events(self, reply: ResolvedReply, request: RecordedRequest) -> list[list[bytes]]:
        from ._engine import ResolvedText, ResolvedThinking

        start = self.render(reply, request) | {
            "content": [],
            "stop_reason": None,
            "usage": _usage(reply.input_tokens, 1),
        }
        segments = [[sse("message_start", {"type": "message_start", "message": start})]]
        for index, block in enumerate(reply.blocks):
            out: list[bytes] = []
            if isinstance(block, ResolvedText):
                opened: dict[str, Any] = {"type": "text", "text": ""}
                deltas = [{"type": "text_delta", "text": c} for c in reply.chunks(block.text)]
            elif isinstance(block, ResolvedThinking):
                opened = {"type": "thinking", "thinking": "", "signature": ""}
                deltas = [
                    {"type": "thinking_delta", "thinking": c} for c in reply.chunks(block.thinking)
                ]
                deltas.append({"type": "signature_delta", "signature": block.signature})
            else:
                opened = {"type": "tool_use", "id": block.id, "name": block.name, "input": {}}
                deltas = [{"type": "input_json_delta", "partial_json": ""}] + [
                    {"type": "input_json_delta", "partial_json": c}
                    for c in reply.chunks(compact_json(block.input))
                ]
            out.append(
                sse(
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": opened},
                )
            )
            if index == 0:
                out.append(sse("ping", {"type": "ping"}))
            out.extend(
                sse(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": d},
                )
                for d in deltas
            )
            out.append(sse("content_block_stop", {"type": "content_block_stop", "index": index}))
            segments.append(out)
        if reply.stream_error is not None:
            failure = reply.stream_error
            body = self.error_body(failure.status, failure.message, failure.error_type)
            segments.append([sse("error", body)])
            return segments
        tail = [
            sse(
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {
                        "stop_reason": _STOP_REASONS[reply.stop_reason],
                        "stop_sequence": None,
                    },
                    "usage": {"output_tokens": reply.output_tokens},
                },
            ),
            sse("message_stop", {"type": "message_stop"}),
        ]
        segments.append(tail)
        return segments

    def error_body(self, status: int, message: str, error_type: str | None) -> dict[str, Any]:
        return {
            "type": "error",
            "error": {"type": error_type or anthropic_error_type(status), "message": message},
        }
