"""The Claude Code CLI's messages as harness-v1 parts (the runtime side of one turn).

The SDK hands over the CLI's messages: partial-message stream events (one model
response's content blocks as they arrive), complete assistant messages, the tool results
the CLI sends back (user messages) and the closing result message. :class:`TurnParts`
turns them into harness-v1 parts: text, reasoning and tool-input deltas, ``tool-call``
(built-ins by their common names, host tools by their own names, MCP tools ``dynamic``),
``tool-result`` (host results echoed, runtime executions recorded as observations), one
``finish-step`` per model response after the results its calls caused, and the terminal
``finish`` or ``error``. The parts go to the turn's outbox (``ClaudeCodeTurn.emit``);
everything here runs on the session's runtime thread.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from harness_testkit.scripting import ToolExecuted
from harness_testkit.spec import JSONValue

from ._builtins import HOST_SERVER, key_of_native, mcp_parts

if TYPE_CHECKING:
    from ._cli_turn import ClaudeCodeTurn

__all__ = ["Call", "TurnParts"]

_FINISH_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "tool_use": "tool-calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content-filter",
}


def _finish_reason(raw: str | None) -> dict[str, Any]:
    reason: dict[str, Any] = {"unified": _FINISH_REASONS.get(raw or "", "other")}
    if raw:
        reason["raw"] = raw
    return reason


def _usage(input_tokens: int, output_tokens: int, cache_read: int = 0) -> dict[str, Any]:
    return {
        "inputTokens": {
            "total": input_tokens + cache_read,
            "noCache": input_tokens,
            "cacheRead": cache_read,
        },
        "outputTokens": {"total": output_tokens},
    }


def _block_text(content: Any) -> JSONValue:
    """A tool result's content as the runtime gave it: a string, else the text parts."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [
            str(item.get("text", ""))
            for item in content
            if isinstance(item, Mapping) and item.get("type") == "text"
        ]
        return "".join(texts)
    return str(content)


@dataclass
class Call:
    """A tool call of the turn as the CLI made it, and what became of it."""

    tool_use_id: str
    native: str
    key: str
    surface: Literal["builtin", "mcp", "host"]
    input_json: str = ""
    input: dict[str, Any] = field(default_factory=dict)
    announced: bool = False
    gated: bool = False
    ran: bool | None = None
    refused: Literal["filtered", "denied", "unavailable"] | None = None
    resolved: bool = False
    replayed: bool = False
    input_parts: list[dict[str, Any]] = field(default_factory=list)


class TurnParts:
    """One drive's translation of CLI messages into parts (a rerun starts a new one).

    Calls are kept by the turn (``ClaudeCodeTurn.calls``) across drives: the runtime
    callbacks look them up, and a rerun's refused replays need the earlier outcome.
    """

    def __init__(self, turn: ClaudeCodeTurn) -> None:
        self._turn = turn
        self._blocks: dict[int, tuple[str, str | Call]] = {}
        self._step = 0
        self._pending_step: dict[str, Any] | None = None
        self._step_usage = (0, 0, 0)
        self._stop_reason: str | None = None
        self._total = [0, 0, 0]

    def _flush_step(self) -> None:
        if self._pending_step is not None:
            # Results of the step's calls first: the CLI ran them before the next request.
            self._turn.emit(self._pending_step)
            self._pending_step = None

    def on_message(self, message: Any) -> None:
        """Translate one SDK message (top-level ones only: sub-agent messages are skipped)."""
        from claude_agent_sdk import (
            AssistantMessage,
            ResultMessage,
            StreamEvent,
            SystemMessage,
            UserMessage,
        )

        if isinstance(message, SystemMessage):
            if message.subtype == "init" and not self._turn.started_stream:
                self._turn.started_stream = True
                model = message.data.get("model")
                part: dict[str, Any] = {"type": "stream-start"}
                if isinstance(model, str) and model:
                    part["modelId"] = model
                self._turn.emit(part)
        elif isinstance(message, StreamEvent):
            if message.parent_tool_use_id is None:
                self._on_stream_event(message.event)
        elif isinstance(message, AssistantMessage):
            if message.parent_tool_use_id is None:
                self._on_assistant(message)
        elif isinstance(message, UserMessage):
            if message.parent_tool_use_id is None and isinstance(message.content, list):
                self._on_tool_results(message.content)
        elif isinstance(message, ResultMessage):
            self._on_result(message)

    def _on_stream_event(self, event: Mapping[str, Any]) -> None:
        kind = event.get("type")
        if kind == "message_start":
            self._flush_step()
            self._step += 1
            usage = event.get("message", {}).get("usage") or {}
            self._step_usage = (
                int(usage.get("input_tokens") or 0),
                int(usage.get("output_tokens") or 0),
                int(usage.get("cache_read_input_tokens") or 0),
            )
            self._stop_reason = None
        elif kind == "content_block_start":
            self._block_start(int(event.get("index", 0)), event.get("content_block") or {})
        elif kind == "content_block_delta":
            self._block_delta(int(event.get("index", 0)), event.get("delta") or {})
        elif kind == "content_block_stop":
            self._block_stop(int(event.get("index", 0)))
        elif kind == "message_delta":
            delta = event.get("delta") or {}
            self._stop_reason = delta.get("stop_reason") or self._stop_reason
            usage = event.get("usage") or {}
            if "output_tokens" in usage:
                self._step_usage = (
                    self._step_usage[0],
                    int(usage.get("output_tokens") or 0),
                    self._step_usage[2],
                )
        elif kind == "message_stop":
            inp, out, cached = self._step_usage
            self._total = [self._total[0] + inp, self._total[1] + out, self._total[2] + cached]
            self._pending_step = {
                "type": "finish-step",
                "finishReason": _finish_reason(self._stop_reason),
                "usage": _usage(inp, out, cached),
            }

    def _part_id(self, index: int) -> str:
        return f"turn{self._turn.index}-d{self._turn.drives}-s{self._step}-{index}"

    def _block_start(self, index: int, block: Mapping[str, Any]) -> None:
        kind = block.get("type")
        if kind in ("text", "thinking", "redacted_thinking"):
            part_kind = "text" if kind == "text" else "reasoning"
            part_id = self._part_id(index)
            self._blocks[index] = (part_kind, part_id)
            self._turn.emit({"type": f"{part_kind}-start", "id": part_id})
            initial = block.get("text") if kind == "text" else block.get("thinking")
            if isinstance(initial, str) and initial:
                self._turn.emit({"type": f"{part_kind}-delta", "id": part_id, "delta": initial})
        elif kind == "tool_use":
            call = self._new_call(str(block.get("id")), str(block.get("name")))
            self._blocks[index] = ("tool", call)
            start: dict[str, Any] = {
                "type": "tool-input-start",
                "id": call.tool_use_id,
                "toolName": call.key,
            }
            if call.surface != "host":
                start["providerExecuted"] = True
            if call.surface == "mcp":
                start["dynamic"] = True
            call.input_parts.append(start)

    def _block_delta(self, index: int, delta: Mapping[str, Any]) -> None:
        entry = self._blocks.get(index)
        if entry is None:
            return
        part_kind, target = entry
        kind = delta.get("type")
        if part_kind == "text" and kind == "text_delta":
            text = str(delta.get("text", ""))
            if text:
                self._turn.emit({"type": "text-delta", "id": target, "delta": text})
        elif part_kind == "reasoning" and kind == "thinking_delta":
            text = str(delta.get("thinking", ""))
            if text:
                self._turn.emit({"type": "reasoning-delta", "id": target, "delta": text})
        elif part_kind == "tool" and kind == "input_json_delta" and isinstance(target, Call):
            chunk = str(delta.get("partial_json", ""))
            if chunk:
                target.input_json += chunk
                target.input_parts.append(
                    {"type": "tool-input-delta", "id": target.tool_use_id, "delta": chunk}
                )

    def _block_stop(self, index: int) -> None:
        entry = self._blocks.pop(index, None)
        if entry is None:
            return
        part_kind, target = entry
        if isinstance(target, Call):
            self._close_call(target)
        else:
            self._turn.emit({"type": f"{part_kind}-end", "id": target})

    def _close_call(self, call: Call) -> None:
        """End the call's input stream and announce it (once)."""
        if call.announced:
            return
        if call.input_parts:
            call.input_parts.append({"type": "tool-input-end", "id": call.tool_use_id})
        try:
            parsed = json.loads(call.input_json) if call.input_json else {}
        except ValueError:
            parsed = {}
        call.input = parsed if isinstance(parsed, dict) else {}
        self._announce(call)

    def _on_assistant(self, message: Any) -> None:
        # Partial messages already carried the content; complete blocks only matter for
        # calls whose stream events were not seen (a CLI without partial messages).
        from claude_agent_sdk import ToolUseBlock

        for block in message.content:
            if isinstance(block, ToolUseBlock) and block.id not in self._turn.calls:
                call = self._new_call(block.id, block.name)
                call.input = dict(block.input)
                call.input_json = json.dumps(block.input)
                self._announce(call)

    def _new_call(self, tool_use_id: str, native: str) -> Call:
        mcp = mcp_parts(native)
        surface: Literal["builtin", "mcp", "host"]
        if mcp is not None and mcp[0] == HOST_SERVER:
            surface, key = "host", mcp[1]
        elif mcp is not None:
            surface, key = "mcp", native
        else:
            surface, key = "builtin", key_of_native(native) or native
        call = Call(tool_use_id=tool_use_id, native=native, key=key, surface=surface)
        self._turn.calls[tool_use_id] = call
        return call

    def _announce(self, call: Call) -> None:
        if call.announced:
            return
        call.announced = True
        self._turn.session.wake_runtime()
        if self._turn.rerun and call.surface == "host" and call.tool_use_id in self._turn.results:
            # A rerun repeats the step, but a host call answered before the suspension is
            # not asked again (the agent would execute it twice); its handler is answered
            # from the stored result and the result is echoed as usual.
            call.input_parts.clear()
            return
        part: dict[str, Any] = {
            "type": "tool-call",
            "toolCallId": call.tool_use_id,
            "toolName": call.key,
            "input": json.dumps(call.input, separators=(",", ":"), ensure_ascii=False),
        }
        if call.surface != "host":
            part["providerExecuted"] = True
        if call.surface == "mcp":
            part["dynamic"] = True
        if call.surface == "builtin" and call.native != call.key:
            part["nativeName"] = call.native
        # The input stream and its call travel together: a slice never ends between them.
        self._turn.emit_many([*call.input_parts, part])
        call.input_parts.clear()

    def _on_tool_results(self, content: list[Any]) -> None:
        from claude_agent_sdk import ToolResultBlock

        for block in content:
            if not isinstance(block, ToolResultBlock):
                continue
            call = self._turn.calls.get(block.tool_use_id)
            if call is None or call.resolved:
                continue
            if not call.announced:
                # The CLI can refuse a call (an unavailable tool) before its block's stop
                # event reaches the stream: the call comes first, then its result.
                for index, (_, target) in list(self._blocks.items()):
                    if target is call:
                        del self._blocks[index]
                self._close_call(call)
            call.resolved = True
            is_error = bool(block.is_error)
            result: JSONValue
            if call.surface == "host":
                if call.tool_use_id in self._turn.echoed:
                    continue  # a rerun of the step: echoed before the suspension
                self._turn.echoed.add(call.tool_use_id)
                result, is_error = self._turn.results.get(
                    call.tool_use_id, (_block_text(block.content), is_error)
                )
            elif call.replayed:
                result, is_error = self._turn.executed[call.tool_use_id]
            else:
                result = _block_text(block.content)
                executed = call.ran is True
                if executed:
                    self._turn.executed[call.tool_use_id] = (result, is_error)
                reason = (
                    None
                    if executed
                    else (call.refused or ("filtered" if self._filtered(call) else "unavailable"))
                )
                self._turn.session.record(
                    ToolExecuted(
                        session_id=self._turn.session.session_id,
                        turn=self._turn.index,
                        tool_call_id=call.tool_use_id,
                        tool_name=call.key,
                        surface="mcp" if call.surface == "mcp" else "builtin",
                        input=call.input,
                        executed=executed,
                        result=result,
                        is_error=is_error,
                        reason=reason,
                    )
                )
            part: dict[str, Any] = {
                "type": "tool-result",
                "toolCallId": call.tool_use_id,
                "toolName": call.key,
                "result": result,
            }
            if is_error:
                part["isError"] = True
            if call.surface == "mcp":
                part["dynamic"] = True
            self._turn.emit(part)

    def _filtered(self, call: Call) -> bool:
        return call.surface == "builtin" and not self._turn.session.builtin_included(call.key)

    def _on_result(self, message: Any) -> None:
        self._flush_step()
        if message.is_error:
            detail = message.result or ", ".join(message.errors or []) or message.subtype
            status = f" (HTTP {message.api_error_status})" if message.api_error_status else ""
            self._turn.emit({"type": "error", "error": f"Claude Code: {detail}{status}"})
            self._turn.end("errored")
            return
        inp, out, cached = self._total
        self._turn.emit(
            {
                "type": "finish",
                "finishReason": _finish_reason(message.stop_reason),
                "totalUsage": _usage(inp, out, cached),
            }
        )
        self._turn.end("finished")
