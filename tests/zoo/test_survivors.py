"""The defects issue 19 found surviving the suite now die by their own requirement, at
smoke and at standard depth, whatever the seed (a few seeds by default; 0-19 under the
``slow`` marker). Adapters the kit never saw: each is one real-world bug in the fake."""

from __future__ import annotations

import pytest

from harness_testkit.conformance import RunOptions, ordered_checks, run_suite
from harness_testkit.conformance._zoo.catalog import get_mutant
from harness_testkit.conformance._zoo.selftest import judge

#: Survivor class of the issue -> the mutant that has it.
SURVIVORS = {
    "emits every reasoning delta as text too": "reasoning-echoed-as-text",
    "drops isError from a failing built-in's result": "failing-builtin-loses-is-error",
    "turns every built-in deny into allow": "deny-filter-allows-all",
    "reads deny lists as allow lists": "filter-mode-inverted",
    "accepts a lifecycle state of another harness": "start-accepts-foreign-states",
    "accepts prompts after destroy": "accepts-calls-after-destroy",
    "returns states of another harness (was an incidental kill)": "state-with-foreign-harness-id",
}
DEFAULT_SEEDS = (0, 4, 5)
ALL_SEEDS = tuple(range(20))


def _cases(seeds: tuple[int, ...]) -> list[tuple[str, str, int]]:
    return [
        (name, profile, seed)
        for name in SURVIVORS.values()
        for profile in ("smoke", "standard")
        for seed in seeds
    ]


def _assert_killed(name: str, profile: str, seed: int) -> None:
    mutant = get_mutant(name)
    check_ids = [item.id for item in ordered_checks() if mutant.requirement in item.requirements]
    report = run_suite(mutant.target, RunOptions(profile=profile, seed=seed), check_ids=check_ids)
    outcome = judge(mutant, report)
    assert outcome.verdict == "killed", (
        f"{name} ({mutant.requirement}) at {profile}, seed {seed}: {outcome.verdict} "
        + "; ".join(f"{k.check_id} -> {k.failed_requirement}" for k in outcome.kills)
    )
    if mutant.requirement in ("ADAPTER-037", "ADAPTER-056", "TRANSLATE-012", "FILTER-010"):
        assert not report.ok, "a MUST failure must fail the run"


@pytest.mark.parametrize(("name", "profile", "seed"), _cases(DEFAULT_SEEDS))
def test_survivor_class_is_killed(name: str, profile: str, seed: int) -> None:
    _assert_killed(name, profile, seed)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "profile", "seed"),
    [case for case in _cases(ALL_SEEDS) if case[2] not in DEFAULT_SEEDS],
)
def test_survivor_class_is_killed_at_every_seed(name: str, profile: str, seed: int) -> None:
    _assert_killed(name, profile, seed)
