"""The slice machine: what one slice of a turn makes of the adapter's parts. No I/O.

This is the h11 half of the agent's turn engine (``fake_harness`` splits its engine and
runtime the same way). :class:`SliceMachine` takes harness parts and returns consumer
parts and *effects* (``_effects.py``); it never awaits, owns no task, queue or event, and
reads the clock and id generator only through the turn core (``timestamp``, ``ids``). The
driver (``_slice_runner.py``) reads the queue, performs the effects (submitting results, running
host tools, joining executions, forwarding consumer parts with backpressure) and sends
their values back.

The machine's steps are generators: each yields effects and receives what performing
them returned, so a multi-step rule (settle an approval: forward the response, run the
tool, forward its result) reads top to bottom, and a test drives it with ``send()``
without an event loop. Parts that need no effect but forwarding (text and reasoning
deltas in an open step, tool results, provider-executed calls) have a synchronous path,
:meth:`SliceMachine.quick`, which the driver also uses inside the adapter's ``emit``.

Every change of the turn's state goes through :class:`TurnCore`'s transition methods.

One idea: the slice's state machine. Step framing, held outcomes, the swallowed resumed
step, pauses, suspension capture and continuation settling all read and write the same
slice state (open step, held parts, settled calls), so their rules stay in one class.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness_testkit.spec import (
    CompactionPart,
    CompletedToolResult,
    ConsumerAbortPart,
    ConsumerErrorPart,
    ConsumerFinishPart,
    ConsumerPart,
    ConsumerStartStepPart,
    ConsumerToolApprovalRequestPart,
    ConsumerToolApprovalResponsePart,
    ConsumerToolCallPart,
    ConsumerToolErrorPart,
    ConsumerToolInputDeltaPart,
    ConsumerToolInputEndPart,
    ConsumerToolInputStartPart,
    ConsumerToolResultPart,
    ContinueTurnState,
    FileChangePart,
    FinishPart,
    FinishStepPart,
    HarnessTurnError,
    InvalidLifecycleStateError,
    LanguageModelUsage,
    PendingToolApproval,
    PendingToolResult,
    ReasoningDeltaPart,
    ReasoningEndPart,
    ReasoningStartPart,
    StreamPart,
    StreamStartPart,
    TextDeltaPart,
    TextEndPart,
    TextStartPart,
    ToolApprovalRequestPart,
    ToolCallPart,
    ToolInputDeltaPart,
    ToolInputEndPart,
    ToolInputStartPart,
    ToolResultPart,
    find_non_json,
    inactive_tool_reason,
    is_builtin_tool_included,
)
from harness_testkit.spec import ProviderMetadata as Metadata

from ._effects import (
    JOIN,
    RELEASE,
    Emit,
    Execute,
    Execution,
    ReportFailure,
    Steps,
    Submit,
    SubmitApproval,
    error_string,
    json_or_raw,
    jsonable,
)
from ._fast import (
    CallFields,
    Trusted,
    WireToolResult,
    wire_boundary,
    wire_delta,
    wire_finish,
    wire_finish_step,
    wire_tool_call,
    wire_tool_result,
)
from ._results import StepContent, add_usage, normalize_usage, step_result
from ._strip import StreamingStripper, strip_value
from ._translate import (
    compaction_parts,
    consumer_call,
    consumer_delta,
    file_change_parts,
    finish_step_part,
    harness_outcome,
    host_outcome,
    text_like_part,
    wire_outcome,
)
from ._turn_state import (
    ApprovalContinuation,
    FinishSummary,
    ResultContinuation,
    SliceOutcome,
    TurnCore,
)

#: Block boundaries :meth:`SliceMachine.quick` forwards (exact types: what ``feed`` does
#: for them is open the step and forward the translated part).
_QUICK_BOUNDARIES = frozenset({TextStartPart, TextEndPart, ReasoningStartPart, ReasoningEndPart})

__all__ = [
    "ABORT_REASON",
    "CONTEXT_FAILED_OUTPUT",
    "QUESTIONS_TOOL",
    "UNCLOSED_STEP_MESSAGE",
    "SliceFailed",
    "SliceMachine",
]

UNCLOSED_STEP_MESSAGE = (
    "HarnessAgent: received terminal finish with unclosed step content. "
    "Harness adapters must emit `finish-step` before `finish`."
)
CONTEXT_FAILED_OUTPUT = {"error": "Tool context validation failed."}
QUESTIONS_TOOL = "askUserQuestions"
#: anyio events carry no reason, so the abort part always says what a TypeScript consumer
#: sees for an AbortController aborted without a reason (``String(signal.reason)``).
ABORT_REASON = "AbortError: This operation was aborted"
_new_start_step = Trusted(ConsumerStartStepPart, factories=("request", "warnings"))
_new_finish = Trusted(
    ConsumerFinishPart, "finish_reason", "raw_finish_reason", "total_usage", "provider_metadata"
)


def _start_step() -> ConsumerStartStepPart:
    """A fresh ``start-step`` (its request and warnings are mutable), not re-validated."""
    return _new_start_step.ordered({"type": "start-step", "request": {}, "warnings": []})


class SliceFailed(Exception):
    """The slice fails with ``error`` (a rule of the contract was broken)."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


@dataclass
class _SeenCall:
    harness: CallFields
    consumer: ConsumerToolCallPart
    provider_executed: bool


class SliceMachine:
    """The state of one slice and its transitions. See the module docstring.

    Args:
        core: The session's turn (plain state, changed through its transitions).
        continuing: Whether the slice continues an unfinished turn.
        approvals: Approval continuations to settle before reading.
        results: Result continuations to settle before reading.
        model_id: The turn's model id (``''`` when none).
        stop_conditions: Whether the driver evaluates stop conditions between steps; then
            every ``finish-step`` goes through :meth:`feed` (which tells the driver that a
            step closed), never through :meth:`quick`.
    """

    def __init__(
        self,
        *,
        core: TurnCore,
        continuing: bool,
        approvals: Sequence[ApprovalContinuation] = (),
        results: Sequence[ResultContinuation] = (),
        model_id: str = "",
        stop_conditions: bool = True,
    ) -> None:
        frozen = core.frozen
        assert frozen is not None, "a slice needs the turn's frozen settings"
        self.core = core
        self.frozen = frozen
        self.continuing = continuing
        self.approvals = list(approvals)
        self.results = list(results)
        self.model_id = model_id
        self.stop_conditions = stop_conditions
        self.call_id = core.ids()
        self.outcome = SliceOutcome()
        self.work_dir = core.work_dir
        self.stripper = StreamingStripper(core.work_dir)
        # step state
        self.step_open = False
        self.step_has_content = False
        self.step_content = StepContent()
        # Deferred outcomes (2.2.12), flushed at the step boundary. ``True``: a step part
        # (a harness tool result, a preliminary host result: opens the step, is content);
        # ``False``: a continuation part (a host result captured while suspending).
        self.held: list[tuple[ConsumerPart, bool]] = []
        self.swallow_next_finish_step = False
        self.expected_calls: int | None = None
        self.seen_in_step = 0
        #: A host-input pause is due once the step's batch of calls is complete.
        self.pause_requested = False
        #: A background submission or execution was asked for since the last join: the
        #: next step boundary must wait for it (a finish-step then takes :meth:`feed`).
        self.unjoined = False
        # slice state
        self.seen_calls: dict[str, _SeenCall] = {}
        self.builtin_settled: set[str] = set()
        self.consumed_approvals: set[str] = set()

    # -- queries the driver asks ---------------------------------------------------------

    def pause_due(self) -> bool:
        """A pause was requested and the step's batch of tool calls is complete."""
        return self.pause_requested and (
            self.expected_calls is None or self.seen_in_step >= self.expected_calls
        )

    def over(self) -> bool:
        """The slice has paused or failed: the driver reads no further part."""
        return self.outcome.paused or self.outcome.error is not None

    # -- the synchronous path --------------------------------------------------------------

    def quick(self, part: StreamPart) -> list[ConsumerPart] | None:
        """The consumer parts of ``part`` when it needs no effect; ``None`` otherwise.

        Only parts whose handling never waits and changes no pause or stop decision
        qualify: text and reasoning deltas inside an open step, block boundaries and the
        ``finish`` part while no pause is pending, tool results (held until the step
        closes), provider-executed tool calls while no pause is pending, and a
        ``finish-step`` when nothing happens between steps (see :meth:`_quick_step`). At
        most two parts come back (``start-step`` and the part, or a held outcome and the
        consumer ``finish-step``).
        """
        kind = type(part)
        if kind is FinishStepPart:
            return self._quick_step(part)  # type: ignore[arg-type]
        if kind in _QUICK_BOUNDARIES:
            if self.pause_requested:
                return None
            translated = text_like_part(part)
            assert translated is not None, "every block boundary translates"
            return self._quick_boundary(translated[0])
        if kind is FinishPart:
            if self.pause_requested:
                return None
            self.outcome.finish = FinishSummary.of(part)  # type: ignore[arg-type]
            return []
        if kind is TextDeltaPart or kind is ReasoningDeltaPart:
            if not self.step_open:
                return None
            consumer: ConsumerPart = consumer_delta(part)  # type: ignore[arg-type]
            self.step_has_content = True
            self.step_content.add(consumer)
            return [consumer]
        if kind is ToolResultPart:
            self._hold_tool_result(part)  # type: ignore[arg-type]
            return []
        if kind is not ToolCallPart:
            return None
        return self._quick_call(part)  # type: ignore[arg-type]

    def _quick_boundary(self, consumer: ConsumerPart) -> list[ConsumerPart]:
        """A block boundary while no pause is pending: forwarded, opening the step."""
        if self.step_open:
            return [consumer]
        self.step_open = True
        return [_start_step(), consumer]

    def _quick_call(self, call: CallFields) -> list[ConsumerPart] | None:
        """A provider-executed call while no pause is pending: forwarded at once."""
        if call.provider_executed is not True or self.pause_requested:
            return None
        if self._settled(call):
            return []
        # May raise: nothing has changed yet.
        consumer = consumer_call(call, self.work_dir, self.frozen.merged_tools)
        self._note_call(call, consumer)
        out: list[ConsumerPart] = []
        if not self.step_open:
            self.step_open = True
            out.append(_start_step())
        out.append(consumer)
        self.step_has_content = True
        self.step_content.add(consumer)
        return out

    def quick_wire(self, obj: dict[str, Any]) -> list[ConsumerPart] | None:
        """:meth:`quick` straight from a wire dict, for the plain shapes the wire readers of ``_fast`` take
        (a delta inside an open step, a provider-executed call, a tool result, a
        ``finish-step``, a block boundary, the ``finish``); ``None`` for anything else (the
        caller parses it and asks :meth:`quick`). May raise where :meth:`quick` would,
        having changed nothing."""
        kind = obj.get("type")
        if kind == "text-delta" or kind == "reasoning-delta":
            if not self.step_open:
                return None
            consumer = wire_delta(obj)
            if consumer is None:
                return None
            self.step_has_content = True
            self.step_content.add(consumer)
            return [consumer]
        if kind == "tool-result":
            result = wire_tool_result(obj, self.work_dir)
            if result is None:
                return None
            self._hold_wire_result(result)
            return []
        if kind == "tool-call":
            call = wire_tool_call(obj)
            return None if call is None else self._quick_call(call)
        if kind == "finish-step" and self._step_closes_now():
            step = wire_finish_step(obj)
            if step is None:
                return None
            return self._close_step_parts(step.unified, step.raw, step.usage, None)
        if self.pause_requested:
            return None
        if kind == "finish":
            finish = wire_finish(obj)
            if finish is None:
                return None
            self.outcome.finish = FinishSummary(finish.unified, finish.raw, finish.usage, None)
            return []
        boundary = wire_boundary(obj)
        return None if boundary is None else self._quick_boundary(boundary)

    def _quick_step(self, part: FinishStepPart) -> list[ConsumerPart] | None:
        """A ``finish-step`` closes its step at once when :meth:`feed` would do nothing
        else: no stop condition to evaluate, no execution to join (its ``JOIN`` would not
        wait), no pause requested (closing the step could make it due), no resumed step
        to swallow, and at most two parts to forward."""
        if not self._step_closes_now():
            return None
        reason = part.finish_reason
        return self._close_step_parts(
            reason.unified, reason.raw, normalize_usage(part.usage), part.harness_metadata
        )

    def _step_closes_now(self) -> bool:
        return not (
            self.stop_conditions
            or self.unjoined
            or self.pause_requested
            or self.swallow_next_finish_step
            or len(self.held) + (not self.step_open) > 1
        )

    # -- part handling -------------------------------------------------------------------

    def feed(self, part: StreamPart) -> Steps[bool]:
        """Process one harness part; returns True when it closed a step."""
        if isinstance(part, StreamStartPart):
            if part.model_id and not self.outcome.steps:
                self.model_id = part.model_id
            return False
        translated = text_like_part(part)
        if translated is not None:
            consumer, is_content = translated
            yield from self._forward(consumer, content=is_content)
        elif isinstance(part, ToolInputStartPart | ToolInputDeltaPart | ToolInputEndPart):
            yield from self._tool_input(part)
        elif isinstance(part, ToolCallPart):
            yield from self._tool_call(part)
        elif isinstance(part, ToolApprovalRequestPart):
            yield from self._approval_request(part)
        elif isinstance(part, ToolResultPart):
            self._hold_tool_result(part)
        elif isinstance(part, FinishStepPart):
            yield from self._finish_step(part)
            return True
        elif isinstance(part, FinishPart):
            self.outcome.finish = FinishSummary.of(part)
        elif isinstance(part, FileChangePart):
            call_id = "harness-file-change-" + self.core.ids()
            for consumer in file_change_parts(part, call_id, self.work_dir):
                yield from self._forward(consumer, content=True)
        elif isinstance(part, CompactionPart):
            call_id = "harness-compaction-" + self.core.ids()
            for consumer in compaction_parts(part, call_id):
                yield from self._forward(consumer, content=True)
        return False

    def _open_step(self) -> Steps[None]:
        if not self.step_open:
            self.step_open = True
            yield Emit(_start_step())

    def _forward(self, part: ConsumerPart, *, content: bool = False) -> Steps[None]:
        yield from self._open_step()
        yield Emit(part)
        if content:
            self.step_has_content = True
            self.step_content.add(part)

    def _tool_input(
        self, part: ToolInputStartPart | ToolInputDeltaPart | ToolInputEndPart
    ) -> Steps[None]:
        if part.id in self.core.settled_call_ids or part.id in self.builtin_settled:
            return
        if isinstance(part, ToolInputStartPart):
            yield from self._forward(
                ConsumerToolInputStartPart(
                    id=part.id,
                    tool_name=part.tool_name,
                    provider_metadata=part.provider_metadata,
                    provider_executed=part.provider_executed,
                    dynamic=part.dynamic,
                    title=part.title,
                )
            )
        elif isinstance(part, ToolInputDeltaPart):
            text = self.stripper.push(part.id, part.delta)
            if text:
                yield from self._forward(
                    ConsumerToolInputDeltaPart(
                        id=part.id, delta=text, provider_metadata=part.provider_metadata
                    )
                )
        else:
            held = self.stripper.flush(part.id)
            if held:
                yield from self._forward(ConsumerToolInputDeltaPart(id=part.id, delta=held))
            yield from self._forward(
                ConsumerToolInputEndPart(id=part.id, provider_metadata=part.provider_metadata)
            )

    def _settled(self, part: CallFields) -> bool:
        # A replay of a call this slice already settled (5.4.5, 5.4.8).
        return (
            part.tool_call_id in self.core.settled_call_ids
            or part.tool_call_id in self.builtin_settled
        )

    def _note_call(self, part: CallFields, consumer: ConsumerToolCallPart) -> None:
        self.seen_calls[part.tool_call_id] = _SeenCall(
            part, consumer, part.provider_executed is True
        )
        if self.seen_in_step == 0 and part.step_tool_call_count is not None:
            self.expected_calls = part.step_tool_call_count
        self.seen_in_step += 1

    def _tool_call(self, part: ToolCallPart) -> Steps[None]:
        if self._settled(part):
            return
        consumer = consumer_call(part, self.work_dir, self.frozen.merged_tools)
        self._note_call(part, consumer)
        yield from self._forward(consumer, content=True)
        if part.provider_executed is not True:
            yield from self._host_call(part, consumer)

    def _host_call(self, part: ToolCallPart, consumer: ConsumerToolCallPart) -> Steps[None]:
        """Dispatch a call the host runs: deny, ask, wait for a client, or execute (4.9)."""
        name = part.tool_name
        if (
            name == QUESTIONS_TOOL
            and QUESTIONS_TOOL in self.core.harness_builtins
            and is_builtin_tool_included(self.frozen.builtin_filter, name)
        ):
            self._ask_result(part)
            return
        tool = self.frozen.executable_tools.get(name)
        if tool is None:
            # Inactive, unknown or a built-in name dispatched to the host (4.9).
            self.unjoined = True
            yield Submit(
                part.tool_call_id,
                {"type": "execution-denied", "reason": inactive_tool_reason(name)},
                None,
                background=True,
            )
            return
        if consumer.invalid and tool.execute is not None:
            # Never run (or ask to run) an executor on input that violates its schema
            # (HOSTTOOL-004); the runtime gets the validation error instead.
            self.unjoined = True
            yield Submit(
                part.tool_call_id,
                {"error": error_string(consumer.error)},
                True,
                background=True,
            )
            return
        status, reason = self._approval_status(name)
        if status == "denied":
            approval_id = self.core.ids()
            yield from self._forward(
                ConsumerToolApprovalRequestPart(
                    approval_id=approval_id, tool_call=consumer, is_automatic=True
                ),
                content=True,
            )
            yield from self._forward(
                ConsumerToolApprovalResponsePart(
                    approval_id=approval_id,
                    tool_call=consumer,
                    approved=False,
                    reason=reason,
                    provider_executed=False,
                ),
                content=True,
            )
            self.unjoined = True
            yield Submit(part.tool_call_id, _denied(reason), None, background=True)
            return
        if status == "user-approval":
            approval_id = self.core.ids()
            self.core.ask_approval(
                PendingToolApproval(
                    approval_id=approval_id,
                    tool_call_id=part.tool_call_id,
                    tool_name=name,
                    input=part.input,
                    kind="custom",
                    provider_executed=False,
                    native_name=part.native_name,
                )
            )
            yield from self._forward(
                ConsumerToolApprovalRequestPart(approval_id=approval_id, tool_call=consumer),
                content=True,
            )
            self.pause_requested = True
            return
        if tool.execute is None:
            self._ask_result(part)
            return
        self.unjoined = True
        yield Execute(part.tool_call_id, name, part.input, tool, background=True)

    def _approval_status(self, name: str) -> tuple[str, str | None]:
        raw = self.frozen.tool_approval.get(name)
        if raw is None:
            return "not-applicable", None
        if isinstance(raw, str):
            return raw, None
        return str(raw.get("type", "not-applicable")), raw.get("reason")

    def _ask_result(self, part: ToolCallPart) -> None:
        self.core.ask_result(
            PendingToolResult(
                tool_call_id=part.tool_call_id,
                tool_name=part.tool_name,
                input=part.input,
                provider_options=part.provider_metadata,  # type: ignore[arg-type]
            )
        )
        self.pause_requested = True

    def _approval_request(self, part: ToolApprovalRequestPart) -> Steps[None]:
        seen = self.seen_calls.get(part.tool_call_id)
        if part.tool_call_id in self.builtin_settled or part.approval_id in self.consumed_approvals:
            return
        name: str | None
        if seen is not None:
            name = seen.harness.tool_name
        else:
            pending = next(
                (
                    p
                    for p in self.core.pending_approvals.values()
                    if p.tool_call_id == part.tool_call_id
                ),
                None,
            )
            name = pending.tool_name if pending is not None else None
        if name is not None and not is_builtin_tool_included(self.frozen.builtin_filter, name):
            # Approval-based fallback of built-in filtering (4.8): deny silently.
            yield SubmitApproval(part.approval_id, False, inactive_tool_reason(name))
            return
        if seen is None:
            raise SliceFailed(
                HarnessTurnError(
                    f"Harness '{self.core.harness_id}' emitted approval request "
                    f"'{part.approval_id}' for unknown tool call '{part.tool_call_id}'."
                )
            )
        self.core.ask_approval(
            PendingToolApproval(
                approval_id=part.approval_id,
                tool_call_id=part.tool_call_id,
                tool_name=seen.harness.tool_name,
                input=seen.harness.input,
                kind="builtin",
                provider_executed=seen.harness.provider_executed
                if seen.harness.provider_executed is not None
                else True,
                native_name=seen.harness.native_name,
            )
        )
        yield from self._forward(
            ConsumerToolApprovalRequestPart(approval_id=part.approval_id, tool_call=seen.consumer),
            content=True,
        )
        yield from self.pause()

    def _hold_tool_result(self, part: ToolResultPart) -> None:
        if part.tool_call_id in self.core.settled_call_ids:
            return  # the host already settled this call in the continuation (5.4.8)
        seen = self.seen_calls.get(part.tool_call_id)
        provider_executed = seen.provider_executed if seen is not None else True
        self.held.append((harness_outcome(part, provider_executed, self.work_dir), True))

    def _hold_wire_result(self, result: WireToolResult) -> None:
        """:meth:`_hold_tool_result` for a plain wire result (its value already stripped)."""
        if result.tool_call_id in self.core.settled_call_ids:
            return
        seen = self.seen_calls.get(result.tool_call_id)
        provider_executed = seen.provider_executed if seen is not None else True
        self.held.append((wire_outcome(result, provider_executed), True))

    def hold_preliminary(self, tool_call_id: str, name: str, value: Any) -> None:
        """A host tool yielded a preliminary result: held until the step closes."""
        self.held.append(
            (
                ConsumerToolResultPart(
                    tool_call_id=tool_call_id,
                    tool_name=name,
                    output=strip_value(value, self.work_dir),
                    preliminary=True,
                ),
                True,
            )
        )

    def _flush_held(self) -> Steps[None]:
        """Forward held outcomes: step parts open the step, continuation parts do not."""
        for part in self._take_held():
            yield Emit(part)

    def _take_held(self) -> list[ConsumerPart]:
        """The held outcomes to forward, with the ``start-step`` a step part needs first;
        step parts become the step's content."""
        held, self.held = self.held, []
        out: list[ConsumerPart] = []
        for outcome, in_step in held:
            if in_step:
                if not self.step_open:
                    self.step_open = True
                    out.append(_start_step())
                self.step_has_content = True
                self.step_content.add(outcome)
            out.append(outcome)
        return out

    # -- steps ---------------------------------------------------------------------------

    def _finish_step(self, part: FinishStepPart) -> Steps[None]:
        yield JOIN
        self.unjoined = False
        if self.swallow_next_finish_step:
            # The resumed step was recorded before the pause (5.4.9).
            self.swallow_next_finish_step = False
            # As upstream: held outcomes are flushed (a step part opens a consumer step),
            # then the step's content is discarded without a finish-step; the next part
            # opens a new step.
            yield from self._flush_held()
            self._reset_step()
            return
        reason = part.finish_reason
        yield from self._close_step(
            reason.unified, reason.raw, normalize_usage(part.usage), part.harness_metadata
        )

    def _close_step(
        self,
        finish_reason: str,
        raw_finish_reason: str | None,
        usage: LanguageModelUsage,
        metadata: Metadata | None,
    ) -> Steps[None]:
        for part in self._close_step_parts(finish_reason, raw_finish_reason, usage, metadata):
            yield Emit(part)

    def _close_step_parts(
        self,
        finish_reason: str,
        raw_finish_reason: str | None,
        usage: LanguageModelUsage,
        metadata: Metadata | None,
    ) -> list[ConsumerPart]:
        """Close the step: record it and return what to forward (held outcomes, the
        ``start-step`` of a step with nothing forwarded yet, the consumer ``finish-step``)."""
        out = self._take_held()
        if not self.step_open:
            self.step_open = True
            out.append(_start_step())
        step_number = len(self.outcome.steps)
        response = finish_step_part(
            f"{self.call_id}-{step_number}",
            self.core.timestamp(),
            self.model_id,
            usage,
            finish_reason,
            raw_finish_reason,
            metadata,
        )
        self.outcome.steps.append(
            step_result(
                step_number,
                self.call_id,
                f"harness:{self.core.harness_id}",
                self.model_id,
                self.step_content.parts(),
                finish_reason,
                raw_finish_reason,
                usage,
                metadata,
                self.frozen.tools_context,
                response,
            )
        )
        out.append(response)
        self._reset_step()
        return out

    def _reset_step(self) -> None:
        self.step_open = False
        self.step_has_content = False
        self.step_content = StepContent()
        self.expected_calls = None
        self.seen_in_step = 0

    # -- results computed while suspending ---------------------------------------------

    def capture_suspended(
        self,
        tool_call_id: str,
        output: Any,
        is_error: bool | None,
        tool_result: dict[str, Any] | None,
    ) -> None:
        """A host result computed while suspending is stored, not sent (6.1.7)."""
        seen = self.seen_calls.get(tool_call_id)
        pending = self.core.pending_results.get(tool_call_id)
        approval = next(
            (a for a in self.core.pending_approvals.values() if a.tool_call_id == tool_call_id),
            None,
        )
        if seen is not None:
            name, raw_input = seen.harness.tool_name, seen.harness.input
        elif pending is not None:
            name, raw_input = pending.tool_name, pending.input
        elif approval is not None:
            name, raw_input = approval.tool_name, approval.input
        else:
            raise HarnessTurnError(f"Unknown suspended tool call '{tool_call_id}'.")
        problem = find_non_json(jsonable(output), "output") or find_non_json(
            tool_result, "toolResult"
        )
        if problem is not None:
            raise InvalidLifecycleStateError(
                f"The result of tool call '{tool_call_id}' ({name}) cannot be stored in the "
                f"continue state: {problem}. Host tools must return JSON values."
            )
        self.core.store_result(
            PendingToolResult(
                tool_call_id=tool_call_id,
                tool_name=name,
                input=raw_input,
                completed_result=CompletedToolResult(
                    output=jsonable(output),
                    is_error=True if is_error else None,
                    tool_result=tool_result,
                ),
            )
        )
        if seen is not None:
            # Consumers see this outcome now; the runtime's later echo is a replay.
            self.core.settle_call(tool_call_id)
            outcome = host_outcome(
                tool_call_id,
                name,
                seen.consumer.input,
                output,
                is_error=bool(is_error),
                work_dir=self.work_dir,
            )
            self.held.append((outcome, False))  # a continuation part: opens no step

    # -- continuations ---------------------------------------------------------------------

    def settle_continuations(self) -> Steps[None]:
        """Deliver the continuation's answers before the slice reads (5.4)."""
        if not self.continuing:
            return
        approvals = {a.approval_id: a for a in self.approvals}
        for approval_id, record in list(self.core.pending_approvals.items()):
            decision = approvals.get(approval_id)
            if decision is None:
                continue
            yield from self._settle_approval(record, decision)
            if self.outcome.paused:
                return
        explicit = {r.tool_call_id: r for r in self.results}
        for call_id, pending in list(self.core.pending_results.items()):
            result = explicit.get(call_id)
            if result is not None:
                yield from self._settle_result(pending, result)
            elif pending.completed_result is not None:
                stored = pending.completed_result
                self.core.answer_result(call_id)
                yield Submit(call_id, stored.output, stored.is_error, stored.tool_result)
        if self.core.pending_approvals:
            # A partial answer re-pauses at once (APPROVAL-038): the adapter may need the
            # other answers, and reading on could wait forever.
            self.core.pause()
            self.outcome.paused = True
            yield from self._finish_result(("tool-calls", None))

    def _rebuilt_call(self, record: PendingToolApproval) -> ConsumerToolCallPart:
        seen = self.seen_calls.get(record.tool_call_id)
        if seen is not None:
            return seen.consumer
        return ConsumerToolCallPart(
            tool_call_id=record.tool_call_id,
            tool_name=record.tool_name,
            # Rebuilt in a later slice: the input as the runtime sent it, not the display
            # form with the work dir stripped (as upstream rebuilds it).
            input=json_or_raw(record.input),
            provider_executed=record.provider_executed,
        )

    def _settle_approval(
        self, record: PendingToolApproval, decision: ApprovalContinuation
    ) -> Steps[None]:
        call = self._rebuilt_call(record)
        yield Emit(
            ConsumerToolApprovalResponsePart(
                approval_id=record.approval_id,
                tool_call=call,
                approved=decision.approved,
                reason=decision.reason,
                provider_executed=record.provider_executed,
            )
        )
        self.core.answer_approval(record.approval_id)
        self.consumed_approvals.add(record.approval_id)
        self.swallow_next_finish_step = True
        if record.kind == "builtin":
            yield SubmitApproval(record.approval_id, decision.approved, decision.reason)
            self.builtin_settled.add(record.tool_call_id)
            return
        self.core.settle_call(record.tool_call_id)
        if not decision.approved:
            yield Submit(record.tool_call_id, _denied(decision.reason), None)
            return
        tool = self.frozen.executable_tools.get(record.tool_name)
        if tool is None:
            yield Submit(
                record.tool_call_id,
                {"type": "execution-denied", "reason": inactive_tool_reason(record.tool_name)},
                None,
            )
            return
        if tool.execute is None:
            self.core.unsettle_call(record.tool_call_id)
            self.core.ask_result(
                PendingToolResult(
                    tool_call_id=record.tool_call_id,
                    tool_name=record.tool_name,
                    input=record.input,
                )
            )
            self.core.pause()
            self.outcome.paused = True
            yield from self._finish_result(("tool-calls", None))
            return
        execution: Execution = yield Execute(
            record.tool_call_id, record.tool_name, record.input, tool
        )
        yield from self._flush_held()
        if execution.ok:
            yield Emit(
                ConsumerToolResultPart(
                    tool_call_id=record.tool_call_id,
                    tool_name=record.tool_name,
                    input=call.input,
                    output=strip_value(jsonable(execution.value), self.work_dir),
                )
            )
        else:
            yield Emit(
                ConsumerToolErrorPart(
                    tool_call_id=record.tool_call_id,
                    tool_name=record.tool_name,
                    input=call.input,
                    error=execution.error,
                )
            )

    def _settle_result(self, pending: PendingToolResult, result: ResultContinuation) -> Steps[None]:
        self.core.answer_result(pending.tool_call_id)
        self.swallow_next_finish_step = True
        tool_result: dict[str, Any] | None = None
        if result.tool_result is not None:
            # The AI SDK part form travels to the adapter, completed from the record (6.2.6);
            # the raw form carries no part (HOSTTOOL-020).
            tool_result = dict(result.tool_result)
            tool_result["toolName"] = pending.tool_name
            provider_options = tool_result.get("providerOptions") or pending.provider_options
            if provider_options is not None:
                tool_result["providerOptions"] = provider_options
        yield Submit(
            pending.tool_call_id,
            result.output if result.has_output else None,
            True if result.is_error else None,
            None if tool_result is None else jsonable(tool_result),
        )

    # -- endings -----------------------------------------------------------------------------

    def pause(self) -> Steps[None]:
        """Host-input pause (5.3.3): close the step synthetically and finish the result."""
        yield JOIN
        self.unjoined = False
        if self.step_open or self.step_has_content or self.held:
            yield from self._close_step("tool-calls", None, LanguageModelUsage(), None)
        self.core.pause()
        self.outcome.paused = True
        # The adapter's turn stays alive (APPROVAL-039): what it emits into the queue from
        # now on is read first by the continuation, or kept by a suspension (APPROVAL-041;
        # upstream's per-slice streams lose it).
        yield from self._finish_result(("tool-calls", None))

    def stopped(self, captured: ContinueTurnState) -> Steps[None]:
        """A stop condition suspended the turn (the parts after its step are dropped)."""
        self.core.suspended(captured, [])
        self.outcome.suspended = True
        yield from self._finish_result(self._final_reason())

    def stream_closed(self, *, aborted: bool) -> Steps[None]:
        """The adapter's ``done()`` settled (after the driver joined executions)."""
        if self.core.suspending:
            yield from self.close_suspended()
            return
        if self.step_has_content:
            yield from self.fail(HarnessTurnError(UNCLOSED_STEP_MESSAGE), aborted=aborted)
            return
        if aborted:
            yield from self.fail(HarnessTurnError(ABORT_REASON), aborted=True)
            return
        # The turn is over before consumers see `finish`, so a finish handler may detach
        # or prompt again right away (7.4.7).
        yield RELEASE
        yield from self._finish_result(self._final_reason())

    def close_suspended(self) -> Steps[None]:
        """The stream closed because of a deliberate suspension: not a failure."""
        yield from self._flush_held()
        if self.outcome.finish is None:
            self._reset_step()  # the step continues in the next slice: not recorded here
        self.outcome.suspended = True
        yield from self._finish_result(self._final_reason())

    def _final_reason(self) -> tuple[str, str | None]:
        """The result's unified and raw finish reasons."""
        if self.outcome.finish is not None:
            return self.outcome.finish.unified, self.outcome.finish.raw
        if self.outcome.steps:
            last = self.outcome.steps[-1]
            return last.finish_reason, last.raw_finish_reason
        return "other", None

    def _finish_result(self, reason: tuple[str, str | None]) -> Steps[None]:
        if not self.outcome.steps:
            # Only a step-less slice reports it (a slice with steps answers with its last
            # step's response): the wire form of its StepResponse, built as a dict.
            self.outcome.empty_response = {
                "id": f"{self.call_id}-0",
                "timestamp": self.core.timestamp(),
                "modelId": self.model_id,
                "messages": [],
            }
        finish = self.outcome.finish
        unified, raw = reason
        if finish is not None:
            usage = finish.usage
            metadata = finish.metadata
        else:
            usage = LanguageModelUsage()
            for step in self.outcome.steps:
                usage = add_usage(usage, step.usage)
            metadata = self.outcome.steps[-1].provider_metadata if self.outcome.steps else None
        if metadata is not None:  # the constructor copies it (the part shares no dict)
            yield Emit(
                ConsumerFinishPart(
                    finish_reason=unified,
                    raw_finish_reason=raw,
                    total_usage=usage,
                    provider_metadata=metadata,
                )
            )
            return
        values = {
            "type": "finish",
            "finish_reason": unified,
            "raw_finish_reason": raw,
            "total_usage": usage,
            "provider_metadata": None,
        }
        yield Emit(_new_finish.ordered(values))

    def fail(self, error: BaseException, *, aborted: bool, part_error: Any = None) -> Steps[None]:
        """The turn failed with ``error`` (an error part carries ``part_error`` when given)."""
        yield RELEASE
        if aborted:
            self.outcome.aborted = True
            self.outcome.abort_reason = ABORT_REASON
            # As upstream, the result fields reject with the turn's own error (what ended
            # the aborted turn), the abort part carries the reason.
            self.outcome.error = error
            yield Emit(ConsumerAbortPart(reason=ABORT_REASON))
            return
        self.outcome.error = error
        yield ReportFailure(error)
        yield Emit(ConsumerErrorPart(error=error if part_error is None else part_error))


def _denied(reason: str | None) -> dict[str, Any]:
    denied: dict[str, Any] = {"type": "execution-denied"}
    if reason is not None:
        denied["reason"] = reason
    return denied
