"""OpenAI Responses and Chat Completions, exercised with the official ``openai`` SDK."""

from __future__ import annotations

import json
from collections.abc import Iterator

import openai
import pytest

from harness_testkit.model_endpoint import EndpointScript, ModelEndpoint
from harness_testkit.spec import JSONValue

from .support import READ_TIMEOUT, client_error, read_body, read_cut_body

SCRIPT = EndpointScript.model_validate(
    {
        "replies": [
            {
                "content": [
                    {"thinking": "Listing files first."},
                    "Looking at {{prompt}}",
                    {"toolCall": "shell", "id": "call_ls", "input": {"command": ["ls", "-a"]}},
                ],
                "chunkSize": 5,
            },
            {
                "content": ["Files: {{result:call_ls}}"],
                "usage": {"inputTokens": 7, "outputTokens": 3},
            },
        ]
    }
)
RESPONSES_TOOLS: list[openai.types.responses.ToolParam] = [
    {"type": "function", "name": "shell", "parameters": {"type": "object"}, "strict": None}
]
CHAT_TOOLS: list[openai.types.chat.ChatCompletionFunctionToolParam] = [
    {"type": "function", "function": {"name": "shell", "parameters": {"type": "object"}}}
]


@pytest.fixture
def endpoint() -> Iterator[ModelEndpoint]:
    with ModelEndpoint(SCRIPT) as running:
        yield running


@pytest.fixture
def sdk(endpoint: ModelEndpoint) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=endpoint.openai_base_url, api_key="k", max_retries=0) as client:
        yield client


# -- Responses ----------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [True, False])
def test_responses_tool_call_round_trip(
    endpoint: ModelEndpoint, sdk: openai.OpenAI, stream: bool
) -> None:
    first: openai.types.responses.Response
    if stream:
        with sdk.responses.stream(
            model="gpt-test", input="the repo", tools=RESPONSES_TOOLS, instructions="Be terse."
        ) as events:
            kinds = [event.type for event in events]
            first = events.get_final_response()
        assert kinds[:2] == ["response.created", "response.in_progress"]
        assert kinds[-1] == "response.completed"
        assert "response.reasoning_summary_text.delta" in kinds
        assert "response.function_call_arguments.delta" in kinds
        assert kinds.count("response.output_text.delta") == 4  # "Looking at the repo" by 5
    else:
        first = sdk.responses.create(
            model="gpt-test", input="the repo", tools=RESPONSES_TOOLS, instructions="Be terse."
        )
    reasoning, message, call = first.output
    assert reasoning.type == "reasoning"
    assert [s.text for s in reasoning.summary] == ["Listing files first."]
    assert message.type == "message"
    assert first.output_text == "Looking at the repo"
    assert call.type == "function_call"
    assert (call.call_id, call.name, json.loads(call.arguments)) == (
        "call_ls",
        "shell",
        {"command": ["ls", "-a"]},
    )
    assert first.status == "completed"

    second = sdk.responses.create(
        model="gpt-test",
        input=[
            {"role": "user", "content": "the repo"},
            {"type": "function_call", "call_id": "call_ls", "name": "shell", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_ls", "output": "a.txt b.txt"},
        ],
    )
    assert second.output_text == "Files: a.txt b.txt"
    assert second.usage is not None
    assert (second.usage.input_tokens, second.usage.output_tokens) == (7, 3)

    offered, answered = endpoint.requests
    assert (offered.protocol, offered.stream, offered.tools, offered.system) == (
        "openai-responses",
        stream,
        ["shell"],
        "Be terse.",
    )
    assert offered.last_user_text == "the repo"
    assert answered.messages[1].tool_calls[0].name == "shell"
    result = answered.tool_result("call_ls")
    assert result is not None
    assert result.content == "a.txt b.txt"


def test_responses_errors_raise_the_sdk_exception() -> None:
    script = EndpointScript.model_validate(
        {"replies": [{"status": 429, "message": "slow down"}, {"status": 500}]}
    )
    with (
        ModelEndpoint(script) as endpoint,
        openai.OpenAI(base_url=endpoint.openai_base_url, api_key="k", max_retries=0) as sdk,
    ):
        with pytest.raises(openai.RateLimitError) as limited:
            sdk.responses.create(model="m", input="hi")
        assert limited.value.code == "rate_limit_exceeded"
        assert "slow down" in limited.value.message  # how the SDK frames it is its own
        with pytest.raises(openai.InternalServerError):
            sdk.responses.create(model="m", input="hi")
        with pytest.raises(openai.BadRequestError, match=r"request #2 .* was not foreseen"):
            sdk.responses.create(model="m", input="hi")
        assert [e.kind for e in endpoint.errors] == ["unforeseen-request"]


def test_responses_stream_error_event_raises() -> None:
    script = EndpointScript.model_validate(
        {
            "replies": [
                {"content": ["partial"], "streamError": {"message": "upstream died"}, "times": 2}
            ]
        }
    )
    with (
        ModelEndpoint(script) as endpoint,
        openai.OpenAI(base_url=endpoint.openai_base_url, api_key="k", max_retries=0) as sdk,
    ):
        # On the wire: the stream ends with an `error` event, never `response.completed`.
        wire = read_body(endpoint, "/v1/responses", {"model": "m", "input": "hi", "stream": True})
        assert wire.sse_events()[-1] == "error"
        assert "response.completed" not in wire.sse_events()
        assert b"upstream died" in wire.partial
        # The client ends too, without a completed response: releases raise the error
        # event, yield it, or (older ones) yield it unparsed.
        seen: list[str | None] = []
        raised: Exception | None = None
        try:
            for event in sdk.responses.create(model="m", input="hi", stream=True):
                seen.append(event.type)
        except Exception as error:  # the SDK's class is its own; the message is the kit's
            raised = error
        assert raised is None or "upstream died" in str(raised)
        assert "response.completed" not in seen


# -- Chat Completions ---------------------------------------------------------------------


@pytest.mark.parametrize("stream", [True, False])
def test_chat_tool_call_round_trip(
    endpoint: ModelEndpoint, sdk: openai.OpenAI, stream: bool
) -> None:
    messages: list[openai.types.chat.ChatCompletionMessageParam] = [
        {"role": "system", "content": "Be terse."},
        {"role": "user", "content": "the repo"},
    ]
    first: openai.types.chat.ChatCompletion
    if stream:
        with sdk.chat.completions.stream(
            model="gpt-test",
            messages=messages,
            tools=CHAT_TOOLS,
            stream_options={"include_usage": True},
        ) as events:
            list(events)
            first = events.get_final_completion()
        assert first.usage is not None
    else:
        first = sdk.chat.completions.create(
            model="gpt-test",
            messages=messages,
            tools=CHAT_TOOLS,
        )
    choice = first.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content == "Looking at the repo"
    assert choice.message.model_extra is not None
    assert choice.message.model_extra["reasoning_content"] == "Listing files first."
    (call,) = choice.message.tool_calls or []
    assert call.type == "function"
    assert (call.id, call.function.name, json.loads(call.function.arguments)) == (
        "call_ls",
        "shell",
        {"command": ["ls", "-a"]},
    )
    second = sdk.chat.completions.create(
        model="gpt-test",
        messages=[
            *messages,
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_ls",
                        "type": "function",
                        "function": {"name": "shell", "arguments": "{}"},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_ls", "content": "a.txt"},
        ],
    )
    assert second.choices[0].message.content == "Files: a.txt"
    assert second.choices[0].finish_reason == "stop"
    offered, answered = endpoint.requests
    assert (offered.protocol, offered.stream, offered.tools, offered.system) == (
        "openai-chat",
        stream,
        ["shell"],
        "Be terse.",
    )
    assert answered.tool_results[0].tool_call_id == "call_ls"
    assert answered.messages[2].tool_calls[0].id == "call_ls"


def test_chat_raw_chunks_end_with_done(endpoint: ModelEndpoint, sdk: openai.OpenAI) -> None:
    chunks = list(
        sdk.chat.completions.create(
            model="gpt-test", messages=[{"role": "user", "content": "x"}], stream=True
        )
    )
    assert chunks[0].choices[0].delta.role == "assistant"
    assert [c.choices[0].finish_reason for c in chunks][-1] == "tool_calls"
    opened = [c for c in chunks if c.choices[0].delta.tool_calls]
    first_call = opened[0].choices[0].delta.tool_calls
    assert first_call is not None
    assert first_call[0].id == "call_ls"
    assert first_call[0].function is not None
    assert first_call[0].function.name == "shell"


def test_chat_truncated_stream_raises() -> None:
    reply = {"content": ["never finished"], "chunkSize": 3, "truncateAfterEvents": 2}
    script = EndpointScript.model_validate({"replies": [reply, reply]})
    question: dict[str, JSONValue] = {
        "model": "m",
        "messages": [{"role": "user", "content": "x"}],
        "stream": True,
    }
    with (
        ModelEndpoint(script) as endpoint,
        openai.OpenAI(
            base_url=endpoint.openai_base_url, api_key="k", max_retries=0, timeout=READ_TIMEOUT
        ) as sdk,
    ):
        cut = read_cut_body(endpoint, "/v1/chat/completions", question)
        assert cut.status == 200
        assert b"[DONE]" not in cut.partial

        def consume() -> None:
            for _ in sdk.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "x"}], stream=True
            ):
                pass

        client_error(consume)


def test_chat_stream_error_raises_api_error() -> None:
    script = EndpointScript.model_validate(
        {"replies": [{"content": ["partial"], "streamError": {"message": "upstream died"}}]}
    )
    with (
        ModelEndpoint(script) as endpoint,
        openai.OpenAI(base_url=endpoint.openai_base_url, api_key="k", max_retries=0) as sdk,
    ):
        received: list[str] = []

        def consume() -> None:
            for chunk in sdk.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "x"}], stream=True
            ):
                received.append(chunk.choices[0].delta.content or "")

        with pytest.raises(openai.APIError, match="upstream died"):
            consume()
        assert "".join(received) == "partial"


def test_chat_errors_and_unknown_routes() -> None:
    script = EndpointScript.model_validate({"replies": [{"status": 529, "message": "overloaded"}]})
    with (
        ModelEndpoint(script) as endpoint,
        openai.OpenAI(base_url=endpoint.openai_base_url, api_key="k", max_retries=0) as sdk,
    ):
        with pytest.raises(openai.InternalServerError) as raised:
            sdk.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
        assert raised.value.status_code == 529
        with pytest.raises(openai.NotFoundError, match="no route GET /v1/models"):
            sdk.models.list()
        assert [e.kind for e in endpoint.errors] == ["unknown-route"]
