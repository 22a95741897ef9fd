"""The script engine: picks the reply for each request and resolves it for the wire.

Protocol modules turn a request body into a :class:`RecordedRequest` and a
:class:`ResolvedReply` into events; this module decides *which* reply answers, fills in
placeholders and ids, and estimates usage. It is synchronous and thread-safe: the server
calls it from its event loop while tests read the records from another thread.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field

from harness_testkit.common import pattern_search
from harness_testkit.spec import JSONValue

from ._records import EndpointError, EndpointErrorKind, RecordedRequest
from ._script import (
    EndpointScript,
    ErrorReply,
    MessageReply,
    PauseBlock,
    Reply,
    ReplyMatch,
    StopReason,
    StreamError,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
)

__all__ = ["Engine", "ResolvedReply", "ResolvedText", "ResolvedThinking", "ResolvedToolCall"]

_PLACEHOLDER = re.compile(r"\{\{\s*(prompt|model|result:[^}\s]+)\s*\}\}")


@dataclass(frozen=True)
class ResolvedText:
    text: str


@dataclass(frozen=True)
class ResolvedThinking:
    thinking: str
    signature: str


@dataclass(frozen=True)
class ResolvedToolCall:
    id: str
    name: str
    input: dict[str, JSONValue]

    @property
    def arguments(self) -> str:
        """The input as the JSON text streamed and returned on the wire."""
        return json.dumps(self.input, ensure_ascii=False, separators=(",", ":"))


ResolvedBlock = ResolvedText | ResolvedThinking | ResolvedToolCall


@dataclass(frozen=True)
class ResolvedReply:
    """A message reply ready to render: placeholders filled, ids and usage decided."""

    request_index: int
    message_id: str
    model: str
    blocks: list[ResolvedBlock]
    stop_reason: StopReason
    input_tokens: int
    output_tokens: int
    event_delay: float = 0.0
    chunk_size: int | None = None
    truncate_after_events: int | None = None
    #: Seconds to pause before block ``i`` is streamed (``len(blocks)``: before the end).
    pauses: dict[int, float] = field(default_factory=dict)
    stream_error: StreamError | None = None

    @property
    def total_pause(self) -> float:
        """All pauses added up (what a non-streamed reply waits)."""
        return sum(self.pauses.values())

    def chunks(self, text: str) -> list[str]:
        """``text`` split into deltas of ``chunk_size`` characters (one delta when unset)."""
        if not text:
            return []
        size = self.chunk_size or len(text)
        return [text[start : start + size] for start in range(0, len(text), size)]


@dataclass(frozen=True)
class Selection:
    """The outcome of :meth:`Engine.answer`: a reply to render or an endpoint error."""

    request: RecordedRequest
    delay: float = 0.0
    message: ResolvedReply | None = None
    error: ErrorReply | None = None
    endpoint_error: EndpointError | None = None


@dataclass
class _Hold:
    position: int
    left: int
    prompt: str | None
    until_new_prompt: bool

    def answers(self, request: RecordedRequest) -> bool:
        if self.until_new_prompt and request.last_user_text == self.prompt:
            return True
        return self.left > 0


@dataclass
class _State:
    script: EndpointScript
    next_reply: int = 0
    #: A reply still answering: position, requests left (``times``) and, with
    #: ``until_new_prompt``, the last user text it answers.
    held: _Hold | None = None
    requests: list[RecordedRequest] = field(default_factory=list)
    errors: list[EndpointError] = field(default_factory=list)


def _estimate_tokens(text: str) -> int:
    # About four characters a token, never zero: real APIs never report 0 output tokens.
    return max(1, len(text) // 4)


class Engine:
    """Holds the script, the cursor and the records (thread-safe)."""

    def __init__(self, script: EndpointScript) -> None:
        self._lock = threading.Lock()
        self._state = _State(script=script)
        self._count = 0

    # -- records ----------------------------------------------------------------------

    def set_script(self, script: EndpointScript) -> None:
        """Serve ``script`` from now on, from its first reply (records are kept)."""
        with self._lock:
            self._state.script = script
            self._state.next_reply = 0
            self._state.held = None

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._state.requests)

    @property
    def errors(self) -> list[EndpointError]:
        with self._lock:
            return list(self._state.errors)

    def record_error(
        self, kind: EndpointErrorKind, message: str, path: str, request_index: int | None = None
    ) -> EndpointError:
        """Record an endpoint error answered outside the script (bad body, unknown route)."""
        error = EndpointError(kind=kind, message=message, path=path, request_index=request_index)
        with self._lock:
            self._state.errors.append(error)
        return error

    def next_index(self) -> int:
        """Reserve the index of the next model request."""
        with self._lock:
            index = self._count
            self._count += 1
            return index

    # -- selection --------------------------------------------------------------------

    def answer(self, request: RecordedRequest) -> Selection:
        """Pick the reply for ``request``, record both, and resolve it."""
        with self._lock:
            script = self._state.script
            picked = self._pick(script, request)
            if isinstance(picked, str):
                error = EndpointError(
                    kind="unforeseen-request",
                    message=picked,
                    path=request.path,
                    request_index=request.index,
                )
                self._state.requests.append(request)
                self._state.errors.append(error)
                return Selection(request=request, endpoint_error=error)
            position, reply = picked
            request = request.model_copy(update={"reply_index": position})
            self._state.requests.append(request)
        if isinstance(reply, ErrorReply):
            return Selection(request=request, delay=reply.delay, error=reply)
        return Selection(
            request=request, delay=reply.delay, message=self._resolve(script, reply, request)
        )

    def _pick(self, script: EndpointScript, request: RecordedRequest) -> tuple[int, Reply] | str:
        replies = script.replies
        label = f"request #{request.index} ({request.protocol} {request.path})"
        held = self._state.held
        self._state.held = None
        if held is not None and held.answers(request):
            self._state.held = _Hold(
                held.position, held.left - 1, held.prompt, held.until_new_prompt
            )
            return held.position, replies[held.position]
        position = self._state.next_reply
        skipped: list[str] = []
        for _ in range(len(replies) + 1):
            if position >= len(replies):
                if script.repeat_from is None:
                    return (
                        f"harness-testkit scripted model endpoint: {label} was not foreseen: "
                        f"the script's {len(replies)} replies have all been served"
                        + (f" ({'; '.join(skipped)})" if skipped else "")
                        + ". Add a reply for it, or set repeatFrom."
                    )
                position = script.repeat_from
            reply = replies[position]
            failed = [(m, why) for m in reply.match if (why := _mismatch(m, request))]
            if not failed:
                self._state.next_reply = position + 1
                if reply.times > 1 or reply.until_new_prompt:
                    self._state.held = _Hold(
                        position, reply.times - 1, request.last_user_text, reply.until_new_prompt
                    )
                return position, reply
            mismatch = "; ".join(why for _, why in failed)
            if any(m.on_mismatch == "error" for m, _ in failed):
                return (
                    f"harness-testkit scripted model endpoint: {label} was not foreseen: "
                    f"it does not match reply #{position}: {mismatch}."
                )
            skipped.append(f"reply #{position} skipped: {mismatch}")
            position += 1
        return (
            f"harness-testkit scripted model endpoint: {label} was not foreseen: no reply "
            f"matches it ({'; '.join(skipped)})."
        )

    def _resolve(
        self, script: EndpointScript, reply: MessageReply, request: RecordedRequest
    ) -> ResolvedReply:
        model = reply.model or script.model or request.model or "scripted-model"
        blocks: list[ResolvedBlock] = []
        pauses: dict[int, float] = {}
        calls = 0
        for block in reply.content:
            if isinstance(block, PauseBlock):
                pauses[len(blocks)] = pauses.get(len(blocks), 0.0) + block.seconds
            elif isinstance(block, TextBlock):
                blocks.append(ResolvedText(_fill(block.text, request, model)))
            elif isinstance(block, ThinkingBlock):
                blocks.append(
                    ResolvedThinking(_fill(block.thinking, request, model), block.signature)
                )
            elif isinstance(block, ToolCallBlock):
                call_id = block.id or f"call_{request.index}_{calls}"
                calls += 1
                filled = {
                    key: _fill_json(value, request, model) for key, value in block.input.items()
                }
                blocks.append(ResolvedToolCall(call_id, block.name, filled))
        generated = "".join(
            b.text
            if isinstance(b, ResolvedText)
            else b.thinking
            if isinstance(b, ResolvedThinking)
            else b.name + b.arguments
            for b in blocks
        )
        body_text = json.dumps(request.body, ensure_ascii=False, default=str)
        return ResolvedReply(
            request_index=request.index,
            message_id=f"msg_scripted_{request.index:04d}",
            model=model,
            blocks=blocks,
            stop_reason=reply.effective_stop_reason,
            input_tokens=reply.usage.input_tokens if reply.usage else _estimate_tokens(body_text),
            output_tokens=reply.usage.output_tokens if reply.usage else _estimate_tokens(generated),
            event_delay=reply.event_delay,
            chunk_size=reply.chunk_size,
            truncate_after_events=reply.truncate_after_events,
            pauses=pauses,
            stream_error=reply.stream_error,
        )


def _mismatch(match: ReplyMatch, request: RecordedRequest) -> str | None:
    """``None`` when ``match`` accepts ``request``, else why not."""
    reasons: list[str] = []
    if match.last_user_text is not None:
        text = request.last_user_text
        if text is None or not pattern_search(match.last_user_text, text):
            reasons.append(f"lastUserText {match.last_user_text!r} not found in {text!r}")
    if match.tool_result is not None:
        wanted = match.tool_result
        result = request.tool_result(wanted.tool_call_id)
        if result is None:
            reasons.append(f"no tool result for {wanted.tool_call_id!r}")
        else:
            if wanted.is_error is not None and result.is_error != wanted.is_error:
                reasons.append(f"tool result {wanted.tool_call_id!r} has isError={result.is_error}")
            if wanted.content_matches is not None and not pattern_search(
                wanted.content_matches, result.content
            ):
                reasons.append(
                    f"tool result {wanted.tool_call_id!r} content {result.content!r} does not "
                    f"match {wanted.content_matches!r}"
                )
    if match.tools_offered is not None:
        missing = [name for name in match.tools_offered if name not in request.tools]
        if missing:
            reasons.append(f"tools {missing} not offered (offered: {request.tools})")
    if match.negate:
        return "the negated match holds" if not reasons else None
    return "; ".join(reasons) if reasons else None


def _fill(text: str, request: RecordedRequest, model: str) -> str:
    def replace(found: re.Match[str]) -> str:
        name = found.group(1)
        if name == "prompt":
            return request.last_user_text or ""
        if name == "model":
            return model
        result = request.tool_result(name.removeprefix("result:"))
        return found.group(0) if result is None else result.content

    return _PLACEHOLDER.sub(replace, text)


def _fill_json(value: JSONValue, request: RecordedRequest, model: str) -> JSONValue:
    if isinstance(value, str):
        return _fill(value, request, model)
    if isinstance(value, list):
        return [_fill_json(item, request, model) for item in value]
    if isinstance(value, dict):
        return {key: _fill_json(item, request, model) for key, item in value.items()}
    return value
