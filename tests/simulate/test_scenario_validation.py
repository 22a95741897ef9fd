"""Scenario files are YAML 1.2 and fully checked against their profile before anything runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from harness_testkit._cli import cli
from harness_testkit.fake_harness import Script, TextAction
from harness_testkit.simulate import ScenarioError, load_scenario
from tests.narrowing import of_type

from .support import write_scenario

SCENARIO = """
version: 1
agent:
  tools:
    ask:
      description: Ask the user.
      output: yes
harness:
  profile: claude-code
  script:
    turns:
      - steps:
          - actions:
              - text: "Checking."
              - builtin: {builtin}
                id: look
                input: {{command: ls}}
          - when: {{toolCallId: {when}, isError: false}}
            actions:
              - text: done
actions:
  - prompt: hi
"""


def _scenario(tmp_path: Path, builtin: str = "bash", when: str = "look") -> Path:
    return write_scenario(tmp_path, SCENARIO.format(builtin=builtin, when=when))


def test_yaml_1_2_keeps_yes_a_string(tmp_path: Path) -> None:
    loaded = load_scenario(_scenario(tmp_path))
    assert loaded.scenario.agent.tools["ask"].output == "yes"
    script = Script.from_yaml("turns: [{steps: [{actions: [{text: yes}]}]}]")
    assert of_type(TextAction, script.turns[0].steps[0].actions[0]).text == "yes"


def test_an_unknown_builtin_is_reported_with_its_line(tmp_path: Path) -> None:
    path = _scenario(tmp_path, builtin="bsh")
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    message = str(caught.value)
    assert f"{path}:14: harness.script.turns[0].steps[0].actions[1]: 'bsh' is not a built-in" in (
        message
    )
    assert "of profile 'claude-code'; known: " in message


def test_a_dangling_tool_call_id_is_reported_with_its_line(tmp_path: Path) -> None:
    path = _scenario(tmp_path, when="lok")
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    assert (
        f"{path}:17: harness.script.turns[0].steps[1].when.toolCallId: 'lok' names no call "
        "of an earlier step of turn 0 (calls with an id there: look)"
    ) in str(caught.value)


def test_a_script_file_is_checked_with_its_own_lines(tmp_path: Path) -> None:
    (tmp_path / "script.yaml").write_text(
        "turns:\n  - steps:\n      - actions:\n          - builtin: bsh\n"
    )
    path = write_scenario(
        tmp_path,
        "version: 1\nharness:\n  profile: codex\n  script: script.yaml\nactions:\n  - prompt: hi\n",
    )
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    message = str(caught.value)
    assert f"{path}:4: harness.script: {tmp_path / 'script.yaml'}:4: " in message
    assert "'bsh' is not a built-in of profile 'codex'" in message


def test_the_cli_refuses_before_running_anything(tmp_path: Path) -> None:
    path = _scenario(tmp_path, builtin="bsh")
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["simulate", str(path), "--out", str(out)])
    assert result.exit_code == 2
    assert "'bsh' is not a built-in" in result.stderr
    assert not out.exists()
