"""The fast paths of the reference agent: what each buys, and the one place they live.

The agent turns every harness part an adapter emits into consumer parts, so what it does
per part is paid thousands of times a turn. Two fast paths make that cheap; each must give
exactly what the plain path gives (``tests/reference/test_fast.py`` holds them to it):

- **Trusted construction** (:func:`construct_trusted`, :class:`Trusted`,
  :func:`frozen_dataclass`): the consumer parts, usages, settings and step records the
  agent builds from values that were validated already are made without validating them
  again, by writing pydantic's private slots (or a frozen dataclass's ``__dict__``)
  directly. Plain path: the model's constructor, ``Model(**given)``.
- **Wire readers** (``wire_*``): for the plain shapes of the parts most turns are made of
  (deltas, block boundaries, tool calls and results, ``finish-step`` and ``finish``: no
  metadata, no ``raw`` usage, JSON-safe values), the values the translation needs are
  read straight from the wire dict, without the harness model in between. Anything else
  returns ``None`` and goes through :func:`harness_testkit.spec.parse_stream_part`,
  which stays the one authority on what is valid: every dict a reader accepts, the parser
  accepts too, and the turn engine ends in the same state either way. Plain path: parse,
  then translate the harness model.

What each buys on today's workloads is measured side by side (the agent as shipped next
to the agent with that path switched off) by ``python -m benchmarks --only fast-paths``,
and recorded in ``benchmarks/RESULTS.md``. A path that stops paying for itself is deleted
here, and its call sites go back to the plain path; nothing outside this module writes
pydantic's private slots.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, NamedTuple, Protocol, TypeVar, cast, get_args

from pydantic import BaseModel

from harness_testkit.spec import (
    MAX_PART_DEPTH,
    MAX_SAFE_INTEGER,
    ConsumerReasoningDeltaPart,
    ConsumerReasoningEndPart,
    ConsumerReasoningStartPart,
    ConsumerTextDeltaPart,
    ConsumerTextEndPart,
    ConsumerTextStartPart,
    InputTokenDetails,
    LanguageModelUsage,
    OutputTokenDetails,
    ProviderMetadata,
    UnifiedFinishReason,
)

from ._strip import strip_work_dir

__all__ = [
    "BOUNDARIES",
    "DELTAS",
    "PLAIN_PATHS",
    "CallFields",
    "Trusted",
    "WireFinish",
    "WireToolCall",
    "WireToolResult",
    "construct_trusted",
    "consumer_usage",
    "frozen_dataclass",
    "trusted_usage",
    "usage_of_totals",
    "wire_boundary",
    "wire_delta",
    "wire_finish",
    "wire_finish_step",
    "wire_tool_call",
    "wire_tool_result",
]

M = TypeVar("M", bound=BaseModel)
D = TypeVar("D")

# -- trusted construction ----------------------------------------------------------------

_new = object.__new__
#: The setters of the slots every pydantic model instance has (the descriptors
#: themselves: cheaper than ``object.__setattr__``, which looks each one up by name).
_SLOTS = BaseModel.__dict__
_set_dict = _SLOTS["__dict__"].__set__
_set_fields_set = _SLOTS["__pydantic_fields_set__"].__set__
_set_extra = _SLOTS["__pydantic_extra__"].__set__
_set_private = _SLOTS["__pydantic_private__"].__set__


def construct_trusted(model: type[M], values: dict[str, Any], fields_set: set[str]) -> M:
    """``model`` built from ``values`` without validating them, for values that were
    validated already.

    ``values`` (kept, not copied) must hold every field by its Python name, in
    declaration order, each of its declared type; ``fields_set`` names the fields a
    constructor call would have been given (one set may be shared by many instances:
    the models are frozen, and pydantic copies a fields set before changing one). The
    instance then equals, dumps, copies and reprs as the constructor's would; its plain
    path is ``model(**{name: values[name] for name in fields_set})``.
    """
    instance = _new(model)
    _set_dict(instance, values)
    _set_fields_set(instance, fields_set)
    _set_extra(instance, None)
    _set_private(instance, None)
    return instance


class Trusted(Generic[M]):
    """Builds ``model`` as ``model(**given)`` would, from validated values (or values of
    ``Any`` fields), without validating them again; the other fields take their defaults.

    Every call gives exactly the fields named here (one fields set shared by the
    instances: a set is a tracked object the garbage collector would otherwise visit once
    per part for as long as the part lives). A field left out may not have a default
    factory unless it is named in ``factories`` (called per instance, as the constructor
    calls them).
    """

    __slots__ = ("defaults", "factories", "fields", "model")

    def __init__(self, model: type[M], *names: str, factories: tuple[str, ...] = ()) -> None:
        self.model = model
        self.fields = set(names)
        self.defaults: dict[str, Any] = {}
        self.factories: dict[str, Callable[[], Any]] = {}
        for name in factories:
            factory = model.model_fields[name].default_factory
            assert factory is not None, f"{model.__name__}.{name} has no factory"
            self.factories[name] = cast(Callable[[], Any], factory)
        for name, info in model.model_fields.items():
            if name not in self.factories and name not in self.fields:
                assert info.default_factory is None, f"{model.__name__}.{name} has a factory"
            self.defaults[name] = info.default
        assert self.fields <= set(self.defaults), f"{model.__name__}: {names}"

    def __call__(self, given: dict[str, Any]) -> M:
        """The model of the ``given`` fields (exactly the names given at construction)."""
        values = {**self.defaults, **given}
        for name, factory in self.factories.items():
            if name not in given:
                values[name] = factory()
        return construct_trusted(self.model, values, self.fields)

    def ordered(self, values: dict[str, Any]) -> M:
        """The model of ``values``, which hold every field in declaration order (the
        named ones given, the others at their defaults): the hot paths' call."""
        return construct_trusted(self.model, values, self.fields)


def frozen_dataclass(cls: type[D], /, **fields: Any) -> D:
    """What the frozen dataclass ``cls(**fields)`` makes, given every field in declaration
    order, without its one-by-one attribute writes. Plain path: ``cls(**fields)``."""
    instance: D = _new(cls)
    instance.__dict__.update(fields)
    return instance


# -- usages ---------------------------------------------------------------------------------

#: The fields the usage models below are built with (all given, as the constructors
#: were called with every field).
_USAGE_FIELDS = tuple(LanguageModelUsage.model_fields)
_SUMMED_FIELDS = tuple(name for name in _USAGE_FIELDS if name != "raw")
_usage = Trusted(LanguageModelUsage, *_USAGE_FIELDS)
_summed_usage = Trusted(LanguageModelUsage, *_SUMMED_FIELDS)
_input_details = Trusted(InputTokenDetails, *InputTokenDetails.model_fields)
_output_details = Trusted(OutputTokenDetails, *OutputTokenDetails.model_fields)
#: The token details of a usage that has none, shared: a frozen model holding only
#: ``None`` counts cannot change, so one instance serves every such usage.
_NO_INPUT_DETAILS = InputTokenDetails(
    no_cache_tokens=None, cache_read_tokens=None, cache_write_tokens=None
)
_NO_OUTPUT_DETAILS = OutputTokenDetails(text_tokens=None, reasoning_tokens=None)


def trusted_usage(
    input_tokens: int | None,
    no_cache: int | None,
    cache_read: int | None,
    cache_write: int | None,
    output_tokens: int | None,
    text: int | None,
    reasoning: int | None,
    total: int | None,
    raw: dict[str, Any] | None,
    *,
    summed: bool = False,
) -> LanguageModelUsage:
    """A consumer usage from counts read off validated usages (no re-validation); a
    ``summed`` one is made as a sum is (every field but ``raw`` given)."""
    if no_cache is None and cache_read is None and cache_write is None:
        input_details = _NO_INPUT_DETAILS
    else:
        input_details = _input_details.ordered(
            {
                "no_cache_tokens": no_cache,
                "cache_read_tokens": cache_read,
                "cache_write_tokens": cache_write,
            }
        )
    if text is None and reasoning is None:
        output_details = _NO_OUTPUT_DETAILS
    else:
        output_details = _output_details.ordered(
            {"text_tokens": text, "reasoning_tokens": reasoning}
        )
    values = {
        "input_tokens": input_tokens,
        "input_token_details": input_details,
        "output_tokens": output_tokens,
        "output_token_details": output_details,
        "total_tokens": total,
        "raw": raw,
    }
    return (_summed_usage if summed else _usage).ordered(values)


def consumer_usage(
    input_total: int | None,
    no_cache: int | None,
    cache_read: int | None,
    cache_write: int | None,
    output_total: int | None,
    text: int | None,
    reasoning: int | None,
    raw: dict[str, Any] | None,
) -> LanguageModelUsage:
    """The consumer usage of validated harness token counts (``totalTokens`` = input +
    output, ``None`` when neither is known)."""
    total = (
        None
        if input_total is None and output_total is None
        else (input_total or 0) + (output_total or 0)
    )
    return trusted_usage(
        input_total, no_cache, cache_read, cache_write, output_total, text, reasoning, total, raw
    )


def usage_of_totals(input_total: int, output_total: int) -> LanguageModelUsage:
    """:func:`consumer_usage` of two known totals and no details (the usual usage)."""
    values = {
        "input_tokens": input_total,
        "input_token_details": _NO_INPUT_DETAILS,
        "output_tokens": output_total,
        "output_token_details": _NO_OUTPUT_DETAILS,
        "total_tokens": input_total + output_total,
        "raw": None,
    }
    return _usage.ordered(values)


# -- wire readers: deltas ---------------------------------------------------------------------

#: The consumer delta of each delta ``type``, built with ``id``, ``text`` and metadata.
DELTAS: dict[str, Trusted[ConsumerTextDeltaPart] | Trusted[ConsumerReasoningDeltaPart]] = {
    "text-delta": Trusted(ConsumerTextDeltaPart, "id", "text", "provider_metadata"),
    "reasoning-delta": Trusted(ConsumerReasoningDeltaPart, "id", "text", "provider_metadata"),
}


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
    return DELTAS[kind].ordered(values)


# -- wire readers: block boundaries -----------------------------------------------------------------------

ConsumerBoundary = (
    ConsumerTextStartPart
    | ConsumerTextEndPart
    | ConsumerReasoningStartPart
    | ConsumerReasoningEndPart
)
#: The consumer part of each block boundary ``type``, built with ``id`` and metadata.
BOUNDARIES: dict[str, Trusted[ConsumerBoundary]] = {
    kind: Trusted(model, "id", "provider_metadata")
    for kind, model in (
        ("text-start", ConsumerTextStartPart),
        ("text-end", ConsumerTextEndPart),
        ("reasoning-start", ConsumerReasoningStartPart),
        ("reasoning-end", ConsumerReasoningEndPart),
    )
}


def wire_boundary(obj: dict[str, Any]) -> ConsumerBoundary | None:
    """The consumer part of a plain block boundary (exactly ``type`` and a ``str``
    ``id``); ``None`` for anything else."""
    if len(obj) != 2:
        return None
    kind = obj.get("type")
    block_id = obj.get("id")
    if type(kind) is not str or type(block_id) is not str:
        return None
    boundary = BOUNDARIES.get(kind)
    if boundary is None:
        return None
    return boundary.ordered({"type": kind, "id": block_id, "provider_metadata": None})


# -- wire readers: finish-step and finish ------------------------------------------------------------------

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
        # The usual usage, totals only, read inline (cheaper than the general reading).
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


# -- wire readers: tool-result ----------------------------------------------------------------------------

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
        # Strings and numbers are decided inline: a result has many, and a call for
        # each would cost more than deciding it.
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
    # Spelled out rather than looped over a table: the loop costs more per part.
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


# -- wire readers: tool-call ------------------------------------------------------------------------------


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


# -- the plain paths ---------------------------------------------------------------------------


def _plain_construct(model: type[M], values: dict[str, Any], fields_set: set[str]) -> M:
    return model(**{name: values[name] for name in fields_set})


def _plain_frozen_dataclass(cls: type[D], /, **fields: Any) -> D:
    return cls(**fields)


def _declined(*args: Any) -> None:
    """A wire reader that takes nothing: every dict goes through the parser."""


#: Each fast path by name -> the names in this module it consists of, each with its plain
#: twin: what the agent does with the path switched off. ``python -m benchmarks --only
#: fast-paths`` puts the twins in place (in a process of its own) to measure what each
#: path buys, and ``tests/reference/test_fast.py`` runs turns both ways.
PLAIN_PATHS: dict[str, dict[str, Callable[..., Any]]] = {
    "trusted construction": {
        "construct_trusted": _plain_construct,
        "frozen_dataclass": _plain_frozen_dataclass,
    },
    "wire readers": dict.fromkeys(
        (
            "wire_delta",
            "wire_boundary",
            "wire_finish_step",
            "wire_finish",
            "wire_tool_call",
            "wire_tool_result",
        ),
        _declined,
    ),
}
