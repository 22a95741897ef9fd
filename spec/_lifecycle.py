"""Lifecycle states: ``resume-session`` and ``continue-turn``.

A lifecycle state is the serializable handle with which a session (or its unfinished
turn) is resumed, possibly in another process. The adapter owns ``data``; the agent owns
the pending records and the frozen turn settings.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeAlias, cast

from pydantic import (
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from ._errors import InvalidLifecycleStateError
from ._json import WIRE_CONFIG, JSONValue, find_non_json
from ._skills import Skill
from ._stream_parts import WireModel
from ._tools import ToolSpec

__all__ = [
    "SPECIFICATION_VERSION",
    "CompletedToolResult",
    "ContinueTurnState",
    "LifecycleState",
    "PendingToolApproval",
    "PendingToolResult",
    "ResumeSessionState",
    "TurnSettings",
    "parse_lifecycle_state",
]

#: Deepest nesting accepted in a lifecycle state (its ``data`` included).
MAX_STATE_DEPTH = 64

#: The only specification version this kit implements.
SPECIFICATION_VERSION: Literal["harness-v1"] = "harness-v1"

#: Lifecycle states keep only known keys (extra keys are dropped, as upstream does).
_STATE_CONFIG = ConfigDict(**{**WIRE_CONFIG, "extra": "ignore"})


#: The validation context :func:`parse_lifecycle_state` passes once it has checked the
#: whole state with :func:`find_non_json` (a key nobody else can pass): the per-field
#: checks below would walk the same values again.
_JSON_CHECKED_KEY = object()
_JSON_CHECKED: dict[object, bool] = {_JSON_CHECKED_KEY: True}


def _require_json(value: Any, field: str, info: ValidationInfo) -> Any:
    context = info.context
    if isinstance(context, dict) and context.get(_JSON_CHECKED_KEY):
        return value
    problem = find_non_json(value, field)
    if problem is not None:
        raise ValueError(f"{problem}; lifecycle states must be plain JSON")
    return value


class CompletedToolResult(WireModel):
    """A host result computed while the turn was being suspended (submit it on resume)."""

    model_config = _STATE_CONFIG

    output: JSONValue = None
    is_error: bool | None = None
    tool_result: dict[str, JSONValue] | None = None

    @field_validator("output")
    @classmethod
    def _json_output(cls, value: Any, info: ValidationInfo) -> Any:
        return _require_json(value, "output", info)


class PendingToolApproval(WireModel):
    """An approval the turn is waiting for (``kind`` builtin: runtime-asked; custom: host)."""

    model_config = _STATE_CONFIG

    approval_id: str
    tool_call_id: str
    tool_name: str
    #: The call's raw JSON input text.
    input: str
    kind: Literal["builtin", "custom"]
    provider_executed: bool | None = None
    native_name: str | None = None


class PendingToolResult(WireModel):
    """A client-side tool result the turn is waiting for."""

    model_config = _STATE_CONFIG

    tool_call_id: str
    tool_name: str
    #: The call's raw JSON input text.
    input: str
    provider_options: dict[str, JSONValue] | None = None
    completed_result: CompletedToolResult | None = None


class TurnSettings(WireModel):
    """The settings frozen when a prompt turn began; its continuations reuse them."""

    model_config = _STATE_CONFIG

    model: str | None = None
    skills: list[Skill] = Field(default_factory=list)
    instructions: str | None = None
    tools: list[ToolSpec] = Field(default_factory=list)


class ContinueTurnState(WireModel):
    """The state of an unfinished turn, produced by ``do_suspend_turn`` / ``suspend_turn``."""

    model_config = _STATE_CONFIG

    type: Literal["continue-turn"] = "continue-turn"
    harness_id: str
    specification_version: Literal["harness-v1"] = SPECIFICATION_VERSION
    data: JSONValue = None
    pending_tool_approvals: list[PendingToolApproval] | None = None
    pending_tool_results: list[PendingToolResult] | None = None
    turn_settings: TurnSettings | None = None
    #: Kit extension (ignored by TypeScript peers): harness parts the runtime had emitted
    #: but the agent had not consumed when the turn was suspended (a stop condition's
    #: lookahead). The next slice processes them first, so nothing is lost.
    buffered_parts: list[dict[str, JSONValue]] | None = None

    @field_validator("data", mode="before")
    @classmethod
    def _json_data(cls, value: Any, info: ValidationInfo) -> Any:
        return _require_json(value, "data", info)


class ResumeSessionState(WireModel):
    """The state of a session between turns (``continue_from`` nests an unfinished turn)."""

    model_config = _STATE_CONFIG

    type: Literal["resume-session"] = "resume-session"
    harness_id: str
    specification_version: Literal["harness-v1"] = SPECIFICATION_VERSION
    data: JSONValue = None
    continue_from: ContinueTurnState | None = None

    @field_validator("data", mode="before")
    @classmethod
    def _json_data(cls, value: Any, info: ValidationInfo) -> Any:
        return _require_json(value, "data", info)

    @classmethod
    def mid_turn(cls, continuation: ContinueTurnState) -> ResumeSessionState:
        """The state of a session detached or stopped during a turn.

        Args:
            continuation: The unfinished turn's state (from ``do_suspend_turn``).

        Returns:
            A ``resume-session`` state of the same harness that nests ``continuation``
            and carries its data.
        """
        return cls(
            harness_id=continuation.harness_id,
            data=continuation.data,
            continue_from=continuation,
        )


LifecycleState: TypeAlias = Annotated[
    ResumeSessionState | ContinueTurnState, Field(discriminator="type")
]

_STATE_TYPES = ("resume-session", "continue-turn")
_ADAPTERS: dict[str, TypeAdapter[Any]] = {
    "resume-session": TypeAdapter(ResumeSessionState),
    "continue-turn": TypeAdapter(ContinueTurnState),
}


def _describe(error: ValidationError) -> str:
    parts = []
    for item in error.errors():
        location = ".".join(str(piece) for piece in item["loc"]) or "(root)"
        parts.append(f"{location}: {item['msg']}")
    return "; ".join(parts)


def parse_lifecycle_state(
    obj: object,
    *,
    expected_type: Literal["resume-session", "continue-turn"] | None = None,
    harness_id: str | None = None,
    data_validator: Callable[[Any], Any] | None = None,
    shape_checked: bool = False,
) -> ResumeSessionState | ContinueTurnState:
    """Validate a lifecycle state given as a wire dict (or model), in specification order.

    Checks, in order: the value is an object; ``type`` (against ``expected_type`` when
    given); ``specificationVersion``; ``harnessId`` (against ``harness_id`` when given);
    a resume state carries no top-level pending lists; the shape of every field, with
    ``data`` plain JSON; ``data`` against ``data_validator`` (the adapter's lifecycle
    state schema), whose return value replaces it; then a nested ``continueFrom``
    recursively as ``continue-turn``.

    Args:
        obj: The state, as JSON-ready dict or model.
        expected_type: The state type the caller needs.
        harness_id: The harness the caller runs; a state of another harness is refused.
        data_validator: Parses the adapter-owned ``data`` (raise to reject it).
        shape_checked: ``obj`` is a state model that was parsed already, as the agent's
            ``StartOptions.resume_from`` and ``continue_from`` are: its shape is not
            walked and validated again, only ``type``, ``specificationVersion``,
            ``harnessId`` and ``data`` (through ``data_validator``) are checked, nested
            ``continueFrom`` included. Ignored for a dict, which is always checked whole.

    Returns:
        A canonical copy: known keys only, optional keys present only when set.

    Raises:
        InvalidLifecycleStateError: naming the field that is wrong and why.
    """
    if isinstance(obj, WireModel):
        if shape_checked and isinstance(obj, ResumeSessionState | ContinueTurnState):
            return _recheck(obj, expected_type, harness_id, data_validator)
        obj = obj.to_wire()
    if not isinstance(obj, dict):
        raise InvalidLifecycleStateError(
            f"Lifecycle state must be a JSON object with a `type` field; got {type(obj).__name__}."
        )
    # Bounded before any recursive validation: deep, circular or unsafe values are refused
    # by name instead of raising RecursionError or being accepted and unwritable.
    problem = find_non_json(obj, "state", max_depth=MAX_STATE_DEPTH, safe_integers=True)
    if problem is not None:
        raise InvalidLifecycleStateError(f"Lifecycle state is invalid: {problem}.")
    state_type = obj.get("type")
    _check_header(
        state_type, obj.get("specificationVersion"), obj.get("harnessId"), expected_type, harness_id
    )
    if state_type == "resume-session":
        if "pendingToolApprovals" in obj and obj["pendingToolApprovals"] is not None:
            raise InvalidLifecycleStateError(
                "Resume session state cannot contain pending tool approvals; "
                "unfinished turns must be stored as `continueFrom`."
            )
        if "pendingToolResults" in obj and obj["pendingToolResults"] is not None:
            raise InvalidLifecycleStateError(
                "Resume session state cannot contain pending tool results; "
                "unfinished turns must be stored as `continueFrom`."
            )
    nested = obj.get("continueFrom") if state_type == "resume-session" else None
    shallow = {key: value for key, value in obj.items() if key != "continueFrom"}
    try:
        state: ResumeSessionState | ContinueTurnState = _ADAPTERS[
            cast(str, state_type)  # one of _STATE_TYPES: _check_header passed
        ].validate_python(shallow, by_alias=True, by_name=False, context=_JSON_CHECKED)
    except ValidationError as error:
        raise InvalidLifecycleStateError(
            f"Lifecycle state ({state_type}) is invalid: {_describe(error)}.", cause=error
        ) from error
    state = _with_validated_data(state, data_validator)
    if isinstance(state, ResumeSessionState) and nested is not None:
        continuation = parse_lifecycle_state(
            nested,
            expected_type="continue-turn",
            harness_id=harness_id,
            data_validator=data_validator,
        )
        assert isinstance(continuation, ContinueTurnState)
        state = state.model_copy(update={"continue_from": continuation})
    return state


def _check_header(
    state_type: object,
    version: object,
    state_harness: object,
    expected_type: str | None,
    harness_id: str | None,
) -> None:
    """The checks of a state's ``type``, ``specificationVersion`` and ``harnessId``."""
    if expected_type is not None and state_type != expected_type:
        raise InvalidLifecycleStateError(
            f"Lifecycle state has unexpected type '{state_type}'; expected '{expected_type}'."
        )
    if state_type not in _STATE_TYPES:
        raise InvalidLifecycleStateError(
            f"Lifecycle state has unexpected type '{state_type}'; "
            "expected 'resume-session' or 'continue-turn'."
        )
    if version != SPECIFICATION_VERSION:
        raise InvalidLifecycleStateError(
            f"Lifecycle state has unexpected specificationVersion '{version}'; "
            "expected 'harness-v1'."
        )
    if harness_id is not None and state_harness != harness_id:
        raise InvalidLifecycleStateError(
            f"Lifecycle state was produced by harness '{state_harness}' "
            f"but this agent uses '{harness_id}'."
        )


def _with_validated_data(
    state: ResumeSessionState | ContinueTurnState, data_validator: Callable[[Any], Any] | None
) -> ResumeSessionState | ContinueTurnState:
    """``state`` with ``data`` replaced by what ``data_validator`` returns for it."""
    if data_validator is None:
        return state
    try:
        parsed = data_validator(state.data)
    except Exception as error:
        raise InvalidLifecycleStateError(
            f"Lifecycle state failed schema validation for harness '{state.harness_id}': {error}",
            cause=error,
        ) from error
    problem = find_non_json(parsed, "data")
    if problem is not None:
        raise InvalidLifecycleStateError(
            f"Lifecycle state failed schema validation for harness '{state.harness_id}': "
            f"the schema produced a non-JSON value ({problem})."
        )
    return state.model_copy(update={"data": parsed})


def _recheck(
    state: ResumeSessionState | ContinueTurnState,
    expected_type: str | None,
    harness_id: str | None,
    data_validator: Callable[[Any], Any] | None,
) -> ResumeSessionState | ContinueTurnState:
    """:func:`parse_lifecycle_state` for a state model parsed before (``shape_checked``)."""
    _check_header(
        state.type, state.specification_version, state.harness_id, expected_type, harness_id
    )
    state = _with_validated_data(state, data_validator)
    if isinstance(state, ResumeSessionState) and state.continue_from is not None:
        continuation = _recheck(state.continue_from, "continue-turn", harness_id, data_validator)
        state = state.model_copy(update={"continue_from": continuation})
    return state
