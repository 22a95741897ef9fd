"""Property: for any reply, the streamed form accumulates to the non-streamed one.

Each protocol's official SDK accumulates the stream (``get_final_message``,
``get_final_response``, ``get_final_completion``); what it builds must equal the JSON
answer to the same request, for random text, thinking and tool-call blocks and random
delta sizes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness_testkit.model_endpoint import EndpointScript, MessageReply, ModelEndpoint

texts = st.text(st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"]), max_size=40)
json_leaves = st.none() | st.booleans() | st.integers(-1000, 1000) | texts
inputs = st.dictionaries(
    st.text("abcdefgh_", min_size=1, max_size=8),
    st.recursive(json_leaves, lambda inner: st.lists(inner, max_size=3), max_leaves=6),
    max_size=4,
)
blocks = st.one_of(
    st.builds(lambda t: {"text": t}, texts.filter(bool)),
    st.builds(lambda t: {"thinking": t}, texts.filter(bool)),
    st.builds(
        lambda name, data: {"toolCall": name, "input": data},
        st.sampled_from(["Write", "Bash", "mcp__host__weather"]),
        inputs,
    ),
)


def _reply(content: list[dict[str, Any]], size: int | None) -> MessageReply:
    # Explicit, distinct call ids: default ids carry the request index, which differs
    # between the streamed and the JSON request.
    named = [
        {**block, "id": f"toolu_{position}"} if "toolCall" in block else block
        for position, block in enumerate(content)
    ]
    return MessageReply.model_validate({"content": named, "chunkSize": size})


replies = st.builds(
    _reply,
    st.lists(blocks, min_size=1, max_size=5),
    st.none() | st.integers(1, 12),
)


@pytest.fixture(scope="module")
def endpoint() -> Iterator[ModelEndpoint]:
    with ModelEndpoint() as running:
        yield running


@pytest.fixture(scope="module")
def claude(endpoint: ModelEndpoint) -> Iterator[anthropic.Anthropic]:
    with anthropic.Anthropic(base_url=endpoint.base_url, api_key="k", max_retries=0) as sdk:
        yield sdk


@pytest.fixture(scope="module")
def gpt(endpoint: ModelEndpoint) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=endpoint.openai_base_url, api_key="k", max_retries=0) as sdk:
        yield sdk


def serve(endpoint: ModelEndpoint, reply: MessageReply) -> None:
    # The same reply answers the streamed and the JSON request.
    endpoint.set_script(EndpointScript(replies=[reply], repeat_from=0))


def blocks_of(content: list[Any]) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for block in content:
        if block.type == "text":
            out.append(("text", block.text))
        elif block.type == "thinking":
            out.append(("thinking", block.thinking))
        else:
            out.append(("tool", (block.id, block.name, block.input)))
    return out


@given(reply=replies)
def test_anthropic_stream_accumulates_to_the_message(
    endpoint: ModelEndpoint, claude: anthropic.Anthropic, reply: MessageReply
) -> None:
    serve(endpoint, reply)
    params: dict[str, Any] = {
        "model": "m",
        "max_tokens": 8,
        "messages": [{"role": "user", "content": "go"}],
    }
    with claude.messages.stream(**params) as stream:
        streamed = stream.get_final_message()
    whole = claude.messages.create(**params)
    assert blocks_of(streamed.content) == blocks_of(whole.content)
    assert streamed.stop_reason == whole.stop_reason


@given(reply=replies)
def test_openai_streams_accumulate_to_the_response(
    endpoint: ModelEndpoint, gpt: openai.OpenAI, reply: MessageReply
) -> None:
    serve(endpoint, reply)
    with gpt.responses.stream(model="m", input="go") as stream:
        streamed = stream.get_final_response()
    whole = gpt.responses.create(model="m", input="go")
    messages: list[Any] = [{"role": "user", "content": "go"}]
    with gpt.chat.completions.stream(model="m", messages=messages) as chat_stream:
        chat_streamed = chat_stream.get_final_completion().choices[0].message
    chat_whole = gpt.chat.completions.create(model="m", messages=messages).choices[0].message
    # Item ids carry the request index; everything else must be equal.
    assert [item.model_dump(exclude={"id"}, exclude_none=True) for item in streamed.output] == [
        item.model_dump(exclude={"id"}, exclude_none=True) for item in whole.output
    ]
    assert chat_streamed.content == chat_whole.content
    # Compared as data: the SDK's class for a function tool call was renamed between its
    # releases (ChatCompletionMessageToolCall, then ...FunctionToolCall).
    fields: dict[str, bool | set[str]] = {
        "id": True,
        "type": True,
        "function": {"name", "arguments"},
    }
    assert [c.model_dump(include=fields) for c in chat_streamed.tool_calls or []] == [
        c.model_dump(include=fields) for c in chat_whole.tool_calls or []
    ]
