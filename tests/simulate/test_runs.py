"""Running scenarios: transcripts, determinism, concurrency, failures and cancellation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from harness_testkit.simulate._loading import builtin_scenario_path, load_scenario
from harness_testkit.simulate._runner import (
    VOLATILE_FIELDS,
    SessionReport,
    SimulationObserver,
    SimulationOptions,
    percentile,
    simulate,
)
from harness_testkit.simulate._scenario import HostAction
from harness_testkit.spec import ConsumerPart

from .support import read_lines, stable_bytes, write_scenario

pytestmark = pytest.mark.anyio

SLOW_SCENARIO = """
    sessions: 3
    concurrency: 3
    agent:
      tools:
        slow: {output: {ok: true}, delaySeconds: 0.5}
    harness:
      profile: claude-code
      script:
        turns:
          - steps:
              - actions: [{text: calling}, {hostTool: slow, id: s1}]
              - actions: [{text: done}]
    actions:
      - prompt: one
      - prompt: two
      - prompt: three
"""


def _options(tmp_path: Path, run: str, **overrides: Any) -> SimulationOptions:
    return SimulationOptions(
        out_dir=tmp_path / run, sandbox_root=tmp_path / "sandboxes", **overrides
    )


async def test_quickstart_records_every_part_and_host_action(tmp_path: Path) -> None:
    loaded = load_scenario(builtin_scenario_path("quickstart"))
    summary = await simulate(loaded, _options(tmp_path, "out"))
    assert summary.status == "completed"
    lines = read_lines(tmp_path / "out" / "sessions" / "sim-0-0.jsonl")
    kinds = [line["kind"] for line in lines]
    assert kinds[0] == "session-start"
    assert kinds[-1] == "session-end"
    actions = [line["action"] for line in lines if line["kind"] == "action"]
    assert [next(iter(action)) for action in actions] == ["prompt", "approve", "compact", "prompt"]
    parts = [line["part"] for line in lines if line["kind"] == "part"]
    names = {part.get("toolName") for part in parts if part["type"] == "tool-call"}
    assert {"weather", "write", "fileChange", "compaction", "read"} <= names
    assert any(part["type"] == "tool-approval-request" for part in parts)
    totals = summary.to_wire()["totals"]
    assert totals["approvals"] == 1
    assert totals["compactions"] == 1
    assert totals["fileChanges"] == 1
    assert totals["turns"] == 2
    assert totals["errors"] == 0
    written = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert written["status"] == "completed"
    assert set(written["latency"]) == {"unit", "samples", "p50", "p90", "p99", "relativeError"}
    assert written["latency"]["samples"] == 3
    assert written["latency"]["p99"] is not None
    assert set(written["volatileFields"]) == set(VOLATILE_FIELDS)
    assert list((tmp_path / "sandboxes").iterdir()) == []  # no sandbox left behind


@pytest.mark.requirement("DECISION-017")
async def test_same_scenario_and_seed_give_byte_identical_transcripts(tmp_path: Path) -> None:
    loaded = load_scenario(builtin_scenario_path("cross-process"))
    await simulate(loaded, _options(tmp_path, "a"))
    await simulate(loaded, _options(tmp_path, "b"))
    first = tmp_path / "a" / "sessions" / "sim-0-0.jsonl"
    second = tmp_path / "b" / "sessions" / "sim-0-0.jsonl"
    # The raw files, not a normalised copy: a team diffs them as written.
    assert first.read_bytes() == second.read_bytes()
    assert not any(key in line for line in read_lines(first) for key in VOLATILE_FIELDS), (
        "a wall-clock field was written without --timings"
    )
    summary_a = json.loads((tmp_path / "a" / "summary.json").read_text())
    summary_b = json.loads((tmp_path / "b" / "summary.json").read_text())
    # The summary keeps the run's latencies; only its declared volatile fields differ.
    assert summary_a["latency"]["samples"] == summary_b["latency"]["samples"] > 0
    for volatile in VOLATILE_FIELDS:
        summary_a.pop(volatile, None)
        summary_b.pop(volatile, None)
    assert summary_a == summary_b
    assert all("latency" not in entry for entry in summary_a["sessions"])


@pytest.mark.requirement("DECISION-017")
async def test_timings_write_latencies_into_transcripts_and_session_entries(
    tmp_path: Path,
) -> None:
    loaded = load_scenario(builtin_scenario_path("quickstart"))
    summary = await simulate(loaded, _options(tmp_path, "out", timings=True))
    lines = read_lines(tmp_path / "out" / "sessions" / "sim-0-0.jsonl")
    ends = [line for line in lines if line["kind"] == "action-end"]
    assert ends
    assert all(isinstance(end["latencySeconds"], float) for end in ends)
    assert len(lines[-1]["latencySeconds"]) == 3  # one per slice
    written = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert written["sessions"][0]["latency"]["samples"] == 3
    assert summary.sessions[0].latencies == lines[-1]["latencySeconds"]
    # Without them the same run reads back no per-session latencies, not zero samples.
    await simulate(loaded, _options(tmp_path, "plain"))
    plain = json.loads((tmp_path / "plain" / "summary.json").read_text())
    assert "latency" not in plain["sessions"][0]
    assert plain["latency"]["samples"] == 3


async def test_cross_process_actions_carry_states_to_fresh_agents(tmp_path: Path) -> None:
    loaded = load_scenario(builtin_scenario_path("cross-process"))
    summary = await simulate(loaded, _options(tmp_path, "out"))
    assert summary.status == "completed", summary.sessions[0].error
    ends = [
        line
        for line in read_lines(tmp_path / "out" / "sessions" / "sim-0-0.jsonl")
        if line["kind"] == "action-end"
    ]
    carried = [
        (end["index"], end.get("carried"), end["process"]) for end in ends if "carried" in end
    ]
    assert carried == [
        (0, "continue-turn", 2),
        (2, "continue-turn", 3),
        (4, "resume-session", 4),
        (6, "resume-session", 5),
    ]
    assert ends[1]["turnState"] == "awaiting-tool-result"
    assert ends[-1]["turnState"] == "idle"


class _Concurrency(SimulationObserver):
    def __init__(self) -> None:
        self.active = 0
        self.peak = 0
        self.finished: list[str] = []

    def session_started(self, session_id: str) -> None:
        self.active += 1
        self.peak = max(self.peak, self.active)

    def session_finished(self, report: SessionReport) -> None:
        self.active -= 1
        self.finished.append(report.session_id)


async def test_many_sessions_run_concurrently_and_reproducibly(tmp_path: Path) -> None:
    loaded = load_scenario(builtin_scenario_path("many-sessions"))
    watcher = _Concurrency()
    wide = await simulate(loaded, _options(tmp_path, "wide", sessions=8, concurrency=4), watcher)
    assert wide.status == "completed"
    assert 1 < watcher.peak <= 4
    assert sorted(watcher.finished) == sorted(f"sim-0-{n}" for n in range(8))
    narrow = await simulate(loaded, _options(tmp_path, "narrow", sessions=8, concurrency=1))
    transcripts = sorted((tmp_path / "wide" / "sessions").glob("*.jsonl"))
    assert [path.name for path in transcripts] == [f"sim-0-{n}.jsonl" for n in range(8)]
    for path in transcripts:
        assert stable_bytes(path) == stable_bytes(tmp_path / "narrow" / "sessions" / path.name)
    # Generated scripts differ per session; totals add up.
    assert stable_bytes(transcripts[0]) != stable_bytes(transcripts[1])
    assert wide.to_wire()["totals"] == narrow.to_wire()["totals"]
    assert wide.to_wire()["totals"]["turns"] == 16


async def test_the_seed_names_sessions_and_changes_generated_runs(tmp_path: Path) -> None:
    loaded = load_scenario(builtin_scenario_path("many-sessions"))
    await simulate(loaded, _options(tmp_path, "s0", sessions=1))
    await simulate(loaded, _options(tmp_path, "s5", sessions=1, seed=5))
    assert (tmp_path / "s5" / "sessions" / "sim-5-0.jsonl").is_file()
    assert stable_bytes(tmp_path / "s0" / "sessions" / "sim-0-0.jsonl") != stable_bytes(
        tmp_path / "s5" / "sessions" / "sim-5-0.jsonl"
    )


async def test_stale_transcripts_of_an_earlier_run_are_removed(tmp_path: Path) -> None:
    loaded = load_scenario(builtin_scenario_path("many-sessions"))
    await simulate(loaded, _options(tmp_path, "out", sessions=3))
    await simulate(loaded, _options(tmp_path, "out", sessions=1))
    assert [p.name for p in (tmp_path / "out" / "sessions").iterdir()] == ["sim-0-0.jsonl"]


async def test_an_action_that_does_not_match_fails_only_its_session(tmp_path: Path) -> None:
    file = write_scenario(
        tmp_path,
        """
        sessions: 2
        agent:
          tools:
            weather: {output: sunny}
        actions:
          - prompt: hi
          - approve: weather
          - prompt: never sent
        """,
    )
    summary = await simulate(load_scenario(file), _options(tmp_path, "out"))
    assert summary.status == "failed"
    assert [report.status for report in summary.sessions] == ["failed", "failed"]
    assert "waits for none of them" in (summary.sessions[0].error or "")
    lines = read_lines(tmp_path / "out" / "sessions" / "sim-0-0.jsonl")
    assert [line["kind"] for line in lines if line["kind"] in ("error", "session-end")] == [
        "error",
        "session-end",
    ]
    assert lines[-1]["status"] == "failed"
    assert sum(1 for line in lines if line["kind"] == "action") == 2
    assert list((tmp_path / "sandboxes").iterdir()) == []


class _CancelOnToolCall(SimulationObserver):
    def __init__(self) -> None:
        self.tool_called = anyio.Event()
        self.actions: list[str] = []

    def action_started(self, session_id: str, index: int, action: HostAction) -> None:
        self.actions.append(session_id)

    def part(self, session_id: str, index: int, part: ConsumerPart) -> None:
        if part.type == "tool-call":
            self.tool_called.set()


async def test_cancellation_destroys_sandboxes_and_keeps_transcripts(tmp_path: Path) -> None:
    loaded = load_scenario(write_scenario(tmp_path, SLOW_SCENARIO))
    observer = _CancelOnToolCall()
    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as group:

            async def cancel_soon() -> None:
                await observer.tool_called.wait()
                scope.cancel()

            group.start_soon(cancel_soon)
            await simulate(loaded, _options(tmp_path, "out"), observer)
    assert scope.cancelled_caught
    assert list((tmp_path / "sandboxes").iterdir()) == []
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["status"] == "interrupted"
    assert summary["sessionsRun"] == 3
    transcripts = [read_lines(tmp_path / "out" / "sessions" / f"sim-0-{n}.jsonl") for n in range(3)]
    for lines in transcripts:
        assert lines[0]["kind"] == "session-start"
        assert lines[-1]["kind"] == "session-end"
        assert lines[-1]["status"] == "cancelled"
    # What was streamed before the interruption is kept.
    assert any(line["kind"] == "part" for lines in transcripts for line in lines)


def test_percentiles_use_the_nearest_rank() -> None:
    values = [float(n) for n in range(1, 101)]
    assert (percentile(values, 50), percentile(values, 90), percentile(values, 99)) == (
        50.0,
        90.0,
        99.0,
    )
    assert percentile([3.0], 99) == 3.0
    assert percentile([], 50) is None


@pytest.mark.docker
async def test_the_docker_sandbox_runs_the_quickstart(tmp_path: Path) -> None:
    from tests.sandbox.support import docker_provider_or_skip, finish_docker_provider

    provider = await anyio.to_thread.run_sync(docker_provider_or_skip)
    try:
        summary = await simulate(
            load_scenario(builtin_scenario_path("quickstart")),
            _options(tmp_path, "out"),
            provider=provider,
        )
    finally:
        await anyio.to_thread.run_sync(finish_docker_provider, provider)
    assert summary.status == "completed", summary.sessions[0].error
    assert summary.to_wire()["sandbox"] == "docker"
