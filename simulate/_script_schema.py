"""The JSON Schema of a fake-harness script as people write it: shorthands included.

Pydantic describes :class:`~harness_testkit.fake_harness.Script` in its canonical form
(``{type: host-tool, tool: deploy}``), but scripts are written with shorthands
(``- hostTool: deploy``, ``- Hello`` for a text action, ``- mcp: server/tool``) that the
model expands before validating. :func:`script_schema_defs` starts from pydantic's schema
and adds, for every action, the shorthand spelling next to the canonical one, so an
editor completes and checks an inline ``script`` of a scenario as the loader reads it.
Field descriptions come from the models' ``Attributes:`` docstring sections.
"""

from __future__ import annotations

import copy
import inspect
import re
from typing import Any

from pydantic import BaseModel
from pydantic.alias_generators import to_camel

from harness_testkit.fake_harness import Script

__all__ = ["ACTION_SHORTHANDS", "add_field_descriptions", "script_schema_defs"]

#: Shorthand key -> (the action definition it stands for, the field its value fills);
#: the camelCase spellings of ``scripting``'s shorthands (a test keeps the two in step).
ACTION_SHORTHANDS: dict[str, tuple[str, str]] = {
    "text": ("TextAction", "text"),
    "reasoning": ("ReasoningAction", "text"),
    "builtin": ("BuiltinCallAction", "tool"),
    "hostTool": ("HostToolCallAction", "tool"),
    "raw": ("RawAction", "value"),
    "error": ("ErrorAction", "error"),
    "delay": ("DelayAction", "seconds"),
    "fileChange": ("FileMutationAction", "changes"),
    "waitUserMessage": ("WaitForUserMessageAction", "timeout"),
}

#: Definitions whose tag field the loader needs (a discriminated union reads it).
_TAGGED = {
    "type": (
        "TextAction",
        "ReasoningAction",
        "BuiltinCallAction",
        "HostToolCallAction",
        "McpCallAction",
        "FileMutationAction",
        "RawAction",
        "ErrorAction",
        "DelayAction",
        "WaitForUserMessageAction",
    ),
    "kind": (
        "DelayPartFault",
        "CrashFault",
        "HangFault",
        "MalformedPartFault",
        "CloseEarlyFault",
        "DropFinishStepFault",
    ),
}

_ATTRIBUTE = re.compile(r"^    (\w+): (.*)$")


def _attribute_docs(model: type[BaseModel]) -> dict[str, str]:
    """``field alias -> description`` from the ``Attributes:`` section of the docstring."""
    doc = inspect.cleandoc(model.__doc__ or "")
    _, found, section = doc.partition("\nAttributes:\n")
    if not found:
        return {}
    docs: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in section.splitlines():
        match = _ATTRIBUTE.match(line)
        if match:
            current = docs.setdefault(to_camel(match.group(1).rstrip("_")), [])
            current.append(match.group(2).strip())
        elif line.startswith("        ") and current is not None:
            current.append(line.strip())
        elif line.strip():
            break  # the next section
    return {name: " ".join(words) for name, words in docs.items()}


def add_field_descriptions(
    defs: dict[str, Any], models: dict[str, type[BaseModel]]
) -> dict[str, Any]:
    """Give each property of ``defs`` its docstring description and drop the generated
    titles (``Streaminput``), which say less than the key itself."""
    for name, definition in defs.items():
        properties = definition.get("properties")
        if not isinstance(properties, dict):
            continue
        model = models.get(name)
        docs = _attribute_docs(model) if model is not None else {}
        for key, prop in properties.items():
            prop.pop("title", None)
            described = docs.get(key) or (docs.get("continue") if key == "continue" else None)
            if described and "description" not in prop:
                prop["description"] = described
    return defs


def _models(root: type[BaseModel]) -> dict[str, type[BaseModel]]:
    """Every model reachable from ``root``'s fields, by class name."""
    found: dict[str, type[BaseModel]] = {}
    pending: list[Any] = [root]
    while pending:
        item = pending.pop()
        if isinstance(item, type) and issubclass(item, BaseModel):
            if item.__name__ in found:
                continue
            found[item.__name__] = item
            pending.extend(field.annotation for field in item.model_fields.values())
        else:
            pending.extend(getattr(item, "__args__", ()))
    return found


def _untitled(prop: dict[str, Any]) -> dict[str, Any]:
    return {key: copy.deepcopy(item) for key, item in prop.items() if key != "title"}


def _shorthand(key: str, target: str, field: str, canonical: dict[str, Any]) -> dict[str, Any]:
    properties = {
        name: _untitled(prop)
        for name, prop in canonical["properties"].items()
        if name not in ("type", field)
    }
    value = _untitled(canonical["properties"][field])
    if key == "waitUserMessage":
        value = {
            "anyOf": [{"const": True}, {"type": "number", "minimum": 0}, {"type": "null"}],
            "description": "`true` to wait without a timeout, or the timeout in clock seconds.",
        }
    properties = {key: value, **properties}
    required = [
        key,
        *(name for name in canonical.get("required", []) if name not in ("type", field)),
    ]
    tag = canonical["properties"]["type"]["const"]
    return {
        "type": "object",
        "title": f"{key} (shorthand)",
        "description": f"Shorthand for `{{type: {tag}, {field}: ...}}`. "
        + str(canonical.get("description", "")),
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


def _mcp_shorthand(canonical: dict[str, Any]) -> dict[str, Any]:
    properties = {
        name: _untitled(prop)
        for name, prop in canonical["properties"].items()
        if name not in ("type", "server", "tool")
    }
    return {
        "type": "object",
        "title": "mcp (shorthand)",
        "description": "Shorthand for `{type: mcp, server: ..., tool: ...}`: "
        "`mcp: <server>/<tool>`. " + str(canonical.get("description", "")),
        "properties": {
            "mcp": {
                "type": "string",
                "pattern": "^[^/]+/.+$",
                "description": "The scripted MCP server and its tool, as `server/tool`.",
            },
            **properties,
        },
        "required": ["mcp"],
        "additionalProperties": False,
    }


def script_schema_defs() -> dict[str, Any]:
    """The definitions of a script, ``Script`` among them, for a schema's ``$defs``.

    References point into the same ``$defs`` (``#/$defs/ScriptStep``), so the result can
    be merged into another schema's definitions or be one on its own.
    """
    schema = Script.model_json_schema(by_alias=True, mode="validation")
    defs: dict[str, Any] = schema.pop("$defs")
    schema.pop("$schema", None)
    defs["Script"] = schema
    for tag, names in _TAGGED.items():
        for name in names:
            required = defs[name].setdefault("required", [])
            if tag not in required:
                required.insert(0, tag)
    actions = defs["ScriptStep"]["properties"]["actions"]
    canonical = actions["items"]
    alternatives: list[dict[str, Any]] = [
        {"type": "string", "description": "Shorthand for `{type: text, text: ...}`."},
        {"oneOf": canonical["oneOf"]},
        *(
            _shorthand(key, target, field, defs[target])
            for key, (target, field) in ACTION_SHORTHANDS.items()
        ),
        _mcp_shorthand(defs["McpCallAction"]),
    ]
    actions["items"] = {
        "anyOf": alternatives,
        "description": "An action: canonical (`{type: host-tool, tool: deploy}`), a "
        "shorthand keyed by its kind (`hostTool: deploy`, `mcp: server/tool`, "
        "`waitUserMessage: true`), or a plain string for a text action.",
    }
    return add_field_descriptions(defs, _models(Script))
