"""The scenario JSON Schema describes inline scripts as the loader reads them."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from harness_testkit.fake_harness import Script, example_path
from harness_testkit.simulate._scenario import scenario_json_schema
from harness_testkit.simulate._script_schema import ACTION_SHORTHANDS, script_schema_defs

SCHEMA = scenario_json_schema()
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
SCRIPT_VALIDATOR = jsonschema.Draft202012Validator(
    {"$defs": SCHEMA["$defs"], "$ref": "#/$defs/Script"}
)


def _script_errors(script: Any) -> list[str]:
    return [error.message for error in SCRIPT_VALIDATOR.iter_errors(script)]


def _loads(script: Any) -> bool:
    try:
        Script.model_validate(script)
    except (ValidationError, ValueError):
        return False
    return True


def _one_action(action: Any) -> dict[str, Any]:
    return {"turns": [{"steps": [{"actions": [action]}]}]}


SAMPLES: dict[str, Any] = {
    "text": "Hello",
    "reasoning": "Thinking",
    "builtin": "bash",
    "hostTool": "deploy",
    "raw": {"a": 1},
    "error": "boom",
    "delay": 1,
    "fileChange": [{"path": "a", "content": "b"}],
    "waitUserMessage": True,
}


def test_the_shorthands_are_the_scripting_shorthands() -> None:
    defs = script_schema_defs()
    kinds = {
        defs[name]["properties"]["type"]["const"]: name
        for name in defs
        if name.endswith("Action") and "type" in defs[name].get("properties", {})
    }
    assert set(SAMPLES) == set(ACTION_SHORTHANDS)
    # Every action kind but `mcp` (its own `server/tool` shorthand) has one, and each
    # expands, in the loader, to the action the schema says it stands for.
    covered = {target for target, _ in ACTION_SHORTHANDS.values()}
    assert covered == set(kinds.values()) - {"McpCallAction"}
    for key, (target, field) in ACTION_SHORTHANDS.items():
        action = Script.model_validate(_one_action({key: SAMPLES[key]})).turns[0].steps[0]
        loaded = action.actions[0]
        assert type(loaded).__name__ == target
        assert field in type(loaded).model_fields


def test_the_inline_script_is_the_whole_script() -> None:
    script = SCHEMA["$defs"]["ScenarioHarness"]["properties"]["script"]["anyOf"][0]["oneOf"][0]
    assert script["$ref"] == "#/$defs/Script"
    step = SCHEMA["$defs"]["ScriptStep"]["properties"]
    assert step["when"]["anyOf"][0] == {"$ref": "#/$defs/StepCondition"}
    assert "denied" in SCHEMA["$defs"]["StepCondition"]["properties"]
    # Documented fields carry their docstring, generated titles are gone.
    tool = SCHEMA["$defs"]["ScenarioTool"]["properties"]["clientSide"]
    assert "toolResult" in tool["description"]
    assert "title" not in tool


def test_the_example_script_is_valid_inline() -> None:
    script = yaml.safe_load(example_path("hello").read_text(encoding="utf-8"))
    assert _script_errors(script) == []
    assert VALIDATOR.is_valid({"harness": {"script": script}, "actions": [{"prompt": "hi"}]})


VALID_ACTIONS = [
    "Hello",
    {"text": "Hello", "id": "t1"},
    {"type": "text", "text": "Hello"},
    {"reasoning": "Thinking"},
    {"builtin": "bash", "id": "b", "input": {"command": "ls"}, "streamInput": True},
    {"builtin": "webSearch", "result": {"value": [], "isError": False}},
    {"hostTool": "deploy", "id": "dep-1", "input": {"env": "prod"}},
    {"type": "host-tool", "tool": "deploy"},
    {"mcp": "docs/search", "id": "s", "result": {"value": "ok"}},
    {"type": "mcp", "server": "docs", "tool": "search"},
    {"raw": {"anything": [1, 2]}},
    {"error": "boom", "endTurn": False},
    {"delay": 0.5},
    {"fileChange": [{"path": "a.md", "content": "x"}, {"path": "b.md", "delete": True}]},
    {"waitUserMessage": True},
    {"waitUserMessage": 3},
]

INVALID_ACTIONS = [
    {"hostTol": "deploy"},
    {"hostTool": "deploy", "bogus": 1},
    {"hostTool": ""},
    {"text": "a", "reasoning": "b"},
    {"mcp": "no-slash"},
    {"mcp": "docs/search", "text": "x"},
    {"tool": "deploy"},
    {"type": "host-tool"},
    {"delay": -1},
    {"fileChange": []},
    {"waitUserMessage": "soon"},
    3,
]


@pytest.mark.parametrize("action", VALID_ACTIONS)
def test_valid_actions_pass_both(action: Any) -> None:
    assert _loads(_one_action(action))
    assert _script_errors(_one_action(action)) == []


@pytest.mark.parametrize("action", INVALID_ACTIONS)
def test_invalid_actions_fail_both(action: Any) -> None:
    assert not _loads(_one_action(action))
    assert _script_errors(_one_action(action)) != []


@pytest.mark.parametrize(
    "when",
    [
        {"toolCallId": "dep-1", "denied": True},
        {"toolCallId": "dep-1", "isError": True, "denied": False},
        {"toolCallId": "dep-1", "outputMatches": "ok", "negate": True},
        {"userMessageMatches": "stop"},
    ],
)
def test_conditions_are_described(when: dict[str, Any]) -> None:
    script = {
        "turns": [{"steps": [{"actions": [{"hostTool": "d", "id": "dep-1"}]}, {"when": when}]}]
    }
    assert _loads(script)
    assert _script_errors(script) == []
    misspelt = {**when, "denyed": True}
    broken = {"turns": [{"steps": [{"when": misspelt}]}]}
    assert not _loads(broken)
    assert _script_errors(broken) != []


_KEYS = st.sampled_from(
    [
        *ACTION_SHORTHANDS,
        "mcp",
        "type",
        "tool",
        "server",
        "id",
        "input",
        "seconds",
        "timeout",
        "value",
        "changes",
        "streamInput",
        "result",
        "endTurn",
        "text",
        "bogus",
    ]
)
_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 5),
    st.floats(-1, 5, allow_nan=False),
    st.sampled_from(["hello", "", "docs/search", "host-tool", "text", "mcp", "bash", "x/"]),
    st.just([{"path": "a", "content": "b"}]),
    st.just({"command": "ls"}),
)


@settings(max_examples=300, deadline=None)
@given(st.one_of(_VALUES, st.dictionaries(_KEYS, _VALUES, max_size=4)))
def test_what_the_schema_accepts_the_loader_accepts(action: Any) -> None:
    # The schema may be stricter than the loader's lax coercions ("1" for a number), never
    # laxer: an inline script the editor calls valid loads.
    document = _one_action(action)
    if not _script_errors(document):
        assert _loads(document), action


def test_every_scenario_field_is_described() -> None:
    # The scenario's own models; script actions are described as a whole (their model
    # docstrings are prose).
    defs = SCHEMA["$defs"]
    scenario_defs = {
        name: definition
        for name, definition in defs.items()
        if name.startswith("Scenario")
        or name in ("GenerateOptions", "GeneratedScript", "Script")
        or (name.endswith("Action") and "type" not in definition.get("properties", {}))
    }
    assert {"PromptAction", "DenyAction", "ScenarioTool"} <= set(scenario_defs)
    undescribed = [
        f"{name}.{key}"
        for name, definition in [("(root)", SCHEMA), *scenario_defs.items()]
        for key, prop in definition.get("properties", {}).items()
        if "description" not in prop
    ]
    assert undescribed == []
