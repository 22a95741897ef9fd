"""The kit Script -> endpoint script converter, served to the ``anthropic`` SDK."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest

from harness_testkit.fake_harness import Script, load_example
from harness_testkit.model_endpoint import (
    ErrorReply,
    MessageReply,
    ModelEndpoint,
    PauseBlock,
    ScriptConversionError,
    ToolCallBlock,
    from_kit_script,
)

NATIVE = {"write": "Write", "read": "Read"}


def hello_script() -> Script:
    # The README example without its file-change action (a model cannot change files).
    wire = load_example("hello").to_wire()
    docs_turn = wire["turns"][1]["steps"][0]
    docs_turn["actions"] = [a for a in docs_turn["actions"] if a.get("type") != "file-change"]
    return Script.model_validate(wire)


def test_file_changes_are_refused_by_name() -> None:
    with pytest.raises(ScriptConversionError, match=r"turn 1 step 0 action 1 \(file-change\)"):
        from_kit_script(load_example("hello"), tool_names=NATIVE)
    skipped = from_kit_script(load_example("hello"), tool_names=NATIVE, unsupported="skip")
    assert len(skipped.replies) == 7


def test_relative_paths_can_stay_as_scripted() -> None:
    converted = from_kit_script(
        hello_script(), tool_names=NATIVE, workdir="/work/dir", absolute_paths=False
    )
    first = converted.replies[0]
    assert isinstance(first, MessageReply)
    calls = [b for b in first.content if isinstance(b, ToolCallBlock)]
    assert calls[0].input["file_path"] == "notes/hello.txt"  # left relative
    assert calls[1].input == {"file_path": "/work/dir/notes/hello.txt"}  # {{workdir}} filled


def test_steps_become_replies_with_native_names() -> None:
    converted = from_kit_script(
        hello_script(),
        tool_names=NATIVE,
        host_tool_name=lambda name: f"mcp__host__{name}",
        workdir="/work/dir",
    )
    assert converted.model == "fake-hello-model"
    assert converted.repeat_from == 6  # whenExhausted repeat-last: the last turn again
    first = converted.replies[0]
    assert isinstance(first, MessageReply)
    calls = [b for b in first.content if isinstance(b, ToolCallBlock)]
    assert [(c.name, c.id) for c in calls] == [("Write", "write-note"), ("Read", "read-note")]
    assert calls[0].input["file_path"] == "/work/dir/notes/hello.txt"  # made absolute
    assert calls[1].input == {"file_path": "/work/dir/notes/hello.txt"}  # {{workdir}} filled
    weather = converted.replies[1]
    assert isinstance(weather, MessageReply)
    assert [b.name for b in weather.content if isinstance(b, ToolCallBlock)] == [
        "mcp__host__weather"
    ]
    search = converted.replies[4]
    assert isinstance(search, MessageReply)
    assert [b.name for b in search.content if isinstance(b, ToolCallBlock)] == ["mcp__docs__search"]
    assert [m.last_user_text for m in search.match] == ["docs"]
    # The converted script is a plain document: it survives YAML.
    assert type(converted).from_yaml(converted.to_yaml()) == converted


def tool_results(message: anthropic.types.Message, outputs: dict[str, Any]) -> dict[str, Any]:
    blocks = [
        {
            "type": "tool_result",
            "tool_use_id": block.id,
            "content": str(outputs[block.id]),
            "is_error": outputs[block.id] is None,
        }
        for block in message.content
        if block.type == "tool_use"
    ]
    return {"role": "user", "content": blocks}


@pytest.mark.parametrize(
    ("weather", "answer"),
    [("sunny", "The weather: sunny."), (None, "The weather service failed, sorry.")],
)
def test_conditional_steps_follow_the_tool_results(weather: str | None, answer: str) -> None:
    converted = from_kit_script(
        hello_script(), tool_names=NATIVE, host_tool_name=lambda name: f"mcp__host__{name}"
    )
    with (
        ModelEndpoint(converted, raise_on_error=True) as endpoint,
        anthropic.Anthropic(base_url=endpoint.base_url, api_key="k", max_retries=0) as sdk,
    ):
        history: list[Any] = [{"role": "user", "content": "hello"}]

        def step() -> anthropic.types.Message:
            reply = sdk.messages.create(model="claude", max_tokens=64, messages=history)
            history.append({"role": "assistant", "content": reply.content})
            return reply

        first = step()
        assert first.stop_reason == "tool_use"
        assert first.content[0].type == "thinking"
        assert first.content[0].thinking == 'The user said "hello"; I will leave a note first.'
        history.append(tool_results(first, {"write-note": "ok", "read-note": "hello"}))
        second = step()
        history.append(tool_results(second, {"weather-1": weather}))
        third = step()
        assert third.content[0].type == "text"
        assert third.content[0].text == answer
        history.append({"role": "user", "content": "any docs?"})
        fourth = step()
        assert [b.name for b in fourth.content if b.type == "tool_use"] == ["mcp__docs__search"]
        assert fourth.content[0].type == "tool_use"
        assert fourth.content[0].input == {"query": "any docs?"}
        history.append(tool_results(fourth, {"search-1": "README.md"}))
        fifth = step()
        assert fifth.content[0].type == "text"
        assert fifth.content[0].text == "Found README.md and wrote notes/docs.md."
        served = [r.reply_index for r in endpoint.requests]
        assert served == [0, 1, 3 if weather else 2, 4, 5]


def test_prompt_matches_skip_turns_whose_prompt_differs() -> None:
    script = Script.model_validate(
        {
            "turns": [
                {"promptMatches": "^first", "steps": [{"actions": [{"text": "answer one"}]}]},
                {"promptMatches": "^second", "steps": [{"actions": [{"text": "answer two"}]}]},
            ],
            "whenExhausted": "error",
        }
    )
    converted = from_kit_script(script)
    assert converted.repeat_from is None
    with (
        ModelEndpoint(converted) as endpoint,
        anthropic.Anthropic(base_url=endpoint.base_url, api_key="k", max_retries=0) as sdk,
    ):
        answer = sdk.messages.create(
            model="m", max_tokens=8, messages=[{"role": "user", "content": "second prompt"}]
        )
        assert answer.content[0].type == "text"
        assert answer.content[0].text == "answer two"


def test_errors_delays_and_finish_reasons_carry_over() -> None:
    script = Script.model_validate(
        {
            "turns": [
                {
                    "steps": [
                        {
                            "actions": [{"delay": 2}, {"text": "partial"}, {"error": "boom"}],
                        },
                        {"actions": [{"error": {"code": 7}}]},
                        {
                            "actions": ["cut"],
                            "finishReason": "length",
                            "usage": {"inputTokens": 3, "outputTokens": 4},
                        },
                    ]
                }
            ]
        }
    )
    failing, error_only, cut = from_kit_script(script, time_scale=0.5, error_status=500).replies
    assert isinstance(failing, MessageReply)
    assert failing.content[0] == PauseBlock(seconds=1.0)
    assert failing.stream_error is not None
    assert (failing.stream_error.message, failing.stream_error.status) == ("boom", 500)
    assert isinstance(error_only, ErrorReply)
    assert (error_only.status, error_only.message) == (500, '{"code": 7}')
    assert isinstance(cut, MessageReply)
    assert cut.stop_reason == "max-tokens"
    assert cut.usage is not None
    assert (cut.usage.input_tokens, cut.usage.output_tokens) == (3, 4)


def test_a_denied_criterion_is_refused_or_left_out() -> None:
    script = Script.model_validate(
        {
            "turns": [
                {
                    "steps": [
                        {"actions": [{"hostTool": "deploy", "id": "dep-1"}]},
                        {"when": {"toolCallId": "dep-1", "denied": True}, "actions": ["no"]},
                    ]
                }
            ]
        }
    )
    with pytest.raises(ScriptConversionError, match=r"turn 0 step 1 condition: a `denied`"):
        from_kit_script(script)
    skipped = from_kit_script(script, unsupported="skip")
    second = skipped.replies[1]
    assert isinstance(second, MessageReply)
    # The rest of the condition stays: the reply still waits for dep-1's result.
    assert [m.tool_result.tool_call_id for m in second.match if m.tool_result] == ["dep-1"]
