"""Bounded time: a mutant that hangs is judged by its checks' reports, not by a long wait.

A hung turn used to cost the reference agent's default abort grace (10 s) on top of the
declared turn timeout, once per turn: the mutant that hangs without honouring abort took
minutes, far below the 900 s per-check cap that never cut it. Now a check's agent waits
no longer than the declared turn timeout, a turn that does not settle is an ADAPTER-044
failure (not an error of the check), and the zoo runs every check under
``ZOO_CHECK_TIMEOUT`` (two minutes): over it, the check fails with ADAPTER-044 and the run
goes on. The assertions are on statuses and requirements; the caps bound the time.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness_testkit.conformance import (
    PROFILES,
    REGISTRY,
    CheckContext,
    RunOptions,
    run_check,
    run_suite,
)
from harness_testkit.conformance._context import ABORT_GRACE
from harness_testkit.conformance._zoo._catalog import get_mutant
from harness_testkit.conformance._zoo._selftest import ZOO_CHECK_TIMEOUT, judge, zoo_options

#: The zoo's slowest mutant: every turn stalls before `finish` and abort never reaches
#: the runtime.
SLOWEST = "hangs-without-timeout"


def test_the_zoo_caps_every_check_at_two_minutes() -> None:
    assert ZOO_CHECK_TIMEOUT <= 120
    assert zoo_options(RunOptions()).check_timeout == ZOO_CHECK_TIMEOUT
    smaller = RunOptions(check_timeout=5)
    assert zoo_options(smaller) is smaller


def test_a_checks_agent_waits_for_an_aborted_turn_no_longer_than_a_turn(tmp_path: Path) -> None:
    mutant = get_mutant(SLOWEST)
    context = CheckContext(
        mutant.target, profile=PROFILES["smoke"], seed=0, sandbox="local", workdir=tmp_path
    )
    assert context.agent().abort_grace == mutant.capabilities.turn_timeout < ABORT_GRACE
    assert context.agent(abort_grace=2.0).abort_grace == 2.0  # a check may ask for more


def test_a_cap_hit_in_a_property_check_is_an_adapter_044_failure() -> None:
    # The slowest check of the slowest mutant (a stateful property check), cut at 1 s.
    result = run_check(
        REGISTRY["scripted.approval-machine"],
        get_mutant(SLOWEST).target,
        RunOptions(profile="smoke", check_timeout=1),
    )
    assert (result.status, result.failed_requirement) == ("fail", "ADAPTER-044")
    assert "wall-time cap of 1 s" in result.message


def test_a_turn_that_never_settles_fails_adapter_044_instead_of_erroring() -> None:
    result = run_check(
        REGISTRY["lifecycle.suspend-continue"],
        get_mutant(SLOWEST).target,
        zoo_options(RunOptions(profile="smoke")),
    )
    assert (result.status, result.failed_requirement) == ("fail", "ADAPTER-044")
    assert "declared turn_timeout" in result.message


@pytest.mark.slow
@pytest.mark.parametrize("profile", ["smoke", "standard"])
def test_the_slowest_mutant_is_judged_within_the_zoo_cap(profile: str) -> None:
    mutant = get_mutant(SLOWEST)
    report = run_suite(mutant.target, zoo_options(RunOptions(profile=profile)))
    errors = [f"{r.check_id}: {r.message}" for r in report.results if r.status == "error"]
    assert not errors
    failed = {r.check_id: r.failed_requirement for r in report.results if r.status == "fail"}
    # Its own requirement (the aborted turn never settles) and, where nothing aborted the
    # hung turn, a done() that neither returned nor raised: nothing else, no error.
    assert set(failed.values()) <= {"ADAPTER-042", "ADAPTER-044"}, failed
    assert judge(mutant, report).verdict == "killed"
