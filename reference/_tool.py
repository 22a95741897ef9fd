"""Host tools: ``tool(...)`` definitions, input parsing and context validation."""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

import jsonschema
from pydantic import BaseModel, ValidationError

from harness_testkit.spec import (
    BuiltinTool,
    NoSuchToolError,
    SandboxSession,
    ToolContextValidationError,
)

if TYPE_CHECKING:
    import anyio

__all__ = [
    "ParsedToolCall",
    "Tool",
    "ToolExecuteFunction",
    "ToolExecutionOptions",
    "parse_tool_call_input",
    "tool",
]


@dataclass(frozen=True)
class ToolExecutionOptions:
    """What a host tool's ``execute`` receives besides its input.

    Attributes:
        tool_call_id: The call being executed.
        sandbox: The restricted sandbox session (files and processes only).
        context: The validated ``tools_context`` entry for this tool (or ``None``).
        abort: Set when the turn is aborted.
        messages: Always empty (prior turns live in the runtime, not on the host).
    """

    tool_call_id: str
    sandbox: SandboxSession
    context: Any = None
    abort: anyio.Event | None = None
    messages: list[Any] = field(default_factory=list)


ToolExecuteFunction: TypeAlias = Callable[
    [Any, ToolExecutionOptions],
    Any | Awaitable[Any] | AsyncIterator[Any] | Iterator[Any],
]

SchemaLike: TypeAlias = Mapping[str, Any] | type[BaseModel]


def _to_json_schema(schema: SchemaLike | None) -> dict[str, Any] | None:
    if schema is None:
        return None
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return schema.model_json_schema()
    return dict(schema)


@dataclass(frozen=True)
class Tool:
    """A host tool. Without ``execute`` it is a client-side tool: the turn pauses for it.

    Use :func:`tool` to build one.
    """

    description: str | None = None
    input_schema: SchemaLike | None = None
    execute: ToolExecuteFunction | None = None
    context_schema: SchemaLike | None = None
    dynamic: bool = False

    def json_schema(self) -> dict[str, Any] | None:
        """The input schema as JSON Schema (``None`` when it cannot be converted)."""
        try:
            return _to_json_schema(self.input_schema)
        except Exception:  # a schema that cannot be converted is sent by name only
            return None

    def validate_context(self, tool_name: str, value: Any) -> Any:
        """Validate a ``tools_context`` entry against ``context_schema``.

        Raises:
            ToolContextValidationError: when the entry is missing or invalid.
        """
        schema = self.context_schema
        if schema is None:
            return value
        if isinstance(schema, type) and issubclass(schema, BaseModel):
            try:
                return schema.model_validate(value)
            except ValidationError as error:
                raise ToolContextValidationError(tool_name, str(error)) from error
        if value is None:
            raise ToolContextValidationError(tool_name, "no context entry was given")
        try:
            validate_json_schema(value, schema)
        except jsonschema.ValidationError as error:
            raise ToolContextValidationError(tool_name, error.message) from error
        return value


def tool(
    *,
    description: str | None = None,
    input_schema: SchemaLike | None = None,
    execute: ToolExecuteFunction | None = None,
    context_schema: SchemaLike | None = None,
) -> Tool:
    """Define a host tool.

    Args:
        description: Shown to the runtime's model.
        input_schema: JSON Schema dict or a pydantic model class.
        execute: ``execute(input, options)``, sync or async, possibly a (async)
            generator whose every yield is a preliminary result. ``None`` makes a
            client-side tool: the turn pauses until its result is supplied.
        context_schema: Schema of this tool's ``tools_context`` entry.

    Returns:
        The tool definition.
    """
    if execute is not None and not callable(execute):
        raise TypeError("tool(execute=...) must be callable or None.")
    return Tool(
        description=description,
        input_schema=input_schema,
        execute=execute,
        context_schema=context_schema,
    )


@dataclass(frozen=True)
class ParsedToolCall:
    """The outcome of validating a harness ``tool-call`` against the merged tool set."""

    input: Any
    invalid: bool
    dynamic: bool
    error: BaseException | None = None


def parse_json_text(text: str) -> tuple[bool, Any]:
    """Parse JSON text; ``''`` is ``{}``. Returns ``(ok, value_or_raw_text)``."""
    if text.strip() == "":
        return True, {}
    try:
        return True, json.loads(text)
    except ValueError:
        return False, text


def _json_error(text: str) -> str:
    try:
        json.loads(text)
    except ValueError as error:
        return str(error)
    return "not JSON"


class InvalidToolInputError(ValueError):
    """A tool call whose input is not JSON or fails the tool's schema (AI SDK error)."""

    name = "AI_InvalidToolInputError"

    def __init__(self, tool_name: str, cause: str) -> None:
        super().__init__(f"Invalid input for tool {tool_name}: {cause}")
        self.tool_name = tool_name


def parse_tool_call_input(
    tool_name: str,
    input_text: str,
    tools: Mapping[str, Tool | BuiltinTool],
    *,
    provider_executed: bool | None,
    dynamic: bool | None,
) -> ParsedToolCall:
    """Validate a call the way the AI SDK's ``parseToolCall`` does.

    Unknown tools are invalid and dynamic (``NoSuchToolError``) unless the call is both
    provider-executed and dynamic; schema failures are invalid and dynamic with the raw
    parsed input kept.
    """
    ok, value = parse_json_text(input_text)
    declared = tools.get(tool_name)
    if declared is None and not (provider_executed is True and dynamic is True):
        return ParsedToolCall(
            input=value,
            invalid=True,
            dynamic=True,
            error=NoSuchToolError(tool_name, list(tools)),
        )
    if not ok:
        return ParsedToolCall(
            input=value,
            invalid=True,
            dynamic=True,
            error=InvalidToolInputError(
                tool_name,
                f"AI_JSONParseError: JSON parsing failed: Text: {input_text}.\n"
                f"Error message: {_json_error(input_text)}",
            ),
        )
    if declared is None:
        return ParsedToolCall(input=value, invalid=False, dynamic=True)
    # Host tools are this module's Tool; anything else is a built-in, whatever its class
    # (an adapter's own objects satisfying the built-in tool protocol included).
    schema: Any = declared.input_schema
    is_dynamic = declared.dynamic if isinstance(declared, Tool) else False
    try:
        _validate(schema, value)
    except (jsonschema.ValidationError, ValidationError) as error:
        message = error.message if isinstance(error, jsonschema.ValidationError) else str(error)
        shown = json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)
        return ParsedToolCall(
            input=value,
            invalid=True,
            dynamic=True,
            error=InvalidToolInputError(
                tool_name,
                f"AI_TypeValidationError: Type validation failed: Value: {shown}.\n"
                f"Error message: {message}",
            ),
        )
    return ParsedToolCall(input=value, invalid=False, dynamic=is_dynamic)


def _validate(schema: Any, value: Any) -> None:
    if schema is None:
        return
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        schema.model_validate(value)
        return
    validate_json_schema(value, schema)


#: Validators keyed by the identity of the schema mapping a tool holds (``Tool`` and
#: ``BuiltinTool`` keep theirs for their lifetime), least recently used last out. Each
#: entry keeps its schema alive, so an id is never reused while its entry exists.
_VALIDATORS: OrderedDict[int, tuple[Mapping[str, Any], Any]] = OrderedDict()
_VALIDATOR_CACHE_SIZE = 1024


def _validator(schema: Mapping[str, Any]) -> Any:
    # Checking a schema against its metaschema costs more than validating an input, and
    # serialising it to a cache key on every call costs about as much: build each
    # tool's validator once, found again by the identity of the tool's schema.
    key = id(schema)
    entry = _VALIDATORS.get(key)
    if entry is not None and entry[0] is schema:
        _VALIDATORS.move_to_end(key)
        return entry[1]
    plain = dict(schema)
    validator_cls = jsonschema.validators.validator_for(plain)
    validator_cls.check_schema(plain)
    validator = validator_cls(plain)
    _VALIDATORS[key] = (schema, validator)
    if len(_VALIDATORS) > _VALIDATOR_CACHE_SIZE:
        _VALIDATORS.popitem(last=False)
    return validator


def validate_json_schema(value: Any, schema: Mapping[str, Any]) -> None:
    """``jsonschema.validate`` with a validator cached per schema object.

    Valid input is decided by ``is_valid`` alone; only invalid input pays for the error
    search.

    Raises:
        jsonschema.ValidationError: the best-matching error, as ``jsonschema.validate``.
        jsonschema.SchemaError: the schema itself is invalid.
    """
    validator = _validator(schema)
    if validator.is_valid(value):
        return
    error = jsonschema.exceptions.best_match(validator.iter_errors(value))
    if error is not None:
        raise error
