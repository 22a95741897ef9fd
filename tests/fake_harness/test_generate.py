"""The seeded generator and the hypothesis strategy."""

from __future__ import annotations

import pytest
from hypothesis import given

from harness_testkit.fake_harness import (
    ACTION_KINDS,
    FakeHarness,
    Script,
    generate_script,
    profiles,
    scripts,
)
from tests.fake_harness.support import Responder, SandboxEnv, run_turn, start


def test_same_seed_same_script() -> None:
    assert generate_script(7) == generate_script(7)
    assert len({generate_script(seed).digest() for seed in range(20)}) > 15


@pytest.mark.parametrize("profile", profiles())
def test_generated_scripts_fit_the_profile(profile: str) -> None:
    builtins = set(FakeHarness(profile=profile).builtin_tools)
    for seed in range(30):
        script = generate_script(seed, profile=profile, host_tools=("a", "b"))
        assert Script.model_validate(script.to_wire()) == script
        for turn in script.turns:
            for step in turn.steps:
                for action in step.actions:
                    if action.type == "builtin":
                        assert action.tool in builtins
                    if action.type == "host-tool":
                        assert action.tool in ("a", "b")


def test_kinds_restrict_the_actions() -> None:
    script = generate_script(3, kinds=("text",), max_turns=3, max_steps=3, max_actions=4)
    kinds = {action.type for turn in script.turns for step in turn.steps for action in step.actions}
    assert kinds == {"text"}
    assert "text" in ACTION_KINDS


@given(script=scripts(profile="pi"))
def test_strategy_yields_valid_scripts(script: Script) -> None:
    assert Script.model_validate(script.to_wire()) == script


def _conditions_name_earlier_calls(script: Script) -> None:
    for turn in script.turns:
        earlier: set[str | None] = set()
        for step in turn.steps:
            if step.when is not None:
                assert step.when.tool_call_id in earlier, step.when
            earlier.update(getattr(action, "id", None) for action in step.actions)


def test_a_generated_condition_names_a_call_of_an_earlier_step_of_its_turn() -> None:
    """A condition on a call without an outcome yet never holds: a step conditioned on
    its own call (or another turn's) would be a step no runtime can ever run."""
    conditioned = 0
    for seed in range(200):
        script = generate_script(seed, max_turns=3, max_steps=4, max_actions=3)
        _conditions_name_earlier_calls(script)
        conditioned += sum(step.when is not None for turn in script.turns for step in turn.steps)
    assert conditioned > 0  # the property is not vacuous


@given(script=scripts(profile="claude-code", max_steps=4))
def test_strategy_conditions_name_earlier_calls(script: Script) -> None:
    _conditions_name_earlier_calls(script)


@pytest.mark.anyio
@pytest.mark.parametrize("profile", profiles())
async def test_generated_scripts_run_on_every_profile(sandbox: SandboxEnv, profile: str) -> None:
    for seed in range(3):
        harness = FakeHarness(generate_script(seed, profile=profile), profile=profile, seed=seed)
        session = await start(harness, sandbox, f"{profile}-{seed}")
        for _ in harness.script.turns:
            collected, error = await run_turn(session, responder=Responder())
            assert error is None
            assert collected.types()[-1] in ("finish", "error")
