"""``check --self`` passes again and again, under both backends (a bounded loop; more in
``scripts/stress_self.py``)."""

from __future__ import annotations

import os

import pytest

from harness_testkit.conformance import RunOptions, run_suite, self_test_targets
from harness_testkit.conformance._runner import Backend
from harness_testkit.conformance._verdict import verdict

#: The checks whose outcome depended on scheduling (time slices, suspensions).
RACY = ["scripted.time-slices", "scripted.continuations", "scripted.suspend-running-turn"]


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@pytest.mark.parametrize("seed", range(3))
def test_the_racy_checks_pass_repeatedly_on_every_profile(backend: Backend, seed: int) -> None:
    reports = [
        run_suite(target, RunOptions(profile="smoke", seed=seed, backend=backend), check_ids=RACY)
        for target in self_test_targets()
    ]
    judged = verdict(reports)
    assert judged.ok, judged.line


@pytest.mark.slow
@pytest.mark.skipif(
    not os.environ.get("HARNESS_TESTKIT_SLOW"),
    reason="minutes long: set HARNESS_TESTKIT_SLOW=1 (or run scripts/stress_self.py)",
)
@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@pytest.mark.parametrize("profile", ["smoke", "standard"])
def test_check_self_passes_at_every_profile(backend: Backend, profile: str) -> None:
    reports = [
        run_suite(target, RunOptions(profile=profile, backend=backend))
        for target in self_test_targets()
    ]
    judged = verdict(reports)
    assert judged.ok, judged.line
