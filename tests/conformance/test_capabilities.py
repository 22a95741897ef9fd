"""Capability declarations: files, their schema, inference from the adapter, mismatches."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from harness_testkit._cli import cli
from harness_testkit._schemas import render_user_schemas
from harness_testkit.conformance import AdapterCapabilities, load_target
from harness_testkit.conformance._capabilities import (
    is_scriptable,
    resolve_capabilities,
    shipped_capabilities_schema,
)
from harness_testkit.fake_harness import FakeHarness

ROOT = Path(__file__).resolve().parents[2]


def test_a_yaml_file_is_read_as_yaml_1_2(tmp_path: Path) -> None:
    path = tmp_path / "caps.yaml"
    path.write_text(
        "# yaml-language-server: $schema=capabilities.schema.json\n"
        "resume: true\ncontinuation: lossy\nprompts:\n  - yes\n  - 'Say hi.'\n"
    )
    caps = AdapterCapabilities.from_file(path)
    assert caps.resume is True
    assert caps.continuation == "lossy"
    # YAML 1.1 would have made the first prompt `True`.
    assert caps.prompts == ("yes", "Say hi.")
    assert caps.model_fields_set == {"resume", "continuation", "prompts"}


def test_a_json_file_with_its_schema_key(tmp_path: Path) -> None:
    path = tmp_path / "caps.json"
    path.write_text(json.dumps({"$schema": "capabilities.schema.json", "steering": True}))
    assert AdapterCapabilities.from_file(path) == AdapterCapabilities(steering=True)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("resume: [true\n", "caps.yaml:2: invalid YAML"),
        ("- resume\n", "a capability file is a mapping"),
        ("resume: yes\n", "resume: Input should be a valid boolean"),
        ("stearing: true\n", "stearing: Extra inputs are not permitted"),
        ("turn_timeout: 0\n", "turn_timeout: Input should be greater than 0"),
    ],
)
def test_bad_files_name_the_file_and_the_problem(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "caps.yaml"
    path.write_text(text)
    with pytest.raises(ValueError, match=r"caps\.yaml") as caught:
        AdapterCapabilities.from_file(path)
    assert message in str(caught.value)
    with pytest.raises(ValueError, match="cannot read capability file"):
        AdapterCapabilities.from_file(tmp_path / "missing.yaml")


def test_the_shipped_schemas_are_fresh_and_validate_files(tmp_path: Path) -> None:
    rendered = render_user_schemas()
    hint = "regenerate with: harness-testkit schemas --out DIR (then copy the file)"
    assert shipped_capabilities_schema().read_text() == rendered["capabilities.schema.json"], hint
    scenario_schema = ROOT / "simulate" / "examples" / "scenario.schema.json"
    assert scenario_schema.read_text() == rendered["scenario.schema.json"], hint
    result = CliRunner().invoke(cli, ["schemas", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    schema = json.loads((tmp_path / "capabilities.schema.json").read_text())
    validator = jsonschema.Draft202012Validator(schema)
    assert not list(validator.iter_errors({"$schema": "x", "resume": True, "prompts": ["hi"]}))
    assert list(validator.iter_errors({"resume": "yes"}))
    assert list(validator.iter_errors({"unknown": 1}))


def test_undeclared_capabilities_are_inferred_from_the_adapter() -> None:
    resolution = resolve_capabilities(
        lambda: FakeHarness(profile="claude-code"), None, origin="none"
    )
    caps = resolution.capabilities
    assert (caps.builtin_tool_approvals, caps.builtin_tool_filtering, caps.scripting) == (
        True,
        True,
        True,
    )
    assert resolution.source_of("scripting") == "inferred"
    assert resolution.source_of("resume") == "default"
    assert "read" in resolution.builtins
    assert not resolution.mismatches
    assert caps.model_fields_set == set()
    lines = resolution.describe()
    assert lines[0] == "capabilities (declaration: none):"
    assert "  builtin_tool_approvals = true (inferred)" in lines


def test_a_declaration_that_contradicts_the_adapter_is_a_mismatch() -> None:
    resolution = resolve_capabilities(
        lambda: FakeHarness(profile="codex"),
        {"builtin_tool_approvals": True, "scripting": False},
        origin="caps.yaml",
    )
    # Declared values win (the capability-flags check fails on them) and are reported.
    assert resolution.capabilities.builtin_tool_approvals is True
    assert resolution.mismatches == [
        "`builtin_tool_approvals` is declared true but the adapter shows false"
    ]
    # Declaring `scripting: false` for a scriptable adapter only opts out: no mismatch.
    assert resolution.capabilities.scripting is False
    report = resolution.to_json()
    assert report["sources"]["builtin_tool_approvals"] == "declared"
    assert report["mismatches"] == resolution.mismatches


def test_a_factory_that_raises_is_reported_not_hidden() -> None:
    def broken() -> FakeHarness:
        raise RuntimeError("no binary")

    resolution = resolve_capabilities(broken, {"resume": True}, origin="test")
    assert resolution.capabilities == AdapterCapabilities(resume=True)
    assert resolution.problem == "the factory raised RuntimeError: no binary"


def test_scriptable_means_the_scripting_extension() -> None:
    assert is_scriptable(FakeHarness())
    assert not is_scriptable(object())


def test_load_target_infers_what_the_factory_does_not_declare() -> None:
    target = load_target("harness_testkit.fake_harness:FakeHarness")
    assert target.capabilities.scripting is True
    assert target.capabilities.builtin_tool_approvals is True


def test_reports_open_with_the_effective_capabilities(tmp_path: Path) -> None:
    from harness_testkit.conformance import RunOptions, run_suite

    caps = tmp_path / "caps.yaml"
    caps.write_text("resume: true\nbuiltin_tool_approvals: false\n")
    target = load_target(
        "harness_testkit.fake_harness:FakeHarness", AdapterCapabilities.from_file(caps)
    )
    report = run_suite(target, RunOptions(profile="smoke"), check_ids=["adapter.surface"])
    block = json.loads(report.to_json())["capabilities"]
    assert block["sources"]["resume"] == "declared"
    assert block["sources"]["scripting"] == "inferred"
    assert block["mismatches"] == [
        "`builtin_tool_approvals` is declared false but the adapter shows true"
    ]
    markdown = report.to_markdown()
    assert (
        "- capabilities (declared fields, the rest inferred): builtin_tool_approvals=false"
        in (markdown.split("## By area and level")[0])
    )
    assert "- capability MISMATCH: `builtin_tool_approvals`" in markdown
