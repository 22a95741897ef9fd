"""Workflow runners: a turn run as durable steps (``@ai-sdk/workflow-harness`` in Python).

A :class:`WorkflowState` is the whole checkpoint between two workflow steps: plain JSON
(``state.to_wire()`` / ``WorkflowState.from_wire(...)``), so a step may run in another
process or on another machine. Each runner call opens the session from the state, runs
one slice of the turn and returns the next state::

    state = create_workflow_state("chat-42", prompt="Fix the tests", resume_from=saved)
    while state.status in ("not_started", "ready_for_next_step"):
        state = await run_time_slice(agent, state, budget_seconds=600, writer=ui)
    result = finalize_workflow(state)          # raises when the workflow failed
    saved = state.resume_from                  # persist by session id for the next turn

Statuses: ``not_started`` -> ``ready_for_next_step`` (the turn is unfinished:
``continue_from`` carries it), ``awaiting_tool_approval`` (it waits for approvals or
client tool results: create the next state with the answers), ``finished`` (the session
was detached: ``resume_from`` warms the next user turn) or ``failed``.

:func:`run_agent_step` runs one semantic step (give the agent
``stop_when=step_count_is(1)``); :func:`run_time_slice` runs until ``budget_seconds`` of
the injected clock passed, then ``session.suspend_turn()``. Parts go to ``writer`` as they
arrive, like the upstream ``writable``: a continued turn's ``start`` is dropped, ``finish``
is written once when the turn finishes or pauses for answers (then the writer is
closed), text and reasoning blocks cut by a slice boundary are closed at the end of the
slice and reopened (their stored ``*-start``) before their next delta.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeAlias, runtime_checkable

import anyio
from pydantic import Field

from harness_testkit.spec import (
    Clock,
    ConsumerAbortPart,
    ConsumerErrorPart,
    ConsumerFinishPart,
    ConsumerPart,
    ConsumerReasoningDeltaPart,
    ConsumerReasoningEndPart,
    ConsumerReasoningStartPart,
    ConsumerStartPart,
    ConsumerTextDeltaPart,
    ConsumerTextEndPart,
    ConsumerTextStartPart,
    ConsumerToolCallPart,
    ConsumerToolErrorPart,
    ConsumerToolInputStartPart,
    ConsumerToolResultPart,
    HarnessError,
    HarnessSessionStateError,
    HarnessUsageError,
    JSONValue,
    WireModel,
    parse_consumer_part,
)

from ._agent import HarnessAgent
from ._session import AgentSession
from ._stream_result import StreamResult

__all__ = [
    "AnyioClock",
    "ManualClock",
    "PartCollector",
    "WorkflowClock",
    "WorkflowFailedError",
    "WorkflowResult",
    "WorkflowState",
    "WorkflowStatus",
    "WorkflowStreamContext",
    "WorkflowUsage",
    "WorkflowWritable",
    "create_workflow_state",
    "finalize_workflow",
    "run_agent_step",
    "run_time_slice",
    "step_count_is",
]

DEFAULT_TIME_SLICE_SECONDS = 750.0


class WorkflowFailedError(HarnessError):
    """Raised by :func:`finalize_workflow` for a ``failed`` workflow state."""

    name = "AI_HarnessWorkflowFailedError"


# -- the state ---------------------------------------------------------------------------


class WorkflowStatus(enum.StrEnum):
    """Where a workflow is (the upstream ``HarnessWorkflowState.status``)."""

    NOT_STARTED = "not_started"
    READY_FOR_NEXT_STEP = "ready_for_next_step"
    AWAITING_TOOL_APPROVAL = "awaiting_tool_approval"
    FINISHED = "finished"
    FAILED = "failed"


class _WorkflowModel(WireModel):
    """Base of the workflow models (the configuration and ``to_wire`` of ``WireModel``)."""


class WorkflowUsage(_WorkflowModel):
    """Token usage of the finished (or paused) turn."""

    input_tokens: int | None = None
    output_tokens: int | None = None


class WorkflowResult(_WorkflowModel):
    """What :func:`finalize_workflow` returns."""

    session_id: str
    finish_reason: str
    usage: WorkflowUsage | None = None


class WorkflowStreamContext(_WorkflowModel):
    """Blocks still open at a slice boundary, by id (their ``*-start`` parts, as wire dicts).

    Attributes:
        active_text_parts: Text blocks opened and not yet ended.
        active_reasoning_parts: Reasoning blocks opened and not yet ended.
        pending_tool_inputs: Tool inputs started without their ``tool-call`` yet
            (recorded, never replayed: the call arrives once).
        settled_tool_call_ids: Calls whose result or error the writer already got in
            this turn. The agent's continue state has the official shape, which names no
            settled calls, so a runtime's replay of such a call in a later slice is
            dropped here instead of being written twice.
    """

    active_text_parts: dict[str, dict[str, JSONValue]] = Field(default_factory=dict)
    active_reasoning_parts: dict[str, dict[str, JSONValue]] = Field(default_factory=dict)
    pending_tool_inputs: dict[str, dict[str, JSONValue]] = Field(default_factory=dict)
    settled_tool_call_ids: list[str] = Field(default_factory=list)


class WorkflowState(_WorkflowModel):
    """The durable checkpoint of a workflow (JSON round-trippable).

    Attributes:
        session_id: Stable across the user's turns (also the sandbox's name).
        prompt: The user prompt of a new turn (a string or one user message).
        messages: Full model messages; a trailing ``role: "tool"`` message with approval
            responses or tool results continues the unfinished turn.
        tool_approval_responses: Answers to pending approvals
            (``{"approvalId", "approved", "reason"?}``), consumed by the next slice.
        tool_results: Client-side tool results (``{"toolCallId", "output", "isError"?}``),
            consumed by the next slice.
        status: See :class:`WorkflowStatus`.
        resume_from: A ``resume-session`` state: warms the session between user turns.
        continue_from: A ``continue-turn`` state: the unfinished turn.
        stream_context: Blocks open across a slice boundary.
        final_result: Finish reason and usage, once finished or paused for answers.
        error: Why the workflow failed.
    """

    session_id: str = Field(min_length=1)
    prompt: str | dict[str, JSONValue] = ""
    messages: list[dict[str, JSONValue]] | None = None
    tool_approval_responses: list[dict[str, JSONValue]] | None = None
    tool_results: list[dict[str, JSONValue]] | None = None
    status: WorkflowStatus = WorkflowStatus.NOT_STARTED
    resume_from: dict[str, JSONValue] | None = None
    continue_from: dict[str, JSONValue] | None = None
    stream_context: WorkflowStreamContext | None = None
    final_result: WorkflowResult | None = None
    error: str | None = None

    @classmethod
    def from_wire(cls, data: object) -> WorkflowState:
        """Validate a state read back from JSON (a dict or a JSON string)."""
        if isinstance(data, str | bytes):
            return cls.model_validate_json(data)
        return cls.model_validate(data)

    def to_json(self) -> str:
        """The state as a JSON string."""
        return json.dumps(self.to_wire(), ensure_ascii=False)

    @property
    def pending_tool_approvals(self) -> list[dict[str, Any]]:
        """Approvals the unfinished turn waits for (``approvalId``, ``toolName``, ...)."""
        pending = (self.continue_from or {}).get("pendingToolApprovals")
        if not isinstance(pending, list):
            return []
        return [dict(item) for item in pending if isinstance(item, dict)]

    @property
    def pending_tool_results(self) -> list[dict[str, Any]]:
        """Client-side tool calls the unfinished turn waits for (no result yet)."""
        pending = (self.continue_from or {}).get("pendingToolResults")
        if not isinstance(pending, list):
            return []
        return [
            dict(item)
            for item in pending
            if isinstance(item, dict) and item.get("completedResult") is None
        ]


def _wire(state: Any) -> dict[str, JSONValue] | None:
    if state is None:
        return None
    raw = state.to_wire() if hasattr(state, "to_wire") else state
    # A JSON round trip: the checkpoint holds plain JSON only, whatever we were given.
    copied: dict[str, JSONValue] = json.loads(json.dumps(raw))
    return copied


def create_workflow_state(
    session_id: str,
    *,
    prompt: str | dict[str, Any] = "",
    messages: list[dict[str, Any]] | None = None,
    resume_from: Any = None,
    continue_from: Any = None,
    tool_approval_responses: list[dict[str, Any]] | None = None,
    tool_results: list[dict[str, Any]] | None = None,
) -> WorkflowState:
    """A ``not_started`` state for one user turn (or the answers a paused turn waits for).

    Args:
        session_id: The session id, stable across the user's turns.
        prompt: The prompt of a new turn.
        messages: Model messages instead of ``prompt`` (approval responses included).
        resume_from: The ``resume_from`` of the previous turn's final state.
        continue_from: The ``continue_from`` of a paused (``awaiting_tool_approval``)
            state, with ``tool_approval_responses`` or ``tool_results``.
        tool_approval_responses: ``{"approvalId", "approved", "reason"?}`` answers.
        tool_results: ``{"toolCallId", "output", "isError"?}`` client tool results.

    Raises:
        HarnessUsageError: both ``resume_from`` and ``continue_from``.
    """
    if resume_from is not None and continue_from is not None:
        raise HarnessUsageError(
            "create_workflow_state: pass either `resume_from` or `continue_from`, not both."
        )
    return WorkflowState(
        session_id=session_id,
        prompt=prompt,
        messages=messages,
        resume_from=_wire(resume_from),
        continue_from=_wire(continue_from),
        tool_approval_responses=tool_approval_responses,
        tool_results=tool_results,
    )


def finalize_workflow(state: WorkflowState) -> WorkflowResult:
    """The workflow's result.

    Returns:
        ``final_result``, or ``{session_id, finish_reason: "unknown"}`` without one.

    Raises:
        WorkflowFailedError: the state is ``failed`` (its ``error`` as the message).
    """
    if state.status is WorkflowStatus.FAILED:
        raise WorkflowFailedError(state.error or "harness workflow failed")
    return state.final_result or WorkflowResult(
        session_id=state.session_id, finish_reason="unknown"
    )


def step_count_is(count: int) -> Callable[[Any], bool]:
    """A ``stop_when`` predicate: exactly ``count`` steps ran in the slice (``isStepCount``: ==)."""
    if count < 1:
        raise HarnessUsageError(f"step_count_is needs a count of at least 1; got {count}.")

    def reached(context: Any) -> bool:
        return len(context["steps"]) == count

    return reached


# -- clocks and writers ------------------------------------------------------------------


#: Time for time slices: the kit's one clock protocol (``harness_testkit.spec.Clock``).
WorkflowClock: TypeAlias = Clock


class AnyioClock:
    """The event loop's monotonic clock (the default; virtual under trio's ``MockClock``)."""

    def now(self) -> float:
        """``anyio.current_time()``."""
        return anyio.current_time()

    async def sleep(self, seconds: float) -> None:
        """``anyio.sleep(seconds)``."""
        await anyio.sleep(max(0.0, seconds))


class ManualClock:
    """A clock that moves only when :meth:`advance` is called: slice budgets on demand.

    Sleepers wake when the time reaches their deadline. Use it from the event loop's
    thread only.

    Args:
        start: The initial time in seconds.
    """

    def __init__(self, start: float = 0.0) -> None:
        self._now = float(start)
        self._waiters: list[anyio.Event] = []

    def now(self) -> float:
        """The manual time."""
        return self._now

    async def sleep(self, seconds: float) -> None:
        """Wait until :meth:`advance` moved the time ``seconds`` forward."""
        deadline = self._now + max(0.0, seconds)
        while self._now < deadline:
            waiter = anyio.Event()
            self._waiters.append(waiter)
            await waiter.wait()

    def advance(self, seconds: float) -> None:
        """Move the time forward and wake the sleepers whose deadline passed.

        Raises:
            ValueError: for a negative ``seconds``.
        """
        if seconds < 0:
            raise ValueError(f"A manual clock only moves forward; got {seconds} seconds.")
        self._now += seconds
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            waiter.set()


@runtime_checkable
class WorkflowWritable(Protocol):
    """Where a slice's parts go (the upstream ``writable``)."""

    async def write(self, part: ConsumerPart) -> None:
        """Take one consumer part."""
        ...

    async def close(self) -> None:
        """The turn's response is complete (finished, or paused for answers)."""
        ...


class PartCollector:
    """A :class:`WorkflowWritable` that keeps what it receives (tests, simple hosts).

    Attributes:
        parts: Every part written, across slices.
        closed: How many times the writer was closed.
    """

    def __init__(self) -> None:
        self.parts: list[ConsumerPart] = []
        self.closed = 0

    async def write(self, part: ConsumerPart) -> None:
        """Keep ``part``."""
        self.parts.append(part)

    async def close(self) -> None:
        """Count the close."""
        self.closed += 1


Writer: TypeAlias = WorkflowWritable | Callable[[ConsumerPart], Awaitable[None] | None]


class _Sink:
    def __init__(self, writer: Writer | None) -> None:
        self._writer = writer

    async def write(self, part: ConsumerPart) -> None:
        writer = self._writer
        if writer is None:
            return
        if isinstance(writer, WorkflowWritable):
            await writer.write(part)
            return
        returned = writer(part)
        if returned is not None:
            await returned

    async def close(self) -> None:
        if isinstance(self._writer, WorkflowWritable):
            await self._writer.close()


# -- one slice ---------------------------------------------------------------------------


class _Tracker:
    """Forwards a slice's parts and tracks the blocks open across slice boundaries."""

    def __init__(self, context: WorkflowStreamContext | None, sink: _Sink, continuing: bool):
        context = context or WorkflowStreamContext()
        self.text = dict(context.active_text_parts)
        self.reasoning = dict(context.active_reasoning_parts)
        self.tool_inputs = dict(context.pending_tool_inputs)
        self.settled = list(context.settled_tool_call_ids)
        self.sink = sink
        self.continuing = continuing
        self.opened_here: set[tuple[str, str]] = set()
        self.finish: ConsumerFinishPart | None = None
        self.error: str | None = None
        self.aborted = False

    def context(self) -> WorkflowStreamContext | None:
        if not (self.text or self.reasoning or self.tool_inputs or self.settled):
            return None
        return WorkflowStreamContext(
            active_text_parts=self.text,
            active_reasoning_parts=self.reasoning,
            pending_tool_inputs=self.tool_inputs,
            settled_tool_call_ids=self.settled,
        )

    async def _reopen(self, kind: str, block_id: str) -> None:
        # A block opened in an earlier slice: its consumer saw it closed at that slice's
        # end, so replay the stored start before the next delta or end.
        table = self._table(kind)
        if (kind, block_id) not in self.opened_here and block_id in table:
            await self.sink.write(parse_consumer_part(table[block_id]))
            self.opened_here.add((kind, block_id))

    async def forward(self, part: ConsumerPart) -> None:
        if isinstance(part, ConsumerStartPart):
            if not self.continuing:
                await self.sink.write(part)
            return
        if isinstance(part, ConsumerFinishPart):
            self.finish = part  # written once, when the turn's response is complete
            return
        if isinstance(part, ConsumerAbortPart):
            self.aborted = True
            return
        if isinstance(part, ConsumerErrorPart):
            self.error = _error_text(part.to_wire().get("error"))
        elif isinstance(part, ConsumerTextStartPart | ConsumerReasoningStartPart):
            block = _block(part)
            self._table(block)[part.id] = part.to_wire()
            self.opened_here.add((block, part.id))
        elif isinstance(part, _BLOCK_CONTENT):
            block = _block(part)
            await self._reopen(block, part.id)
            if isinstance(part, ConsumerTextEndPart | ConsumerReasoningEndPart):
                self._table(block).pop(part.id, None)
                self.opened_here.discard((block, part.id))
        elif isinstance(part, ConsumerToolInputStartPart):
            self.tool_inputs[part.id] = part.to_wire()
        elif isinstance(part, ConsumerToolCallPart):
            if part.tool_call_id in self.settled:
                return  # a runtime replay of a call settled in an earlier slice
            self.tool_inputs.pop(part.tool_call_id, None)
        elif isinstance(part, ConsumerToolResultPart | ConsumerToolErrorPart):
            if part.tool_call_id in self.settled:
                return
            if isinstance(part, ConsumerToolErrorPart) or not part.preliminary:
                self.settled.append(part.tool_call_id)
        await self.sink.write(part)

    def _table(self, block: str) -> dict[str, dict[str, JSONValue]]:
        return self.text if block == "text" else self.reasoning

    async def close_open_blocks(self) -> None:
        """End the blocks this slice opened (they reopen in the next slice)."""
        for kind, block_id in sorted(self.opened_here):
            end = {"type": f"{kind}-end", "id": block_id}
            await self.sink.write(parse_consumer_part(end))
        self.opened_here.clear()


_BLOCK_CONTENT = (
    ConsumerTextDeltaPart,
    ConsumerTextEndPart,
    ConsumerReasoningDeltaPart,
    ConsumerReasoningEndPart,
)


def _block(part: ConsumerPart) -> str:
    """``text`` or ``reasoning``: which kind of block a part belongs to."""
    return "text" if part.type.startswith("text-") else "reasoning"


def _error_text(value: Any) -> str:
    if isinstance(value, dict) and isinstance(value.get("message"), str):
        return str(value["message"])
    return value if isinstance(value, str) else json.dumps(value)


def _final_result(session_id: str, finish: ConsumerFinishPart | None) -> WorkflowResult:
    if finish is None:
        return WorkflowResult(session_id=session_id, finish_reason="stop")
    usage = finish.total_usage
    return WorkflowResult(
        session_id=session_id,
        finish_reason=finish.finish_reason or "stop",
        usage=WorkflowUsage(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens),
    )


def _awaits_answers(continue_from: dict[str, Any]) -> bool:
    if continue_from.get("pendingToolApprovals"):
        return True
    results = continue_from.get("pendingToolResults") or []
    return any(isinstance(item, dict) and item.get("completedResult") is None for item in results)


def _resume_wrapping(continue_from: dict[str, JSONValue]) -> dict[str, JSONValue]:
    return {
        "type": "resume-session",
        "harnessId": continue_from.get("harnessId"),
        "specificationVersion": continue_from.get("specificationVersion"),
        "data": continue_from.get("data"),
        "continueFrom": continue_from,
    }


async def _destroy(session: AgentSession) -> None:
    with anyio.CancelScope(shield=True), anyio.move_on_after(30):
        await session.destroy()


def _failed(state: WorkflowState, message: str) -> WorkflowState:
    # The previous resume/continue states stay: the caller may retry from them.
    return state.model_copy(update={"status": WorkflowStatus.FAILED, "error": message})


async def _open(agent: HarnessAgent, state: WorkflowState) -> AgentSession:
    if state.continue_from is not None:
        return await agent.create_session(
            session_id=state.session_id, continue_from=state.continue_from
        )
    if state.resume_from is not None:
        return await agent.create_session(
            session_id=state.session_id, resume_from=state.resume_from
        )
    return await agent.create_session(session_id=state.session_id)


async def _start(
    agent: HarnessAgent, session: AgentSession, state: WorkflowState, timeout: float | None
) -> StreamResult:
    if state.messages:
        return await agent.stream(session=session, messages=state.messages, timeout=timeout)
    if state.tool_approval_responses or state.tool_results or state.continue_from is not None:
        return await agent.continue_stream(
            session=session,
            timeout=timeout,
            tool_approval_continuations=[
                {"type": "tool-approval-response", **item}
                for item in state.tool_approval_responses or []
            ],
            tool_result_continuations=state.tool_results or [],
        )
    return await agent.stream(session=session, prompt=state.prompt, timeout=timeout)


def _check_runnable(state: WorkflowState) -> None:
    if state.status in (WorkflowStatus.FINISHED, WorkflowStatus.FAILED):
        raise HarnessUsageError(
            f"Workflow state of session {state.session_id} is {state.status.value}; create a "
            "new state (create_workflow_state) for the next user turn."
        )
    answered = state.messages or state.tool_approval_responses or state.tool_results
    if state.status is WorkflowStatus.AWAITING_TOOL_APPROVAL and not answered:
        raise HarnessUsageError(
            f"Workflow of session {state.session_id} awaits tool approvals or results; create "
            "the next state with create_workflow_state(..., continue_from=state.continue_from, "
            "tool_approval_responses=[...] or tool_results=[...])."
        )


async def _run_slice(
    agent: HarnessAgent,
    state: WorkflowState,
    *,
    budget_seconds: float | None,
    clock: WorkflowClock,
    writer: Writer | None,
    destroy_on_finish: bool,
    timeout: float | None,
) -> WorkflowState:
    _check_runnable(state)
    sink = _Sink(writer)
    continuing = state.continue_from is not None
    consumed = {"messages": None, "tool_approval_responses": None, "tool_results": None}
    try:
        session = await _open(agent, state)
    except Exception as error:
        return _failed(state, f"{type(error).__name__}: {error}")
    try:
        result = await _start(agent, session, state, timeout)
    except Exception as error:
        await _destroy(session)
        return _failed(state, f"{type(error).__name__}: {error}")
    tracker = _Tracker(state.stream_context, sink, continuing)
    suspended: list[Any] = []
    timer_fired = False
    timer_scope = anyio.CancelScope()
    suspend_failure: list[BaseException] = []

    async def timer(seconds: float) -> None:
        nonlocal timer_fired
        with timer_scope:
            await clock.sleep(seconds)
        if timer_scope.cancelled_caught:
            return
        timer_fired = True
        if not session.has_unfinished_turn():
            return  # the turn ended before the budget ran out: nothing to suspend
        try:
            suspended.append(await session.suspend_turn())
        except (HarnessError, HarnessSessionStateError) as error:
            # The turn may finish while the suspension waits for the adapter; only a
            # turn that is still unfinished makes a failed suspension a failure.
            if session.has_unfinished_turn():
                suspend_failure.append(error)

    async with anyio.create_task_group() as group:
        if budget_seconds is not None:
            group.start_soon(timer, budget_seconds)
        # Closed explicitly: a writer that raises must not leave the stream to the GC.
        async with result:
            async for part in result.full_stream:
                if timer_fired and part.type == "abort":
                    continue  # the suspension's own abort, not a failure
                await tracker.forward(part)
        if not timer_fired:
            timer_scope.cancel()
    if suspend_failure:
        await _destroy(session)
        await sink.close()
        return _failed(state, f"{type(suspend_failure[0]).__name__}: {suspend_failure[0]}")
    if tracker.error is not None or (tracker.aborted and not suspended):
        await _destroy(session)
        await sink.close()
        detail = tracker.error or "the turn was aborted"
        return _failed(state, f"The harness turn emitted an error: {detail}")
    if not suspended and session.has_unfinished_turn():
        try:
            suspended.append(await session.suspend_turn())
        except (HarnessError, HarnessSessionStateError) as error:
            await _destroy(session)
            await sink.close()
            return _failed(state, f"{type(error).__name__}: {error}")
    if suspended:
        continue_from = _wire(suspended[0])
        assert continue_from is not None
        if _awaits_answers(continue_from):
            final = _final_result(state.session_id, tracker.finish)
            if tracker.finish is not None:
                await sink.write(tracker.finish)
            await sink.close()
            return state.model_copy(
                update={
                    **consumed,
                    "status": WorkflowStatus.AWAITING_TOOL_APPROVAL,
                    "continue_from": continue_from,
                    "resume_from": _resume_wrapping(continue_from),
                    "stream_context": tracker.context(),
                    "final_result": final,
                }
            )
        await tracker.close_open_blocks()
        return state.model_copy(
            update={
                **consumed,
                "status": WorkflowStatus.READY_FOR_NEXT_STEP,
                "continue_from": continue_from,
                "stream_context": tracker.context(),
            }
        )
    final = _final_result(state.session_id, tracker.finish)
    if tracker.finish is not None:
        await sink.write(tracker.finish)
    await sink.close()
    resume_from = state.resume_from
    if destroy_on_finish:
        await _destroy(session)
        resume_from = None
    else:
        try:
            resume_from = _wire(await session.detach())
        except HarnessError:
            pass  # keep the previous warm state: the next turn can still start from it
    return state.model_copy(
        update={
            **consumed,
            "status": WorkflowStatus.FINISHED,
            "resume_from": resume_from,
            "continue_from": None,
            "stream_context": None,
            "final_result": final,
        }
    )


async def run_time_slice(
    agent: HarnessAgent,
    state: WorkflowState,
    *,
    budget_seconds: float = DEFAULT_TIME_SLICE_SECONDS,
    clock: WorkflowClock | None = None,
    writer: Writer | None = None,
    destroy_on_finish: bool = False,
    timeout: float | None = None,
) -> WorkflowState:
    """Run the turn until it ends or ``budget_seconds`` pass, then suspend it.

    Omit ``stop_when`` on the agent: the clock alone cuts the turn.

    Args:
        agent: The agent (any process: the session is opened from ``state``).
        state: The current checkpoint.
        budget_seconds: The slice budget on ``clock``.
        clock: Time source (default :class:`AnyioClock`; :class:`ManualClock` in tests).
        writer: Receives the slice's consumer parts (a :class:`WorkflowWritable` or a
            callable, sync or async).
        destroy_on_finish: Destroy the session (and sandbox) when the turn finishes
            instead of detaching it; ``resume_from`` is then dropped.
        timeout: Seconds (wall clock, the agent's own timer) after which the turn is
            aborted and the workflow fails: a bound for a runtime that hangs.

    Returns:
        The next state.

    Raises:
        HarnessUsageError: ``state`` is finished or failed, or awaits answers it lacks.
    """
    if budget_seconds <= 0:
        raise HarnessUsageError(f"budget_seconds must be positive; got {budget_seconds}.")
    return await _run_slice(
        agent,
        state,
        budget_seconds=budget_seconds,
        clock=clock or AnyioClock(),
        writer=writer,
        destroy_on_finish=destroy_on_finish,
        timeout=timeout,
    )


async def run_agent_step(
    agent: HarnessAgent,
    state: WorkflowState,
    *,
    writer: Writer | None = None,
    destroy_on_finish: bool = False,
    timeout: float | None = None,
) -> WorkflowState:
    """Run one semantic step: the agent's ``stop_when`` (``step_count_is(1)``) ends it.

    Args:
        agent: The agent, with ``stop_when=step_count_is(1)``.
        state: The current checkpoint.
        writer: Receives the step's consumer parts.
        destroy_on_finish: As in :func:`run_time_slice`.
        timeout: As in :func:`run_time_slice`.

    Returns:
        The next state (``ready_for_next_step`` while the turn has more steps).

    Raises:
        HarnessUsageError: ``state`` is finished or failed, or awaits answers it lacks.
    """
    return await _run_slice(
        agent,
        state,
        budget_seconds=None,
        clock=AnyioClock(),
        writer=writer,
        destroy_on_finish=destroy_on_finish,
        timeout=timeout,
    )
