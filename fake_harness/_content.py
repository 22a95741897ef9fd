"""Content helpers of the engine: chunking, JSON text, structured output, tool names."""

from __future__ import annotations

import json
import random
import re

from harness_testkit.spec import JSONValue

from ._script import Chunking

__all__ = ["chunk_text", "instance_of", "mcp_tool_name", "output_text"]


def mcp_tool_name(server: str, tool: str) -> str:
    """The tool name an MCP call carries: ``mcp__<server>__<tool>``."""
    return f"mcp__{server}__{tool}"


def chunk_text(text: str, chunking: Chunking, rng: random.Random) -> list[str]:
    """Split ``text`` into deltas that concatenate back to it exactly."""
    if not text:
        return []
    if chunking.mode == "whole":
        return [text]
    if chunking.mode == "chars":
        return [text[index : index + chunking.size] for index in range(0, len(text), chunking.size)]
    words = re.findall(r"\S+\s*|\s+", text)
    chunks: list[str] = []
    index = 0
    while index < len(words):
        take = rng.randint(1, chunking.max_words)
        chunks.append("".join(words[index : index + take]))
        index += take
    return chunks


def output_text(value: JSONValue) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def instance_of(schema: JSONValue, text: str, depth: int = 0) -> JSONValue:
    """A small document satisfying ``schema`` (strings become ``text``): the runtime's
    structured output when the script names none."""
    if not isinstance(schema, dict) or depth > 8:
        return text
    if "const" in schema:
        return schema["const"]
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return enum[0]
    if "default" in schema:
        return schema["default"]
    for key in ("anyOf", "oneOf", "allOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            return instance_of(options[0], text, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    properties = schema.get("properties")
    if kind == "object" or (kind is None and isinstance(properties, dict)):
        properties = properties if isinstance(properties, dict) else {}
        required = schema.get("required")
        names = required if isinstance(required, list) and required else list(properties)
        if not names and schema.get("additionalProperties") is not False:
            return {"text": text}
        return {
            str(name): instance_of(properties.get(str(name), {}), text, depth + 1) for name in names
        }
    if kind == "array":
        minimum = schema.get("minItems")
        count = minimum if isinstance(minimum, int) else 0
        return [instance_of(schema.get("items", {}), text, depth + 1) for _ in range(count)]
    if kind in ("number", "integer"):
        low = schema.get("minimum")
        return low if isinstance(low, int | float) and not isinstance(low, bool) else 0
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    return text
