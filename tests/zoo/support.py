"""Shared helpers of the zoo tests."""

from __future__ import annotations

import functools

from harness_testkit.conformance import AdapterTarget, RunOptions, run_suite, self_test_targets

SMOKE = RunOptions(profile="smoke")


def statuses(target: AdapterTarget) -> dict[str, tuple[str, str | None]]:
    """check id -> (status, failed requirement) of a smoke run of the whole suite."""
    report = run_suite(target, SMOKE)
    return {r.check_id: (r.status, r.failed_requirement) for r in report.results}


def reference_target(profile: str) -> AdapterTarget:
    """The unmutated fake harness in ``profile`` (``self:<profile>``)."""
    (target,) = [t for t in self_test_targets() if t.name == f"self:{profile}"]
    return target


@functools.cache
def reference_statuses(profile: str) -> dict[str, tuple[str, str | None]]:
    """:func:`statuses` of the unmutated fake in ``profile`` (run once per test session)."""
    return statuses(reference_target(profile))
