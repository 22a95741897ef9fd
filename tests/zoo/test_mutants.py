"""The zoo of broken adapters: every mutant dies of the requirement it breaks.

Each mutant runs against the checks that can report its requirement (those verifying
it and, for a stream grammar requirement, the scripted checks whose grammar pass
reports it; plus their prerequisites) until one does, in the smoke profile, so the
whole zoo stays fast: never the whole suite, so a kill by a check not declared to report
the requirement shows up as a miss. ``test_selftest.py`` runs the complete suite for a
few mutants. A mutant the suite cannot kill yet is a strict xfail naming the check that
should catch it, so fixing the suite flips it to a failure asking for the entry to go.
"""

from __future__ import annotations

import pytest

from harness_testkit.conformance import (
    REGISTRY,
    AdapterTarget,
    RunOptions,
    ordered_checks,
    run_check,
)
from harness_testkit.conformance._zoo._catalog import get_mutant, mutant_names, mutants
from harness_testkit.conformance._zoo._machinery import Mutant, MutantAdapter
from harness_testkit.conformance._zoo._selftest import run_mutant_targeted
from harness_testkit.fake_harness import FakeHarness, profiles
from harness_testkit.spec import load_requirements

from .support import SMOKE, reference_statuses, reference_target, statuses

#: Mutants the suite does not kill by their own requirement yet -> the check that should.
KNOWN_GAPS: dict[str, str] = {}

AREAS = (
    "stream grammar",
    "tool merging",
    "filtering",
    "approvals",
    "dynamic parts",
    "continuations",
    "lifecycle",
    "robustness",
    "session identity",
    "capability honesty",
    "turn settings",
)


def _checks_for(mutant: Mutant) -> list[str]:
    return [item.id for item in ordered_checks() if mutant.requirement in item.requirements]


def test_the_zoo_has_at_least_thirty_uniquely_named_mutants() -> None:
    names = mutant_names()
    assert len(names) >= 30
    assert len(set(names)) == len(names)
    assert [mutant.name for mutant in mutants()] == list(names)


def test_every_mutant_breaks_an_adapter_requirement_of_the_catalogue() -> None:
    catalogue = load_requirements()
    for mutant in mutants():
        requirement = catalogue.get(mutant.requirement)  # KeyError names near ids
        assert requirement.subject == "adapter", mutant.name
        assert requirement.checkability in ("black-box", "scripted"), mutant.name
        assert mutant.description.endswith("."), mutant.name


def test_every_area_of_the_issue_has_mutants() -> None:
    covered = {mutant.area for mutant in mutants()}
    assert set(AREAS) <= covered


def test_known_gaps_name_real_mutants() -> None:
    assert set(KNOWN_GAPS) <= set(mutant_names())


def test_get_mutant_names_the_known_ones_when_it_misses() -> None:
    with pytest.raises(KeyError, match="step-left-open"):
        get_mutant("no-such-mutant")


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(
            name,
            marks=pytest.mark.xfail(reason=KNOWN_GAPS[name], strict=True)
            if name in KNOWN_GAPS
            else (),
        )
        for name in mutant_names()
    ],
)
def test_mutant_is_killed_by_a_check_of_its_requirement(name: str) -> None:
    mutant = get_mutant(name)
    check_ids = _checks_for(mutant)
    assert check_ids, f"no check lists {mutant.requirement}"
    # At seed 0, with no other seed to fall back on (seeds 1-9: the sweep below).
    outcome = run_mutant_targeted(mutant, SMOKE)
    assert outcome.verdict == "killed", (
        f"{name} ({mutant.requirement}) {outcome.verdict}: "
        + "; ".join(f"{k.check_id} -> {k.failed_requirement}" for k in outcome.kills)
    )


@pytest.mark.exhaustive
@pytest.mark.parametrize(
    ("name", "seed"), [(name, seed) for name in mutant_names() for seed in range(10)]
)
def test_mutant_dies_by_its_own_requirement_at_every_seed(name: str, seed: int) -> None:
    """Issue 19: a verdict must not depend on the seed's luck (no fallback seed here)."""
    mutant = get_mutant(name)
    outcome = run_mutant_targeted(mutant, RunOptions(profile="smoke", seed=seed))
    assert outcome.verdict == "killed", (
        f"{name} ({mutant.requirement}) at seed {seed}: {outcome.verdict} "
        + "; ".join(f"{k.check_id} -> {k.failed_requirement}" for k in outcome.kills)
    )


@pytest.mark.parametrize("profile", profiles())
def test_the_mutant_wrappers_alone_change_nothing(profile: str) -> None:
    """Without a defect the wrappers report exactly what the bare fake reports."""

    def factory() -> MutantAdapter:
        return MutantAdapter(FakeHarness(profile=profile))

    wrapped = AdapterTarget(
        factory=factory,  # type: ignore[arg-type]  # mutants type specification_version as str
        capabilities=reference_target(profile).capabilities,
        name=f"wrapped:{profile}",
        expectations=reference_target(profile).expectations,
    )
    assert statuses(wrapped) == reference_statuses(profile)


def test_the_approval_machine_reports_a_restored_turn_it_cannot_continue() -> None:
    """The machine's runs share the check's context: it judges only its own run's
    adapters, else an earlier run's failure made hypothesis' replays fail sooner (an
    error of the check: FlakyStrategyDefinition) instead of failing LIFECYCLE-041."""
    result = run_check(
        REGISTRY["scripted.approval-machine"],
        get_mutant("restored-turn-not-continued").target,
        RunOptions(profile="smoke"),
    )
    assert (result.status, result.failed_requirement) == ("fail", "LIFECYCLE-041"), result.message
