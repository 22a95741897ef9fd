"""Anthropic Messages, exercised with the official ``anthropic`` SDK as the client."""

from __future__ import annotations

from collections.abc import Iterator

import anthropic
import pytest

from harness_testkit.model_endpoint import EndpointScript, ModelEndpoint

from .support import READ_TIMEOUT, client_error, read_cut_body

TOOLS: list[anthropic.types.ToolParam] = [
    {"name": "Write", "description": "write a file", "input_schema": {"type": "object"}},
    {"name": "Read", "description": "read a file", "input_schema": {"type": "object"}},
]
HELLO: list[anthropic.types.MessageParam] = [{"role": "user", "content": "hello there"}]

SCRIPT = EndpointScript.model_validate(
    {
        "model": "scripted-claude",
        "replies": [
            {
                "content": [
                    {"thinking": "The user greets me; I write a note.", "signature": "sig-1"},
                    "Hi! You said: {{prompt}}",
                    {
                        "toolCall": "Write",
                        "id": "toolu_write_1",
                        "input": {"file_path": "notes/a.txt", "content": "hello\n"},
                    },
                ],
                "chunkSize": 4,
                "usage": {"inputTokens": 11, "outputTokens": 22},
            },
            {"content": ["Wrote it: {{result:toolu_write_1}}"]},
        ],
    }
)


def client(endpoint: ModelEndpoint) -> anthropic.Anthropic:
    return anthropic.Anthropic(
        base_url=endpoint.base_url, api_key="test-key", max_retries=0, timeout=READ_TIMEOUT
    )


@pytest.fixture
def endpoint() -> Iterator[ModelEndpoint]:
    with ModelEndpoint(SCRIPT) as running:
        yield running


@pytest.fixture
def sdk(endpoint: ModelEndpoint) -> Iterator[anthropic.Anthropic]:
    with client(endpoint) as opened:
        yield opened


def second_turn(first: anthropic.types.Message) -> list[anthropic.types.MessageParam]:
    return [
        *HELLO,
        {"role": "assistant", "content": first.content},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_write_1", "content": "file written"}
            ],
        },
    ]


def test_streaming_tool_call_round_trip(endpoint: ModelEndpoint, sdk: anthropic.Anthropic) -> None:
    with sdk.messages.stream(
        model="claude-test", max_tokens=256, messages=HELLO, tools=TOOLS, system="Be brief."
    ) as stream:
        types = [event.type for event in stream]
        first = stream.get_final_message()
    assert first.model == "scripted-claude"
    assert first.stop_reason == "tool_use"
    thinking, text, call = first.content
    assert thinking.type == "thinking"
    assert (thinking.thinking, thinking.signature) == (
        "The user greets me; I write a note.",
        "sig-1",
    )
    assert text.type == "text"
    assert text.text == "Hi! You said: hello there"
    assert call.type == "tool_use"
    assert (call.id, call.name, call.input) == (
        "toolu_write_1",
        "Write",
        {"file_path": "notes/a.txt", "content": "hello\n"},
    )
    assert (first.usage.input_tokens, first.usage.output_tokens) == (11, 22)
    assert types[0] == "message_start"
    assert types[-2:] == ["message_delta", "message_stop"]

    second = sdk.messages.create(model="claude-test", max_tokens=256, messages=second_turn(first))
    assert second.content[0].type == "text"
    assert second.content[0].text == "Wrote it: file written"
    assert second.stop_reason == "end_turn"

    offered, answered = endpoint.requests
    assert (offered.protocol, offered.stream, offered.tools) == (
        "anthropic-messages",
        True,
        ["Write", "Read"],
    )
    assert offered.system == "Be brief."
    assert offered.settings["max_tokens"] == 256
    assert "x-api-key" not in offered.headers
    assert answered.stream is False
    assert answered.messages[1].tool_calls[0].name == "Write"
    result = answered.tool_result("toolu_write_1")
    assert result is not None
    assert (result.content, result.is_error) == ("file written", False)
    assert [r.reply_index for r in endpoint.requests] == [0, 1]
    assert endpoint.errors == []


def test_raw_event_sequence_is_the_documented_one(sdk: anthropic.Anthropic) -> None:
    stream = sdk.messages.create(
        model="claude-test", max_tokens=64, messages=HELLO, tools=TOOLS, stream=True
    )
    events = list(stream)
    kinds = [(e.type, getattr(getattr(e, "delta", None), "type", None)) for e in events]
    expected_head = [
        ("message_start", None),
        ("content_block_start", None),
        ("content_block_delta", "thinking_delta"),
    ]
    assert kinds[:3] == expected_head
    assert ("content_block_delta", "signature_delta") in kinds
    assert ("content_block_delta", "text_delta") in kinds
    assert ("content_block_delta", "input_json_delta") in kinds
    assert kinds[-2:] == [("message_delta", None), ("message_stop", None)]
    starts = [e for e in events if e.type == "content_block_start"]
    stops = [e for e in events if e.type == "content_block_stop"]
    assert [e.index for e in starts] == [e.index for e in stops] == [0, 1, 2]
    text_deltas = [
        e.delta.text
        for e in events
        if e.type == "content_block_delta" and e.delta.type == "text_delta"
    ]
    assert text_deltas == ["Hi! ", "You ", "said", ": he", "llo ", "ther", "e"]


def test_beta_query_and_count_tokens(endpoint: ModelEndpoint, sdk: anthropic.Anthropic) -> None:
    message = sdk.beta.messages.create(
        model="claude-test",
        max_tokens=64,
        messages=[{"role": "user", "content": "hello there"}],  # HELLO, typed for the beta API
        extra_query={"beta": "true"},
    )
    assert message.stop_reason == "tool_use"
    assert endpoint.requests[0].query == {"beta": "true"}
    counted = sdk.messages.count_tokens(model="claude-test", messages=HELLO)
    assert counted.input_tokens > 0
    assert len(endpoint.requests) == 1  # counting tokens is not a model request


@pytest.mark.parametrize(
    ("status", "error_type"),
    [(429, "rate_limit_error"), (500, "api_error"), (529, "overloaded_error")],
)
def test_scripted_errors_raise_the_sdk_exception(status: int, error_type: str) -> None:
    script = EndpointScript.model_validate(
        {"replies": [{"status": status, "message": "scripted failure", "retryAfter": 2}, "ok"]}
    )
    with ModelEndpoint(script) as endpoint, client(endpoint) as sdk:
        # Judged: the status, body and header the endpoint sent. Which subclass the SDK
        # maps a status to is its own (OverloadedError for 529 only in later releases).
        with pytest.raises(anthropic.APIStatusError) as raised:
            sdk.messages.create(model="m", max_tokens=8, messages=HELLO)
        assert raised.value.status_code == status
        assert raised.value.body == {
            "type": "error",
            "error": {"type": error_type, "message": "scripted failure"},
        }
        assert raised.value.response.headers["retry-after"] == "2"
        after = sdk.messages.create(model="m", max_tokens=8, messages=HELLO)
        assert after.content[0].type == "text"
        assert after.content[0].text == "ok"
        assert endpoint.errors == []  # scripted errors are replies, not endpoint errors


def test_truncated_stream_raises_instead_of_hanging() -> None:
    script = EndpointScript.model_validate(
        {
            "replies": [
                {"content": ["never finished"], "truncateAfterEvents": 3, "chunkSize": 2},
                {"content": ["never finished"], "truncateAfterEvents": 3, "chunkSize": 2},
            ]
        }
    )
    with ModelEndpoint(script) as endpoint, client(endpoint) as sdk:
        # The endpoint cuts the stream after the scripted events: the body ends early.
        cut = read_cut_body(
            endpoint,
            "/v1/messages",
            {"model": "m", "max_tokens": 8, "messages": HELLO, "stream": True},  # type: ignore[dict-item]  # TypedDicts are JSON
        )
        assert cut.status == 200
        assert cut.sse_events() == ["message_start", "content_block_start", "ping"]
        # The client sees an error, not a hang, whatever class its SDK release uses.
        received: list[str] = []

        def consume() -> None:
            with sdk.messages.stream(model="m", max_tokens=8, messages=HELLO) as stream:
                received.extend(event.type for event in stream)

        client_error(consume)
        assert "message_stop" not in received
        assert received[0] == "message_start"


def test_truncated_json_body_raises() -> None:
    script = EndpointScript.model_validate(
        {
            "replies": [
                {"content": ["x"], "truncateAfterEvents": 0},
                {"content": ["x"], "truncateAfterEvents": 0},
            ]
        }
    )
    with ModelEndpoint(script) as endpoint, client(endpoint) as sdk:
        cut = read_cut_body(
            endpoint,
            "/v1/messages",
            {"model": "m", "max_tokens": 8, "messages": HELLO},  # type: ignore[dict-item]  # TypedDicts are JSON
        )
        assert cut.status == 200
        client_error(lambda: sdk.messages.create(model="m", max_tokens=8, messages=HELLO))


def test_unforeseen_request_gets_a_clear_error() -> None:
    with ModelEndpoint(EndpointScript.from_texts("only one")) as endpoint, client(endpoint) as sdk:
        sdk.messages.create(model="m", max_tokens=8, messages=HELLO)
        with pytest.raises(anthropic.BadRequestError, match=r"request #1 .* was not foreseen"):
            sdk.messages.create(model="m", max_tokens=8, messages=HELLO)
        (error,) = endpoint.errors
        assert (error.kind, error.request_index, error.path) == (
            "unforeseen-request",
            1,
            "/v1/messages",
        )
        assert endpoint.requests[1].reply_index is None


def test_invalid_body_is_an_endpoint_error() -> None:
    with ModelEndpoint(EndpointScript.from_texts("unused")) as endpoint, client(endpoint) as sdk:
        with pytest.raises(anthropic.BadRequestError, match="`messages` must be a list"):
            sdk.post("/v1/messages", body={"model": "m"}, cast_to=object)
        assert [e.kind for e in endpoint.errors] == ["invalid-request"]
        assert endpoint.requests == []


def test_stream_error_event_raises_after_the_content() -> None:
    script = EndpointScript.model_validate(
        {
            "replies": [
                {
                    "content": ["partial answer"],
                    "streamError": {"message": "upstream died", "errorType": "overloaded_error"},
                },
                {"content": ["x"], "streamError": {"message": "as JSON", "status": 529}},
            ]
        }
    )
    with ModelEndpoint(script) as endpoint, client(endpoint) as sdk:
        texts: list[str] = []
        with (
            pytest.raises(anthropic.APIStatusError, match="upstream died") as raised,
            sdk.messages.stream(model="m", max_tokens=8, messages=HELLO) as stream,
        ):
            texts.extend(stream.text_stream)
        assert texts == ["partial answer"]
        assert raised.value.body == {
            "type": "error",
            "error": {"type": "overloaded_error", "message": "upstream died"},
        }
        with pytest.raises(anthropic.APIStatusError, match="as JSON") as overloaded:
            sdk.messages.create(model="m", max_tokens=8, messages=HELLO)
        assert overloaded.value.status_code == 529


def test_injected_reminders_are_not_the_users_text() -> None:
    script = EndpointScript.model_validate(
        {"replies": [{"match": {"lastUserText": "^first"}, "content": ["You said {{prompt}}"]}]}
    )
    reminder = "<system-reminder>\nContext the runtime adds.\n</system-reminder>\n"
    messages: list[anthropic.types.MessageParam] = [
        {
            "role": "user",
            "content": [{"type": "text", "text": reminder}, {"type": "text", "text": "first one"}],
        }
    ]
    with ModelEndpoint(script) as endpoint, client(endpoint) as sdk:
        reply = sdk.messages.create(model="m", max_tokens=8, messages=messages)
    assert reply.content[0].type == "text"
    assert reply.content[0].text == "You said first one"
    (request,) = endpoint.requests
    assert request.last_user_text == "first one"
    assert request.messages[0].text == reminder + "first one"  # the message itself is whole
