"""Scenario files: the shipped examples, the JSON Schema, and errors that name the problem."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from harness_testkit.simulate._loading import (
    builtin_scenario_path,
    builtin_scenarios,
    load_scenario,
    parse_scenario,
)
from harness_testkit.simulate._scenario import (
    ApproveAction,
    PromptAction,
    ScenarioError,
    render_json_schema,
    scenario_json_schema,
)

from .support import write_scenario

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "simulate" / "examples" / "scenario.schema.json"


def test_the_shipped_examples_are_listed_and_valid() -> None:
    names = builtin_scenarios()
    assert {"quickstart", "cross-process", "many-sessions"} <= set(names)
    for name in names:
        loaded = load_scenario(builtin_scenario_path(name))
        assert loaded.name == name
        assert len(loaded.digest) == 16


def test_the_committed_schema_is_fresh() -> None:
    assert SCHEMA_FILE.read_text(encoding="utf-8") == render_json_schema(), (
        "simulate/examples/scenario.schema.json is stale; regenerate it with "
        "python -c 'from harness_testkit.simulate._scenario import render_json_schema; "
        'print(render_json_schema(), end="")\' > simulate/examples/scenario.schema.json'
    )


@pytest.mark.parametrize("name", ["quickstart", "cross-process", "many-sessions"])
def test_the_schema_accepts_the_examples_as_written(name: str) -> None:
    schema = scenario_json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    document = yaml.safe_load(builtin_scenario_path(name).read_text(encoding="utf-8"))
    errors = [
        error.message for error in jsonschema.Draft202012Validator(schema).iter_errors(document)
    ]
    assert errors == []


def test_the_schema_rejects_what_the_loader_rejects() -> None:
    validator = jsonschema.Draft202012Validator(scenario_json_schema())
    assert not validator.is_valid({"actions": [{"prompt": "a", "approve": "b"}]})
    assert not validator.is_valid({"actions": [{"prmpt": "a"}]})
    assert not validator.is_valid({"actions": []})
    assert not validator.is_valid({"actions": [{"prompt": "a"}], "sandbox": "vm"})


def test_actions_parse_in_either_spelling() -> None:
    loaded = parse_scenario(
        """
        actions:
          - prompt: Hello
            suspend_after_steps: 3
          - approve: [weather, bash]
            reason: fine
        agent:
          tools:
            weather: {output: 1}
          tool_approval: {weather: user-approval}
        """.replace("\n        ", "\n")
    )
    first, second = loaded.scenario.actions
    assert isinstance(first, PromptAction)
    assert first.suspend_after_steps == 3
    assert isinstance(second, ApproveAction)
    assert second.approve == ["weather", "bash"]
    assert first.to_wire() == {"prompt": "Hello", "suspendAfterSteps": 3}


BAD_SCENARIOS = [
    pytest.param(
        "actions:\n  - prompt: hi\n  - approve: weathr\n",
        "actions[1].approve",
        "'weathr' names neither a host tool nor a built-in",
        3,
        id="unknown-approval-tool",
    ),
    pytest.param(
        "actions:\n  - prompt: hi\n  - {prompt: a, deny: b}\n",
        "actions[1]",
        "exactly one of the keys prompt, approve",
        3,
        id="two-action-keys",
    ),
    pytest.param(
        "actions:\n  - prompt: hi\n    suspendAfter: 3\n",
        "actions[0].suspendAfter",
        "Extra inputs are not permitted",
        3,
        id="misspelt-action-option",
    ),
    pytest.param(
        "actions: []\n",
        "actions",
        "at least 1 item",
        1,
        id="no-actions",
    ),
    pytest.param(
        "harness:\n  profile: claude-cod\nactions: [{prompt: hi}]\n",
        "harness.profile",
        "no fake harness profile named 'claude-cod'",
        2,
        id="unknown-profile",
    ),
    pytest.param(
        "harness:\n  profileOverrides: {emitsFileChanges: true}\nactions: [{prompt: hi}]\n",
        "harness.profileOverrides",
        "unknown profile field(s) emits_file_changes",
        2,
        id="unknown-profile-override",
    ),
    pytest.param(
        "agent:\n  tools:\n    weather: {output: 1, error: down}\nactions: [{prompt: hi}]\n",
        "agent.tools.weather",
        "either `output` or `error`",
        3,
        id="output-and-error",
    ),
    pytest.param(
        "agent:\n  tools:\n    weather: {output: 1}\nactions:\n  - prompt: hi\n  - toolResult: weather\n",
        "actions[1].toolResult",
        "'weather' is not a client-side tool",
        6,
        id="tool-result-for-executed-tool",
    ),
    pytest.param(
        "agent:\n  tools:\n    weather: {inputSchema: {type: objekt}}\nactions: [{prompt: hi}]\n",
        "agent.tools.weather.inputSchema",
        "not a valid JSON Schema",
        3,
        id="bad-input-schema",
    ),
    pytest.param(
        "agent:\n  toolApproval: {weather: user-approval}\nactions: [{prompt: hi}]\n",
        "agent.toolApproval.weather",
        "not a host tool of this scenario",
        2,
        id="approval-for-unknown-tool",
    ),
    pytest.param(
        "agent:\n  activeTools: [read, nope]\nactions: [{prompt: hi}]\n",
        "agent.activeTools",
        "nope",
        2,
        id="active-tool-unknown",
    ),
    pytest.param(
        "agent:\n  permissionMode: allow-reads\nharness: {profile: codex}\nactions: [{prompt: hi}]\n",
        "agent.permissionMode",
        "does not support built-in tool approval requests",
        2,
        id="permission-mode-unsupported",
    ),
    pytest.param(
        "harness:\n  script: missing.yaml\nactions: [{prompt: hi}]\n",
        "harness.script",
        "cannot read the script file 'missing.yaml'",
        2,
        id="missing-script-file",
    ),
    pytest.param(
        "harness:\n  script: {turns: [{steps: [{actions: [{builtin: ''}]}]}]}\nactions: [{prompt: hi}]\n",
        "harness.script.turns[0].steps[0].actions[0].builtin.tool",
        "at least 1 character",
        2,
        id="inline-script-error",
    ),
    pytest.param(
        "agent:\n  tools: {deploy: {output: 1}}\nharness:\n  script:\n    turns:\n"
        "      - steps:\n          - actions:\n              - text: hi\n"
        "              - hostTool: deplyo\n                id: d1\nactions: [{prompt: hi}]\n",
        "harness.script.turns[0].steps[0].actions[1]",
        "host tool 'deplyo' is not declared under agent.tools (declared: deploy)",
        9,
        id="undeclared-host-tool",
    ),
    pytest.param(
        "harness:\n  profile: claude-code\n  script:\n    turns:\n      - steps: []\n"
        "        onUserMessage:\n          - actions: [{hostTool: ask}]\nactions: [{prompt: hi}]\n",
        "harness.script.turns[0].onUserMessage[0].actions[0]",
        "host tool 'ask' is not declared under agent.tools (declared: none)",
        7,
        id="undeclared-host-tool-on-user-message",
    ),
    pytest.param(
        "agent:\n  tools: {lookup: {output: 1}}\nharness:\n  script:\n    generate:\n"
        "      hostTools:\n        - lookup\n        - lokup\nactions: [{prompt: hi}]\n",
        "harness.script.generate.hostTools[1]",
        "host tool 'lokup' is not declared",
        8,
        id="undeclared-generated-host-tool",
    ),
    pytest.param(
        "actions:\n  - prompt: hi\n   - prompt: bad indent\n",
        "(document)",
        "invalid YAML",
        3,
        id="yaml-syntax",
    ),
    pytest.param(
        "- just\n- a list\n", "(document)", "a mapping of settings", 1, id="not-a-mapping"
    ),
]


@pytest.mark.parametrize(("text", "path", "problem", "line"), BAD_SCENARIOS)
def test_errors_name_the_file_the_path_and_the_problem(
    tmp_path: Path, text: str, path: str, problem: str, line: int
) -> None:
    file = write_scenario(tmp_path, text, "bad.yaml")
    with pytest.raises(ScenarioError) as caught:
        load_scenario(file)
    issues = {issue.path: issue for issue in caught.value.issues}
    assert path in issues, str(caught.value)
    assert problem in issues[path].problem
    assert issues[path].line == line
    assert str(caught.value).startswith(f"{file}:")
    assert f": {path}: " in str(caught.value)


def test_an_error_inside_a_referenced_script_names_that_file(tmp_path: Path) -> None:
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "s.yaml").write_text("turns:\n  - steps: [{actions: [{delay: -1}]}]\n")
    file = write_scenario(tmp_path, "harness: {script: scripts/s.yaml}\nactions: [{prompt: hi}]\n")
    with pytest.raises(ScenarioError) as caught:
        load_scenario(file)
    (issue,) = caught.value.issues
    assert issue.path == "harness.script"
    assert "scripts/s.yaml" in issue.problem
    assert "turns[0].steps[0].actions[0]" in issue.problem


@pytest.mark.requirement("DECISION-018")
def test_an_undeclared_host_tool_in_a_script_file_names_both_lines(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(
        "turns:\n  - steps:\n      - actions:\n          - hostTool: deploy\n"
    )
    file = write_scenario(tmp_path, "harness:\n  script: s.yaml\nactions: [{prompt: hi}]\n")
    with pytest.raises(ScenarioError) as caught:
        load_scenario(file)
    (issue,) = caught.value.issues
    assert (issue.path, issue.line) == ("harness.script", 2)
    assert issue.problem.startswith(f"{tmp_path / 's.yaml'}:4: turns[0].steps[0].actions[0]: ")
    assert "host tool 'deploy' is not declared" in issue.problem


def test_a_script_path_is_relative_to_the_scenario(tmp_path: Path) -> None:
    (tmp_path / "s.json").write_text(json.dumps({"turns": [{"steps": [{"actions": ["Hi"]}]}]}))
    loaded = load_scenario(
        write_scenario(tmp_path, "harness: {script: s.json}\nactions: [{prompt: a}]\n")
    )
    assert loaded.script is not None
    assert len(loaded.script.turns) == 1


def test_json_scenarios_report_json_errors_with_lines(tmp_path: Path) -> None:
    file = tmp_path / "bad.json"
    file.write_text('{\n  "actions": [\n    {"prompt": "a"},\n  ]\n}\n')
    with pytest.raises(ScenarioError) as caught:
        load_scenario(file)
    (issue,) = caught.value.issues
    assert issue.path == "(document)"
    assert "invalid JSON" in issue.problem
    assert issue.line == 4


def test_an_unreadable_file_is_a_scenario_error(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="cannot read the file"):
        load_scenario(tmp_path / "nope.yaml")


def test_an_unknown_builtin_lists_the_shipped_ones() -> None:
    with pytest.raises(ScenarioError, match="quickstart"):
        builtin_scenario_path("nope")
