"""The defects issue 19 found surviving the suite, or killed only incidentally, and the
requirements selftest listed as unproven, now die by their own requirement, at smoke and
at standard depth, whatever the seed. The survivor classes run at every seed 0-19 in the
default run (280 cases, about 80 s on one core: each dies at its check's first explicit
example); the other mutants run at seed 0 by default and at seeds 1-19 in the
``exhaustive`` sweep. Adapters the kit never saw: each is one real-world bug in the fake."""

from __future__ import annotations

import pytest

from harness_testkit.conformance import RunOptions
from harness_testkit.conformance._zoo._catalog import get_mutant
from harness_testkit.conformance._zoo._selftest import run_mutant_targeted

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
#: The kills issue 19 found incidental (the defect died by another requirement only) ->
#: the mutant, which must now die by its own.
INCIDENTAL = {
    "a strict schema rejecting an extra key": "state-data-off-schema",
    # (states of another harness, once reported under ADAPTER-030/033/034: SURVIVORS)
    "merged steps (caught only through a reordering after suspension)": "step-left-open",
}
#: The requirements selftest listed as unproven -> the mutant that proves each.
UNPROVEN_BEFORE = {
    "ADAPTER-028 (do_continue_turn)": "continue-turn-not-implemented",
    "ADAPTER-046 (submit_tool_approval when asking)": "relays-unanswerable-approvals",
}
ALL_SEEDS = tuple(range(20))


#: Every mutant of this file; the survivor classes run at ALL_SEEDS by default, the
#: others at seed 0 (the exhaustive sweep runs them at the other seeds of ALL_SEEDS).
NAMES = tuple(dict.fromkeys([*SURVIVORS.values(), *INCIDENTAL.values(), *UNPROVEN_BEFORE.values()]))


def _cases(seeds: tuple[int, ...], names: tuple[str, ...] = NAMES) -> list[tuple[str, str, int]]:
    return [
        (name, profile, seed)
        for name in names
        for profile in ("smoke", "standard")
        for seed in seeds
    ]


def _default_cases() -> list[tuple[str, str, int]]:
    others = tuple(name for name in NAMES if name not in SURVIVORS.values())
    return _cases(ALL_SEEDS, tuple(SURVIVORS.values())) + _cases((0,), others)


def _assert_killed(name: str, profile: str, seed: int) -> None:
    mutant = get_mutant(name)
    # The checks that can report the requirement (the scripted checks' grammar pass
    # included, for ADAPTER-046), until one does.
    outcome = run_mutant_targeted(mutant, RunOptions(profile=profile, seed=seed))
    assert outcome.verdict == "killed", (
        f"{name} ({mutant.requirement}) at {profile}, seed {seed}: {outcome.verdict} "
        + "; ".join(f"{k.check_id} -> {k.failed_requirement}" for k in outcome.kills)
    )
    if mutant.requirement in ("ADAPTER-037", "ADAPTER-056", "TRANSLATE-012", "FILTER-010"):
        # A MUST failure fails the run's gate (Report.must_failures).
        assert any(kill.failed_level == "MUST" for kill in outcome.own_kills), outcome.kills


@pytest.mark.parametrize(("name", "profile", "seed"), _default_cases())
def test_survivor_class_is_killed(name: str, profile: str, seed: int) -> None:
    _assert_killed(name, profile, seed)


@pytest.mark.exhaustive
@pytest.mark.parametrize(
    ("name", "profile", "seed"),
    [case for case in _cases(ALL_SEEDS) if case not in _default_cases()],
)
def test_survivor_class_is_killed_at_every_seed(name: str, profile: str, seed: int) -> None:
    _assert_killed(name, profile, seed)
