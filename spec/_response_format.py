"""Response formats: plain text or JSON (optionally with a JSON Schema)."""

from __future__ import annotations

from typing import Annotated, Literal, TypeAlias

from pydantic import Field

from ._json import JSONValue
from ._stream_parts import WireModel

__all__ = ["JsonResponseFormat", "ResponseFormat", "TextResponseFormat"]


class TextResponseFormat(WireModel):
    """Plain text output."""

    type: Literal["text"] = "text"


class JsonResponseFormat(WireModel):
    """JSON output, optionally constrained by ``schema`` (a JSON Schema object)."""

    type: Literal["json"] = "json"
    schema_: dict[str, JSONValue] | None = Field(default=None, alias="schema")
    name: str | None = None
    description: str | None = None


ResponseFormat: TypeAlias = Annotated[
    TextResponseFormat | JsonResponseFormat, Field(discriminator="type")
]
