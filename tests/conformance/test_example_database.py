"""Failures found by a property check are kept and replayed first by the next run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import settings
from hypothesis import strategies as st

from harness_testkit.conformance import (
    AdapterTarget,
    Check,
    CheckContext,
    CheckFailed,
    RunOptions,
    run_check,
)
from harness_testkit.conformance._hypothesis import profile_name
from harness_testkit.fake_harness import FakeHarness


def _check(seen: list[int]) -> Check:
    async def run_scenario(ctx: CheckContext, scenario: Any) -> None:
        seen.append(scenario)
        if scenario >= 500:
            raise CheckFailed("ADAPTER-001", f"scenario {scenario} is too large")

    return Check(
        id="demo.database",
        title="a property that fails from 500 on",
        requirements=("ADAPTER-001",),
        tier="black-box",
        run_scenario=run_scenario,
        scenarios=lambda ctx: st.integers(0, 1000),
    )


def test_a_failure_is_replayed_first_by_the_next_run(tmp_path: Path) -> None:
    target = AdapterTarget(factory=FakeHarness, name="demo:adapter")
    database = tmp_path / "hypothesis"
    first: list[int] = []
    result = run_check(
        _check(first), target, RunOptions(profile="standard", seed=0, example_database=database)
    )
    assert result.status == "fail"
    assert "scenario 500 is too large" in result.message  # shrunk to the boundary
    assert any(database.iterdir())
    again: list[int] = []
    result = run_check(
        _check(again), target, RunOptions(profile="standard", seed=7, example_database=database)
    )
    assert result.status == "fail"
    assert again[0] == 500  # the stored failure ran before anything was generated
    # Another adapter has its own entries: nothing is replayed for it.
    other: list[int] = []
    run_check(
        _check(other),
        AdapterTarget(factory=FakeHarness, name="other:adapter"),
        RunOptions(profile="smoke", seed=7, example_database=database),
    )
    assert other[0] != 500


def test_the_conformance_profiles_are_registered_by_name() -> None:
    for name, examples in (("smoke", 5), ("standard", 25), ("exhaustive", 200)):
        assert settings.get_profile(profile_name(name)).max_examples == examples
