"""OpenAI Chat Completions: ``POST /v1/chat/completions`` (JSON or SSE).

Shapes follow the API reference and the ``openai`` SDK's types (``ChatCompletion``,
``ChatCompletionChunk``): a stream is ``data:`` chunks (the first carries the role, tool
calls open with id, type and name and continue with argument pieces, the last carries
``finish_reason``), a usage chunk with empty ``choices`` when
``stream_options.include_usage`` is set, then ``data: [DONE]``. Chat Completions has no
reasoning field of its own: thinking goes out as ``reasoning_content``, the extension
field OpenAI-compatible reasoning providers use.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ._openai_responses import openai_error
from ._records import RecordedMessage, RecordedRequest, RecordedToolCall, RecordedToolResult
from ._wire import (
    Codec,
    InvalidRequestError,
    ParsedRequest,
    as_json,
    content_text,
    parse_arguments,
    require_list,
    require_object,
    result_text,
    settings_of,
    sse,
)

if TYPE_CHECKING:
    from ._engine import ResolvedReply

__all__ = ["OpenAIChat"]

_FINISH_REASONS = {
    "end-turn": "stop",
    "tool-use": "tool_calls",
    "max-tokens": "length",
    "stop-sequence": "stop",
    "refusal": "content_filter",
    "pause-turn": "stop",
}


def _message(raw: Any, position: int) -> RecordedMessage:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("role"), str):
        raise InvalidRequestError(f"messages.{position}: a message needs a string `role`")
    calls = [
        RecordedToolCall(
            id=str(call.get("id", "")),
            name=str((call.get("function") or {}).get("name", "")),
            input=as_json(parse_arguments((call.get("function") or {}).get("arguments"))),
        )
        for call in raw.get("tool_calls") or []
        if isinstance(call, Mapping)
    ]
    results = []
    if raw["role"] == "tool":
        results.append(
            RecordedToolResult(
                tool_call_id=str(raw.get("tool_call_id", "")),
                content=result_text(raw.get("content")),
            )
        )
    text = "" if raw["role"] == "tool" else content_text(raw.get("content"))
    return RecordedMessage(
        role=raw["role"], text=text, tool_calls=calls, tool_results=results, raw=as_json(raw)
    )


class OpenAIChat(Codec):
    """The OpenAI Chat Completions protocol."""

    protocol = "openai-chat"

    def parse(self, body: Any) -> ParsedRequest:
        body = require_object(body, "an OpenAI Chat Completions request")
        raw_messages = require_list(body, "messages", "an OpenAI Chat Completions request")
        messages = [_message(raw, position) for position, raw in enumerate(raw_messages)]
        system = [m.text for m in messages if m.role in ("system", "developer") and m.text]
        tools = body.get("tools") if isinstance(body.get("tools"), list) else []
        return ParsedRequest(
            model=str(body["model"]) if body.get("model") is not None else None,
            stream=bool(body.get("stream", False)),
            system="\n\n".join(system) if system else None,
            messages=messages,
            tools=[
                str((tool.get("function") or {}).get("name") or tool.get("type"))
                for tool in tools
                if isinstance(tool, Mapping)
            ],
            settings=settings_of(body, ("model", "messages", "tools", "stream")),
        )

    @staticmethod
    def _usage(reply: ResolvedReply) -> dict[str, Any]:
        return {
            "prompt_tokens": reply.input_tokens,
            "completion_tokens": reply.output_tokens,
            "total_tokens": reply.input_tokens + reply.output_tokens,
        }

    @staticmethod
    def _head(reply: ResolvedReply, kind: str) -> dict[str, Any]:
        return {
            "id": f"chatcmpl-scripted-{reply.request_index:04d}",
            "object": kind,
            "created": int(time.time()),
            "model": reply.model,
            "system_fingerprint": None,
        }

    def render(self, reply: ResolvedReply, request: RecordedRequest) -> dict[str, Any]:
        from ._engine import ResolvedText, ResolvedThinking, ResolvedToolCall

        texts = [b.text for b in reply.blocks if isinstance(b, ResolvedText)]
        thinking = [b.thinking for b in reply.blocks if isinstance(b, ResolvedThinking)]
        calls = [
            {"id": b.id, "type": "function", "function": {"name": b.name, "arguments": b.arguments}}
            for b in reply.blocks
            if isinstance(b, ResolvedToolCall)
        ]
        message: dict[str, Any] = {
            "role": "assistant",
            "content": "".join(texts) if texts else None,
            "refusal": None,
        }
        if calls:
            message["tool_calls"] = calls
        if thinking:
            message["reasoning_content"] = "".join(thinking)
        choice = {
            "index": 0,
            "message": message,
            "logprobs": None,
            "finish_reason": _FINISH_REASONS[reply.stop_reason],
        }
        return self._head(reply, "chat.completion") | {
            "choices": [choice],
            "usage": self._usage(reply),
        }

    def events(self, reply: ResolvedReply, request: RecordedRequest) -> list[list[bytes]]:
        from ._engine import ResolvedText, ResolvedThinking

        options = request.settings.get("stream_options")
        include_usage = isinstance(options, dict) and options.get("include_usage") is True
        head = self._head(reply, "chat.completion.chunk")

        def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
            choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
            extra = {"usage": None} if include_usage else {}
            return sse(None, head | {"choices": [choice]} | extra)

        # As the API does: the opening delta has "" content when text follows, else null.
        has_text = any(isinstance(b, ResolvedText) for b in reply.blocks)
        opening = {"role": "assistant", "content": "" if has_text else None, "refusal": None}
        segments = [[chunk(opening)]]
        calls = 0
        for block in reply.blocks:
            if isinstance(block, ResolvedText):
                segments.append([chunk({"content": piece}) for piece in reply.chunks(block.text)])
            elif isinstance(block, ResolvedThinking):
                segments.append(
                    [chunk({"reasoning_content": piece}) for piece in reply.chunks(block.thinking)]
                )
            else:
                opened = {
                    "index": calls,
                    "id": block.id,
                    "type": "function",
                    "function": {"name": block.name, "arguments": ""},
                }
                segments.append(
                    [chunk({"tool_calls": [opened]})]
                    + [
                        chunk({"tool_calls": [{"index": calls, "function": {"arguments": piece}}]})
                        for piece in reply.chunks(block.arguments)
                    ]
                )
                calls += 1
        if reply.stream_error is not None:
            failure = reply.stream_error
            segments.append(
                [sse(None, openai_error(failure.status, failure.message, failure.error_type))]
            )
            return segments
        tail = [chunk({}, _FINISH_REASONS[reply.stop_reason])]
        if include_usage:
            tail.append(sse(None, head | {"choices": [], "usage": self._usage(reply)}))
        tail.append(sse(None, "[DONE]"))
        segments.append(tail)
        return segments

    def error_body(self, status: int, message: str, error_type: str | None) -> dict[str, Any]:
        return openai_error(status, message, error_type)
