"""How the reference agent's cost grows: per delta with longer turns, per session with more.

Both on the minimal scripted adapter of :mod:`benchmarks._scripted` (in-memory sandbox),
asyncio:

- **per-delta cost**: one turn of one text block of 1,000, 10,000 and 100,000 deltas,
  the sizes interleaved round by round (ABBA); CPU microseconds per delta (median) and
  the growth, per-delta cost at the largest size over the smallest (1.00 is flat; a
  quadratic hot path shows up here first).
- **per-session memory**: 10, 100, 1,000 and 10,000 concurrent sessions, each running one
  short turn. Every run happens in a fresh child process, so RSS growth (after a full
  collection, every session alive, minus RSS before) is not hidden by memory an earlier
  run freed; RSS MiB per session at each level, the slope between the smallest and the
  largest level (MiB per added session) and CPU time per turn at both ends.

``--quick`` stops at 1,000 sessions and runs each level once.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import Any

from ._measure import REPOSITORY, Column, Sample, Section, Target, interleave_sync, median
from ._scripted import Workload, run_python

__all__ = ["DELTA_GROWTH_LIMIT", "RSS_LIMIT_MIB", "measure", "sessions_in_fresh_process"]

DELTA_SIZES = (1_000, 10_000, 100_000)
SESSION_LEVELS = (10, 100, 1_000, 10_000)
QUICK_SESSION_LEVELS = (10, 100, 1_000)
#: Per-delta cost at 100k deltas over 1k: at most this (flat within 10%).
DELTA_GROWTH_LIMIT = 1.10
#: RSS growth per concurrent session at 1,000 and 10,000 sessions.
RSS_LIMIT_MIB = 0.05
CHILD_TIMEOUT = 900.0
MIB = 1024 * 1024


def _scaled(values: Sequence[int], scale: float) -> list[int]:
    return list(dict.fromkeys(max(2, round(value * scale)) for value in values))


def sessions_in_fresh_process(sessions: int) -> Sample:
    """Run ``sessions`` concurrent short turns in a fresh process (after a two-session
    warm-up run there); return its sample, whose ``extra`` has ``rss_growth_bytes``."""
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.scaling", "--sessions", str(sessions)],
        cwd=REPOSITORY,
        capture_output=True,
        text=True,
        timeout=CHILD_TIMEOUT,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"the {sessions}-session child failed (exit {done.returncode}): {done.stderr[-2000:]}"
        )
    data = json.loads(done.stdout.strip().splitlines()[-1])
    return Sample(
        seconds=data["seconds"],
        parts=data["parts"],
        turns=data["turns"],
        cpu_seconds=data["cpu_seconds"],
        extra=data["extra"],
    )


def measure(quick: bool, scale: float = 1.0) -> Section:
    """Run the scaling benchmark.

    Args:
        quick: Three rounds of deltas; sessions up to 1,000, once each.
        scale: Multiplies the delta sizes and session counts (a smoke run).

    Returns:
        The section: one row per delta size and per session level, and the targets.
    """
    section = Section(
        name="scaling",
        title="Cost growth of the reference agent (minimal scripted adapter, asyncio)",
        columns=[
            Column("case", "case", "{}"),
            Column("cpu_us_per_delta", "CPU us/delta", "{:.2f}"),
            Column("wall_us_per_delta", "wall us/delta", "{:.2f}"),
            Column("cpu_ms_per_turn", "CPU ms/turn", "{:.3f}"),
            Column("rss_mib_per_session", "RSS MiB/session", "{:.4f}"),
        ],
    )
    started = time.perf_counter()
    _deltas(section, 3 if quick else 5, _scaled(DELTA_SIZES, scale))
    levels = _scaled(QUICK_SESSION_LEVELS if quick else SESSION_LEVELS, scale)
    _sessions(section, 1 if quick else 2, levels, full=not quick and scale == 1)
    section.seconds = time.perf_counter() - started
    return section


def _deltas(section: Section, rounds: int, sizes: list[int]) -> None:
    workloads = [Workload(f"text-{size}", "text", size=size) for size in sizes]
    turns = {workload.name: workload.parts() for workload in workloads}
    samples = interleave_sync(
        rounds,
        [(workload.name, _runner(workload, turns[workload.name])) for workload in workloads],
    )
    per_delta: dict[int, list[float]] = {}
    for workload in workloads:
        runs = samples[workload.name]
        cpu = [(run.cpu_seconds or 0.0) / workload.size * 1e6 for run in runs]
        per_delta[workload.size] = cpu
        section.rows.append(
            {
                "case": f"{workload.size:,} deltas/turn",
                "deltas": workload.size,
                "rounds": rounds,
                "cpu_us_per_delta": median(cpu),
                "wall_us_per_delta": median([run.seconds / workload.size * 1e6 for run in runs]),
                "cpu_ms_per_turn": median([(run.cpu_seconds or 0.0) * 1000 for run in runs]),
                "cpu_us_per_delta_samples": cpu,
            }
        )
    small, large = sizes[0], sizes[-1]
    # per-round growth: the sizes of a round ran side by side
    growth = median([b / a for a, b in zip(per_delta[small], per_delta[large], strict=True)])
    section.rows.append(
        {
            "case": f"growth {large:,} / {small:,} deltas",
            "delta_cost_growth_ratio": growth,
            "cpu_us_per_delta": None,
        }
    )
    section.columns.append(Column("delta_cost_growth_ratio", "growth", "{:.2f}x"))
    section.targets.append(
        Target(
            id="scaling.per-delta-cost",
            description=(
                f"CPU time per text delta at {large:,} deltas per turn over {small:,} (flat: 1.00)"
            ),
            limit=DELTA_GROWTH_LIMIT,
            measured=growth,
            unit="x",
        )
    )


def _runner(workload: Workload, turn: list[dict[str, Any]]) -> Any:
    def once() -> Sample:
        return run_python(workload, turn=turn)

    return once


def _sessions(section: Section, runs: int, levels: list[int], *, full: bool) -> None:
    samples: dict[int, list[Sample]] = {level: [] for level in levels}
    for number in range(runs):
        order = levels if number % 2 == 0 else list(reversed(levels))
        for level in order:
            samples[level].append(sessions_in_fresh_process(level))
    if any("rss_growth_bytes" not in run.extra for runs_of in samples.values() for run in runs_of):
        section.notes.append("no RSS figures: /proc/self/status is not readable (not Linux)")
        return
    rss: dict[int, float] = {}
    cpu: dict[int, float] = {}
    for level in levels:
        runs_of = samples[level]
        rss[level] = median([run.extra["rss_growth_bytes"] for run in runs_of]) / level / MIB
        cpu[level] = median([(run.cpu_seconds or 0.0) / run.turns * 1000 for run in runs_of])
        section.rows.append(
            {
                "case": f"{level:,} sessions",
                "sessions": level,
                "runs": len(runs_of),
                "rss_mib_per_session": rss[level],
                "cpu_ms_per_turn": cpu[level],
                "wall_ms_per_turn": median([run.seconds / run.turns * 1000 for run in runs_of]),
            }
        )
    small, large = levels[0], levels[-1]
    growth_bytes = [
        median([run.extra["rss_growth_bytes"] for run in samples[level]])
        for level in (small, large)
    ]
    slope = (growth_bytes[1] - growth_bytes[0]) / (large - small) / MIB
    section.rows.append(
        {
            "case": f"slope {small:,} -> {large:,} sessions",
            "rss_slope_mib_per_session": slope,
            "session_cost_growth_ratio": cpu[large] / cpu[small],
        }
    )
    section.columns += [
        Column("rss_slope_mib_per_session", "RSS slope MiB/session", "{:.4f}"),
        Column("session_cost_growth_ratio", "CPU/turn growth", "{:.2f}x"),
    ]
    for level in levels:
        if level >= 1_000 or (not full and level == large):
            section.targets.append(
                Target(
                    id=f"scaling.rss-per-session.{level}",
                    description=(
                        f"RSS growth per concurrent session with {level:,} sessions alive "
                        "(fresh process, after a full collection)"
                    ),
                    limit=RSS_LIMIT_MIB,
                    measured=rss[level],
                    unit="MiB",
                )
            )


def _child(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.scaling")
    parser.add_argument("--sessions", type=int, required=True)
    arguments = parser.parse_args(argv)
    # warm up imports and lazy schemas so the measured run's RSS is the sessions' own
    run_python(Workload("warm-up", "short", sessions=2))
    sample = run_python(Workload("sessions", "short", sessions=arguments.sessions))
    print(
        json.dumps(
            {
                "seconds": sample.seconds,
                "cpu_seconds": sample.cpu_seconds,
                "parts": sample.parts,
                "turns": sample.turns,
                "extra": sample.extra,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(_child())
