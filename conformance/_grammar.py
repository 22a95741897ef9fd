"""Stream grammar: the rules a turn's harness parts (and consumer parts) must obey.

These are pure functions over recorded transcripts, so the same rules judge a live
adapter, a replay bundle and a simulation transcript. Each violation names the
requirement it breaks.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import ValidationError

from harness_testkit.spec import (
    BuiltinTool,
    CompactionPart,
    ConsumerPart,
    ErrorPart,
    FileChangePart,
    FinishPart,
    FinishStepPart,
    ReasoningDeltaPart,
    ReasoningEndPart,
    ReasoningStartPart,
    StreamPart,
    TextDeltaPart,
    TextEndPart,
    TextStartPart,
    ToolApprovalRequestPart,
    ToolCallPart,
    ToolInputDeltaPart,
    ToolInputEndPart,
    ToolInputStartPart,
    ToolResultPart,
    WireModel,
    find_non_json,
    parse_stream_part,
)

__all__ = [
    "MAX_PART_DEPTH",
    "Violation",
    "consumer_violations",
    "continue_call_violation",
    "harness_violations",
    "recorded_violations",
    "to_wire",
]

#: Deepest nesting the grammar accepts in one part (deeper: a STREAM-004 violation).
MAX_PART_DEPTH = 64

# Step content for STREAM-033. Tool results are judged separately (STREAM-052): a result
# after the last finish-step is dropped by the agent rather than failing the turn.
_CONTENT = (
    TextDeltaPart,
    ReasoningDeltaPart,
    ToolCallPart,
    ToolApprovalRequestPart,
    FileChangePart,
    CompactionPart,
)
_HARNESS_METADATA_TYPES = (
    "text-start",
    "text-delta",
    "text-end",
    "reasoning-start",
    "reasoning-delta",
    "reasoning-end",
    "finish-step",
    "finish",
    "file-change",
    "compaction",
)


@dataclass(frozen=True)
class Violation:
    """One broken rule: the requirement id, what was observed, and where."""

    requirement: str
    message: str
    index: int | None = None

    def __str__(self) -> str:
        where = f" (part #{self.index})" if self.index is not None else ""
        return f"{self.requirement}{where}: {self.message}"


def to_wire(part: object) -> Any:
    """A recorded part as JSON-ready data (models dumped, dicts as they are)."""
    if isinstance(part, WireModel):
        return part.to_wire()
    return part


def harness_violations(
    parts: Sequence[object],
    *,
    builtin_tools: Mapping[str, BuiltinTool],
    harness_id: str,
    completed: bool,
    earlier_calls: Mapping[str, str] | None = None,
    host_tools: Sequence[str] = (),
) -> list[Violation]:
    """Check one turn slice of harness parts, as the adapter emitted them.

    Args:
        parts: The parts passed to ``emit``, in order (models or wire dicts).
        builtin_tools: The adapter's built-in table.
        harness_id: The adapter's id (``harnessMetadata`` keys).
        completed: The turn ended normally (not paused, suspended, aborted or failed).
        earlier_calls: toolCallId -> toolName of calls emitted in earlier slices of the
            same turn (tool results may refer to them; approval requests may not).
        host_tools: Names of the host tool specs the turn received (a host tool may
            shadow a built-in name, and its calls are host-dispatched).

    Returns:
        The violations, in stream order.
    """
    found: list[Violation] = []
    parsed: list[tuple[int, StreamPart]] = []
    for index, raw in enumerate(parts):
        wire = to_wire(raw)
        # Iterative and bounded: a part nested 1,000 deep or containing itself is a
        # violation, never a RecursionError of the kit.
        problem = find_non_json(wire, "part", max_depth=MAX_PART_DEPTH)
        if problem is not None:
            found.append(
                Violation("STREAM-004", f"the part is not JSON-serializable: {problem}", index)
            )
            continue
        try:
            json.dumps(wire)
        except (TypeError, ValueError, RecursionError) as error:
            found.append(
                Violation("STREAM-004", f"the part is not JSON-serializable: {error}", index)
            )
            continue
        try:
            part = parse_stream_part(wire)
            again = parse_stream_part(json.loads(json.dumps(part.to_wire())))
        except ValidationError as error:
            found.append(
                Violation("STREAM-004", f"the part does not validate: {_first_error(error)}", index)
            )
            continue
        if again != part:
            found.append(
                Violation("STREAM-004", "the part changes through a JSON round trip", index)
            )
        parsed.append((index, part))

    calls: dict[str, str] = dict(earlier_calls or {})
    slice_calls: set[str] = set()
    open_blocks: dict[tuple[str, str], bool] = {}
    step_content = False
    step_expected: int | None = None
    step_calls = 0
    finished_at: int | None = None
    errors: list[int] = []
    unflushed_results: list[int] = []
    input_streams: dict[str, int] = {}
    for index, part in parsed:
        if finished_at is not None:
            found.append(
                Violation("STREAM-040", f"a '{part.type}' part follows the turn's `finish`", index)
            )
        if isinstance(part, ErrorPart):
            errors.append(index)
        if part.type in _HARNESS_METADATA_TYPES:
            metadata = getattr(part, "harness_metadata", None) or {}
            foreign = [key for key in metadata if key != harness_id]
            if foreign:
                found.append(
                    Violation(
                        "STREAM-024",
                        f"harnessMetadata is keyed by {foreign!r}, not by harness id '{harness_id}'",
                        index,
                    )
                )
        if isinstance(part, TextStartPart | ReasoningStartPart):
            open_blocks[(part.type.split("-")[0], part.id)] = True
        elif isinstance(part, TextDeltaPart | ReasoningDeltaPart):
            kind = part.type.split("-")[0]
            if not open_blocks.get((kind, part.id)):
                found.append(
                    Violation(
                        "STREAM-038",
                        f"{part.type} for {kind} block '{part.id}' without an open {kind}-start",
                        index,
                    )
                )
        elif isinstance(part, TextEndPart | ReasoningEndPart):
            kind = part.type.split("-")[0]
            if not open_blocks.pop((kind, part.id), False):
                found.append(
                    Violation(
                        "STREAM-038",
                        f"{part.type} closes {kind} block '{part.id}' that is not open",
                        index,
                    )
                )
        elif isinstance(part, ToolInputStartPart | ToolInputDeltaPart | ToolInputEndPart):
            input_streams.setdefault(part.id, index)
        elif isinstance(part, ToolCallPart):
            found.extend(_call_violations(part, index, builtin_tools, host_tools))
            slice_calls.add(part.tool_call_id)
            if step_calls == 0 and part.step_tool_call_count is not None:
                step_expected = part.step_tool_call_count
            step_calls += 1
            calls[part.tool_call_id] = part.tool_name
            input_streams.pop(part.tool_call_id, None)
        elif isinstance(part, ToolApprovalRequestPart):
            if part.tool_call_id not in slice_calls:
                found.append(
                    Violation(
                        "STREAM-013",
                        f"approval request '{part.approval_id}' names unknown tool call '{part.tool_call_id}'",
                        index,
                    )
                )
        elif isinstance(part, ToolResultPart):
            if part.tool_call_id not in calls:
                found.append(
                    Violation(
                        "STREAM-054",
                        f"tool-result for '{part.tool_call_id}' arrives before any tool-call with that id",
                        index,
                    )
                )
            elif calls[part.tool_call_id] != part.tool_name:
                found.append(
                    Violation(
                        "STREAM-015",
                        f"tool-result names tool '{part.tool_name}' but call '{part.tool_call_id}' "
                        f"was '{calls[part.tool_call_id]}'",
                        index,
                    )
                )
        elif isinstance(part, FinishStepPart):
            if step_expected is not None and step_calls != step_expected:
                found.append(
                    Violation(
                        "STREAM-011",
                        f"the step announced stepToolCallCount={step_expected} but had {step_calls} tool calls",
                        index,
                    )
                )
            step_content, step_expected, step_calls = False, None, 0
            unflushed_results.clear()
            for (kind, block_id), still_open in list(open_blocks.items()):
                if still_open:
                    found.append(
                        Violation(
                            "STREAM-038",
                            f"{kind} block '{block_id}' is still open at finish-step",
                            index,
                        )
                    )
            open_blocks.clear()
            continue
        elif isinstance(part, FinishPart):
            if step_content:
                found.append(
                    Violation(
                        "STREAM-033",
                        "`finish` arrives while the step still has content; emit `finish-step` first",
                        index,
                    )
                )
            if finished_at is not None:
                found.append(Violation("STREAM-040", "a second `finish` part", index))
            found.extend(
                Violation(
                    "STREAM-052",
                    "tool-result after the last finish-step; it belongs before its step's finish-step",
                    result_index,
                )
                for result_index in unflushed_results
            )
            finished_at = index
            continue
        if isinstance(part, _CONTENT):
            step_content = True
        if isinstance(part, ToolResultPart):
            unflushed_results.append(index)
    for stream_id, index in input_streams.items():
        found.append(
            Violation(
                "STREAM-026",
                f"tool-input parts with id '{stream_id}' are never completed by a tool-call",
                index,
            )
        )
    if len(errors) > 1:
        found.append(
            Violation("TRANSLATE-019", f"{len(errors)} error parts in one turn", errors[1])
        )
    if completed:
        if finished_at is None:
            found.append(Violation("STREAM-040", "the turn completed without a `finish` part"))
        elif step_content:
            found.append(
                Violation(
                    "STREAM-033", "the turn ended with step content after the last finish-step"
                )
            )
    return found


def _call_violations(
    part: ToolCallPart,
    index: int,
    builtin_tools: Mapping[str, BuiltinTool],
    host_tools: Sequence[str],
) -> list[Violation]:
    found: list[Violation] = []
    if part.input.strip():
        try:
            json.loads(part.input)
        except ValueError:
            found.append(
                Violation(
                    "STREAM-009", f"tool-call input is not JSON text: {part.input[:80]!r}", index
                )
            )
    native_to_key = {
        tool.native_name: key
        for key, tool in builtin_tools.items()
        if tool.native_name is not None and tool.native_name != key
    }
    if part.tool_name in native_to_key and part.tool_name not in builtin_tools:
        found.append(
            Violation(
                "MERGE-004",
                f"built-in call uses native name '{part.tool_name}'; the toolName must be the key "
                f"'{native_to_key[part.tool_name]}'",
                index,
            )
        )
    if (
        part.tool_name in builtin_tools
        and part.tool_name not in host_tools
        and part.tool_name != "askUserQuestions"
        and part.provider_executed is not True
    ):
        found.append(
            Violation(
                "MERGE-009",
                f"built-in call '{part.tool_name}' ({part.tool_call_id}) is not marked providerExecuted: true",
                index,
            )
        )
    return found


def _first_error(error: ValidationError) -> str:
    item = error.errors()[0]
    location = ".".join(str(piece) for piece in item["loc"])
    return f"{location}: {item['msg']}"


def consumer_violations(parts: Sequence[ConsumerPart]) -> list[Violation]:
    """Check a consumer stream (what the agent emits) against the result framing rules.

    Checks: ``start`` first (STREAM-027); exactly one terminal part (``finish``,
    ``error`` or ``abort``), last (STREAM-036); ``start-step``/``finish-step`` alternate
    (STREAM-030, STREAM-032). Tool outcomes are not paired with their calls here: a
    continued turn's result legitimately carries outcomes of calls streamed in an earlier
    result, which this function does not see.
    """
    found: list[Violation] = []
    if not parts or parts[0].type != "start":
        found.append(Violation("STREAM-027", "the consumer stream does not start with `start`", 0))
    terminals = [i for i, part in enumerate(parts) if part.type in ("finish", "error", "abort")]
    if len(terminals) != 1:
        found.append(
            Violation("STREAM-036", f"{len(terminals)} terminal parts (expected exactly one)")
        )
    elif terminals[0] != len(parts) - 1:
        found.append(Violation("STREAM-036", "parts follow the terminal part", terminals[0]))
    in_step = False
    for index, part in enumerate(parts):
        if part.type == "start-step":
            if in_step:
                found.append(Violation("STREAM-030", "start-step inside an open step", index))
            in_step = True
        elif part.type == "finish-step":
            if not in_step:
                found.append(Violation("STREAM-032", "finish-step without a start-step", index))
            in_step = False
    return found


def recorded_violations(
    sessions: Sequence[Any],
    *,
    builtin_tools: Mapping[str, BuiltinTool],
    harness_id: str,
    completed: Literal["none", "last", "all"] = "none",
) -> list[Violation]:
    """Check recorded sessions (``RecordedSession``), slice by slice.

    Sessions with the same id (a session resumed from a state, possibly in a new
    adapter) are one turn history: calls of earlier slices stay known to later ones.
    ``completed`` says which slices ended a turn normally: none, each session's last, or
    all (every slice a whole turn).
    """
    found: list[Violation] = []
    calls_by_session: dict[str, dict[str, str]] = {}
    for session in sessions:
        calls = calls_by_session.setdefault(session.session_id, {})
        for index, recorded in enumerate(session.slices):
            host_tools = [spec.get("name", "") for spec in recorded.options.get("tools", [])]
            found.extend(
                harness_violations(
                    recorded.parts,
                    builtin_tools=builtin_tools,
                    harness_id=harness_id,
                    completed=completed == "all"
                    or (completed == "last" and index == len(session.slices) - 1),
                    earlier_calls=calls,
                    host_tools=host_tools,
                )
            )
            asks = any(
                isinstance(wire := to_wire(part), dict)
                and wire.get("type") == "tool-approval-request"
                for part in recorded.parts
            )
            if recorded.kind == "continue" and recorded.call_error is not None:
                found.append(
                    continue_call_violation(
                        recorded.call_error, restored=bool(session.start.get("continue"))
                    )
                )
            if asks and recorded.control_can_approve is False:
                found.append(
                    Violation(
                        "ADAPTER-046",
                        "the slice emitted tool-approval-request parts but its prompt control "
                        "has no submit_tool_approval",
                    )
                )
            for part in recorded.parts:
                wire = to_wire(part)
                if isinstance(wire, dict) and wire.get("type") == "tool-call":
                    calls[str(wire.get("toolCallId"))] = str(wire.get("toolName"))
    return found


def continue_call_violation(call_error: str, *, restored: bool) -> Violation:
    """A ``do_continue_turn`` that raised instead of returning a prompt control.

    In a session started from a ``continue-turn`` state that is LIFECYCLE-041 (the
    restored turn is not continued); after a pause in the same session, ADAPTER-028.
    """
    if restored:
        return Violation(
            "LIFECYCLE-041",
            "do_continue_turn of a session started from a continue-turn state raised "
            f"instead of continuing the restored turn: {call_error}",
        )
    return Violation(
        "ADAPTER-028",
        "do_continue_turn raised instead of continuing the paused turn and returning a "
        f"prompt control: {call_error}",
    )
