"""Bounded simulation: no per-session object outlives its session; the summary streams.

Nothing here is timed: the memory bound is shown by counting live objects (weak
references after a collection), and the RSS curve from 1,000 to 100,000 sessions is a
benchmark (``python -m benchmarks --only simulate-memory``).
"""

from __future__ import annotations

import gc
import json
import math
import tempfile
import weakref
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness_testkit.simulate import _runner
from harness_testkit.simulate._loading import builtin_scenario_path, load_scenario
from harness_testkit.simulate._runner import SimulationObserver, SimulationOptions, simulate
from harness_testkit.simulate._summary import (
    LatencySketch,
    SessionCounts,
    SessionReport,
    SessionReports,
    percentile,
    read_last_line,
)

from .support import write_scenario

pytestmark = pytest.mark.anyio

TINY = """
    sessions: 1
    harness:
      profile: pi
      script:
        turns:
          - steps:
              - actions: [{text: hello}]
    actions:
      - prompt: hi
"""


class _LiveObjects(SimulationObserver):
    """Tracks every session run and report by weak reference; at each session's end,
    counts how many are still alive after a collection."""

    def __init__(self) -> None:
        self.runs: list[weakref.ref[object]] = []
        self.reports: list[weakref.ref[SessionReport]] = []
        self.peak_runs = 0
        self.peak_reports = 0

    def session_finished(self, report: SessionReport) -> None:
        self.reports.append(weakref.ref(report))
        gc.collect()
        self.peak_runs = max(self.peak_runs, sum(ref() is not None for ref in self.runs))
        self.peak_reports = max(self.peak_reports, sum(ref() is not None for ref in self.reports))


@pytest.mark.requirement("DECISION-010")
async def test_the_runner_keeps_no_session_object_after_the_session_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    watcher = _LiveObjects()
    original_init = _runner._SessionRun.__init__

    def tracked_init(self: _runner._SessionRun, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        watcher.runs.append(weakref.ref(self))

    monkeypatch.setattr(_runner._SessionRun, "__init__", tracked_init)
    loaded = load_scenario(write_scenario(tmp_path, TINY))
    options = SimulationOptions(
        out_dir=tmp_path / "out", sandbox_root=tmp_path / "sb", sessions=40, concurrency=3
    )
    summary = await simulate(loaded, options, watcher)
    assert summary.status == "completed"
    assert len(watcher.runs) == len(watcher.reports) == 40
    # While the run went on, only the sessions in flight were alive (the one ending
    # included), never the ones that had ended before.
    assert watcher.peak_runs <= 3
    assert watcher.peak_reports <= 3
    gc.collect()
    assert [ref for ref in watcher.runs if ref() is not None] == []
    assert [ref for ref in watcher.reports if ref() is not None] == []
    # What the summary reports was accumulated, not kept.
    assert summary.totals.turns == 40
    assert summary.latency.samples == 40
    assert summary.ended == {"completed": 40, "failed": 0, "cancelled": 0}


@pytest.mark.requirement("DECISION-010")
async def test_reports_are_read_back_from_the_transcripts_in_index_order(tmp_path: Path) -> None:
    loaded = load_scenario(builtin_scenario_path("many-sessions"))
    options = SimulationOptions(
        out_dir=tmp_path / "out",
        sandbox_root=tmp_path / "sb",
        sessions=6,
        concurrency=4,
        timings=True,
    )
    summary = await simulate(loaded, options)
    assert isinstance(summary.sessions, SessionReports)
    assert [report.session_id for report in summary.sessions] == [f"sim-0-{n}" for n in range(6)]
    assert summary.sessions[-1].session_id == "sim-0-5"
    assert [report.session_id for report in summary.sessions[1:3]] == ["sim-0-1", "sim-0-2"]
    with pytest.raises(IndexError, match="out of range"):
        summary.sessions[6]
    total = SessionCounts()
    for report in summary.sessions:
        total.add(report.counts)
        assert report.status == "completed"
        assert len(report.latencies) == report.counts.slices
    assert total == summary.totals
    # summary.json is written entry by entry, the same text as the whole document.
    written = (tmp_path / "out" / "summary.json").read_text(encoding="utf-8")
    assert written == json.dumps(summary.to_wire(), indent=2, ensure_ascii=False) + "\n"
    assert [entry["sessionId"] for entry in json.loads(written)["sessions"]] == [
        f"sim-0-{n}" for n in range(6)
    ]


async def test_failed_sessions_keep_their_error_and_the_first_few_are_kept(
    tmp_path: Path,
) -> None:
    file = write_scenario(
        tmp_path,
        """
        sessions: 7
        concurrency: 2
        actions:
          - prompt: hi
          - approve: all
        """,
    )
    summary = await simulate(
        load_scenario(file), SimulationOptions(out_dir=tmp_path / "out", sandbox_root=tmp_path)
    )
    assert summary.status == "failed"
    assert summary.ended["failed"] == 7
    assert len(summary.failures) == 5
    assert all("waits for none of them" in (r.error or "") for r in summary.sessions)
    assert summary.to_wire()["sessionsFailed"] == 7


def test_a_transcript_cut_short_reads_as_cancelled(tmp_path: Path) -> None:
    path = tmp_path / "sim-0-0.jsonl"
    path.write_text('{"kind":"session-start"}\n{"kind":"part"', encoding="utf-8")
    report = SessionReport.from_transcript("sim-0-0", path)
    assert report.status == "cancelled"
    assert report.error == "the transcript ends without a session-end line"
    missing = SessionReport.from_transcript("sim-0-1", tmp_path / "nope.jsonl")
    assert missing.status == "cancelled"
    assert (missing.error or "").startswith("no transcript")


@given(
    st.lists(st.text(alphabet="ab\u00e9{}", min_size=1, max_size=40), min_size=1, max_size=5),
    st.integers(min_value=0, max_value=20_000),
)
def test_the_last_line_is_read_from_the_end_whatever_the_lengths(
    lines: list[str], padding: int
) -> None:
    text = "x" * padding + "\n" + "\n".join(lines) + "\n"
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "t.jsonl"
        path.write_text(text, encoding="utf-8")
        expected = [line for line in text.splitlines() if line][-1]
        assert read_last_line(path) == expected


def test_a_report_survives_its_session_end_line() -> None:
    report = SessionReport(
        "sim-3-9",
        "failed",
        SessionCounts(turns=2, slices=3, steps=4, tool_calls=1, errors=1),
        [0.5, 0.25, 0.125],
        "ValueError: no",
    )
    path_line = json.dumps(report.end_line())
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "sim-3-9.jsonl"
        path.write_text('{"kind":"session-start"}\n' + path_line + "\n", encoding="utf-8")
        back = SessionReport.from_transcript("sim-3-9", path)
    assert back == SessionReport(
        "sim-3-9", "failed", report.counts, report.latencies, "ValueError: no", path
    )


@given(
    st.lists(st.floats(min_value=1e-6, max_value=1e4, allow_nan=False), min_size=1, max_size=300),
    st.sampled_from([50, 90, 99, 100]),
)
def test_sketch_percentiles_are_within_the_relative_error(values: list[float], q: int) -> None:
    sketch = LatencySketch(0.01)
    sketch.update(values)
    exact = percentile(values, q)
    estimate = sketch.percentile(q)
    assert exact is not None
    assert estimate is not None
    assert math.isclose(estimate, exact, rel_tol=0.01 + 1e-12)


def test_the_sketch_stays_small_whatever_the_sample_count() -> None:
    sketch = LatencySketch(0.01)
    assert sketch.percentile(50) is None
    value = 1e-9
    for _ in range(200_000):
        sketch.add(value)
        value = value * 1.000173 if value < 1e6 else 1e-9
    sketch.add(-1.0)
    sketch.add(float("nan"))
    sketch.add(float("inf"))
    assert sketch.samples == 200_003
    # Bounded by the value range (1e-9 .. 1e6 at 1 %), not by the 200,003 samples.
    assert sketch.buckets <= math.ceil(math.log(1e15) / math.log(1.01 / 0.99)) + 2
    with pytest.raises(ValueError, match="relative_error"):
        LatencySketch(0)
