"""``python -m benchmarks`` runs and writes a well-formed results file (no timing asserted)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _numbers_named(value: Any, suffix: str, path: str = "") -> Iterator[tuple[str, Any]]:
    """Every ``(path, value)`` whose key ends with ``suffix``, at any depth."""
    if isinstance(value, dict):
        for key, item in value.items():
            here = f"{path}.{key}"
            if key.endswith(suffix):
                yield here, item
            yield from _numbers_named(item, suffix, here)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _numbers_named(item, suffix, f"{path}[{index}]")


def _positive(value: Any) -> bool:
    """A finite number above zero (a bool is not a number here)."""
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value > 0
    )


def test_quick_agent_benchmark_writes_valid_results(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", "--only", "agent", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert "Agent throughput" in done.stdout  # the rich table was printed

    results = json.loads(out.read_text(encoding="utf-8"))
    assert results["schema_version"] == 1
    assert results["quick"] is True
    assert {"nproc", "lscpu_head", "python", "commit"} <= results["machine"].keys()
    assert results["machine"]["nproc"] >= 1
    assert list(results["benchmarks"]) == ["agent"]

    agent = results["benchmarks"]["agent"]
    assert {"title", "seconds", "rows", "targets", "notes"} <= agent.keys()
    assert [row["script"] for row in agent["rows"]] == ["text-heavy", "tool-heavy"]
    for row in agent["rows"]:
        for key in (
            "fake_parts_per_second",
            "agent_parts_per_second",
            "fake_turns_per_second",
            "agent_turns_per_second",
            "overhead_ratio",
            "turn_time_ratio",
        ):
            assert _positive(row[key]), (key, row[key])

    ratios = list(_numbers_named(results, "ratio"))
    assert ratios, "no ratio in the results"
    for where, value in ratios:
        assert _positive(value), (where, value)

    assert [target["id"] for target in results["targets"]] == [
        "agent.overhead.text-heavy",
        "agent.overhead.tool-heavy",
    ]
    for target in results["targets"]:
        assert target["section"] == "agent"
        assert target["unit"] == "x"
        assert _positive(target["limit"])
        assert _positive(target["measured"])
        assert isinstance(target["met"], bool)
        assert target["met"] == (target["measured"] <= target["limit"])
    assert all(isinstance(note, str) and note for note in results["notes"])
    assert len(results["notes"]) >= sum(1 for t in results["targets"] if not t["met"])
