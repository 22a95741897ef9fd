"""The script format: validation, shorthands, files and round trips."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from harness_testkit.fake_harness import (
    BuiltinCallAction,
    CrashFault,
    DropFinishStepFault,
    FileMutationAction,
    HostToolCallAction,
    McpCallAction,
    RawAction,
    Script,
    ScriptStep,
    TextAction,
    WaitForUserMessageAction,
    example_path,
    load_example,
)


def test_shorthand_actions_expand_to_typed_actions() -> None:
    step = ScriptStep.model_validate(
        {
            "actions": [
                "plain text",
                {"reasoning": "hmm"},
                {"builtin": "read", "input": {"file_path": "a"}},
                {"hostTool": "weather", "id": "w"},
                {"mcp": "docs/search"},
                {"raw": {"x": 1}},
                {"fileChange": [{"path": "a.txt", "content": "x"}]},
                {"waitUserMessage": True},
                {"delay": 1.5},
                {"error": "boom", "endTurn": False},
            ]
        }
    )
    kinds = [type(action) for action in step.actions]
    assert kinds[:5] == [
        TextAction,
        type(step.actions[1]),
        BuiltinCallAction,
        HostToolCallAction,
        McpCallAction,
    ]
    assert isinstance(step.actions[5], RawAction)
    assert isinstance(step.actions[6], FileMutationAction)
    assert isinstance(step.actions[7], WaitForUserMessageAction)
    assert step.actions[7].timeout is None
    mcp = step.actions[4]
    assert isinstance(mcp, McpCallAction)
    assert (mcp.server, mcp.tool) == ("docs", "search")


def test_both_spellings_are_accepted_and_camel_case_is_written() -> None:
    snake = Script.model_validate(
        {"turns": [{"steps": [], "prompt_matches": "x"}], "context_budget": 5}
    )
    camel = Script.model_validate(
        {"turns": [{"steps": [], "promptMatches": "x"}], "contextBudget": 5}
    )
    assert snake == camel
    assert "contextBudget" in camel.to_wire()
    assert "promptMatches" in camel.to_wire()["turns"][0]


@pytest.mark.parametrize(
    ("document", "fragment"),
    [
        ({"turns": []}, "turns"),
        ({"turns": [{"promptMatches": "("}]}, "regular expression"),
        ({"turns": [{"steps": [{"when": {"isError": True}}]}]}, "toolCallId"),
        ({"turns": [{"steps": [{"when": {}}]}]}, "toolCallId or userMessageMatches"),
        ({"turns": [{"faults": [{"kind": "crash"}]}]}, "atPart or beforeType"),
        ({"turns": [{"steps": [{"actions": [{"fileChange": [{"path": "a"}]}]}]}]}, "exactly one"),
        ({"turns": [{"steps": [{"actions": [{"type": "teleport"}]}]}]}, "teleport"),
        ({"turns": [{}], "unknown": 1}, "unknown"),
    ],
)
def test_invalid_scripts_are_refused_naming_the_problem(
    document: dict[str, object], fragment: str
) -> None:
    with pytest.raises(ValidationError, match=fragment):
        Script.model_validate(document)


def test_faults_are_discriminated_by_kind() -> None:
    turn = Script.model_validate(
        {
            "turns": [
                {
                    "faults": [
                        {"kind": "crash", "atPart": 3},
                        {"kind": "drop-finish-step", "steps": [0]},
                    ]
                }
            ]
        }
    ).turns[0]
    assert isinstance(turn.faults[0], CrashFault)
    assert turn.faults[0].at_part == 3
    assert isinstance(turn.faults[1], DropFinishStepFault)


def test_example_loads_and_round_trips_through_yaml_and_json(tmp_path: Path) -> None:
    script = load_example("hello")
    assert example_path().name == "hello.yaml"
    assert Script.from_yaml(script.to_yaml()) == script
    json_file = tmp_path / "hello.json"
    json_file.write_text(json.dumps(script.to_wire()))
    assert Script.from_file(json_file) == script
    assert Script.from_file(example_path()) == script
    with pytest.raises(FileNotFoundError, match="nope"):
        example_path("nope")


def test_digest_is_stable_and_changes_with_content() -> None:
    assert Script.from_texts("a").digest() == Script.from_texts("a").digest()
    assert Script.from_texts("a").digest() != Script.from_texts("b").digest()
    assert Script.default().turns[0].steps[0].actions == [TextAction(text="You said: {{prompt}}")]
