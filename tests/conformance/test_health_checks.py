"""Hypothesis health checks stay on in every property the conformance suite runs.

Only ``too_slow`` may be suppressed (the adapter's speed is not the generator's fault);
a strategy that filters too much or draws too much data must fail loudly, not be
silenced. Read from the sources, so every settings object is covered, including ones
built inside a check.
"""

from __future__ import annotations

import ast
from pathlib import Path

CONFORMANCE = Path(__file__).resolve().parents[2] / "conformance"


def test_only_too_slow_is_ever_suppressed() -> None:
    found = []
    for path in sorted(CONFORMANCE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.keyword) and node.arg == "suppress_health_check":
                found.append((path.relative_to(CONFORMANCE).as_posix(), ast.unparse(node.value)))
    assert found, "no settings found: the scan is broken"
    assert [(where, value) for where, value in found if value != "[HealthCheck.too_slow]"] == []
