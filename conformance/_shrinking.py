"""Bounded shrinking: a failing property check reports within a time budget.

Hypothesis shrinks a failing scenario for as long as it finds smaller ones, which on a
slow adapter can take many minutes. :class:`ShrinkBudget` stops it once shrinking has
taken ``seconds``: the check then reports the smallest failing scenario found so far,
and the first (unshrunk) one goes into the replay bundle too.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

__all__ = ["ShrinkBudget", "ShrinkingCut"]


class ShrinkingCut(BaseException):
    """Raised inside a property run to stop hypothesis when the shrink budget is spent.

    A ``BaseException`` so that hypothesis does not take it for a failure of the check.
    """


class ShrinkBudget:
    """Counts shrinking time from the first failure and cuts the run when it is spent.

    Args:
        seconds: How long shrinking may take after the first failure.
        clock: Monotonic seconds (injectable for tests).
    """

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        self._clock = clock
        self._first_failure_at: float | None = None
        #: The first failing scenario, as generated (never shrunk).
        self.unshrunk: Any = None
        #: The smallest failing scenario so far and what it raised.
        self.smallest: Any = None
        self.error: BaseException | None = None
        #: The first failure was a hang: shrinking is not attempted at all.
        self.hung = False

    def failed(self, scenario: Any, error: BaseException, *, hung: bool = False) -> None:
        """Note a failing scenario (hypothesis only tries smaller ones after the first);
        ``hung``: it failed by waiting out the turn timeout, so no smaller one is tried."""
        if self._first_failure_at is None:
            self._first_failure_at = self._clock()
            self.unshrunk = scenario
            self.hung = hung
        self.smallest, self.error = scenario, error

    def check(self) -> None:
        """Raise :class:`ShrinkingCut` when shrinking has used up the budget."""
        started = self._first_failure_at
        if started is not None and (self.hung or self._clock() - started > self.seconds):
            raise ShrinkingCut

    def cut_error(self) -> BaseException:
        """The smallest failure found, marked as cut, carrying both scenarios."""
        from ._checks import CheckFailed

        error = self.error
        assert error is not None
        note = (
            " (not shrunk: the scenario hung, and each smaller one tried would wait out "
            "the turn timeout again)"
            if self.hung
            else f" (shrinking stopped after {self.seconds:g} s: this is the smallest failing "
            "scenario found so far; the unshrunk one is in the replay bundle)"
        )
        if isinstance(error, CheckFailed):
            error = CheckFailed(
                error.requirement,
                error.message + note,
                expected=error.expected,
                observed=error.observed,
            )
        error.scenario = self.smallest  # type: ignore[attr-defined]
        error.unshrunk_scenario = self.unshrunk  # type: ignore[attr-defined]
        return error
