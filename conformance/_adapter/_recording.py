"""A transparent wrapper that records what an adapter does, for checks and replay bundles.

:class:`RecordingAdapter` forwards every call to the adapter under test and records, per
session, the start options, every turn slice's emitted parts (as emitted, before the
agent validates them), submissions, lifecycle states and errors. It changes nothing.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from harness_testkit.spec import (
    BuiltinTool,
    ContinueTurnOptions,
    ContinueTurnState,
    HarnessAdapter,
    HarnessSession,
    PromptControl,
    PromptTurnOptions,
    ResumeSessionState,
    StartOptions,
)

from .._watchdog import TurnLedger
from ._grammar import to_wire

__all__ = ["RecordedSession", "RecordedSlice", "RecordingAdapter"]


@dataclass
class RecordedSlice:
    """One ``do_prompt_turn``/``do_continue_turn`` call and what followed it."""

    kind: str
    parts: list[object] = field(default_factory=list)
    submissions: list[dict[str, Any]] = field(default_factory=list)
    done_error: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    #: Whether the slice's prompt control offered ``submit_tool_approval``.
    control_can_approve: bool | None = None
    #: What ``do_prompt_turn``/``do_continue_turn`` itself raised (no control returned).
    call_error: str | None = None
    #: The exceptions behind ``call_error`` and ``done_error`` (not in bundles).
    raised: list[BaseException] = field(default_factory=list, repr=False)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form (for replay bundles)."""
        return {
            "kind": self.kind,
            "options": self.options,
            "parts": [to_wire(part) for part in self.parts],
            "submissions": self.submissions,
            "doneError": self.done_error,
        }


@dataclass
class RecordedSession:
    """Everything recorded for one adapter session."""

    session_id: str
    start: dict[str, Any]
    slices: list[RecordedSlice] = field(default_factory=list)
    states: list[dict[str, Any]] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)
    is_resume: bool | None = None
    reported_session_id: str | None = None
    #: What ``do_start`` raised (not in bundles).
    raised: list[BaseException] = field(default_factory=list, repr=False)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form (for replay bundles)."""
        return {
            "sessionId": self.session_id,
            "start": self.start,
            "calls": self.calls,
            "states": self.states,
            "slices": [item.to_json() for item in self.slices],
        }


def _options_summary(options: ContinueTurnOptions) -> dict[str, Any]:
    summary: dict[str, Any] = {
        "tools": [spec.to_wire() for spec in options.tools],
        "skills": [skill.name for skill in options.skills],
    }
    if options.instructions is not None:
        summary["instructions"] = options.instructions
    if options.model is not None:
        summary["model"] = options.model
    if options.response_format is not None:
        summary["responseFormat"] = options.response_format.to_wire()
    if isinstance(options, PromptTurnOptions):
        summary["prompt"] = options.prompt
    return summary


class _RecordingControl:
    def __init__(
        self, inner: PromptControl, record: RecordedSlice, ledger: TurnLedger | None
    ) -> None:
        self._inner = inner
        self._record = record
        self._ledger = ledger
        self._started = time.monotonic()
        record.control_can_approve = callable(getattr(inner, "submit_tool_approval", None))
        if hasattr(inner, "submit_tool_approval"):
            self.submit_tool_approval = self._submit_tool_approval
        if hasattr(inner, "submit_user_message"):
            self.submit_user_message = self._submit_user_message

    @property
    def inner(self) -> PromptControl:
        """The adapter's own control object."""
        return self._inner

    async def submit_tool_result(
        self,
        tool_call_id: str,
        output: Any,
        is_error: bool = False,
        tool_result: dict[str, Any] | None = None,
    ) -> None:
        entry: dict[str, Any] = {"kind": "result", "toolCallId": tool_call_id, "output": output}
        if is_error:
            entry["isError"] = True
        self._record.submissions.append(entry)
        if tool_result is None:
            await self._inner.submit_tool_result(tool_call_id, output, is_error)
        else:
            await self._inner.submit_tool_result(tool_call_id, output, is_error, tool_result)

    async def _submit_tool_approval(
        self, approval_id: str, approved: bool, reason: str | None = None
    ) -> None:
        self._record.submissions.append(
            {"kind": "approval", "approvalId": approval_id, "approved": approved, "reason": reason}
        )
        await self._inner.submit_tool_approval(approval_id, approved, reason)  # type: ignore[attr-defined]

    async def _submit_user_message(self, text: str) -> None:
        self._record.submissions.append({"kind": "user-message", "text": text})
        await self._inner.submit_user_message(text)  # type: ignore[attr-defined]

    async def done(self) -> None:
        try:
            await self._inner.done()
        except Exception as error:
            self._record.done_error = f"{type(error).__name__}: {error}"
            self._record.raised.append(error)
            if self._ledger is not None:
                self._ledger.turn_settled(time.monotonic() - self._started)
            raise
        if self._ledger is not None:
            self._ledger.turn_settled(time.monotonic() - self._started)


async def _controlled(
    record: RecordedSlice,
    call: Callable[[], Awaitable[PromptControl]],
    ledger: TurnLedger | None,
    refuse: bool,
) -> PromptControl:
    """The recorded control of a turn-starting ``call``; what it raised goes on record.

    With a ledger that refuses turns (the run's turns hang), the call is not made.
    """
    if ledger is not None:
        ledger.turn_attempted(refuse=refuse)  # raises TurnRefused once the turns hang
    try:
        control = await call()
    except Exception as error:
        record.call_error = f"{type(error).__name__}: {error}"
        record.raised.append(error)
        raise
    if ledger is not None:
        ledger.turn_started(refuse=refuse)
    return _RecordingControl(control, record, ledger)


class _RecordingSession:
    def __init__(
        self,
        inner: HarnessSession,
        record: RecordedSession,
        ledger: TurnLedger | None,
        refuse: bool,
    ) -> None:
        self._inner = inner
        self._record = record
        self._ledger = ledger
        self._refuse = refuse
        record.is_resume = inner.is_resume
        record.reported_session_id = inner.session_id

    @property
    def inner(self) -> HarnessSession:
        """The adapter's own session object."""
        return self._inner

    @property
    def session_id(self) -> str:
        return self._inner.session_id

    @property
    def is_resume(self) -> bool:
        return self._inner.is_resume

    @property
    def model_id(self) -> str | None:
        return getattr(self._inner, "model_id", None)

    def _slice(self, kind: str, options: ContinueTurnOptions) -> tuple[RecordedSlice, Any]:
        record = RecordedSlice(kind=kind, options=_options_summary(options))
        self._record.slices.append(record)
        emit = options.emit

        def recording_emit(part: Any) -> None:
            record.parts.append(part)
            emit(part)

        return record, dataclasses.replace(options, emit=recording_emit)

    async def do_prompt_turn(self, options: PromptTurnOptions) -> PromptControl:
        self._record.calls.append("do_prompt_turn")
        record, wrapped = self._slice("prompt", options)
        return await _controlled(
            record, lambda: self._inner.do_prompt_turn(wrapped), self._ledger, self._refuse
        )

    async def do_continue_turn(self, options: ContinueTurnOptions) -> PromptControl:
        self._record.calls.append("do_continue_turn")
        record, wrapped = self._slice("continue", options)
        return await _controlled(
            record, lambda: self._inner.do_continue_turn(wrapped), self._ledger, self._refuse
        )

    async def do_suspend_turn(self) -> ContinueTurnState:
        self._record.calls.append("do_suspend_turn")
        state = await self._inner.do_suspend_turn()
        self._record.states.append({"from": "do_suspend_turn", "state": to_wire(state)})
        return state

    async def do_detach(self) -> ResumeSessionState:
        self._record.calls.append("do_detach")
        state = await self._inner.do_detach()
        self._record.states.append({"from": "do_detach", "state": to_wire(state)})
        return state

    async def do_stop(self) -> ResumeSessionState:
        self._record.calls.append("do_stop")
        state = await self._inner.do_stop()
        self._record.states.append({"from": "do_stop", "state": to_wire(state)})
        return state

    async def do_destroy(self) -> None:
        self._record.calls.append("do_destroy")
        await self._inner.do_destroy()

    async def do_compact(self, custom_instructions: str | None = None) -> None:
        self._record.calls.append("do_compact")
        await self._inner.do_compact(custom_instructions)


class RecordingAdapter:
    """Wraps an adapter; ``sessions`` holds what each of its sessions did."""

    def __init__(
        self, inner: HarnessAdapter, ledger: TurnLedger | None = None, *, refuse: bool = True
    ) -> None:
        self.inner = inner
        #: The run's turn ledger (``None``: turns are neither counted nor refused).
        self.ledger = ledger
        self.refuse = refuse
        self.sessions: list[RecordedSession] = []
        #: The adapter sessions themselves (unwrapped), for direct protocol checks.
        self.live_sessions: list[HarnessSession] = []
        for optional in ("get_bootstrap", "lifecycle_state_schema", "set_script", "observations"):
            if hasattr(inner, optional):
                setattr(self, optional, getattr(inner, optional))

    @property
    def specification_version(self) -> Any:
        return self.inner.specification_version

    @property
    def harness_id(self) -> str:
        return self.inner.harness_id

    @property
    def builtin_tools(self) -> Mapping[str, BuiltinTool]:
        return self.inner.builtin_tools

    @property
    def supports_builtin_tool_approvals(self) -> bool:
        return self.inner.supports_builtin_tool_approvals

    @property
    def supports_builtin_tool_filtering(self) -> bool:
        return self.inner.supports_builtin_tool_filtering

    async def do_start(self, options: StartOptions) -> HarnessSession:
        start = {
            "sessionId": options.session_id,
            "sessionWorkDir": options.session_work_dir,
            "permissionMode": options.permission_mode,
            "builtinToolFiltering": to_wire(options.builtin_tool_filtering),
            "resume": options.resume_from is not None,
            "continue": options.continue_from is not None,
        }
        record = RecordedSession(session_id=options.session_id, start=start)
        self.sessions.append(record)
        try:
            session = await self.inner.do_start(options)
        except Exception as error:
            record.raised.append(error)
            raise
        self.live_sessions.append(session)
        return _RecordingSession(session, record, self.ledger, self.refuse)

    def transcript(self) -> list[dict[str, Any]]:
        """Everything recorded, JSON-ready."""
        return [session.to_json() for session in self.sessions]

    def raised(self) -> list[BaseException]:
        """What the adapter raised to the agent (``do_start``, turn starts, ``done()``),
        oldest first: the agent turns these into error parts, the runner still sees them."""
        return [
            error
            for session in self.sessions
            for error in [*session.raised, *(e for item in session.slices for e in item.raised)]
        ]
