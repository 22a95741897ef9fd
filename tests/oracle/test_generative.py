"""The generative differential: generated scenarios, official agent against the twin.

Runs only when node and the oracle's dependencies are installed (``cd oracle && npm
ci``); the fixed scenarios' committed outputs need neither. Each run does a bounded
number of scenarios at the fixed seed plus as many as fit the budget at a rotating
seed (printed, replay it with ``--generative-seed``); ``--generative-budget SECONDS``
sets the budget. A divergence that no declared decision explains is shrunk by
hypothesis, printed with its first differing line and saved as
``oracle/scenarios/generated-<hash>.json`` (set ``ORACLE_GENERATED_DIR`` to save
elsewhere): run ``node oracle/driver.mjs --write generated-<hash>`` and commit both to
keep it in the fixed set. Every mask (declared decision) must explain at least one
divergence of the run or of the committed scenarios that declare it, else it is stale.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings

from .generative import (
    MASKS,
    OfficialDriver,
    first_difference,
    mask_of,
    node_ready,
    save_scenario,
    scenarios,
    twin_run,
)
from .test_official_agent import NAMES
from .twin import load_scenario

#: The fixed seed every run starts with, and how many scenarios it runs.
FIXED_SEED = 37
FIXED_EXAMPLES = 12
#: The rotating share's default budget (seconds) in an ordinary run, spent in batches.
DEFAULT_BUDGET = 20.0
BATCH = 10

pytestmark = pytest.mark.skipif(node_ready() is not None, reason=str(node_ready()))


@pytest.fixture(scope="module")
def official() -> Iterator[OfficialDriver]:
    driver = OfficialDriver()
    try:
        yield driver
    finally:
        driver.close()


class _Run:
    """Counts of one generative run (printed at its end)."""

    def __init__(self) -> None:
        self.count = 0
        self.official_ms = 0.0
        self.twin_ms = 0.0
        self.masked: Counter[str] = Counter()
        #: The last undeclared divergence: hypothesis replays the shrunk one last.
        self.failure: tuple[dict[str, Any], tuple[int, str, str]] | None = None

    def report(self, label: str) -> str:
        per = max(self.count, 1)
        return (
            f"generative oracle ({label}): {self.count} scenarios, "
            f"{self.official_ms / per:.1f} ms official + {self.twin_ms / per:.1f} ms twin "
            f"per scenario, declared: {dict(self.masked) or 'none'}"
        )


def _check(official: OfficialDriver, run: _Run, scenario: dict[str, Any]) -> None:
    official_lines, official_ms = official.run(scenario)
    python_lines, twin_ms = twin_run(scenario)
    run.count += 1
    run.official_ms += official_ms
    run.twin_ms += twin_ms
    difference = first_difference(python_lines, official_lines)
    if difference is None:
        return
    mask = mask_of(scenario, difference)
    if mask is not None:
        run.masked[mask.decision] += 1
        return
    run.failure = (scenario, difference)
    index, python, official_line = difference
    raise AssertionError(
        f"undeclared divergence at line {index + 1}:\n"
        f"  python:   {python}\n  official: {official_line}"
    )


def _explore(official: OfficialDriver, run: _Run, at_seed: int, examples: int) -> None:
    """``examples`` scenarios from ``at_seed``; an undeclared divergence is shrunk and saved."""

    @seed(at_seed)
    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        phases=[Phase.generate, Phase.shrink],
        suppress_health_check=list(HealthCheck),
    )
    @given(scenarios())
    def check(scenario: dict[str, Any]) -> None:
        _check(official, run, scenario)

    try:
        check()
    except AssertionError:
        if run.failure is not None:  # save the shrunk scenario only, not every step there
            path = save_scenario(*run.failure)
            print(f"\ngenerative oracle: the shrunk divergence is saved as {path}")
        raise


def _explore_for(official: OfficialDriver, run: _Run, at_seed: int, budget: float) -> None:
    """Batches of scenarios from seeds ``at_seed``, ``at_seed + 1``, ... until ``budget``
    seconds are spent (a batch is never cut short: shrinking needs its examples to
    replay the same way)."""
    deadline = time.monotonic() + budget
    batch = 0
    while time.monotonic() < deadline:
        _explore(official, run, at_seed * 1000 + batch, BATCH)
        batch += 1


def test_generated_scenarios_match_the_official_agent(
    official: OfficialDriver, request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str]
) -> None:
    budget = request.config.getoption("--generative-budget")
    rotating = request.config.getoption("--generative-seed")
    if rotating is None:
        rotating = int(time.time()) // 3600  # changes hourly: CI runs see new scenarios
    fixed = _Run()
    _explore(official, fixed, FIXED_SEED, FIXED_EXAMPLES)
    more = _Run()
    with capsys.disabled():
        print(f"\ngenerative oracle: rotating seed {rotating} (--generative-seed {rotating})")
    _explore_for(official, more, rotating, DEFAULT_BUDGET if budget is None else budget)
    with capsys.disabled():
        print(fixed.report(f"fixed seed {FIXED_SEED}"))
        print(more.report(f"seed {rotating}"))
    # A mask nobody needs any more is stale: it must explain a divergence at the fixed
    # seed or a committed scenario's declared diff of its decision. (Not the rotating
    # seed's: whether an hour's scenarios need a mask is chance, and a verdict must not
    # change with the hour.)
    committed = {
        diff["decision"] for name in NAMES for diff in load_scenario(name).get("declaredDiffs", [])
    }
    seen = set(fixed.masked) | committed
    stale = [mask.decision for mask in MASKS if mask.decision not in seen]
    assert not stale, f"masks that explain nothing (remove them or the decision): {stale}"
