"""OpenAI Responses: ``POST /v1/responses`` (JSON or SSE).

Shapes follow the API reference and the ``openai`` SDK's types (``Response``,
``ResponseStreamEvent``): a stream is ``response.created``, ``response.in_progress``,
then per output item ``response.output_item.added``, its part/delta/done events and
``response.output_item.done``, then ``response.completed`` (or ``response.incomplete``);
every event carries a ``sequence_number``. Thinking blocks are ``reasoning`` items with
a summary; tool calls are ``function_call`` items.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ._records import RecordedMessage, RecordedRequest, RecordedToolCall, RecordedToolResult
from ._wire import (
    Codec,
    InvalidRequestError,
    ParsedRequest,
    as_json,
    content_text,
    parse_arguments,
    require_object,
    result_text,
    settings_of,
    sse,
)

if TYPE_CHECKING:
    from ._engine import ResolvedReply

__all__ = ["OpenAIResponses", "openai_error"]


def openai_error(status: int, message: str, error_type: str | None) -> dict[str, Any]:
    """The OpenAI error body (``{"error": {message, type, param, code}}``) for a status."""
    if status == 429:
        kind, code = "requests", "rate_limit_exceeded"
    elif status >= 500:
        kind, code = "server_error", None
    else:
        kind, code = "invalid_request_error", None
    return {"error": {"message": message, "type": error_type or kind, "param": None, "code": code}}


def _item(raw: Any, position: int) -> RecordedMessage:
    if not isinstance(raw, Mapping):
        raise InvalidRequestError(f"input.{position}: an input item must be an object")
    kind = raw.get("type", "message")
    if kind == "function_call":
        call = RecordedToolCall(
            id=str(raw.get("call_id", "")),
            name=str(raw.get("name", "")),
            input=as_json(parse_arguments(raw.get("arguments"))),
        )
        return RecordedMessage(role="assistant", tool_calls=[call], raw=as_json(raw))
    if kind == "function_call_output":
        result = RecordedToolResult(
            tool_call_id=str(raw.get("call_id", "")), content=result_text(raw.get("output"))
        )
        return RecordedMessage(role="tool", tool_results=[result], raw=as_json(raw))
    if kind == "message":
        if not isinstance(raw.get("role"), str):
            raise InvalidRequestError(f"input.{position}: a message needs a string `role`")
        return RecordedMessage(
            role=raw["role"], text=content_text(raw.get("content")), raw=as_json(raw)
        )
    return RecordedMessage(role=str(kind), raw=as_json(raw))


class OpenAIResponses(Codec):
    """The OpenAI Responses protocol."""

    protocol = "openai-responses"

    def parse(self, body: Any) -> ParsedRequest:
        body = require_object(body, "an OpenAI Responses request")
        raw_input = body.get("input")
        if isinstance(raw_input, str):
            messages = [RecordedMessage(role="user", text=raw_input, raw=raw_input)]
        elif isinstance(raw_input, list):
            messages = [_item(raw, position) for position, raw in enumerate(raw_input)]
        else:
            raise InvalidRequestError(
                "an OpenAI Responses request: `input` must be a string or a list"
            )
        instructions = body.get("instructions")
        system_texts = [m.text for m in messages if m.role in ("system", "developer") and m.text]
        if instructions is not None:
            system_texts.insert(0, content_text(instructions))
        tools = body.get("tools") if isinstance(body.get("tools"), list) else []
        return ParsedRequest(
            model=str(body["model"]) if body.get("model") is not None else None,
            stream=bool(body.get("stream", False)),
            system="\n\n".join(system_texts) if system_texts else None,
            messages=messages,
            tools=[
                str(tool.get("name") or tool.get("type"))
                for tool in tools
                if isinstance(tool, Mapping)
            ],
            settings=settings_of(body, ("model", "input", "instructions", "tools", "stream")),
        )

    def _items(self, reply: ResolvedReply) -> list[dict[str, Any]]:
        from ._engine import ResolvedText, ResolvedThinking

        items: list[dict[str, Any]] = []
        for position, block in enumerate(reply.blocks):
            suffix = f"{reply.request_index:04d}_{position}"
            if isinstance(block, ResolvedText):
                part = {
                    "type": "output_text",
                    "text": block.text,
                    "annotations": [],
                    "logprobs": [],
                }
                items.append(
                    {
                        "id": f"msg_{suffix}",
                        "type": "message",
                        "status": "completed",
                        "role": "assistant",
                        "content": [part],
                    }
                )
            elif isinstance(block, ResolvedThinking):
                items.append(
                    {
                        "id": f"rs_{suffix}",
                        "type": "reasoning",
                        "summary": [{"type": "summary_text", "text": block.thinking}],
                    }
                )
            else:
                items.append(
                    {
                        "id": f"fc_{suffix}",
                        "type": "function_call",
                        "status": "completed",
                        "arguments": block.arguments,
                        "call_id": block.id,
                        "name": block.name,
                    }
                )
        return items

    def _response(
        self, reply: ResolvedReply, request: RecordedRequest, *, final: bool
    ) -> dict[str, Any]:
        from ._engine import ResolvedThinking

        body = request.body if isinstance(request.body, dict) else {}
        status, incomplete = "completed", None
        if reply.stop_reason == "max-tokens":
            status, incomplete = "incomplete", {"reason": "max_output_tokens"}
        elif reply.stop_reason == "refusal":
            status, incomplete = "incomplete", {"reason": "content_filter"}
        thinking = sum(len(b.thinking) for b in reply.blocks if isinstance(b, ResolvedThinking))
        reasoning_tokens = min(reply.output_tokens, (thinking + 3) // 4)
        usage = {
            "input_tokens": reply.input_tokens,
            "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
            "output_tokens": reply.output_tokens,
            "output_tokens_details": {"reasoning_tokens": reasoning_tokens},
            "total_tokens": reply.input_tokens + reply.output_tokens,
        }
        return {
            "id": f"resp_scripted_{reply.request_index:04d}",
            "object": "response",
            "created_at": int(time.time()),
            "status": status if final else "in_progress",
            "error": None,
            "incomplete_details": incomplete if final else None,
            "instructions": body.get("instructions"),
            "max_output_tokens": body.get("max_output_tokens"),
            "model": reply.model,
            "output": self._items(reply) if final else [],
            "parallel_tool_calls": body.get("parallel_tool_calls", True),
            "previous_response_id": body.get("previous_response_id"),
            "reasoning": body.get("reasoning") or {"effort": None, "summary": None},
            "temperature": body.get("temperature", 1.0),
            "text": body.get("text") or {"format": {"type": "text"}},
            "tool_choice": body.get("tool_choice", "auto"),
            "tools": body.get("tools") or [],
            "top_p": body.get("top_p", 1.0),
            "truncation": body.get("truncation", "disabled"),
            "usage": usage if final else None,
            "user": None,
            "metadata": body.get("metadata") or {},
        }

    def render(self, reply: ResolvedReply, request: RecordedRequest) -> dict[str, Any]:
        return self._response(reply, request, final=True)

    def events(self, reply: ResolvedReply, request: RecordedRequest) -> list[list[bytes]]:
        from ._engine import ResolvedText, ResolvedThinking

        sequence = iter(range(1_000_000))

        def event(kind: str, **fields: Any) -> bytes:
            return sse(kind, {"type": kind, "sequence_number": next(sequence), **fields})

        shell = self._response(reply, request, final=False)
        segments = [
            [
                event("response.created", response=shell),
                event("response.in_progress", response=shell),
            ]
        ]
        for index, (block, item) in enumerate(zip(reply.blocks, self._items(reply), strict=True)):
            at = {"item_id": item["id"], "output_index": index}
            if isinstance(block, ResolvedText):
                part = item["content"][0]
                opened = item | {"status": "in_progress", "content": []}
                segment = [
                    event("response.output_item.added", output_index=index, item=opened),
                    event(
                        "response.content_part.added",
                        **at,
                        content_index=0,
                        part=part | {"text": ""},
                    ),
                    *(
                        event(
                            "response.output_text.delta",
                            **at,
                            content_index=0,
                            delta=chunk,
                            logprobs=[],
                        )
                        for chunk in reply.chunks(block.text)
                    ),
                    event(
                        "response.output_text.done",
                        **at,
                        content_index=0,
                        text=block.text,
                        logprobs=[],
                    ),
                    event("response.content_part.done", **at, content_index=0, part=part),
                ]
            elif isinstance(block, ResolvedThinking):
                summary = {"type": "summary_text", "text": block.thinking}
                segment = [
                    event(
                        "response.output_item.added",
                        output_index=index,
                        item=item | {"summary": []},
                    ),
                    event(
                        "response.reasoning_summary_part.added",
                        **at,
                        summary_index=0,
                        part=summary | {"text": ""},
                    ),
                    *(
                        event(
                            "response.reasoning_summary_text.delta",
                            **at,
                            summary_index=0,
                            delta=chunk,
                        )
                        for chunk in reply.chunks(block.thinking)
                    ),
                    event(
                        "response.reasoning_summary_text.done",
                        **at,
                        summary_index=0,
                        text=block.thinking,
                    ),
                    event(
                        "response.reasoning_summary_part.done", **at, summary_index=0, part=summary
                    ),
                ]
            else:
                opened = item | {"status": "in_progress", "arguments": ""}
                segment = [
                    event("response.output_item.added", output_index=index, item=opened),
                    *(
                        event("response.function_call_arguments.delta", **at, delta=chunk)
                        for chunk in reply.chunks(block.arguments)
                    ),
                    event("response.function_call_arguments.done", **at, arguments=block.arguments),
                ]
            segment.append(event("response.output_item.done", output_index=index, item=item))
            segments.append(segment)
        if reply.stream_error is not None:
            failure = reply.stream_error
            error = openai_error(failure.status, failure.message, failure.error_type)["error"]
            segments.append(
                [event("error", code=error["code"], message=error["message"], param=None)]
            )
            return segments
        final = self._response(reply, request, final=True)
        kind = "response.completed" if final["status"] == "completed" else "response.incomplete"
        segments.append([event(kind, response=final)])
        return segments

    def error_body(self, status: int, message: str, error_type: str | None) -> dict[str, Any]:
        return openai_error(status, message, error_type)
