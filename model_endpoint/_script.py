"""The endpoint script: what the scripted model answers, request by request.

An :class:`EndpointScript` is a validated document (YAML or JSON on disk, camelCase keys,
snake_case accepted too) holding an ordered list of replies. Each model request the
endpoint receives is answered by the next reply whose ``match`` holds::

    EndpointScript
     +-- model               model id reported (default: the request's own)
     +-- repeatFrom          reply index to continue from when the list runs out
     +-- replies: [Reply]
          +-- MessageReply   content blocks (text, thinking, tool calls), stop reason,
          |                  usage, delays, truncation, optional match
          +-- ErrorReply     an HTTP error with the provider's error body
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, TypeAlias

import yaml
from pydantic import (
    Discriminator,
    Field,
    Tag,
    field_validator,
    model_validator,
)

from harness_testkit.common import MAX_DEPTH, check_pattern, parse_structured, read_bounded_text
from harness_testkit.spec import JSONValue, WireModel, safe_load_bounded

__all__ = [
    "Block",
    "EndpointScript",
    "ErrorReply",
    "MessageReply",
    "PauseBlock",
    "Reply",
    "ReplyMatch",
    "ReplyUsage",
    "StopReason",
    "StreamError",
    "TextBlock",
    "ThinkingBlock",
    "ToolCallBlock",
    "ToolResultMatch",
]

#: Protocol-neutral stop reasons; each wire protocol maps them to its own vocabulary.
StopReason: TypeAlias = Literal[
    "end-turn", "tool-use", "max-tokens", "stop-sequence", "refusal", "pause-turn"
]


class EndpointModel(WireModel):
    """Base of every endpoint script model: the contract's wire config (camelCase on the
    wire, either spelling accepted in Python, frozen, unknown keys rejected)."""


def _check_regex(value: str | None) -> str | None:
    # RE2, not `re`: a scripted pattern runs in linear time, so a hostile one cannot hang
    # the run; what RE2 cannot run is refused here, when the file is loaded.
    return check_pattern(value)


# -- content blocks -----------------------------------------------------------------------


class TextBlock(EndpointModel):
    """Assistant text. ``{{prompt}}`` (the request's last user text), ``{{model}}`` and
    ``{{result:<toolCallId>}}`` (a tool result the request carries) are filled in."""

    type: Literal["text"] = "text"
    text: str


class ThinkingBlock(EndpointModel):
    """Reasoning: an Anthropic ``thinking`` block (with ``signature``), an OpenAI Responses
    ``reasoning`` item (summary text), a Chat Completions ``reasoning_content`` delta."""

    type: Literal["thinking"] = "thinking"
    thinking: str
    signature: str = "scripted-signature"


class ToolCallBlock(EndpointModel):
    """A tool call by the runtime's native tool name (``Write``, ``mcp__host__weather``).

    ``id`` defaults to ``call_<request>_<n>``; string inputs get the same placeholders as
    text.
    """

    type: Literal["tool-call"] = "tool-call"
    name: str = Field(min_length=1)
    input: dict[str, JSONValue] = Field(default_factory=dict)
    id: str | None = Field(default=None, min_length=1)


class PauseBlock(EndpointModel):
    """A pause of ``seconds`` before the next block is streamed (no content of its own;
    a non-streamed reply waits the pauses before it is sent)."""

    type: Literal["pause"] = "pause"
    seconds: float = Field(ge=0, le=600)


Block: TypeAlias = Annotated[
    TextBlock | ThinkingBlock | ToolCallBlock | PauseBlock, Field(discriminator="type")
]

_BLOCK_SHORTHANDS: dict[str, tuple[str, str]] = {
    # shorthand key -> (type, field the value goes to)
    "text": ("text", "text"),
    "thinking": ("thinking", "thinking"),
    "toolCall": ("tool-call", "name"),
    "tool_call": ("tool-call", "name"),
    "pause": ("pause", "seconds"),
}


def _expand_block(item: Any) -> Any:
    # `- text: Hello` and `- toolCall: Write` read better than `{type: ..., ...}`.
    if isinstance(item, str):
        return {"type": "text", "text": item}
    if not isinstance(item, Mapping) or "type" in item:
        return item
    keys = [key for key in item if key in _BLOCK_SHORTHANDS]
    if len(keys) != 1:
        return item
    kind, field = _BLOCK_SHORTHANDS[keys[0]]
    rest = {key: value for key, value in item.items() if key != keys[0]}
    return {"type": kind, field: item[keys[0]], **rest}


# -- matching -----------------------------------------------------------------------------


class ToolResultMatch(EndpointModel):
    """The request carries a tool result for ``tool_call_id`` (anywhere in its messages).

    ``is_error`` compares the result's error flag (OpenAI results are never errors);
    ``content_matches`` is a regular expression searched in the result's text.
    """

    tool_call_id: str = Field(min_length=1)
    is_error: bool | None = None
    content_matches: str | None = None

    @field_validator("content_matches")
    @classmethod
    def _regex(cls, value: str | None) -> str | None:
        return _check_regex(value)


class ReplyMatch(EndpointModel):
    """When a reply answers a request. Every criterion given must hold (``negate``
    inverts the result).

    Attributes:
        last_user_text: Regular expression searched in the text of the request's last
            user message that has text.
        tool_result: A tool result the request must carry.
        tools_offered: Tool names the request must offer (all of them).
        negate: Invert the outcome.
        on_mismatch: ``error`` (default): a request the match rejects is unforeseen and
            gets an error response; ``skip``: the reply is passed over and the next one
            is tried (for conditional steps).
    """

    last_user_text: str | None = None
    tool_result: ToolResultMatch | None = None
    tools_offered: list[str] | None = None
    negate: bool = False
    on_mismatch: Literal["error", "skip"] = "error"

    @field_validator("last_user_text")
    @classmethod
    def _regex(cls, value: str | None) -> str | None:
        return _check_regex(value)

    @model_validator(mode="after")
    def _has_criterion(self) -> ReplyMatch:
        if self.last_user_text is None and self.tool_result is None and self.tools_offered is None:
            raise ValueError("a match needs lastUserText, toolResult or toolsOffered")
        return self


# -- replies ------------------------------------------------------------------------------


class ReplyUsage(EndpointModel):
    """Token usage reported for a reply (default: estimated from the request and reply)."""

    input_tokens: int = Field(ge=0)
    output_tokens: int = Field(ge=0)


class _ReplyBase(EndpointModel):
    """What every reply has.

    Attributes:
        match: Matches that must all hold for the reply to answer (one mapping is
            accepted too).
        delay: Seconds to wait before the response starts.
        times: How many consecutive requests the reply answers (retries included).
        until_new_prompt: Keep answering every following request whose last user text
            is the one the reply first answered, until a request brings a new prompt.
            Runtimes retry failed requests (Claude Code retries 429, 5xx, 529 and even
            400 several times), so an error meant to end a turn answers its retries too.
    """

    match: list[ReplyMatch] = Field(default_factory=list)
    delay: float = Field(default=0.0, ge=0, le=600)
    times: int = Field(default=1, ge=1, le=1000)
    until_new_prompt: bool = False

    @field_validator("match", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, Mapping | ReplyMatch) else value


class StreamError(EndpointModel):
    """How a reply fails after its content: a streamed reply ends with the provider's
    error event instead of finishing; a non-streamed one is an HTTP ``status`` error.

    Attributes:
        message: The error message.
        error_type: The provider's error type (default from ``status``).
        status: HTTP status of the non-streamed form.
    """

    message: str = "Scripted stream error."
    error_type: str | None = None
    status: int = Field(default=500, ge=400, le=599)


class MessageReply(_ReplyBase):
    """A model response: content blocks in order, then the stop reason.

    Attributes:
        content: Text, thinking and tool-call blocks.
        stop_reason: Defaults to ``tool-use`` when a tool is called, else ``end-turn``.
        usage: Reported token usage (default: an estimate).
        model: Model id reported for this reply (default: the script's, else the
            request's).
        delay: Seconds to wait before the response starts.
        event_delay: Seconds to wait between streamed events.
        chunk_size: Characters per text/thinking/argument delta (``None``: one delta per
            block).
        truncate_after_events: Cut the connection after this many streamed events (no
            terminating event, no clean end of the body); a non-streaming response is cut
            in the middle of its body.
        stream_error: End with an error after the content (see :class:`StreamError`).
    """

    type: Literal["message"] = "message"
    content: list[Block] = Field(default_factory=list)
    stop_reason: StopReason | None = None
    usage: ReplyUsage | None = None
    model: str | None = None
    event_delay: float = Field(default=0.0, ge=0, le=60)
    chunk_size: int | None = Field(default=None, ge=1)
    truncate_after_events: int | None = Field(default=None, ge=0)
    stream_error: StreamError | None = None

    @model_validator(mode="before")
    @classmethod
    def _shorthands(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and isinstance(data.get("content"), list):
            return {**data, "content": [_expand_block(item) for item in data["content"]]}
        return data

    @model_validator(mode="after")
    def _distinct_call_ids(self) -> MessageReply:
        ids = [b.id for b in self.content if isinstance(b, ToolCallBlock) and b.id is not None]
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        if repeated:
            raise ValueError(f"tool call ids must be distinct within a reply; repeated: {repeated}")
        return self

    @property
    def effective_stop_reason(self) -> StopReason:
        """The stop reason given, else ``tool-use`` when a tool is called, else ``end-turn``."""
        if self.stop_reason is not None:
            return self.stop_reason
        if any(isinstance(block, ToolCallBlock) for block in self.content):
            return "tool-use"
        return "end-turn"


class ErrorReply(_ReplyBase):
    """An HTTP error response with the provider-shaped error body.

    Attributes:
        status: HTTP status (429 rate limit, 500 server error, 529 overloaded, ...).
        message: The error message.
        error_type: The provider's error type (default from the status: Anthropic
            ``rate_limit_error``/``api_error``/``overloaded_error``..., OpenAI
            ``rate_limit_exceeded``/``server_error``...).
        retry_after: Seconds sent in a ``retry-after`` header.
    """

    type: Literal["error"] = "error"
    status: int = Field(ge=400, le=599)
    message: str = "Scripted error."
    error_type: str | None = None
    retry_after: float | None = Field(default=None, ge=0)


def _reply_kind(value: Any) -> str:
    if isinstance(value, Mapping):
        kind = value.get("type")
        if kind is None:
            return "error" if "status" in value else "message"
        return str(kind)
    return str(getattr(value, "type", "message"))


Reply: TypeAlias = Annotated[
    Annotated[MessageReply, Tag("message")] | Annotated[ErrorReply, Tag("error")],
    Discriminator(_reply_kind),
]


class EndpointScript(EndpointModel):
    """The endpoint's script. Load with :meth:`from_file` or ``model_validate(dict)``.

    Attributes:
        version: Format version (1).
        model: Model id reported (default: the model the request asked for).
        replies: The replies, in order.
        repeat_from: When every reply has been served, continue from this reply index
            (``None``, the default: further requests are unforeseen and get an error).
    """

    version: Literal[1] = 1
    model: str | None = None
    replies: list[Reply] = Field(default_factory=list)
    repeat_from: int | None = Field(default=None, ge=0)

    @model_validator(mode="before")
    @classmethod
    def _text_replies(cls, data: Any) -> Any:
        # `- Hello` is a reply whose only content is that text.
        if isinstance(data, Mapping) and isinstance(data.get("replies"), list):
            replies = [{"content": [r]} if isinstance(r, str) else r for r in data["replies"]]
            return {**data, "replies": replies}
        return data

    @model_validator(mode="after")
    def _repeat_in_range(self) -> EndpointScript:
        if self.repeat_from is not None and self.repeat_from >= len(self.replies):
            raise ValueError(
                f"repeatFrom {self.repeat_from} is past the last reply "
                f"(the script has {len(self.replies)})"
            )
        return self

    @classmethod
    def from_file(cls, path: str | Path) -> EndpointScript:
        """Load a script from a ``.json``, ``.yaml`` or ``.yml`` file.

        Raises:
            pydantic.ValidationError: naming the field that is wrong.
            ValueError: the file cannot be read, is not a regular file, is larger than
                16 MiB, not UTF-8, nested deeper than 64 levels or uses YAML aliases
                (the message names it).
        """
        text = read_bounded_text(Path(path), what="endpoint script")
        if str(path).endswith(".json"):
            return cls.model_validate(
                parse_structured(text, what=f"endpoint script {path}", json_only=True)
            )
        return cls.from_yaml(text)

    @classmethod
    def from_yaml(cls, text: str) -> EndpointScript:
        """Validate a script written as YAML (JSON is YAML too): no aliases, nested at
        most 64 deep.

        Raises:
            yaml.YAMLError: invalid YAML, an alias or deeper nesting.
            pydantic.ValidationError: naming the field that is wrong.
        """
        return cls.model_validate(safe_load_bounded(text, max_depth=MAX_DEPTH))

    @classmethod
    def from_texts(cls, *texts: str) -> EndpointScript:
        """A script whose reply ``n`` is the text ``texts[n]``."""
        return cls(replies=[MessageReply(content=[TextBlock(text=text)]) for text in texts])

    def from_reply(self, offset: int) -> EndpointScript:
        """This script as if its first ``offset`` replies had been served already.

        A runtime resumed in a new process gets a new endpoint; it goes on where the last
        one stopped (``repeatFrom`` is honoured past the end, as serving would).
        """
        replies = list(self.replies)
        repeat_from = self.repeat_from
        if offset <= 0 or not replies:
            return self
        if offset >= len(replies):
            if repeat_from is None:
                return self.model_copy(update={"replies": [], "repeat_from": None})
            offset = repeat_from + (offset - len(replies)) % (len(replies) - repeat_from)
        if repeat_from is not None:
            repeat_from = max(repeat_from - offset, 0)
        return self.model_copy(update={"replies": replies[offset:], "repeat_from": repeat_from})

    def to_yaml(self) -> str:
        """The document as YAML."""
        return yaml.safe_dump(self.to_wire(), sort_keys=False, allow_unicode=True)
