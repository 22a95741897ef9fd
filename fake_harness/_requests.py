"""The engine's request vocabulary: what a turn asks its driver to do.

The engine (``_engine.py``) yields these; the driver (``_turn_driver.py``) performs them live or
answers them from the turn's journal. ``TurnContext`` is everything a turn depends on.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Literal, TypeAlias

import anyio

from harness_testkit.scripting import McpServer, ObservationEntry, Script, ScriptTurn
from harness_testkit.spec import StreamPart

from ._profiles import HarnessProfile
from ._state import Conversation, TurnSettingsRecord
from ._workspace import Outcome, Workspace

__all__ = [
    "AwaitRequest",
    "EmitRequest",
    "ExecuteRequest",
    "NoteRequest",
    "PollRequest",
    "Request",
    "SleepRequest",
    "TurnContext",
    "TurnEnd",
]


@dataclass(frozen=True)
class EmitRequest:
    """Emit ``part`` (skipped when replaying below the cursor)."""

    part: StreamPart


@dataclass(frozen=True)
class ExecuteRequest:
    """Run ``run(abort)`` against the sandbox; journaled under ``key``."""

    key: str
    run: Callable[[anyio.Event | None], Awaitable[Outcome]]
    describe: Callable[[Outcome], list[ObservationEntry]]


@dataclass(frozen=True)
class AwaitRequest:
    """Block for a host submission (``key``: call or approval id); journaled."""

    kind: Literal["tool-result", "approval", "user-message"]
    key: str | None = None
    timeout: float | None = None


@dataclass(frozen=True)
class PollRequest:
    """Take what arrived so far, without blocking; journaled."""

    kind: Literal["user-messages", "compaction"]


@dataclass(frozen=True)
class SleepRequest:
    """Wait on the harness clock (skipped when replaying)."""

    seconds: float


@dataclass(frozen=True)
class NoteRequest:
    """Log an observation (never twice for the same turn)."""

    entry: ObservationEntry


Request: TypeAlias = (
    EmitRequest | ExecuteRequest | AwaitRequest | PollRequest | SleepRequest | NoteRequest
)


@dataclass(frozen=True)
class TurnEnd:
    """How the script turn ended: with ``finish`` or after an ending ``error`` action."""

    how: Literal["finish", "errored"]


@dataclass
class TurnContext:
    """Everything a turn depends on (all of it reproducible from a lifecycle state)."""

    session_id: str
    harness_id: str
    turn_index: int
    script: Script
    script_turn: ScriptTurn
    profile: HarnessProfile
    seed: int
    settings: TurnSettingsRecord
    #: The engine's working copy; it becomes the session's conversation when the turn ends.
    conversation: Conversation
    workspace: Workspace
    mcp_servers: Mapping[str, McpServer]
