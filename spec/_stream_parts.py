"""The harness-v1 stream part vocabulary: what an adapter passes to ``emit``.

There are 19 variants, discriminated on ``type``: the 16 of the original contract plus
``tool-input-start``, ``tool-input-delta`` and ``tool-input-end``. Field names on the wire
are camelCase (``toolCallId``, ``harnessMetadata``, ``providerExecuted``,
``tokensBefore``); Python code uses snake_case names.

One idea: the part vocabulary and its one way in, :func:`parse_stream_part`. Its fast
path builds these models directly (``from_trusted``, fields in declaration order) and
must accept exactly what the validator accepts, so it stays beside the models it builds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal, Self, TypeAlias, TypeVar, get_args

from pydantic import (
    BaseModel,
    Field,
    PositiveInt,
    TypeAdapter,
    ValidationError,
    field_serializer,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from ._json import MAX_SAFE_INTEGER, WIRE_CONFIG, JSONValue, find_non_json, is_json_value

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
    "parse_stream_part",
    "serialize_unknown",
]

#: Metadata keyed by harness (or provider) id, each value a JSON object.
Metadata: TypeAlias = dict[str, dict[str, JSONValue]]

UnifiedFinishReason: TypeAlias = Literal[
    "stop", "length", "content-filter", "tool-calls", "error", "other"
]


_new = object.__new__
#: The setters of the slots every pydantic model instance has (the descriptors themselves:
#: about a third cheaper than ``object.__setattr__``, which looks each one up by name).
_SLOTS = BaseModel.__dict__
_set_dict = _SLOTS["__dict__"].__set__
_set_fields_set = _SLOTS["__pydantic_fields_set__"].__set__
_set_extra = _SLOTS["__pydantic_extra__"].__set__
_set_private = _SLOTS["__pydantic_private__"].__set__
M = TypeVar("M", bound="WireModel")


class WireModel(BaseModel):
    """Base of every wire model: camelCase aliases, frozen, unknown keys rejected."""

    model_config = WIRE_CONFIG

    def to_wire(self) -> dict[str, Any]:
        """Return the JSON-ready dict a TypeScript peer reads (camelCase, no nulls)."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)

    @classmethod
    def from_trusted(cls, values: dict[str, Any], fields_set: set[str]) -> Self:
        """The model built from ``values`` without validating them, for values that were
        validated already (about a third of the cost of the constructor).

        ``values`` (kept, not copied) must hold every field by its Python name, in
        declaration order, each of its declared type; ``fields_set`` names the fields a
        constructor call would have been given (one set may be shared by many instances:
        the models are frozen, and pydantic copies a fields set before changing one).
        The instance then equals, dumps, copies and reprs as the constructor's would.
        Anything not validated before goes through the constructor instead.

        Hot paths bind it once (``new = Model.from_trusted``): pydantic's model metaclass
        defines ``__getattr__``, which routes every attribute lookup on a model class
        through CPython's slow hook, about a thousand instructions a lookup (as much as
        the rest of this call).
        """
        model = _new(cls)
        _set_dict(model, values)
        _set_fields_set(model, fields_set)
        _set_extra(model, None)
        _set_private(model, None)
        return model


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

_STREAM_PART_ADAPTER: TypeAdapter[StreamPart] = TypeAdapter(StreamPart)


#: Deepest nesting accepted in one part (its raw values and tool inputs included).
MAX_PART_DEPTH = 64

# -- the fast path --------------------------------------------------------------------
#
# Almost every part of a turn has one of a few plain shapes, which the validator accepts
# unchanged (or copies, for JSON containers); building the model directly costs a third
# of validating it or less. Each ``_plain_*`` function below returns the model for a dict
# of its plain shape and ``None`` for anything else (a missing or extra key, metadata, a
# ``str`` subclass, a number where a string belongs, an unsafe integer, a deep value):
# those go through the validator, so an invalid part fails with the validator's own
# error. tests/spec/test_stream_part_fast_path.py holds both outcomes equal.

#: The delta types (most parts of a turn) and the name of their metadata field; their
#: fields are ``type``, ``id``, ``delta`` and that metadata, in this order.
_DELTA_MODELS: dict[str, tuple[type[WireModel], str]] = {
    "text-delta": (TextDeltaPart, "harness_metadata"),
    "reasoning-delta": (ReasoningDeltaPart, "harness_metadata"),
    "tool-input-delta": (ToolInputDeltaPart, "provider_metadata"),
}
#: The block boundaries (two or four per block) and their metadata field; their fields
#: are ``type``, ``id`` and that metadata, in this order.
_BOUNDARY_MODELS: dict[str, tuple[type[WireModel], str]] = {
    "text-start": (TextStartPart, "harness_metadata"),
    "text-end": (TextEndPart, "harness_metadata"),
    "reasoning-start": (ReasoningStartPart, "harness_metadata"),
    "reasoning-end": (ReasoningEndPart, "harness_metadata"),
    "tool-input-end": (ToolInputEndPart, "provider_metadata"),
}
#: The fields a plain part was given (one set per shape, shared: the models are frozen,
#: and pydantic copies a fields set before it changes one).
_DELTA_FIELDS = {"type", "id", "delta"}
_BOUNDARY_FIELDS = {"type", "id"}
#: The tables above with each model's ``from_trusted`` bound once (see
#: :meth:`WireModel.from_trusted`: a lookup on a model class is slow).
_NEW_DELTA = {kind: (model.from_trusted, meta) for kind, (model, meta) in _DELTA_MODELS.items()}
_NEW_BOUNDARY = {
    kind: (model.from_trusted, meta) for kind, (model, meta) in _BOUNDARY_MODELS.items()
}


def _plain_delta(obj: dict[str, Any], kind: str) -> WireModel | None:
    """A delta of exactly ``type``, ``id`` and ``delta`` (both ``str``)."""
    if len(obj) != 3:
        return None
    block_id = obj.get("id")
    delta = obj.get("delta")
    if type(block_id) is not str or type(delta) is not str:
        return None
    new, metadata = _NEW_DELTA[kind]
    values = {"type": kind, "id": block_id, "delta": delta, metadata: None}
    return new(values, _DELTA_FIELDS)


def _plain_boundary(obj: dict[str, Any], kind: str) -> WireModel | None:
    """A block boundary of exactly ``type`` and ``id`` (a ``str``)."""
    block_id = obj.get("id")
    if len(obj) != 2 or type(block_id) is not str:
        return None
    new, metadata = _NEW_BOUNDARY[kind]
    return new({"type": kind, "id": block_id, metadata: None}, _BOUNDARY_FIELDS)


#: Unified finish reasons, for the finish fast path.
_FINISH_REASONS = frozenset(get_args(UnifiedFinishReason))
#: Token count fields by wire name (the model's field names, in declaration order).
_INPUT_TOKENS = {"total": "total", "noCache": "no_cache", "cacheRead": "cache_read"}
_INPUT_TOKENS["cacheWrite"] = "cache_write"
_OUTPUT_TOKENS = {"total": "total", "text": "text", "reasoning": "reasoning"}
_USAGE_FIELDS = {"input_tokens", "output_tokens"}
_REASON_FIELDS = {"unified"}
_REASON_RAW_FIELDS = {"unified", "raw"}
_FINISH_FIELDS: dict[str, tuple[type[WireModel], str, str, set[str]]] = {
    "finish-step": (FinishStepPart, "usage", "usage", {"type", "finish_reason", "usage"}),
    "finish": (
        FinishPart,
        "totalUsage",
        "total_usage",
        {"type", "finish_reason", "total_usage"},
    ),
}
_NEW_FINISH: dict[
    str, tuple[Callable[[dict[str, Any], set[str]], WireModel], str, str, set[str]]
] = {
    kind: (model.from_trusted, usage_key, usage_field, given)
    for kind, (model, usage_key, usage_field, given) in _FINISH_FIELDS.items()
}
_new_usage = Usage.from_trusted


#: Finish reasons built so far, by (unified, raw, raw given): a runtime uses a handful,
#: and a frozen model of two strings can be shared. Emptied when it grows past
#: :data:`_REASONS_KEPT` (raw reasons are the runtime's own strings).
_REASONS: dict[tuple[str, str | None, bool], FinishReason] = {}
_REASONS_KEPT = 64


def _plain_reason(obj: object) -> FinishReason | None:
    """A plain ``{"unified": <reason>[, "raw": str | None]}``, else ``None``."""
    if type(obj) is not dict:
        return None
    unified = obj.get("unified")
    if type(unified) is not str or unified not in _FINISH_REASONS:
        return None
    size = len(obj)
    raw = obj.get("raw")
    if size == 2:
        if "raw" not in obj or (raw is not None and type(raw) is not str):
            return None
    elif size != 1:
        return None
    key = (unified, raw, size == 2)
    reason = _REASONS.get(key)
    if reason is None:
        if len(_REASONS) >= _REASONS_KEPT:
            _REASONS.clear()
        fields = _REASON_RAW_FIELDS if size == 2 else _REASON_FIELDS
        reason = _REASONS[key] = FinishReason.from_trusted({"unified": unified, "raw": raw}, fields)
    return reason


class _Tokens:
    """How the fast path builds one token count model: its fields by wire name, each with
    its bit in a mask of the fields given, and the fields set of each mask (shared)."""

    __slots__ = ("fields", "names", "new", "sets", "template")

    def __init__(self, model: type[WireModel], names: dict[str, str]) -> None:
        self.new = model.from_trusted  # (bound once: see WireModel.from_trusted)
        self.names = tuple(names.values())
        self.fields = {wire: (name, 1 << index) for index, (wire, name) in enumerate(names.items())}
        self.template = dict.fromkeys(self.names)
        self.sets = {
            mask: {name for index, name in enumerate(self.names) if mask >> index & 1}
            for mask in range(1 << len(self.names))
        }


_INPUT_SHAPE = _Tokens(InputTokens, _INPUT_TOKENS)
_OUTPUT_SHAPE = _Tokens(OutputTokens, _OUTPUT_TOKENS)


def _plain_tokens(obj: object, shape: _Tokens) -> WireModel | None:
    """Plain token counts (safe ``int`` or ``None`` under known wire names), else ``None``."""
    if type(obj) is not dict:
        return None
    fields = shape.fields
    values = shape.template.copy()
    mask = 0
    for key, value in obj.items():
        entry = fields.get(key)
        if entry is None or (
            value is not None
            and (type(value) is not int or not -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER)
        ):
            return None
        name, bit = entry
        values[name] = value
        mask |= bit
    return shape.new(values, shape.sets[mask])


def _plain_finish(obj: dict[str, Any], kind: str) -> WireModel | None:
    """A ``finish-step`` or ``finish`` of exactly a plain reason and a plain usage (input
    and output counts, no ``raw``)."""
    if len(obj) != 3:
        return None
    new, usage_key, usage_field, given = _NEW_FINISH[kind]
    usage = obj.get(usage_key)
    if type(usage) is not dict or len(usage) != 2:
        return None
    reason = _plain_reason(obj.get("finishReason"))
    if reason is None:
        return None
    inputs = _plain_tokens(usage.get("inputTokens"), _INPUT_SHAPE)
    if inputs is None:
        return None
    outputs = _plain_tokens(usage.get("outputTokens"), _OUTPUT_SHAPE)
    if outputs is None:
        return None
    counts = {"input_tokens": inputs, "output_tokens": outputs, "raw": None}
    values = {
        "type": kind,
        "finish_reason": reason,
        usage_field: _new_usage(counts, _USAGE_FIELDS),
        "harness_metadata": None,
    }
    return new(values, given)


class _NotPlain:
    """Marks a value the fast path leaves to the validator."""


_NOT_PLAIN: Any = _NotPlain()


def _plain_json(value: Any, depth: int) -> Any:
    """``value`` as the ``JSONValue`` validator returns it (containers copied), when it is
    plain JSON: exact ``dict`` (``str`` keys), ``list``, ``str``, ``bool``, ``float``,
    ``None`` and safe ``int``, no container at :data:`MAX_PART_DEPTH` or deeper (``depth``
    is the value's own). Anything else returns ``_NOT_PLAIN``."""
    kind = type(value)
    if kind is str or kind is bool or kind is float or value is None:
        return value
    if kind is int:
        return value if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER else _NOT_PLAIN
    if depth >= MAX_PART_DEPTH or (kind is not dict and kind is not list):
        return _NOT_PLAIN
    depth += 1
    if kind is dict:
        copied: dict[str, Any] = {}
        for key, item in value.items():
            if type(key) is not str:
                return _NOT_PLAIN
            item = _plain_json(item, depth)
            if item is _NOT_PLAIN:
                return _NOT_PLAIN
            copied[key] = item
        return copied
    items: list[Any] = []
    for item in value:
        item = _plain_json(item, depth)
        if item is _NOT_PLAIN:
            return _NOT_PLAIN
        items.append(item)
    return items


#: A flat part's fields the fast path takes: wire name -> (name, type, required); the
#: type ``None`` marks a ``JSONValue`` field.
_Flat: TypeAlias = dict[str, tuple[str, type | None, bool]]
_TOOL_CALL: _Flat = {
    "toolCallId": ("tool_call_id", str, True),
    "toolName": ("tool_name", str, True),
    "input": ("input", str, True),
    "providerExecuted": ("provider_executed", bool, False),
    "dynamic": ("dynamic", bool, False),
    "nativeName": ("native_name", str, False),
}
_TOOL_RESULT: _Flat = {
    "toolCallId": ("tool_call_id", str, True),
    "toolName": ("tool_name", str, True),
    "result": ("result", None, False),
    "isError": ("is_error", bool, False),
    "preliminary": ("preliminary", bool, False),
    "dynamic": ("dynamic", bool, False),
}


class _FlatShape:
    """How the fast path builds one flat part type: its fields by wire name, each with
    its bit in a mask of the fields given, and the fields set of each mask seen (one set
    shared by every part of a shape: a set is a tracked object the garbage collector
    visits for as long as the part lives; at most one per combination of the fields)."""

    __slots__ = ("fields", "names", "new", "required", "sets", "template")

    def __init__(self, model: type[WireModel], fields: _Flat) -> None:
        self.new = model.from_trusted  # (bound once: see WireModel.from_trusted)
        self.names = tuple(model.model_fields)
        bits = {name: 1 << index for index, name in enumerate(self.names)}
        self.fields = {wire: (*entry, bits[entry[0]]) for wire, entry in fields.items()}
        self.template = dict.fromkeys(self.names)
        self.required = sum(entry[2] for entry in fields.values())
        self.sets: dict[int, set[str]] = {}

    def fields_set(self, mask: int) -> set[str]:
        given = self.sets.get(mask)
        if given is None:
            names = self.names
            given = {names[index] for index in range(len(names)) if mask >> index & 1}
            self.sets[mask] = given
        return given


_FLAT_PARTS = {
    "tool-call": _FlatShape(ToolCallPart, _TOOL_CALL),
    "tool-result": _FlatShape(ToolResultPart, _TOOL_RESULT),
}


def _plain_flat(obj: dict[str, Any], kind: str) -> WireModel | None:
    """A ``tool-call`` or ``tool-result`` of plain fields only (no metadata, no call
    count; a tool result's ``result`` plain JSON)."""
    shape = _FLAT_PARTS[kind]
    fields = shape.fields
    values = shape.template.copy()
    values["type"] = kind
    mask = 1  # ``type``, the first field
    required = 0
    for key, value in obj.items():
        if key == "type":
            continue
        entry = fields.get(key)
        if entry is None:
            return None
        name, expected, is_required, bit = entry
        if expected is None:
            value = _plain_json(value, 1)
            if value is _NOT_PLAIN:
                return None
        elif type(value) is not expected and (is_required or value is not None):
            return None
        values[name] = value
        mask |= bit
        required += is_required
    if required != shape.required:
        return None
    return shape.new(values, shape.fields_set(mask))


_Plain: TypeAlias = Callable[[dict[str, Any], str], WireModel | None]
#: The fast path of each plain shape, by ``type``.
_PLAIN: dict[str, _Plain] = {
    **dict.fromkeys(_DELTA_MODELS, _plain_delta),
    **dict.fromkeys(_BOUNDARY_MODELS, _plain_boundary),
    **dict.fromkeys(_FINISH_FIELDS, _plain_finish),
    **dict.fromkeys(_FLAT_PARTS, _plain_flat),
}


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
    elif type(obj) is dict:
        kind = obj.get("type")
        if type(kind) is str:
            plain = _PLAIN.get(kind)
            if plain is not None:
                part = plain(obj, kind)
                if part is not None:
                    return part  # type: ignore[return-value]
    refuse_unbounded(obj, "StreamPart")
    return _STREAM_PART_ADAPTER.validate_python(obj, by_alias=True, by_name=False)


#: Containers :func:`_plainly_bounded` visits before leaving the decision to the full check.
_PLAIN_WALK_BUDGET = 10_000


def _plainly_bounded(obj: dict[Any, Any] | list[Any]) -> bool:
    """Whether ``obj`` surely has none of the problems :func:`refuse_unbounded` refuses.

    The common case (plain dicts, lists and scalars, shallow, safe integers) is decided
    without building a JSON path per value. Anything else (a container deeper than
    :data:`MAX_PART_DEPTH`, which a cycle always is, an unsafe integer, a value of any
    other type, more than a budget of containers) returns ``False`` and the full check,
    :func:`find_non_json`, decides and names the problem.
    """
    if type(obj) is not dict and type(obj) is not list:
        return False
    stack: list[tuple[dict[Any, Any] | list[Any], int]] = [(obj, 0)]
    budget = _PLAIN_WALK_BUDGET
    while stack:
        item, depth = stack.pop()
        budget -= 1
        if depth >= MAX_PART_DEPTH or budget < 0:
            return False
        for child in item.values() if type(item) is dict else item:
            kind = type(child)
            if kind is str or kind is bool or kind is float or child is None:
                continue
            if kind is dict or kind is list:
                stack.append((child, depth + 1))
            elif kind is not int or not -MAX_SAFE_INTEGER <= child <= MAX_SAFE_INTEGER:
                return False
    return True


def refuse_unbounded(obj: object, title: str) -> None:
    """Raise a ``ValidationError`` for a part nested deeper than :data:`MAX_PART_DEPTH`,
    containing itself or holding an integer outside the JSON-safe range (checked
    iteratively, before any recursive validation)."""
    if not isinstance(obj, dict | list):
        return
    if _plainly_bounded(obj):
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
