"""Workflow checks: a turn run in time slices equals the same turn run in one go.

The workflow runners (:func:`~harness_testkit.reference.run_time_slice`) cut a turn
wherever the slice budget runs out: ``suspend_turn()``, the state through JSON, a fresh
adapter and agent (another process), ``continue_stream()``. Whatever the boundaries, the
consumer must see the same content (framing and synthetic ids aside): no tool call
emitted or executed twice, none lost, and no terminal ``finish`` (nor a closed response)
on a slice that ended in a suspension.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import anyio
from hypothesis import strategies as st

from harness_testkit.reference import (
    HarnessAgent,
    ManualClock,
    PartCollector,
    Tool,
    ToolExecutionOptions,
    WorkflowState,
    WorkflowStatus,
    create_workflow_state,
    run_agent_step,
    run_time_slice,
    tool,
)
from harness_testkit.spec import ConsumerPart, ConsumerToolCallPart

from .._checks import Check, CheckFailed, property_check
from .._context import CheckContext
from ._recording import RecordingAdapter

__all__ = ["CHECKS", "normalise_content"]

_KINDS = ("text", "reasoning", "builtin", "host-tool", "mcp", "file-change", "raw")
#: Parts that only frame content: slices open and close them on their own.
_FRAMING = frozenset(
    {
        "start",
        "start-step",
        "finish-step",
        "finish",
        "abort",
        "text-start",
        "text-end",
        "reasoning-start",
        "reasoning-end",
    }
)
_MAX_SLICES = 12
_SLICE_BUDGET = 1.0


def normalise_content(parts: Sequence[ConsumerPart]) -> list[Any]:
    """Content parts only, for comparing a sliced run with an uninterrupted one.

    Framing parts are dropped; synthetic ids (approval ids, the suffix of
    ``harness-file-change-*``/``harness-compaction-*`` call ids) are erased; and a
    result's echo of its call's ``input`` is dropped (the call carries it).
    """
    out: list[Any] = []
    for part in parts:
        if part.type in _FRAMING:
            continue
        wire = json.loads(json.dumps(part.to_wire()))
        wire.pop("approvalId", None)
        call_id = wire.get("toolCallId")
        if isinstance(call_id, str) and call_id.startswith(
            ("harness-file-change-", "harness-compaction-")
        ):
            wire["toolCallId"] = call_id.rsplit("-", 1)[0]
        if part.type in ("tool-result", "tool-error"):
            wire.pop("input", None)
        out.append(wire)
    return out


def _join_deltas(items: Sequence[Any]) -> list[Any]:
    """Consecutive deltas of one block as one item: a slice boundary may split a delta."""
    out: list[Any] = []
    for item in items:
        last = out[-1] if out else None
        if (
            item.get("type") in ("text-delta", "reasoning-delta")
            and isinstance(last, dict)
            and last.get("type") == item["type"]
            and last.get("id") == item.get("id")
        ):
            out[-1] = {**last, "text": last["text"] + item["text"]}
            continue
        out.append(item)
    return out


def _split_results(items: Sequence[Any]) -> tuple[list[Any], Counter[str]]:
    """Content in order (deltas joined), and tool outcomes as a multiset.

    A host result computed while the turn was being suspended is carried in the state
    and delivered as soon as the turn continues, ahead of runtime parts that were
    buffered with the state; so an outcome may move within its step. What must hold is
    that each outcome arrives once, after its call.
    """
    content: list[Any] = []
    outcomes: Counter[str] = Counter()
    for item in items:
        if item.get("type") in ("tool-result", "tool-error"):
            outcomes[json.dumps(item, sort_keys=True)] += 1
        else:
            content.append(item)
    return _join_deltas(content), outcomes


class _ExecutionCounter:
    """A host tool that counts its executions per call id."""

    def __init__(self) -> None:
        self.by_call: Counter[str] = Counter()

    def make(self) -> Tool:
        def execute(value: Any, options: ToolExecutionOptions) -> Any:
            self.by_call[options.tool_call_id] += 1
            return {"looked": value}

        return tool(
            description="Look something up", input_schema={"type": "object"}, execute=execute
        )


def _scenarios(ctx: CheckContext) -> st.SearchStrategy[Any]:
    from harness_testkit.fake_harness import scripts

    profile = getattr(ctx.target.factory(), "profile", None)
    return st.fixed_dictionaries(
        {
            "script": scripts(
                profile=profile if profile is not None else "minimal",
                host_tools=("lookup",),
                kinds=_KINDS,
                max_turns=1,
                max_steps=3,
                max_actions=3,
            ).map(lambda script: script.to_wire()),
            # Parts written before each slice's budget runs out, one entry per slice.
            "cuts": st.lists(st.integers(min_value=1, max_value=30), min_size=1, max_size=5),
        }
    )


def _agent(
    ctx: CheckContext, script: Mapping[str, Any], counter: _ExecutionCounter
) -> tuple[HarnessAgent, RecordingAdapter]:
    from harness_testkit.scripting import Script

    adapter = ctx.adapter()
    set_script = getattr(adapter, "set_script", None)
    if set_script is None:
        raise CheckFailed("ADAPTER-032", "the adapter declares scripting but has no set_script()")
    set_script(Script.model_validate(dict(script)))
    return ctx.agent(adapter, tools={"lookup": counter.make()}), adapter


def _builtin_executions(adapters: Sequence[RecordingAdapter]) -> Counter[str]:
    from harness_testkit.scripting import ToolExecuted

    counts: Counter[str] = Counter()
    for adapter in adapters:
        log = getattr(adapter, "observations", None)
        if log is not None:
            counts.update(entry.tool_call_id for entry in log.of_kind(ToolExecuted))
    return counts


async def _release(ctx: CheckContext, state: WorkflowState) -> None:
    """A sliced run that stopped early leaves a live sandbox: reopen it to be destroyed."""
    if state.continue_from is None and (
        state.status is WorkflowStatus.FINISHED or state.resume_from is None
    ):
        return
    agent, _ = _agent(ctx, {"turns": [{"steps": []}]}, _ExecutionCounter())
    try:
        if state.continue_from is not None:
            await ctx.create_session(
                agent, session_id=state.session_id, continue_from=state.continue_from
            )
        else:
            await ctx.create_session(
                agent, session_id=state.session_id, resume_from=state.resume_from
            )
    except Exception:  # nothing left to release
        pass


def _actions(scenario: Mapping[str, Any]) -> list[str]:
    return [
        str(action.get("type"))
        for turn in scenario["script"]["turns"]
        for step in turn.get("steps", [])
        for action in step.get("actions", [])
        if isinstance(action, dict)
    ]


_HOST_STEP_SCRIPT = {
    "version": 1,
    "turns": [
        {
            "steps": [
                {
                    "actions": [
                        {"type": "text", "text": "checking"},
                        {"type": "host-tool", "tool": "lookup", "id": "h1", "input": {}},
                    ]
                },
                {"actions": [{"type": "text", "text": "all done now"}]},
            ]
        }
    ],
}


@property_check(
    "scripted.time-slices",
    title="A turn run in time slices (state through JSON, fresh agent per slice) equals one uninterrupted run",
    requirements=("ADAPTER-032", "LIFECYCLE-041", "LIFECYCLE-033", "STOP-008"),
    scenarios=_scenarios,
    needs=("resume",),
    depends_on=("scripted.continuations",),
    examples=(
        {"script": _HOST_STEP_SCRIPT, "cuts": [2]},
        {"script": _HOST_STEP_SCRIPT, "cuts": [1, 1, 1, 1]},
    ),
    classes={
        "one budget": lambda scenario: len(scenario["cuts"]) == 1,
        "several budgets": lambda scenario: len(scenario["cuts"]) > 1,
        "host tool across slices": lambda scenario: "host-tool" in _actions(scenario),
    },
)
async def time_slices(ctx: CheckContext, scenario: Mapping[str, Any]) -> None:
    script = scenario["script"]
    cuts: list[int] = list(scenario["cuts"])
    timeout = ctx.capabilities.turn_timeout

    whole_counter = _ExecutionCounter()
    whole_agent, whole_adapter = _agent(ctx, script, whole_counter)
    whole_writer = PartCollector()
    with anyio.fail_after(timeout):
        whole = await run_agent_step(
            whole_agent,
            create_workflow_state("slices-whole", prompt="go"),
            writer=whole_writer,
            destroy_on_finish=True,
        )
    if whole.status is not WorkflowStatus.FINISHED:
        raise CheckFailed(
            "LIFECYCLE-041",
            f"the uninterrupted turn did not finish ({whole.status.value}: {whole.error})",
        )

    counter = _ExecutionCounter()
    clock = ManualClock()
    sliced_parts: list[ConsumerPart] = []
    sliced_adapters: list[RecordingAdapter] = []
    closes = 0
    state = create_workflow_state("slices-split", prompt="go")
    try:
        for number in range(_MAX_SLICES):
            cut = cuts[number] if number < len(cuts) else None
            written: list[ConsumerPart] = []

            async def write(
                part: ConsumerPart, cut: int | None = cut, written: list[ConsumerPart] = written
            ) -> None:
                written.append(part)
                if cut is not None and len(written) == cut:
                    clock.advance(_SLICE_BUDGET)  # the budget runs out here

            collector = _SliceWriter(write)
            agent, adapter = _agent(ctx, script, counter)
            sliced_adapters.append(adapter)
            state = WorkflowState.from_wire(state.to_json())  # another process
            try:
                with anyio.fail_after(timeout):
                    state = await run_time_slice(
                        agent,
                        state,
                        budget_seconds=_SLICE_BUDGET,
                        clock=clock,
                        writer=collector,
                        destroy_on_finish=True,
                    )
            except TimeoutError as error:
                # A slice that never ends is the adapter's hang, reported as such (not an
                # error of the check).
                raise CheckFailed(
                    "ADAPTER-044",
                    f"time slice {number + 1} did not end within {timeout} s (its turn "
                    "neither reached the slice's budget nor settled)",
                    observed=[part.type for part in written],
                ) from error
            sliced_parts.extend(written)
            closes += collector.closed
            if state.status is WorkflowStatus.READY_FOR_NEXT_STEP:
                if any(part.type == "finish" for part in written) or collector.closed:
                    raise CheckFailed(
                        "LIFECYCLE-033",
                        f"slice {number + 1} ended in a suspension but wrote a terminal finish "
                        "or closed the response",
                        observed=[part.type for part in written],
                    )
                continue
            break
    finally:
        await _release(ctx, state)
    if state.status is not WorkflowStatus.FINISHED:
        raise CheckFailed(
            "LIFECYCLE-041",
            f"the sliced turn ended {state.status.value} instead of finishing: {state.error}",
        )
    finishes = sum(1 for part in sliced_parts if part.type == "finish")
    if finishes != 1 or closes != 1:
        raise CheckFailed(
            "LIFECYCLE-033",
            f"a sliced turn must write one terminal finish and close once; it wrote {finishes} "
            f"finish part(s) and closed {closes} time(s)",
        )
    _compare(
        ctx,
        whole_writer.parts,
        sliced_parts,
        whole_counter,
        counter,
        [whole_adapter],
        sliced_adapters,
    )


class _SliceWriter:
    """Passes parts to a callback and counts closes (a WorkflowWritable)."""

    def __init__(self, write: Any) -> None:
        self._write = write
        self.closed = 0

    async def write(self, part: ConsumerPart) -> None:
        await self._write(part)

    async def close(self) -> None:
        self.closed += 1


def _compare(
    ctx: CheckContext,
    whole_parts: Sequence[ConsumerPart],
    sliced_parts: Sequence[ConsumerPart],
    whole_counter: _ExecutionCounter,
    counter: _ExecutionCounter,
    whole_adapters: Sequence[RecordingAdapter],
    sliced_adapters: Sequence[RecordingAdapter],
) -> None:
    whole = normalise_content(whole_parts)
    sliced = normalise_content(sliced_parts)
    if ctx.capabilities.continuation != "lossless":
        # A lossy runtime recomputes the in-flight step: repeats are allowed, losses not.
        remaining = list(sliced)
        for item in whole:
            if item not in remaining:
                raise CheckFailed(
                    "ADAPTER-032",
                    f"a part of the uninterrupted turn is missing from the sliced one: {item!r}",
                    expected=whole,
                    observed=sliced,
                )
            remaining.remove(item)
        return
    calls = Counter(
        part.tool_call_id for part in sliced_parts if isinstance(part, ConsumerToolCallPart)
    )
    twice = sorted(call for call, seen in calls.items() if seen > 1)
    if twice:
        raise CheckFailed(
            "ADAPTER-032", f"tool calls emitted more than once across slices: {twice}"
        )
    whole_content, whole_outcomes = _split_results(whole)
    sliced_content, sliced_outcomes = _split_results(sliced)
    if sliced_content != whole_content or sliced_outcomes != whole_outcomes:
        raise CheckFailed(
            "ADAPTER-032",
            "the turn run in time slices differs from the uninterrupted run (gap or duplicate)",
            expected=whole,
            observed=sliced,
        )
    called: set[str] = set()
    for item in sliced:
        if item.get("type") == "tool-call":
            called.add(str(item.get("toolCallId")))
        elif (
            item.get("type") in ("tool-result", "tool-error")
            and str(item.get("toolCallId")) not in called
            and not str(item.get("toolCallId")).startswith("harness-")
        ):
            raise CheckFailed(
                "ADAPTER-032",
                f"the outcome of tool call {item.get('toolCallId')} arrived before the call "
                "when the turn was sliced",
                observed=sliced,
            )
    if counter.by_call != whole_counter.by_call:
        raise CheckFailed(
            "LIFECYCLE-033",
            "host tools ran a different number of times when the turn was sliced "
            "(a result computed during a suspension must be carried, not recomputed)",
            expected=dict(whole_counter.by_call),
            observed=dict(counter.by_call),
        )
    expected_runs = _builtin_executions(whole_adapters)
    observed_runs = _builtin_executions(sliced_adapters)
    if observed_runs != expected_runs:
        raise CheckFailed(
            "ADAPTER-032",
            "the runtime executed built-ins a different number of times when the turn was sliced",
            expected=dict(expected_runs),
            observed=dict(observed_runs),
        )


#: This module's checks, in order (listed by ``_registry.py``).
CHECKS: tuple[Check, ...] = (time_slices,)
