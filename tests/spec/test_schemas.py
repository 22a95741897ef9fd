"""The committed JSON Schemas are current and accept what the models produce."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings

from harness_testkit.conformance import lifecycle_states, stream_parts
from harness_testkit.spec import parse_lifecycle_state, parse_stream_part
from harness_testkit.spec._schemas import render_schemas

SCHEMA_DIR = Path(__file__).resolve().parents[2] / "spec" / "schemas"


def test_committed_schemas_are_not_stale() -> None:
    rendered = render_schemas()
    committed = {path.name for path in SCHEMA_DIR.glob("*.schema.json")}
    assert committed == set(rendered), "run: harness-testkit spec schema --out spec/schemas"
    for name, text in rendered.items():
        assert (SCHEMA_DIR / name).read_text(encoding="utf-8") == text, (
            f"spec/schemas/{name} is stale; run: harness-testkit spec schema --out spec/schemas"
        )


def _load(name: str) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((SCHEMA_DIR / name).read_text(encoding="utf-8"))
    return schema


@pytest.mark.requirement("STREAM-003")
@settings(max_examples=50)
@given(stream_parts())
def test_exported_stream_part_schema_accepts_model_output(wire: dict[str, Any]) -> None:
    schema = _load("stream-part.schema.json")
    jsonschema.validate(parse_stream_part(wire).to_wire(), schema)


@settings(max_examples=30)
@given(lifecycle_states("fake"))
def test_exported_lifecycle_schema_accepts_model_output(wire: dict[str, Any]) -> None:
    schema = _load("lifecycle-state.schema.json")
    jsonschema.validate(parse_lifecycle_state(wire).to_wire(), schema)
