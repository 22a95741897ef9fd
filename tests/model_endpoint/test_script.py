"""The endpoint script: validation, shorthands, loading."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from harness_testkit.model_endpoint import (
    EndpointScript,
    ErrorReply,
    MessageReply,
    PauseBlock,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
)

YAML = """
version: 1
model: scripted
replies:
  - Plain text reply
  - content:
      - thinking: Let me think.
      - text: Writing now.
      - toolCall: Write
        id: toolu_1
        input: {file_path: a.txt, content: hi}
      - pause: 0.5
    stopReason: tool-use
  - status: 429
    message: slow down
    retryAfter: 1
  - match: {toolResult: {toolCallId: toolu_1, isError: false}}
    content: [Done.]
repeatFrom: 3
"""


def test_yaml_shorthands_expand_to_typed_replies() -> None:
    script = EndpointScript.from_yaml(YAML)
    plain, calling, limited, done = script.replies
    assert isinstance(plain, MessageReply)
    assert plain.content == [TextBlock(text="Plain text reply")]
    assert plain.effective_stop_reason == "end-turn"
    assert isinstance(calling, MessageReply)
    assert calling.content == [
        ThinkingBlock(thinking="Let me think."),
        TextBlock(text="Writing now."),
        ToolCallBlock(name="Write", id="toolu_1", input={"file_path": "a.txt", "content": "hi"}),
        PauseBlock(seconds=0.5),
    ]
    assert isinstance(limited, ErrorReply)
    assert (limited.status, limited.retry_after) == (429, 1)
    assert isinstance(done, MessageReply)
    assert done.match[0].tool_result is not None
    assert done.match[0].tool_result.tool_call_id == "toolu_1"


def test_round_trips_through_json_and_yaml_files(tmp_path: Path) -> None:
    script = EndpointScript.from_yaml(YAML)
    as_json = tmp_path / "script.json"
    as_json.write_text(script.model_dump_json(by_alias=True), encoding="utf-8")
    as_yaml = tmp_path / "script.yaml"
    as_yaml.write_text(script.to_yaml(), encoding="utf-8")
    assert EndpointScript.from_file(as_json) == script
    assert EndpointScript.from_file(as_yaml) == script
    assert "repeatFrom" in script.to_wire()


def test_tool_calls_default_to_tool_use() -> None:
    reply = MessageReply(content=[ToolCallBlock(name="Bash", input={"command": "ls"})])
    assert reply.effective_stop_reason == "tool-use"


@pytest.mark.parametrize(
    ("document", "complaint"),
    [
        ({"replies": [{"status": 200}]}, "greater than or equal to 400"),
        ({"replies": ["a"], "repeatFrom": 1}, "repeatFrom 1 is past the last reply"),
        ({"replies": [{"match": {}, "content": []}]}, "a match needs lastUserText"),
        ({"replies": [{"match": {"lastUserText": "("}}]}, "not a valid regular expression"),
        ({"replies": [{"content": [{"toolCall": ""}]}]}, "at least 1 character"),
        (
            {"replies": [{"content": [{"type": "image"}]}]},
            "does not match any of the expected tags",
        ),
        ({"replies": [{"stopReason": "done"}]}, "'end-turn'"),
        (
            {
                "replies": [
                    {"content": [{"toolCall": "A", "id": "x"}, {"toolCall": "B", "id": "x"}]}
                ]
            },
            r"repeated: \['x'\]",
        ),
        ({"replies": [], "unknown": 1}, "Extra inputs are not permitted"),
    ],
)
def test_invalid_scripts_name_the_problem(document: dict[str, object], complaint: str) -> None:
    with pytest.raises(ValidationError, match=complaint):
        EndpointScript.model_validate(document)


def test_from_reply_starts_where_a_previous_endpoint_stopped() -> None:
    script = EndpointScript.from_texts("a", "b", "c")
    assert [r.content[0].text for r in script.from_reply(1).replies] == ["b", "c"]  # type: ignore[union-attr]  # text replies
    assert script.from_reply(0) is script
    assert script.from_reply(5).replies == []
