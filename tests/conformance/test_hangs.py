"""Hanging adapters get their verdict without waiting out the turn timeout again and again.

A hang is judged once: a property example that failed by waiting out the turn timeout is
not shrunk (every smaller scenario would wait it out too), the stateful approval machine
reports its first hang unshrunk, and a run in which no turn settled at all stops starting
turns once a check failed because one hung: the later checks that start one are
``blocked`` by it. The assertions are on statuses and requirements, never on time.
"""

from __future__ import annotations

import pytest

from harness_testkit.conformance import RunOptions, run_suite
from harness_testkit.conformance._checks import CheckFailed
from harness_testkit.conformance._runner import ABORT_REQUIREMENT
from harness_testkit.conformance._shrinking import ShrinkBudget, ShrinkingCut
from harness_testkit.conformance._watchdog import (
    HANG_FACTOR,
    HANG_FLOOR,
    TurnLedger,
    TurnRefused,
)
from harness_testkit.conformance._zoo._catalog import get_mutant

LEDGER_BLOCK = "no turn of this adapter settled in this run"


def _hung(ledger: TurnLedger) -> str | None:
    return ledger.hung_check  # read through a call: the ledger changes between asserts


def test_the_ledger_refuses_turns_only_after_a_hang_with_none_settled() -> None:
    ledger = TurnLedger()
    ledger.check_failed("a", "ADAPTER-044", "hung")  # no turn started yet: not a hang
    ledger.turn_started()
    ledger.check_failed("b", "STREAM-001", "some other failure")
    ledger.turn_started()
    assert _hung(ledger) is None
    ledger.check_failed("c", "ADAPTER-044", "the turn did not settle\nmore")
    assert _hung(ledger) == "c"
    assert ledger.hung_message == "the turn did not settle"
    with pytest.raises(TurnRefused, match="no turn of this adapter settled in this run; c hung"):
        ledger.turn_started()
    assert (ledger.started, ledger.refused) == (2, 1)


def test_the_turn_limit_follows_the_slowest_settled_turn() -> None:
    ledger = TurnLedger()
    assert ledger.turn_limit(30.0) == 30.0  # nothing settled yet: the declared timeout
    ledger.turn_settled(0.01)
    assert ledger.turn_limit(30.0) == HANG_FLOOR
    ledger.turn_settled(1.0)
    assert ledger.turn_limit(30.0) == HANG_FACTOR * 1.0
    ledger.turn_settled(10.0)
    assert ledger.turn_limit(30.0) == 30.0  # never above the declared timeout


def test_a_settled_turn_keeps_the_ledger_from_ever_refusing() -> None:
    ledger = TurnLedger()
    ledger.turn_started()
    ledger.turn_settled()
    ledger.turn_started()
    ledger.check_failed("c", "ADAPTER-044", "hung")
    assert ledger.hung_check is None
    ledger.turn_started()


def test_a_hung_example_is_not_shrunk() -> None:
    budget = ShrinkBudget(30.0, clock=lambda: 0.0)
    budget.failed("scenario", CheckFailed("ADAPTER-044", "hung"), hung=True)
    with pytest.raises(ShrinkingCut):
        budget.check()
    assert budget.unshrunk == "scenario"
    # The note says why the scenario is the first one found.
    assert "not shrunk: the scenario hung" in str(budget.cut_error())


def test_a_failure_that_did_not_hang_is_shrunk_within_the_budget() -> None:
    now = [0.0]
    budget = ShrinkBudget(30.0, clock=lambda: now[0])
    budget.failed("scenario", AssertionError("wrong"))
    budget.check()
    now[0] = 31.0
    with pytest.raises(ShrinkingCut):
        budget.check()


def test_a_run_whose_turns_never_settle_blocks_every_later_turn() -> None:
    """The first hang is the verdict; the checks after it that start a turn are blocked
    by it, except those about aborting a turn, which judge the hang themselves."""
    report = run_suite(get_mutant("turn-never-settles").target, RunOptions(profile="smoke"))
    by_status: dict[str, list[str]] = {}
    for result in report.results:
        by_status.setdefault(result.status, []).append(result.check_id)
    assert "error" not in by_status, [r.message for r in report.results if r.status == "error"]
    failed = {r.check_id: r for r in report.results if r.status == "fail"}
    hung = [r for r in failed.values() if ABORT_REQUIREMENT not in r.requirements]
    # One hang waited out the timeout; the abort checks add theirs, by their own rule.
    assert len(hung) == 1, {r.check_id: r.message for r in hung}
    first = hung[0]
    assert first.failed_requirement == "ADAPTER-044"
    for result in failed.values():
        if ABORT_REQUIREMENT in result.requirements:
            assert result.failed_requirement in ("ADAPTER-042", "ADAPTER-044"), result.message
    blocked_by_ledger = [
        r for r in report.results if r.status == "blocked" and LEDGER_BLOCK in r.message
    ]
    assert blocked_by_ledger, "no check was blocked by the hang"
    for result in blocked_by_ledger:
        assert result.blocked_by == first.check_id
        assert first.check_id in result.message


@pytest.mark.parametrize("name", ["crash-leaves-turn-unsettled", "suspended-turn-never-settles"])
def test_a_run_whose_turns_settle_is_never_blocked_by_a_hang(name: str) -> None:
    """Only some situation hangs: each check that meets it says so, none is blocked."""
    report = run_suite(get_mutant(name).target, RunOptions(profile="smoke"))
    assert not [r.check_id for r in report.results if LEDGER_BLOCK in (r.message or "")]
    failed = {r.check_id: r.failed_requirement for r in report.results if r.status == "fail"}
    assert get_mutant(name).requirement in failed.values(), failed
    assert not [r.message for r in report.results if r.status == "error"]
