"""A tiny scripted harness-v1 adapter for rule-level tests of the reference agent.

Each turn is a list of steps executed inside ``done()``: a part (model or wire dict) is
emitted, :class:`WaitResult`/:class:`WaitApproval` block until the host submits, and
:class:`Fail` makes ``done()`` raise. Everything the agent calls is recorded.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio

from harness_testkit.spec import (
    BuiltinTool,
    ContinueTurnOptions,
    ContinueTurnState,
    FinishPart,
    FinishReason,
    FinishStepPart,
    HarnessCapabilityUnsupportedError,
    HarnessSessionStateError,
    PromptTurnOptions,
    ResumeSessionState,
    StartOptions,
    TextDeltaPart,
    UnifiedFinishReason,
    Usage,
)


@dataclass(frozen=True)
class WaitResult:
    """Block until the host submits a result for ``tool_call_id``."""

    tool_call_id: str


@dataclass(frozen=True)
class WaitApproval:
    """Block until the host answers ``approval_id``."""

    approval_id: str


@dataclass(frozen=True)
class Fail:
    """``done()`` raises ``error``."""

    error: BaseException


@dataclass(frozen=True)
class Hang:
    """Block until aborted (make it inside a running event loop: ``reached`` is an event)."""

    #: Set when ``done()`` gets to this step (everything before it has been emitted).
    reached: anyio.Event = field(default_factory=anyio.Event, compare=False)


@dataclass(frozen=True)
class Stubborn:
    """Block until ``release`` is set, shielded from cancellation and ignoring the abort
    (an adapter whose ``done()`` will not stop); make it inside a running event loop."""

    release: anyio.Event = field(default_factory=anyio.Event, compare=False)
    #: Set when ``done()`` gets to this step.
    reached: anyio.Event = field(default_factory=anyio.Event, compare=False)


@dataclass(frozen=True)
class Delay:
    """Sleep ``seconds`` (a part emitted after it comes many scheduling rounds later)."""

    seconds: float

    #: Set once ``done()`` has gone past this step.
    passed: anyio.Event = field(default_factory=anyio.Event, compare=False)
    #: Set when ``done()`` was cancelled during the sleep.
    cancelled: anyio.Event = field(default_factory=anyio.Event, compare=False)


@dataclass(frozen=True)
class Call:
    """Call ``function()`` inside ``done()`` and go straight on to the next step (no
    checkpoint in between: what the host does in reply comes after that step)."""

    function: Callable[[], object]


Step = Any


def text_step(text: str, *, block: str = "t1", reason: UnifiedFinishReason = "stop") -> list[Any]:
    """Parts of a text-only step."""
    return [
        {"type": "text-start", "id": block},
        TextDeltaPart(id=block, delta=text),
        {"type": "text-end", "id": block},
        finish_step(reason),
    ]


def finish_step(
    reason: UnifiedFinishReason = "stop",
    input_total: int | None = None,
    output_total: int | None = None,
) -> FinishStepPart:
    """A ``finish-step`` part."""
    return FinishStepPart(
        finish_reason=FinishReason(unified=reason, raw=reason),
        usage=Usage.of(input_total, output_total),
    )


def finish(
    reason: UnifiedFinishReason = "stop",
    input_total: int | None = None,
    output_total: int | None = None,
) -> FinishPart:
    """A ``finish`` part."""
    return FinishPart(
        finish_reason=FinishReason(unified=reason, raw=reason),
        total_usage=Usage.of(input_total, output_total),
    )


def tool_call(
    call_id: str,
    name: str,
    input: str = "{}",
    *,
    provider_executed: bool | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A ``tool-call`` wire dict."""
    part: dict[str, Any] = {
        "type": "tool-call",
        "toolCallId": call_id,
        "toolName": name,
        "input": input,
    }
    if provider_executed is not None:
        part["providerExecuted"] = provider_executed
    part.update(extra)
    return part


@dataclass
class Recorder:
    """Everything the agent did to the adapter."""

    starts: list[StartOptions] = field(default_factory=list)
    prompts: list[PromptTurnOptions] = field(default_factory=list)
    continues: list[ContinueTurnOptions] = field(default_factory=list)
    results: list[dict[str, Any]] = field(default_factory=list)
    approvals: list[dict[str, Any]] = field(default_factory=list)
    user_messages: list[str] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)
    compactions: list[str | None] = field(default_factory=list)


class _Turn:
    def __init__(self, steps: Sequence[Step]) -> None:
        self.steps = list(steps)
        self.cursor = 0
        self.emit: Any = None
        self.submitted: dict[str, anyio.Event] = {}
        self.finished = False
        self.suspended = False
        self.wake = anyio.Event()
        self.lock = anyio.Lock()

    def event(self, key: str) -> anyio.Event:
        if key not in self.submitted:
            self.submitted[key] = anyio.Event()
        return self.submitted[key]

    def is_suspended(self) -> bool:
        """Whether ``suspend_turn`` stopped the turn; a call, so each check after a wait re-reads it."""
        return self.suspended


class _Control:
    def __init__(
        self, session: ScriptedSession, turn: _Turn, *, approvals: bool, steering: bool
    ) -> None:
        self._session = session
        self._turn = turn
        if approvals:
            self.submit_tool_approval = self._submit_tool_approval
        if steering:
            self.submit_user_message = self._submit_user_message

    async def submit_tool_result(
        self,
        tool_call_id: str,
        output: Any,
        is_error: bool = False,
        tool_result: dict[str, Any] | None = None,
    ) -> None:
        record: dict[str, Any] = {"tool_call_id": tool_call_id, "output": output}
        if is_error:
            record["is_error"] = True
        if tool_result is not None:
            record["tool_result"] = tool_result
        self._session.harness.recorder.results.append(record)
        if self._session.harness.fail_submissions:
            raise RuntimeError("submission rejected")
        self._turn.event(tool_call_id).set()

    async def _submit_tool_approval(
        self, approval_id: str, approved: bool, reason: str | None = None
    ) -> None:
        self._session.harness.recorder.approvals.append(
            {"approval_id": approval_id, "approved": approved, "reason": reason}
        )
        self._turn.event(approval_id).set()

    async def _submit_user_message(self, text: str) -> None:
        self._session.harness.recorder.user_messages.append(text)

    async def done(self) -> None:
        turn = self._turn
        async with turn.lock:
            while turn.cursor < len(turn.steps) and not turn.is_suspended():
                step = turn.steps[turn.cursor]
                if isinstance(step, WaitResult | WaitApproval):
                    key = step.tool_call_id if isinstance(step, WaitResult) else step.approval_id
                    waiter = turn.event(key)
                    async with anyio.create_task_group() as group:

                        async def wait_key(waiter: anyio.Event = waiter) -> None:
                            await waiter.wait()
                            group.cancel_scope.cancel()

                        async def wait_wake() -> None:
                            await turn.wake.wait()
                            group.cancel_scope.cancel()

                        group.start_soon(wait_key)
                        group.start_soon(wait_wake)
                    if turn.is_suspended():
                        return
                    turn.cursor += 1
                    continue
                if isinstance(step, Call):
                    step.function()
                    turn.cursor += 1
                    continue
                if isinstance(step, Hang):
                    step.reached.set()
                    await anyio.sleep_forever()
                if isinstance(step, Stubborn):
                    step.reached.set()
                    with anyio.CancelScope(shield=True):
                        await step.release.wait()
                    turn.cursor += 1
                    continue
                if isinstance(step, Delay):
                    try:
                        await anyio.sleep(step.seconds)
                    except anyio.get_cancelled_exc_class():
                        step.cancelled.set()
                        raise
                    step.passed.set()
                    turn.cursor += 1
                    continue
                turn.cursor += 1
                if isinstance(step, Fail):
                    raise step.error
                turn.emit(step)
                await anyio.lowlevel.checkpoint()
            turn.finished = True


class ScriptedSession:
    """The adapter session: turns come from the harness's script, in order."""

    def __init__(self, harness: ScriptedHarness, options: StartOptions) -> None:
        self.harness = harness
        self.session_id = options.session_id
        self.is_resume = options.resume_from is not None or options.continue_from is not None
        self.turn: _Turn | None = None
        self.ended = False

    def _check(self, name: str) -> None:
        self.harness.recorder.calls.append(name)
        if self.ended:
            raise HarnessSessionStateError(f"{name} after the session ended")

    def _control(self, turn: _Turn) -> _Control:
        return _Control(
            self,
            turn,
            approvals=self.harness.supports_approval_responses,
            steering=self.harness.supports_steering,
        )

    async def do_prompt_turn(self, options: PromptTurnOptions) -> _Control:
        self._check("do_prompt_turn")
        self.harness.recorder.prompts.append(options)
        if self.harness.prompt_error is not None:
            error, self.harness.prompt_error = self.harness.prompt_error, None
            raise error
        steps = self.harness.turns.pop(0) if self.harness.turns else []
        self.turn = _Turn(steps)
        self.turn.emit = options.emit
        return self._control(self.turn)

    async def do_continue_turn(self, options: ContinueTurnOptions) -> _Control:
        self._check("do_continue_turn")
        self.harness.recorder.continues.append(options)
        if self.turn is None or self.turn.finished or self.turn.suspended:
            steps = self.harness.turns.pop(0) if self.harness.turns else []
            self.turn = _Turn(steps)
        self.turn.emit = options.emit
        return self._control(self.turn)

    async def do_suspend_turn(self) -> ContinueTurnState:
        self._check("do_suspend_turn")
        if self.turn is not None:
            self.turn.suspended = True
            self.turn.wake.set()
        return ContinueTurnState(harness_id=self.harness.harness_id, data=self.harness.state_data)

    async def do_detach(self) -> ResumeSessionState:
        self._check("do_detach")
        self.ended = True
        return ResumeSessionState(harness_id=self.harness.harness_id, data=self.harness.state_data)

    async def do_stop(self) -> ResumeSessionState:
        self._check("do_stop")
        self.ended = True
        return ResumeSessionState(harness_id=self.harness.harness_id, data=self.harness.state_data)

    async def do_destroy(self) -> None:
        self._check("do_destroy")
        self.ended = True

    async def do_compact(self, custom_instructions: str | None = None) -> None:
        self._check("do_compact")
        if not self.harness.supports_compaction:
            raise HarnessCapabilityUnsupportedError(
                "no manual compaction", harness_id=self.harness.harness_id
            )
        self.harness.recorder.compactions.append(custom_instructions)


class ScriptedHarness:
    """A harness-v1 adapter whose turns are lists of steps (see module docstring)."""

    specification_version: Literal["harness-v1"] = "harness-v1"

    def __init__(
        self,
        turns: Sequence[Sequence[Step]] = (),
        *,
        harness_id: str = "mock",
        builtin_tools: Mapping[str, BuiltinTool] | None = None,
        supports_builtin_tool_approvals: bool = False,
        supports_builtin_tool_filtering: bool = False,
        supports_approval_responses: bool = True,
        supports_steering: bool = False,
        supports_compaction: bool = True,
        state_data: Any = None,
    ) -> None:
        self.turns = [list(turn) for turn in turns]
        self.harness_id = harness_id
        self.builtin_tools = dict(builtin_tools or {})
        self.supports_builtin_tool_approvals = supports_builtin_tool_approvals
        self.supports_builtin_tool_filtering = supports_builtin_tool_filtering
        self.supports_approval_responses = supports_approval_responses
        self.supports_steering = supports_steering
        self.supports_compaction = supports_compaction
        self.state_data = state_data if state_data is not None else {"cursor": 0}
        self.recorder = Recorder()
        self.sessions: list[ScriptedSession] = []
        self.prompt_error: BaseException | None = None
        self.start_error: BaseException | None = None
        self.fail_submissions = False

    async def do_start(self, options: StartOptions) -> ScriptedSession:
        self.recorder.starts.append(options)
        if self.start_error is not None:
            raise self.start_error
        session = ScriptedSession(self, options)
        self.sessions.append(session)
        return session
