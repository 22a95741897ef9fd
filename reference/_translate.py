"""Pure translation of single harness parts into consumer (AI SDK) parts.

No I/O, no event loop, no turn state: each function takes a harness part (and the few
values it needs: the session work dir, the merged tools, a minted id) and returns the
consumer parts the agent forwards for it. The slice runner (``_slice_runner.py``) decides when a
part is forwarded, held or suppressed; these functions only say what it becomes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from harness_testkit.spec import (
    BuiltinTool,
    CompactionPart,
    ConsumerFinishStepPart,
    ConsumerPart,
    ConsumerRawPart,
    ConsumerReasoningDeltaPart,
    ConsumerTextDeltaPart,
    ConsumerToolCallPart,
    ConsumerToolErrorPart,
    ConsumerToolResultPart,
    FileChangePart,
    LanguageModelUsage,
    RawPart,
    ReasoningDeltaPart,
    ReasoningEndPart,
    ReasoningStartPart,
    StepResponse,
    StreamPart,
    TextDeltaPart,
    TextEndPart,
    TextStartPart,
    ToolResultPart,
)

from ._fast import BOUNDARIES, DELTAS, CallFields, Trusted, WireToolResult
from ._strip import strip_value, strip_work_dir
from ._tool import Tool, parse_tool_call_input

__all__ = [
    "compaction_parts",
    "consumer_call",
    "consumer_delta",
    "file_change_parts",
    "finish_step_part",
    "harness_outcome",
    "host_outcome",
    "text_like_part",
    "wire_outcome",
]


#: The consumer ``tool-call``: :func:`consumer_call` writes its values in declaration
#: order itself (the hot path).
_tool_call = Trusted(
    ConsumerToolCallPart,
    "tool_call_id",
    "tool_name",
    "input",
    "provider_executed",
    "dynamic",
    "provider_metadata",
    "invalid",
    "error",
)
assert tuple(ConsumerToolCallPart.model_fields) == (
    "type",
    *("tool_call_id", "tool_name", "input", "provider_executed", "dynamic"),
    *("provider_metadata", "invalid", "error", "title"),
), "consumer_call writes the fields of ConsumerToolCallPart in this order"
_tool_error = Trusted(
    ConsumerToolErrorPart,
    "tool_call_id",
    "tool_name",
    "error",
    "provider_executed",
    "dynamic",
    "provider_metadata",
)
_tool_result = Trusted(
    ConsumerToolResultPart,
    "tool_call_id",
    "tool_name",
    "output",
    "preliminary",
    "dynamic",
    "provider_metadata",
)


def consumer_delta(
    part: TextDeltaPart | ReasoningDeltaPart,
) -> ConsumerTextDeltaPart | ConsumerReasoningDeltaPart:
    """The consumer delta of a harness text or reasoning delta (step content)."""
    kind = "text-delta" if isinstance(part, TextDeltaPart) else "reasoning-delta"
    values: dict[str, Any] = {"type": kind, "id": part.id, "text": part.delta}
    values["provider_metadata"] = part.harness_metadata
    return DELTAS[kind].ordered(values)


#: Harness block boundaries -> (the consumer part's builder, its ``type``); the builders
#: are the wire reader's, so both paths build the same part.
_BOUNDARIES: dict[type[StreamPart], tuple[Trusted[Any], str]] = {
    harness: (BOUNDARIES[kind], kind)
    for harness, kind in (
        (TextStartPart, "text-start"),
        (TextEndPart, "text-end"),
        (ReasoningStartPart, "reasoning-start"),
        (ReasoningEndPart, "reasoning-end"),
    )
}
_BOUNDARY_TYPES = tuple(_BOUNDARIES)


def text_like_part(part: StreamPart) -> tuple[ConsumerPart, bool] | None:
    """Text, reasoning and raw parts: ``(consumer part, is step content)``, else ``None``.

    Only the deltas are step content (they coalesce into ``{type: text|reasoning}``
    content); start/end and raw parts open a step but are not content.
    """
    boundary = _BOUNDARIES.get(type(part))
    if boundary is None and isinstance(part, _BOUNDARY_TYPES):  # a subclass (rare)
        boundary = next(entry for kind, entry in _BOUNDARIES.items() if isinstance(part, kind))
    if boundary is not None:
        builder, kind = boundary
        block = cast(TextStartPart, part)  # every boundary has these two fields
        values = {"type": kind, "id": block.id, "provider_metadata": block.harness_metadata}
        return builder.ordered(values), False
    if isinstance(part, TextDeltaPart | ReasoningDeltaPart):
        return consumer_delta(part), True
    if isinstance(part, RawPart):
        return ConsumerRawPart(raw_value=part.raw_value), False
    return None


def consumer_call(
    part: CallFields, work_dir: str, merged_tools: Mapping[str, Tool | BuiltinTool]
) -> ConsumerToolCallPart:
    """The consumer ``tool-call``: work dir stripped, input parsed and checked (MERGE)."""
    parsed = parse_tool_call_input(
        part.tool_name,
        strip_work_dir(part.input, work_dir),
        merged_tools,
        provider_executed=part.provider_executed,
        dynamic=part.dynamic,
    )
    values = {
        "type": "tool-call",
        "tool_call_id": part.tool_call_id,
        "tool_name": part.tool_name,
        "input": parsed.input,
        "provider_executed": part.provider_executed,
        "dynamic": True if parsed.dynamic else None,
        "provider_metadata": part.provider_metadata,
        "invalid": True if parsed.invalid else None,
        "error": parsed.error,
        "title": None,
    }
    return _tool_call.ordered(values)


#: A consumer ``finish-step`` and its response (their other fields' default factories
#: called per part, as the constructor calls them).
_response = Trusted(StepResponse, "id", "timestamp", "model_id", factories=("messages",))
_finish_step = Trusted(
    ConsumerFinishStepPart,
    *("response", "usage", "finish_reason", "raw_finish_reason", "provider_metadata"),
    factories=("performance",),
)


def finish_step_part(
    response_id: str,
    timestamp: str,
    model_id: str,
    usage: LanguageModelUsage,
    finish_reason: str,
    raw_finish_reason: str | None,
    metadata: Any,
) -> ConsumerFinishStepPart:
    """The consumer ``finish-step`` of a step, from validated values (``usage`` already a
    consumer usage). Metadata, when given, goes through the constructor, which copies it
    (the consumer part never shares the harness part's dicts)."""
    response = _response({"id": response_id, "timestamp": timestamp, "model_id": model_id})
    if metadata is not None:
        return ConsumerFinishStepPart(
            response=response,
            usage=usage,
            finish_reason=finish_reason,
            raw_finish_reason=raw_finish_reason,
            provider_metadata=metadata,
        )
    return _finish_step(
        {
            "response": response,
            "usage": usage,
            "finish_reason": finish_reason,
            "raw_finish_reason": raw_finish_reason,
            "provider_metadata": None,
        }
    )


def harness_outcome(part: ToolResultPart, provider_executed: bool, work_dir: str) -> ConsumerPart:
    """A harness ``tool-result``: a ``tool-error`` for a failed provider-executed call,
    else a ``tool-result`` (the value with the work dir stripped)."""
    value = strip_value(part.result, work_dir)
    if part.is_error is True and provider_executed:
        return _tool_error(
            {
                "tool_call_id": part.tool_call_id,
                "tool_name": part.tool_name,
                "error": value,
                "provider_executed": True,
                "dynamic": part.dynamic,
                "provider_metadata": part.provider_metadata,
            },
        )
    return _tool_result(
        {
            "tool_call_id": part.tool_call_id,
            "tool_name": part.tool_name,
            "output": value,
            "preliminary": part.preliminary,
            "dynamic": part.dynamic,
            "provider_metadata": part.provider_metadata,
        },
    )


def wire_outcome(result: WireToolResult, provider_executed: bool) -> ConsumerPart:
    """:func:`harness_outcome` of a plain wire result (its value already stripped)."""
    if result.is_error is True and provider_executed:
        return _tool_error(
            {
                "tool_call_id": result.tool_call_id,
                "tool_name": result.tool_name,
                "error": result.result,
                "provider_executed": True,
                "dynamic": result.dynamic,
                "provider_metadata": None,
            },
        )
    # The hot path: the values in declaration order, without the builder's merge.
    values = {
        "type": "tool-result",
        "tool_call_id": result.tool_call_id,
        "tool_name": result.tool_name,
        "input": None,
        "output": result.result,
        "provider_executed": None,
        "dynamic": result.dynamic,
        "preliminary": result.preliminary,
        "provider_metadata": None,
    }
    return _tool_result.ordered(values)


def host_outcome(
    tool_call_id: str, tool_name: str, input: Any, output: Any, *, is_error: bool, work_dir: str
) -> ConsumerPart:
    """The consumer outcome of a host-settled call (``tool-error`` or ``tool-result``)."""
    stripped = strip_value(output, work_dir)
    if is_error:
        return ConsumerToolErrorPart(
            tool_call_id=tool_call_id, tool_name=tool_name, input=input, error=stripped
        )
    return ConsumerToolResultPart(
        tool_call_id=tool_call_id, tool_name=tool_name, input=input, output=stripped
    )


def file_change_parts(
    part: FileChangePart, call_id: str, work_dir: str
) -> tuple[ConsumerToolCallPart, ConsumerToolResultPart]:
    """A ``file-change`` as a dynamic, provider-executed ``fileChange`` call and result."""
    value = {"event": part.event, "path": strip_work_dir(part.path, work_dir)}
    return _provider_tool_pair(call_id, "fileChange", value, dict(value), part.harness_metadata)


def compaction_parts(
    part: CompactionPart, call_id: str
) -> tuple[ConsumerToolCallPart, ConsumerToolResultPart]:
    """A ``compaction`` as a dynamic, provider-executed ``compaction`` call and result."""
    output: dict[str, Any] = {"trigger": part.trigger, "summary": part.summary}
    if part.tokens_before is not None:
        output["tokensBefore"] = part.tokens_before
    if part.tokens_after is not None:
        output["tokensAfter"] = part.tokens_after
    return _provider_tool_pair(call_id, "compaction", {}, output, part.harness_metadata)


def _provider_tool_pair(
    call_id: str,
    name: str,
    input: Any,
    output: Any,
    metadata: Any,
) -> tuple[ConsumerToolCallPart, ConsumerToolResultPart]:
    call = ConsumerToolCallPart(
        tool_call_id=call_id,
        tool_name=name,
        input=input,
        dynamic=True,
        provider_executed=True,
        provider_metadata=metadata,
    )
    result = ConsumerToolResultPart(
        tool_call_id=call_id,
        tool_name=name,
        input=input,
        output=output,
        dynamic=True,
        provider_executed=True,
        provider_metadata=metadata,
    )
    return call, result
