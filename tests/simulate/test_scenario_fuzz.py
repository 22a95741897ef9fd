"""The ``simulate`` entry point under hostile input: a scenario or a named error.

Random documents built from the scenario's own keys (so some get deep into validation),
deep nesting, huge integers and arbitrary text go through :func:`parse_scenario` and the
``simulate`` command; each ends in a :class:`ScenarioError` (exit status 2 with its
message) or a loaded scenario, never a traceback.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from harness_testkit._cli import cli
from harness_testkit.simulate import LoadedScenario, ScenarioError, parse_scenario

_KEYS = st.sampled_from(
    [
        "version",
        "name",
        "sessions",
        "concurrency",
        "seed",
        "agent",
        "tools",
        "harness",
        "profile",
        "script",
        "turns",
        "steps",
        "actions",
        "prompt",
        "approve",
        "promptMatches",
        "generate",
        "text",
    ]
)
_LEAVES = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-3, max_value=5)
    | st.integers(min_value=2**53, max_value=2**70)
    | st.floats(allow_nan=False)
    | st.sampled_from(["pi", "claude-code", "hi", "(a+)+$", "/dev/zero", "all"])
)
_DOCUMENTS = st.recursive(
    _LEAVES,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(_KEYS, children, max_size=5),
    max_leaves=20,
)
_TEXTS = st.one_of(
    _DOCUMENTS.map(json.dumps),
    st.integers(60, 3000).map(lambda depth: "a: " + "[" * depth + "]" * depth),
    st.text(max_size=120),
)


@pytest.mark.requirement("DECISION-008")
@given(_TEXTS)
def test_parse_scenario_returns_or_refuses_by_name(text: str) -> None:
    refused: str | None = None
    try:
        loaded = parse_scenario(text, source="fuzz.yaml")
    except ScenarioError as error:
        refused = str(error)
    if refused is not None:
        assert refused.startswith("fuzz.yaml")
    else:
        assert isinstance(loaded, LoadedScenario)


@pytest.mark.requirement("DECISION-008")
@settings(max_examples=15)
@given(_TEXTS)
def test_the_simulate_command_never_prints_a_traceback(text: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "s.yaml"
        path.write_text(text, encoding="utf-8")
        refused = False
        try:
            parse_scenario(text, source=str(path), base_dir=Path(folder))
        except ScenarioError:
            refused = True
        if refused:  # valid ones would run a simulation: covered elsewhere
            result = CliRunner().invoke(cli, ["simulate", str(path), "--quiet"])
            assert result.exit_code == 2, result.output
            assert f"invalid scenario {path}" in result.output
            assert "Traceback" not in result.output
