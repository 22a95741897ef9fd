"""The hot harness parts read straight from their wire dicts.

An adapter that emits dicts has each one parsed into a harness model, which the turn
engine then translates into a consumer part. For the parts most turns are made of
(deltas, block boundaries, tool calls and results, ``finish-step`` and ``finish``), when
the dict is *plain* (the shapes
the parser's own fast path takes: no metadata, no ``raw`` usage, JSON-safe values), the
readers here give the translation the values it needs without the harness model in
between. Anything else returns ``None`` and goes through the parser, which stays the one
authority on what is valid: every dict a reader accepts, ``parse_stream_part`` accepts
too, and the turn engine ends in the same state either way
(``tests/reference/test_wire.py`` checks this on generated dicts, valid and broken).
"""

from __future__ import annotations

from typing import Any, NamedTuple, Protocol, get_args

from harness_testkit.spec import (
    MAX_PART_DEPTH,
    MAX_SAFE_INTEGER,
    ConsumerReasoningDeltaPart,
    ConsumerReasoningEndPart,
    ConsumerReasoningStartPart,
    ConsumerTextDeltaPart,
    ConsumerTextEndPart,
    ConsumerTextStartPart,
    LanguageModelUsage,
    ProviderMetadata,
    UnifiedFinishReason,
)

from ._results import consumer_usage, usage_of_totals
from ._strip import strip_work_dir

__all__ = [
    "BOUNDARY_FIELDS",
    "CONSUMER_BOUNDARIES",
    "CallFields",
    "WireFinish",
    "WireToolCall",
    "WireToolResult",
    "wire_boundary",
    "wire_delta",
    "wire_finish",
    "wire_finish_step",
    "wire_tool_call",
    "wire_tool_result",
]


#: The consumer model of each delta ``type``, and the fields a delta is built with.
_DELTAS: dict[str, type[ConsumerTextDeltaPart] | type[ConsumerReasoningDeltaPart]] = {
    "text-delta": ConsumerTextDeltaPart,
    "reasoning-delta": ConsumerReasoningDeltaPart,
}
_DELTA_FIELDS = {"id", "text", "provider_metadata"}
#: Each model's ``from_trusted``, bound once (see ``WireModel.from_trusted``: a lookup
#: on a pydantic model class costs about a thousand instructions).
_NEW_DELTA = {kind: model.from_trusted for kind, model in _DELTAS.items()}


def wire_delta(obj: dict[str, Any]) -> ConsumerTextDeltaPart | ConsumerReasoningDeltaPart | None:
    """The consumer delta of a plain wire delta (exactly ``type``, ``id`` and ``delta``,
    both ``str``); ``None`` for anything else."""
    if len(obj) != 3:
        return None
    kind = obj.get("type")
    if kind != "text-delta" and kind != "reasoning-delta":
        return None
    block_id = obj.get("id")
    text = obj.get("delta")
    if type(block_id) is not str or type(text) is not str:
        return None
    values = {"type": kind, "id": block_id, "text": text, "provider_metadata": None}
    return _NEW_DELTA[kind](values, _DELTA_FIELDS)


# -- block boundaries -----------------------------------------------------------------------

ConsumerBoundary = (
    ConsumerTextStartPart
    | ConsumerTextEndPart
    | ConsumerReasoningStartPart
    | ConsumerReasoningEndPart
)
#: The consumer model of each block boundary ``type``, and the fields one is built with.
CONSUMER_BOUNDARIES: dict[str, type[ConsumerBoundary]] = {
    "text-start": ConsumerTextStartPart,
    "text-end": ConsumerTextEndPart,
    "reasoning-start": ConsumerReasoningStartPart,
    "reasoning-end": ConsumerReasoningEndPart,
}
BOUNDARY_FIELDS = {"id", "provider_metadata"}
_NEW_BOUNDARY = {kind: model.from_trusted for kind, model in CONSUMER_BOUNDARIES.items()}


def wire_boundary(obj: dict[str, Any]) -> ConsumerBoundary | None:
    """The consumer part of a plain block boundary (exactly ``type`` and a ``str``
    ``id``); ``None`` for anything else."""
    if len(obj) != 2:
        return None
    kind = obj.get("type")
    block_id = obj.get("id")
    if type(kind) is not str or type(block_id) is not str:
        return None
    new = _NEW_BOUNDARY.get(kind)
    if new is None:
        return None
    values = {"type": kind, "id": block_id, "provider_metadata": None}
    return new(values, BOUNDARY_FIELDS)


# -- finish-step and finish ------------------------------------------------------------------

_REASONS = frozenset(get_args(UnifiedFinishReason))
_INPUT_KEYS = {"total": 0, "noCache": 1, "cacheRead": 2, "cacheWrite": 3}
_OUTPUT_KEYS = {"total": 0, "text": 1, "reasoning": 2}
#: A key's value when the key is absent (not ``None``: that is a count of its own).
_ABSENT = object()


class WireFinish(NamedTuple):
    """A plain ``finish-step`` or ``finish``: its reason and its usage, already the
    consumer's."""

    unified: str
    raw: str | None
    usage: LanguageModelUsage


def wire_finish_step(obj: dict[str, Any]) -> WireFinish | None:
    """A ``finish-step`` of exactly a plain reason (``{"unified"[, "raw"]}``) and a plain
    usage (``inputTokens`` and ``outputTokens`` counts, nothing else); ``None`` otherwise."""
    return _wire_finish(obj, "finish-step", "usage")


def wire_finish(obj: dict[str, Any]) -> WireFinish | None:
    """A ``finish`` of exactly a plain reason and a plain ``totalUsage`` (as
    :func:`wire_finish_step`); ``None`` otherwise."""
    return _wire_finish(obj, "finish", "totalUsage")


def _counts(obj: object, keys: dict[str, int]) -> list[int | None] | None:
    """Token counts by position (``None`` when absent), when ``obj`` is a dict of known
    keys holding safe integers or ``None``."""
    if type(obj) is not dict:
        return None
    counts: list[int | None] = [None] * len(keys)
    for key, value in obj.items():
        index = keys.get(key)
        if index is None or (
            value is not None
            and (type(value) is not int or not -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER)
        ):
            return None
        counts[index] = value
    return counts


def _wire_finish(obj: dict[str, Any], kind: str, usage_key: str) -> WireFinish | None:
    if len(obj) != 3 or obj.get("type") != kind:
        return None
    reason = obj.get("finishReason")
    usage = obj.get(usage_key)
    if type(reason) is not dict or type(usage) is not dict or len(usage) != 2:
        return None
    unified = reason.get("unified")
    if type(unified) is not str or unified not in _REASONS:
        return None
    raw = reason.get("raw")
    if len(reason) == 2:
        if "raw" not in reason or (raw is not None and type(raw) is not str):
            return None
    elif len(reason) != 1:
        return None
    input_counts = usage.get("inputTokens")
    output_counts = usage.get("outputTokens")
    if (
        type(input_counts) is dict
        and type(output_counts) is dict
        and len(input_counts) == 1
        and len(output_counts) == 1
    ):
        # The usual usage, totals only, read inline (the general reading below costs
        # about twice as much).
        input_total = input_counts.get("total", _ABSENT)
        output_total = output_counts.get("total", _ABSENT)
        if (
            type(input_total) is int
            and type(output_total) is int
            and -MAX_SAFE_INTEGER <= input_total <= MAX_SAFE_INTEGER
            and -MAX_SAFE_INTEGER <= output_total <= MAX_SAFE_INTEGER
        ):
            return WireFinish(unified, raw, usage_of_totals(input_total, output_total))
    inputs = _counts(input_counts, _INPUT_KEYS)
    if inputs is None:
        return None
    outputs = _counts(output_counts, _OUTPUT_KEYS)
    if outputs is None:
        return None
    input_total, no_cache, cache_read, cache_write = inputs
    output_total, text, reasoning = outputs
    return WireFinish(
        unified,
        raw,
        consumer_usage(
            input_total, no_cache, cache_read, cache_write, output_total, text, reasoning, None
        ),
    )


# -- tool-result ----------------------------------------------------------------------------

#: The keys a plain ``tool-result`` may have.
_RESULT_KEYS = frozenset(
    {"type", "toolCallId", "toolName", "result", "isError", "preliminary", "dynamic"}
)


class WireToolResult(NamedTuple):
    """A plain ``tool-result``: its fields, ``result`` copied with the work dir stripped."""

    tool_call_id: str
    tool_name: str
    result: Any
    is_error: bool | None
    preliminary: bool | None
    dynamic: bool | None


class _NotPlain(Exception):
    """A value the reader leaves to the parser."""


def _stripped(value: Any, depth: int, work_dir: str) -> Any:
    """``value`` copied as the ``JSONValue`` validator copies it, strings stripped of the
    work dir; raises :class:`_NotPlain` for anything the parser's fast path does not take
    (a non-``str`` key, an unsafe integer, another type, a container at
    ``MAX_PART_DEPTH`` or deeper; ``depth`` is the value's own)."""
    kind = type(value)
    if kind is str:
        return strip_work_dir(value, work_dir) if work_dir and work_dir in value else value
    if kind is bool or kind is float or value is None:
        return value
    if kind is int:
        if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
            return value
        raise _NotPlain
    if depth >= MAX_PART_DEPTH:
        raise _NotPlain
    if kind is dict:
        # Strings and numbers are decided inline: a result has many, a call each would
        # be most of the cost.
        copied: dict[str, Any] = {}
        for key, item in value.items():
            if type(key) is not str:
                raise _NotPlain
            item_kind = type(item)
            if (item_kind is str and not (work_dir and work_dir in item)) or (
                item_kind is int and -MAX_SAFE_INTEGER <= item <= MAX_SAFE_INTEGER
            ):
                copied[key] = item
            else:
                copied[key] = _stripped(item, depth + 1, work_dir)
        return copied
    if kind is list:
        return [_stripped(item, depth + 1, work_dir) for item in value]
    raise _NotPlain


def wire_tool_result(obj: dict[str, Any], work_dir: str) -> WireToolResult | None:
    """A ``tool-result`` of plain fields only (``toolCallId`` and ``toolName`` strings,
    optional ``isError``, ``preliminary`` and ``dynamic`` booleans, ``result`` plain JSON;
    no metadata, no other key); ``None`` otherwise."""
    if obj.get("type") != "tool-result" or not obj.keys() <= _RESULT_KEYS:
        return None
    get = obj.get
    call_id, name = get("toolCallId"), get("toolName")
    is_error, preliminary, dynamic = get("isError"), get("preliminary"), get("dynamic")
    # Spelled out rather than looped over a table: a loop costs twice as much per part.
    if (
        type(call_id) is not str
        or type(name) is not str
        or (is_error is not None and type(is_error) is not bool)
        or (preliminary is not None and type(preliminary) is not bool)
        or (dynamic is not None and type(dynamic) is not bool)
    ):
        return None
    try:
        result = _stripped(get("result"), 1, work_dir)
    except _NotPlain:
        return None
    return WireToolResult(call_id, name, result, is_error, preliminary, dynamic)


# -- tool-call ------------------------------------------------------------------------------


class CallFields(Protocol):
    """What the turn engine reads of a harness tool call: a ``ToolCallPart``, or a
    :class:`WireToolCall` read from the wire."""

    @property
    def tool_call_id(self) -> str: ...
    @property
    def tool_name(self) -> str: ...
    @property
    def input(self) -> str: ...
    @property
    def provider_executed(self) -> bool | None: ...
    @property
    def dynamic(self) -> bool | None: ...
    @property
    def native_name(self) -> str | None: ...
    @property
    def provider_metadata(self) -> ProviderMetadata | None: ...
    @property
    def step_tool_call_count(self) -> int | None: ...


class WireToolCall(NamedTuple):
    """A plain ``tool-call``: no metadata, no step call count."""

    tool_call_id: str
    tool_name: str
    input: str
    provider_executed: bool | None
    dynamic: bool | None
    native_name: str | None
    provider_metadata: None = None
    step_tool_call_count: None = None


#: The keys a plain ``tool-call`` may have.
_CALL_KEYS = frozenset(
    {"type", "toolCallId", "toolName", "input", "providerExecuted", "dynamic", "nativeName"}
)


def wire_tool_call(obj: dict[str, Any]) -> WireToolCall | None:
    """A ``tool-call`` of plain fields only (``toolCallId``, ``toolName`` and ``input``
    strings, optional ``providerExecuted`` and ``dynamic`` booleans and ``nativeName``
    string; no metadata, no step call count, no other key); ``None`` otherwise."""
    if obj.get("type") != "tool-call" or not obj.keys() <= _CALL_KEYS:
        return None
    get = obj.get
    call_id, name, text = get("toolCallId"), get("toolName"), get("input")
    executed, dynamic, native = get("providerExecuted"), get("dynamic"), get("nativeName")
    if (
        type(call_id) is not str
        or type(name) is not str
        or type(text) is not str
        or (executed is not None and type(executed) is not bool)
        or (dynamic is not None and type(dynamic) is not bool)
        or (native is not None and type(native) is not str)
    ):
        return None
    return WireToolCall(call_id, name, text, executed, dynamic, native)
