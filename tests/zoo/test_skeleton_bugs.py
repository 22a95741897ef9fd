"""Planted bugs in the `new-adapter` skeleton die by their own requirement (issue 38).

Each zoo entry of ``_skeleton_bugs`` writes the skeleton, plants one bug and runs the
tiers it names: the gate must fail, naming the entry's requirement (and, where a check
can show the bug, exactly that check fails on it).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness_testkit.conformance import RunOptions, run_suite
from harness_testkit.conformance._verdict import Gate, verdict
from harness_testkit.conformance._zoo._skeleton_bugs import (
    SKELETON_BUGS,
    SkeletonBug,
    planted_baseline,
    planted_target,
)

SMOKE = RunOptions(profile="smoke")


def test_the_unplanted_skeleton_passes_the_gate_with_every_tier_required(tmp_path: Path) -> None:
    # The skeleton offers the whole surface: every MUST of both tiers is verified, so
    # even --require-tier scripted (declarations do not excuse a required tier) passes.
    report = run_suite(planted_target(None, tmp_path / "p"), SMOKE)
    gate = Gate.load_baseline(planted_baseline(tmp_path / "p"), require_tier="scripted")
    assert gate.baseline == frozenset()
    judged = verdict([report], gate)
    assert judged.ok, judged.line
    assert judged.line.startswith("PASS: all "), judged.line
    assert not [r.check_id for r in report.results if r.status in ("skip", "error", "blocked")]


@pytest.mark.parametrize("bug", SKELETON_BUGS, ids=lambda bug: bug.name)
def test_a_planted_bug_dies_by_its_own_requirement(tmp_path: Path, bug: SkeletonBug) -> None:
    report = run_suite(
        planted_target(bug, tmp_path / "p"), SMOKE, tiers=bug.tiers, check_ids=bug.checks
    )
    judged = verdict([report], Gate.load_baseline(planted_baseline(tmp_path / "p")))
    assert not judged.ok, judged.line
    failed = {r.check_id: r.failed_requirement for r in report.results if r.status == "fail"}
    if bug.check is not None:
        assert failed == {bug.check: bug.requirement}
        assert bug.check in judged.line or "MUST fail" in judged.line
    else:
        assert failed == {}
        assert any(bug.requirement in detail for detail in judged.details), judged.details
    assert not [r.check_id for r in report.results if r.status == "error"]
