"""Zoo areas "stream grammar" and "dynamic parts": defects in the parts a runtime emits."""

from __future__ import annotations

from typing import Any

from harness_testkit.fake_harness import DropFinishStepFault
from harness_testkit.spec import (
    ErrorPart,
    FileChangePart,
    FinishPart,
    FinishStepPart,
    ReasoningDeltaPart,
    ReasoningEndPart,
    ReasoningStartPart,
    TextDeltaPart,
    TextEndPart,
    TextStartPart,
    ToolApprovalRequestPart,
    ToolCallPart,
    ToolInputEndPart,
    ToolInputStartPart,
    ToolResultPart,
    Usage,
)

from ._machinery import Defect, MutantSession

__all__ = ["DEFECTS"]


def _result_before_call(session: MutantSession, part: Any) -> list[Any]:
    held: dict[str, Any] = session.memo.setdefault("held", {})
    if isinstance(part, ToolCallPart) and part.provider_executed:
        held[part.tool_call_id] = part
        return []
    if isinstance(part, ToolResultPart) and part.tool_call_id in held:
        return [part, held.pop(part.tool_call_id)]
    return [part]


def _duplicate_finish(session: MutantSession, part: Any) -> list[Any]:
    return [part, part] if isinstance(part, FinishPart) else [part]


def _snake_case_delta(session: MutantSession, part: Any) -> list[Any]:
    if isinstance(part, TextDeltaPart):
        # The AI SDK 4 spelling: `text` where harness-v1 says `delta`.
        return [{"type": "text-delta", "id": part.id, "text": part.delta}]
    return [part]


def _miscounted_step(session: MutantSession, part: Any) -> list[Any]:
    if isinstance(part, ToolCallPart) and part.step_tool_call_count is not None:
        return [part.model_copy(update={"step_tool_call_count": part.step_tool_call_count + 1})]
    return [part]


def _foreign_metadata(session: MutantSession, part: Any) -> list[Any]:
    if isinstance(part, TextEndPart | FinishStepPart | FinishPart):
        return [part.model_copy(update={"harness_metadata": {"claude-code": {"mutant": True}}})]
    return [part]


def _truncated_input(session: MutantSession, part: Any) -> list[Any]:
    if isinstance(part, ToolCallPart) and len(part.input) > 1:
        return [part.model_copy(update={"input": part.input[:-1]})]
    return [part]


def _unframed_text(session: MutantSession, part: Any) -> list[Any]:
    return [] if isinstance(part, TextStartPart) else [part]


def _approval_for_unknown_call(session: MutantSession, part: Any) -> list[Any]:
    if isinstance(part, ToolApprovalRequestPart):
        return [part.model_copy(update={"tool_call_id": f"{part.tool_call_id}-x"})]
    return [part]


def _abandoned_tool_input(session: MutantSession, part: Any) -> list[Any]:
    if isinstance(part, ToolCallPart):
        draft = f"{part.tool_call_id}-draft"
        return [
            ToolInputStartPart(id=draft, tool_name=part.tool_name),
            ToolInputEndPart(id=draft),
            part,
        ]
    return [part]


def _results_after_last_step(session: MutantSession, part: Any) -> list[Any]:
    provider_calls: set[str] = session.memo.setdefault("provider_calls", set())
    held: list[Any] = session.memo.setdefault("held", [])
    if isinstance(part, ToolCallPart) and part.provider_executed:
        provider_calls.add(part.tool_call_id)
    elif isinstance(part, ToolResultPart) and part.tool_call_id in provider_calls:
        held.append(part)
        return []
    elif isinstance(part, FinishPart):
        session.memo["held"] = []
        return [*held, part]
    return [part]


def _create_as_modify(session: MutantSession, part: Any) -> list[Any]:
    if isinstance(part, FileChangePart) and part.event == "create":
        return [part.model_copy(update={"event": "modify"})]
    return [part]


def _root_relative_paths(session: MutantSession, part: Any) -> list[Any]:
    if isinstance(part, FileChangePart):
        return [part.model_copy(update={"path": part.path.lstrip("/")})]
    return [part]


def _silent_creates(session: MutantSession, part: Any) -> list[Any]:
    return [] if isinstance(part, FileChangePart) and part.event == "create" else [part]


def _reasoning_echoed_as_text(session: MutantSession, part: Any) -> list[Any]:
    # Framed correctly, so only a comparison with what the model did can see it.
    if isinstance(part, ReasoningStartPart):
        return [part, TextStartPart(id=f"{part.id}-echo")]
    if isinstance(part, ReasoningDeltaPart):
        return [part, TextDeltaPart(id=f"{part.id}-echo", delta=part.delta)]
    if isinstance(part, ReasoningEndPart):
        return [part, TextEndPart(id=f"{part.id}-echo")]
    return [part]


def _usage_not_reported(session: MutantSession, part: Any) -> list[Any]:
    if isinstance(part, FinishStepPart):
        return [part.model_copy(update={"usage": Usage.of(0, 0)})]
    return [part]


def _error_parts_before_finish(session: MutantSession, part: Any) -> list[Any]:
    if isinstance(part, FinishPart):
        hiccup = ErrorPart(error="runtime hiccup")
        return [hiccup, hiccup, part]
    return [part]


_GRAMMAR = "stream grammar"
_DYNAMIC = "dynamic parts"

DEFECTS: tuple[Defect, ...] = (
    Defect(
        "step-left-open",
        "STREAM-033",
        _GRAMMAR,
        "The runtime never emits finish-step, so `finish` arrives with the step still open.",
        fake={"faults": [DropFinishStepFault()]},
    ),
    Defect(
        "result-before-call",
        "STREAM-054",
        _GRAMMAR,
        "Runtime-executed calls are announced only after their tool-result.",
        profile="claude-code",
        rewrite=_result_before_call,
    ),
    Defect(
        "duplicate-finish",
        "STREAM-040",
        _GRAMMAR,
        "Every `finish` part is emitted twice.",
        rewrite=_duplicate_finish,
    ),
    Defect(
        "wrong-field-names",
        "STREAM-004",
        _GRAMMAR,
        "text-delta parts carry `text` (the AI SDK 4 name) instead of `delta`.",
        rewrite=_snake_case_delta,
    ),
    Defect(
        "miscounted-step",
        "STREAM-011",
        _GRAMMAR,
        "stepToolCallCount announces one tool call more than the step has.",
        profile="claude-code",
        rewrite=_miscounted_step,
        # The agent waits for the call that never comes; a short timeout keeps that quick.
        claims={"turn_timeout": 1.0},
    ),
    Defect(
        "foreign-metadata-key",
        "STREAM-024",
        _GRAMMAR,
        "harnessMetadata is keyed by another harness's id.",
        rewrite=_foreign_metadata,
    ),
    Defect(
        "truncated-tool-input",
        "STREAM-009",
        _GRAMMAR,
        "tool-call input loses its last character, so it is not JSON text.",
        profile="claude-code",
        rewrite=_truncated_input,
    ),
    Defect(
        "unframed-text",
        "STREAM-038",
        _GRAMMAR,
        "Text blocks have deltas and an end but no text-start.",
        rewrite=_unframed_text,
    ),
    Defect(
        "approval-for-unknown-call",
        "STREAM-013",
        _GRAMMAR,
        "Approval requests name a toolCallId no tool-call carried.",
        profile="claude-code",
        rewrite=_approval_for_unknown_call,
    ),
    Defect(
        "abandoned-tool-input",
        "STREAM-026",
        _GRAMMAR,
        "Every tool call is preceded by tool-input parts of a draft id no tool-call completes.",
        profile="claude-code",
        rewrite=_abandoned_tool_input,
    ),
    Defect(
        "results-after-last-step",
        "STREAM-052",
        _GRAMMAR,
        "Runtime-executed results are held back until just before `finish`.",
        profile="claude-code",
        rewrite=_results_after_last_step,
    ),
    Defect(
        "reasoning-echoed-as-text",
        "ADAPTER-056",
        _GRAMMAR,
        "Every reasoning block is also emitted as a (well-framed) text block.",
        rewrite=_reasoning_echoed_as_text,
    ),
    Defect(
        "step-usage-zeroed",
        "ADAPTER-058",
        _GRAMMAR,
        "finish-step reports zero tokens instead of the usage the runtime reported.",
        rewrite=_usage_not_reported,
    ),
    Defect(
        "two-error-parts-per-turn",
        "TRANSLATE-019",
        _GRAMMAR,
        "Every turn reports two `error` parts before its `finish`.",
        rewrite=_error_parts_before_finish,
    ),
    Defect(
        "file-change-wrong-event",
        "STREAM-019",
        _DYNAMIC,
        "New files are reported as `modify` on a runtime that reports exact events.",
        profile="codex",
        rewrite=_create_as_modify,
    ),
    Defect(
        "file-change-odd-path",
        "STREAM-019",
        _DYNAMIC,
        "file-change paths lose their leading slash, so the work dir cannot be stripped.",
        profile="codex",
        rewrite=_root_relative_paths,
    ),
    Defect(
        "file-change-missing",
        "STREAM-019",
        _DYNAMIC,
        "Files created by an opaque mutation get no file-change part.",
        profile="codex",
        rewrite=_silent_creates,
    ),
    Defect(
        "file-change-for-tool-write",
        "STREAM-018",
        _DYNAMIC,
        "Writes of visible write/edit calls are also reported as file-change.",
        profile="opencode",
        profile_changes={"file_change_for_tool_writes": True},
    ),
)
