"""Regexes in scenarios and scripts run on RE2: a result or a named error, never a hang.

Python's ``re`` needs about 2^n steps for ``(a+)+$`` on ``n`` ``a`` and a ``b``; with
n = 40 a run would not end in hours. These tests finish because the engine is linear: a
watchdog (a subprocess timeout, far above what a run needs) turns a hang into a failure
instead of a stuck CI job. Nothing is timed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from harness_testkit.common import pattern_search
from harness_testkit.fake_harness import Script
from harness_testkit.simulate import ScenarioError, load_scenario, parse_scenario

from .support import read_lines, write_scenario

CATASTROPHIC = "(a+)+$"
ADVERSARIAL = "a" * 40 + "b"

SCENARIO = f"""
    version: 1
    name: hostile
    harness:
      profile: pi
      script:
        turns:
          - promptMatches: '{CATASTROPHIC}'
            steps: [{{actions: [{{text: matched}}]}}]
          - steps:
              - actions: [{{text: fell through}}]
              - when: {{userMessageMatches: '(x+x+)+y'}}
                actions: [{{text: never}}]
        webSearch:
          - queryMatches: '(a|aa)+$'
            results: []
    actions:
      - prompt: {ADVERSARIAL}
"""


@pytest.mark.requirement("DECISION-009")
def test_a_catastrophic_prompt_matches_pattern_does_not_hang_simulate(tmp_path: Path) -> None:
    path = write_scenario(tmp_path, SCENARIO)
    out = tmp_path / "out"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "harness_testkit",
            "simulate",
            str(path),
            "--quiet",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,  # a watchdog, not a measurement: backtracking would need hours
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = read_lines(out / "sessions" / "sim-0-0.jsonl")
    texts = [
        line["part"]["text"]
        for line in lines
        if line["kind"] == "part" and line["part"]["type"] == "text-delta"
    ]
    # No match (the text ends with b): the catch-all turn ran.
    assert "".join(texts) == "fell through"
    assert json.loads((out / "summary.json").read_text())["status"] == "completed"


@pytest.mark.requirement("DECISION-009")
@pytest.mark.parametrize(
    ("pattern", "construct"),
    [(r"(a)\1", "invalid escape sequence"), ("(?=a)", "invalid perl operator"), ("(", "missing )")],
)
def test_a_pattern_rE2_cannot_run_is_a_scenario_error_naming_the_field(
    tmp_path: Path, pattern: str, construct: str
) -> None:
    text = SCENARIO.replace(CATASTROPHIC, pattern.replace("'", "''"))
    with pytest.raises(ScenarioError) as caught:
        load_scenario(write_scenario(tmp_path, text))
    message = str(caught.value)
    assert "harness.script.turns[0].promptMatches" in message
    assert "not a valid regular expression for RE2" in message
    assert construct in message


@pytest.mark.requirement("DECISION-009")
def test_a_pattern_too_large_for_the_engine_is_refused_by_name() -> None:
    with pytest.raises(ValidationError, match="pattern too large"):
        Script.model_validate({"turns": [{"promptMatches": "a" * 2_000_000, "steps": []}]})


# Patterns built from the constructs that make backtracking engines explode: nested and
# adjacent quantifiers over overlapping alternatives, plus ones RE2 refuses.
_ATOMS = st.sampled_from(["a", "aa", "a?", ".", "[ab]", r"\w", "(a|a)", "(a|aa)", r"\1", "(?=a)"])
_QUANTIFIERS = st.sampled_from(["", "*", "+", "?", "{1,5}", "*?"])


@st.composite
def _hostile_patterns(draw: st.DrawFn) -> str:
    def group(depth: int) -> str:
        parts = []
        for _ in range(draw(st.integers(1, 3))):
            if depth < 3 and draw(st.booleans()):
                parts.append(f"({group(depth + 1)}){draw(_QUANTIFIERS)}")
            else:
                parts.append(draw(_ATOMS) + draw(_QUANTIFIERS))
        return "".join(parts)

    return group(0) + draw(st.sampled_from(["", "$", "b", "c$"]))


@pytest.mark.requirement("DECISION-009")
@given(_hostile_patterns(), st.integers(0, 60), st.sampled_from(["b", "c", "!", ""]))
def test_any_hostile_pattern_gives_a_result_or_a_named_error(
    pattern: str, length: int, tail: str
) -> None:
    document = {
        "version": 1,
        "name": "fuzz",
        "harness": {
            "profile": "pi",
            "script": {
                "turns": [
                    {"promptMatches": pattern, "steps": [{"actions": [{"text": "m"}]}]},
                    {"steps": [{"actions": [{"text": "n"}]}]},
                ]
            },
        },
        "actions": [{"prompt": "a" * length + tail}],
    }
    refused: str | None = None
    try:
        loaded = parse_scenario(json.dumps(document), json_only=True)
    except ScenarioError as error:
        refused = str(error)
    if refused is not None:
        assert "not a valid regular expression for RE2" in refused
        return
    script = loaded.script_for(0, 0)
    assert isinstance(pattern_search(pattern, "a" * length + tail), bool)
    assert script.turns[0].prompt_matches == pattern
