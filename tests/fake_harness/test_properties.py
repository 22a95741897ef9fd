"""Properties over random scripts: determinism, and exact suspension/continuation.

Example counts follow the hypothesis profile of ``tests/conftest.py`` (``smoke`` by
default; ``HYPOTHESIS_PROFILE=exhaustive`` for many more).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness_testkit.fake_harness import (
    FakeHarness,
    Script,
    ToolExecuted,
    get_profile,
    profiles,
    scripts,
)
from harness_testkit.sandbox import LocalSandboxProvider
from harness_testkit.spec import PERMISSION_MODES, PromptTurnOptions, parse_lifecycle_state
from tests.fake_harness.support import (
    Collector,
    Responder,
    SandboxEnv,
    continue_turn,
    drive,
    run_turn,
    start,
    wait_for,
)

pytestmark = pytest.mark.anyio


def _approve(part: dict[str, Any]) -> tuple[bool, str | None]:
    approved = sum(map(ord, part["approvalId"])) % 2 == 0
    return approved, None if approved else "policy says no"


RESPONDER = Responder(approve=_approve)


def answered_host_request(part: dict[str, Any], before_cut: list[dict[str, Any]]) -> bool:
    """Whether a lossy rerun skips ``part``: a host request answered before the cut.

    The test host answers every host call and approval request as soon as it sees it
    (and the suspension waits for that), so every one emitted before the cut counts.
    """
    host_calls = {
        p["toolCallId"]
        for p in before_cut
        if p["type"] == "tool-call" and not p.get("providerExecuted")
    }
    if part["type"] == "tool-approval-request":
        return True
    if part["type"] == "tool-call":
        return part["toolCallId"] in host_calls
    if part["type"] in ("tool-input-start", "tool-input-delta", "tool-input-end"):
        return part["id"] in host_calls
    return False


@st.composite
def cases(draw: st.DrawFn) -> tuple[str, Script, int, str]:
    profile = draw(st.sampled_from(profiles()))
    script = draw(scripts(profile=profile, max_turns=2, max_steps=3, max_actions=3))
    seed = draw(st.integers(0, 2**16))
    modes = (
        PERMISSION_MODES if get_profile(profile).supports_builtin_tool_approvals else ("allow-all",)
    )
    return profile, script, seed, draw(st.sampled_from(modes))


@asynccontextmanager
async def sandboxes(count: int) -> AsyncIterator[list[SandboxEnv]]:
    """``count`` fresh sandboxes whose work dirs have equal lengths (token counts match)."""
    base = Path(tempfile.mkdtemp(prefix="fh-prop-"))
    envs: list[SandboxEnv] = []
    try:
        for index in range(count):
            envs.append(await SandboxEnv.create(LocalSandboxProvider(base / f"p{index}"), "s"))
        yield envs
    finally:
        for env in envs:
            await env.session.destroy()
        shutil.rmtree(base, ignore_errors=True)


def normalized(parts: list[dict[str, Any]], env: SandboxEnv) -> list[str]:
    return [json.dumps(part, sort_keys=True).replace(env.work_dir, "<wd>") for part in parts]


async def run_all_turns(harness: FakeHarness, env: SandboxEnv, mode: str) -> list[str]:
    session = await start(harness, env, "s", permission_mode=mode)
    out: list[str] = []
    for turn in range(len(harness.script.turns)):
        collected, error = await run_turn(session, f"prompt {turn}", responder=RESPONDER, tools=[])
        assert error is None
        out += normalized(collected.parts, env)
    return out


@given(case=cases())
async def test_same_script_and_seed_give_the_same_events(
    case: tuple[str, Script, int, str],
) -> None:
    profile, script, seed, mode = case
    async with sandboxes(2) as (first, second):
        one = await run_all_turns(FakeHarness(script, profile=profile, seed=seed), first, mode)
        two = await run_all_turns(FakeHarness(script, profile=profile, seed=seed), second, mode)
    assert one == two


@given(case=cases(), data=st.data())
async def test_suspend_anywhere_then_continue_elsewhere(
    case: tuple[str, Script, int, str], data: st.DataObject
) -> None:
    profile, script, seed, mode = case
    async with sandboxes(2) as (reference_env, env):
        reference_session = await start(
            FakeHarness(script, profile=profile, seed=seed),
            reference_env,
            "s",
            permission_mode=mode,
        )
        reference, _ = await run_turn(reference_session, "prompt 0", responder=RESPONDER)
        expected = normalized(reference.parts, reference_env)
        if len(expected) < 2:
            return
        cut = data.draw(st.integers(1, len(expected) - 1), label="cut")

        first_harness = FakeHarness(script, profile=profile, seed=seed)
        session = await start(first_harness, env, "s", permission_mode=mode)
        first = Collector()
        control = await session.do_prompt_turn(
            PromptTurnOptions(prompt="prompt 0", emit=first.emit)
        )
        held = session.hold_before_part(cut)
        async with anyio.create_task_group() as group:
            group.start_soon(drive, control, first, RESPONDER)
            with anyio.fail_after(20):
                await held.wait()
            await wait_for(first.idle)
            state = await session.do_suspend_turn()
            group.cancel_scope.cancel()
        stored = parse_lifecycle_state(json.loads(json.dumps(state.to_wire())))

        fresh = FakeHarness(script, profile=profile, seed=seed)
        continued = await start(fresh, env, "s", permission_mode=mode, continue_from=stored)
        second, error = await continue_turn(continued, responder=RESPONDER)
        assert error is None
        got_first = normalized(first.parts, env)
        got_second = normalized(second.parts, env)
        assert got_first == expected[:cut]
        if get_profile(profile).continuation == "lossless":
            assert got_second == expected[cut:]
        else:
            finish_steps = [
                i for i, part in enumerate(reference.parts[:cut]) if part["type"] == "finish-step"
            ]
            step_start = finish_steps[-1] + 1 if finish_steps else 0
            rerun = [
                text
                for part, text in zip(
                    reference.parts[step_start:cut], expected[step_start:cut], strict=True
                )
                if not answered_host_request(part, reference.parts[:cut])
            ]
            assert got_second == rerun + expected[cut:]
        # Nothing ran twice: what ran before the cut is not executed again.
        before = {
            e.tool_call_id for e in first_harness.observations.of_kind(ToolExecuted) if e.executed
        }
        again = {e.tool_call_id for e in fresh.observations.of_kind(ToolExecuted) if e.executed}
        assert not before & again
