"""The effects the slice machine asks its driver to perform, and the JSON helpers both use.

Plain values: the machine (``_turn_machine.py``) yields them, the driver (``_slice_runner.py``)
performs them and sends back what they returned (``None``, or an :class:`Execution` for
an inline :class:`Execute`).
"""

from __future__ import annotations

import json
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any, TypeAlias, TypeVar

from harness_testkit.spec import ConsumerPart, WireModel

from ._tool import Tool

__all__ = [
    "JOIN",
    "RELEASE",
    "Effect",
    "Emit",
    "Execute",
    "Execution",
    "JoinExecutions",
    "ReleaseTurn",
    "ReportFailure",
    "Steps",
    "Submit",
    "SubmitApproval",
    "error_string",
    "json_or_raw",
    "jsonable",
]


@dataclass(frozen=True, slots=True)
class Emit:
    """Forward ``part`` to the consumers (the driver applies backpressure)."""

    part: ConsumerPart


@dataclass(frozen=True, slots=True)
class Submit:
    """Send a tool result to the adapter (captured instead while suspending).

    ``background``: start the submission and go on; failures surface at the next join.
    """

    tool_call_id: str
    output: Any
    is_error: bool | None
    tool_result: dict[str, Any] | None = None
    background: bool = False


@dataclass(frozen=True, slots=True)
class Execute:
    """Run a host tool and submit its outcome.

    In the background the driver answers ``None``; inline it answers an :class:`Execution`.
    """

    tool_call_id: str
    tool_name: str
    raw_input: str
    tool: Tool
    background: bool = False


@dataclass(frozen=True, slots=True)
class Execution:
    """What an inline :class:`Execute` did: ``ok`` with ``value``, else ``error``."""

    ok: bool
    value: Any = None
    error: BaseException | None = None


@dataclass(frozen=True, slots=True)
class SubmitApproval:
    """Send the host's decision on a built-in approval to the adapter."""

    approval_id: str
    approved: bool
    reason: str | None


@dataclass(frozen=True, slots=True)
class JoinExecutions:
    """Wait for every background execution; a deferred failure ends the slice."""


@dataclass(frozen=True, slots=True)
class ReleaseTurn:
    """The turn is over: the session may start the next one (before ``finish``, 7.4.7)."""


@dataclass(frozen=True, slots=True)
class ReportFailure:
    """The turn failed: report it where the TypeScript agent would (stderr, ERROR-012)."""

    error: BaseException


JOIN = JoinExecutions()
RELEASE = ReleaseTurn()

Effect: TypeAlias = (
    Emit | Submit | Execute | SubmitApproval | JoinExecutions | ReleaseTurn | ReportFailure
)
_R = TypeVar("_R")
#: A machine step: yields effects, receives their values, returns ``_R``.
Steps: TypeAlias = Generator[Effect, Any, _R]


def json_or_raw(text: str) -> Any:
    """``text`` parsed as JSON, else ``text`` itself (the AI SDK's ``safeParseJSON``)."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def error_string(error: BaseException) -> str:
    """``String(err)`` of the TypeScript agent, in Python terms: ``Name: message``."""
    return f"{type(error).__name__}: {error}"


def jsonable(value: Any) -> Any:
    """Tool outputs cross into JSON: models dump, other values must already be JSON."""
    if isinstance(value, WireModel):
        return value.to_wire()
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    return value
