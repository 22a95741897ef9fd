"""The turn engine: reads harness parts of one turn slice and produces consumer parts.

One *slice* is what one ``stream()``/``generate()``/``continue_*()`` call consumes of an
adapter turn. The engine validates every harness part, dispatches host tools, pauses for
host input, applies stop conditions and settles the result; what a single part becomes
is the pure translator's business (``_translate.py``). Session bookkeeping (pending
records, turn state, frozen settings) lives in :class:`TurnCore`, which outlives slices.

Why one module of this size: :class:`SliceRunner` is one state machine (step framing,
held outcomes, the swallowed resumed step, pauses, suspension capture, continuation
settling, executions and ``done()``) whose transitions read and write the same slice
state; splitting it further means a translator that returns effects for a driver to
perform (issue 17), which is not done yet. Until then its parts stay together so every
transition is visible in one place.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

import anyio

from harness_testkit.spec import (
    CompactionPart,
    CompletedToolResult,
    ConsumerAbortPart,
    ConsumerErrorPart,
    ConsumerFinishPart,
    ConsumerFinishStepPart,
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
    ErrorPart,
    FileChangePart,
    FinishPart,
    FinishReason,
    FinishStepPart,
    HarnessTurnError,
    InvalidLifecycleStateError,
    LanguageModelUsage,
    PendingToolApproval,
    PendingToolResult,
    PromptControl,
    ReasoningDeltaPart,
    StepResponse,
    StreamPart,
    StreamStartPart,
    TextDeltaPart,
    ToolApprovalRequestPart,
    ToolCallPart,
    ToolContextValidationError,
    ToolInputDeltaPart,
    ToolInputEndPart,
    ToolInputStartPart,
    ToolResultPart,
    WireModel,
    find_non_json,
    inactive_tool_reason,
    is_builtin_tool_included,
)
from harness_testkit.spec import ProviderMetadata as Metadata

from ._detached import spawn_detached
from ._handoff import HandoffSink
from ._part_queue import DONE, DoneFailed, PartQueue, QueueItem, _Done
from ._results import StepContent, StepResult, add_usage, normalize_usage
from ._strip import StreamingStripper, strip_value, strip_work_dir
from ._tool import Tool, ToolExecutionOptions
from ._translate import (
    compaction_parts,
    consumer_call,
    consumer_delta,
    file_change_parts,
    harness_outcome,
    host_outcome,
    text_like_part,
)
from ._turn_state import (
    ApprovalContinuation,
    ResultContinuation,
    SliceOutcome,
    StopCondition,
    TurnCore,
    TurnState,
)

__all__ = [
    "CONTEXT_FAILED_OUTPUT",
    "QUESTIONS_TOOL",
    "UNCLOSED_STEP_MESSAGE",
    "SliceRunner",
]

UNCLOSED_STEP_MESSAGE = (
    "HarnessAgent: received terminal finish with unclosed step content. "
    "Harness adapters must emit `finish-step` before `finish`."
)
CONTEXT_FAILED_OUTPUT = {"error": "Tool context validation failed."}
QUESTIONS_TOOL = "askUserQuestions"


@dataclass
class _SeenCall:
    harness: ToolCallPart
    consumer: ConsumerToolCallPart
    provider_executed: bool


class _SliceFailed(Exception):
    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


class SliceRunner:
    """Runs one slice of a turn. See the module docstring.

    Args:
        core: The session's turn state.
        control: The adapter's prompt control for this slice.
        queue: The turn's part queue.
        sink: Receives every consumer part, in order.
        harness_session_suspend: Calls the adapter's ``do_suspend_turn`` (cached).
        continuing: Whether the slice continues an unfinished turn.
        approvals: Approval continuations to settle before reading.
        results: Result continuations to settle before reading.
        stop_when: Stop conditions evaluated between steps.
        abort: Set when the caller aborts the turn.
        model_id: The turn's model id (``''`` when none).
        abort_grace: Seconds to wait for ``done()`` after an abort before giving up.
    """

    def __init__(
        self,
        *,
        core: TurnCore,
        control: PromptControl,
        queue: PartQueue,
        sink: Callable[[ConsumerPart], Awaitable[None]],
        harness_session_suspend: Callable[[], Awaitable[ContinueTurnState]],
        continuing: bool,
        approvals: Sequence[ApprovalContinuation] = (),
        results: Sequence[ResultContinuation] = (),
        stop_when: Sequence[StopCondition] = (),
        abort: anyio.Event,
        model_id: str = "",
        abort_grace: float = 10.0,
        error_log: TextIO | None = None,
    ) -> None:
        self.error_log = error_log
        self.core = core
        self.control = control
        self.queue = queue
        self.sink = sink
        # The sink's synchronous twin, when it has one: deltas are then translated inside
        # the adapter's emit while the reader waits (see _translate_now).
        self.sink_now = sink if isinstance(sink, HandoffSink) else None
        self.suspend_adapter = harness_session_suspend
        self.continuing = continuing
        self.approvals = list(approvals)
        self.results = list(results)
        self.stop_when = list(stop_when)
        self.abort = abort
        self.model_id = model_id
        self.abort_grace = abort_grace
        frozen = core.frozen
        assert frozen is not None, "a slice needs the turn's frozen settings"
        self.frozen = frozen
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
        self.pause_requested = False
        # slice state
        self.seen_calls: dict[str, _SeenCall] = {}
        # Shared with the turn: a call settled in an earlier slice stays settled (its
        # outcome was already delivered), also across a JSON round trip of the state.
        self.host_settled: set[str] = core.settled_call_ids
        self.builtin_settled: set[str] = set()
        self.consumed_approvals: set[str] = set()
        self.running_executions = 0
        self.executions_idle = anyio.Event()
        self.executions_idle.set()
        self.deferred_failure: BaseException | None = None
        self.task_group: anyio.abc.TaskGroup | None = None
        # done(): entered once, in a detached task (see run)
        self.done_scope = anyio.CancelScope()
        self.done_entered = False
        self.done_settled = anyio.Event()
        self.grace_spent = False

    # -- driver ------------------------------------------------------------------------

    async def run(self) -> SliceOutcome:
        """Run the slice to its end; never raises (failures settle the outcome).

        ``done()`` runs in a detached task, entered once: an adapter whose ``done()``
        ignores cancellation cannot hold the slice past its deadline and ``abort_grace``.
        """
        abort_scope = anyio.CancelScope()
        spawn_detached(self._watch_done)
        try:
            async with anyio.create_task_group() as task_group:
                self.task_group = task_group
                task_group.start_soon(self._watch_abort, abort_scope)
                try:
                    await self._settle_continuations()
                    if not self.outcome.paused:
                        await self._read_loop()
                except _SliceFailed as failure:
                    await self._join_executions()
                    await self._fail(failure.error)
                except Exception as error:  # a bug in a tool or callback, never lose it
                    await self._join_executions()
                    await self._fail(error)
                finally:
                    abort_scope.cancel()
        finally:
            self.task_group = None
        # Ended normally: stop done() (a pause or suspension leaves it waiting) and give
        # it the grace period to settle, unless that grace was already spent waiting.
        # (anyio formats a reason string on every cancel(): skip it when done() settled.)
        if not self.done_settled.is_set():
            self.done_scope.cancel()
        with anyio.move_on_after(0 if self.grace_spent else self.abort_grace):
            await self.done_settled.wait()
        return self.outcome

    async def _watch_done(self) -> None:
        self.done_entered = True
        try:
            with self.done_scope:
                try:
                    await self.control.done()
                except Exception as error:
                    self.queue.finish(DoneFailed(error))
                else:
                    self.queue.finish(DONE)
        finally:
            self.done_settled.set()

    async def _next(self, *, translate: bool = False) -> QueueItem:
        # One read per part, no per-part task group: an abort wakes the reader through
        # the queue (see _watch_abort). With ``translate``, deltas the adapter emits while
        # the reader waits are handled inside emit (one hand-off per part, not two).
        while not self.abort.is_set():
            if translate and self.sink_now is not None:
                self.queue.translate = self._translate_now
                try:
                    item = await self.queue.get_or_wake()
                finally:
                    self.queue.translate = None
            else:
                item = await self.queue.get_or_wake()
            if item is not None:
                return item
        # The adapter must settle done() after an abort; do not wait forever.
        with anyio.move_on_after(self.abort_grace):
            return await self.queue.get()
        self.grace_spent = True
        return DONE

    def _translate_now(self, part: StreamPart) -> bool:
        """Handle a part inside ``emit``; ``False``: the part is queued for the reader.

        Called only while the read loop waits on an empty queue, so handling the part
        here is what the reader would do next. Only parts whose handling never waits
        and changes no pause or stop decision qualify: text and reasoning deltas inside
        an open step, tool results (held until the step closes) and provider-executed
        tool calls while no pause is pending.
        """
        sink = self.sink_now
        # Two parts at most (start-step, the part): a full sink refuses on the awaited path.
        if sink is None or self.abort.is_set() or not sink.has_room(2):
            return False
        kind = type(part)
        if kind is TextDeltaPart or kind is ReasoningDeltaPart:
            if not self.step_open:
                return False
            consumer: ConsumerPart = consumer_delta(part)  # type: ignore[arg-type]
        elif kind is ToolResultPart:
            self._handle_tool_result(part)  # type: ignore[arg-type]
            return True
        elif kind is ToolCallPart:
            call: ToolCallPart = part  # type: ignore[assignment]
            if call.provider_executed is not True or self.pause_requested:
                return False
            if self._settled(call):
                return True
            try:
                consumer = self._consumer_call(call)
            except Exception:  # the reader fails the turn with it, as for any part
                return False
            self._note_call(call, consumer)
        else:
            return False
        if not self.step_open:
            self.step_open = True
            sink.put(ConsumerStartStepPart())
        sink.put(consumer)
        self.step_has_content = True
        self._record_content(consumer)
        return True

    async def _watch_abort(self, scope: anyio.CancelScope) -> None:
        with scope:
            await self.abort.wait()
            self.queue.wake()

    async def _read_loop(self) -> None:
        while True:
            item = await self._next(translate=True)
            if isinstance(item, _Done):
                await self._on_stream_closed()
                return
            if isinstance(item, DoneFailed):
                await self._join_executions()
                if self.core.suspending:
                    await self._close_suspended()
                    return
                await self._fail(item.error)
                return
            if isinstance(item, ErrorPart):
                # The first harness error ends the turn; later parts are ignored.
                await self._join_executions()
                # The error part carries the harness's value as it came (upstream
                # forwards it unchanged); the result fields raise it as an exception.
                await self._fail(_as_exception(item.error), part_error=item.error)
                return
            finished_step = await self._handle(item)
            if self.outcome.paused or self.outcome.error is not None:
                return
            if self.pause_requested and self._batch_complete():
                await self._pause()
                return
            if finished_step and self.stop_when and await self._stop_condition_hit():
                return

    # -- part handling -------------------------------------------------------------------

    async def _handle(self, part: StreamPart) -> bool:
        """Process one harness part; return True when it closed a step."""
        if isinstance(part, StreamStartPart):
            if part.model_id and not self.outcome.steps:
                self.model_id = part.model_id
            return False
        translated = text_like_part(part)
        if translated is not None:
            consumer, is_content = translated
            await self._forward(consumer, content=is_content)
        elif isinstance(part, ToolInputStartPart | ToolInputDeltaPart | ToolInputEndPart):
            await self._handle_tool_input(part)
        elif isinstance(part, ToolCallPart):
            await self._handle_tool_call(part)
        elif isinstance(part, ToolApprovalRequestPart):
            await self._handle_approval_request(part)
        elif isinstance(part, ToolResultPart):
            self._handle_tool_result(part)
        elif isinstance(part, FinishStepPart):
            await self._handle_finish_step(part)
            return True
        elif isinstance(part, FinishPart):
            self.outcome.finish = part
        elif isinstance(part, FileChangePart):
            await self._handle_file_change(part)
        elif isinstance(part, CompactionPart):
            await self._handle_compaction(part)
        return False

    async def _open_step(self) -> None:
        if not self.step_open:
            self.step_open = True
            await self.sink(ConsumerStartStepPart())

    async def _forward(self, part: ConsumerPart, *, content: bool = False) -> None:
        await self._open_step()
        await self.sink(part)
        if content:
            self.step_has_content = True
            self._record_content(part)

    def _record_content(self, part: ConsumerPart) -> None:
        self.step_content.add(part)

    async def _handle_tool_input(
        self, part: ToolInputStartPart | ToolInputDeltaPart | ToolInputEndPart
    ) -> None:
        if part.id in self.host_settled or part.id in self.builtin_settled:
            return
        if isinstance(part, ToolInputStartPart):
            await self._forward(
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
                await self._forward(
                    ConsumerToolInputDeltaPart(
                        id=part.id, delta=text, provider_metadata=part.provider_metadata
                    )
                )
        else:
            held = self.stripper.flush(part.id)
            if held:
                await self._forward(ConsumerToolInputDeltaPart(id=part.id, delta=held))
            await self._forward(
                ConsumerToolInputEndPart(id=part.id, provider_metadata=part.provider_metadata)
            )

    def _consumer_call(self, part: ToolCallPart) -> ConsumerToolCallPart:
        return consumer_call(part, self.work_dir, self.frozen.merged_tools)

    def _settled(self, part: ToolCallPart) -> bool:
        # A replay of a call this slice already settled (5.4.5, 5.4.8).
        return part.tool_call_id in self.host_settled or part.tool_call_id in self.builtin_settled

    def _note_call(self, part: ToolCallPart, consumer: ConsumerToolCallPart) -> None:
        self.seen_calls[part.tool_call_id] = _SeenCall(
            part, consumer, part.provider_executed is True
        )
        if self.seen_in_step == 0 and part.step_tool_call_count is not None:
            self.expected_calls = part.step_tool_call_count
        self.seen_in_step += 1

    async def _handle_tool_call(self, part: ToolCallPart) -> None:
        if self._settled(part):
            return
        consumer = self._consumer_call(part)
        self._note_call(part, consumer)
        await self._forward(consumer, content=True)
        if part.provider_executed is True:
            return
        await self._dispatch_host_call(part, consumer)

    async def _dispatch_host_call(self, part: ToolCallPart, consumer: ConsumerToolCallPart) -> None:
        name = part.tool_name
        if (
            name == QUESTIONS_TOOL
            and QUESTIONS_TOOL in self.core.harness_builtins
            and is_builtin_tool_included(self.frozen.builtin_filter, name)
        ):
            self._register_pending_result(part)
            return
        tool = self.frozen.executable_tools.get(name)
        if tool is None:
            # Inactive, unknown or a built-in name dispatched to the host (4.9).
            self._start_submission(
                part.tool_call_id,
                {"type": "execution-denied", "reason": inactive_tool_reason(name)},
                is_error=None,
            )
            return
        if consumer.invalid and tool.execute is not None:
            # Never run (or ask to run) an executor on input that violates its schema
            # (HOSTTOOL-004); the runtime gets the validation error instead.
            self._start_submission(
                part.tool_call_id, {"error": _error_string(consumer.error)}, is_error=True
            )
            return
        status, reason = self._approval_status(name)
        if status == "denied":
            approval_id = self.core.ids()
            await self._forward(
                ConsumerToolApprovalRequestPart(
                    approval_id=approval_id, tool_call=consumer, is_automatic=True
                ),
                content=True,
            )
            await self._forward(
                ConsumerToolApprovalResponsePart(
                    approval_id=approval_id,
                    tool_call=consumer,
                    approved=False,
                    reason=reason,
                    provider_executed=False,
                ),
                content=True,
            )
            denied: dict[str, Any] = {"type": "execution-denied"}
            if reason is not None:
                denied["reason"] = reason
            self._start_submission(part.tool_call_id, denied, is_error=None)
            return
        if status == "user-approval":
            approval_id = self.core.ids()
            self.core.pending_approvals[approval_id] = PendingToolApproval(
                approval_id=approval_id,
                tool_call_id=part.tool_call_id,
                tool_name=name,
                input=part.input,
                kind="custom",
                provider_executed=False,
                native_name=part.native_name,
            )
            self.core.state = TurnState.AWAITING_APPROVAL
            await self._forward(
                ConsumerToolApprovalRequestPart(approval_id=approval_id, tool_call=consumer),
                content=True,
            )
            self.pause_requested = True
            return
        if tool.execute is None:
            self._register_pending_result(part)
            return
        self._start_execution(part, tool)

    def _approval_status(self, name: str) -> tuple[str, str | None]:
        raw = self.frozen.tool_approval.get(name)
        if raw is None:
            return "not-applicable", None
        if isinstance(raw, str):
            return raw, None
        return str(raw.get("type", "not-applicable")), raw.get("reason")

    def _register_pending_result(self, part: ToolCallPart) -> None:
        existing = self.core.pending_results.get(part.tool_call_id)
        if existing is None:
            self.core.pending_results[part.tool_call_id] = PendingToolResult(
                tool_call_id=part.tool_call_id,
                tool_name=part.tool_name,
                input=part.input,
                provider_options=part.provider_metadata,  # type: ignore[arg-type]
            )
        if not self.core.pending_approvals:
            self.core.state = TurnState.AWAITING_TOOL_RESULT
        self.pause_requested = True

    def _batch_complete(self) -> bool:
        return self.expected_calls is None or self.seen_in_step >= self.expected_calls

    async def _handle_approval_request(self, part: ToolApprovalRequestPart) -> None:
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
            await self._submit_approval(part.approval_id, False, inactive_tool_reason(name))
            return
        if seen is None:
            raise _SliceFailed(
                HarnessTurnError(
                    f"Harness '{self.core.harness_id}' emitted approval request "
                    f"'{part.approval_id}' for unknown tool call '{part.tool_call_id}'."
                )
            )
        self.core.pending_approvals[part.approval_id] = PendingToolApproval(
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
        self.core.state = TurnState.AWAITING_APPROVAL
        await self._forward(
            ConsumerToolApprovalRequestPart(approval_id=part.approval_id, tool_call=seen.consumer),
            content=True,
        )
        await self._pause()

    def _handle_tool_result(self, part: ToolResultPart) -> None:
        if part.tool_call_id in self.host_settled:
            return  # the host already settled this call in the continuation (5.4.8)
        seen = self.seen_calls.get(part.tool_call_id)
        provider_executed = seen.provider_executed if seen is not None else True
        outcome = harness_outcome(part, provider_executed, self.work_dir)
        self.held.append((outcome, True))

    async def _flush_held(self) -> None:
        """Forward held outcomes: step parts open the step, continuation parts do not."""
        held, self.held = self.held, []
        for outcome, in_step in held:
            if in_step:
                await self._forward(outcome, content=True)
            else:
                await self.sink(outcome)

    async def _handle_file_change(self, part: FileChangePart) -> None:
        call_id = "harness-file-change-" + self.core.ids()
        for consumer in file_change_parts(part, call_id, self.work_dir):
            await self._forward(consumer, content=True)

    async def _handle_compaction(self, part: CompactionPart) -> None:
        call_id = "harness-compaction-" + self.core.ids()
        for consumer in compaction_parts(part, call_id):
            await self._forward(consumer, content=True)

    async def _handle_finish_step(self, part: FinishStepPart) -> None:
        await self._join_executions()
        if self.swallow_next_finish_step:
            # The resumed step was recorded before the pause (5.4.9).
            self.swallow_next_finish_step = False
            # As upstream: held outcomes are flushed (a step part opens a consumer step),
            # then the step's content is discarded without a finish-step; the next part
            # opens a new step.
            await self._flush_held()
            self._reset_step()
            return
        await self._close_step(
            part.finish_reason, normalize_usage(part.usage), part.harness_metadata
        )

    async def _close_step(
        self,
        finish_reason: FinishReason,
        usage: LanguageModelUsage,
        metadata: Metadata | None,
    ) -> None:
        await self._flush_held()
        await self._open_step()
        step_number = len(self.outcome.steps)
        response = self._finish_step_part(finish_reason, usage, metadata, step_number)
        self.outcome.steps.append(
            StepResult(
                step_number=step_number,
                call_id=self.call_id,
                provider=f"harness:{self.core.harness_id}",
                model_id=self.model_id,
                content=self.step_content.parts(),
                finish_reason=finish_reason.unified,
                raw_finish_reason=finish_reason.raw,
                usage=usage,
                provider_metadata=metadata,
                tools_context=self.frozen.tools_context,
                response=response,
            )
        )
        await self.sink(response)
        self._reset_step()

    def _finish_step_part(
        self,
        finish_reason: FinishReason,
        usage: LanguageModelUsage,
        metadata: Metadata | None,
        step_number: int,
    ) -> ConsumerFinishStepPart:
        return ConsumerFinishStepPart(
            response=StepResponse(
                id=f"{self.call_id}-{step_number}",
                timestamp=self.core.clock().isoformat(),
                model_id=self.model_id,
            ),
            usage=usage,
            finish_reason=finish_reason.unified,
            raw_finish_reason=finish_reason.raw,
            provider_metadata=metadata,
        )

    def _reset_step(self) -> None:
        self.step_open = False
        self.step_has_content = False
        self.step_content = StepContent()
        self.expected_calls = None
        self.seen_in_step = 0

    # -- host execution ------------------------------------------------------------------

    def _begin_execution(self) -> None:
        if self.running_executions == 0:
            self.executions_idle = anyio.Event()
        self.running_executions += 1

    def _end_execution(self) -> None:
        self.running_executions -= 1
        if self.running_executions == 0:
            self.executions_idle.set()

    async def _join_executions(self) -> None:
        if self.running_executions:
            await self.executions_idle.wait()
        if self.deferred_failure is not None:
            failure, self.deferred_failure = self.deferred_failure, None
            raise _SliceFailed(failure)

    def _start_submission(self, tool_call_id: str, output: Any, *, is_error: bool | None) -> None:
        assert self.task_group is not None
        self._begin_execution()
        self.task_group.start_soon(self._submit_task, tool_call_id, output, is_error)

    async def _submit_task(self, tool_call_id: str, output: Any, is_error: bool | None) -> None:
        try:
            await self._submit(tool_call_id, output, is_error=is_error)
        except Exception as error:
            self.deferred_failure = self.deferred_failure or error
        finally:
            self._end_execution()

    async def _submit(
        self,
        tool_call_id: str,
        output: Any,
        *,
        is_error: bool | None,
        tool_result: dict[str, Any] | None = None,
    ) -> None:
        if self.core.suspending:
            self._capture_suspended(tool_call_id, output, is_error, tool_result)
            return
        kwargs: dict[str, Any] = {}
        if is_error:
            kwargs["is_error"] = True
        if tool_result is not None:
            kwargs["tool_result"] = tool_result
        await self.control.submit_tool_result(tool_call_id, output, **kwargs)

    def _capture_suspended(
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
        problem = find_non_json(_jsonable(output), "output") or find_non_json(
            tool_result, "toolResult"
        )
        if problem is not None:
            raise InvalidLifecycleStateError(
                f"The result of tool call '{tool_call_id}' ({name}) cannot be stored in the "
                f"continue state: {problem}. Host tools must return JSON values."
            )
        self.core.pending_results[tool_call_id] = PendingToolResult(
            tool_call_id=tool_call_id,
            tool_name=name,
            input=raw_input,
            completed_result=CompletedToolResult(
                output=_jsonable(output),
                is_error=True if is_error else None,
                tool_result=tool_result,
            ),
        )
        self.core.state = TurnState.AWAITING_TOOL_RESULT
        if seen is not None:
            # Consumers see this outcome now; the runtime's later echo is a replay.
            self.host_settled.add(tool_call_id)
            outcome = host_outcome(
                tool_call_id,
                name,
                seen.consumer.input,
                output,
                is_error=bool(is_error),
                work_dir=self.work_dir,
            )
            self.held.append((outcome, False))  # a continuation part: opens no step

    def _start_execution(self, part: ToolCallPart, tool: Tool) -> None:
        assert self.task_group is not None
        self._begin_execution()
        self.task_group.start_soon(self._execution_task, part, tool)

    async def _execution_task(self, part: ToolCallPart, tool: Tool) -> None:
        try:
            await self._execute_and_submit(part.tool_call_id, part.tool_name, part.input, tool)
        except Exception as error:
            self.deferred_failure = self.deferred_failure or error
        finally:
            self._end_execution()

    async def _execute(
        self, tool_call_id: str, name: str, raw_input: str, tool: Tool
    ) -> tuple[bool, Any, BaseException | None]:
        """Run a host tool. Returns ``(ok, value, error)``; preliminary results are held."""
        context = (
            self.frozen.tools_context.get(name)
            if isinstance(self.frozen.tools_context, Mapping)
            else None
        )
        validated = tool.validate_context(name, context)
        # The executor gets the parsed input, or the raw text when it is not JSON ('' too).
        value = _json_or_raw(raw_input)
        options = ToolExecutionOptions(
            tool_call_id=tool_call_id,
            sandbox=self.core.sandbox,
            context=validated,
            abort=self.abort,
        )
        assert tool.execute is not None
        result = tool.execute(value, options)
        if inspect.isasyncgen(result):
            last: Any = None
            async for item in result:
                last = item
                self.held.append((self._preliminary(tool_call_id, name, item), True))
            return True, last, None
        if inspect.isgenerator(result):
            last = None
            for item in result:
                last = item
                self.held.append((self._preliminary(tool_call_id, name, item), True))
            return True, last, None
        if inspect.isawaitable(result):
            result = await result
        return True, result, None

    def _preliminary(self, tool_call_id: str, name: str, value: Any) -> ConsumerToolResultPart:
        return ConsumerToolResultPart(
            tool_call_id=tool_call_id,
            tool_name=name,
            output=strip_value(value, self.work_dir),
            preliminary=True,
        )

    async def _execute_and_submit(
        self, tool_call_id: str, name: str, raw_input: str, tool: Tool
    ) -> tuple[bool, Any, BaseException | None]:
        try:
            ok, value, _ = await self._execute(tool_call_id, name, raw_input, tool)
        except ToolContextValidationError as error:
            await self._submit(tool_call_id, dict(CONTEXT_FAILED_OUTPUT), is_error=True)
            return False, None, error
        except Exception as error:
            await self._submit(tool_call_id, {"error": _error_string(error)}, is_error=True)
            return False, None, error
        try:
            await self._submit(tool_call_id, _jsonable(value), is_error=None)
        except InvalidLifecycleStateError as error:
            # A result that cannot be stored in the continue state is the suspension's
            # failure (LIFECYCLE-020), not the tool's: report it to suspend_turn.
            self.core.capture_error = error
            return ok, value, None
        except Exception as error:
            # 6.1.6: retry as an error submission; if that fails too, the turn fails.
            await self._submit(tool_call_id, {"error": _error_string(error)}, is_error=True)
        return ok, value, None

    async def _submit_approval(self, approval_id: str, approved: bool, reason: str | None) -> None:
        submit = getattr(self.control, "submit_tool_approval", None)
        if submit is None:
            # A plain error, as upstream (ERROR-007), not the capability error.
            raise _SliceFailed(
                HarnessTurnError(
                    f"Harness '{self.core.harness_id}' emitted a built-in tool approval request "
                    "but does not support approval responses."
                )
            )
        await submit(approval_id, approved, reason)

    # -- continuations ---------------------------------------------------------------------

    async def _settle_continuations(self) -> None:
        if not self.continuing:
            return
        approvals = {a.approval_id: a for a in self.approvals}
        for approval_id, record in list(self.core.pending_approvals.items()):
            decision = approvals.get(approval_id)
            if decision is None:
                continue
            await self._settle_approval(record, decision)
            if self.outcome.paused:
                return
        explicit = {r.tool_call_id: r for r in self.results}
        for call_id, pending in list(self.core.pending_results.items()):
            result = explicit.get(call_id)
            if result is not None:
                await self._settle_result(pending, result)
            elif pending.completed_result is not None:
                stored = pending.completed_result
                del self.core.pending_results[call_id]
                self.host_settled.add(call_id)
                await self._submit(
                    call_id,
                    stored.output,
                    is_error=stored.is_error,
                    tool_result=stored.tool_result,
                )
        if self.core.pending_approvals:
            # A partial answer re-pauses at once (APPROVAL-038): the adapter may need the
            # other answers, and reading on could wait forever.
            self.core.state = TurnState.AWAITING_APPROVAL
            self.outcome.paused = True
            await self._finish_result(FinishReason(unified="tool-calls"))

    def _rebuilt_call(self, record: PendingToolApproval) -> ConsumerToolCallPart:
        seen = self.seen_calls.get(record.tool_call_id)
        if seen is not None:
            return seen.consumer
        return ConsumerToolCallPart(
            tool_call_id=record.tool_call_id,
            tool_name=record.tool_name,
            input=_json_or_raw(strip_work_dir(record.input, self.work_dir)),
            provider_executed=record.provider_executed,
        )

    async def _settle_approval(
        self, record: PendingToolApproval, decision: ApprovalContinuation
    ) -> None:
        call = self._rebuilt_call(record)
        await self.sink(
            ConsumerToolApprovalResponsePart(
                approval_id=record.approval_id,
                tool_call=call,
                approved=decision.approved,
                reason=decision.reason,
                provider_executed=record.provider_executed,
            )
        )
        del self.core.pending_approvals[record.approval_id]
        self.consumed_approvals.add(record.approval_id)
        self.swallow_next_finish_step = True
        if record.kind == "builtin":
            await self._submit_approval(record.approval_id, decision.approved, decision.reason)
            self.builtin_settled.add(record.tool_call_id)
            return
        self.host_settled.add(record.tool_call_id)
        if not decision.approved:
            denied: dict[str, Any] = {"type": "execution-denied"}
            if decision.reason is not None:
                denied["reason"] = decision.reason
            await self._submit(record.tool_call_id, denied, is_error=None)
            return
        tool = self.frozen.executable_tools.get(record.tool_name)
        if tool is None:
            await self._submit(
                record.tool_call_id,
                {"type": "execution-denied", "reason": inactive_tool_reason(record.tool_name)},
                is_error=None,
            )
            return
        if tool.execute is None:
            self.host_settled.discard(record.tool_call_id)
            self.core.pending_results[record.tool_call_id] = PendingToolResult(
                tool_call_id=record.tool_call_id, tool_name=record.tool_name, input=record.input
            )
            self.core.state = TurnState.AWAITING_TOOL_RESULT
            self.outcome.paused = True
            await self._finish_result(FinishReason(unified="tool-calls"))
            return
        ok, value, error = await self._execute_and_submit(
            record.tool_call_id, record.tool_name, record.input, tool
        )
        await self._flush_held()
        if ok:
            await self.sink(
                ConsumerToolResultPart(
                    tool_call_id=record.tool_call_id,
                    tool_name=record.tool_name,
                    input=call.input,
                    output=strip_value(_jsonable(value), self.work_dir),
                )
            )
        else:
            await self.sink(
                ConsumerToolErrorPart(
                    tool_call_id=record.tool_call_id,
                    tool_name=record.tool_name,
                    input=call.input,
                    error=error,
                )
            )

    async def _settle_result(self, pending: PendingToolResult, result: ResultContinuation) -> None:
        del self.core.pending_results[pending.tool_call_id]
        self.host_settled.add(pending.tool_call_id)
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
        await self._submit(
            pending.tool_call_id,
            result.output if result.has_output else None,
            is_error=True if result.is_error else None,
            tool_result=None if tool_result is None else _jsonable(tool_result),
        )

    # -- endings -----------------------------------------------------------------------------

    async def _pause(self) -> None:
        """Host-input pause (5.3.3): close the step synthetically and finish the result."""
        await self._join_executions()
        if self.step_open or self.step_has_content or self.held:
            await self._close_step(FinishReason(unified="tool-calls"), LanguageModelUsage(), None)
        self.core.state = self.core.awaiting_state()
        self.outcome.paused = True
        # The adapter's turn stays alive (APPROVAL-039): what it emits into the queue from
        # now on is read first by the continuation, or kept by a suspension (APPROVAL-041;
        # upstream's per-slice streams lose it).
        await self._finish_result(FinishReason(unified="tool-calls"))

    async def _stop_condition_hit(self) -> bool:
        lookahead = await self._next()
        self.queue.push_front([lookahead])
        if isinstance(lookahead, FinishPart | ErrorPart | _Done | DoneFailed):
            return False  # a terminal step finishes naturally; an error is never hidden
        context = {"steps": list(self.outcome.steps)}
        hit = False
        for condition in self.stop_when:
            value = condition(context)
            if inspect.isawaitable(value):
                value = await value
            hit = hit or bool(value)
        if not hit:
            return False
        self.core.suspending = True
        state = await self.suspend_adapter()
        self.core.captured_state = state
        # The adapter's done() settles after draining; keep what it emitted for the next
        # slice (the lookahead included) instead of losing it.
        leftovers: list[StreamPart] = []
        with anyio.move_on_after(self.abort_grace):
            while True:
                item = await self.queue.get()
                if isinstance(item, _Done | DoneFailed):
                    break
                leftovers.append(item)
        self.core.buffered_parts = leftovers
        self.core.state = TurnState.SUSPENDED
        self.outcome.suspended = True
        await self._finish_result(self._final_reason())
        return True

    async def _on_stream_closed(self) -> None:
        await self._join_executions()
        if self.core.suspending:
            await self._close_suspended()
            return
        if self.step_has_content:
            await self._fail(HarnessTurnError(UNCLOSED_STEP_MESSAGE))
            return
        if self.abort.is_set():
            await self._fail(_abort_error())
            return
        # The turn is over before consumers see `finish`, so a finish handler may detach
        # or prompt again right away (7.4.7).
        self._release_turn()
        await self._finish_result(self._final_reason())

    def _release_turn(self) -> None:
        if self.core.queue is self.queue and not self.core.suspending:
            self.core.reset_turn()

    async def _close_suspended(self) -> None:
        """The stream closed because of a deliberate suspension: not a failure."""
        await self._flush_held()
        if self.outcome.finish is None:
            self._reset_step()  # the step continues in the next slice: not recorded here
        self.outcome.suspended = True
        await self._finish_result(self._final_reason())

    def _final_reason(self) -> FinishReason:
        if self.outcome.finish is not None:
            return self.outcome.finish.finish_reason
        if self.outcome.steps:
            last = self.outcome.steps[-1]
            return FinishReason(unified=last.finish_reason, raw=last.raw_finish_reason)  # type: ignore[arg-type]
        return FinishReason(unified="other")

    async def _finish_result(self, reason: FinishReason) -> None:
        self.outcome.empty_response = StepResponse(
            id=f"{self.call_id}-0",
            timestamp=self.core.clock().isoformat(),
            model_id=self.model_id,
        ).to_wire()
        finish = self.outcome.finish
        if finish is not None:
            usage = normalize_usage(finish.total_usage)
            metadata = finish.harness_metadata
        else:
            usage = LanguageModelUsage()
            for step in self.outcome.steps:
                usage = add_usage(usage, step.usage)
            metadata = self.outcome.steps[-1].provider_metadata if self.outcome.steps else None
        await self.sink(
            ConsumerFinishPart(
                finish_reason=reason.unified,
                raw_finish_reason=reason.raw,
                total_usage=usage,
                provider_metadata=metadata,
            )
        )

    async def _fail(self, error: BaseException, *, part_error: Any = None) -> None:
        self._release_turn()
        if self.abort.is_set():
            self.outcome.aborted = True
            reason = ABORT_REASON
            self.outcome.abort_reason = reason
            # As upstream, the result fields reject with the turn's own error (what ended
            # the aborted turn), the abort part carries the reason.
            self.outcome.error = error
            await self.sink(ConsumerAbortPart(reason=reason))
            return
        self.outcome.error = error
        # Failures also reach stderr, as the TypeScript agent reports them (ERROR-012).
        if self.error_log is not None:
            print(
                f"[harness:{self.core.harness_id}:error session={self.core.session_id}] "
                f"turn failed: {type(error).__name__}: {error}",
                file=self.error_log,
            )
        await self.sink(ConsumerErrorPart(error=error if part_error is None else part_error))


#: anyio events carry no reason, so the abort part always says what a TypeScript consumer
#: sees for an AbortController aborted without a reason (``String(signal.reason)``).
ABORT_REASON = "AbortError: This operation was aborted"


def _abort_error() -> BaseException:
    return HarnessTurnError(ABORT_REASON)


def _as_exception(value: Any) -> BaseException:
    if isinstance(value, BaseException):
        return value
    if isinstance(value, dict) and isinstance(value.get("message"), str):
        return HarnessTurnError(value["message"])
    return HarnessTurnError(value if isinstance(value, str) else json.dumps(value, default=repr))


def _json_or_raw(text: str) -> Any:
    """``text`` parsed as JSON, else ``text`` itself (the AI SDK's ``safeParseJSON``)."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def _error_string(error: BaseException) -> str:
    """``String(err)`` of the TypeScript agent, in Python terms: ``Name: message``."""
    return f"{type(error).__name__}: {error}"


def _jsonable(value: Any) -> Any:
    """Tool outputs cross into JSON: models dump, other values must already be JSON."""
    if isinstance(value, WireModel):
        return value.to_wire()
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    return value
