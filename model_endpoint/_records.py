"""What the endpoint saw: every request normalised across protocols, and every error.

Checks read these from Python (``endpoint.requests``, ``endpoint.errors``) to assert what
the runtime offered the model (tools, system prompt, settings), what it sent back (tool
results) and which requests the script did not foresee.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

from pydantic import Field

from harness_testkit.spec import JSONValue

from ._script import EndpointModel

__all__ = [
    "EndpointError",
    "EndpointErrorKind",
    "RecordedMessage",
    "RecordedRequest",
    "RecordedToolCall",
    "RecordedToolResult",
    "UnforeseenRequestError",
    "WireProtocol",
]

#: The wire protocols the endpoint speaks.
WireProtocol: TypeAlias = Literal["anthropic-messages", "openai-responses", "openai-chat"]

#: Why a request got an endpoint error instead of a scripted reply.
EndpointErrorKind: TypeAlias = Literal["unforeseen-request", "invalid-request", "unknown-route"]


class RecordedToolCall(EndpointModel):
    """A tool call found in the conversation the request carried (an earlier reply)."""

    id: str
    name: str
    input: JSONValue = None


class RecordedToolResult(EndpointModel):
    """A tool result the runtime sent back. ``content`` is the result's text (text parts
    joined; anything else as compact JSON)."""

    tool_call_id: str
    content: str
    is_error: bool = False


class RecordedMessage(EndpointModel):
    """One conversation message, normalised.

    ``role`` is the protocol's own (``user``, ``assistant``, ``system``, ``developer``,
    ``tool``); ``text`` joins the message's text parts; ``raw`` is the message as sent.
    """

    role: str
    text: str = ""
    tool_calls: list[RecordedToolCall] = Field(default_factory=list)
    tool_results: list[RecordedToolResult] = Field(default_factory=list)
    raw: JSONValue = None


class RecordedRequest(EndpointModel):
    """One model request.

    Attributes:
        index: 0-based position among the model requests the endpoint received.
        path: The URL path (``/v1/messages``).
        query: Query parameters (``{"beta": "true"}``).
        protocol: The wire protocol.
        model: The model the request asked for.
        stream: Whether a streamed response was asked for.
        system: The system prompt / instructions (text parts joined), if any.
        messages: The conversation, normalised.
        tools: Names of the tools offered, in order.
        tool_results: Every tool result in the conversation, in order.
        last_user_text: Text of the last user message with text of the user's own
            (runtime-injected ``<system-reminder>`` blocks removed, whitespace trimmed;
            ``None``: none).
        settings: The remaining top-level request fields (``max_tokens``, ``thinking``,
            ``tool_choice``, ``temperature``, ...).
        headers: Request headers (lower-case names), credentials removed.
        body: The request body as sent.
        reply_index: Index of the script reply that answered (``None``: an endpoint error
            answered).
    """

    index: int
    path: str
    query: dict[str, str] = Field(default_factory=dict)
    protocol: WireProtocol
    model: str | None = None
    stream: bool = False
    system: str | None = None
    messages: list[RecordedMessage] = Field(default_factory=list)
    tools: list[str] = Field(default_factory=list)
    tool_results: list[RecordedToolResult] = Field(default_factory=list)
    last_user_text: str | None = None
    settings: dict[str, JSONValue] = Field(default_factory=dict)
    headers: dict[str, str] = Field(default_factory=dict)
    body: JSONValue = None
    reply_index: int | None = None

    def tool_result(self, tool_call_id: str) -> RecordedToolResult | None:
        """The result the request carries for ``tool_call_id`` (the last one), if any."""
        found = [r for r in self.tool_results if r.tool_call_id == tool_call_id]
        return found[-1] if found else None


class EndpointError(EndpointModel):
    """A request the endpoint answered with an error of its own (not a scripted one).

    Attributes:
        kind: ``unforeseen-request`` (script exhausted or a match failed),
            ``invalid-request`` (not a valid request of its protocol) or
            ``unknown-route`` (a path the endpoint does not serve).
        message: What went wrong, as sent in the error body.
        path: The URL path.
        request_index: The model request's index (``None`` for unknown routes and
            unparsable bodies).
    """

    kind: EndpointErrorKind
    message: str
    path: str
    request_index: int | None = None


class UnforeseenRequestError(AssertionError):
    """Raised when a :class:`ModelEndpoint` created with ``raise_on_error=True`` closes
    after answering at least one request with an endpoint error; ``errors`` lists them."""

    def __init__(self, errors: list[EndpointError]) -> None:
        self.errors = list(errors)
        lines = "\n".join(f"  - {error.message}" for error in self.errors)
        super().__init__(
            f"the scripted model endpoint answered {len(self.errors)} request(s) with an "
            f"error instead of a scripted reply:\n{lines}"
        )
