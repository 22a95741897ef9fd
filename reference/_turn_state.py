"""Turn state that outlives slices: the turn core and its transitions, frozen settings,
continuations, slice outcomes. Plain data: nothing here awaits or owns an I/O handle."""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from harness_testkit.spec import (
    BuiltinTool,
    BuiltinToolFiltering,
    ContinueTurnState,
    FinishPart,
    LanguageModelUsage,
    PendingToolApproval,
    PendingToolResult,
    ProviderMetadata,
    StreamPart,
    TurnSettings,
)

from ._ids import IdGenerator, Timestamps, system_clock, system_timestamp
from ._results import StepResult, normalize_usage
from ._tool import Tool

__all__ = [
    "ApprovalContinuation",
    "FinishSummary",
    "FrozenTurn",
    "ResultContinuation",
    "SliceOutcome",
    "StopCondition",
    "TurnCore",
    "TurnState",
]

#: ``stop_when`` predicate: receives ``{"steps": [...]}`` and may be async.
StopCondition = Callable[[Mapping[str, Any]], bool | Awaitable[bool]]


class TurnState(enum.StrEnum):
    """Where the session's turn is."""

    IDLE = "idle"
    RUNNING = "running"
    AWAITING_APPROVAL = "awaiting-approval"
    AWAITING_TOOL_RESULT = "awaiting-tool-result"
    SUSPENDED = "suspended"


# The members every turn sets, looked up once: on Python 3.11 a lookup on an enum class
# goes through ``EnumType.__getattr__`` (CPython's slow attribute hook).
_IDLE = TurnState.IDLE
_RUNNING = TurnState.RUNNING


@dataclass
class FrozenTurn:
    """The settings a prompt turn started with; its continuations reuse them (7.7)."""

    settings: TurnSettings
    merged_tools: dict[str, Tool | BuiltinTool]
    executable_tools: dict[str, Tool]
    tools_context: Mapping[str, Any]
    builtin_filter: BuiltinToolFiltering | None
    response_format: Any = None
    tool_approval: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class TurnCore:
    """The session's turn, as plain state: no I/O handle, no event, no task.

    Every transition of :attr:`state` and of the pending records is a method of this
    class, and no other module assigns them (tests/test_architecture.py holds it): the
    session starts, suspends and ends turns, the slice machine records what the adapter
    asks for, and the agent restores a turn from a continue state.
    """

    harness_id: str
    session_id: str
    work_dir: str
    harness_builtins: Mapping[str, BuiltinTool]
    ids: IdGenerator
    clock: Timestamps
    state: TurnState = TurnState.IDLE
    pending_approvals: dict[str, PendingToolApproval] = field(default_factory=dict)
    pending_results: dict[str, PendingToolResult] = field(default_factory=dict)
    frozen: FrozenTurn | None = None
    #: ``do_suspend_turn`` was called: results are captured, not sent (6.1.7).
    suspending: bool = False
    captured_state: ContinueTurnState | None = None
    #: Parts the adapter emitted that no slice has read yet (kept across a suspension).
    buffered_parts: list[StreamPart] = field(default_factory=list)
    #: Calls settled by the host in this turn (any slice): replays are suppressed.
    settled_call_ids: set[str] = field(default_factory=set)
    #: The turn settings of the continue state this session took over, until a slice
    #: freezes its own: capturing the turn again before continuing keeps them (7.7.3).
    restored_settings: TurnSettings | None = None
    #: Why a suspension could not capture a host result (raised by suspend_turn).
    capture_error: BaseException | None = None

    # -- the turn's life ---------------------------------------------------------------

    def timestamp(self) -> str:
        """The clock's time as ISO 8601 text (a step response's ``timestamp``)."""
        clock = self.clock
        if clock is system_clock:
            return system_timestamp()  # the same text, without a datetime in between
        return clock().isoformat()

    def start(self, frozen: FrozenTurn) -> list[StreamPart]:
        """A prompt or a continuation starts running; returns the parts kept for it."""
        self.state = _RUNNING
        self.frozen = frozen
        self.suspending = False
        self.captured_state = None
        buffered, self.buffered_parts = self.buffered_parts, []
        return buffered

    def reset_turn(self) -> None:
        """The turn ended (finished or failed): back to idle, pending records cleared."""
        self.state = _IDLE
        self.pending_approvals.clear()
        self.pending_results.clear()
        self.frozen = None
        self.captured_state = None
        self.buffered_parts = []
        self.settled_call_ids = set()
        self.restored_settings = None

    def restore(self, state: ContinueTurnState, buffered: list[StreamPart]) -> None:
        """A session created from a continue state takes over its unfinished turn."""
        self.pending_approvals = {p.approval_id: p for p in state.pending_tool_approvals or []}
        self.pending_results = {p.tool_call_id: p for p in state.pending_tool_results or []}
        self.buffered_parts = buffered
        self.restored_settings = state.turn_settings
        # The state names no settled calls (the official shape): a recreated session
        # knows only those its pending records settle, as upstream's does.
        self.settled_call_ids = set()
        self.state = TurnState.SUSPENDED if not self.has_pending() else self.awaiting_state()

    # -- host input --------------------------------------------------------------------

    def ask_approval(self, record: PendingToolApproval) -> None:
        """The turn waits for the host's decision on ``record``."""
        self.pending_approvals[record.approval_id] = record
        self.state = TurnState.AWAITING_APPROVAL

    def ask_result(self, record: PendingToolResult) -> None:
        """The turn waits for a client-side result (an earlier record of the call wins)."""
        self.pending_results.setdefault(record.tool_call_id, record)
        if not self.pending_approvals:
            self.state = TurnState.AWAITING_TOOL_RESULT

    def store_result(self, record: PendingToolResult) -> None:
        """A host result computed while suspending waits in the state (6.1.7)."""
        self.pending_results[record.tool_call_id] = record
        self.state = TurnState.AWAITING_TOOL_RESULT

    def answer_approval(self, approval_id: str) -> None:
        """The host decided on a pending approval."""
        del self.pending_approvals[approval_id]

    def answer_result(self, tool_call_id: str) -> None:
        """A pending result was delivered; replays of the call are suppressed."""
        del self.pending_results[tool_call_id]
        self.settled_call_ids.add(tool_call_id)

    def settle_call(self, tool_call_id: str) -> None:
        """The host settled the call in this turn (its outcome was delivered or captured):
        the runtime's replays of it are suppressed in this session."""
        self.settled_call_ids.add(tool_call_id)

    def unsettle_call(self, tool_call_id: str) -> None:
        """An approved call turned out to wait for a client result after all."""
        self.settled_call_ids.discard(tool_call_id)

    def pause(self) -> None:
        """The slice ended waiting for host input (5.3.3)."""
        self.state = self.awaiting_state()

    # -- suspension --------------------------------------------------------------------

    def begin_suspending(self) -> None:
        """``do_suspend_turn`` is about to be called: host results are captured from now on."""
        self.suspending = True

    def note_captured(self, captured: ContinueTurnState) -> None:
        """The adapter's continue state, captured once per turn and reused."""
        self.captured_state = captured

    def keep_buffered(self, parts: list[StreamPart]) -> None:
        """Parts emitted after the last slice read, kept for the next slice."""
        self.buffered_parts.extend(parts)

    def suspended(
        self, captured: ContinueTurnState, buffered: list[StreamPart] | None = None
    ) -> None:
        """The adapter returned its continue state; the turn lives on in it."""
        self.captured_state = captured
        if buffered is not None:
            self.buffered_parts = buffered
        self.state = TurnState.SUSPENDED

    def capture_failed(self, error: BaseException) -> None:
        """A host result could not be captured: ``suspend_turn`` raises ``error``."""
        self.capture_error = error

    def take_capture_error(self) -> BaseException | None:
        """The capture failure to raise, once."""
        error, self.capture_error = self.capture_error, None
        return error

    # -- queries -----------------------------------------------------------------------

    def has_pending(self) -> bool:
        """Whether the turn waits for any host input."""
        return bool(self.pending_approvals or self.pending_results)

    def awaiting_state(self) -> TurnState:
        """The paused state that matches the pending records."""
        if self.pending_approvals:
            return TurnState.AWAITING_APPROVAL
        return TurnState.AWAITING_TOOL_RESULT


@dataclass(frozen=True)
class ApprovalContinuation:
    """An approval decision for a pending approval (AI SDK ``tool-approval-response``)."""

    approval_id: str
    approved: bool
    reason: str | None = None
    provider_executed: bool | None = None


@dataclass(frozen=True)
class ResultContinuation:
    """A client-side tool result for a pending call."""

    tool_call_id: str
    output: Any = None
    has_output: bool = True
    is_error: bool = False
    tool_result: dict[str, Any] | None = None


class FinishSummary(NamedTuple):
    """What a slice keeps of the harness ``finish`` part: its reasons, its total usage
    (already normalized: the consumer's) and its metadata."""

    unified: str
    raw: str | None
    usage: LanguageModelUsage
    metadata: ProviderMetadata | None

    @classmethod
    def of(cls, part: FinishPart) -> FinishSummary:
        """The summary of a parsed ``finish`` part."""
        reason = part.finish_reason
        return cls(
            reason.unified, reason.raw, normalize_usage(part.total_usage), part.harness_metadata
        )


@dataclass
class SliceOutcome:
    """How a slice ended."""

    steps: list[StepResult] = field(default_factory=list)
    finish: FinishSummary | None = None
    error: BaseException | None = None
    aborted: bool = False
    abort_reason: str | None = None
    paused: bool = False
    suspended: bool = False
    #: The response of the synthetic final step of a step-less slice (upstream's
    #: ``{id: <callId>-0, timestamp, modelId, messages: []}``), set when it finishes.
    empty_response: dict[str, Any] | None = None
