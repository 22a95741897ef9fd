"""Tool specs, the built-in tool vocabulary, permission modes and built-in filtering."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeAlias

import jsonschema
from pydantic import BaseModel, ConfigDict, Field, field_validator

from ._json import JSONValue
from ._stream_parts import WireModel

__all__ = [
    "BASELINE_INPUT_SCHEMAS",
    "BUILTIN_TOOL_NAMES",
    "PERMISSION_MODES",
    "QUESTIONS_TOOL_DESCRIPTION",
    "QUESTIONS_TOOL_INPUT_SCHEMA",
    "QUESTIONS_TOOL_OUTPUT_SCHEMA",
    "TOOL_USE_KINDS",
    "BuiltinTool",
    "BuiltinToolFiltering",
    "PermissionMode",
    "ToolSpec",
    "ToolUseKind",
    "baseline_input_problems",
    "builtin_table_problems",
    "common_tool",
    "inactive_tool_reason",
    "is_builtin_tool_included",
    "is_execution_denied",
    "requires_approval",
]

PermissionMode: TypeAlias = Literal["allow-reads", "allow-edits", "allow-all"]
ToolUseKind: TypeAlias = Literal["readonly", "edit", "bash"]

PERMISSION_MODES: tuple[PermissionMode, ...] = ("allow-reads", "allow-edits", "allow-all")
TOOL_USE_KINDS: tuple[ToolUseKind, ...] = ("readonly", "edit", "bash")

#: The description of the shared questions built-in.
QUESTIONS_TOOL_DESCRIPTION = "Ask the user one or more questions"

#: The common built-in names, in registry order.
BUILTIN_TOOL_NAMES: tuple[str, ...] = (
    "read",
    "write",
    "edit",
    "bash",
    "grep",
    "glob",
    "webSearch",
    "askUserQuestions",
)


def _strings(*names: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {name: {"type": "string"} for name in names},
        "required": list(names),
    }


QUESTIONS_TOOL_INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "allowPartialAnswers": {"type": "boolean"},
        "questions": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string", "minLength": 1},
                    "question": {"type": "string", "minLength": 1},
                    "header": {"type": "string"},
                    "options": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "id": {"type": "string", "minLength": 1},
                                "label": {"type": "string", "minLength": 1},
                                "description": {"type": "string"},
                                "preview": {"type": "string"},
                            },
                            "required": ["id", "label"],
                        },
                    },
                    "allowMultiple": {"type": "boolean"},
                    "allowFreeForm": {
                        "anyOf": [
                            {"type": "boolean"},
                            {
                                "type": "object",
                                "properties": {"secret": {"type": "boolean"}},
                                "required": ["secret"],
                            },
                        ]
                    },
                },
                "required": ["id", "question"],
            },
        },
    },
    "required": ["allowPartialAnswers", "questions"],
}

_ANSWERS: dict[str, Any] = {
    "type": "object",
    "additionalProperties": {
        "type": "object",
        "properties": {
            "optionIds": {"type": "array", "items": {"type": "string"}},
            "freeform": {"type": "string"},
        },
        "required": ["optionIds"],
    },
}

QUESTIONS_TOOL_OUTPUT_SCHEMA: dict[str, Any] = {
    "oneOf": [
        {
            "type": "object",
            "properties": {"action": {"const": "answered"}, "answers": _ANSWERS},
            "required": ["action", "answers"],
        },
        {
            "type": "object",
            "properties": {"action": {"const": "partially-answered"}, "answers": _ANSWERS},
            "required": ["action", "answers"],
        },
        {
            "type": "object",
            "properties": {"action": {"const": "declined"}},
            "required": ["action"],
        },
        {
            "type": "object",
            "properties": {"action": {"const": "cancelled"}},
            "required": ["action"],
        },
    ]
}

#: The baseline input of every common built-in: all fields strings, all required.
BASELINE_INPUT_SCHEMAS: Mapping[str, dict[str, Any]] = {
    "read": _strings("file_path"),
    "write": _strings("file_path", "content"),
    "edit": _strings("file_path", "old_string", "new_string"),
    "bash": _strings("command"),
    "grep": _strings("pattern"),
    "glob": _strings("pattern"),
    "webSearch": _strings("query"),
    "askUserQuestions": QUESTIONS_TOOL_INPUT_SCHEMA,
}

_BASELINE_SAMPLE_STRINGS: tuple[str, ...] = (
    "",
    "a",
    "src/main.py",
    "/abs/path/with space.txt",
    "ünïcødé ✓",
    "line1\nline2",
    "$(echo hi) && ls | grep x",
)


def _baseline_samples(common_name: str) -> list[dict[str, Any]]:
    if common_name == "askUserQuestions":
        return [
            {"allowPartialAnswers": False, "questions": [{"id": "q1", "question": "Why?"}]},
            {
                "allowPartialAnswers": True,
                "questions": [
                    {
                        "id": "q1",
                        "question": "Pick one",
                        "header": "H",
                        "options": [{"id": "a", "label": "A"}],
                        "allowMultiple": True,
                        "allowFreeForm": {"secret": True},
                    }
                ],
            },
        ]
    fields = list(BASELINE_INPUT_SCHEMAS[common_name]["properties"])
    return [dict.fromkeys(fields, sample) for sample in _BASELINE_SAMPLE_STRINGS]


def baseline_input_problems(common_name: str, input_schema: Mapping[str, Any]) -> list[str]:
    """List why ``input_schema`` does not accept every baseline input of a built-in.

    An adapter's schema may add optional fields but must accept every input that the
    baseline schema accepts: it may require no field beyond the baseline's, and must
    validate representative baseline inputs (empty, unicode, multi-line and shell-like
    strings).

    Args:
        common_name: One of :data:`BUILTIN_TOOL_NAMES`.
        input_schema: The adapter's JSON Schema for the tool input.

    Returns:
        Human-readable problems; empty when the schema is compatible.

    Raises:
        ValueError: when ``common_name`` is not a common built-in name.
    """
    if common_name not in BASELINE_INPUT_SCHEMAS:
        raise ValueError(
            f"{common_name!r} is not a common built-in tool name; "
            f"expected one of {', '.join(BUILTIN_TOOL_NAMES)}."
        )
    problems: list[str] = []
    try:
        validator_cls = jsonschema.validators.validator_for(dict(input_schema))
        validator_cls.check_schema(dict(input_schema))
    except jsonschema.SchemaError as error:
        return [f"the input schema is not a valid JSON Schema: {error.message}"]
    baseline_fields = set(BASELINE_INPUT_SCHEMAS[common_name].get("required", []))
    extra_required = sorted(set(input_schema.get("required", [])) - baseline_fields)
    if extra_required:
        problems.append(
            f"it requires {', '.join(extra_required)}, which baseline '{common_name}' inputs "
            "do not carry; make those fields optional"
        )
    validator = validator_cls(input_schema)
    for sample in _baseline_samples(common_name):
        errors = list(validator.iter_errors(sample))
        if errors:
            problems.append(f"it rejects the baseline input {sample!r}: {errors[0].message}")
            break
    return problems


class ToolSpec(WireModel):
    """A host tool as the adapter sees it: ``{name, description?, inputSchema?}``.

    ``name`` is the ``toolName`` the runtime must use on later ``tool-call`` parts.
    """

    name: str = Field(min_length=1)
    description: str | None = None
    input_schema: dict[str, JSONValue] | None = None


class BuiltinTool(BaseModel):
    """A runtime-executed tool an adapter declares in ``builtin_tools``.

    The adapter keys it by ``common_name or native_name``; that key is the ``toolName``
    the runtime emits. A tool with no common equivalent omits ``common_name``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    description: str | None = None
    input_schema: dict[str, Any] = Field(default_factory=lambda: {"type": "object"})
    output_schema: dict[str, Any] | None = None
    native_name: str | None = None
    common_name: str | None = None
    tool_use_kind: ToolUseKind | None = None

    @field_validator("common_name")
    @classmethod
    def _known_common_name(cls, value: str | None) -> str | None:
        if value is not None and value not in BUILTIN_TOOL_NAMES:
            raise ValueError(
                f"common_name {value!r} is not a common built-in name; "
                f"use one of {', '.join(BUILTIN_TOOL_NAMES)} or leave it unset"
            )
        return value

    @property
    def key(self) -> str | None:
        """The name the runtime emits on ``tool-call`` parts (``common_name or native_name``)."""
        return self.common_name or self.native_name


def common_tool(
    common_name: str,
    *,
    native_name: str,
    input_schema: Mapping[str, Any] | None = None,
    description: str | None = None,
    tool_use_kind: ToolUseKind | None = None,
) -> BuiltinTool:
    """Build a built-in with a common equivalent, checking its input schema.

    Args:
        common_name: One of :data:`BUILTIN_TOOL_NAMES`.
        native_name: The runtime's own name for the tool.
        input_schema: The runtime's input schema; defaults to the baseline schema.
        description: Optional description.
        tool_use_kind: ``readonly``, ``edit`` or ``bash``.

    Returns:
        The built-in tool with both names set.

    Raises:
        ValueError: when the schema does not accept every baseline input.
    """
    schema = dict(input_schema) if input_schema is not None else None
    if schema is None:
        schema = (
            dict(BASELINE_INPUT_SCHEMAS[common_name])
            if common_name in BASELINE_INPUT_SCHEMAS
            else {}
        )
    problems = baseline_input_problems(common_name, schema)
    if problems:
        raise ValueError(
            f"The input schema of built-in '{common_name}' (native '{native_name}') does not "
            f"accept every baseline input: {'; '.join(problems)}."
        )
    if description is None and common_name == "askUserQuestions":
        description = QUESTIONS_TOOL_DESCRIPTION
    return BuiltinTool(
        description=description,
        input_schema=schema,
        native_name=native_name,
        common_name=common_name,
        tool_use_kind=tool_use_kind,
        output_schema=QUESTIONS_TOOL_OUTPUT_SCHEMA if common_name == "askUserQuestions" else None,
    )


class BuiltinToolFiltering(WireModel):
    """Which built-ins the runtime may use: ``allow`` lists or ``deny`` lists names."""

    mode: Literal["allow", "deny"]
    tool_names: list[str]


def is_builtin_tool_included(filtering: BuiltinToolFiltering | None, tool_name: str) -> bool:
    """Return whether a built-in is usable under ``filtering``.

    No filter includes everything; ``allow`` includes exactly the listed names; ``deny``
    includes everything not listed.
    """
    if filtering is None:
        return True
    listed = tool_name in filtering.tool_names
    return listed if filtering.mode == "allow" else not listed


def inactive_tool_reason(tool_name: str) -> str:
    """The exact denial reason for a call to an inactive tool."""
    return f"Tool '{tool_name}' is inactive due to the HarnessAgent tool filtering policy."


def is_execution_denied(output: object) -> bool:
    """Whether a tool result's ``output`` is an ``execution-denied`` one.

    That is what the agent submits for a host tool it did not run (denied by the user
    or ``toolApproval``, or inactive): ``{"type": "execution-denied"}`` with an optional
    ``reason`` (and ``providerOptions``), nothing else.
    """
    return (
        isinstance(output, Mapping)
        and output.get("type") == "execution-denied"
        and set(output) <= {"type", "reason", "providerOptions"}
    )


def requires_approval(permission_mode: PermissionMode, tool_use_kind: ToolUseKind | None) -> bool:
    """Return whether a built-in of ``tool_use_kind`` needs approval under the mode.

    ``allow-all`` approves everything; ``allow-edits`` gates ``bash``; ``allow-reads``
    gates ``edit`` and ``bash``. A built-in with no kind is treated as ``edit`` (the
    conservative choice real runtimes make for unknown tools).
    """
    kind = tool_use_kind or "edit"
    if permission_mode == "allow-all":
        return False
    if permission_mode == "allow-edits":
        return kind == "bash"
    return kind in ("edit", "bash")


def builtin_table_problems(builtin_tools: Mapping[str, BuiltinTool]) -> list[str]:
    """List inconsistencies in an adapter's built-in table (keys vs names)."""
    problems: list[str] = []
    for key, tool in builtin_tools.items():
        if tool.key is not None and tool.key != key:
            problems.append(
                f"built-in '{key}' is keyed differently from its name '{tool.key}' "
                "(key it by common_name or native_name)"
            )
        if tool.common_name is not None:
            problems.extend(
                f"built-in '{key}': {problem}"
                for problem in baseline_input_problems(tool.common_name, tool.input_schema)
            )
    return problems
