"""Concurrency: 1, 10, 100 and 1,000 sessions at once on the local sandbox.

One agent (one fake harness, one local provider) serves N sessions. All N are created
concurrently, then each runs one turn of the ``small`` script concurrently (text, a
``Write`` and a ``Read`` in the sandbox), and all are destroyed after every turn ended,
so N sessions are alive together at the peak.

Two kinds of run per level, levels in increasing order:

- **throughput runs** (no tracing): turns/s and consumer parts/s of the turn phase, the
  share of it the cyclic garbage collector took, creation time per session, and the RSS
  growth of the process (``VmHWM`` after ``clear_refs``, minus ``VmRSS`` before; from
  ``/proc``, no psutil). RSS rarely shrinks, so only the first run of a level counts
  for RSS. ``--quick`` skips them at 1,000 sessions.
- **one memory run** under ``tracemalloc``: peak traced Python memory from before
  creation to after the turns, minus what was traced before, divided by N. It misses
  memory of child processes and C allocations outside Python's allocator; RSS covers
  those.
"""

from __future__ import annotations

import gc
import tempfile
import time
import tracemalloc
import uuid
from pathlib import Path
from typing import Any

import anyio

from harness_testkit.reference import HarnessAgent, LocalSandboxProvider

from ._measure import (
    _PROJECT_DIRS,
    REPOSITORY,
    Column,
    Section,
    Target,
    median,
    memory_status,
    reset_peak_rss,
    source_contains,
)
from ._workloads import consume, make_agent, small_script

__all__ = ["MEMORY_LIMIT_MIB", "measure"]

#: Target: peak traced memory per session with 1,000 concurrent sessions.
MEMORY_LIMIT_MIB = 0.2
LEVELS = (1, 10, 100, 1000)
#: Untraced (throughput) runs per level; the traced (memory) run happens once per level.
QUICK_RUNS = {1: 3, 10: 3, 100: 2, 1000: 0}
FULL_RUNS = {1: 5, 10: 5, 100: 5, 1000: 3}
MIB = 1024 * 1024

GC_FINDING = (
    "Cause: every harness part makes cyclic garbage in reference/_slice_runner.py SliceRunner._next "
    "(a task group, two tasks and a cancel scope per part, cancelled exceptions with "
    "tracebacks), and with 1,000 live sessions each collection walks far more objects. "
    "The SliceRunner._next fix proposed under `agent` (one abort watcher per slice waking "
    "the part queue with a sentinel) removes it: measured with the change monkeypatched "
    "in, the 1,000-session turn phase went from 14.4 s to 2.7 s and collector time from "
    "7.4 s to 0.9 s; on a patched copy with every proposed fix, 1,000 sessions ran 337 "
    "turns/s instead of 40 (collector share 49% -> 35%)."
)


async def _run_level(base: Path, sessions: int, *, trace: bool, frames: int = 1) -> dict[str, Any]:
    """Create ``sessions`` sessions, run one turn on each, destroy them; measure.

    With ``trace``, tracemalloc runs (keeping ``frames`` frames per allocation) and the
    result carries a ``snapshot`` taken after the turns, all sessions still alive.
    """
    agent = make_agent(small_script(), LocalSandboxProvider(base / uuid.uuid4().hex[:12]))
    gc.collect()
    before = memory_status()
    peak_reset = reset_peak_rss()
    if trace:
        tracemalloc.start(frames)
        traced_before, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
    created: list[Any] = [None] * sessions
    parts = [0] * sessions
    collector = _CollectorClock()
    started = time.perf_counter()
    try:
        async with anyio.create_task_group() as group:
            for index in range(sessions):
                group.start_soon(_create, agent, created, index)
        made = time.perf_counter()
        with collector:
            async with anyio.create_task_group() as group:
                for index in range(sessions):
                    group.start_soon(_turn, agent, created[index], parts, index)
        turned = time.perf_counter()
        peak_traced = None
        snapshot = None
        if trace:
            _, peak = tracemalloc.get_traced_memory()
            peak_traced = peak - traced_before
            if frames > 1:
                snapshot = tracemalloc.take_snapshot()
        after = memory_status()
    finally:
        if trace:
            tracemalloc.stop()
        async with anyio.create_task_group() as group:
            for session in created:
                if session is not None:
                    group.start_soon(session.destroy)
    destroyed = time.perf_counter()
    rss_growth = None
    if "rss" in before:
        top = after["peak_rss"] if peak_reset else after["rss"]
        rss_growth = max(0, top - before["rss"])
    return {
        "create_seconds": made - started,
        "turn_seconds": turned - made,
        "destroy_seconds": destroyed - turned,
        "parts": sum(parts),
        "gc_seconds": collector.seconds,
        "peak_traced_bytes": peak_traced,
        "rss_growth_bytes": rss_growth,
        "snapshot": snapshot,
    }


async def _top_allocations(base: Path, sessions: int, top: int = 6) -> str:
    """Where the memory of live sessions goes, charged to the nearest project line."""
    run = await _run_level(base, sessions, trace=True, frames=30)
    return _charge(run["snapshot"], sessions, top)


def _charge(snapshot: tracemalloc.Snapshot, sessions: int, top: int) -> str:
    charged: dict[str, int] = {}
    total = 0
    for trace in snapshot.traces:
        total += trace.size
        where = "other"
        for frame in trace.traceback:  # most recent call first
            try:
                relative = Path(frame.filename).resolve().relative_to(REPOSITORY)
            except ValueError:
                continue
            if relative.parts[0] in _PROJECT_DIRS:
                where = f"{relative.as_posix()}:{frame.lineno}"
                break
        charged[where] = charged.get(where, 0) + trace.size
    ranked = sorted(charged.items(), key=lambda item: item[1], reverse=True)[:top]
    return (
        f"top allocations alive after {sessions} concurrent turns (tracemalloc, "
        f"{total / sessions / 1024:.0f} KiB/session traced): "
        + ", ".join(f"{where} {size / sessions / 1024:.1f} KiB/session" for where, size in ranked)
    )


class _CollectorClock:
    """Wall time the cyclic garbage collector runs while the context is active."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._since: float | None = None

    def _callback(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._since = time.perf_counter()
        elif self._since is not None:
            self.seconds += time.perf_counter() - self._since
            self._since = None

    def __enter__(self) -> _CollectorClock:
        gc.callbacks.append(self._callback)
        return self

    def __exit__(self, *exc_info: object) -> None:
        gc.callbacks.remove(self._callback)


async def _create(agent: HarnessAgent, created: list[Any], index: int) -> None:
    created[index] = await agent.create_session()


async def _turn(agent: HarnessAgent, session: Any, parts: list[int], index: int) -> None:
    parts[index] = await consume(await agent.stream(session=session, prompt="go"))


def _scaling_note(section: Section) -> None:
    """Say so when throughput falls with more sessions, and what the collector costs."""
    rows = {row["sessions"]: row for row in section.rows if row["turns_per_second"]}
    if 100 not in rows or 1000 not in rows:
        return
    drop = rows[100]["turns_per_second"] / rows[1000]["turns_per_second"]
    if drop < 1.5:
        return
    cause = (
        GC_FINDING
        if source_contains(
            "harness_testkit.reference._slice_runner:SliceRunner._next", "create_task_group"
        )
        else "Each collection walks every live object, and 1,000 live sessions hold many."
    )
    section.notes.append(
        f"Throughput falls {drop:.1f}x from 100 to 1,000 sessions; the cyclic garbage "
        f"collector takes {rows[1000]['gc_share']:.0%} of the 1,000-session turn phase "
        f"(vs {rows[100]['gc_share']:.0%} at 100). {cause}"
    )


def measure(quick: bool) -> Section:
    """Run the concurrency benchmark.

    Args:
        quick: Fewer throughput runs per level.

    Returns:
        The section: one row per level and the memory target.
    """
    section = Section(
        name="concurrency",
        title="Concurrent sessions on the local sandbox (one turn each)",
        columns=[
            Column("sessions", "sessions", "{:,}"),
            Column("turns_per_second", "turns/s", "{:,.1f}"),
            Column("parts_per_second", "parts/s", "{:,.0f}"),
            Column("gc_share", "GC share of turns", "{:.0%}"),
            Column("create_ms_per_session", "create ms/session", "{:.2f}"),
            Column("peak_traced_mib_per_session", "peak MiB/session (tracemalloc)", "{:.3f}"),
            Column("rss_growth_mib_per_session", "RSS MiB/session", "{:.3f}"),
        ],
    )
    started = time.perf_counter()
    anyio.run(_measure, section, quick)
    section.seconds = time.perf_counter() - started
    return section


async def _measure(section: Section, quick: bool) -> None:
    runs_per_level = QUICK_RUNS if quick else FULL_RUNS
    with tempfile.TemporaryDirectory(prefix="harness-testkit-bench-sessions-") as directory:
        base = Path(directory)
        await _run_level(base, 10, trace=False)  # warm-up: imports, pydantic schemas
        for sessions in LEVELS:
            runs = runs_per_level[sessions]
            throughput = [await _run_level(base, sessions, trace=False) for _ in range(runs)]
            traced = await _run_level(base, sessions, trace=True)
            row: dict[str, Any] = {
                "sessions": sessions,
                "runs": runs,
                "parts_per_turn": traced["parts"] / sessions,
                "peak_traced_mib_per_session": traced["peak_traced_bytes"] / sessions / MIB,
                "turns_per_second": None,
                "parts_per_second": None,
                "create_ms_per_session": None,
                "destroy_ms_per_session": None,
                "rss_growth_mib_per_session": None,
                "gc_share": None,
            }
            if throughput:
                turn_seconds = median([run["turn_seconds"] for run in throughput])
                rss = throughput[0]["rss_growth_bytes"]
                row |= {
                    "turns_per_second": sessions / turn_seconds,
                    "parts_per_second": median(
                        [run["parts"] / run["turn_seconds"] for run in throughput]
                    ),
                    "create_ms_per_session": median([run["create_seconds"] for run in throughput])
                    / sessions
                    * 1000,
                    "destroy_ms_per_session": median([run["destroy_seconds"] for run in throughput])
                    / sessions
                    * 1000,
                    "rss_growth_mib_per_session": None if rss is None else rss / sessions / MIB,
                    "gc_share": median(
                        [run["gc_seconds"] / run["turn_seconds"] for run in throughput]
                    ),
                    "turn_seconds_samples": [run["turn_seconds"] for run in throughput],
                }
            section.rows.append(row)
        if quick:
            section.notes.append(
                "--quick: no untraced run at 1,000 sessions (about 20-30 s each with the "
                "current agent), so its throughput, creation time and RSS are not shown; the "
                "memory target comes from the traced run, which always happens."
            )
        _scaling_note(section)
        last = section.rows[-1]
        target = Target(
            id="concurrency.memory-per-session",
            description=(
                f"peak traced memory per session with {last['sessions']:,} concurrent local "
                "sessions (tracemalloc peak divided by sessions)"
            ),
            limit=MEMORY_LIMIT_MIB,
            measured=last["peak_traced_mib_per_session"],
            unit="MiB",
        )
        section.targets.append(target)
        if not target.met:
            section.notes.append(
                f"{target.id} missed ({target.measured:.3f} MiB > {MEMORY_LIMIT_MIB:g} MiB); "
                + await _top_allocations(base, 100)
            )
