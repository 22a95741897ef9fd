"""Claude Code's built-in tools: native names, the common vocabulary and approval kinds.

The input schemas are the ones the Claude Code CLI (2.1.x) offers the model, reduced to
property types; the CLI validates the full schemas itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from harness_testkit.spec import BuiltinTool, common_tool

__all__ = [
    "BUILTIN_TOOLS",
    "HOST_SERVER",
    "key_of_native",
    "mcp_input_schema",
    "mcp_parts",
    "native_of_key",
]

#: The in-process MCP server that carries the host tools (name reserved, as upstream).
HOST_SERVER = "harness-tools"


def _schema(required: dict[str, str], optional: Mapping[str, str] | None = None) -> dict[str, Any]:
    properties = {name: {"type": kind} for name, kind in {**required, **(optional or {})}.items()}
    return {
        "type": "object",
        "properties": properties,
        "required": list(required),
        "additionalProperties": False,
    }


def _table() -> dict[str, BuiltinTool]:
    return {
        "read": common_tool(
            "read",
            native_name="Read",
            tool_use_kind="readonly",
            input_schema=_schema(
                {"file_path": "string"}, {"offset": "integer", "limit": "integer"}
            ),
        ),
        "write": common_tool(
            "write",
            native_name="Write",
            tool_use_kind="edit",
            input_schema=_schema({"file_path": "string", "content": "string"}),
        ),
        "edit": common_tool(
            "edit",
            native_name="Edit",
            tool_use_kind="edit",
            input_schema=_schema(
                {"file_path": "string", "old_string": "string", "new_string": "string"},
                {"replace_all": "boolean"},
            ),
        ),
        "bash": common_tool(
            "bash",
            native_name="Bash",
            tool_use_kind="bash",
            input_schema=_schema(
                {"command": "string"},
                {"timeout": "number", "description": "string", "run_in_background": "boolean"},
            ),
        ),
        "glob": common_tool(
            "glob",
            native_name="Glob",
            tool_use_kind="readonly",
            input_schema=_schema({"pattern": "string"}, {"path": "string"}),
        ),
        "grep": common_tool(
            "grep",
            native_name="Grep",
            tool_use_kind="readonly",
            input_schema=_schema(
                {"pattern": "string"},
                {"path": "string", "glob": "string", "output_mode": "string"},
            ),
        ),
        "webSearch": common_tool("webSearch", native_name="WebSearch", tool_use_kind="readonly"),
        "WebFetch": BuiltinTool(native_name="WebFetch"),
        "NotebookEdit": BuiltinTool(native_name="NotebookEdit", tool_use_kind="edit"),
    }


#: Built-ins keyed by ``common_name or native_name`` (the names on ``tool-call`` parts).
BUILTIN_TOOLS: Mapping[str, BuiltinTool] = MappingProxyType(_table())

_KEY_OF_NATIVE = {tool.native_name: key for key, tool in BUILTIN_TOOLS.items()}


def key_of_native(native: str) -> str | None:
    """The built-in key for a native tool name, ``None`` for a tool not in the table."""
    return _KEY_OF_NATIVE.get(native)


def native_of_key(key: str) -> str:
    """The native name for a built-in key (the key itself for native-keyed tools)."""
    tool = BUILTIN_TOOLS.get(key)
    return tool.native_name if tool is not None and tool.native_name else key


def mcp_parts(name: str) -> tuple[str, str] | None:
    """``(server, tool)`` of an ``mcp__<server>__<tool>`` name, else ``None``."""
    if not name.startswith("mcp__"):
        return None
    server, separator, tool = name[len("mcp__") :].partition("__")
    if not separator or not server or not tool:
        return None
    return server, tool


def mcp_input_schema(schema: Mapping[str, Any] | None) -> dict[str, Any]:
    """``schema`` as an in-process MCP tool's input schema that ``claude-agent-sdk`` keeps.

    The SDK passes a dict through as a JSON Schema only when it has a string ``type`` and
    ``properties``; any other dict is read as ``{parameter: python type}``, so
    ``{"type": "object"}`` would become one required parameter named ``type`` and the
    CLI would refuse every call ("'type' is a required property").
    """
    return {"type": "object", "properties": {}, **(schema or {})}
