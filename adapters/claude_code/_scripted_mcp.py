"""The script's MCP servers as in-process MCP servers of the CLI.

A scripted MCP tool answers every call with its scripted result; the CLI calls it like
any MCP tool (``mcp__<server>__<tool>``), so the runtime really executes it.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from harness_testkit.scripting import McpTool, Script
from harness_testkit.spec import ToolUseKind

from ._builtins import HOST_SERVER, mcp_input_schema, mcp_parts

__all__ = ["scripted_mcp_servers", "scripted_tool_kind"]


def _handler(spec: McpTool) -> Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]:
    result = spec.result
    text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)

    async def handle(arguments: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": text}], "is_error": spec.is_error}

    return handle


def scripted_mcp_servers(script: Script) -> dict[str, Any]:
    """``claude-agent-sdk`` server configs for the script's MCP servers, by name."""
    from claude_agent_sdk import create_sdk_mcp_server, tool

    servers: dict[str, Any] = {}
    for name, server in script.mcp_servers.items():
        if name == HOST_SERVER:
            continue
        tools = [
            tool(
                tool_name,
                spec.description or f"Scripted tool {tool_name}",
                mcp_input_schema(spec.input_schema),
            )(_handler(spec))
            for tool_name, spec in server.tools.items()
        ]
        servers[name] = create_sdk_mcp_server(name, tools=tools)
    return servers


def scripted_tool_kind(script: Script, native: str) -> ToolUseKind | None:
    """The scripted approval kind of ``mcp__<server>__<tool>`` (``None`` when unknown)."""
    parts = mcp_parts(native)
    if parts is None:
        return None
    server = script.mcp_servers.get(parts[0])
    tool = server.tools.get(parts[1]) if server is not None else None
    return tool.tool_use_kind if tool is not None else None
