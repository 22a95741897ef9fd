"""``AgentSession``: one harness session, its turn state machine and its lifecycle."""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from harness_testkit.spec import (
    ConsumerErrorPart,
    ConsumerPart,
    ContinueTurnOptions,
    ContinueTurnState,
    HarnessCapabilityUnsupportedError,
    HarnessError,
    HarnessSession,
    HarnessSessionStateError,
    PendingToolApproval,
    PendingToolResult,
    PromptControl,
    PromptTurnOptions,
    ResumeSessionState,
    SandboxSession,
    UserMessage,
    parse_lifecycle_state,
)

from ._fast import frozen_dataclass
from ._handoff import Flag
from ._part_queue import PartQueue
from ._slice_runner import SliceRunner
from ._stream_result import StreamResult
from ._turn_state import (
    ApprovalContinuation,
    FrozenTurn,
    ResultContinuation,
    SliceOutcome,
    TurnCore,
    TurnState,
)

if TYPE_CHECKING:
    from ._agent import HarnessAgent

__all__ = ["AgentSession", "SessionStatus"]


class SessionStatus(enum.StrEnum):
    """Lifecycle of the session handle."""

    ACTIVE = "active"
    DETACHED = "detached"
    STOPPED = "stopped"
    DESTROYED = "destroyed"


# Looked up once (see ``_turn_state``: an enum class lookup is slow on Python 3.11).
_ACTIVE = SessionStatus.ACTIVE
_IDLE = TurnState.IDLE


@dataclass
class _TurnLink:
    """The I/O handles of the session's turn (its state is the :class:`TurnCore`'s)."""

    control: PromptControl | None = None
    queue: PartQueue | None = None
    #: A slice of the turn is running; ``slice_finished`` is set when it ends.
    slice_running: bool = False
    slice_finished: Flag | None = None
    #: The paused slice whose adapter ``done()`` still runs (stopped when the turn
    #: continues, is captured or ends).
    running_done: SliceRunner | None = None

    def stop_running_done(self) -> None:
        """Cancel the paused slice's ``done()``, if one still runs."""
        runner, self.running_done = self.running_done, None
        if runner is not None and not runner.done_settled.is_set():
            runner.done_scope.cancel()


class AgentSession:
    """A session created by :meth:`HarnessAgent.create_session`.

    It owns the adapter session, the sandbox session (when the agent created it) and the
    turn state: ``idle``, ``running``, ``awaiting-approval``, ``awaiting-tool-result`` or
    ``suspended``. Turns run through the agent (``agent.stream(session=...)``).
    """

    def __init__(
        self,
        *,
        agent: HarnessAgent,
        harness_session: HarnessSession,
        core: TurnCore,
        sandbox: SandboxSession,
        tool_sandbox: SandboxSession,
        owns_sandbox: bool,
        restored_turn: Callable[[], FrozenTurn],
    ) -> None:
        self._agent = agent
        self._harness_session = harness_session
        self._core = core
        self._link = _TurnLink()
        self._sandbox = sandbox
        self._tool_sandbox = tool_sandbox
        self._owns_sandbox = owns_sandbox
        self._status = SessionStatus.ACTIVE
        # The settings of a turn this session took over from a continue state (7.7.3),
        # computed when it is first continued.
        self._restored_turn = restored_turn
        self.is_resume: bool = bool(getattr(harness_session, "is_resume", False))

    # -- read-only state -----------------------------------------------------------------

    @property
    def session_id(self) -> str:
        """The session id (stable across processes; pass it back when resuming)."""
        return self._core.session_id

    @property
    def status(self) -> SessionStatus:
        """``active`` until detached, stopped or destroyed."""
        return self._status

    @property
    def turn_state(self) -> TurnState:
        """The state of the session's turn."""
        return self._core.state

    @property
    def session_work_dir(self) -> str:
        """Absolute path of the session's work dir inside the sandbox."""
        return self._core.work_dir

    @property
    def sandbox_session(self) -> SandboxSession:
        """The full sandbox session the adapter received."""
        return self._sandbox

    @property
    def pending_tool_approvals(self) -> list[PendingToolApproval]:
        """Approvals the unfinished turn waits for, in registration order."""
        return list(self._core.pending_approvals.values())

    @property
    def pending_tool_results(self) -> list[PendingToolResult]:
        """Client-side tool results the unfinished turn waits for."""
        return list(self._core.pending_results.values())

    def has_unfinished_turn(self) -> bool:
        """True while a turn is running, paused for host input or suspended."""
        return self._core.state is not TurnState.IDLE

    # -- guards ------------------------------------------------------------------------

    def _ended_error(self) -> HarnessSessionStateError:
        return HarnessSessionStateError(
            f"Harness session {self.session_id} has ended and cannot be reused."
        )

    def _require_active(self) -> None:
        if self._status is not _ACTIVE:
            raise self._ended_error()

    def check_can_prompt(self) -> None:
        """Raise unless a new prompt may start (spec 7.2.2)."""
        self._require_active()
        state = self._core.state
        if state is not _IDLE:
            if state is TurnState.RUNNING:
                raise HarnessSessionStateError(
                    f"Harness session {self.session_id} already has a turn in progress."
                )
            raise HarnessSessionStateError(
                f"Harness session {self.session_id} has an unfinished turn and must be "
                "continued before accepting a new prompt."
            )

    def check_can_continue(self) -> None:
        """Raise unless the unfinished turn may be continued (spec 7.2.3)."""
        self._require_active()
        state = self._core.state
        if state is TurnState.RUNNING:
            raise HarnessSessionStateError(
                f"Harness session {self.session_id} already has a turn in progress."
            )
        if state is TurnState.IDLE:
            raise HarnessSessionStateError(
                f"Harness session {self.session_id} has no unfinished turn to continue."
            )

    # -- turns (driven by the agent) -----------------------------------------------------

    async def start_prompt_turn(
        self,
        frozen: FrozenTurn,
        prompt: UserMessage,
        *,
        abort: anyio.Event | None,
        timeout: float | None,
        structured: bool,
    ) -> StreamResult:
        """Start a turn with a new prompt; returns once the adapter's control is ready."""
        self._core.start(frozen)
        queue = self._link.queue = PartQueue()
        abort_event = abort or anyio.Event()
        options = _turn_options(PromptTurnOptions, frozen, queue, abort_event, prompt=prompt)
        try:
            control = await self._harness_session.do_prompt_turn(options)
        except Exception as error:
            self._end_turn()
            return _failed_result(error)
        self._link.control = control
        return self._slice_result(
            control, queue, abort_event, abort is not None, timeout, structured, continuing=False
        )

    async def start_continuation(
        self,
        *,
        approvals: Sequence[ApprovalContinuation],
        results: Sequence[ResultContinuation],
        abort: anyio.Event | None,
        timeout: float | None,
        structured: bool,
    ) -> StreamResult:
        """Continue the unfinished turn with ``do_continue_turn`` (same adapter session)."""
        frozen = self._core.frozen or self._restored_turn()
        buffered = self._core.start(frozen)
        link = self._link
        queue = link.queue
        if queue is None or queue.closed:
            if queue is not None:
                # What the adapter emitted before its done() settled is kept.
                buffered = [*buffered, *queue.drain_parts()]
                queue.close()
            queue = link.queue = PartQueue()
        if buffered:
            queue.push_front(buffered)
        abort_event = abort or anyio.Event()
        options = _turn_options(ContinueTurnOptions, frozen, queue, abort_event)
        try:
            control = await self._harness_session.do_continue_turn(options)
        except Exception as error:
            self._end_turn()
            return _failed_result(error)
        link.stop_running_done()  # the paused slice's control is superseded
        link.control = control
        return self._slice_result(
            control,
            queue,
            abort_event,
            abort is not None,
            timeout,
            structured,
            continuing=True,
            approvals=approvals,
            results=results,
        )

    def _slice_result(
        self,
        control: PromptControl,
        queue: PartQueue,
        abort: anyio.Event,
        callers_abort: bool,
        timeout: float | None,
        structured: bool,
        *,
        continuing: bool,
        approvals: Sequence[ApprovalContinuation] = (),
        results: Sequence[ResultContinuation] = (),
    ) -> StreamResult:
        core = self._core
        link = self._link
        frozen = core.frozen
        assert frozen is not None

        # The slice is running from now on (the result starts it eagerly): a suspension
        # that comes before its task got going still waits for it.
        finished = Flag()
        link.slice_running = True
        link.slice_finished = finished

        def abort_turn() -> None:
            # The event the session made is set only here (the caller's own event is
            # watched by a task): setting it also wakes the slice's reader.
            abort.set()
            queue.wake()

        def release_turn() -> None:
            # A finish handler may already have started the next turn on this session.
            if link.queue is queue and not core.suspending:
                self._end_turn()

        # The runner, made below with the result's sink, is taken out when the slice
        # runs: kept in this closure, which the result keeps, it would make the result
        # and the runner a cycle that only the garbage collector frees.
        runners: list[SliceRunner] = []

        async def run(sink: Callable[[ConsumerPart], Awaitable[None]]) -> SliceOutcome:
            runner = runners.pop()  # (made with ``sink``)
            completed = False
            try:
                if timeout is None:
                    outcome = await runner.run()
                else:
                    async with anyio.create_task_group() as group:

                        async def deadline() -> None:
                            await anyio.sleep(timeout)
                            abort_turn()

                        group.start_soon(deadline)
                        outcome = await runner.run()
                        group.cancel_scope.cancel()  # the deadline task is its only task
                completed = True
            finally:
                # A finish handler may already have started the next turn on this
                # session: only touch the core while it still holds this slice's turn.
                ours = link.queue is queue
                if link.slice_finished is finished:
                    link.slice_running = False
                if not completed:
                    # The consumer went away mid-slice: abort the adapter turn and give it
                    # the grace period to settle (its work may run inside done()).
                    abort_turn()
                    with (
                        anyio.CancelScope(shield=True),
                        anyio.move_on_after(self._agent.abort_grace),
                    ):
                        if runner.done_entered:
                            await runner.done_settled.wait()  # done() is entered once
                        else:
                            try:
                                await control.done()
                            except Exception:  # an aborted turn may well end in an error
                                pass
                    runner.done_scope.cancel()
                    if ours and not core.suspending:
                        self._end_turn()
                elif runner.done_outlives_slice and ours:
                    link.running_done = runner
                finished.set()
            if ours and not outcome.paused and not outcome.suspended and not core.suspending:
                self._end_turn()
            return outcome

        result = StreamResult(
            run,
            structured=structured,
            abort=abort_turn,
            abort_grace=self._agent.abort_grace,
            max_parts=self._agent.max_stream_parts,
            start=False,
        )
        sink = result.sink
        assert sink is not None  # (until the slice ends)
        runner = SliceRunner(
            core=core,
            control=control,
            queue=queue,
            sink=sink,
            sandbox=self._tool_sandbox,
            release_turn=release_turn,
            harness_session_suspend=self._suspend_adapter,
            continuing=continuing,
            approvals=approvals,
            results=results,
            stop_when=self._agent.stop_when,
            abort=abort,
            watch_abort=callers_abort,
            model_id=frozen.settings.model or "",
            abort_grace=self._agent.abort_grace,
            error_log=self._agent.error_log,
        )
        runners.append(runner)
        if continuing or callers_abort or timeout is not None:
            result.start()  # settling, a deadline or a watcher: the reader starts now
        else:
            runner.read_lazily(result.start, result.drive_here)
        return result

    def _end_turn(self) -> None:
        """The turn is over: its queue closes, the core goes back to idle."""
        link = self._link
        if link.queue is not None:
            link.queue.close()
        link.queue = None
        link.control = None
        link.stop_running_done()
        self._core.reset_turn()

    # -- suspension --------------------------------------------------------------------

    async def _suspend_adapter(self) -> ContinueTurnState:
        """``do_suspend_turn`` once per turn (a stop condition's capture is reused)."""
        core = self._core
        if core.captured_state is not None:
            return core.captured_state
        core.begin_suspending()
        raw = await self._harness_session.do_suspend_turn()
        state = parse_lifecycle_state(
            raw,
            expected_type="continue-turn",
            harness_id=core.harness_id,
            data_validator=self._agent.data_validator,
        )
        assert isinstance(state, ContinueTurnState)
        core.note_captured(state)
        return state

    async def _capture_unfinished_turn(self) -> ContinueTurnState:
        """Suspend the unfinished turn and attach the session's records (7.4.4-7.4.5)."""
        core = self._core
        link = self._link
        control, link.control = link.control, None  # withdraw steering first
        adapter_state = await self._suspend_adapter()
        core.suspended(adapter_state)
        grace = self._agent.drain_timeout
        if link.slice_running and link.slice_finished is not None:
            with anyio.move_on_after(grace) as scope:
                await link.slice_finished.wait()
            if scope.cancelled_caught:
                if link.queue is not None:
                    link.queue.close()
                raise HarnessError(
                    f"Harness '{core.harness_id}' did not close the suspended turn's stream "
                    f"within {grace} seconds while suspending session {self.session_id}; an "
                    "adapter must resolve done() after do_suspend_turn()."
                )
        elif link.queue is not None and not link.queue.closed:
            # Nobody is reading (a paused turn): let the adapter drain, keep what it emitted.
            queue = link.queue
            running = link.running_done
            if running is not None:
                # The paused slice's done() still runs: the suspension ends it.
                with anyio.move_on_after(grace):
                    await running.done_settled.wait()
                link.stop_running_done()
            elif control is not None:
                with anyio.move_on_after(grace):
                    try:
                        await control.done()
                    except Exception:  # a failing drain still yields the captured state
                        pass
            core.keep_buffered(queue.drain_parts())
        if link.queue is not None:
            link.queue.close()  # the turn now lives on in the returned state
        error = core.take_capture_error()
        if error is not None:
            raise error
        update: dict[str, Any] = {
            "pending_tool_approvals": None,
            "pending_tool_results": None,
            "turn_settings": core.frozen.settings
            if core.frozen is not None
            else core.restored_settings,
            "buffered_parts": [part.to_wire() for part in core.buffered_parts] or None,
        }
        if core.pending_approvals:
            update["pending_tool_approvals"] = list(core.pending_approvals.values())
        if core.pending_results:
            update["pending_tool_results"] = list(core.pending_results.values())
        return adapter_state.model_copy(update=update)

    async def suspend_turn(self) -> ContinueTurnState:
        """Freeze the unfinished turn and end this handle; the sandbox keeps running.

        Returns:
            A JSON-serializable ``continue-turn`` state; pass it to
            ``agent.create_session(session_id=..., continue_from=...)`` (any process).
        """
        if self._status is not SessionStatus.ACTIVE:
            raise HarnessSessionStateError(
                f"Harness session {self.session_id} is not active and cannot be suspended."
            )
        if self._core.state is TurnState.IDLE:
            raise HarnessSessionStateError(
                f"Harness session {self.session_id} has no unfinished turn to suspend."
            )
        state = await self._capture_unfinished_turn()
        self._status = SessionStatus.DETACHED
        return state

    def _wrap(self, continuation: ContinueTurnState) -> ResumeSessionState:
        return ResumeSessionState(
            harness_id=continuation.harness_id,
            data=continuation.data,
            continue_from=continuation,
        )

    def _validate_resume(self, raw: object) -> ResumeSessionState:
        state = parse_lifecycle_state(
            raw,
            expected_type="resume-session",
            harness_id=self._core.harness_id,
            data_validator=self._agent.data_validator,
        )
        assert isinstance(state, ResumeSessionState)
        return state

    async def detach(self) -> ResumeSessionState:
        """End the handle and return a resume state; runtime and sandbox keep running."""
        if self._status is not SessionStatus.ACTIVE:
            raise HarnessSessionStateError(
                f"Harness session {self.session_id} is not active and cannot be detached."
            )
        try:
            if self._core.state is TurnState.IDLE:
                return self._validate_resume(await self._harness_session.do_detach())
            return self._wrap(await self._capture_unfinished_turn())
        finally:
            self._status = SessionStatus.DETACHED

    async def stop(self) -> ResumeSessionState:
        """Persist and stop: returns a resume state and stops an agent-owned sandbox."""
        if self._status is not SessionStatus.ACTIVE:
            raise HarnessSessionStateError(
                f"Harness session {self.session_id} is not active and cannot be stopped."
            )
        try:
            if self._core.state is TurnState.IDLE:
                return self._validate_resume(await self._harness_session.do_stop())
            return self._wrap(await self._capture_unfinished_turn())
        finally:
            self._status = SessionStatus.STOPPED
            if self._owns_sandbox:
                stop = getattr(self._sandbox, "stop", None)
                if stop is not None:
                    try:
                        await stop()
                    except Exception:  # stopping is best effort once the state is taken
                        pass

    async def destroy(self) -> None:
        """End the handle, destroy the runtime and an agent-owned sandbox. Idempotent."""
        if self._status is not SessionStatus.ACTIVE:
            return
        self._status = SessionStatus.DESTROYED
        if self._link.queue is not None:
            self._link.queue.close()
        try:
            await self._harness_session.do_destroy()
        except Exception:  # destroy never throws (7.4.3)
            pass
        self._link.stop_running_done()
        # An owned sandbox is the provider's NetworkSandboxSession; all this needs is its
        # destroy (an isinstance against the runtime protocol walks every member).
        destroy = getattr(self._sandbox, "destroy", None) if self._owns_sandbox else None
        if destroy is not None:
            try:
                await destroy()
            except Exception:
                pass

    async def compact(self, custom_instructions: str | None = None) -> None:
        """Ask the runtime to compact its context (no turn-state check, spec 10.5)."""
        self._require_active()
        await self._harness_session.do_compact(custom_instructions)

    async def steer_turn(self, text: str) -> None:
        """Send a user message into the running turn (experimental steering)."""
        self._require_active()
        core = self._core
        control = self._link.control
        if core.state is not TurnState.RUNNING or core.suspending or control is None:
            raise HarnessSessionStateError(
                f"Harness session {self.session_id} has no running turn to steer."
            )
        submit = getattr(control, "submit_user_message", None)
        if submit is None:
            raise HarnessCapabilityUnsupportedError(
                f"Harness '{core.harness_id}' does not support steering active turns.",
                harness_id=core.harness_id,
            )
        await submit(text)

    experimental_steer_turn = steer_turn


_Options = TypeVar("_Options", PromptTurnOptions, ContinueTurnOptions)


def _turn_options(
    kind: type[_Options],
    frozen: FrozenTurn,
    queue: PartQueue,
    abort: anyio.Event,
    **prompt: UserMessage,
) -> _Options:
    """The options ``do_prompt_turn`` (given the ``prompt``) or ``do_continue_turn``
    receives, every field given."""
    settings = frozen.settings
    return frozen_dataclass(
        kind,
        emit=queue.emit,
        tools=tuple(settings.tools),
        instructions=settings.instructions,
        response_format=frozen.response_format,
        skills=tuple(settings.skills),
        model=settings.model,
        abort=abort,
        **prompt,
    )


def _failed_result(error: BaseException) -> StreamResult:
    """A result whose slice failed to start: ``start``, then one ``error`` part."""

    async def run(sink: Callable[[ConsumerPart], Awaitable[None]]) -> SliceOutcome:
        await sink(ConsumerErrorPart(error=error))
        return SliceOutcome(error=error)

    return StreamResult(run)
