"""The adapter-owned ``data`` of the fake runtime's lifecycle states.

``data`` is plain JSON (camelCase keys) holding the conversation and, for an unfinished
turn, the exact turn cursor plus a journal of every outside input the turn consumed
(execution outcomes, host results, approvals, user messages, compaction requests). A
continued turn re-runs the script from the start of the turn, answering from the
journal and skipping the parts before the cursor, so another process holding the same
script continues exactly where the first one stopped, without executing anything twice.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness_testkit.spec import (
    BuiltinToolFiltering,
    CompactionPart,
    JSONValue,
    PermissionMode,
    WireModel,
)

__all__ = [
    "DATA_FORMAT",
    "Conversation",
    "Inbox",
    "JournalEntry",
    "Message",
    "SessionData",
    "TurnRecord",
    "TurnSettingsRecord",
    "compact_conversation",
    "estimate_tokens",
    "validate_session_data",
]

#: Format tag of ``data``; a state with another tag is refused.
DATA_FORMAT = "fake-harness/1"


class StateModel(BaseModel):
    """Mutable JSON models of the runtime state (camelCase on the wire)."""

    # The contract's wire config, but mutable: the runtime updates its state in place.
    model_config = ConfigDict(**{**WireModel.model_config, "frozen": False})

    def to_wire(self) -> dict[str, Any]:
        """The JSON-ready dict."""
        return self.model_dump(mode="json", by_alias=True)


def estimate_tokens(text: str) -> int:
    """The runtime's token estimate: one token per four characters, rounded up."""
    return (len(text) + 3) // 4


class Message(StateModel):
    """One entry of the runtime's context."""

    role: Literal["user", "assistant", "tool", "summary"]
    text: str


class Conversation(StateModel):
    """The runtime's context between turns.

    Attributes:
        turn_count: Prompt turns started so far.
        sequence: Index of the next sequential script turn.
        messages: The context (replaced by one summary on compaction).
        pending_compactions: ``compaction`` parts (wire dicts) of compactions done
            between turns, emitted at the start of the next turn.
        compactions: Compactions performed so far.
    """

    turn_count: int = 0
    sequence: int = 0
    messages: list[Message] = Field(default_factory=list)
    pending_compactions: list[dict[str, JSONValue]] = Field(default_factory=list)
    compactions: int = 0

    def tokens(self, extra: str = "") -> int:
        """Context size in tokens (plus ``extra``, for instructions)."""
        return sum(estimate_tokens(message.text) for message in self.messages) + estimate_tokens(
            extra
        )


def compact_conversation(
    conversation: Conversation,
    *,
    trigger: Literal["manual", "auto"],
    custom_instructions: str | None,
    extra: str = "",
) -> CompactionPart:
    """Compact ``conversation`` in place: the context becomes one summary message.

    Args:
        conversation: The conversation to compact.
        trigger: ``manual`` (``do_compact``) or ``auto`` (over budget).
        custom_instructions: Focus given to ``do_compact``; quoted in the summary.
        extra: Text always in context (instructions), counted before and after.

    Returns:
        The ``compaction`` part describing it.
    """
    before = conversation.tokens(extra)
    count = len(conversation.messages)
    summary = f"Summary of {count} earlier messages ({before} tokens)."
    if custom_instructions:
        summary += f" Focus: {custom_instructions}"
    conversation.messages = [Message(role="summary", text=summary)]
    conversation.compactions += 1
    return CompactionPart(
        trigger=trigger,
        summary=summary,
        tokens_before=before,
        tokens_after=conversation.tokens(extra),
    )


class JournalEntry(StateModel):
    """One outside input the turn consumed, in consumption order."""

    key: str
    value: JSONValue = None


class Inbox(StateModel):
    """Submissions received but not consumed yet (they survive suspension)."""

    tool_results: dict[str, dict[str, JSONValue]] = Field(default_factory=dict)
    approvals: dict[str, dict[str, JSONValue]] = Field(default_factory=dict)
    user_messages: list[str] = Field(default_factory=list)
    compactions: list[str | None] = Field(default_factory=list)


class TurnSettingsRecord(StateModel):
    """The settings the turn runs with (frozen when the prompt turn began)."""

    prompt: JSONValue = None
    prompt_text: str = ""
    model: str | None = None
    instructions: str | None = None
    skills: list[str] = Field(default_factory=list)
    tool_names: list[str] = Field(default_factory=list)
    response_format: dict[str, JSONValue] | None = None
    permission_mode: PermissionMode = "allow-all"
    builtin_tool_filtering: BuiltinToolFiltering | None = None


class TurnRecord(StateModel):
    """An unfinished turn, exactly.

    Attributes:
        index: The session's turn number (0-based).
        script_turn: Which script turn runs.
        settings: The turn's frozen settings.
        conversation: The conversation as of the turn's start.
        cursor: Parts emitted so far (a continuation emits from here).
        step_start: Part index where the in-flight step began (lossy reruns go back here).
        notes_logged: Observations already logged (never logged twice).
        journal: Consumed outside inputs, in order.
        inbox: Received, unconsumed submissions.
        faults_fired: Indexes of positioned faults that already fired.
        ended: The turn already emitted everything (suspended after its end).
        rerun_until: After a lossy rerun, parts below this index were emitted before;
            host-facing requests among them that were already answered are not repeated.
    """

    index: int
    script_turn: int
    settings: TurnSettingsRecord
    conversation: Conversation
    cursor: int = 0
    step_start: int = 0
    notes_logged: int = 0
    journal: list[JournalEntry] = Field(default_factory=list)
    inbox: Inbox = Field(default_factory=Inbox)
    faults_fired: list[int] = Field(default_factory=list)
    ended: bool = False
    rerun_until: int = 0


class SessionData(StateModel):
    """The whole ``data`` payload of a fake-harness lifecycle state."""

    format: Literal["fake-harness/1"] = "fake-harness/1"
    profile: str
    script_digest: str
    seed: int
    session_work_dir: str
    conversation: Conversation
    turn: TurnRecord | None = None


def validate_session_data(data: Any) -> Any:
    """The adapter's ``lifecycle_state_schema``: validate ``data`` and return it as JSON.

    Args:
        data: The ``data`` of a lifecycle state.

    Returns:
        The canonical JSON form.

    Raises:
        ValueError: naming what is wrong (the agent wraps it into an
            ``InvalidLifecycleStateError``).
    """
    try:
        return SessionData.model_validate(data).to_wire()
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(piece) for piece in item['loc']) or '(root)'}: {item['msg']}"
            for item in error.errors()
        )
        raise ValueError(f"not fake-harness state data ({problems})") from None
