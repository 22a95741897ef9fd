"""How the Claude Code adapter serves a kit script to the real CLI (no CLI needed here).

The CLI sends a turn's last tool results back to the model, and answers a reply with no
visible output (no text, no tool call) with one retry; the served script must have a reply
for each of those requests, or the CLI takes the next turn's first reply (or, with
``whenExhausted: repeat-last``, loops on the turn until the turn times out).
"""

from __future__ import annotations

from typing import Any

import pytest

from harness_testkit.adapters.claude_code._endpoint import _runtime_script
from harness_testkit.fake_harness import Script


def _served(steps: list[dict[str, Any]]) -> list[list[str]]:
    script = Script.model_validate({"turns": [{"steps": steps}], "whenExhausted": "repeat-last"})
    (turn,) = _runtime_script(script).turns
    return [[action.type for action in step.actions] for step in turn.steps]


_MCP = {"type": "mcp", "server": "docs", "tool": "fetch", "id": "m1", "input": {}}


@pytest.mark.parametrize(
    ("steps", "served"),
    [
        # Text ends the turn: no further request.
        ([{"actions": [{"text": "hi"}]}], [["text"]]),
        # Tool calls last: a closing reply (empty), then the retry of that empty reply.
        ([{"actions": [_MCP]}], [["mcp"], [], []]),
        # An empty or reasoning-only last reply is retried once.
        ([{"actions": [_MCP]}, {"actions": []}], [["mcp"], [], []]),
        ([{"actions": [{"reasoning": "r"}]}], [["reasoning"], []]),
        # Two replies without output: the retry is the second one, the CLI then ends.
        ([{"actions": []}, {"actions": []}], [[], []]),
        # A turn whose every step is left out (opaque file changes only) still answers
        # the CLI's request and its retry, instead of taking the next turn's replies.
        (
            [{"actions": [{"type": "file-change", "changes": [{"path": "a", "content": "x"}]}]}],
            [[], []],
        ),
        # Text without a tool call ends the CLI's turn: later steps are never requested
        # (served, they would answer the next turn's requests).
        ([{"actions": [{"text": "a"}]}, {"actions": [{"text": "b"}]}], [["text"]]),
        ([{"actions": []}, {"actions": []}, {"actions": [{"text": "c"}]}], [[], []]),
        (
            [{"actions": [_MCP]}, {"actions": [{"text": "a"}]}, {"actions": [_MCP]}],
            [["mcp"], ["text"]],
        ),
        # Mid-turn, a reply without output is followed by the retry's reply: nothing added.
        (
            [{"actions": [{"reasoning": "r"}]}, {"actions": [{"text": "t"}]}],
            [["reasoning"], ["text"]],
        ),
    ],
)
def test_every_request_the_cli_makes_gets_a_reply_of_its_turn(
    steps: list[dict[str, Any]], served: list[list[str]]
) -> None:
    assert _served(steps) == served
