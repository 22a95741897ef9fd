"""``harness-testkit selftest``: verdicts, the reference run, reports and the CLI."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from harness_testkit._cli import cli
from harness_testkit.conformance import CheckResult, Report
from harness_testkit.conformance._adapter._registry import GRAMMAR_PASS_CHECKS
from harness_testkit.conformance._report import Status
from harness_testkit.conformance._zoo._catalog import get_mutant, mutants
from harness_testkit.conformance._zoo._machinery import MutantAdapter
from harness_testkit.conformance._zoo._selftest import (
    judge,
    run_mutant_targeted,
    run_selftest,
    unchecked_requirements,
    unproven_requirements,
)
from harness_testkit.fake_harness import FakeHarness, profiles
from harness_testkit.spec import load_requirements

from .support import SMOKE, reference_statuses


def _bare_fake() -> MutantAdapter:
    return MutantAdapter(FakeHarness(profile="minimal"))


def _report(*results: CheckResult) -> Report:
    return Report(
        suite_version="0",
        adapter="mutant:x",
        harness_id="fake",
        profile="smoke",
        max_examples=5,
        seed=0,
        sandbox="local",
        results=results,
    )


def _result(
    check_id: str, status: Status, requirements: tuple[str, ...], failed: str | None
) -> CheckResult:
    return CheckResult(
        check_id=check_id,
        title=check_id,
        tier="black-box",
        requirements=requirements,
        level="MUST",
        areas=("STREAM",),
        status=status,
        failed_requirement=failed,
    )


def test_a_targeted_run_reaches_the_grammar_pass_and_stops_at_the_own_kill() -> None:
    # stream.grammar (no tool calls) misses the miscounted step; a scripted check's
    # grammar pass reports it, and nothing runs after that failure.
    outcome = run_mutant_targeted(get_mutant("miscounted-step"), SMOKE)  # STREAM-011
    assert outcome.verdict == "killed"
    (kill,) = outcome.kills
    assert kill.check_id in GRAMMAR_PASS_CHECKS
    assert (kill.failed_requirement, kill.failed_level) == ("STREAM-011", "MUST")


def test_a_targeted_run_without_the_defect_finds_no_kill() -> None:
    # The unmutated wrapper, judged as if it were the mutant of ADAPTER-059.
    mutant = dataclasses.replace(
        get_mutant("start-accepts-foreign-states"),
        factory=_bare_fake,  # type: ignore[arg-type]  # mutants type specification_version as str
    )
    outcome = run_mutant_targeted(mutant, SMOKE)
    assert (outcome.verdict, outcome.kills) == ("survived", ())


def test_only_a_failure_reporting_the_requirement_kills_the_mutant() -> None:
    mutant = get_mutant("step-left-open")  # STREAM-033
    reported = _report(_result("a", "fail", ("STREAM-040",), "STREAM-033"))
    # A check that lists the requirement but failed on another one is incidental.
    listed = _report(_result("b", "fail", ("STREAM-033", "STREAM-040"), "STREAM-040"))
    assert judge(mutant, reported).verdict == "killed"
    assert judge(mutant, listed).verdict == "killed-elsewhere"


def test_other_failures_only_kill_elsewhere_and_passes_blocks_and_skips_do_not_kill() -> None:
    mutant = get_mutant("step-left-open")
    elsewhere = _report(
        _result("a", "fail", ("STREAM-040",), "STREAM-040"),
        _result("b", "blocked", ("STREAM-033",), None),
    )
    survived = _report(
        _result("a", "pass", ("STREAM-033",), None),
        _result("b", "skip", ("STREAM-033",), None),
        _result("c", "blocked", ("STREAM-033",), None),
    )
    assert judge(mutant, elsewhere).verdict == "killed-elsewhere"
    assert judge(mutant, survived).verdict == "survived"


def test_unproven_lists_adapter_facing_requirements_without_a_mutant() -> None:
    zoo = mutants()
    unproven = unproven_requirements(zoo)
    catalogue = load_requirements()
    assert not {m.requirement for m in zoo} & set(unproven)
    for requirement_id in unproven:
        requirement = catalogue.get(requirement_id)
        assert requirement.subject == "adapter"
        assert requirement.checkability in ("black-box", "scripted")
    assert "ADAPTER-002" not in unproven  # binds the agent, never an adapter
    assert "ADAPTER-038" not in unproven  # a MAY: an adapter cannot break it
    unchecked = unchecked_requirements()
    assert not set(unchecked) & set(unproven)
    assert all(catalogue.get(item).level == "SHOULD" for item in unchecked)


def test_no_adapter_facing_requirement_is_unproven() -> None:
    """Issue 19: the zoo grows until every checked adapter-facing MUST and SHOULD has a
    mutant (``test_mutants.py`` proves each dies by it)."""
    assert unproven_requirements(mutants()) == []


def test_the_full_suite_kills_a_couple_of_mutants() -> None:
    zoo = [get_mutant("duplicate-finish"), get_mutant("wrong-session-id")]
    report = run_selftest(zoo, SMOKE, reference=False)
    assert [o.verdict for o in report.outcomes] == ["killed", "killed"]
    assert report.ok
    assert report.outcomes[1].own_kills[0].check_id == "session.identity"
    data = json.loads(report.to_json())
    assert data["counts"] == {"killed": 2, "killed-elsewhere": 0, "survived": 0}
    assert data["mutants"][0]["requirement"] == "STREAM-040"


@pytest.mark.parametrize("profile", profiles())
def test_the_unmutated_fake_has_no_false_positives(profile: str) -> None:
    failures = {
        check_id: requirement
        for check_id, (status, requirement) in reference_statuses(profile).items()
        if status == "fail"
    }
    assert not failures


@pytest.mark.requirement("DECISION-014")
def test_cli_prints_the_matrix_writes_json_and_exits_zero_when_all_die(tmp_path: Path) -> None:
    out = tmp_path / "matrix.json"
    result = CliRunner().invoke(
        cli,
        ["selftest", "--mutant", "wrong-session-id", "--no-reference", "--json", str(out)],
    )
    assert result.exit_code == 0, result.output
    assert "wrong-session-id" in result.output
    # Not a terminal: a line per judged mutant on stderr (DECISION-014).
    assert "selftest (smoke): 1 mutant" in result.stderr
    assert "[1/1] killed   wrong-session-id (" in result.stderr
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["ok"] is True
    assert data["mutants"][0]["verdict"] == "killed"
    assert data["mutants"][0]["killedBy"][0]["check"] == "session.identity"


def test_cli_exits_one_when_a_mutant_survives(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every mutant dies today, so stand in a run where the suite kills nothing: the
    # kill matrix must say so and the command must fail.
    from harness_testkit.conformance._zoo import _selftest

    def nothing_killed(mutant: Any, options: Any, **_: Any) -> Any:
        return _selftest.MutantOutcome(mutant=mutant, kills=(), seconds=0.0)

    monkeypatch.setattr(_selftest, "run_mutant", nothing_killed)
    result = CliRunner().invoke(cli, ["selftest", "--mutant", "host-output-lost", "--no-reference"])
    assert result.exit_code == 1
    assert "survived" in result.output


def test_cli_refuses_unknown_mutants_and_lists_the_zoo() -> None:
    refused = CliRunner().invoke(cli, ["selftest", "--mutant", "nope"])
    assert refused.exit_code == 2
    assert "selftest --list" in refused.output
    listed = CliRunner().invoke(cli, ["selftest", "--list"])
    assert listed.exit_code == 0
    assert len(listed.output.splitlines()) == len(mutants())
