"""Planted bugs in the `new-adapter` skeleton die by their own requirement (issue 38).

Each zoo entry of ``_skeleton_bugs`` writes the skeleton, plants one bug and runs the
tiers it names: the gate must fail, naming the entry's requirement (and, where a check
can show the bug, exactly that check fails on it).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import pytest

from harness_testkit.conformance import RunOptions, run_suite
from harness_testkit.conformance._verdict import Gate, verdict
from harness_testkit.conformance._zoo._skeleton_bugs import (
    SKELETON_BUGS,
    SkeletonBug,
    planted_baseline,
    planted_target,
)
from harness_testkit.reference import (
    HarnessAgent,
    LocalSandboxProvider,
    PartCollector,
    ToolExecutionOptions,
    WorkflowState,
    WorkflowStatus,
    create_workflow_state,
    run_agent_step,
    step_count_is,
    tool,
)
from harness_testkit.scripting import Script, ScriptableHarness

SMOKE = RunOptions(profile="smoke")


def test_the_unplanted_skeleton_passes_the_gate_with_every_tier_required(tmp_path: Path) -> None:
    # The skeleton offers the whole surface: every MUST of both tiers is verified, so
    # even --require-tier scripted (declarations do not excuse a required tier) passes.
    report = run_suite(planted_target(None, tmp_path / "p"), SMOKE)
    gate = Gate.load_baseline(planted_baseline(tmp_path / "p"), require_tier="scripted")
    assert gate.baseline == frozenset()
    judged = verdict([report], gate)
    assert judged.ok, judged.line
    assert judged.line.startswith("PASS: all "), judged.line
    assert not [r.check_id for r in report.results if r.status in ("skip", "error", "blocked")]


@pytest.mark.parametrize("bug", SKELETON_BUGS, ids=lambda bug: bug.name)
def test_a_planted_bug_dies_by_its_own_requirement(tmp_path: Path, bug: SkeletonBug) -> None:
    report = run_suite(
        planted_target(bug, tmp_path / "p"), SMOKE, tiers=bug.tiers, check_ids=bug.checks
    )
    judged = verdict([report], Gate.load_baseline(planted_baseline(tmp_path / "p")))
    assert not judged.ok, judged.line
    failed = {r.check_id: r.failed_requirement for r in report.results if r.status == "fail"}
    if bug.check is not None:
        assert failed == {bug.check: bug.requirement}
        assert bug.check in judged.line or "MUST fail" in judged.line
    else:
        assert failed == {}
        assert any(bug.requirement in detail for detail in judged.details), judged.details
    assert not [r.check_id for r in report.results if r.status == "error"]


# The conformance checks never stop a turn with a stop condition, so none reaches the
# skeleton's pinned-checkpoint rewind (STOP-008); this drives it the way a workflow does.
_STOP_BEFORE_HOST_CALL = """
turns:
  - steps:
      - actions: [{text: planning}]
      - actions: [{hostTool: weather, id: w1}]
      - actions: [{text: "weather: {{result:w1}}"}]
"""


@pytest.mark.anyio
@pytest.mark.requirement("STOP-008")
async def test_the_skeleton_replays_the_dropped_lookahead_from_the_pinned_step(
    tmp_path: Path,
) -> None:
    # The step after each stop opens with what the agent dropped as its lookahead (the
    # host call, then the closing text); only a suspension at the pinned finish-step
    # brings it back in the next slice, run by a fresh adapter from the JSON state.
    calls: Counter[str] = Counter()

    def weather(value: Any, options: ToolExecutionOptions) -> Any:
        calls[options.tool_call_id] += 1
        return {"sunny": True}

    target = planted_target(None, tmp_path / "p")
    writer = PartCollector()
    state = create_workflow_state("pinned", prompt="go")
    slices = 0
    with anyio.fail_after(120):
        while state.status in (WorkflowStatus.NOT_STARTED, WorkflowStatus.READY_FOR_NEXT_STEP):
            adapter = target.factory()
            assert isinstance(adapter, ScriptableHarness)
            adapter.set_script(Script.from_yaml(_STOP_BEFORE_HOST_CALL))
            agent = HarnessAgent(
                harness=adapter,
                sandbox=LocalSandboxProvider(tmp_path / "sandboxes"),
                tools={"weather": tool(description="weather", execute=weather)},
                stop_when=step_count_is(1),
            )
            state = await run_agent_step(agent, state, writer=writer)
            state = WorkflowState.from_wire(json.loads(state.to_json()))
            slices += 1
    assert state.status is WorkflowStatus.FINISHED, state.error
    assert slices == 3
    assert calls == Counter({"w1": 1})
    texts = "".join(part.to_wire()["text"] for part in writer.parts if part.type == "text-delta")
    assert texts == 'planningweather: {"sunny":true}'
