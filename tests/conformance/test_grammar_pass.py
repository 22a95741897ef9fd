"""The registry's declaration of the grammar pass holds: exactly the checks it lists run
the stream grammar over their own turns.

The zoo judges a mutant by the checks that can report its requirement
(``registry.reporting_checks``) and never falls back to the whole suite, so this list
must be exact: a check missing from it would kill stream grammar mutants unseen, one
listed wrongly would be run for nothing. The proof: a mutant whose text-delta parts
carry the wrong field name (STREAM-004, in every turn that says anything, held,
suspended and aborted ones included), run check by check (no prerequisites, so
``stream.grammar`` cannot stand in), is reported under STREAM-004 by exactly the
listed checks.
"""

from __future__ import annotations

import dataclasses
import functools

import pytest

from harness_testkit.conformance import REGISTRY, Check, RunOptions
from harness_testkit.conformance._adapter._registry import (
    GRAMMAR_PASS_CHECKS,
    GRAMMAR_PASS_REQUIREMENTS,
    reporting_checks,
)
from harness_testkit.conformance._report import CheckResult
from harness_testkit.conformance._runner import run_check
from harness_testkit.conformance._zoo._catalog import DEFECTS
from harness_testkit.conformance._zoo._machinery import Defect, Mutant
from harness_testkit.fake_harness import profiles

_PROBE = "wrong-field-names"
_BROKEN = "STREAM-004"


def _defect(name: str) -> Defect:
    (defect,) = [defect for defect in DEFECTS if defect.name == name]
    return defect


@functools.cache
def _probes() -> tuple[tuple[str, Mutant], ...]:
    """The probe on every fake-harness profile, then with an askUserQuestions built-in."""
    probe = _defect(_PROBE)
    assert probe.requirement == _BROKEN
    questions = _defect("questions-answered-by-runtime").tools
    return (
        *((profile, dataclasses.replace(probe, profile=profile).build()) for profile in profiles()),
        ("minimal+questions", dataclasses.replace(probe, tools=questions).build()),
    )


def _run_where_it_applies(check: Check) -> tuple[str, CheckResult]:
    """The check's result on the first probe that does not skip it (for a missing
    capability or built-in); the last skip when every probe does."""
    results = []
    for name, mutant in _probes():
        results.append((name, run_check(check, mutant.target, RunOptions(profile="smoke"))))
        if results[-1][1].status != "skip":
            break
    return results[-1]


@pytest.mark.parametrize(
    "check_id",
    [item for item in REGISTRY if _BROKEN not in REGISTRY[item].requirements],
)
def test_exactly_the_declared_checks_report_the_grammar_of_their_turns(check_id: str) -> None:
    profile, result = _run_where_it_applies(REGISTRY[check_id])
    reported = result.status == "fail" and result.failed_requirement == _BROKEN
    assert reported == (check_id in GRAMMAR_PASS_CHECKS), (
        f"{check_id} on {profile}: {result.status} {result.failed_requirement} "
        f"{result.message.splitlines()[0] if result.message else ''}"
    )


def test_reporting_checks_add_the_grammar_pass_only_for_its_requirements() -> None:
    verifying = [item for item in REGISTRY if "ADAPTER-059" in REGISTRY[item].requirements]
    assert reporting_checks("ADAPTER-059") == verifying
    assert "STREAM-011" in GRAMMAR_PASS_REQUIREMENTS
    chosen = reporting_checks("STREAM-011")
    assert set(chosen) == {"stream.grammar", *GRAMMAR_PASS_CHECKS}
    assert chosen == [item for item in REGISTRY if item in chosen]
