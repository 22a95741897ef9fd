"""The conformance time-slice property (``scripted.time-slices``) on the fake harness."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness_testkit.fake_harness import generate_script
from harness_testkit.reference import HarnessAgent, WorkflowState, WorkflowStatus, run_time_slice

pytestmark = pytest.mark.anyio


def _time_slice_check() -> Any:
    from harness_testkit.conformance import REGISTRY
    from harness_testkit.conformance._adapter._workflow import time_slices

    assert REGISTRY["scripted.time-slices"] is time_slices
    return time_slices


def test_the_fake_harness_passes_the_time_slice_property() -> None:
    from harness_testkit.conformance._runner import RunOptions, run_check
    from harness_testkit.conformance._zoo._good_targets import self_test_targets

    check = _time_slice_check()
    for target in self_test_targets():
        result = run_check(check, target, RunOptions(profile="smoke"))
        assert result.status == "pass", f"{target.name}: {result.message}"


async def test_the_property_catches_a_finish_written_on_a_suspension(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness_testkit.conformance._adapter import _workflow as _workflow_checks
    from harness_testkit.conformance._checks import CheckFailed
    from harness_testkit.conformance._context import PROFILES, CheckContext
    from harness_testkit.conformance._zoo._good_targets import self_test_targets
    from harness_testkit.spec import ConsumerFinishPart, LanguageModelUsage

    real = run_time_slice  # what the check module calls, before the patch

    async def leaky(agent: HarnessAgent, state: WorkflowState, **options: Any) -> WorkflowState:
        new = await real(agent, state, **options)
        if new.status is WorkflowStatus.READY_FOR_NEXT_STEP:
            finish = ConsumerFinishPart(finish_reason="other", total_usage=LanguageModelUsage())
            await options["writer"].write(finish)
        return new

    monkeypatch.setattr(_workflow_checks, "run_time_slice", leaky)
    _time_slice_check()
    target = next(t for t in self_test_targets() if t.name == "self:claude-code")
    ctx = CheckContext(target, profile=PROFILES["smoke"], seed=0, sandbox="local", workdir=tmp_path)
    # Host tools and text only: no sandbox process, so the cut lands at the same place.
    script = generate_script(2, host_tools=("lookup",), max_turns=1, kinds=("text", "host-tool"))
    try:
        run = _workflow_checks.time_slices.run_scenario
        assert run is not None
        with pytest.raises(CheckFailed) as caught:
            await run(ctx, {"script": script.to_wire(), "cuts": [3, 2]})
    finally:
        await ctx.aclose()
    assert caught.value.requirement == "LIFECYCLE-033"
