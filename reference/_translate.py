"""Pure translation of single harness parts into consumer (AI SDK) parts.

No I/O, no event loop, no turn state: each function takes a harness part (and the few
values it needs: the session work dir, the merged tools, a minted id) and returns the
consumer parts the agent forwards for it. The slice runner (``_turn.py``) decides when a
part is forwarded, held or suppressed; these functions only say what it becomes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from harness_testkit.spec import (
    BuiltinTool,
    CompactionPart,
    ConsumerPart,
    ConsumerRawPart,
    ConsumerReasoningDeltaPart,
    ConsumerReasoningEndPart,
    ConsumerReasoningStartPart,
    ConsumerTextDeltaPart,
    ConsumerTextEndPart,
    ConsumerTextStartPart,
    ConsumerToolCallPart,
    ConsumerToolErrorPart,
    ConsumerToolResultPart,
    FileChangePart,
    RawPart,
    ReasoningDeltaPart,
    ReasoningEndPart,
    ReasoningStartPart,
    StreamPart,
    TextDeltaPart,
    TextEndPart,
    TextStartPart,
    ToolCallPart,
    ToolResultPart,
    WireModel,
)

from ._strip import strip_value, strip_work_dir
from ._tool import Tool, parse_tool_call_input

__all__ = [
    "compaction_parts",
    "consumer_call",
    "consumer_delta",
    "file_change_parts",
    "harness_outcome",
    "host_outcome",
    "text_like_part",
]


M = TypeVar("M", bound=WireModel)
_new = object.__new__
_set = object.__setattr__


def trusted(model: type[M], values: dict[str, Any], fields_set: set[str]) -> M:
    """``model`` built from ``values`` without validating them: for parts the agent makes
    from fields of parts that were validated already (a third of the cost of ``model(...)``).

    ``values`` must hold every field of ``model``, in declaration order, with values of
    the declared types; ``fields_set`` names the fields a constructor call would have
    been given. The instance equals, dumps and reprs as ``model(**given)`` would.
    """
    part = _new(model)
    _set(part, "__dict__", values)
    _set(part, "__pydantic_fields_set__", fields_set)
    _set(part, "__pydantic_extra__", None)
    _set(part, "__pydantic_private__", None)
    return part


#: The fields a consumer delta is constructed with, one set shared by every delta (the
#: models are frozen, and pydantic copies a fields set before it changes one).
_DELTA_FIELDS = {"id", "text", "provider_metadata"}


def consumer_delta(
    part: TextDeltaPart | ReasoningDeltaPart,
) -> ConsumerTextDeltaPart | ConsumerReasoningDeltaPart:
    """The consumer delta of a harness text or reasoning delta (step content)."""
    model: type[ConsumerTextDeltaPart] | type[ConsumerReasoningDeltaPart]
    if isinstance(part, TextDeltaPart):
        model, kind = ConsumerTextDeltaPart, "text-delta"
    else:
        model, kind = ConsumerReasoningDeltaPart, "reasoning-delta"
    values = {"type": kind, "id": part.id, "text": part.delta}
    values["provider_metadata"] = part.harness_metadata
    return trusted(model, values, _DELTA_FIELDS)


def text_like_part(part: StreamPart) -> tuple[ConsumerPart, bool] | None:
    """Text, reasoning and raw parts: ``(consumer part, is step content)``, else ``None``.

    Only the deltas are step content (they coalesce into ``{type: text|reasoning}``
    content); start/end and raw parts open a step but are not content.
    """
    if isinstance(part, TextStartPart):
        return ConsumerTextStartPart(id=part.id, provider_metadata=part.harness_metadata), False
    if isinstance(part, TextDeltaPart | ReasoningDeltaPart):
        return consumer_delta(part), True
    if isinstance(part, TextEndPart):
        return ConsumerTextEndPart(id=part.id, provider_metadata=part.harness_metadata), False
    if isinstance(part, ReasoningStartPart):
        start = ConsumerReasoningStartPart(id=part.id, provider_metadata=part.harness_metadata)
        return start, False
    if isinstance(part, ReasoningEndPart):
        end = ConsumerReasoningEndPart(id=part.id, provider_metadata=part.harness_metadata)
        return end, False
    if isinstance(part, RawPart):
        return ConsumerRawPart(raw_value=part.raw_value), False
    return None


def consumer_call(
    part: ToolCallPart, work_dir: str, merged_tools: Mapping[str, Tool | BuiltinTool]
) -> ConsumerToolCallPart:
    """The consumer ``tool-call``: work dir stripped, input parsed and checked (MERGE)."""
    parsed = parse_tool_call_input(
        part.tool_name,
        strip_work_dir(part.input, work_dir),
        merged_tools,
        provider_executed=part.provider_executed,
        dynamic=part.dynamic,
    )
    return ConsumerToolCallPart(
        tool_call_id=part.tool_call_id,
        tool_name=part.tool_name,
        input=parsed.input,
        provider_executed=part.provider_executed,
        dynamic=True if parsed.dynamic else None,
        provider_metadata=part.provider_metadata,
        invalid=True if parsed.invalid else None,
        error=parsed.error,
    )


def harness_outcome(part: ToolResultPart, provider_executed: bool, work_dir: str) -> ConsumerPart:
    """A harness ``tool-result``: a ``tool-error`` for a failed provider-executed call,
    else a ``tool-result`` (the value with the work dir stripped)."""
    value = strip_value(part.result, work_dir)
    if part.is_error is True and provider_executed:
        return ConsumerToolErrorPart(
            tool_call_id=part.tool_call_id,
            tool_name=part.tool_name,
            error=value,
            provider_executed=True,
            dynamic=part.dynamic,
            provider_metadata=part.provider_metadata,
        )
    return ConsumerToolResultPart(
        tool_call_id=part.tool_call_id,
        tool_name=part.tool_name,
        output=value,
        preliminary=part.preliminary,
        dynamic=part.dynamic,
        provider_metadata=part.provider_metadata,
    )


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
