"""The turn driver: runs the engine, talks to the sandbox, the clock and the host.

A turn makes progress while some task awaits ``done()`` of its current control (the
agent does so concurrently with reading parts, as the contract requires: ``done``
settles the stream). The driver answers the engine's requests one at a time and records
every consumed outside input in the turn's journal, so the turn can be suspended at
any point and re-derived exactly, in this process or another.

Statuses: ``running`` (in progress, possibly waiting for host input), ``suspended``
(frozen by ``do_suspend_turn``; ``do_continue_turn`` resumes it), and the terminal
``finished`` (``finish`` emitted), ``errored`` (an ending ``error`` action), ``closed``
(the ``close-early`` fault), ``failed`` (crash fault, emit raised, sandbox failure,
session destroyed) and ``aborted``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any, Literal, TypeAlias

import anyio
import anyio.lowlevel

from harness_testkit.scripting import (
    ApprovalReceived,
    CloseEarlyFault,
    CrashFault,
    DelayPartFault,
    DropFinishStepFault,
    Fault,
    HangFault,
    MalformedPartFault,
    ObservationLog,
    ToolResultReceived,
    UserMessageReceived,
)
from harness_testkit.spec import (
    Emit,
    EventCheckpoint,
    FinishStepPart,
    HarnessSessionStateError,
    JSONValue,
    SandboxAbortedError,
    StreamPart,
    ToolApprovalRequestPart,
    ToolCallPart,
    ToolInputDeltaPart,
    ToolInputEndPart,
    ToolInputStartPart,
    attach_event_checkpoint,
)

from ._clock import Clock
from ._engine import TurnEngine
from ._errors import FakeHarnessCrashError, ScriptMismatchError, TurnAbortedError
from ._requests import (
    AwaitRequest,
    EmitRequest,
    ExecuteRequest,
    NoteRequest,
    PollRequest,
    Request,
    SleepRequest,
    TurnContext,
    TurnEnd,
)
from ._state import JournalEntry, TurnRecord

__all__ = ["TERMINAL_STATUSES", "FakePromptControl", "TurnRuntime", "TurnStatus", "make_control"]

TurnStatus: TypeAlias = Literal[
    "running", "suspended", "finished", "errored", "closed", "failed", "aborted"
]
TERMINAL_STATUSES: frozenset[str] = frozenset(
    {"finished", "errored", "closed", "failed", "aborted"}
)

_Wake = Literal["changed", "slept", "interrupted"]

#: While a continued turn replays what an earlier slice already did (nothing is emitted),
#: the driver yields to other tasks once per this many requests instead of after each.
_REPLAY_YIELD_EVERY = 64


class TurnRuntime:
    """One turn of a session: the engine, its journal, and the host-facing state.

    Args:
        ctx: What the turn depends on.
        record: The turn's persistent record (cursor, journal, inbox); mutated in place.
        clock: The harness clock.
        log: Where observations go.
        faults: Faults in effect (profile, harness, script and turn faults, in order).
        on_settled: Called once when the turn reaches a terminal status.
    """

    def __init__(
        self,
        *,
        ctx: TurnContext,
        record: TurnRecord,
        clock: Clock,
        log: ObservationLog,
        faults: list[Fault],
        on_settled: Callable[[TurnRuntime], None],
    ) -> None:
        self.ctx = ctx
        self.record = record
        self.clock = clock
        self.log = log
        self.faults = faults
        self._on_settled = on_settled
        self.engine = TurnEngine(ctx)
        self._generator = self.engine.run()
        self._started = False
        self._pending: Request | None = None
        self._send: Any = None
        self._journal_position = 0
        self._logical = 0
        self._replayed = 0
        self._notes = 0
        self._type_counts: Counter[str] = Counter()
        self._finish_steps = 0
        self._await_deadline: float | None = None
        self.status: TurnStatus = "running"
        self.error: BaseException | None = None
        self.control: FakePromptControl | None = None
        self._emit: Emit | None = None
        self._abort: anyio.Event | None = None
        self._killed = anyio.Event()
        self._changed = anyio.Event()
        self.lock = anyio.Lock()
        self._suspend_requested = False
        self._hold_at: int | None = None
        self.held = anyio.Event()
        #: ``do_suspend_turn`` captured this turn (a finished one can then be "continued").
        self.captured = False
        #: The cursor a consumer pinned at a ``finish-step`` (see :meth:`take_pinned_cursor`).
        self._pinned: tuple[int, object] | None = None
        #: What the turn is blocked on (``tool-result:<id>``, ``approval:<id>``,
        #: ``user-message:None``), or ``None`` while it is not waiting for the host.
        self.waiting_for: str | None = None

    # -- host-facing -------------------------------------------------------------------

    @property
    def unfinished(self) -> bool:
        """Running or suspended (a new prompt must wait)."""
        return self.status in ("running", "suspended")

    def attach(self, control: FakePromptControl, emit: Emit, abort: anyio.Event | None) -> None:
        """Make ``control`` current: parts go to ``emit`` from now on; older controls settle."""
        self.control = control
        self._emit = emit
        self._abort = abort
        if self.status == "suspended":
            self.status = "running"
        self._notify()

    def hold_before(self, part_index: int) -> None:
        """Stop before emitting part ``part_index`` (0-based) until suspended or aborted."""
        self._hold_at = part_index
        self.held = anyio.Event()

    def _notify(self) -> None:
        changed, self._changed = self._changed, anyio.Event()
        changed.set()

    def _require_live(self, what: str) -> None:
        if self.status in TERMINAL_STATUSES:
            raise HarnessSessionStateError(
                f"Turn {self.record.index} of fake harness session {self.ctx.session_id} has "
                f"ended ({self.status}); cannot {what}."
            )

    def submit_tool_result(
        self,
        tool_call_id: str,
        output: JSONValue,
        is_error: bool,
        tool_result: dict[str, Any] | None,
    ) -> None:
        """Store a host result; the turn consumes it when it waits for that call."""
        self._require_live("submit a tool result")
        self.log.record(
            ToolResultReceived.of_submission(
                self.ctx.session_id, tool_call_id, output, is_error, tool_result
            )
        )
        self.record.inbox.tool_results[tool_call_id] = {"output": output, "isError": is_error}
        self._notify()

    def submit_tool_approval(self, approval_id: str, approved: bool, reason: str | None) -> None:
        """Store an approval decision."""
        self._require_live("submit a tool approval")
        self.log.record(
            ApprovalReceived(
                session_id=self.ctx.session_id,
                approval_id=approval_id,
                approved=approved,
                reason=reason,
            )
        )
        self.record.inbox.approvals[approval_id] = {"approved": approved, "reason": reason}
        self._notify()

    def submit_user_message(self, text: str) -> None:
        """Queue a mid-turn user message (taken at the next step boundary or wait)."""
        self._require_live("submit a user message")
        self.log.record(UserMessageReceived(session_id=self.ctx.session_id, text=text))
        self.record.inbox.user_messages.append(text)
        self._notify()

    def request_compaction(self, custom_instructions: str | None) -> None:
        """Queue a manual compaction (performed at the next step boundary)."""
        self.record.inbox.compactions.append(custom_instructions)
        self._notify()

    def take_pinned_cursor(self) -> int | None:
        """Where this suspension must put the cursor: just after the ``finish-step`` whose
        checkpoint the consumer pinned (it stopped there and dropped what came after,
        STOP-008), or ``None`` when nothing is pinned. The suspension consumes the pin,
        as closing upstream's channel does: a later suspension never rewinds to it."""
        pinned, self._pinned = self._pinned, None
        return None if pinned is None else pinned[0]

    def _checkpoint(self, cursor: int) -> EventCheckpoint:
        def pin() -> Callable[[], None]:
            token = object()
            self._pinned = (cursor, token)

            def release() -> None:
                if self._pinned is not None and self._pinned[1] is token:
                    self._pinned = None

            return release

        return pin

    def abandon(self) -> None:
        """Drop a suspended runtime that a rewound one replaces (its engine is closed)."""
        self._generator.close()

    async def suspend(self) -> None:
        """Freeze at the cursor: wait for the driver to stop after its current request."""
        if self.status != "running":
            return
        self._suspend_requested = True
        self._notify()
        async with self.lock:
            if self.status == "running":
                self.status = "suspended"
        self._suspend_requested = False
        self._notify()

    def kill(self, error: BaseException) -> None:
        """Stop the turn now (session destroyed): running commands are killed."""
        self._killed.set()
        if self.status in ("running", "suspended"):
            self._settle("failed", error)

    # -- settling ----------------------------------------------------------------------

    def _settle(self, status: TurnStatus, error: BaseException | None = None) -> None:
        if self.status in TERMINAL_STATUSES:
            return
        self.status = status
        self.error = error
        self._pending = None
        self._generator.close()
        self._notify()
        self._on_settled(self)

    def _interrupted(self, control: FakePromptControl | None, *, suspend: bool = True) -> bool:
        return (
            self.status != "running"
            or self._killed.is_set()
            or (self._abort is not None and self._abort.is_set())
            or (suspend and self._suspend_requested)
            or (control is not None and control is not self.control)
        )

    async def _wait(
        self, control: FakePromptControl | None, *, sleep: float | None = None
    ) -> _Wake:
        """Wait for any change (submission, suspend, abort, new control) or ``sleep``."""
        if self._interrupted(control):
            return "interrupted"
        changed = self._changed
        outcome: list[_Wake] = ["changed"]
        async with anyio.create_task_group() as group:

            async def until(event: anyio.Event, value: _Wake) -> None:
                await event.wait()
                outcome[0] = value
                group.cancel_scope.cancel()

            async def sleeper(seconds: float) -> None:
                await self.clock.sleep(seconds)
                outcome[0] = "slept"
                group.cancel_scope.cancel()

            group.start_soon(until, changed, "changed")
            group.start_soon(until, self._killed, "interrupted")
            if self._abort is not None:
                group.start_soon(until, self._abort, "interrupted")
            if sleep is not None:
                group.start_soon(sleeper, sleep)
        if self._interrupted(control):
            return "interrupted"
        return outcome[0]

    async def _sleep(self, control: FakePromptControl | None, seconds: float) -> bool:
        deadline = self.clock.now() + seconds
        while (remaining := deadline - self.clock.now()) > 0:
            if await self._wait(control, sleep=remaining) == "interrupted":
                return False
        return True

    # -- the driver --------------------------------------------------------------------

    async def drive(self, control: FakePromptControl | None) -> None:
        """Advance the turn until it settles, is suspended, or ``control`` is superseded.

        The caller holds :attr:`lock`. Cancelling the caller is safe: the pending request
        is kept and the next driver handles it again.
        """
        while self.status == "running":
            if control is not None and control is not self.control:
                return
            if self._killed.is_set():
                return
            if self._abort is not None and self._abort.is_set():
                self._settle(
                    "aborted",
                    TurnAbortedError(
                        f"Turn {self.record.index} of session {self.ctx.session_id} was aborted."
                    ),
                )
                return
            if self._suspend_requested:
                self.status = "suspended"
                self._notify()
                return
            if self._pending is None:
                try:
                    request = (
                        self._generator.send(self._send) if self._started else next(self._generator)
                    )
                except StopIteration as stop:
                    end = stop.value
                    self.record.ended = True
                    self._settle(
                        "finished"
                        if isinstance(end, TurnEnd) and end.how == "finish"
                        else "errored"
                    )
                    return
                except Exception as error:
                    self._settle("failed", error)
                    return
                self._started = True
                self._send = None
                self._pending = request
            replaying = self._logical < self.record.cursor
            try:
                handled, value = await self._handle(self._pending, control)
            except Exception as error:
                self._settle("failed", error)
                return
            if handled:
                self._pending = None
                self._send = value
                if replaying:
                    # A replayed request emits nothing, so no consumer has anything to
                    # run for; a long replay still yields now and then.
                    self._replayed += 1
                    if self._replayed % _REPLAY_YIELD_EVERY:
                        continue
                # Let consumers run between parts, as a streaming runtime would.
                await anyio.lowlevel.checkpoint()

    async def _handle(
        self, request: Request, control: FakePromptControl | None
    ) -> tuple[bool, Any]:
        if isinstance(request, EmitRequest):
            return await self._emit_part(request.part, control), None
        if isinstance(request, NoteRequest):
            if self._notes >= self.record.notes_logged:
                self.log.record(request.entry)
                self.record.notes_logged += 1
            self._notes += 1
            return True, None
        if isinstance(request, SleepRequest):
            if self._logical < self.record.cursor:
                return True, None
            return await self._sleep(control, request.seconds), None
        replayed = self._replay(request)
        if replayed is not None:
            return True, replayed[0]
        if isinstance(request, ExecuteRequest):
            return await self._execute(request)
        if isinstance(request, PollRequest):
            inbox = self.record.inbox
            value: JSONValue
            if request.kind == "user-messages":
                value, inbox.user_messages = list(inbox.user_messages), []
            else:
                value, inbox.compactions = list(inbox.compactions), []
            return True, self._journal(f"poll:{request.kind}", value)
        return await self._await(request, control)

    def _journal_key(self, request: Request) -> str:
        if isinstance(request, ExecuteRequest):
            return request.key
        if isinstance(request, PollRequest):
            return f"poll:{request.kind}"
        assert isinstance(request, AwaitRequest)
        return f"{request.kind}:{request.key}"

    def _replay(self, request: Request) -> tuple[Any] | None:
        journal = self.record.journal
        if self._journal_position >= len(journal):
            return None
        entry = journal[self._journal_position]
        expected = self._journal_key(request)
        if entry.key != expected:
            raise ScriptMismatchError(
                f"The turn's journal says '{entry.key}' happened next but the script now asks for "
                f"'{expected}'; continue the turn with the script that produced the state."
            )
        self._journal_position += 1
        return (entry.value,)

    def _journal(self, key: str, value: JSONValue) -> JSONValue:
        self.record.journal.append(JournalEntry(key=key, value=value))
        self._journal_position += 1
        return value

    async def _execute(self, request: ExecuteRequest) -> tuple[bool, Any]:
        abort = self._abort
        result: list[dict[str, JSONValue]] = []
        failure: list[BaseException] = []
        async with anyio.create_task_group() as group:

            async def watch(event: anyio.Event) -> None:
                await event.wait()
                group.cancel_scope.cancel()

            group.start_soon(watch, self._killed)
            if abort is not None:
                group.start_soon(watch, abort)
            try:
                result.append(await request.run(abort))
            except SandboxAbortedError:
                pass
            except Exception as error:
                failure.append(error)
            group.cancel_scope.cancel()
        if failure:
            raise failure[0]
        if not result:
            return False, None  # aborted: the driver settles the turn
        value = result[0]
        for entry in request.describe(value):
            self.log.record(entry)
        return True, self._journal(request.key, value)

    async def _await(
        self, request: AwaitRequest, control: FakePromptControl | None
    ) -> tuple[bool, Any]:
        assert isinstance(request, AwaitRequest)
        inbox = self.record.inbox
        key = self._journal_key(request)
        while True:
            value: JSONValue = None
            if request.kind == "tool-result" and request.key in inbox.tool_results:
                value = inbox.tool_results.pop(request.key)
            elif request.kind == "approval" and request.key in inbox.approvals:
                value = inbox.approvals.pop(request.key)
            elif request.kind == "user-message" and inbox.user_messages:
                value = {"text": inbox.user_messages.pop(0)}
            if value is not None:
                self._await_deadline = None
                return True, self._journal(key, value)
            sleep: float | None = None
            if request.timeout is not None:
                if self._await_deadline is None:
                    self._await_deadline = self.clock.now() + request.timeout
                sleep = self._await_deadline - self.clock.now()
                if sleep <= 0:
                    self._await_deadline = None
                    return True, self._journal(key, {"timeout": True})
            self.waiting_for = key
            try:
                wake = await self._wait(control, sleep=sleep)
            finally:
                self.waiting_for = None
            if wake == "interrupted":
                return False, None

    def _fires(self, fault: Fault, index: int, part_type: str, occurrence: int) -> bool:
        if isinstance(fault, DropFinishStepFault):
            return False
        if fault.at_part is not None:
            return fault.at_part == index
        return fault.before_type == part_type and fault.occurrence == occurrence

    def _already_answered(self, part: StreamPart) -> bool:
        keys = {entry.key for entry in self.record.journal}
        inbox = self.record.inbox
        if isinstance(part, ToolApprovalRequestPart):
            return f"approval:{part.approval_id}" in keys or part.approval_id in inbox.approvals
        call_id: str | None = None
        if isinstance(part, ToolCallPart) and part.provider_executed is None:
            call_id = part.tool_call_id
        elif isinstance(part, ToolInputStartPart | ToolInputDeltaPart | ToolInputEndPart):
            call_id = part.id  # only host calls ever have tool-result journal keys
        if call_id is None:
            return False
        return f"tool-result:{call_id}" in keys or call_id in inbox.tool_results

    def _count(self, part: StreamPart) -> None:
        self._logical += 1
        self._type_counts[part.type] += 1
        if isinstance(part, FinishStepPart):
            self._finish_steps += 1

    def _send_part(self, part: StreamPart | dict[str, JSONValue]) -> None:
        assert self._emit is not None
        self._emit(part)

    async def _emit_part(self, part: StreamPart, control: FakePromptControl | None) -> bool:
        index = self._logical
        if index < self.record.cursor:
            self._count(part)  # replaying what an earlier slice already emitted
            return True
        if index < self.record.rerun_until and self._already_answered(part):
            # A lossy rerun repeats the step, but a host request answered before the
            # suspension is not asked again (the agent would dispatch it twice).
            self._count(part)
            self.record.cursor = index + 1
            return True
        occurrence = self._type_counts[part.type] + 1
        fired = self.record.faults_fired
        for number, fault in enumerate(self.faults):
            if number in fired or not self._fires(fault, index, part.type, occurrence):
                continue
            if isinstance(fault, DelayPartFault):
                if not await self._sleep(control, fault.seconds):
                    return False
                fired.append(number)
            elif isinstance(fault, CrashFault):
                fired.append(number)
                self._settle("failed", FakeHarnessCrashError(fault.message))
                return False
            elif isinstance(fault, HangFault):
                fired.append(number)
                while await self._wait(control) != "interrupted":
                    pass
                return False
            elif isinstance(fault, MalformedPartFault):
                fired.append(number)
                self._send_part(dict(fault.part))
            elif isinstance(fault, CloseEarlyFault):
                fired.append(number)
                self._settle("closed")
                return False
        if self._hold_at == index:
            self._hold_at = None
            self.held.set()
            while await self._wait(control) != "interrupted":
                pass
            return False
        dropped = isinstance(part, FinishStepPart) and any(
            isinstance(fault, DropFinishStepFault)
            and (fault.steps is None or self._finish_steps in fault.steps)
            for fault in self.faults
        )
        if not dropped:
            if isinstance(part, FinishStepPart):
                # A copy: the script's part may be emitted again (a replay, another turn).
                part = part.model_copy()
                attach_event_checkpoint(part, self._checkpoint(index + 1))
            self._send_part(part)
        self._count(part)
        self.record.cursor = index + 1
        if isinstance(part, FinishStepPart):
            self.record.step_start = index + 1
        return True


class FakePromptControl:
    """The handle of a fake turn: ``submit_tool_result`` and ``done``.

    Controls of profiles with built-in approvals also have ``submit_tool_approval``; of
    profiles with steering, ``submit_user_message`` (the method is absent otherwise, so
    ``getattr(control, "submit_user_message", None)`` tells).

    ``done()`` drives the turn: it returns when the turn finished (or was suspended, or
    this control was superseded by ``do_continue_turn``) and raises the turn's error
    when it failed (:class:`FakeHarnessCrashError`, :class:`TurnAbortedError`, an
    exception raised by ``emit``, a sandbox failure).
    """

    def __init__(self, turn: TurnRuntime, check_session: Callable[[str], None]) -> None:
        self._turn = turn
        self._check_session = check_session

    async def submit_tool_result(
        self,
        tool_call_id: str,
        output: JSONValue,
        is_error: bool = False,
        tool_result: dict[str, Any] | None = None,
    ) -> None:
        """Deliver a host tool's result (into the turn, even from a superseded control)."""
        self._check_session("submit a tool result")
        self._turn.submit_tool_result(tool_call_id, output, is_error, tool_result)

    async def done(self) -> None:
        """Return when the turn has ended for this control; raise the turn's error."""
        turn = self._turn
        while True:
            if self is not turn.control or turn.status == "suspended":
                return
            if turn.status in TERMINAL_STATUSES:
                if turn.error is not None:
                    raise turn.error
                return
            async with turn.lock:
                if self is turn.control and turn.status == "running":
                    await turn.drive(self)


class _ApprovalControl(FakePromptControl):
    async def submit_tool_approval(
        self, approval_id: str, approved: bool, reason: str | None = None
    ) -> None:
        """Answer a built-in approval request."""
        self._check_session("submit a tool approval")
        self._turn.submit_tool_approval(approval_id, approved, reason)


class _SteeringControl(FakePromptControl):
    async def submit_user_message(self, text: str) -> None:
        """Steer the running turn with a user message."""
        self._check_session("submit a user message")
        self._turn.submit_user_message(text)


class _ApprovalSteeringControl(_ApprovalControl, _SteeringControl):
    pass


def make_control(
    turn: TurnRuntime, check_session: Callable[[str], None], *, approvals: bool, steering: bool
) -> FakePromptControl:
    """A control offering exactly the optional methods the profile supports."""
    if approvals and steering:
        return _ApprovalSteeringControl(turn, check_session)
    if approvals:
        return _ApprovalControl(turn, check_session)
    if steering:
        return _SteeringControl(turn, check_session)
    return FakePromptControl(turn, check_session)
