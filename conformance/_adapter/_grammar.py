"""Stream grammar: the rules a turn's harness parts (and consumer parts) must obey.

These are pure functions over recorded transcripts, so the same rules judge a live
adapter, a replay bundle and a simulation transcript. Each violation names the
requirement it breaks.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
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

    Each part is first checked on its own (:func:`_part_violations`), then the valid
    parts are walked in order: the rules of :data:`_EVERY_PART` see every part, one rule
    of :data:`_PART_RULES` sees the parts of its kind, and the rules of
    :data:`_SLICE_END_RULES` judge what the walk left behind. Each rule is a small
    function naming the requirement it enforces.

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
    walk = _Walk(
        builtin_tools=builtin_tools,
        harness_id=harness_id,
        host_tools=host_tools,
        completed=completed,
        calls=dict(earlier_calls or {}),
    )
    parsed: list[tuple[int, StreamPart]] = []
    for index, raw in enumerate(parts):
        part = _part_violations(walk, index, raw)
        if part is not None:
            parsed.append((index, part))
    for index, part in parsed:
        for every_part_rule in _EVERY_PART:
            every_part_rule(walk, index, part)
        for kinds, rule in _PART_RULES:
            if isinstance(part, kinds):
                rule(walk, index, part)
                break
        # After the kind's rule: a finish-step or finish judges the content before it.
        _step_content(walk, index, part)
    for end_rule in _SLICE_END_RULES:
        end_rule(walk)
    return walk.found


@dataclass
class _Walk:
    """What one slice's walk has seen so far; the rules read it, report to it, update it."""

    builtin_tools: Mapping[str, BuiltinTool]
    harness_id: str
    host_tools: Sequence[str]
    completed: bool
    #: toolCallId -> toolName of every call so far (earlier slices included).
    calls: dict[str, str]
    found: list[Violation] = field(default_factory=list)
    #: Calls emitted in this slice (approval requests may name only these).
    slice_calls: set[str] = field(default_factory=set)
    #: (``text``/``reasoning``, block id) -> open.
    open_blocks: dict[tuple[str, str], bool] = field(default_factory=dict)
    #: The current step has content a ``finish-step`` must close.
    step_content: bool = False
    #: The current step's announced ``stepToolCallCount``, and the calls it has had.
    step_expected: int | None = None
    step_calls: int = 0
    finished_at: int | None = None
    errors: list[int] = field(default_factory=list)
    #: Tool results of the current step, not yet closed by a ``finish-step``.
    unflushed_results: list[int] = field(default_factory=list)
    #: Tool-input stream id -> the index of its first part, until its tool-call.
    input_streams: dict[str, int] = field(default_factory=dict)

    def report(self, requirement: str, message: str, index: int | None = None) -> None:
        self.found.append(Violation(requirement, message, index))


def _part_violations(walk: _Walk, index: int, raw: object) -> StreamPart | None:
    """STREAM-004: the part is JSON, validates, and survives a JSON round trip.

    Returns the parsed part, or ``None`` when it cannot take part in the walk.
    """
    wire = to_wire(raw)
    # Iterative and bounded: a part nested 1,000 deep or containing itself is a
    # violation, never a RecursionError of the kit.
    problem = find_non_json(wire, "part", max_depth=MAX_PART_DEPTH)
    if problem is not None:
        walk.report("STREAM-004", f"the part is not JSON-serializable: {problem}", index)
        return None
    try:
        json.dumps(wire)
    except (TypeError, ValueError, RecursionError) as error:
        walk.report("STREAM-004", f"the part is not JSON-serializable: {error}", index)
        return None
    try:
        part = parse_stream_part(wire)
        again = parse_stream_part(json.loads(json.dumps(part.to_wire())))
    except ValidationError as error:
        walk.report("STREAM-004", f"the part does not validate: {_first_error(error)}", index)
        return None
    if again != part:
        walk.report("STREAM-004", "the part changes through a JSON round trip", index)
    return part


def _nothing_after_finish(walk: _Walk, index: int, part: StreamPart) -> None:
    """STREAM-040: no part follows the turn's ``finish``."""
    if walk.finished_at is not None:
        walk.report("STREAM-040", f"a '{part.type}' part follows the turn's `finish`", index)


def _count_errors(walk: _Walk, index: int, part: StreamPart) -> None:
    """Remembers error parts for TRANSLATE-019 (:func:`_at_most_one_error`)."""
    if isinstance(part, ErrorPart):
        walk.errors.append(index)


def _metadata_keyed_by_harness_id(walk: _Walk, index: int, part: StreamPart) -> None:
    """STREAM-024: ``harnessMetadata`` is keyed by the adapter's harness id."""
    if part.type not in _HARNESS_METADATA_TYPES:
        return
    metadata = getattr(part, "harness_metadata", None) or {}
    foreign = [key for key in metadata if key != walk.harness_id]
    if foreign:
        walk.report(
            "STREAM-024",
            f"harnessMetadata is keyed by {foreign!r}, not by harness id '{walk.harness_id}'",
            index,
        )


def _step_content(walk: _Walk, index: int, part: StreamPart) -> None:
    """Marks step content (STREAM-033) and tool results awaiting a finish-step (STREAM-052).

    ``finish-step`` and ``finish`` close what this marks, so they are not content.
    """
    if isinstance(part, FinishStepPart | FinishPart):
        return
    if isinstance(part, _CONTENT):
        walk.step_content = True
    if isinstance(part, ToolResultPart):
        walk.unflushed_results.append(index)


def _block_opens(walk: _Walk, index: int, part: TextStartPart | ReasoningStartPart) -> None:
    """STREAM-038: a text or reasoning block opens (its deltas and end may follow)."""
    walk.open_blocks[(part.type.split("-")[0], part.id)] = True


def _delta_in_open_block(walk: _Walk, index: int, part: TextDeltaPart | ReasoningDeltaPart) -> None:
    """STREAM-038: a delta belongs to an open block of its kind."""
    kind = part.type.split("-")[0]
    if not walk.open_blocks.get((kind, part.id)):
        walk.report(
            "STREAM-038",
            f"{part.type} for {kind} block '{part.id}' without an open {kind}-start",
            index,
        )


def _end_closes_open_block(walk: _Walk, index: int, part: TextEndPart | ReasoningEndPart) -> None:
    """STREAM-038: an end closes a block that is open."""
    kind = part.type.split("-")[0]
    if not walk.open_blocks.pop((kind, part.id), False):
        walk.report(
            "STREAM-038", f"{part.type} closes {kind} block '{part.id}' that is not open", index
        )


def _input_stream(
    walk: _Walk, index: int, part: ToolInputStartPart | ToolInputDeltaPart | ToolInputEndPart
) -> None:
    """STREAM-026: a tool-input stream opens; its tool-call must complete it."""
    walk.input_streams.setdefault(part.id, index)


def _tool_call(walk: _Walk, index: int, part: ToolCallPart) -> None:
    """STREAM-009, MERGE-004, MERGE-009 on the call; counts it for STREAM-011."""
    walk.found.extend(_call_violations(part, index, walk.builtin_tools, walk.host_tools))
    walk.slice_calls.add(part.tool_call_id)
    if walk.step_calls == 0 and part.step_tool_call_count is not None:
        walk.step_expected = part.step_tool_call_count
    walk.step_calls += 1
    walk.calls[part.tool_call_id] = part.tool_name
    walk.input_streams.pop(part.tool_call_id, None)


def _approval_names_a_slice_call(walk: _Walk, index: int, part: ToolApprovalRequestPart) -> None:
    """STREAM-013: an approval request names a call of the same slice."""
    if part.tool_call_id not in walk.slice_calls:
        walk.report(
            "STREAM-013",
            f"approval request '{part.approval_id}' names unknown tool call '{part.tool_call_id}'",
            index,
        )


def _result_follows_its_call(walk: _Walk, index: int, part: ToolResultPart) -> None:
    """STREAM-054: a result follows its call; STREAM-015: it names the call's tool."""
    if part.tool_call_id not in walk.calls:
        walk.report(
            "STREAM-054",
            f"tool-result for '{part.tool_call_id}' arrives before any tool-call with that id",
            index,
        )
    elif walk.calls[part.tool_call_id] != part.tool_name:
        walk.report(
            "STREAM-015",
            f"tool-result names tool '{part.tool_name}' but call '{part.tool_call_id}' "
            f"was '{walk.calls[part.tool_call_id]}'",
            index,
        )


def _finish_step(walk: _Walk, index: int, part: FinishStepPart) -> None:
    """STREAM-011: the step had the calls it announced; STREAM-038: no block left open."""
    if walk.step_expected is not None and walk.step_calls != walk.step_expected:
        walk.report(
            "STREAM-011",
            f"the step announced stepToolCallCount={walk.step_expected} but had "
            f"{walk.step_calls} tool calls",
            index,
        )
    walk.step_content, walk.step_expected, walk.step_calls = False, None, 0
    walk.unflushed_results.clear()
    for (kind, block_id), still_open in list(walk.open_blocks.items()):
        if still_open:
            walk.report(
                "STREAM-038", f"{kind} block '{block_id}' is still open at finish-step", index
            )
    walk.open_blocks.clear()


def _finish(walk: _Walk, index: int, part: FinishPart) -> None:
    """STREAM-033: the step is closed; STREAM-040: one finish; STREAM-052: results flushed."""
    if walk.step_content:
        walk.report(
            "STREAM-033",
            "`finish` arrives while the step still has content; emit `finish-step` first",
            index,
        )
    if walk.finished_at is not None:
        walk.report("STREAM-040", "a second `finish` part", index)
    for result_index in walk.unflushed_results:
        walk.report(
            "STREAM-052",
            "tool-result after the last finish-step; it belongs before its step's finish-step",
            result_index,
        )
    walk.finished_at = index


def _input_streams_completed(walk: _Walk) -> None:
    """STREAM-026: every tool-input stream is completed by its tool-call."""
    for stream_id, index in walk.input_streams.items():
        walk.report(
            "STREAM-026",
            f"tool-input parts with id '{stream_id}' are never completed by a tool-call",
            index,
        )


def _at_most_one_error(walk: _Walk) -> None:
    """TRANSLATE-019: a turn has at most one error part."""
    if len(walk.errors) > 1:
        walk.report("TRANSLATE-019", f"{len(walk.errors)} error parts in one turn", walk.errors[1])


def _completed_turn_finished(walk: _Walk) -> None:
    """STREAM-040: a completed turn has a ``finish``; STREAM-033: no content after its step."""
    if not walk.completed:
        return
    if walk.finished_at is None:
        walk.report("STREAM-040", "the turn completed without a `finish` part")
    elif walk.step_content:
        walk.report("STREAM-033", "the turn ended with step content after the last finish-step")


#: Rules every valid part goes through, in this order, before its kind's rule.
_EVERY_PART: tuple[Callable[[_Walk, int, StreamPart], None], ...] = (
    _nothing_after_finish,
    _count_errors,
    _metadata_keyed_by_harness_id,
)
#: One rule per kind of part: the first entry whose types match the part applies.
_PART_RULES: tuple[tuple[type | tuple[type, ...], Callable[[_Walk, int, Any], None]], ...] = (
    ((TextStartPart, ReasoningStartPart), _block_opens),
    ((TextDeltaPart, ReasoningDeltaPart), _delta_in_open_block),
    ((TextEndPart, ReasoningEndPart), _end_closes_open_block),
    ((ToolInputStartPart, ToolInputDeltaPart, ToolInputEndPart), _input_stream),
    (ToolCallPart, _tool_call),
    (ToolApprovalRequestPart, _approval_names_a_slice_call),
    (ToolResultPart, _result_follows_its_call),
    (FinishStepPart, _finish_step),
    (FinishPart, _finish),
)
#: Rules that judge what the walk left when the slice ends, in this order.
_SLICE_END_RULES: tuple[Callable[[_Walk], None], ...] = (
    _input_streams_completed,
    _at_most_one_error,
    _completed_turn_finished,
)


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
