"""Bounded shrinking: a failing property check reports within its budget, with the
smallest scenario found so far and the unshrunk one kept in the replay bundle."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import strategies as st

from harness_testkit.conformance import (
    AdapterTarget,
    CheckContext,
    CheckFailed,
    RunOptions,
    run_check,
    self_test_targets,
)
from harness_testkit.conformance._checks import property_check
from harness_testkit.conformance._shrinking import ShrinkBudget, ShrinkingCut


def _minimal() -> AdapterTarget:
    (target,) = [t for t in self_test_targets() if t.name == "self:minimal"]
    return target


def _slow_failing_check(pause: float) -> Any:
    @property_check(
        "test.slow-shrink",
        title="fails on any list holding a number above 5, slowly",
        requirements=("ADAPTER-056",),
        scenarios=lambda ctx: st.lists(st.integers(0, 1000), min_size=30, max_size=60),
        tier="black-box",
        classes={"any list": lambda scenario: True},
    )
    async def slow(ctx: CheckContext, scenario: Any) -> None:
        await anyio.sleep(pause)  # an adapter that is slow on every turn
        if any(value > 5 for value in scenario):
            raise CheckFailed("ADAPTER-056", f"saw {max(scenario)}")

    return slow


def test_shrinking_is_cut_and_the_unshrunk_scenario_is_kept(tmp_path: Path) -> None:
    options = RunOptions(profile="smoke", shrink_seconds=0.3, bundle_dir=tmp_path)
    result = run_check(_slow_failing_check(0.02), _minimal(), options)
    assert result.status == "fail"
    assert result.failed_requirement == "ADAPTER-056"
    assert "shrinking stopped after 0.3 s" in result.message
    bundle = json.loads((tmp_path / "test.slow-shrink.replay.json").read_text())
    assert bundle["unshrunkScenario"], "the first failing scenario is kept"
    assert len(bundle["scenario"]) <= len(bundle["unshrunkScenario"])


def test_without_a_cut_the_scenario_shrinks_to_the_minimal_one(tmp_path: Path) -> None:
    options = RunOptions(profile="smoke", bundle_dir=tmp_path)
    result = run_check(_slow_failing_check(0.0), _minimal(), options)
    assert result.status == "fail"
    assert "shrinking stopped" not in result.message
    bundle = json.loads((tmp_path / "test.slow-shrink.replay.json").read_text())
    assert "unshrunkScenario" not in bundle
    assert sorted(bundle["scenario"]) == [0] * 29 + [6]


def test_the_budget_counts_from_the_first_failure() -> None:
    now = [0.0]
    budget = ShrinkBudget(10, clock=lambda: now[0])
    now[0] = 100.0
    budget.check()  # no failure yet: generation is not shrinking
    budget.failed(["big"], CheckFailed("ADAPTER-056", "x"))
    now[0] = 109.0
    budget.check()
    budget.failed(["small"], CheckFailed("ADAPTER-056", "y"))
    now[0] = 111.0
    with pytest.raises(ShrinkingCut):
        budget.check()
    error = budget.cut_error()
    assert isinstance(error, CheckFailed)
    assert error.scenario == ["small"]
    assert error.unshrunk_scenario == ["big"]
    assert CheckFailed("ADAPTER-056", "z").scenario is None  # declared: None until a run sets it
