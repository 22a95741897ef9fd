"""The reference agent against the official one: every scenario's lines must match.

``oracle/expected/<name>.jsonl`` holds what the official ``@ai-sdk/harness`` 1.0.122
``HarnessAgent`` printed for ``oracle/scenarios/<name>.json`` (``.ci/oracle`` reruns it);
the Python twin runs the same scenario on ``harness_testkit.reference``. Where the project
decides differently on purpose, the scenario declares the diff beside it
(``declaredDiffs``: a decision id from ``spec/requirements.yaml`` and the exact Python
lines that replace the official ones: one line, or a list of lines, per official line)
and the test fails if the divergence disappears or changes. Divergences not fixed yet are listed in ``open_divergences.yaml`` with a reason;
their tests are strict xfails, so fixing one makes its entry fail until it is removed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from harness_testkit.spec import load_requirements

from .twin import EXPECTED, Normaliser, load_scenario, scenario_names, twin_lines

HERE = Path(__file__).resolve().parent
NAMES = scenario_names()
OPEN: dict[str, str] = yaml.safe_load((HERE / "open_divergences.yaml").read_text()) or {}


def _decisions() -> set[str]:
    return {req.id for req in load_requirements().requirements if req.decision}


def expected_lines(name: str) -> tuple[list[str], list[dict[str, Any]]]:
    """The official lines of ``name`` with its declared diffs applied, and the diffs."""
    official = (EXPECTED / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    diffs: list[dict[str, Any]] = load_scenario(name).get("declaredDiffs", [])
    # Each official line is replaced by the declared Python line, or by a list of Python
    # lines (a decided behaviour that prints more or fewer lines, e.g. a pause instead of
    # a hang); indices always refer to the official output.
    replaced: list[list[str]] = [[line] for line in official]
    for diff in diffs:
        for index, python in diff["lines"].items():
            position = int(index)
            python_lines = python if isinstance(python, list) else [python]
            assert python_lines != [official[position]], (
                f"{name}: declared diff at line {position} equals the official line"
            )
            replaced[position] = python_lines
    return [line for group in replaced for line in group], diffs


def _param(name: str) -> Any:
    if name in OPEN:
        return pytest.param(
            name,
            marks=pytest.mark.xfail(strict=True, reason=f"open divergence: {OPEN[name]}"),
        )
    return name


def test_every_generated_id_is_numbered_even_when_it_reads_like_a_word() -> None:
    # "oiGvxtoWwicQbpff" was a real id the agent minted; a camelCase pattern kept it and
    # the scenario failed (about one random id in a thousand reads like that).
    norm = Normaliser()
    assert norm.text("oiGvxtoWwicQbpff-0 providerExecuted") == "<id1>-0 providerExecuted"
    assert norm.text("x 2024-01-01T00:00:00.000Z oiGvxtoWwicQbpff") == "x <ts> <id1>"


def test_oracle_inventory(capsys: pytest.CaptureFixture[str]) -> None:
    """Every scenario has a committed official output and declared diffs name decisions."""
    committed = sorted(path.stem for path in EXPECTED.glob("*.jsonl"))
    assert committed == NAMES
    decisions = _decisions()
    declared = 0
    for name in NAMES:
        for diff in load_scenario(name).get("declaredDiffs", []):
            assert diff["decision"] in decisions, f"{name}: {diff['decision']} is no decision"
            declared += 1
    assert set(OPEN) <= set(NAMES), sorted(set(OPEN) - set(NAMES))
    with capsys.disabled():
        print(
            f"\noracle: {len(NAMES)} scenarios, {declared} declared decision diffs, "
            f"{len(OPEN)} open divergences"
        )


@pytest.mark.parametrize("name", [_param(name) for name in NAMES])
def test_reference_matches_official(name: str, anyio_backend: str) -> None:
    """The reference agent prints the official lines (declared decision diffs applied)."""
    expected, _ = expected_lines(name)
    got = twin_lines(name, backend=anyio_backend)
    differing = next(
        (
            f"line {i + 1}:\n  python:   {a}\n  official: {b}"
            for i, (a, b) in enumerate(zip(got, expected, strict=False))
            if a != b
        ),
        f"{len(got)} lines vs {len(expected)}",
    )
    assert got == expected, differing


@pytest.mark.requirement("APPROVAL-041")
@pytest.mark.parametrize("name", ["client-tool-continue", "suspend-client-pause-resume"])
def test_parts_emitted_during_a_pause_are_kept(name: str, anyio_backend: str) -> None:
    """The finish-step the adapter emits while the turn is paused is the continuation's
    swallowed one (the text step is recorded), and a suspension carries it as
    ``bufferedParts``: the declared APPROVAL-041 lines, not upstream's."""
    expected, diffs = expected_lines(name)
    assert [diff["decision"] for diff in diffs] == ["APPROVAL-041"]
    assert twin_lines(name, backend=anyio_backend) == expected
