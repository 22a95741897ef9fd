"""The adapter-owned ``data`` of Claude Code lifecycle states.

The runtime keeps its conversation itself: the CLI writes a transcript per session under
``$HOME/.claude/projects``, and the adapter points ``HOME`` at a directory beside the
session's working directory, inside the sandbox. A state therefore only names that
directory, the CLI's session id, and (for an unfinished turn) what the turn was asked.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, ValidationError

from harness_testkit.spec import InvalidLifecycleStateError, JSONValue, WireModel

__all__ = ["DATA_FORMAT", "SessionData", "TurnData", "validate_session_data"]

#: Format tag of ``data``; a state with another tag is refused.
DATA_FORMAT: Literal["claude-code/1"] = "claude-code/1"


class _Model(WireModel):
    """The contract's wire config (camelCase on the wire, frozen, unknown keys rejected)."""


class TurnData(_Model):
    """An unfinished (or captured finished) turn.

    Attributes:
        index: The turn's number in the session (1-based).
        prompt: The prompt that started it.
        finished: The turn had ended with ``finish`` when it was captured.
        approvals: Approval decisions received so far, by approval id.
        results: Host tool results received so far, by call id (``output``, ``isError``).
        executed: Outcomes of the runtime-executed calls that ran, by call id
            (``result``, ``isError``): a rerun does not run them again.
        reply_start: Index of the turn's first reply in the scripted model's script.
        echoed: Host calls whose result was shown, echoed as a ``tool-result`` part or
            submitted in a later slice than the call (the agent shows it then): the
            CLI's result is not echoed again (the agent drops a repeated result only
            within one slice, as upstream's does).
    """

    index: int = Field(ge=1)
    prompt: JSONValue = None
    finished: bool = False
    approvals: dict[str, dict[str, JSONValue]] = Field(default_factory=dict)
    results: dict[str, dict[str, JSONValue]] = Field(default_factory=dict)
    executed: dict[str, dict[str, JSONValue]] = Field(default_factory=dict)
    reply_start: int = Field(default=0, ge=0)
    echoed: list[str] = Field(default_factory=list)


class SessionData(_Model):
    """Where the runtime's conversation lives and which turn is open.

    ``next_reply`` is the index of the scripted model's next reply (scripted sessions).
    """

    format: Literal["claude-code/1"] = DATA_FORMAT
    cli_session_id: str = Field(min_length=1)
    home: str = Field(min_length=1)
    session_work_dir: str = Field(min_length=1)
    turn_count: int = Field(default=0, ge=0)
    next_reply: int = Field(default=0, ge=0)
    turn: TurnData | None = None


def validate_session_data(data: Any) -> dict[str, Any]:
    """``lifecycle_state_schema``: parse ``data`` and return its canonical JSON.

    Raises:
        InvalidLifecycleStateError: naming what is wrong with ``data``.
    """
    try:
        return SessionData.model_validate(data).to_wire()
    except ValidationError as error:
        raise InvalidLifecycleStateError(
            f"Lifecycle state data is not Claude Code adapter data ({DATA_FORMAT}): "
            f"{error.errors()[0]['loc']}: {error.errors()[0]['msg']}."
        ) from error
