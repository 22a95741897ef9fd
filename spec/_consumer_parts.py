"""The consumer-facing AI SDK stream part vocabulary the reference agent emits.

These are the parts of ``result.full_stream`` (the AI SDK ``TextStreamPart`` shapes the
agent produces from harness parts). Every model is prefixed ``Consumer`` so it cannot be
confused with the harness part of the same ``type``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeAlias

from pydantic import Field, TypeAdapter, field_serializer

from ._json import JSONValue
from ._stream_parts import Metadata, WireModel, refuse_unbounded, serialize_unknown, union_types

__all__ = [
    "CONSUMER_PART_TYPES",
    "ConsumerAbortPart",
    "ConsumerErrorPart",
    "ConsumerFinishPart",
    "ConsumerFinishStepPart",
    "ConsumerPart",
    "ConsumerRawPart",
    "ConsumerReasoningDeltaPart",
    "ConsumerReasoningEndPart",
    "ConsumerReasoningStartPart",
    "ConsumerStartPart",
    "ConsumerStartStepPart",
    "ConsumerTextDeltaPart",
    "ConsumerTextEndPart",
    "ConsumerTextStartPart",
    "ConsumerToolApprovalRequestPart",
    "ConsumerToolApprovalResponsePart",
    "ConsumerToolCallPart",
    "ConsumerToolErrorPart",
    "ConsumerToolInputDeltaPart",
    "ConsumerToolInputEndPart",
    "ConsumerToolInputStartPart",
    "ConsumerToolResultPart",
    "InputTokenDetails",
    "LanguageModelUsage",
    "OutputTokenDetails",
    "StepResponse",
    "parse_consumer_part",
]


class InputTokenDetails(WireModel):
    """Breakdown of input tokens."""

    no_cache_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None


class OutputTokenDetails(WireModel):
    """Breakdown of output tokens."""

    text_tokens: int | None = None
    reasoning_tokens: int | None = None


class LanguageModelUsage(WireModel):
    """Normalized usage as consumers see it (``inputTokens`` = the input total, ...)."""

    input_tokens: int | None = None
    input_token_details: InputTokenDetails = Field(default_factory=InputTokenDetails)
    output_tokens: int | None = None
    output_token_details: OutputTokenDetails = Field(default_factory=OutputTokenDetails)
    total_tokens: int | None = None
    raw: dict[str, JSONValue] | None = None


class StepResponse(WireModel):
    """The ``response`` of a consumer ``finish-step``: id ``<callId>-<stepNumber>``."""

    id: str
    timestamp: str
    model_id: str
    messages: list[JSONValue] = Field(default_factory=list)


class ConsumerStartPart(WireModel):
    """Always the first consumer part of a result."""

    type: Literal["start"] = "start"


class ConsumerStartStepPart(WireModel):
    """Opens a step, lazily before its first forwarded part."""

    type: Literal["start-step"] = "start-step"
    request: dict[str, JSONValue] = Field(default_factory=dict)
    warnings: list[JSONValue] = Field(default_factory=list)


class ConsumerTextStartPart(WireModel):
    """Opens text block ``id``."""

    type: Literal["text-start"] = "text-start"
    id: str
    provider_metadata: Metadata | None = None


class ConsumerTextDeltaPart(WireModel):
    """A chunk of text block ``id`` (``text``, not ``delta``)."""

    type: Literal["text-delta"] = "text-delta"
    id: str
    text: str
    provider_metadata: Metadata | None = None


class ConsumerTextEndPart(WireModel):
    """Closes text block ``id``."""

    type: Literal["text-end"] = "text-end"
    id: str
    provider_metadata: Metadata | None = None


class ConsumerReasoningStartPart(WireModel):
    """Opens reasoning block ``id``."""

    type: Literal["reasoning-start"] = "reasoning-start"
    id: str
    provider_metadata: Metadata | None = None


class ConsumerReasoningDeltaPart(WireModel):
    """A chunk of reasoning block ``id``."""

    type: Literal["reasoning-delta"] = "reasoning-delta"
    id: str
    text: str
    provider_metadata: Metadata | None = None


class ConsumerReasoningEndPart(WireModel):
    """Closes reasoning block ``id``."""

    type: Literal["reasoning-end"] = "reasoning-end"
    id: str
    provider_metadata: Metadata | None = None


class ConsumerToolInputStartPart(WireModel):
    """Streamed tool input starts (passed through from the harness)."""

    type: Literal["tool-input-start"] = "tool-input-start"
    id: str
    tool_name: str
    provider_metadata: Metadata | None = None
    provider_executed: bool | None = None
    dynamic: bool | None = None
    title: str | None = None


class ConsumerToolInputDeltaPart(WireModel):
    """A chunk of streamed tool input (work-dir stripped)."""

    type: Literal["tool-input-delta"] = "tool-input-delta"
    id: str
    delta: str
    provider_metadata: Metadata | None = None


class ConsumerToolInputEndPart(WireModel):
    """Streamed tool input ends."""

    type: Literal["tool-input-end"] = "tool-input-end"
    id: str
    provider_metadata: Metadata | None = None


class ConsumerToolCallPart(WireModel):
    """A validated tool call: ``input`` is the parsed JSON value.

    ``invalid=True`` (with ``dynamic=True`` and ``error``) marks a call whose input failed
    the tool's schema or whose tool is unknown.
    """

    type: Literal["tool-call"] = "tool-call"
    tool_call_id: str
    tool_name: str
    input: Any = None
    provider_executed: bool | None = None
    dynamic: bool | None = None
    provider_metadata: Metadata | None = None
    invalid: bool | None = None
    error: Any = None
    title: str | None = None

    @field_serializer("input", "error", when_used="json")
    def _serialize_unknown(self, value: Any) -> Any:
        return serialize_unknown(value)


class ConsumerToolResultPart(WireModel):
    """A tool outcome (also used for ``fileChange``/``compaction`` dynamic parts)."""

    type: Literal["tool-result"] = "tool-result"
    tool_call_id: str
    tool_name: str
    input: Any = None
    output: Any = None
    provider_executed: bool | None = None
    dynamic: bool | None = None
    preliminary: bool | None = None
    provider_metadata: Metadata | None = None

    @field_serializer("input", "output", when_used="json")
    def _serialize_unknown(self, value: Any) -> Any:
        return serialize_unknown(value)


class ConsumerToolErrorPart(WireModel):
    """A failed tool outcome (provider-executed failures, failed approved host calls)."""

    type: Literal["tool-error"] = "tool-error"
    tool_call_id: str
    tool_name: str
    input: Any = None
    error: Any = None
    provider_executed: bool | None = None
    dynamic: bool | None = None
    provider_metadata: Metadata | None = None

    @field_serializer("input", "error", when_used="json")
    def _serialize_unknown(self, value: Any) -> Any:
        return serialize_unknown(value)


class ConsumerToolApprovalRequestPart(WireModel):
    """The turn needs an approval for ``tool_call`` (``is_automatic`` for auto-denials)."""

    type: Literal["tool-approval-request"] = "tool-approval-request"
    approval_id: str
    tool_call: ConsumerToolCallPart
    is_automatic: bool | None = None


class ConsumerToolApprovalResponsePart(WireModel):
    """An approval decision for ``tool_call``."""

    type: Literal["tool-approval-response"] = "tool-approval-response"
    approval_id: str
    tool_call: ConsumerToolCallPart
    approved: bool
    reason: str | None = None
    provider_executed: bool | None = None


def empty_performance() -> dict[str, JSONValue]:
    """The step ``performance`` the official agent reports (it measures nothing).

    The AI SDK's ``StepResultPerformance`` with zero rates and times, no per-tool
    execution times, and the optional rates left out.
    """
    return {
        "effectiveOutputTokensPerSecond": 0,
        "effectiveTotalTokensPerSecond": 0,
        "stepTimeMs": 0,
        "responseTimeMs": 0,
        "toolExecutionMs": {},
    }


class ConsumerFinishStepPart(WireModel):
    """Closes a step."""

    type: Literal["finish-step"] = "finish-step"
    response: StepResponse
    usage: LanguageModelUsage
    finish_reason: str
    raw_finish_reason: str | None = None
    provider_metadata: Metadata | None = None
    performance: dict[str, JSONValue] = Field(default_factory=empty_performance)


class ConsumerFinishPart(WireModel):
    """The last part of a successful result."""

    type: Literal["finish"] = "finish"
    finish_reason: str
    raw_finish_reason: str | None = None
    total_usage: LanguageModelUsage
    provider_metadata: Metadata | None = None


class ConsumerErrorPart(WireModel):
    """The last part of a failed result."""

    type: Literal["error"] = "error"
    error: Any = None

    @field_serializer("error", when_used="json")
    def _serialize_error(self, value: Any) -> Any:
        return serialize_unknown(value)


class ConsumerAbortPart(WireModel):
    """The last part of an aborted result."""

    type: Literal["abort"] = "abort"
    reason: str | None = None


class ConsumerRawPart(WireModel):
    """A runtime-specific value, always forwarded."""

    type: Literal["raw"] = "raw"
    raw_value: Any = None

    @field_serializer("raw_value", when_used="json")
    def _serialize_raw(self, value: Any) -> Any:
        return serialize_unknown(value)


ConsumerPart: TypeAlias = Annotated[
    ConsumerStartPart
    | ConsumerStartStepPart
    | ConsumerTextStartPart
    | ConsumerTextDeltaPart
    | ConsumerTextEndPart
    | ConsumerReasoningStartPart
    | ConsumerReasoningDeltaPart
    | ConsumerReasoningEndPart
    | ConsumerToolInputStartPart
    | ConsumerToolInputDeltaPart
    | ConsumerToolInputEndPart
    | ConsumerToolCallPart
    | ConsumerToolResultPart
    | ConsumerToolErrorPart
    | ConsumerToolApprovalRequestPart
    | ConsumerToolApprovalResponsePart
    | ConsumerFinishStepPart
    | ConsumerFinishPart
    | ConsumerErrorPart
    | ConsumerAbortPart
    | ConsumerRawPart,
    Field(discriminator="type"),
]

#: Every ``type`` discriminant of :data:`ConsumerPart`, in union order.
CONSUMER_PART_TYPES: tuple[str, ...] = union_types(ConsumerPart)

_CONSUMER_PART_ADAPTER: TypeAdapter[ConsumerPart] = TypeAdapter(ConsumerPart)


def parse_consumer_part(obj: object) -> ConsumerPart:
    """Validate a consumer part given as a wire dict (camelCase) or a model.

    Raises:
        pydantic.ValidationError: naming the ``type`` and field that failed.
    """
    if isinstance(obj, WireModel):
        obj = obj.to_wire()
    refuse_unbounded(obj, "ConsumerPart")
    return _CONSUMER_PART_ADAPTER.validate_python(obj, by_alias=True, by_name=False)
