"""Host tools: ``tool(...)`` definitions, input parsing and context validation."""

from __future__ import annotations

import json
import json.scanner
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, TypeAlias, cast

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


class ParsedToolCall(NamedTuple):
    """The outcome of validating a harness ``tool-call`` against the merged tool set (a
    named tuple: one is made per call)."""

    input: Any
    invalid: bool
    dynamic: bool
    error: BaseException | None = None


#: The standard decoder's scanner: one JSON value from an index, ``(value, end)``;
#: ``StopIteration`` when none starts there, a ``JSONDecodeError`` when one is broken.
_scan_once: Callable[[str, int], tuple[Any, int]] = json.scanner.make_scanner(
    cast(Any, json.JSONDecoder())  # the scanner reads the decoder's settings
)


def parse_json_text(text: str) -> tuple[bool, Any]:
    """Parse JSON text; ``''`` is ``{}``. Returns ``(ok, value_or_raw_text)``."""
    if not text or text.isspace():  # what ``text.strip() == ""`` says, without a copy
        return True, {}
    # Text that is one value and nothing else is scanned directly; anything else
    # (surrounding whitespace, trailing data, no value) goes through ``json.loads``,
    # which decides it, as it decides everything.
    try:
        value, end = _scan_once(text, 0)
    except (StopIteration, ValueError):
        pass
    else:
        if end == len(text):
            return True, value
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
    # Blank text validates as ``{}``, but an invalid call shows what the model sent: the
    # AI SDK re-parses the raw text for the part, and blank text is no JSON (TRANSLATE-004).
    shown_input = value if ok and input_text and not input_text.isspace() else input_text
    declared = tools.get(tool_name)
    if declared is None and not (provider_executed is True and dynamic is True):
        return ParsedToolCall(
            input=shown_input,
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
        return ParsedToolCall(value, False, True)
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
            input=shown_input,
            invalid=True,
            dynamic=True,
            error=InvalidToolInputError(
                tool_name,
                f"AI_TypeValidationError: Type validation failed: Value: {shown}.\n"
                f"Error message: {message}",
            ),
        )
    return ParsedToolCall(value, False, is_dynamic)  # positional: keywords cost more


def _validate(schema: Any, value: Any) -> None:
    if schema is None:
        return
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        schema.model_validate(value)
        return
    # validate_json_schema, inlined: this runs for every tool call.
    validator, check = _validator(schema)
    if (check is None or not check(value)) and not validator.is_valid(value):
        _raise_best_match(validator, value)


#: Validators keyed by the identity of the schema mapping a tool holds (``Tool`` and
#: ``BuiltinTool`` keep theirs for their lifetime), least recently used last out. Each
#: entry keeps its schema alive, so an id is never reused while its entry exists. The
#: entry's third member is the schema's plain check (see :func:`_plain_check`), or None.
_VALIDATORS: OrderedDict[int, tuple[Mapping[str, Any], Any, Callable[[Any], bool] | None]] = (
    OrderedDict()
)
#: The same validators by the schema's content (its JSON, keys in their order), for a
#: schema object not seen before whose content was: tools made afresh per session or turn
#: with the same schema check it against the metaschema once. A shared validator holds a
#: copy of the schema: a tool's schema is read when its first call is validated.
_BY_CONTENT: OrderedDict[str, tuple[Any, Callable[[Any], bool] | None]] = OrderedDict()
_VALIDATOR_CACHE_SIZE = 1024


def _validator(schema: Mapping[str, Any]) -> tuple[Any, Callable[[Any], bool] | None]:
    # Checking a schema against its metaschema costs more than validating an input, and
    # so would serialising it to a cache key on every call: build each tool's validator
    # once, found again by the identity of the tool's schema.
    key = id(schema)
    entry = _VALIDATORS.get(key)
    if entry is not None and entry[0] is schema:
        _VALIDATORS.move_to_end(key)
        return entry[1], entry[2]
    plain = dict(schema)
    try:
        # Key order kept: it decides which error jsonschema's best match reports.
        content: str | None = json.dumps(plain, allow_nan=False)
    except (TypeError, ValueError):  # not JSON: validated on its own, not shared
        content = None
    built = _BY_CONTENT.get(content) if content is not None else None
    if built is None:
        if content is not None:  # a shared validator holds its own copy of the schema
            plain = json.loads(content)
        validator_cls = jsonschema.validators.validator_for(plain)
        validator_cls.check_schema(plain)
        built = (validator_cls(plain), _plain_check(plain))
    if content is not None:
        _BY_CONTENT[content] = built
        _BY_CONTENT.move_to_end(content)
        if len(_BY_CONTENT) > _VALIDATOR_CACHE_SIZE:
            _BY_CONTENT.popitem(last=False)
    _VALIDATORS[key] = (schema, *built)
    if len(_VALIDATORS) > _VALIDATOR_CACHE_SIZE:
        _VALIDATORS.popitem(last=False)
    return built


#: ``type`` keywords the plain check knows, with the Python types a parsed JSON value of
#: that type has. ``integer`` also admits integral floats, as JSON Schema does.
_BOOLEAN: tuple[type, ...] = (bool,)
_INTEGER: tuple[type, ...] = (int,)
_PLAIN_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "boolean": _BOOLEAN,
    "integer": _INTEGER,
    "number": (int, float),
    "object": (dict,),
    "array": (list,),
    "null": (type(None),),
}
_ANNOTATIONS = frozenset({"description", "title"})


def _plain_check(schema: Mapping[str, Any]) -> Callable[[Any], bool] | None:
    """A quick *valid* verdict for the schema shape tools almost always have.

    The shape: ``{"type": "object", "properties": {name: {"type": T}}, "required": [...],
    "additionalProperties": bool}`` with primitive ``T`` (annotations allowed, no
    ``$schema``). The returned function answers ``True`` only for values that schema
    surely accepts (exact JSON types: a ``str`` subclass or a tuple is left to
    jsonschema); ``False`` means "ask jsonschema", never "invalid". Any other schema
    returns ``None``: jsonschema alone decides.
    """
    if set(schema) - {"type", "properties", "required", "additionalProperties"} - _ANNOTATIONS:
        return None
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    additional = schema.get("additionalProperties", True)
    if (
        schema.get("type") != "object"
        or type(properties) is not dict
        or type(required) is not list
        or any(type(name) is not str for name in required)
        or type(additional) is not bool
    ):
        return None
    types: dict[str, tuple[type, ...] | None] = {}
    for name, subschema in properties.items():
        if type(subschema) is not dict or set(subschema) - {"type"} - _ANNOTATIONS:
            return None
        kind = subschema.get("type")
        if kind is None:
            types[name] = None
        elif type(kind) is str and kind in _PLAIN_TYPES:
            types[name] = _PLAIN_TYPES[kind]
        else:
            return None
    needed = tuple(required)

    def check(value: Any) -> bool:
        if type(value) is not dict:
            return False
        for name in needed:
            if name not in value:
                return False
        for name, item in value.items():
            if name not in types:
                if additional:
                    continue
                return False
            allowed = types[name]
            if allowed is None:
                continue
            kind = type(item)
            if kind is bool:
                if allowed is _BOOLEAN:
                    continue
                return False
            if kind in allowed:
                continue
            if kind is float and allowed is _INTEGER and item.is_integer():
                continue
            return False
        return True

    return check


def validate_json_schema(value: Any, schema: Mapping[str, Any]) -> None:
    """``jsonschema.validate`` with a validator cached per schema object.

    Valid input is decided by a plain check (the common tool-schema shape) or by
    ``is_valid``; only invalid input pays for the error search.

    Raises:
        jsonschema.ValidationError: the best-matching error, as ``jsonschema.validate``.
        jsonschema.SchemaError: the schema itself is invalid.
    """
    validator, check = _validator(schema)
    if (check is None or not check(value)) and not validator.is_valid(value):
        _raise_best_match(validator, value)


def _raise_best_match(validator: Any, value: Any) -> None:
    """Raise the error ``jsonschema.validate`` would for a value ``validator`` rejects."""
    error = jsonschema.exceptions.best_match(validator.iter_errors(value))
    if error is not None:
        raise error
