"""The slice driver: performs what the slice machine decides, with time limits.

One *slice* is what one ``stream()``/``generate()``/``continue_*()`` call consumes of an
adapter turn. :class:`SliceRunner` owns everything of a slice that waits: the read loop
over the turn's part queue, the one task that awaits the adapter's ``done()``, the abort
watcher, background host executions and submissions (a task group), stop conditions
(which may be async) and the grace periods. What a part *means* (consumer parts, step
framing, pauses, pending records, continuation settling) is the machine's business
(``_turn_machine.py``, no I/O); this module performs the machine's effects and sends
their values back.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TextIO, TypeVar, assert_never

import anyio

from harness_testkit.spec import (
    ConsumerPart,
    ContinueTurnState,
    ErrorPart,
    FinishPart,
    HarnessTurnError,
    InvalidLifecycleStateError,
    PromptControl,
    SandboxSession,
    ToolContextValidationError,
    pin_event_checkpoint,
)

from ._detached import spawn_detached
from ._effects import (
    Emit,
    Execute,
    Execution,
    JoinExecutions,
    ReleaseTurn,
    ReportFailure,
    Steps,
    Submit,
    SubmitApproval,
    error_string,
    json_or_raw,
    jsonable,
)
from ._handoff import Flag, HandoffSink
from ._part_queue import DONE, DoneFailed, PartQueue, QueueItem, _Done
from ._tool import ToolExecutionOptions
from ._turn_machine import CONTEXT_FAILED_OUTPUT, SliceFailed, SliceMachine
from ._turn_state import (
    ApprovalContinuation,
    ResultContinuation,
    SliceOutcome,
    StopCondition,
    TurnCore,
)

__all__ = ["SliceRunner"]

_R = TypeVar("_R")


class SliceRunner:
    """Drives one slice of a turn. See the module docstring.

    Args:
        core: The session's turn state.
        control: The adapter's prompt control for this slice.
        queue: The turn's part queue.
        sink: Receives every consumer part, in order.
        sandbox: The sandbox view host tools receive.
        release_turn: Ends the session's turn (called once the turn is over).
        harness_session_suspend: Calls the adapter's ``do_suspend_turn`` (cached).
        continuing: Whether the slice continues an unfinished turn.
        approvals: Approval continuations to settle before reading.
        results: Result continuations to settle before reading.
        stop_when: Stop conditions evaluated between steps.
        abort: Set when the caller aborts the turn.
        watch_abort: Whether a task watches ``abort`` to wake the reader. Needed for an
            event the caller set directly; the session's own event is set through a
            function that also wakes the queue (no watcher task per slice).
        model_id: The turn's model id (``''`` when none).
        abort_grace: Seconds to wait for ``done()`` after an abort before giving up.
        error_log: Where failures are reported (ERROR-012), if anywhere.
    """

    def __init__(
        self,
        *,
        core: TurnCore,
        control: PromptControl,
        queue: PartQueue,
        sink: Callable[[ConsumerPart], Awaitable[None]],
        sandbox: SandboxSession,
        release_turn: Callable[[], None],
        harness_session_suspend: Callable[[], Awaitable[ContinueTurnState]],
        continuing: bool,
        approvals: Sequence[ApprovalContinuation] = (),
        results: Sequence[ResultContinuation] = (),
        stop_when: Sequence[StopCondition] = (),
        abort: anyio.Event,
        watch_abort: bool = True,
        model_id: str = "",
        abort_grace: float = 10.0,
        error_log: TextIO | None = None,
    ) -> None:
        self.machine = SliceMachine(
            core=core,
            continuing=continuing,
            approvals=approvals,
            results=results,
            model_id=model_id,
            stop_conditions=bool(stop_when),
        )
        self.core = core
        self.control = control
        self.queue = queue
        self.sink = sink
        # The sink's synchronous twin, when it has one: deltas are then translated inside
        # the adapter's emit while the reader waits (see _translate_now).
        self.sink_now = sink if isinstance(sink, HandoffSink) else None
        self.sandbox = sandbox
        self.release_turn = release_turn
        self.suspend_adapter = harness_session_suspend
        self.stop_when = list(stop_when)
        self.abort = abort
        self.watch_abort = watch_abort
        self.abort_grace = abort_grace
        self.error_log = error_log
        self.running_executions = 0
        self.executions_idle = Flag(True)
        self.deferred_failure: BaseException | None = None
        # Entered when a slice first needs it (a background execution or the abort
        # watcher), on the slice's exit stack: most slices never start a task.
        self.task_group: anyio.abc.TaskGroup | None = None
        self.task_groups: contextlib.AsyncExitStack | None = None
        # done(): entered once, in a detached task (see run)
        self.done_scope = anyio.CancelScope()
        self.done_started = False
        self.done_entered = False
        # A slice read lazily (read_lazily): the reader's start and the run to make in
        # done()'s task when no reader was needed while done() ran.
        self._start_reader: Callable[[], None] | None = None
        self._read_after_done: Callable[[], Awaitable[None]] | None = None
        self.done_settled = Flag()
        self.grace_spent = False
        #: Set when the slice paused for host input with done() still running: done()
        #: goes on (the adapter's turn does, as upstream's), what it emits stays queued
        #: for the next slice, and its end posts nothing. The session stops it when the
        #: turn continues, is captured or ends.
        self.done_outlives_slice = False

    # -- the slice -------------------------------------------------------------------------

    def start_done(self) -> None:
        """Start the task that awaits the adapter's ``done()`` (once)."""
        if not self.done_started:
            self.done_started = True
            spawn_detached(self._watch_done)

    def read_lazily(
        self, start_reader: Callable[[], None], read_here: Callable[[], Awaitable[None]]
    ) -> None:
        """Start ``done()`` now and the reader only when something needs it.

        While nobody reads, the parts the adapter emits are handled inside ``emit``, as
        they are while a reader waits on an empty queue. The first thing that needs a
        reader (a part ``emit`` cannot handle, an abort's wake-up, the queue closed by the
        session's end) starts one with ``start_reader`` (the slice's :meth:`run` in a task
        of its own); when ``done()`` settles and nothing did, its task makes the reader's
        run itself (``read_here``): a turn whose parts all went through ``emit`` costs one
        task, not two. Only for a slice with nothing to do before reading and nothing to
        watch (no continuation to settle, no deadline, no caller's abort event): those
        start the reader at once, and so does a slice whose adapter emitted before its
        ``done()`` (in ``do_prompt_turn``): what is queued must be read before ``emit``
        may handle more.
        """
        queue = self.queue
        if not queue.empty:
            start_reader()
            return
        self._start_reader, self._read_after_done = start_reader, read_here
        self._translate_in_emit(queue)
        queue.on_queued = self._reader_needed
        self.start_done()

    def _reader_needed(self) -> None:
        start, self._start_reader, self._read_after_done = self._start_reader, None, None
        # The reader sets its own while it waits on an empty queue (what is queued now
        # comes first); left set, they would keep this runner alive through the queue.
        self.queue.translate = self.queue.translate_wire = None
        if start is not None:
            start()

    async def run(self) -> SliceOutcome:
        """Run the slice to its end; never raises (failures settle the outcome).

        ``done()`` runs in a detached task, entered once: an adapter whose ``done()``
        ignores cancellation cannot hold the slice past its deadline and ``abort_grace``.
        """
        if self._ended_without_reading():
            return self.machine.outcome
        abort_scope = anyio.CancelScope() if self.watch_abort else None
        self.start_done()
        try:
            async with contextlib.AsyncExitStack() as task_groups:
                self.task_groups = task_groups
                if abort_scope is not None:
                    (await self._task_group()).start_soon(self._watch_abort, abort_scope)
                try:
                    if self.machine.continuing:
                        await self._perform(self.machine.settle_continuations())
                    if not self.machine.outcome.paused:
                        await self._read_loop()
                except SliceFailed as failure:
                    await self._fail_after_join(failure.error)
                except Exception as error:  # a bug in a tool or callback, never lose it
                    await self._fail_after_join(error)
                finally:
                    if abort_scope is not None:
                        abort_scope.cancel()
        finally:
            self.task_group = self.task_groups = None
        # Ended normally: a pause leaves done() running; otherwise stop it (a suspension
        # leaves it waiting) and give it the grace period to settle, unless that grace
        # was already spent waiting. (anyio formats a reason string on every cancel():
        # skip it when done() settled.)
        if not self.done_settled.is_set():
            if self.machine.outcome.paused and not self.abort.is_set():
                self.done_outlives_slice = True
                return self.machine.outcome
            self.done_scope.cancel()
            with anyio.move_on_after(0 if self.grace_spent else self.abort_grace):
                await self.done_settled.wait()
        return self.machine.outcome

    def _ended_without_reading(self) -> bool:
        """End the slice here, without the read loop, when its ``done()`` settled before
        it ran (a slice read lazily, see :meth:`read_lazily`, whose ``done()`` needed no
        reader) and the end of the stream is all that is queued: the closing steps only
        forward parts, release the turn and report a failure, none of which waits. Same
        outcome as the read loop's; ``False`` (nothing taken) when anything is left to
        settle, join or read."""
        if (
            not self.done_settled.is_set()
            or self.machine.continuing
            or self.running_executions
            or self.deferred_failure is not None
            or self.sink_now is None
        ):
            return False
        end = self.queue.take_end()
        if end is None:
            return False
        try:
            self._perform_now(self._closing(end))
        except Exception as error:  # as run(): a bug in a closing step fails the turn
            self._perform_now(self.machine.fail(error, aborted=self.abort.is_set()))
        return True

    def _closing(self, end: _Done | DoneFailed) -> Steps[None]:
        """The machine's steps for the end of the adapter's stream (executions joined)."""
        machine = self.machine
        if isinstance(end, _Done):
            return machine.stream_closed(aborted=self.abort.is_set())
        if self.core.suspending:
            return machine.close_suspended()
        return machine.fail(end.error, aborted=self.abort.is_set())

    def _perform_now(self, steps: Steps[None]) -> None:
        """:meth:`_perform` for steps whose effects never wait (a closing step's)."""
        sink = self.sink_now
        assert sink is not None, "only a slice with a synchronous sink ends here"
        for effect in steps:
            match effect:
                case Emit():
                    sink.put(effect.part)
                case ReleaseTurn():
                    self.release_turn()
                case ReportFailure():
                    self._report(effect.error)
                case _:
                    raise AssertionError(f"a closing step waits for nothing: {effect!r}")

    async def _fail_after_join(self, error: BaseException) -> None:
        try:
            await self._join_executions()
        except SliceFailed:
            pass  # the first failure is the turn's
        await self._perform(self.machine.fail(error, aborted=self.abort.is_set()))

    async def _read_loop(self) -> None:
        machine = self.machine
        while True:
            item = await self._next(translate=True)
            if isinstance(item, _Done | DoneFailed):
                await self._join_executions()
                await self._perform(self._closing(item))
                return
            if isinstance(item, ErrorPart):
                # The first harness error ends the turn; later parts are ignored. The
                # error part carries the harness's value as it came (upstream forwards it
                # unchanged); the result fields raise it as an exception.
                await self._join_executions()
                await self._perform(
                    machine.fail(
                        _as_exception(item.error),
                        aborted=self.abort.is_set(),
                        part_error=item.error,
                    )
                )
                return
            quick = machine.quick(item)
            if quick is not None:
                for part in quick:
                    await self.sink(part)
                finished_step = False
            else:
                finished_step = await self._perform(machine.feed(item))
            if machine.over():
                return
            if machine.pause_due():
                await self._perform(machine.pause())
                return
            if finished_step and self.stop_when and await self._stop_condition_hit(item):
                return

    # -- effects ---------------------------------------------------------------------------

    async def _perform(self, steps: Steps[_R]) -> _R:
        """Run a machine step, performing each effect it yields and sending back its value."""
        value: Any = None
        while True:
            try:
                effect = steps.send(value)
            except StopIteration as stop:
                result: _R = stop.value
                return result
            value = None
            match effect:
                case Emit():
                    await self.sink(effect.part)
                case Submit(background=True):
                    await self._in_background(self._submit_task, effect)
                case Submit():
                    await self._submit(
                        effect.tool_call_id, effect.output, effect.is_error, effect.tool_result
                    )
                case Execute(background=True):
                    await self._in_background(self._execution_task, effect)
                case Execute():
                    value = await self._execute_and_submit(effect)
                case SubmitApproval():
                    await self._submit_approval(effect.approval_id, effect.approved, effect.reason)
                case JoinExecutions():
                    await self._join_executions()
                case ReleaseTurn():
                    self.release_turn()
                case ReportFailure():
                    self._report(effect.error)
                case _:
                    assert_never(effect)

    def _report(self, error: BaseException) -> None:
        # Failures also reach stderr, as the TypeScript agent reports them (ERROR-012).
        if self.error_log is not None:
            print(
                f"[harness:{self.core.harness_id}:error session={self.core.session_id}] "
                f"turn failed: {type(error).__name__}: {error}",
                file=self.error_log,
            )

    # -- the adapter's done() and the queue ------------------------------------------------

    async def _watch_done(self) -> None:
        """The one place that awaits the adapter's ``done()`` (entered once per slice)."""
        self.done_entered = True
        try:
            with self.done_scope:
                try:
                    await self.control.done()
                except Exception as error:
                    if self.done_outlives_slice:
                        self._report(error)  # no slice reads this control any more
                    else:
                        self.queue.finish(DoneFailed(error))
                else:
                    if not self.done_outlives_slice:
                        self.queue.finish(DONE)
        finally:
            self.done_settled.set()
        # Read lazily and nothing needed a reader while done() ran: this task reads
        # (what emit could not handle is nothing; what remains is done()'s end).
        read_here, self._read_after_done = self._read_after_done, None
        if read_here is not None:
            self._start_reader = None
            queue = self.queue
            queue.on_queued = queue.translate = queue.translate_wire = None
            await read_here()

    async def _task_group(self) -> anyio.abc.TaskGroup:
        """The slice's task group, entered on first use (on the slice's exit stack)."""
        if self.task_group is None:
            assert self.task_groups is not None, "task groups exist while the slice runs"
            self.task_group = await self.task_groups.enter_async_context(anyio.create_task_group())
        return self.task_group

    async def _watch_abort(self, scope: anyio.CancelScope) -> None:
        with scope:
            await self.abort.wait()
            self.queue.wake()

    async def _next(self, *, translate: bool = False) -> QueueItem:
        # One read per part, no per-part task group: an abort wakes the reader through
        # the queue (the session's abort function, or _watch_abort). With ``translate``,
        # parts the adapter emits while the reader waits are handled inside emit (one
        # hand-off per part, not two).
        while not self.abort.is_set():
            if translate and self.sink_now is not None and self.queue.empty:
                queue = self.queue
                self._translate_in_emit(queue)
                try:
                    item = await queue.get_or_wake()
                finally:
                    queue.translate = queue.translate_wire = None
            else:
                item = await self.queue.get_or_wake()
            if item is not None:
                return item
        # The adapter must settle done() after an abort; do not wait forever.
        with anyio.move_on_after(self.abort_grace):
            return await self.queue.get()
        self.grace_spent = True
        return DONE

    def _translate_in_emit(self, queue: PartQueue) -> None:
        """Have ``emit`` translate what it can (see :meth:`_translate_now`) until the hooks
        are cleared. Made per wait, not kept: kept on self they would make the runner
        cyclic."""
        translate_now, machine = self._translate_now, self.machine
        queue.translate = functools.partial(translate_now, machine.quick)
        queue.translate_wire = functools.partial(translate_now, machine.quick_wire)

    def _translate_now(self, quick: Callable[[Any], list[ConsumerPart] | None], item: Any) -> bool:
        """Handle a part (``quick`` is :meth:`SliceMachine.quick`) or a wire dict
        (:meth:`SliceMachine.quick_wire`) inside ``emit``; ``False``: the caller queues
        the part, or parses the dict and offers the part.

        Called only while the read loop waits on an empty queue, so handling the part
        here is what the reader would do next.
        """
        sink = self.sink_now
        if sink is None:
            return False
        # Two parts at most (start-step, the part): a full sink refuses on the awaited path.
        # (Checked inline, not with has_room: this runs once per part.) No abort test: a
        # part the reader would read after an abort is translated the same way (the grace
        # read), and the abort's wake-up queues ahead of later parts.
        log = sink.log
        if log is not None and len(log) + 2 > sink.capacity:
            return False
        try:
            parts = quick(item)
        except Exception:  # the reader fails the turn with it, as for any part
            return False
        if parts is None:
            return False
        for consumer in parts:
            sink.put(consumer)
        return True

    async def _stop_condition_hit(self, finish_step: object) -> bool:
        # Pin the finish-step's checkpoint (when the adapter attached one): a stop makes
        # the adapter's suspension cursor point just after it, so the runtime replays the
        # dropped tail when the turn is continued (STOP-008). Going on releases the pin.
        release = pin_event_checkpoint(finish_step)
        hit = False
        try:
            hit = await self._stop_due()
        finally:
            if not hit and release is not None:
                release()
        if not hit:
            return False
        self.core.begin_suspending()
        state = await self.suspend_adapter()
        # The lookahead and whatever the adapter emits until done() settles are dropped,
        # as upstream drops them (STOP-008): the runtime owns the tail and replays it when
        # the turn is continued. Kept parts showed up twice, stale `finish` included.
        with anyio.move_on_after(self.abort_grace):
            while not isinstance(await self.queue.get(), _Done | DoneFailed):
                pass
        await self._perform(self.machine.stopped(state))
        return True

    async def _stop_due(self) -> bool:
        """Whether a stop condition ends the slice at this step boundary (7.5.2)."""
        lookahead = await self._next()
        self.queue.push_front([lookahead])
        if isinstance(lookahead, FinishPart | ErrorPart | _Done | DoneFailed):
            # A terminal step finishes naturally (7.5.2); an error is never hidden (STOP-004).
            return False
        context = {"steps": list(self.machine.outcome.steps)}
        hit = False
        for condition in self.stop_when:
            value = condition(context)
            if inspect.isawaitable(value):
                value = await value
            hit = hit or bool(value)
        return hit

    # -- host executions and submissions ---------------------------------------------------

    async def _in_background(self, task: Callable[[Any], Awaitable[None]], effect: Any) -> None:
        task_group = await self._task_group()
        if self.running_executions == 0:
            self.executions_idle = Flag()
        self.running_executions += 1
        task_group.start_soon(self._background, task, effect)

    async def _background(self, task: Callable[[Any], Awaitable[None]], effect: Any) -> None:
        try:
            await task(effect)
        except Exception as error:
            self.deferred_failure = self.deferred_failure or error
        finally:
            self.running_executions -= 1
            if self.running_executions == 0:
                self.executions_idle.set()

    async def _join_executions(self) -> None:
        if self.running_executions:
            await self.executions_idle.wait()
        if self.deferred_failure is not None:
            failure, self.deferred_failure = self.deferred_failure, None
            raise SliceFailed(failure)

    async def _submit_task(self, submit: Submit) -> None:
        await self._submit(submit.tool_call_id, submit.output, submit.is_error)

    async def _execution_task(self, execute: Execute) -> None:
        await self._execute_and_submit(execute)

    async def _submit(
        self,
        tool_call_id: str,
        output: Any,
        is_error: bool | None,
        tool_result: dict[str, Any] | None = None,
    ) -> None:
        if self.core.suspending:
            self.machine.capture_suspended(tool_call_id, output, is_error, tool_result)
            return
        kwargs: dict[str, Any] = {}
        if is_error:
            kwargs["is_error"] = True
        if tool_result is not None:
            kwargs["tool_result"] = tool_result
        await self.control.submit_tool_result(tool_call_id, output, **kwargs)

    async def _execute(self, execute: Execute) -> Any:
        """Run a host tool; preliminary results are held by the machine."""
        frozen = self.machine.frozen
        name, tool = execute.tool_name, execute.tool
        context = (
            frozen.tools_context.get(name) if isinstance(frozen.tools_context, Mapping) else None
        )
        validated = tool.validate_context(name, context)
        options = ToolExecutionOptions(
            tool_call_id=execute.tool_call_id,
            sandbox=self.sandbox,
            context=validated,
            abort=self.abort,
        )
        assert tool.execute is not None
        # The executor gets the parsed input, or the raw text when it is not JSON ('' too).
        result = tool.execute(json_or_raw(execute.raw_input), options)
        if inspect.isasyncgen(result):
            last: Any = None
            async for item in result:
                last = item
                self.machine.hold_preliminary(execute.tool_call_id, name, item)
            return last
        if inspect.isgenerator(result):
            last = None
            for item in result:
                last = item
                self.machine.hold_preliminary(execute.tool_call_id, name, item)
            return last
        if inspect.isawaitable(result):
            result = await result
        return result

    async def _execute_and_submit(self, execute: Execute) -> Execution:
        call_id = execute.tool_call_id
        try:
            value = await self._execute(execute)
        except ToolContextValidationError as error:
            await self._submit(call_id, dict(CONTEXT_FAILED_OUTPUT), True)
            return Execution(ok=False, error=error)
        except Exception as error:
            await self._submit(call_id, {"error": error_string(error)}, True)
            return Execution(ok=False, error=error)
        try:
            await self._submit(call_id, jsonable(value), None)
        except InvalidLifecycleStateError as error:
            # A result that cannot be stored in the continue state is the suspension's
            # failure (LIFECYCLE-020), not the tool's: report it to suspend_turn.
            self.core.capture_failed(error)
        except Exception as error:
            # 6.1.6: retry as an error submission; if that fails too, the turn fails.
            await self._submit(call_id, {"error": error_string(error)}, True)
        return Execution(ok=True, value=value)

    async def _submit_approval(self, approval_id: str, approved: bool, reason: str | None) -> None:
        submit = getattr(self.control, "submit_tool_approval", None)
        if submit is None:
            # A plain error, as upstream (ERROR-007), not the capability error.
            raise SliceFailed(
                HarnessTurnError(
                    f"Harness '{self.core.harness_id}' emitted a built-in tool approval request "
                    "but does not support approval responses."
                )
            )
        await submit(approval_id, approved, reason)


def _as_exception(value: Any) -> BaseException:
    if isinstance(value, BaseException):
        return value
    if isinstance(value, dict) and isinstance(value.get("message"), str):
        return HarnessTurnError(value["message"])
    return HarnessTurnError(value if isinstance(value, str) else json.dumps(value, default=repr))
