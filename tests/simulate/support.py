"""Helpers of the simulation tests: writing scenarios and reading transcripts."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

from harness_testkit.simulate._runner import normalize_transcript_line

__all__ = ["read_lines", "stable_bytes", "write_scenario"]


def write_scenario(folder: Path, text: str, name: str = "scenario.yaml") -> Path:
    """Write a dedented scenario file and return its path."""
    path = folder / name
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


def read_lines(path: Path) -> list[dict[str, Any]]:
    """The JSON lines of a transcript."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def stable_bytes(path: Path) -> bytes:
    """A transcript re-serialized without its volatile fields, for byte comparison."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        stable = normalize_transcript_line(json.loads(line))
        out.append(json.dumps(stable, ensure_ascii=False, separators=(",", ":")))
    return ("\n".join(out) + "\n").encode("utf-8")
