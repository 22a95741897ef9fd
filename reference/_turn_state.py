"""Turn state that outlives slices: the session's turn core, frozen settings, continuations."""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio

from harness_testkit.spec import (
    BuiltinTool,
    BuiltinToolFiltering,
    ContinueTurnState,
    FinishPart,
    PendingToolApproval,
    PendingToolResult,
    PromptControl,
    SandboxSession,
    StreamPart,
    TurnSettings,
)

from ._ids import IdGenerator, Timestamps
from ._part_queue import PartQueue
from ._results import StepResult
from ._tool import Tool

__all__ = [
    "ApprovalContinuation",
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
    """Session-side state of the turn that outlives slices."""

    harness_id: str
    session_id: str
    work_dir: str
    sandbox: SandboxSession
    harness_builtins: Mapping[str, BuiltinTool]
    ids: IdGenerator
    clock: Timestamps
    state: TurnState = TurnState.IDLE
    pending_approvals: dict[str, PendingToolApproval] = field(default_factory=dict)
    pending_results: dict[str, PendingToolResult] = field(default_factory=dict)
    frozen: FrozenTurn | None = None
    control: PromptControl | None = None
    queue: PartQueue | None = None
    suspending: bool = False
    captured_state: ContinueTurnState | None = None
    buffered_parts: list[StreamPart] = field(default_factory=list)
    #: Calls settled by the host in this turn (any slice): replays are suppressed.
    settled_call_ids: set[str] = field(default_factory=set)
    slice_running: bool = False
    #: Why a suspension could not capture a host result (raised by suspend_turn).
    capture_error: BaseException | None = None
    slice_finished: anyio.Event | None = None

    def reset_turn(self) -> None:
        """The turn ended (finished or failed): back to idle, pending records cleared."""
        if self.queue is not None:
            self.queue.close()
        self.state = TurnState.IDLE
        self.pending_approvals.clear()
        self.pending_results.clear()
        self.frozen = None
        self.control = None
        self.queue = None
        self.captured_state = None
        self.buffered_parts = []
        self.settled_call_ids = set()

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


@dataclass
class SliceOutcome:
    """How a slice ended."""

    steps: list[StepResult] = field(default_factory=list)
    finish: FinishPart | None = None
    error: BaseException | None = None
    aborted: bool = False
    abort_reason: str | None = None
    paused: bool = False
    suspended: bool = False
    #: The response of the synthetic final step of a step-less slice (upstream's
    #: ``{id: <callId>-0, timestamp, modelId, messages: []}``), set when it finishes.
    empty_response: dict[str, Any] | None = None
