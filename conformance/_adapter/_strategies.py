"""Hypothesis strategies for the harness-v1 wire vocabulary.

Every strategy produces JSON-ready wire dicts (camelCase keys) that the contract models
accept; :func:`corrupted_stream_parts` produces dicts they must reject. Used by the kit's
own tests and by the conformance suites.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

from harness_testkit.spec import STREAM_PART_TYPES

__all__ = [
    "consumer_parts",
    "continue_turn_states",
    "corrupted_stream_parts",
    "json_values",
    "lifecycle_states",
    "resume_session_states",
    "stream_parts",
    "tool_specs",
    "usages",
]

_ids = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_", min_size=1, max_size=12)
_names = st.from_regex(r"[a-zA-Z][a-zA-Z0-9_]{0,15}", fullmatch=True)
_text = st.text(max_size=40)
_counts = st.none() | st.integers(min_value=0, max_value=10_000)

#: Plain JSON values (finite floats only).
json_values: st.SearchStrategy[Any] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53 - 1), max_value=2**53 - 1)  # JSON-safe integers
    | st.floats(allow_nan=False, allow_infinity=False)
    | _text,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(_text, children, max_size=4),
    max_leaves=12,
)

_json_objects = st.dictionaries(_text, json_values, max_size=3)
_metadata = st.none() | st.dictionaries(_names, _json_objects, max_size=2)


def _optional(**fields: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """A dict of the given keys, each present or absent; ``None`` values are dropped."""
    return st.fixed_dictionaries({}, optional=fields).map(
        lambda d: {key: value for key, value in d.items() if value is not None}
    )


def _obj(
    required: dict[str, st.SearchStrategy[Any]], **optional: st.SearchStrategy[Any]
) -> st.SearchStrategy[dict[str, Any]]:
    """An object with ``required`` keys and each optional key present or absent."""
    return st.tuples(st.fixed_dictionaries(required), _optional(**optional)).map(
        lambda pair: {**pair[0], **pair[1]}
    )


def _part(
    type_: str, required: dict[str, st.SearchStrategy[Any]], **optional: st.SearchStrategy[Any]
) -> st.SearchStrategy[dict[str, Any]]:
    return _obj(required, **optional).map(lambda fields: {"type": type_, **fields})


usages: st.SearchStrategy[dict[str, Any]] = st.fixed_dictionaries(
    {
        "inputTokens": _optional(
            total=_counts, noCache=_counts, cacheRead=_counts, cacheWrite=_counts
        ),
        "outputTokens": _optional(total=_counts, text=_counts, reasoning=_counts),
    },
    optional={"raw": _json_objects},
)

_finish_reasons = _obj(
    {
        "unified": st.sampled_from(
            ["stop", "length", "content-filter", "tool-calls", "error", "other"]
        )
    },
    raw=st.none() | _text,
)

_warnings = st.one_of(
    _part("unsupported-setting", {"setting": _text}, details=st.none() | _text),
    _part("unsupported-tool", {"tool": json_values}, details=st.none() | _text),
    _part("other", {"message": _text}),
)

_BY_TYPE: dict[str, st.SearchStrategy[dict[str, Any]]] = {
    "stream-start": _part(
        "stream-start",
        {},
        warnings=st.none() | st.lists(_warnings, max_size=2),
        modelId=st.none() | _text,
    ),
    "text-start": _part("text-start", {"id": _ids}, harnessMetadata=_metadata),
    "text-delta": _part("text-delta", {"id": _ids, "delta": _text}, harnessMetadata=_metadata),
    "text-end": _part("text-end", {"id": _ids}, harnessMetadata=_metadata),
    "reasoning-start": _part("reasoning-start", {"id": _ids}, harnessMetadata=_metadata),
    "reasoning-delta": _part(
        "reasoning-delta", {"id": _ids, "delta": _text}, harnessMetadata=_metadata
    ),
    "reasoning-end": _part("reasoning-end", {"id": _ids}, harnessMetadata=_metadata),
    "tool-input-start": _part(
        "tool-input-start",
        {"id": _ids, "toolName": _names},
        providerMetadata=_metadata,
        providerExecuted=st.none() | st.booleans(),
        dynamic=st.none() | st.booleans(),
        title=st.none() | _text,
    ),
    "tool-input-delta": _part(
        "tool-input-delta", {"id": _ids, "delta": _text}, providerMetadata=_metadata
    ),
    "tool-input-end": _part("tool-input-end", {"id": _ids}, providerMetadata=_metadata),
    "tool-call": _part(
        "tool-call",
        {
            "toolCallId": _ids,
            "toolName": _names,
            "input": _json_objects.map(lambda v: json.dumps(v)),
        },
        providerExecuted=st.none() | st.booleans(),
        dynamic=st.none() | st.booleans(),
        providerMetadata=_metadata,
        nativeName=st.none() | _names,
        stepToolCallCount=st.none() | st.integers(min_value=1, max_value=8),
    ),
    "tool-approval-request": _part(
        "tool-approval-request",
        {"approvalId": _ids, "toolCallId": _ids},
        providerMetadata=_metadata,
    ),
    "tool-result": _part(
        "tool-result",
        {"toolCallId": _ids, "toolName": _names},
        result=json_values,
        isError=st.none() | st.booleans(),
        preliminary=st.none() | st.booleans(),
        dynamic=st.none() | st.booleans(),
        providerMetadata=_metadata,
    ),
    "finish-step": _part(
        "finish-step", {"finishReason": _finish_reasons, "usage": usages}, harnessMetadata=_metadata
    ),
    "finish": _part(
        "finish", {"finishReason": _finish_reasons, "totalUsage": usages}, harnessMetadata=_metadata
    ),
    "file-change": _part(
        "file-change",
        {"event": st.sampled_from(["create", "modify", "delete"]), "path": _text},
        harnessMetadata=_metadata,
    ),
    "compaction": _part(
        "compaction",
        {"trigger": st.sampled_from(["manual", "auto"]), "summary": _text},
        tokensBefore=_counts,
        tokensAfter=_counts,
        harnessMetadata=_metadata,
    ),
    "error": _part("error", {}, error=json_values),
    "raw": _part("raw", {}, rawValue=json_values),
}

assert set(_BY_TYPE) == set(STREAM_PART_TYPES), "every stream part type needs a strategy"


def stream_parts(*types: str) -> st.SearchStrategy[dict[str, Any]]:
    """Valid harness stream parts as wire dicts (all 19 types, or only ``types``)."""
    chosen = types or STREAM_PART_TYPES
    return st.one_of(*(_BY_TYPE[name] for name in chosen))


_REQUIRED_KEYS: dict[str, tuple[str, ...]] = {
    "text-delta": ("id", "delta"),
    "tool-call": ("toolCallId", "toolName", "input"),
    "tool-approval-request": ("approvalId", "toolCallId"),
    "tool-result": ("toolCallId", "toolName"),
    "finish-step": ("finishReason", "usage"),
    "finish": ("finishReason", "totalUsage"),
    "file-change": ("event", "path"),
    "compaction": ("trigger", "summary"),
    "text-start": ("id",),
    "reasoning-delta": ("id", "delta"),
    "tool-input-start": ("id", "toolName"),
}


@st.composite
def corrupted_stream_parts(draw: st.DrawFn) -> dict[str, Any]:
    """Wire dicts the models must reject: unknown ``type``, a missing required field, a
    field of the wrong type, or a snake_case key instead of the camelCase one."""
    kind = draw(st.sampled_from(["unknown-type", "missing", "wrong-type", "snake-case"]))
    if kind == "unknown-type":
        part = draw(stream_parts())
        part["type"] = draw(_text.filter(lambda t: t not in STREAM_PART_TYPES))
        return part
    type_ = draw(st.sampled_from(sorted(_REQUIRED_KEYS)))
    part = draw(_BY_TYPE[type_])
    key = draw(st.sampled_from(_REQUIRED_KEYS[type_]))
    if kind == "missing":
        del part[key]
    elif kind == "wrong-type":
        part[key] = draw(st.sampled_from([12345, ["list"], {"object": True}, None]))
    else:
        snake = "".join("_" + c.lower() if c.isupper() else c for c in key)
        if snake == key:
            del part[key]  # no camelCase to misspell: treat as missing
        else:
            part[snake] = part.pop(key)
    return part


tool_specs: st.SearchStrategy[dict[str, Any]] = _obj(
    {"name": _names},
    description=st.none() | _text,
    inputSchema=st.none() | st.just({"type": "object", "properties": {"x": {"type": "string"}}}),
)

_pending_approvals = st.fixed_dictionaries(
    {
        "approvalId": _ids,
        "toolCallId": _ids,
        "toolName": _names,
        "input": _json_objects.map(lambda v: json.dumps(v)),
        "kind": st.sampled_from(["builtin", "custom"]),
    },
    optional={"providerExecuted": st.booleans(), "nativeName": _names},
)
_pending_results = st.fixed_dictionaries(
    {"toolCallId": _ids, "toolName": _names, "input": st.just("{}")},
    optional={
        "completedResult": _optional(output=json_values, isError=st.none() | st.booleans()),
    },
)


def continue_turn_states(harness_id: str = "fake") -> st.SearchStrategy[dict[str, Any]]:
    """Valid ``continue-turn`` states of ``harness_id``."""
    return st.fixed_dictionaries(
        {
            "type": st.just("continue-turn"),
            "harnessId": st.just(harness_id),
            "specificationVersion": st.just("harness-v1"),
            "data": json_values,
        },
        optional={
            "pendingToolApprovals": st.lists(_pending_approvals, max_size=2),
            "pendingToolResults": st.lists(_pending_results, max_size=2),
            "turnSettings": st.fixed_dictionaries(
                {"skills": st.just([]), "tools": st.lists(tool_specs, max_size=2)},
                optional={"model": _text, "instructions": _text},
            ),
        },
    )


def resume_session_states(harness_id: str = "fake") -> st.SearchStrategy[dict[str, Any]]:
    """Valid ``resume-session`` states of ``harness_id`` (possibly with ``continueFrom``)."""
    return st.fixed_dictionaries(
        {
            "type": st.just("resume-session"),
            "harnessId": st.just(harness_id),
            "specificationVersion": st.just("harness-v1"),
            "data": json_values,
        },
        optional={"continueFrom": continue_turn_states(harness_id)},
    )


def lifecycle_states(harness_id: str = "fake") -> st.SearchStrategy[dict[str, Any]]:
    """Valid lifecycle states of either type."""
    return resume_session_states(harness_id) | continue_turn_states(harness_id)


_consumer_usage = _obj(
    {},
    inputTokens=_counts,
    inputTokenDetails=_optional(
        noCacheTokens=_counts, cacheReadTokens=_counts, cacheWriteTokens=_counts
    ),
    outputTokens=_counts,
    outputTokenDetails=_optional(textTokens=_counts, reasoningTokens=_counts),
    totalTokens=_counts,
)
_consumer_call = _part(
    "tool-call",
    {"toolCallId": _ids, "toolName": _names, "input": json_values},
    providerExecuted=st.none() | st.booleans(),
    dynamic=st.none() | st.booleans(),
    providerMetadata=_metadata,
    invalid=st.none() | st.booleans(),
    title=st.none() | _text,
)
_finish_reason_names = st.sampled_from(
    ["stop", "length", "content-filter", "tool-calls", "error", "other"]
)

_TRANSLATED_ONE_TO_ONE = (
    "text-start",
    "text-delta",
    "text-end",
    "reasoning-start",
    "reasoning-delta",
    "reasoning-end",
    "tool-input-start",
    "tool-input-delta",
    "tool-input-end",
)


def _as_consumer(part: dict[str, Any]) -> dict[str, Any]:
    """A harness text/reasoning/tool-input part in its consumer form."""
    out = dict(part)
    if "harnessMetadata" in out:
        out["providerMetadata"] = out.pop("harnessMetadata")
    if out["type"] in ("text-delta", "reasoning-delta"):
        out["text"] = out.pop("delta")
    return out


_CONSUMER_BY_TYPE: dict[str, st.SearchStrategy[dict[str, Any]]] = {
    "start": st.just({"type": "start"}),
    "start-step": st.just({"type": "start-step", "request": {}, "warnings": []}),
    # Text, reasoning and tool-input parts are the harness ones as consumers see them
    # (the agent renames harnessMetadata and text deltas carry `text`).
    **{name: _BY_TYPE[name].map(_as_consumer) for name in _TRANSLATED_ONE_TO_ONE},
    "tool-call": _consumer_call,
    "tool-result": _part(
        "tool-result",
        {"toolCallId": _ids, "toolName": _names},
        input=json_values,
        output=json_values,
        providerExecuted=st.none() | st.booleans(),
        dynamic=st.none() | st.booleans(),
        preliminary=st.none() | st.booleans(),
        providerMetadata=_metadata,
    ),
    "tool-error": _part(
        "tool-error",
        {"toolCallId": _ids, "toolName": _names},
        input=json_values,
        error=json_values,
        providerExecuted=st.none() | st.booleans(),
        dynamic=st.none() | st.booleans(),
        providerMetadata=_metadata,
    ),
    "tool-approval-request": _part(
        "tool-approval-request",
        {"approvalId": _ids, "toolCall": _consumer_call},
        isAutomatic=st.none() | st.booleans(),
    ),
    "tool-approval-response": _part(
        "tool-approval-response",
        {"approvalId": _ids, "toolCall": _consumer_call, "approved": st.booleans()},
        reason=st.none() | _text,
        providerExecuted=st.none() | st.booleans(),
    ),
    "finish-step": _part(
        "finish-step",
        {
            "response": st.fixed_dictionaries(
                {"id": _ids, "timestamp": _text, "modelId": _text, "messages": st.just([])}
            ),
            "usage": _consumer_usage,
            "finishReason": _finish_reason_names,
        },
        rawFinishReason=st.none() | _text,
        providerMetadata=_metadata,
    ),
    "finish": _part(
        "finish",
        {"finishReason": _finish_reason_names, "totalUsage": _consumer_usage},
        rawFinishReason=st.none() | _text,
        providerMetadata=_metadata,
    ),
    "error": _part("error", {}, error=json_values),
    "abort": _part("abort", {}, reason=st.none() | _text),
    "raw": _part("raw", {}, rawValue=json_values),
}


def consumer_parts(*types: str) -> st.SearchStrategy[dict[str, Any]]:
    """Valid consumer (AI SDK) parts as wire dicts (all 21 types, or only ``types``)."""
    from harness_testkit.spec import CONSUMER_PART_TYPES

    assert set(_CONSUMER_BY_TYPE) == set(CONSUMER_PART_TYPES), (
        "every consumer type needs a strategy"
    )
    chosen = types or CONSUMER_PART_TYPES
    return st.one_of(*(_CONSUMER_BY_TYPE[name] for name in chosen))
