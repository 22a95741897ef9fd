"""The observation log: what the runtime was told and what it did, for the suite to read.

Every :class:`FakeHarness` keeps one :class:`ObservationLog` (``harness.observations``)
across all its sessions. Entries are typed, JSON-serializable models in the order they
happened; query them with :meth:`ObservationLog.of_kind`. Work replayed from a lifecycle
state (a continued turn re-deriving parts it emitted before) is never logged twice.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any, Literal, TypeAlias, TypeVar

from pydantic import Field

from harness_testkit.spec import (
    BuiltinToolFiltering,
    HarnessUsageError,
    JSONValue,
    PermissionMode,
    ToolSpec,
    find_non_json,
)

from ._script import ScriptModel

__all__ = [
    "ApprovalReceived",
    "ApprovalRequested",
    "CompactionPerformed",
    "LifecycleEvent",
    "Observation",
    "ObservationLog",
    "SessionStarted",
    "ToolExecuted",
    "ToolResultReceived",
    "TurnStarted",
    "UserMessageReceived",
    "WorkspaceMutated",
]


class ObservationEntry(ScriptModel):
    session_id: str
    seq: int = 0


class SessionStarted(ObservationEntry):
    """``do_start`` was called: the options the runtime received."""

    kind: Literal["session-started"] = "session-started"
    mode: Literal["fresh", "resume", "continue"]
    profile: str
    permission_mode: PermissionMode
    builtin_tool_filtering: BuiltinToolFiltering | None = None
    skills: list[str] = Field(default_factory=list)
    session_work_dir: str


class TurnStarted(ObservationEntry):
    """``do_prompt_turn`` or ``do_continue_turn``: the turn settings received."""

    kind: Literal["turn-started"] = "turn-started"
    turn: int
    call: Literal["prompt", "continue"]
    prompt: JSONValue = None
    script_turn: int | None = None
    tools: list[ToolSpec] = Field(default_factory=list)
    skills: list[str] = Field(default_factory=list)
    instructions: str | None = None
    model: str | None = None
    response_format: dict[str, JSONValue] | None = None


class ToolExecuted(ObservationEntry):
    """A built-in or MCP call was resolved by the runtime (executed or refused).

    ``executed`` is false when the call was refused (``reason``: ``filtered`` for a
    natively hidden built-in, ``denied`` after a denied approval, ``unavailable`` for an
    unknown tool or server). ``result``/``is_error`` are what the ``tool-result`` carried.
    """

    kind: Literal["tool-executed"] = "tool-executed"
    turn: int
    tool_call_id: str
    tool_name: str
    surface: Literal["builtin", "mcp"]
    input: dict[str, JSONValue] = Field(default_factory=dict)
    executed: bool
    result: JSONValue = None
    is_error: bool = False
    reason: Literal["filtered", "denied", "unavailable"] | None = None


class WorkspaceMutated(ObservationEntry):
    """An opaque workspace mutation changed a file (``emitted``: a part was sent)."""

    kind: Literal["workspace-mutated"] = "workspace-mutated"
    turn: int
    event: Literal["create", "modify", "delete"]
    path: str
    emitted: bool


class ApprovalRequested(ObservationEntry):
    """The runtime asked for an approval."""

    kind: Literal["approval-requested"] = "approval-requested"
    turn: int
    approval_id: str
    tool_call_id: str
    tool_name: str
    because: Literal["permission-mode", "filtering"]


class ApprovalReceived(ObservationEntry):
    """``submit_tool_approval`` was called."""

    kind: Literal["approval-received"] = "approval-received"
    approval_id: str
    approved: bool
    reason: str | None = None


class ToolResultReceived(ObservationEntry):
    """``submit_tool_result`` was called."""

    kind: Literal["tool-result-received"] = "tool-result-received"
    tool_call_id: str
    output: JSONValue = None
    is_error: bool = False
    tool_result: dict[str, JSONValue] | None = None

    @classmethod
    def of_submission(
        cls,
        session_id: str,
        tool_call_id: str,
        output: JSONValue,
        is_error: bool,
        tool_result: object,
    ) -> ToolResultReceived:
        """The entry for a ``submit_tool_result`` call, once its output is known to be JSON.

        Every runtime that records host input (the fake, the Claude Code adapter) checks
        a submitted result the same way before it keeps it. The arguments after
        ``session_id`` are those of ``submit_tool_result``, in its order.

        Raises:
            HarnessUsageError: ``output`` is not JSON; the message names the call.
        """
        problem = find_non_json(output, "output")
        if problem is not None:
            raise HarnessUsageError(f"Tool result for '{tool_call_id}' is not JSON: {problem}.")
        return cls(
            session_id=session_id,
            tool_call_id=tool_call_id,
            output=output,
            is_error=is_error,
            tool_result=tool_result if isinstance(tool_result, dict) else None,
        )


class UserMessageReceived(ObservationEntry):
    """``submit_user_message`` was called."""

    kind: Literal["user-message-received"] = "user-message-received"
    text: str


class CompactionPerformed(ObservationEntry):
    """The runtime compacted its context (``emitted``: a ``compaction`` part was sent)."""

    kind: Literal["compaction-performed"] = "compaction-performed"
    turn: int | None = None
    trigger: Literal["manual", "auto"]
    summary: str
    tokens_before: int
    tokens_after: int
    custom_instructions: str | None = None
    emitted: bool


class LifecycleEvent(ObservationEntry):
    """A session or turn lifecycle transition.

    Events: ``suspend``, ``detach``, ``stop``, ``destroy``, ``finish`` (turn ended with
    ``finish``), ``aborted``, ``crashed``, ``closed`` (stream closed without ``finish``),
    ``errored`` (an ``error`` action ended the turn), ``failed`` (any other failure).
    """

    kind: Literal["lifecycle"] = "lifecycle"
    event: Literal[
        "suspend",
        "detach",
        "stop",
        "destroy",
        "finish",
        "aborted",
        "crashed",
        "closed",
        "errored",
        "failed",
    ]
    turn: int | None = None
    detail: str | None = None


Observation: TypeAlias = Annotated[
    SessionStarted
    | TurnStarted
    | ToolExecuted
    | WorkspaceMutated
    | ApprovalRequested
    | ApprovalReceived
    | ToolResultReceived
    | UserMessageReceived
    | CompactionPerformed
    | LifecycleEvent,
    Field(discriminator="kind"),
]

_E = TypeVar("_E", bound=ObservationEntry)


class ObservationLog:
    """An append-only, ordered log of observations (one per :class:`FakeHarness`)."""

    def __init__(self) -> None:
        self._entries: list[ObservationEntry] = []

    def record(self, entry: _E) -> _E:
        """Append ``entry`` (its ``seq`` is set to its position) and return it."""
        stamped = entry.model_copy(update={"seq": len(self._entries)})
        self._entries.append(stamped)
        return stamped

    @property
    def entries(self) -> list[ObservationEntry]:
        """Every entry, in order (a copy)."""
        return list(self._entries)

    def of_kind(self, kind: type[_E], session_id: str | None = None) -> list[_E]:
        """Entries of one type, optionally of one session.

        Args:
            kind: An observation class, for example :class:`ToolExecuted`.
            session_id: Only this session's entries.

        Returns:
            The matching entries, in order.
        """
        return [
            entry
            for entry in self._entries
            if isinstance(entry, kind) and (session_id is None or entry.session_id == session_id)
        ]

    def session_ids(self) -> list[str]:
        """Ids of the sessions started, in order."""
        return [entry.session_id for entry in self.of_kind(SessionStarted)]

    def clear(self) -> None:
        """Forget every entry."""
        self._entries.clear()

    def to_wire(self) -> list[dict[str, Any]]:
        """All entries as JSON-ready dicts (camelCase keys)."""
        return [
            entry.model_dump(mode="json", by_alias=True, exclude_none=True)
            for entry in self._entries
        ]

    def __iter__(self) -> Iterator[ObservationEntry]:
        return iter(list(self._entries))

    def __len__(self) -> int:
        return len(self._entries)
