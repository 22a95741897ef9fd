"""The slice machine without an event loop: parts in, consumer parts and effects out.

The machine (``reference/_turn_machine.py``) never awaits; these tests drive its steps
with ``send()`` and play the driver's part by hand, so each rule is seen as the sequence
of effects it asks for and the turn-state transitions it makes.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from harness_testkit.reference import tool
from harness_testkit.reference._effects import (
    JOIN,
    RELEASE,
    Effect,
    Emit,
    Execute,
    Execution,
    ReportFailure,
    Steps,
    Submit,
    SubmitApproval,
)
from harness_testkit.reference._ids import IdGenerator
from harness_testkit.reference._results import normalize_usage
from harness_testkit.reference._turn_machine import (
    ABORT_REASON,
    UNCLOSED_STEP_MESSAGE,
    SliceFailed,
    SliceMachine,
)
from harness_testkit.reference._turn_state import (
    ApprovalContinuation,
    FinishSummary,
    FrozenTurn,
    ResultContinuation,
    TurnCore,
    TurnState,
)
from harness_testkit.spec import (
    ConsumerFinishPart,
    ContinueTurnState,
    HarnessTurnError,
    LanguageModelUsage,
    PendingToolApproval,
    StepResponse,
    TurnSettings,
    parse_stream_part,
)

WORK_DIR = "/work/session"


def _core(**tools: Any) -> TurnCore:
    core = TurnCore(
        harness_id="mock",
        session_id="s1",
        work_dir=WORK_DIR,
        harness_builtins={},
        ids=IdGenerator(seed=7),
        clock=lambda: datetime(2026, 1, 1, tzinfo=UTC),
    )
    core.start(
        FrozenTurn(
            settings=TurnSettings(),
            merged_tools=dict(tools),
            executable_tools=dict(tools),
            tools_context={},
            builtin_filter=None,
            tool_approval={"ask": "user-approval", "never": {"type": "denied", "reason": "no"}},
        )
    )
    return core


def _machine(core: TurnCore, **kwargs: Any) -> SliceMachine:
    return SliceMachine(core=core, continuing=bool(kwargs), **kwargs)


def _run(steps: Steps[Any], answers: dict[type, Any] | None = None) -> tuple[list[Effect], Any]:
    """Drive a machine step as a driver would: answer each effect, collect them."""
    effects: list[Effect] = []
    value: Any = None
    while True:
        try:
            effect = steps.send(value)
        except StopIteration as stop:
            return effects, stop.value
        effects.append(effect)
        value = (answers or {}).get(type(effect))


def _types(effects: list[Effect]) -> list[str]:
    return [e.part.type if isinstance(e, Emit) else type(e).__name__ for e in effects]


def _part(kind: str, **fields: Any) -> Any:
    return parse_stream_part({"type": kind, **fields})


def _call(call_id: str, name: str, *, executed: bool = False, **extra: Any) -> Any:
    return _part(
        "tool-call",
        toolCallId=call_id,
        toolName=name,
        input='{"x": 1}',
        **({"providerExecuted": True} if executed else {}),
        **extra,
    )


def _finish_step() -> Any:
    return _part(
        "finish-step",
        finishReason={"unified": "stop", "raw": "end_turn"},
        usage={"inputTokens": {"total": 1}, "outputTokens": {"total": 2}},
    )


def test_a_delta_opens_the_step_then_takes_the_synchronous_path() -> None:
    machine = _machine(_core())
    delta = _part("text-delta", id="t", delta="Hello")
    assert machine.quick(delta) is None, "outside a step the delta needs the full path"
    effects, closed = _run(machine.feed(delta))
    assert _types(effects) == ["start-step", "text-delta"]
    assert closed is False
    again = machine.quick(_part("text-delta", id="t", delta=" world"))
    assert again is not None
    assert [p.type for p in again] == ["text-delta"]
    effects, closed = _run(machine.feed(_finish_step()))
    assert _types(effects) == ["JoinExecutions", "finish-step"]
    assert closed is True
    [step] = machine.outcome.steps
    assert step.content[0].to_wire() == {"type": "text", "text": "Hello world"}


def test_a_provider_executed_call_is_quick_and_its_result_waits_for_the_step_end() -> None:
    machine = _machine(_core())
    parts = machine.quick(_call("c1", "bash", executed=True))
    assert parts is not None
    assert [p.type for p in parts] == ["start-step", "tool-call"]
    result = _part("tool-result", toolCallId="c1", toolName="bash", result={"ok": True})
    assert machine.quick(result) == [], "a tool result is held, not forwarded"
    effects, _ = _run(machine.feed(_finish_step()))
    assert _types(effects) == ["JoinExecutions", "tool-result", "finish-step"]


@pytest.mark.parametrize("pause", [False, True])
def test_block_boundaries_and_finish_take_the_synchronous_path_as_feed_would(
    pause: bool,
) -> None:
    """Boundaries and ``finish`` in ``quick`` forward and record what ``feed`` does; while
    a pause is requested they take the full path."""
    boundaries = [
        _part("reasoning-start", id="r"),
        _part("reasoning-end", id="r"),
        _part("text-start", id="t"),
        _part("text-end", id="t"),
    ]
    final = _part(
        "finish",
        finishReason={"unified": "stop", "raw": "end_turn"},
        totalUsage={"inputTokens": {"total": 1}, "outputTokens": {"total": 2}},
    )
    quick, fed = _machine(_core(client=tool())), _machine(_core(client=tool()))
    if pause:  # a client call asks for a pause once its step's batch is complete
        for machine in (quick, fed):
            _run(machine.feed(_call("c1", "client")))
            assert machine.pause_requested
    quick_parts: list[Any] = []
    fed_parts: list[Any] = []
    for part in [*boundaries, final]:
        got = quick.quick(part)
        if pause:
            assert got is None
            continue
        assert got is not None
        quick_parts += got
        fed_parts += _emitted(_run(fed.feed(part))[0])
    if not pause:
        assert quick_parts == fed_parts
        assert [p.type for p in quick_parts] == ["start-step", *(p.type for p in boundaries)]
        assert quick.outcome.finish == fed.outcome.finish
        assert quick.outcome.finish == FinishSummary(
            "stop", "end_turn", normalize_usage(final.total_usage), None
        )
        assert quick.step_open
        assert not quick.step_has_content


def _quick_machine(core: TurnCore | None = None) -> SliceMachine:
    """A machine whose driver evaluates no stop condition between steps."""
    return SliceMachine(core=core or _core(), continuing=False, stop_conditions=False)


def _emitted(effects: list[Effect]) -> list[Any]:
    return [effect.part for effect in effects if isinstance(effect, Emit)]


@pytest.mark.parametrize(("opened", "held"), [(False, 0), (True, 0), (True, 1)])
def test_a_finish_step_takes_the_synchronous_path_with_the_same_outcome(
    held: int, opened: bool
) -> None:
    """Closing a step in ``quick`` forwards and records exactly what ``feed`` does."""
    parts = []
    if opened:
        parts.append(_call("c1", "bash", executed=True))
    if held:
        parts.append(_part("tool-result", toolCallId="c1", toolName="bash", result=[1]))
    quick, fed = _quick_machine(_core(bash=tool())), _quick_machine(_core(bash=tool()))
    for part in parts:
        assert quick.quick(part) is not None
        assert fed.quick(part) is not None
    closed = quick.quick(_finish_step())
    assert closed is not None
    effects, finished = _run(fed.feed(_finish_step()))
    assert finished is True
    assert closed == _emitted(effects)
    assert [p.type for p in closed] == (["tool-result"] if held else []) + (
        [] if opened or held else ["start-step"]
    ) + ["finish-step"]
    assert quick.outcome.steps == fed.outcome.steps
    assert not quick.step_open
    assert not quick.step_has_content
    # The next step starts afresh on both.
    assert quick.quick(_call("c2", "bash", executed=True)) == fed.quick(
        _call("c2", "bash", executed=True)
    )


def test_a_finish_step_takes_the_full_path_when_the_driver_has_stop_conditions() -> None:
    machine = _machine(_core())  # stop conditions by default: the driver must see the step
    assert machine.quick(_call("c1", "bash", executed=True)) is not None
    assert machine.quick(_finish_step()) is None
    assert machine.outcome.steps == []


def test_a_finish_step_after_a_background_execution_waits_for_the_join() -> None:
    echo = tool(execute=lambda value, options: value)
    machine = _quick_machine(_core(echo=echo))
    effects, _ = _run(machine.feed(_call("c1", "echo")))
    assert isinstance(effects[-1], Execute)
    assert machine.quick(_finish_step()) is None, "its JOIN must wait for the execution"
    effects, _ = _run(machine.feed(_finish_step()))
    assert _types(effects) == ["JoinExecutions", "finish-step"]
    # Joined: the next step closes synchronously again.
    assert machine.quick(_call("c2", "echo", executed=True)) is not None
    closed = machine.quick(_finish_step())
    assert closed is not None
    assert [p.type for p in closed] == ["finish-step"]


def test_a_finish_step_with_a_pause_requested_takes_the_full_path() -> None:
    machine = _quick_machine(_core(client=tool()))
    _run(machine.feed(_call("c1", "client", stepToolCallCount=2)))
    assert machine.pause_requested
    assert not machine.pause_due(), "the batch is not complete yet"
    assert machine.quick(_finish_step()) is None


def test_the_resumed_steps_finish_step_takes_the_full_path() -> None:
    machine = _quick_machine()
    machine.swallow_next_finish_step = True  # as settling a continuation sets it (5.4.9)
    assert machine.quick(_finish_step()) is None
    effects, _ = _run(machine.feed(_finish_step()))
    assert _types(effects) == ["JoinExecutions"]
    assert machine.outcome.steps == []


def test_a_finish_step_with_more_than_two_parts_to_forward_takes_the_full_path() -> None:
    lone = _quick_machine()  # a result without its call: start-step, result, finish-step
    assert lone.quick(_part("tool-result", toolCallId="c0", toolName="bash", result=1)) == []
    assert lone.quick(_finish_step()) is None
    machine = _quick_machine()
    assert machine.quick(_call("c1", "bash", executed=True)) is not None
    assert machine.quick(_call("c2", "bash", executed=True)) is not None
    for call_id in ("c1", "c2"):
        result = _part("tool-result", toolCallId=call_id, toolName="bash", result=1)
        assert machine.quick(result) == []
    assert machine.quick(_finish_step()) is None
    effects, _ = _run(machine.feed(_finish_step()))
    assert _types(effects) == ["JoinExecutions", "tool-result", "tool-result", "finish-step"]


def test_a_host_call_runs_its_tool_in_the_background() -> None:
    echo = tool(execute=lambda value, options: value)
    machine = _machine(_core(echo=echo))
    effects, _ = _run(machine.feed(_call("c1", "echo")))
    assert _types(effects) == ["start-step", "tool-call", "Execute"]
    execute = effects[-1]
    assert isinstance(execute, Execute)
    assert execute.background
    assert execute.tool is echo
    assert machine.core.state is TurnState.RUNNING
    assert not machine.pause_due()


def test_an_unknown_host_call_is_denied_without_running_anything() -> None:
    machine = _machine(_core())
    effects, _ = _run(machine.feed(_call("c1", "ghost")))
    submit = effects[-1]
    assert isinstance(submit, Submit)
    assert submit.background
    assert submit.output["type"] == "execution-denied"
    assert "ghost" in submit.output["reason"]


def test_a_denied_tool_gets_an_automatic_approval_pair_and_a_denial() -> None:
    machine = _machine(_core(never=tool(execute=lambda value, options: value)))
    effects, _ = _run(machine.feed(_call("c1", "never")))
    assert _types(effects) == [
        "start-step",
        "tool-call",
        "tool-approval-request",
        "tool-approval-response",
        "Submit",
    ]
    assert effects[-1] == Submit(
        "c1", {"type": "execution-denied", "reason": "no"}, None, background=True
    )


def test_a_user_approval_records_the_request_and_pauses_after_the_batch() -> None:
    core = _core(ask=tool(execute=lambda value, options: value))
    machine = _machine(core)
    _run(machine.feed(_call("c1", "ask", stepToolCallCount=2)))
    assert core.state is TurnState.AWAITING_APPROVAL
    [record] = core.pending_approvals.values()
    assert record.tool_call_id == "c1"
    assert record.kind == "custom"
    assert not machine.pause_due(), "the step announced a second call"
    _run(machine.feed(_call("c2", "bash", executed=True)))
    assert machine.pause_due()
    effects, _ = _run(machine.pause())
    assert _types(effects) == ["JoinExecutions", "finish-step", "finish"]
    assert machine.outcome.paused
    assert core.state is TurnState.AWAITING_APPROVAL


def test_a_client_tool_waits_for_its_result() -> None:
    core = _core(client=tool())
    machine = _machine(core)
    _run(machine.feed(_call("c1", "client")))
    assert core.state is TurnState.AWAITING_TOOL_RESULT
    assert "c1" in core.pending_results
    assert machine.pause_due()


def test_an_approved_continuation_runs_the_tool_inline_and_forwards_its_result() -> None:
    core = _core(ask=tool(execute=lambda value, options: value))
    core.ask_approval(
        PendingToolApproval(
            approval_id="a1",
            tool_call_id="c1",
            tool_name="ask",
            input='{"x": 1}',
            kind="custom",
            provider_executed=False,
        )
    )
    machine = _machine(core, approvals=[ApprovalContinuation("a1", approved=True)])
    effects, _ = _run(machine.settle_continuations(), {Execute: Execution(ok=True, value={"x": 1})})
    assert _types(effects) == ["tool-approval-response", "Execute", "tool-result"]
    assert isinstance(effects[1], Execute)
    assert not effects[1].background
    assert not core.pending_approvals
    assert "c1" in core.settled_call_ids
    assert machine.swallow_next_finish_step


def test_a_builtin_approval_is_answered_to_the_adapter() -> None:
    core = _core()
    core.ask_approval(
        PendingToolApproval(
            approval_id="a1",
            tool_call_id="c1",
            tool_name="bash",
            input="{}",
            kind="builtin",
            provider_executed=True,
        )
    )
    machine = _machine(core, approvals=[ApprovalContinuation("a1", approved=False, reason="r")])
    effects, _ = _run(machine.settle_continuations())
    assert effects[-1] == SubmitApproval("a1", False, "r")


def test_a_result_continuation_is_submitted_and_its_call_settled() -> None:
    core = _core(client=tool())
    machine = _machine(core)
    _run(machine.feed(_call("c1", "client")))
    follow = _machine(core, results=[ResultContinuation("c1", output={"v": 2})])
    effects, _ = _run(follow.settle_continuations())
    assert effects == [Submit("c1", {"v": 2}, None, None)]
    assert not core.pending_results
    assert "c1" in core.settled_call_ids


def test_a_result_computed_while_suspending_is_captured_not_sent() -> None:
    core = _core(echo=tool(execute=lambda value, options: value))
    machine = _machine(core)
    _run(machine.feed(_call("c1", "echo")))
    core.begin_suspending()
    machine.capture_suspended("c1", {"x": 1}, None, None)
    assert core.state is TurnState.AWAITING_TOOL_RESULT
    stored = core.pending_results["c1"].completed_result
    assert stored is not None
    assert stored.output == {"x": 1}
    effects, _ = _run(machine.close_suspended())
    assert _types(effects) == ["tool-result", "finish"], "a continuation part opens no step"
    with pytest.raises(HarnessTurnError, match="Unknown suspended tool call 'c9'"):
        machine.capture_suspended("c9", 1, None, None)


def test_an_approval_request_for_an_unknown_call_fails_the_slice() -> None:
    machine = _machine(_core())
    request = _part("tool-approval-request", approvalId="a1", toolCallId="nope")
    with pytest.raises(SliceFailed, match="unknown tool call 'nope'"):
        _run(machine.feed(request))


def test_a_stream_that_closes_inside_a_step_fails_and_releases_the_turn() -> None:
    machine = _machine(_core())
    _run(machine.feed(_part("text-delta", id="t", delta="x")))
    effects, _ = _run(machine.stream_closed(aborted=False))
    assert effects[0] is RELEASE
    assert isinstance(effects[1], ReportFailure)
    assert _types(effects)[-1] == "error"
    assert str(machine.outcome.error) == UNCLOSED_STEP_MESSAGE


def test_an_aborted_stream_ends_with_the_abort_part() -> None:
    machine = _machine(_core())
    effects, _ = _run(machine.stream_closed(aborted=True))
    assert _types(effects) == ["ReleaseTurn", "abort"]
    assert machine.outcome.aborted
    assert machine.outcome.abort_reason == ABORT_REASON


def test_a_stop_condition_suspends_the_turn_and_keeps_nothing_for_the_next_slice() -> None:
    core = _core()
    core.keep_buffered([_part("text-delta", id="t", delta="later")])
    machine = _machine(core)
    captured = ContinueTurnState(harness_id="mock", data={})
    effects, _ = _run(machine.stopped(captured))
    assert _types(effects) == ["finish"]
    assert core.state is TurnState.SUSPENDED
    assert core.buffered_parts == []
    assert core.captured_state is captured
    assert machine.outcome.suspended


def test_a_finished_stream_releases_the_turn_before_finish() -> None:
    machine = _machine(_core())
    effects, _ = _run(machine.stream_closed(aborted=False))
    assert effects[0] is RELEASE
    assert _types(effects)[1:] == ["finish"]
    assert JOIN not in effects, "the driver joins executions before the stream closes"


def test_only_a_step_less_slice_records_its_empty_response() -> None:
    """The response a step-less slice reports is its StepResponse's wire form; a slice
    with steps answers with its last step's and records none."""
    machine = _machine(_core())
    effects, _ = _run(machine.stream_closed(aborted=False))
    assert (
        machine.outcome.empty_response
        == StepResponse(
            id=f"{machine.call_id}-0", timestamp="2026-01-01T00:00:00+00:00", model_id=""
        ).to_wire()
    )
    # The finish part, built from validated values, is the constructor's.
    last = effects[-1]
    assert isinstance(last, Emit)
    finish = last.part
    expected = ConsumerFinishPart(
        finish_reason="other",
        raw_finish_reason=None,
        total_usage=LanguageModelUsage(),
        provider_metadata=None,
    )
    assert finish == expected
    assert repr(finish) == repr(expected)
    assert finish.model_fields_set == expected.model_fields_set
    assert finish.to_wire() == expected.to_wire()

    stepped = _machine(_core())
    _run(stepped.feed(_part("text-delta", id="t", delta="x")))
    _run(stepped.feed(_finish_step()))
    _run(stepped.stream_closed(aborted=False))
    assert stepped.outcome.steps
    assert stepped.outcome.empty_response is None
