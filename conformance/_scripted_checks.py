"""Scripted checks: adapters implementing the kit's scripting extension (filled below)."""

from __future__ import annotations

__all__: list[str] = []
