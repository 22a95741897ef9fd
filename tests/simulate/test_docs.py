"""docs/simulation.md: it names every field of the language, and its denial example runs."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from harness_testkit.simulate._loading import load_scenario
from harness_testkit.simulate._runner import SimulationOptions, simulate
from harness_testkit.simulate._scenario import scenario_json_schema

from .support import read_lines

PAGE = Path(__file__).resolve().parents[2] / "docs" / "simulation.md"


def _section(text: str, heading: str) -> str:
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else None]


def _fields(schema: dict[str, Any]) -> set[str]:
    keys = set(schema["properties"])
    for definition in schema["$defs"].values():
        properties = definition.get("properties", {})
        keys |= set(properties)
        for alternative in properties.get("actions", {}).get("items", {}).get("anyOf", []):
            keys |= set(alternative.get("properties", {}))
    return keys


def test_the_page_names_every_field_of_the_schema() -> None:
    text = re.sub(r"```.*?```", "", PAGE.read_text(encoding="utf-8"), flags=re.S)
    # Words inside `code` spans outside examples: where the page names keys.
    named = {word for span in re.findall(r"`([^`]+)`", text) for word in re.findall(r"\w+", span)}
    assert sorted(_fields(scenario_json_schema()) - named) == []


@pytest.mark.requirement("DECISION-018")
@pytest.mark.anyio
async def test_the_denial_example_does_what_the_page_says(tmp_path: Path) -> None:
    section = _section(PAGE.read_text(encoding="utf-8"), "Branching on a denied tool")
    scenario = re.search(r"```yaml\n(.*?)```", section, re.S)
    shown = re.search(r'^\s*(\{"kind":"denial".*\})$', section, re.M)
    assert scenario is not None
    assert shown is not None
    file = tmp_path / "deploy.yaml"
    file.write_text(scenario.group(1), encoding="utf-8")
    options = SimulationOptions(out_dir=tmp_path / "out", sandbox_root=tmp_path / "sb")
    summary = await simulate(load_scenario(file), options)
    lines = read_lines(tmp_path / "out" / "sessions" / "sim-0-0.jsonl")
    text = "".join(
        line["part"]["text"]
        for line in lines
        if line["kind"] == "part" and line["part"]["type"] == "text-delta"
    )
    assert text == "Not deployed, as you asked."
    assert [line for line in lines if line["kind"] == "denial"] == [json.loads(shown.group(1))]
    assert summary.to_wire()["totals"]["denials"] == 1
