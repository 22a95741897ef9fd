"""Coverage at every seed: each property check declares its equivalence classes, and
every run, at every profile and seed, exercises each class at least once.

The real runner draws the scenarios (explicit examples first, then hypothesis at the
run's seed); a recorder stands in for the check body, so the sweep costs no turns. The
default run sweeps seeds 0-2, the exhaustive one 3-19.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from harness_testkit.conformance import (
    AdapterTarget,
    Check,
    CheckContext,
    RunOptions,
    ordered_checks,
    run_check,
    self_test_targets,
)

PROPERTY_CHECKS = [item for item in ordered_checks() if item.is_property]
#: Seeds the default run sweeps; the exhaustive sweep takes the rest of 0-19 (the explicit
#: examples already cover every class, see the last test, so a sample is enough by default).
SAMPLE_SEEDS = range(3)
SWEEP_SEEDS = range(3, 20)


def _target_for(item: Check) -> AdapterTarget:
    """A self-test target the check runs on (not skipped for a missing capability)."""
    for target in self_test_targets():
        capabilities = target.capabilities
        if all(getattr(capabilities, name) for name in item.needs) and (
            item.tier != "scripted" or capabilities.scripting
        ):
            return target
    raise AssertionError(f"no self-test target runs {item.id}")


def _drawn(item: Check, profile: str, seed: int) -> list[Any]:
    seen: list[Any] = []

    async def record(ctx: CheckContext, scenario: Any) -> None:
        seen.append(scenario)

    recorder = dataclasses.replace(item, run_scenario=record)
    result = run_check(recorder, _target_for(item), RunOptions(profile=profile, seed=seed))
    assert result.status == "pass", result.message
    return seen


@pytest.mark.parametrize("item", PROPERTY_CHECKS, ids=lambda item: item.id)
def test_every_property_check_declares_its_classes(item: Check) -> None:
    assert item.classes, f"{item.id} declares no equivalence classes"


def _sweep(item: Check, profile: str, seeds: range) -> None:
    for seed in seeds:
        scenarios = _drawn(item, profile, seed)
        assert scenarios, f"{item.id} ran no scenario at {profile}, seed {seed}"
        missed = [
            name
            for name, member in item.classes.items()
            if not any(member(scenario) for scenario in scenarios)
        ]
        assert not missed, f"{item.id} at {profile}, seed {seed}: classes never run: {missed}"


@pytest.mark.parametrize("profile", ["smoke", pytest.param("standard", marks=pytest.mark.slow)])
@pytest.mark.parametrize("item", PROPERTY_CHECKS, ids=lambda item: item.id)
def test_every_class_is_exercised_at_seeds_0_to_2(item: Check, profile: str) -> None:
    _sweep(item, profile, SAMPLE_SEEDS)


@pytest.mark.exhaustive
@pytest.mark.parametrize("profile", ["smoke", "standard"])
@pytest.mark.parametrize("item", PROPERTY_CHECKS, ids=lambda item: item.id)
def test_every_class_is_exercised_at_seeds_3_to_19(item: Check, profile: str) -> None:
    _sweep(item, profile, SWEEP_SEEDS)


@pytest.mark.parametrize("item", PROPERTY_CHECKS, ids=lambda item: item.id)
def test_the_explicit_examples_alone_cover_every_class(item: Check) -> None:
    """So no verdict depends on the seed's luck (generated draws only add to them)."""
    if not item.examples:
        # One-scenario strategies (``st.just``): the draw itself is the class.
        assert len(item.classes) == 1
        return
    missed = [
        name
        for name, member in item.classes.items()
        if not any(member(example) for example in item.examples)
    ]
    assert not missed, f"{item.id}: no example of {missed}"
