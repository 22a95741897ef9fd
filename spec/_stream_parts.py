"""The harness-v1 stream part vocabulary: what an adapter passes to ``emit``.

There are 19 variants, discriminated on ``type``: the 16 of the original contract plus
``tool-input-start``, ``tool-input-delta`` and ``tool-input-end``. Field names on the wire
are camelCase (``toolCallId``, ``harnessMetadata``, ``providerExecuted``,
``tokensBefore``); Python code uses snake_case names.

The models are plain pydantic, and :func:`parse_stream_part`, their one way in from the
wire, is pydantic's validator after a bounded-depth check.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeAlias, get_args

from pydantic import BaseModel, Field, PositiveInt, TypeAdapter, ValidationError, field_serializer
from pydantic_core import InitErrorDetails, PydanticCustomError

from ._json import WIRE_CONFIG, JSONValue, find_non_json, is_json_value

__all__ = [
    "MAX_PART_DEPTH",
    "STREAM_PART_TYPES",
    "CallWarning",
    "CompactionPart",
    "ErrorPart",
    "FileChangePart",
    "FinishPart",
    "FinishReason",
    "FinishStepPart",
    "InputTokens",
    "OtherWarning",
    "OutputTokens",
    "RawPart",
    "ReasoningDeltaPart",
    "ReasoningEndPart",
    "ReasoningStartPart",
    "StreamPart",
    "StreamStartPart",
    "TextDeltaPart",
    "TextEndPart",
    "TextStartPart",
    "ToolApprovalRequestPart",
    "ToolCallPart",
    "ToolInputDeltaPart",
    "ToolInputEndPart",
    "ToolInputStartPart",
    "ToolResultPart",
    "UnifiedFinishReason",
    "UnsupportedSettingWarning",
    "UnsupportedToolWarning",
    "Usage",
    "WireModel",
    "parse_stream_part",
    "refuse_unbounded",
    "serialize_unknown",
    "union_types",
]

#: Metadata keyed by harness (or provider) id, each value a JSON object.
Metadata: TypeAlias = dict[str, dict[str, JSONValue]]

UnifiedFinishReason: TypeAlias = Literal[
    "stop", "length", "content-filter", "tool-calls", "error", "other"
]


class WireModel(BaseModel):
    """Base of every wire model: camelCase aliases, frozen, unknown keys rejected."""

    model_config = WIRE_CONFIG

    def to_wire(self) -> dict[str, Any]:
        """Return the JSON-ready dict a TypeScript peer reads (camelCase, no nulls)."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


# -- call warnings -------------------------------------------------------------------


class UnsupportedSettingWarning(WireModel):
    """The runtime ignored a setting."""

    type: Literal["unsupported-setting"] = "unsupported-setting"
    setting: str
    details: str | None = None


class UnsupportedToolWarning(WireModel):
    """The runtime ignored a tool."""

    type: Literal["unsupported-tool"] = "unsupported-tool"
    #: The tool description (any JSON value); ``None`` when the runtime gave none.
    tool: JSONValue = None
    details: str | None = None


class OtherWarning(WireModel):
    """Any other warning."""

    type: Literal["other"] = "other"
    message: str


CallWarning: TypeAlias = Annotated[
    UnsupportedSettingWarning | UnsupportedToolWarning | OtherWarning,
    Field(discriminator="type"),
]


# -- usage and finish reasons ----------------------------------------------------------


class InputTokens(WireModel):
    """Input token counts of a model call."""

    total: int | None = None
    no_cache: int | None = None
    cache_read: int | None = None
    cache_write: int | None = None


class OutputTokens(WireModel):
    """Output token counts of a model call."""

    total: int | None = None
    text: int | None = None
    reasoning: int | None = None


class Usage(WireModel):
    """Token usage of a step (``finish-step.usage``) or a turn (``finish.totalUsage``)."""

    input_tokens: InputTokens
    output_tokens: OutputTokens
    raw: dict[str, JSONValue] | None = None

    @classmethod
    def of(cls, input_total: int | None = None, output_total: int | None = None) -> Usage:
        """Build a usage with only the totals set."""
        return cls(
            input_tokens=InputTokens(total=input_total),
            output_tokens=OutputTokens(total=output_total),
        )


class FinishReason(WireModel):
    """Why a step or turn ended: the unified reason plus the runtime's own string."""

    unified: UnifiedFinishReason
    raw: str | None = None


# -- the 19 variants -------------------------------------------------------------------


class StreamStartPart(WireModel):
    """Optional first part: call warnings and the model id the runtime reports."""

    type: Literal["stream-start"] = "stream-start"
    warnings: list[CallWarning] | None = None
    model_id: str | None = None


class TextStartPart(WireModel):
    """Opens text block ``id``."""

    type: Literal["text-start"] = "text-start"
    id: str
    harness_metadata: Metadata | None = None


class TextDeltaPart(WireModel):
    """A chunk of text block ``id``."""

    type: Literal["text-delta"] = "text-delta"
    id: str
    delta: str
    harness_metadata: Metadata | None = None


class TextEndPart(WireModel):
    """Closes text block ``id``."""

    type: Literal["text-end"] = "text-end"
    id: str
    harness_metadata: Metadata | None = None


class ReasoningStartPart(WireModel):
    """Opens reasoning block ``id``."""

    type: Literal["reasoning-start"] = "reasoning-start"
    id: str
    harness_metadata: Metadata | None = None


class ReasoningDeltaPart(WireModel):
    """A chunk of reasoning block ``id``."""

    type: Literal["reasoning-delta"] = "reasoning-delta"
    id: str
    delta: str
    harness_metadata: Metadata | None = None


class ReasoningEndPart(WireModel):
    """Closes reasoning block ``id``."""

    type: Literal["reasoning-end"] = "reasoning-end"
    id: str
    harness_metadata: Metadata | None = None


class ToolInputStartPart(WireModel):
    """Starts streaming the input of tool call ``id`` (optional, before ``tool-call``)."""

    type: Literal["tool-input-start"] = "tool-input-start"
    id: str
    tool_name: str
    provider_metadata: Metadata | None = None
    provider_executed: bool | None = None
    dynamic: bool | None = None
    title: str | None = None


class ToolInputDeltaPart(WireModel):
    """A chunk of the streamed input of tool call ``id``."""

    type: Literal["tool-input-delta"] = "tool-input-delta"
    id: str
    delta: str
    provider_metadata: Metadata | None = None


class ToolInputEndPart(WireModel):
    """Ends the streamed input of tool call ``id``."""

    type: Literal["tool-input-end"] = "tool-input-end"
    id: str
    provider_metadata: Metadata | None = None


class ToolCallPart(WireModel):
    """A complete tool call.

    ``input`` is JSON text. ``provider_executed=True`` marks a call the runtime executes
    itself (built-ins, MCP tools); otherwise the host dispatches it. ``tool_name`` is
    the built-in key (``commonName ?? nativeName``) or the host tool spec name.
    """

    type: Literal["tool-call"] = "tool-call"
    tool_call_id: str
    tool_name: str
    input: str
    provider_executed: bool | None = None
    dynamic: bool | None = None
    provider_metadata: Metadata | None = None
    native_name: str | None = None
    step_tool_call_count: PositiveInt | None = None


class ToolApprovalRequestPart(WireModel):
    """The runtime asks the host to approve built-in call ``tool_call_id``."""

    type: Literal["tool-approval-request"] = "tool-approval-request"
    approval_id: str
    tool_call_id: str
    provider_metadata: Metadata | None = None


class ToolResultPart(WireModel):
    """The outcome of a tool call (``is_error`` marks a failure)."""

    type: Literal["tool-result"] = "tool-result"
    tool_call_id: str
    tool_name: str
    #: Any JSON value; ``None`` (JSON null) is tolerated.
    result: JSONValue = None
    is_error: bool | None = None
    preliminary: bool | None = None
    dynamic: bool | None = None
    provider_metadata: Metadata | None = None


class FinishStepPart(WireModel):
    """Closes the current model step."""

    type: Literal["finish-step"] = "finish-step"
    finish_reason: FinishReason
    usage: Usage
    harness_metadata: Metadata | None = None


class FinishPart(WireModel):
    """Ends the turn (not a step boundary)."""

    type: Literal["finish"] = "finish"
    finish_reason: FinishReason
    total_usage: Usage
    harness_metadata: Metadata | None = None


class FileChangePart(WireModel):
    """A workspace mutation with no visible tool call; one part per path."""

    type: Literal["file-change"] = "file-change"
    event: Literal["create", "modify", "delete"]
    path: str
    harness_metadata: Metadata | None = None


class CompactionPart(WireModel):
    """The runtime compacted its context; emitted once, on completion."""

    type: Literal["compaction"] = "compaction"
    trigger: Literal["manual", "auto"]
    summary: str
    tokens_before: int | None = None
    tokens_after: int | None = None
    harness_metadata: Metadata | None = None


def serialize_unknown(value: Any) -> Any:
    """Make an ``unknown`` field JSON-ready: exceptions become ``{name, message}``."""
    if isinstance(value, BaseException):
        return {"name": getattr(value, "name", type(value).__name__), "message": str(value)}
    if is_json_value(value):
        return value
    return repr(value)


class ErrorPart(WireModel):
    """A runtime error; the first one ends the turn."""

    type: Literal["error"] = "error"
    error: Any = None

    @field_serializer("error", when_used="json")
    def _serialize_error(self, value: Any) -> Any:
        return serialize_unknown(value)


class RawPart(WireModel):
    """A runtime-specific value passed through to consumers unchanged."""

    type: Literal["raw"] = "raw"
    raw_value: Any = None

    @field_serializer("raw_value", when_used="json")
    def _serialize_raw(self, value: Any) -> Any:
        return serialize_unknown(value)


StreamPart: TypeAlias = Annotated[
    StreamStartPart
    | TextStartPart
    | TextDeltaPart
    | TextEndPart
    | ReasoningStartPart
    | ReasoningDeltaPart
    | ReasoningEndPart
    | ToolInputStartPart
    | ToolInputDeltaPart
    | ToolInputEndPart
    | ToolCallPart
    | ToolApprovalRequestPart
    | ToolResultPart
    | FinishStepPart
    | FinishPart
    | FileChangePart
    | CompactionPart
    | ErrorPart
    | RawPart,
    Field(discriminator="type"),
]


def union_types(union: Any) -> tuple[str, ...]:
    """The ``type`` discriminants of an ``Annotated`` union of wire models, in union order."""
    (members, *_) = get_args(union)
    return tuple(str(member.model_fields["type"].default) for member in get_args(members))


#: Every ``type`` discriminant of :data:`StreamPart`, in specification order (the union's).
STREAM_PART_TYPES: tuple[str, ...] = union_types(StreamPart)

#: Deepest nesting accepted in one part (its raw values and tool inputs included).
MAX_PART_DEPTH = 64

_STREAM_PART_ADAPTER: TypeAdapter[StreamPart] = TypeAdapter(StreamPart)


def parse_stream_part(obj: object) -> StreamPart:
    """Validate a harness stream part given as a wire dict (or a model).

    Wire dicts must use the camelCase field names; unknown keys are rejected so a
    misspelt field never passes silently.

    Args:
        obj: A dict as emitted on the wire, or an already-built part model.

    Returns:
        The validated part model.

    Raises:
        pydantic.ValidationError: naming the ``type`` and field that failed.
    """
    if isinstance(obj, WireModel):
        obj = obj.to_wire()
    refuse_unbounded(obj, "StreamPart")
    return _STREAM_PART_ADAPTER.validate_python(obj, by_alias=True, by_name=False)


def refuse_unbounded(obj: object, title: str) -> None:
    """Raise a ``ValidationError`` for a part nested deeper than :data:`MAX_PART_DEPTH`,
    containing itself or holding an integer outside the JSON-safe range (checked
    iteratively, before any recursive validation)."""
    if not isinstance(obj, dict | list):
        return
    problem = find_non_json(obj, "part", max_depth=MAX_PART_DEPTH, safe_integers=True)
    bounded = ("nested deeper", "(a cycle)", "JSON-safe range")
    if problem is None or not any(marker in problem for marker in bounded):
        return  # other non-JSON values are for the field validators to name
    kind = obj.get("type") if isinstance(obj, dict) else None
    raise ValidationError.from_exception_data(
        title,
        [
            InitErrorDetails(
                type=PydanticCustomError("bounded_json", "{problem}", {"problem": problem}),
                loc=(),
                input=kind if isinstance(kind, str) else type(obj).__name__,
            )
        ],
    )
